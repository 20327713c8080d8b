"""`tf.custom_gradient`, `tf.identity_n` and `tf.hessians`."""

from __future__ import annotations

import functools
import itertools

from tensorflux._src.autodiff.gradients import RegisterGradient, gradients
from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.registry import OpDef, register

__all__ = ["custom_gradient", "identity_n", "hessians"]

def _identity_n_grad(op, *dys):
    return list(dys)


_identity_n_grad.accepts_indexed_slices = True  # passes sparse gradients on, as TF's

register(OpDef(
    "IdentityN", inputs=("input: list(T)",), outputs=("output: list(T)",),
    attrs={"T": _dtypes.ALL},
    shape=lambda op: [t.shape for t in op.inputs],
    lower=lambda *inputs: tuple(inputs),
    grad=_identity_n_grad,
))


def identity_n(input, name=None):  # noqa: A002 - TF's argument name
    """Identity of a list of tensors (of any dtypes), as one op."""
    return apply_op("IdentityN", name=name, input=list(input))


_uid = itertools.count()


def custom_gradient(f):
    """Decorator: `f(*x)` returns `(y, grad_fn)`; gradients of y use `grad_fn(*dy)`.

    As in TF1's graph mode, the outputs pass through an IdentityN whose gradient is
    overridden to call `grad_fn`, so gradients reach `x` only through `grad_fn`.
    """

    @functools.wraps(f)
    def decorated(*args, **kwargs):
        if kwargs:
            raise ValueError(f"The custom_gradient decorator currently supports keywords "
                             f"arguments only when eager execution is enabled; got "
                             f"{sorted(kwargs)}.")
        args = [convert_to_tensor(x) for x in args]
        result, grad_fn = f(*args)
        flat = list(result) if isinstance(result, (list, tuple)) else [result]
        flat = [convert_to_tensor(r) for r in flat]
        name = f"CustomGradient-{next(_uid)}"

        @RegisterGradient(name)
        def _grad(op, *result_grads):
            input_grads = grad_fn(*result_grads[:len(flat)])
            input_grads = list(input_grads) if isinstance(input_grads, (list, tuple)) \
                else [input_grads]
            if len(input_grads) != len(args):
                raise ValueError(f"custom_gradient function expected to return {len(args)} "
                                 f"gradients, but returned {len(input_grads)} instead.")
            return [None] * len(flat) + input_grads

        with _graph.get_default_graph().gradient_override_map({"IdentityN": name}):
            outputs = identity_n(flat + args)
        outputs = outputs[:len(flat)]
        if isinstance(result, (list, tuple)):
            return type(result)(outputs)
        return outputs[0]

    return decorated


def hessians(ys, xs, name="hessians", colocate_gradients_with_ops=False,
             gate_gradients=False, aggregation_method=None):
    """d^2 sum(ys) / dx^2 for each x, shaped x.shape + x.shape.

    Each row is one more `tf.gradients` of an element of the first gradient, so x must
    have a static number of elements (the rows are built in the graph, not looped).
    """
    from tensorflux._src.ops.array import array_ops, generator_ops
    xs = list(xs) if isinstance(xs, (list, tuple)) else [xs]
    result = []
    with _graph.name_scope(name, "hessians", []):
        first = gradients(ys, xs, colocate_gradients_with_ops=colocate_gradients_with_ops,
                          gate_gradients=gate_gradients,
                          aggregation_method=aggregation_method)
        for grad, x in zip(first, xs):
            x_t = x._ref() if hasattr(x, "_ref") else convert_to_tensor(x)
            n = x_t.shape.num_elements()
            if n is None:
                raise ValueError(f"hessians needs a fully defined shape for {x_t.name}, got "
                                 f"{x_t.shape}")
            if grad is None:
                result.append(None)
                continue
            flat = array_ops.reshape(grad, [-1])
            rows = []
            for j in range(n):
                (row,) = gradients(flat[j], [x])
                rows.append(array_ops.reshape(row, [-1]) if row is not None else
                            generator_ops.zeros_like(array_ops.reshape(x_t, [-1])))
            shape = x_t.shape.as_list()
            result.append(array_ops.reshape(array_ops.stack(rows), shape + shape))
    return result
