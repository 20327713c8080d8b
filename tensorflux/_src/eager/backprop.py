"""`tf.contrib.eager`'s function transformations over GradientTape: implicit_gradients,
implicit_value_and_gradients (gradients with respect to the variables a function reads),
gradients_function and value_and_gradients_function (with respect to its arguments)."""

from __future__ import annotations

import functools

from tensorflux._src.eager.tape import GradientTape
from tensorflux._src.framework.behaviour import executing_eagerly
from tensorflux._src.framework.tensor_conversion import convert_to_tensor


def _require_eager(name):
    if not executing_eagerly():
        raise ValueError(f"{name} can only be used when eager execution is enabled.")


def implicit_value_and_gradients(f):
    """f(*args) -> (value, [(gradient, variable), ...]) for the trainable variables that
    f read (TF's tfe.implicit_value_and_gradients)."""

    @functools.wraps(f)
    def grad_fn(*args, **kwds):
        _require_eager("implicit_value_and_gradients")
        with GradientTape() as tape:
            end_node = f(*args, **kwds)
        if end_node is None:
            raise ValueError(f"Cannot differentiate a function that returns None; did you "
                             f"forget to return a value from {f.__name__}?")
        variables = [v for v in tape.watched_variables() if getattr(v, "trainable", True)]
        if not variables:
            raise ValueError("No trainable variables were accessed while the function was "
                             "being computed.")
        grads = tape.gradient(end_node, variables)
        return end_node, list(zip(grads, variables))

    return grad_fn


def implicit_gradients(f):
    """f(*args) -> [(gradient, variable), ...] (see implicit_value_and_gradients)."""
    value_and_grads = implicit_value_and_gradients(f)

    @functools.wraps(f)
    def grad_fn(*args, **kwds):
        return value_and_grads(*args, **kwds)[1]

    return grad_fn


def _params(f, params, args):
    if params is None:
        return list(range(len(args)))
    import inspect
    names = list(inspect.signature(f).parameters)
    return [names.index(p) if isinstance(p, str) else p for p in params]


def value_and_gradients_function(f, params=None):
    """f(*args) -> (value, [d value / d args[i] for the chosen params])."""

    @functools.wraps(f)
    def decorated(*args, **kwds):
        _require_eager("value_and_gradients_function")
        indices = _params(f, params, args)
        args = list(args)
        with GradientTape() as tape:
            for i in indices:
                args[i] = convert_to_tensor(args[i])
                tape.watch(args[i])
            value = f(*args, **kwds)
        if value is None:
            raise ValueError(f"Cannot differentiate a function that returns None; did you "
                             f"forget to return a value from {f.__name__}?")
        return value, tape.gradient(value, [args[i] for i in indices])

    return decorated


def gradients_function(f, params=None):
    """f(*args) -> [d f / d args[i] for the chosen params]."""
    value_and_grads = value_and_gradients_function(f, params)

    @functools.wraps(f)
    def decorated(*args, **kwds):
        return value_and_grads(*args, **kwds)[1]

    return decorated


def val_and_grad_function(f, params=None):
    """TF's older name: value_and_gradients_function."""
    return value_and_gradients_function(f, params)
