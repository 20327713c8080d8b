"""Sums and scans: `accumulate_n` (AccumulateNV2), `cumulative_logsumexp`
(CumulativeLogsumexp) and `polyval` (Horner's rule over existing ops).

AccumulateNV2 is TF's add_n that need not wait for all inputs; here it lowers to one sum
like AddN, keeping TF's op type, its `shape` attr and checks. CumulativeLogsumexp
shares Cumsum's scan lowering; as TF 1.15's kernel, an exclusive scan starts from the
dtype's lowest finite value (not -inf), which keeps TF's gradient finite. The gradient
is TF's, in log space with the positive and negative parts of the incoming gradient
apart.
"""

from __future__ import annotations

import builtins

import jax
import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework import tensor_shape
from tensorflux._src.framework.operation import Tensor
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.ops.array import array_ops as A
from tensorflux._src.ops.array import gather_ops as G
from tensorflux._src.ops.array import generator_ops as Gen
from tensorflux._src.ops.math import math_ops as M
from tensorflux._src.ops.math.reduce_ops import _scan_lower
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.registry import OpDef, register
from tensorflux._src.ops.shape_fns import unchanged

__all__ = ["accumulate_n", "cumulative_logsumexp", "polyval"]


# -- AccumulateNV2 -------------------------------------------------------------------------------
def _accumulate_shape(op):
    shape = tensor_shape.as_shape(op.get_attr("shape"))
    for t in op.inputs:
        shape = shape.merge_with(t.shape)
    return shape


register(OpDef("AccumulateNV2", inputs=("inputs: N * T",), outputs=("sum: T",),
               attrs={"T": _dtypes.NUMBERS, "shape": tensor_shape.unknown_shape()},
               shape=_accumulate_shape, lower=lambda *xs: builtins.sum(xs[1:], xs[0]),
               grad=lambda op, grad: [grad] * len(op.inputs)))


def accumulate_n(inputs, shape=None, tensor_dtype=None, name=None):
    """The elementwise sum of a list of tensors of one dtype and shape (no broadcasting).

    `shape` and `tensor_dtype` are checks: they must agree with the inputs."""
    message = ("inputs must be a list of at least one Tensor/IndexedSlices with the same "
               "dtype and shape")
    if not inputs or not isinstance(inputs, (list, tuple)):
        raise ValueError(message)
    inputs = [convert_to_tensor(t) for t in inputs]
    if not all(isinstance(t, Tensor) for t in inputs):
        raise ValueError(message)
    if not all(t.dtype == inputs[0].dtype for t in inputs):
        raise ValueError(message)
    shape = tensor_shape.as_shape(shape) if shape is not None else tensor_shape.unknown_shape()
    for t in inputs:
        shape = shape.merge_with(t.shape)
    if tensor_dtype is not None and tensor_dtype != inputs[0].dtype:
        raise TypeError(f"tensor_dtype is {tensor_dtype}, but input is of type "
                        f"{inputs[0].dtype}")
    if len(inputs) == 1:
        return inputs[0] if name is None else A.identity(inputs[0], name=name)
    return apply_op("AccumulateNV2", name=name, inputs=inputs, shape=shape)


# -- CumulativeLogsumexp ---------------------------------------------------------------------------
def _cumulative_logsumexp_grad(op, grad):
    x, axis = op.inputs
    out = op.outputs[0]
    exclusive, reverse = op.get_attr("exclusive"), op.get_attr("reverse")
    lowest = convert_to_tensor(np.finfo(grad.dtype.as_numpy_dtype).min, dtype=grad.dtype)
    zero = convert_to_tensor(0, dtype=grad.dtype)
    # log|grad| per sign (the lowest float where a part is empty), so the backward scan,
    # another logsumexp, stays in log space.
    log_pos = G.where_v2(M.greater(grad, zero), M.log(grad), lowest)
    log_neg = G.where_v2(M.less(grad, zero), M.log(-grad), lowest)

    def backward(log_part):
        return M.exp(cumulative_logsumexp(log_part - out, axis=axis, exclusive=exclusive,
                                          reverse=not reverse) + x)
    return [backward(log_pos) - backward(log_neg), None]


def _cumulative_logsumexp_lower(x, axis, exclusive, reverse):
    lowest = np.finfo(x.dtype).min
    return _scan_lower("CumulativeLogsumexp", jax.lax.cumlogsumexp, lowest)(
        x, axis, exclusive, reverse)


register(OpDef("CumulativeLogsumexp", inputs=("x: T", "axis: Tidx"), outputs=("out: T",),
               attrs={"T": (_dtypes.float16, _dtypes.float32, _dtypes.float64),
                      "Tidx": _dtypes.INDEX, "exclusive": False, "reverse": False},
               shape=unchanged, lower=_cumulative_logsumexp_lower,
               grad=_cumulative_logsumexp_grad))


def cumulative_logsumexp(x, axis=0, exclusive=False, reverse=False, name=None):
    """log(cumsum(exp(x))) along `axis`, computed stably; an exclusive scan starts from
    the dtype's lowest value (log 0)."""
    with _graph.name_scope(name, "CumulativeLogsumexp", [x]) as scope:
        x = convert_to_tensor(x, name="x")
        return apply_op("CumulativeLogsumexp", name=scope, x=x, axis=axis,
                        exclusive=exclusive, reverse=reverse)


# -- polyval ---------------------------------------------------------------------------------------
def polyval(coeffs, x, name=None):
    """coeffs[0] * x^(n-1) + ... + coeffs[n-1], by Horner's rule; zeros_like(x) for no
    coefficients. `coeffs` is a list (of tensors or numbers) broadcasting with x."""
    if not isinstance(coeffs, list):
        raise ValueError(f"Argument coeffs must be list type found {type(coeffs)}.")
    with _graph.name_scope(name, "polyval", coeffs + [x]) as scope:
        x = convert_to_tensor(x, name="x")
        if not coeffs:
            return Gen.zeros_like(x, name=scope)
        coeffs = [convert_to_tensor(c, name=f"coeff_{i}") for i, c in enumerate(coeffs)]
        p = coeffs[0]
        for c in coeffs[1:]:
            p = c + p * x
        return p
