"""top_k, and sort/argsort composed from it as TF does.

`TopKV2` returns the k largest entries of the last dimension in descending order, ties
broken by the lower index (XLA's TopK guarantees the same). `sort`/`argsort` move the
sorted axis last, take top_k of the full length, and move it back; ascending order
sorts an order-reversed copy (-x for floats, ~x for integers, which cannot overflow),
so both directions are stable.
"""

from __future__ import annotations

import collections

import jax
import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.framework.tensor_shape import TensorShape, unknown_shape
from tensorflux._src.ops.array import array_ops as A
from tensorflux._src.ops.array.array_ops import shape, transpose
from tensorflux._src.ops.array.gather_ops import scatter_nd
from tensorflux._src.ops.constant import constant
from tensorflux._src.ops.math import math_ops, reduce_ops
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.op_helpers import (kernel_error, scalar_input_dim, static_input,
                                            static_scalar, with_rank_at_least)
from tensorflux._src.ops.registry import OpDef, register

# top_k lives in tf.nn (and tf.math) in TF1, not at the top level; the nn namespace
# re-exports it from here.
__all__ = ["argsort", "sort"]

TopKV2 = collections.namedtuple("TopKV2", ["values", "indices"])


def _top_k_shape(op):
    x = with_rank_at_least(op.inputs[0].shape, 1)
    k = scalar_input_dim(op, 1)
    if x.ndims is None:
        return [unknown_shape(), unknown_shape()]
    last = x.dims[-1].value
    if last is not None and k is not None and last < k:
        raise ValueError(f"input must have last dimension >= k = {k} but is {last}")
    out = TensorShape(x.dims[:-1] + [k])
    return [out, out]


def _top_k_lower(input, k):  # noqa: A002 - sorted=False may return any order; ours is sorted
    k = int(static_input(k, "TopKV2", "k"))
    if k < 0:
        raise kernel_error(f"Need k >= 0, got {k}")
    if input.shape[-1] < k:
        raise kernel_error(f"input must have at least k columns. Had {input.shape[-1]}, "
                           f"needed {k}")
    return jax.lax.top_k(input, k)


def _top_k_grad(op, dvalues, dindices=None):
    """Scatters each value's gradient back to the input position top_k took it from."""
    x, indices = op.inputs[0], op.outputs[1]
    in_shape = shape(x)
    outer = reduce_ops.reduce_prod(in_shape[:-1])  # rows of the last dimension
    rows = A.reshape(indices, A.stack([outer, shape(indices)[-1]]))  # (outer, k)
    flat = rows + A.expand_dims(math_ops.range(outer) * in_shape[-1], -1)
    grad = scatter_nd(A.reshape(flat, [-1, 1]), A.reshape(dvalues, [-1]),
                      A.reshape(A.size(x), [1]))
    return [A.reshape(grad, in_shape), None]


register(OpDef("TopKV2", inputs=("input: T", "k: int32"), outputs=("values: T", "indices: int32"),
               attrs={"T": _dtypes.REAL, "sorted": True}, shape=_top_k_shape,
               lower=_top_k_lower, grad=_top_k_grad))


def top_k(input, k=1, sorted=True, name=None):  # noqa: A002 - TF's argument names
    """The k largest entries of the last dimension and their indices: (values, indices)."""
    values, indices = apply_op("TopKV2", name=name, input=input, k=k, sorted=sorted)
    return TopKV2(values, indices)


# -- sort / argsort ---------------------------------------------------------------------------
def _descending(values, axis, return_argsort):
    ndims = values.shape.ndims
    k = shape(values)[axis]  # folds to a constant when the sorted dimension is known
    if axis == -1 or (ndims is not None and axis + 1 == ndims):
        perm = None
        top_k_input = values
    else:
        if ndims is None:
            raise ValueError("sort along an axis other than the last needs a known rank")
        axis %= ndims
        # swap `axis` with the last one; a single swap is its own inverse
        perm = np.r_[np.arange(axis), [ndims - 1], np.arange(axis + 1, ndims - 1), [axis]]
        perm = constant(perm.astype(np.int32), name="transposition")
        top_k_input = transpose(values, perm)
    result = top_k(top_k_input, k)
    result = result.indices if return_argsort else result.values
    return result if perm is None else transpose(result, perm)


def _reversed_order(values):
    """A copy whose descending order is `values`' ascending order (and its own inverse)."""
    dtype = values.dtype.base_dtype
    if dtype.is_unsigned:
        return math_ops.subtract(constant(dtype.max, dtype=dtype), values)
    if dtype.is_integer:
        return math_ops.subtract(constant(-1, dtype=dtype), values)  # ~x: no overflow
    return math_ops.negative(values)


def _ascending(values, axis, return_argsort):
    result = _descending(_reversed_order(values), axis, return_argsort)
    return result if return_argsort else _reversed_order(result)


_SORT_IMPL = {"ASCENDING": _ascending, "DESCENDING": _descending}


def _sort_or_argsort(values, axis, direction, return_argsort):
    if direction not in _SORT_IMPL:
        raise ValueError(f"{direction} should be one of {', '.join(sorted(_SORT_IMPL))}")
    axis_t = convert_to_tensor(axis, name="axis")
    axis = static_scalar(axis_t)
    if axis_t.shape.ndims not in (None, 0) or axis is None:
        raise ValueError("axis must be a constant scalar")
    values = convert_to_tensor(values, name="values")
    return _SORT_IMPL[direction](values, axis, return_argsort)


def sort(values, axis=-1, direction="ASCENDING", name=None):
    """`values` sorted along `axis` (stable; NaNs order as TF's top_k orders them)."""
    with _graph.name_scope(name, "sort"):
        return _sort_or_argsort(values, axis, direction, return_argsort=False)


def argsort(values, axis=-1, direction="ASCENDING", stable=False, name=None):
    """int32 indices that sort `values` along `axis`; always stable (`stable` is accepted
    for TF's signature)."""
    del stable  # top_k breaks ties by index, so the order is always stable
    with _graph.name_scope(name, "argsort"):
        return _sort_or_argsort(values, axis, direction, return_argsort=True)
