"""`tf.contrib.framework`: arg_scope, model variables, variable lookups, the global step.

`arg_scope` gives decorated functions new defaults inside a `with` block:

    with arg_scope([layers.conv2d, layers.fully_connected], activation_fn=tf.nn.tanh):
        net = layers.conv2d(x, 32, [3, 3])        # tanh, unless the call says otherwise

Only functions wrapped by `add_arg_scope` take part; a scope's kwargs are merged with an
enclosing scope's for the same function, and a call's explicit kwargs win. The stack of
scopes is per thread (TF keeps one per process; per thread is the same for one thread and
keeps concurrent graph builders apart).

Model variables (`model_variable`) are global variables also listed in
`tf.GraphKeys.MODEL_VARIABLES`: the ones a model needs at inference (weights, moving
averages), unlike the global step or optimizer slots.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import threading

from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.graph_keys import GraphKeys
from tensorflux._src.train import variable_scope as _vs
from tensorflux._src.train.optimizer import (  # noqa: F401 (re-exported: tf.train's own)
    assert_global_step, create_global_step, get_global_step, get_or_create_global_step,
)
from tensorflux._src.train.variables import Variable

__all__ = [
    "arg_scope", "add_arg_scope", "current_arg_scope", "has_arg_scope",
    "arg_scoped_arguments", "arg_scope_func_key",
    "get_or_create_global_step", "get_global_step", "create_global_step",
    "assert_global_step",
    "variable", "model_variable", "local_variable", "global_variable", "add_model_variable",
    "get_variables", "get_model_variables", "get_local_variables", "get_trainable_variables",
    "get_variables_to_restore", "get_variables_by_suffix", "get_variables_by_name",
    "get_unique_variable", "get_variable_full_name", "assign_from_checkpoint_fn",
]

_log = logging.getLogger("tensorflux")


# -- arg_scope ----------------------------------------------------------------------------------
_local = threading.local()
_DECORATED = {}  # key -> names of the keyword arguments of the decorated function


def _arg_stack():
    stack = getattr(_local, "stack", None)
    if stack is None:
        stack = _local.stack = [{}]
    return stack


def current_arg_scope():
    """The innermost scope: {function key: {kwarg: value}}."""
    return _arg_stack()[-1]


def arg_scope_func_key(op):
    return getattr(op, "_key_op", op)


def has_arg_scope(func):
    return arg_scope_func_key(func) in _DECORATED


def arg_scoped_arguments(func):
    """The keyword arguments `func` can take from an arg_scope."""
    if not has_arg_scope(func):
        raise ValueError(f"{_op_name(func)} is not decorated with @add_arg_scope")
    return _DECORATED[arg_scope_func_key(func)]


def _op_name(op):
    return f"{getattr(op, '__module__', '?')}.{getattr(op, '__name__', op)}"


def _kwarg_names(func):
    code = func.__code__
    n_defaults = len(func.__defaults__) if func.__defaults__ else 0
    names = code.co_varnames[code.co_argcount - n_defaults:code.co_argcount]
    return names + code.co_varnames[code.co_argcount:code.co_argcount
                                    + code.co_kwonlyargcount]


@contextlib.contextmanager
def arg_scope(list_ops_or_scope, **kwargs):
    """Sets default kwargs for the listed `add_arg_scope` functions (or re-enters a scope
    dict yielded by an earlier arg_scope)."""
    if isinstance(list_ops_or_scope, dict):
        if kwargs:
            raise ValueError("When attempting to re-use a scope by suppling a dictionary, "
                             "kwargs must be empty.")
        scope = list_ops_or_scope.copy()
    else:
        if not isinstance(list_ops_or_scope, (list, tuple)):
            raise TypeError("list_ops_or_scope must either be a list/tuple or reused scope "
                            "(i.e. dict)")
        scope = current_arg_scope().copy()
        for op in list_ops_or_scope:
            if not has_arg_scope(op):
                raise ValueError(f"{_op_name(op)} is not decorated with @add_arg_scope; "
                                 f"arg_scope only applies to functions wrapped by "
                                 f"add_arg_scope.")
            key = arg_scope_func_key(op)
            merged = dict(scope.get(key, {}))
            merged.update(kwargs)
            scope[key] = merged
    stack = _arg_stack()
    stack.append(scope)
    try:
        yield scope
    finally:
        stack.pop()


def add_arg_scope(func):
    """Lets `func` take default kwargs from enclosing `arg_scope`s."""
    @functools.wraps(func)
    def func_with_args(*args, **kwargs):
        scoped = current_arg_scope().get(func)
        if scoped:
            merged = dict(scoped)
            merged.update(kwargs)
            kwargs = merged
        return func(*args, **kwargs)

    _DECORATED[func] = _kwarg_names(func)
    func_with_args._key_op = func
    return func_with_args


# -- creating variables -----------------------------------------------------------------------
@add_arg_scope
def variable(name, shape=None, dtype=None, initializer=None, regularizer=None, trainable=True,
             collections=None, caching_device=None, device=None, partitioner=None,
             custom_getter=None, use_resource=None, synchronization=None, aggregation=None):
    """`tf.get_variable` with `collections` defaulting to GLOBAL_VARIABLES and an optional
    device; arg_scope-able."""
    collections = list(collections) if collections is not None \
        else [GraphKeys.GLOBAL_VARIABLES]
    collections = list(dict.fromkeys(collections))  # drop duplicates, keep order
    if custom_getter is not None:
        getter = functools.partial(custom_getter, reuse=_vs.get_variable_scope().reuse)
    else:
        getter = _vs.get_variable
    with contextlib.ExitStack() as stack:
        if device:
            stack.enter_context(_graph.device(device))
        return getter(name, shape=shape, dtype=dtype, initializer=initializer,
                      regularizer=regularizer, trainable=trainable, collections=collections,
                      caching_device=caching_device, partitioner=partitioner,
                      use_resource=use_resource)


@add_arg_scope
def model_variable(name, shape=None, dtype=None, initializer=None, regularizer=None,
                   trainable=True, collections=None, caching_device=None, device=None,
                   partitioner=None, custom_getter=None, use_resource=None,
                   synchronization=None, aggregation=None):
    """A `variable` also added to GLOBAL_VARIABLES and MODEL_VARIABLES."""
    collections = list(collections or [])
    collections += [GraphKeys.GLOBAL_VARIABLES, GraphKeys.MODEL_VARIABLES]
    return variable(name, shape=shape, dtype=dtype, initializer=initializer,
                    regularizer=regularizer, trainable=trainable, collections=collections,
                    caching_device=caching_device, device=device, partitioner=partitioner,
                    custom_getter=custom_getter, use_resource=use_resource)


def local_variable(initial_value, validate_shape=True, name=None, use_resource=None):
    """A non-trainable variable in LOCAL_VARIABLES (initialized by
    `tf.local_variables_initializer()`)."""
    return Variable(initial_value, trainable=False, collections=[GraphKeys.LOCAL_VARIABLES],
                    validate_shape=validate_shape, name=name)


def global_variable(initial_value, validate_shape=True, name=None, use_resource=None):
    """A non-trainable variable in GLOBAL_VARIABLES."""
    return Variable(initial_value, trainable=False, collections=[GraphKeys.GLOBAL_VARIABLES],
                    validate_shape=validate_shape, name=name)


def add_model_variable(var):
    """Adds `var` to MODEL_VARIABLES (once)."""
    if var not in _graph.get_collection(GraphKeys.MODEL_VARIABLES):
        _graph.add_to_collection(GraphKeys.MODEL_VARIABLES, var)


# -- finding variables --------------------------------------------------------------------------
def get_variables(scope=None, suffix=None, collection=GraphKeys.GLOBAL_VARIABLES):
    """Variables of `collection` whose names start with `scope` (a regex, or a
    VariableScope) and, if given, contain `suffix` followed by ':'."""
    if isinstance(scope, _vs.VariableScope):
        scope = scope.name
    if suffix is not None:
        if ":" not in suffix:
            suffix += ":"
        scope = (scope or "") + ".*" + suffix
    return _graph.get_collection(collection, scope)


def get_model_variables(scope=None, suffix=None):
    return get_variables(scope, suffix, GraphKeys.MODEL_VARIABLES)


def get_local_variables(scope=None, suffix=None):
    return get_variables(scope, suffix, GraphKeys.LOCAL_VARIABLES)


def get_trainable_variables(scope=None, suffix=None):
    return get_variables(scope, suffix, GraphKeys.TRAINABLE_VARIABLES)


def get_variables_to_restore(include=None, exclude=None):
    """Global variables under the `include` scopes (default: all) minus those under the
    `exclude` scopes."""
    if include is None:
        included = get_variables()
    else:
        if not isinstance(include, (list, tuple)):
            raise TypeError("include is provided but is not a list or a tuple.")
        included = [v for scope in include for v in get_variables(scope)]
    excluded = set()
    if exclude is not None:
        if not isinstance(exclude, (list, tuple)):
            raise TypeError("exclude is provided but is not a list or a tuple.")
        for scope in exclude:
            excluded.update(get_variables(scope))
    return [v for v in included if v not in excluded]


def get_variables_by_suffix(suffix, scope=None):
    return get_variables(scope=scope, suffix=suffix)


def get_variables_by_name(given_name, scope=None):
    """Variables whose last name component is `given_name`."""
    suffix = "/" + given_name + ":|^" + given_name + ":"
    return get_variables(scope=scope, suffix=suffix)


def get_unique_variable(var_op_name):
    """The global variable whose op is named exactly `var_op_name`."""
    candidates = get_variables(scope=var_op_name)
    if not candidates:
        raise ValueError(f"Couldn't find variable {var_op_name}")
    for candidate in candidates:
        if candidate.op.name == var_op_name:
            return candidate
    raise ValueError(f"Variable {var_op_name} does not uniquely identify a variable")


def get_variable_full_name(var):
    return var.op.name


# -- checkpoints ----------------------------------------------------------------------------
def assign_from_checkpoint_fn(model_path, var_list, ignore_missing_vars=False,
                              reshape_variables=False):
    """A function `fn(session)` restoring `var_list` (a list, or a dict of checkpoint name
    -> variable) from the checkpoint `model_path`; None when nothing is left to restore."""
    from tensorflux._src.train.checkpoint_utils import NewCheckpointReader
    from tensorflux._src.train.saver import Saver
    if not var_list:
        raise ValueError("var_list cannot be empty")
    if ignore_missing_vars:
        reader = NewCheckpointReader(model_path)
        var_dict = var_list if isinstance(var_list, dict) \
            else {v.op.name: v for v in var_list}
        var_list = {}
        for name, var in var_dict.items():
            if reader.has_tensor(name):
                var_list[name] = var
            else:
                _log.warning("Variable %s missing in checkpoint %s", name, model_path)
    if not var_list:
        _log.warning("No Variables to restore")
        return None
    saver = Saver(var_list, reshape=reshape_variables)

    def callback(session):
        saver.restore(session, model_path)
    return callback
