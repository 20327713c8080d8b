"""Segment reductions: sorted `segment_sum/mean/prod/min/max`, and the unsorted family
beyond `unsorted_segment_sum` (max, min, prod; mean and sqrt_n as TF's composites).

Sorted segment ops (SegmentSum, ...) have as many output rows as the last segment id + 1,
a size only the data knows, so they are host records with a NumPy kernel that checks
the ids as TF's CPU kernel does (sorted, non-negative) and fills segments no id names
with 0 (1 for SegmentProd), as TF does. Their gradients are compiled ops: the output's
row count is static once the host step has run.

The unsorted records are compiled like UnsortedSegmentSum (segment_ops.py): empty
segments get TF's identities (the dtype's lowest value for max, highest for min, 1 for
prod), negative ids drop their rows, and an id >= num_segments raises TF's CPU error when
the ids are known at graph compile time; one computed at run time drops its row (TF's
GPU behaviour), as in UnsortedSegmentSum.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from tensorflux._src.framework import dispatch as _dispatch
from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.framework.tensor_shape import TensorShape, unknown_shape
from tensorflux._src.ops.array import array_ops as A
from tensorflux._src.ops.array import gather_ops as G
from tensorflux._src.ops.array import generator_ops as Gen
from tensorflux._src.ops.math import math_ops as M
from tensorflux._src.ops.math.segment_ops import (_unsorted_segment_shape, gather_drop_negatives,
                                                  unsorted_segment_lower, unsorted_segment_sum)
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.op_helpers import kernel_error, with_rank, with_rank_at_least
from tensorflux._src.ops.registry import OpDef, register

__all__ = [
    "segment_max", "segment_mean", "segment_min", "segment_prod", "segment_sum",
    "unsorted_segment_max", "unsorted_segment_mean", "unsorted_segment_min",
    "unsorted_segment_prod", "unsorted_segment_sqrt_n", "unsorted_segment_sum",
]


def _lowest(dtype):
    dtype = np.dtype(dtype)
    return np.iinfo(dtype).min if dtype.kind in "iu" else jnp.finfo(dtype).min


def _highest(dtype):
    dtype = np.dtype(dtype)
    return np.iinfo(dtype).max if dtype.kind in "iu" else jnp.finfo(dtype).max


# -- sorted segments (host) ----------------------------------------------------------------------
def _segment_shape(op):
    data = with_rank_at_least(op.inputs[0].shape, 1)
    with_rank(op.inputs[1].shape, 1)
    if data.ndims is None:
        return unknown_shape()
    return TensorShape([None]).concatenate(data[1:])


def check_sorted_segments(ids, rows):
    """TF's walk over sorted segment ids: the first segment (in order) whose id is greater
    than the next one's, or outside [0, rows), fails with the CPU kernel's message."""
    starts = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]])
    seg = ids[starts]
    decreasing = np.r_[seg[:-1] > seg[1:], False]
    outside = (seg < 0) | (seg >= rows)
    bad = np.flatnonzero(decreasing | outside)
    if bad.size:
        k = bad[0]
        if decreasing[k]:
            raise kernel_error("segment ids are not increasing")
        raise kernel_error(f"Segment id {seg[k]} out of range [0, {rows}), possibly because "
                           f"'segment_ids' input is not sorted.")
    return starts, seg


def _segment_kernel(kind):
    fill = 1 if kind == "prod" else 0

    def kernel(data, segment_ids):
        if segment_ids.ndim != 1:
            raise kernel_error("segment_ids should be a vector.")
        n = segment_ids.shape[0]
        if data.ndim < 1 or n != data.shape[0]:
            raise kernel_error("segment_ids should be the same size as dimension 0 of input.")
        rows = int(segment_ids[-1]) + 1 if n else 0
        if rows < 0 or (n and rows == 0):
            raise kernel_error("segment ids must be >= 0")
        out = np.full((rows,) + data.shape[1:], fill, data.dtype)
        if n == 0:
            return out
        starts, seg = check_sorted_segments(segment_ids, rows)
        if kind == "sum":
            reduced = np.add.reduceat(data, starts, axis=0)
        elif kind == "prod":
            reduced = np.multiply.reduceat(data, starts, axis=0)
        elif kind == "max":  # NaNs are skipped, as Eigen's reducer compares with >
            reduced = np.fmax.reduceat(data, starts, axis=0)
        elif kind == "min":
            reduced = np.fmin.reduceat(data, starts, axis=0)
        else:  # mean: Eigen divides by the count in T (integer division truncates)
            sums = np.add.reduceat(data, starts, axis=0)
            counts = np.diff(np.r_[starts, n]).reshape((-1,) + (1,) * (data.ndim - 1))
            if data.dtype.kind in "iu":
                reduced = (np.sign(sums) * (np.abs(sums) // counts)).astype(data.dtype)
            else:
                reduced = (sums / counts).astype(data.dtype)
        out[seg] = reduced
        return out
    return kernel


def _num_rows(op):
    """The output's row count as a scalar tensor (static in the gradient's cluster)."""
    return A.shape(op.outputs[0], out_type=op.inputs[1].dtype)[0]


def _rows_shape(values, ids):
    """ids' shape followed by 1s up to values' rank: per-row values that broadcast."""
    ones = Gen.fill(A.expand_dims(A.rank(values) - A.rank(ids), 0), 1)
    return A.concat([A.shape(ids), ones], 0)


def _segment_sum_grad(op, grad):
    return [G.gather(grad, op.inputs[1]), None]


def _segment_mean_grad(op, grad):
    data, ids = op.inputs
    ones = Gen.fill(_rows_shape(data, ids), convert_to_tensor(1, dtype=grad.dtype))
    counts = unsorted_segment_sum(ones, ids, _num_rows(op))
    return [G.gather(M.divide(grad, counts), ids), None]


def _segment_min_max_grad(op, grad):
    # The gradient is shared evenly by the elements equal to their segment's result.
    data, ids = op.inputs
    is_selected = M.equal(data, G.gather(op.outputs[0], ids))
    num_selected = unsorted_segment_sum(M.cast(is_selected, grad.dtype), ids, _num_rows(op))
    gathered = G.gather(M.divide(grad, num_selected), ids)
    return [G.where_v2(is_selected, gathered, Gen.zeros_like(data)), None]


def _segment_prod_grad(op, grad):
    # Product of the others: output / x without zeros; with one zero in a segment only the
    # zero gets the product of the rest; with two or more every gradient is 0.
    data, ids = op.inputs
    rows = _num_rows(op)
    is_zero = M.equal(data, convert_to_tensor(0, dtype=data.dtype))
    num_zeros = unsorted_segment_sum(M.cast(is_zero, _dtypes.int32), ids, rows)
    grad = G.where_v2(M.greater(num_zeros, 1), Gen.zeros_like(grad), grad)
    non_zero_data = G.where_v2(is_zero, Gen.ones_like(data), data)
    non_zero_prod = unsorted_segment_prod(non_zero_data, ids, rows)
    by_element = G.gather(op.outputs[0], ids) / non_zero_data
    partial = G.where_v2(is_zero, G.gather(non_zero_prod, ids), by_element)
    return [G.gather(grad, ids) * partial, None]


for _op_type, _kind, _types, _grad in (
        ("SegmentSum", "sum", _dtypes.NUMBERS, _segment_sum_grad),
        ("SegmentMean", "mean", _dtypes.NUMBERS, _segment_mean_grad),
        ("SegmentProd", "prod", _dtypes.NUMBERS, _segment_prod_grad),
        ("SegmentMin", "min", _dtypes.REAL, _segment_min_max_grad),
        ("SegmentMax", "max", _dtypes.REAL, _segment_min_max_grad)):
    register(OpDef(_op_type, inputs=("data: T", "segment_ids: Tindices"),
                   outputs=("output: T",), attrs={"T": _types, "Tindices": _dtypes.INDEX},
                   shape=_segment_shape, host=_segment_kernel(_kind), grad=_grad))


def _segment_fn(public_name, op_type, doc):
    def fn(data, segment_ids, name=None):
        return apply_op(op_type, name=name, data=data, segment_ids=segment_ids)
    fn.__name__ = fn.__qualname__ = public_name
    fn.__doc__ = doc
    fn.__module__ = __name__
    return fn


_SORTED = " `segment_ids` (rank 1, one per row of data) must be sorted and non-negative."
segment_sum = _segment_fn("segment_sum", "SegmentSum", "Sums rows of data per segment." + _SORTED)
segment_mean = _segment_fn("segment_mean", "SegmentMean",
                           "Means of rows of data per segment." + _SORTED)
segment_prod = _segment_fn("segment_prod", "SegmentProd",
                           "Products of rows of data per segment." + _SORTED)
segment_min = _segment_fn("segment_min", "SegmentMin",
                          "Minimum of rows of data per segment." + _SORTED)
segment_max = _segment_fn("segment_max", "SegmentMax",
                          "Maximum of rows of data per segment." + _SORTED)


# -- unsorted segments (compiled) ----------------------------------------------------------------
def _unsorted_min_max_grad(op, grad):
    data, ids, num_segments = op.inputs
    gathered = gather_drop_negatives(op.outputs[0], ids)
    is_positive = M.greater_equal(ids, convert_to_tensor(0, dtype=ids.dtype))
    is_positive = A.reshape(is_positive, _rows_shape(data, ids))
    is_selected = M.logical_and(M.equal(data, gathered), is_positive)
    num_selected = unsorted_segment_sum(M.cast(is_selected, grad.dtype), ids, num_segments)
    gathered_grads = gather_drop_negatives(M.divide(grad, num_selected), ids)
    return [G.where_v2(is_selected, gathered_grads, Gen.zeros_like(gathered_grads)), None,
            None]


def _unsorted_prod_grad(op, grad):
    # As SegmentProd's, with negative ids dropping their rows' gradients.
    data, ids, num_segments = op.inputs
    is_zero = M.equal(data, convert_to_tensor(0, dtype=data.dtype))
    num_zeros = unsorted_segment_sum(M.cast(is_zero, _dtypes.int32), ids, num_segments)
    grad = G.where_v2(M.greater(num_zeros, 1), Gen.zeros_like(grad), grad)
    non_zero_data = G.where_v2(is_zero, Gen.ones_like(data), data)
    non_zero_prod = unsorted_segment_prod(non_zero_data, ids, num_segments)
    clipped = M.maximum(ids, Gen.zeros_like(ids))
    by_element = G.gather(op.outputs[0], clipped) / non_zero_data
    partial = G.where_v2(is_zero, G.gather(non_zero_prod, clipped), by_element)
    return [gather_drop_negatives(grad, ids) * partial, None, None]


for _op_type, _combine, _identity, _types, _grad in (
        ("UnsortedSegmentMax", lambda at, d: at.max(d, mode="drop"), _lowest, _dtypes.REAL,
         _unsorted_min_max_grad),
        ("UnsortedSegmentMin", lambda at, d: at.min(d, mode="drop"), _highest, _dtypes.REAL,
         _unsorted_min_max_grad),
        ("UnsortedSegmentProd", lambda at, d: at.multiply(d, mode="drop"), lambda _: 1,
         _dtypes.NUMBERS, _unsorted_prod_grad)):
    register(OpDef(
        _op_type, inputs=("data: T", "segment_ids: Tindices", "num_segments: Tnumsegments"),
        outputs=("output: T",),
        attrs={"T": _types, "Tindices": _dtypes.INDEX, "Tnumsegments": _dtypes.INDEX},
        shape=_unsorted_segment_shape, lower=unsorted_segment_lower(_op_type, _combine, _identity),
        grad=_grad))


def unsorted_segment_max(data, segment_ids, num_segments, name=None):
    """Maximum per segment; an empty segment holds the dtype's lowest value."""
    return apply_op("UnsortedSegmentMax", name=name, data=data, segment_ids=segment_ids,
                    num_segments=num_segments)


def unsorted_segment_min(data, segment_ids, num_segments, name=None):
    """Minimum per segment; an empty segment holds the dtype's highest value."""
    return apply_op("UnsortedSegmentMin", name=name, data=data, segment_ids=segment_ids,
                    num_segments=num_segments)


def unsorted_segment_prod(data, segment_ids, num_segments, name=None):
    """Product per segment; an empty segment holds 1."""
    return apply_op("UnsortedSegmentProd", name=name, data=data, segment_ids=segment_ids,
                    num_segments=num_segments)


def _unsorted_segment_n(data, segment_ids, num_segments):
    """Entries per segment (at least 1), shaped to broadcast over data's inner dims."""
    num_segments = convert_to_tensor(num_segments)
    ones = Gen.ones(A.shape(segment_ids), dtype=data.dtype)
    n = unsorted_segment_sum(ones, segment_ids, num_segments)
    inner = Gen.ones(A.expand_dims(A.rank(data) - A.rank(segment_ids), 0),
                     dtype=num_segments.dtype)
    n = A.reshape(n, A.concat([A.expand_dims(num_segments, 0), inner], 0))
    return M.maximum(n, convert_to_tensor(1, dtype=data.dtype))


def unsorted_segment_mean(data, segment_ids, num_segments, name=None):
    """Mean per segment (sum / count); an empty segment holds 0."""
    with _graph.name_scope(name, "UnsortedSegmentMean"):
        data = convert_to_tensor(data)
        segment_ids = convert_to_tensor(segment_ids)
        n = _unsorted_segment_n(data, segment_ids, num_segments)
        return unsorted_segment_sum(data, segment_ids, num_segments) / n


def unsorted_segment_sqrt_n(data, segment_ids, num_segments, name=None):
    """Sum per segment divided by sqrt(count); an empty segment holds 0."""
    with _graph.name_scope(name, "UnsortedSegmentSqrtN"):
        data = convert_to_tensor(data)
        segment_ids = convert_to_tensor(segment_ids)
        n = _unsorted_segment_n(data, segment_ids, num_segments)
        return unsorted_segment_sum(data, segment_ids, num_segments) / M.sqrt(n)


# RaggedTensor (and other composite) arguments dispatch to registered handlers
# (framework/dispatch.py; TF's ragged_dispatch list).
_dispatch.add_dispatch_support_to(globals(), [
    "unsorted_segment_prod", "unsorted_segment_min", "unsorted_segment_max",
    "unsorted_segment_mean", "unsorted_segment_sqrt_n",
])
