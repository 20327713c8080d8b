"""Reductions and segment aggregations of RaggedTensors (TF's ragged_math_ops.py), what
tf.reduce_* and tf.math.unsorted_segment_* dispatch to on a ragged argument.

A reduction over a ragged axis is an unsorted segment reduction of the values: axis 1
reduces each row (segments = the value row ids), axis 0 the i-th items of all rows
(segments = each value's position in its row); deeper axes reduce inside the values.
Ragged data under a reduced axis keeps its raggedness: each output row is as long as
the longest input row it collects (TF's _ragged_segment_aggregate). Everything is a
composition of existing records, so gradients are those of the segment ops.
"""

from __future__ import annotations

import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.operation import Tensor
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.ops.array import array_ops as A
from tensorflux._src.ops.array import gather_ops as G
from tensorflux._src.ops.array import generator_ops as GEN
from tensorflux._src.ops.math import math_ops as M
from tensorflux._src.ops.math import reduce_ops as R
from tensorflux._src.ops.math import segment_ops as S
from tensorflux._src.ops.math import segment_reductions as SR
from tensorflux._src.ops.shape_fns import static_value
from tensorflux._src.ops.sparse.ragged_ops import (_assert_splits_match, _to_tensor_or_ragged,
                                                   is_ragged)
from tensorflux._src.ops.sparse.ragged_ops import range as ragged_range
from tensorflux._src.ops.sparse.ragged_tensor import RaggedTensor

__all__ = ["get_positive_axis", "reduce_all", "reduce_any", "reduce_max", "reduce_mean",
           "reduce_min", "reduce_prod", "reduce_sum", "segment_max", "segment_mean",
           "segment_min", "segment_prod", "segment_sqrt_n", "segment_sum"]


def get_positive_axis(axis, ndims):
    """TF's ragged_util.get_positive_axis: `axis` in [0, ndims) (a negative one needs a
    known rank)."""
    if not isinstance(axis, (int, np.integer)):
        raise TypeError(f"axis must be an int; got {type(axis).__name__}")
    if ndims is not None:
        if 0 <= axis < ndims:
            return int(axis)
        if -ndims <= axis < 0:
            return int(axis + ndims)
        raise ValueError(f"axis={axis} out of bounds: expected {-ndims}<=axis<{ndims}")
    if axis < 0:
        raise ValueError("axis may only be negative if ndims is statically known.")
    return int(axis)


def _segment_aggregate(segment_op, data, segment_ids, num_segments):
    """`segment_op` over rows of `data` (ragged or not) grouped by `segment_ids`."""
    if not (is_ragged(data) or is_ragged(segment_ids)):
        return segment_op(data, segment_ids, num_segments)
    data = _to_tensor_or_ragged(data, name="data")
    segment_ids = _to_tensor_or_ragged(segment_ids, name="segment_ids")
    if isinstance(segment_ids, RaggedTensor):
        if not isinstance(data, RaggedTensor):
            raise ValueError("segment_ids.shape must be a prefix of data.shape, but "
                             "segment_ids is ragged and data is not.")
        checks = _assert_splits_match([segment_ids.nested_row_splits,
                                       data.nested_row_splits[:segment_ids.ragged_rank]])
        inner_data = data
        for _ in range(segment_ids.ragged_rank):
            inner_data = inner_data.values
        ids = segment_ids.flat_values
        if checks:
            with _graph.control_dependencies(checks):
                ids = A.identity(ids)
        return _segment_aggregate(segment_op, inner_data, ids, num_segments)
    splits_dtype = data.row_splits.dtype
    segment_ids = M.cast(segment_ids, splits_dtype) if segment_ids.dtype != splits_dtype \
        else segment_ids
    lengths = data.row_lengths()
    num = M.cast(convert_to_tensor(num_segments, name="num_segments"), splits_dtype)
    out_lengths = M.maximum(SR.unsorted_segment_max(lengths, segment_ids, num),
                            GEN.zeros([], splits_dtype))
    out_splits = A.concat([GEN.zeros([1], splits_dtype), R.cumsum(out_lengths)], 0)
    starts = G.gather(out_splits, segment_ids)
    positions = ragged_range(starts, starts + lengths, M.cast(1, splits_dtype),
                             row_splits_dtype=splits_dtype).values
    values = _segment_aggregate(segment_op, data.values, positions, out_splits[-1])
    return RaggedTensor.from_row_splits(values, out_splits, validate=False)


def _static_axis(axis):
    if isinstance(axis, Tensor):
        value = static_value(axis)
        if value is None:
            raise ValueError("axis must be known at graph construction time.")
        axis = value
    if isinstance(axis, np.ndarray):
        axis = axis.tolist()
    return axis


def _reduce_aggregate(reduce_op, segment_op, rt, axis, keepdims, name, default_name):
    """TF's ragged_reduce_aggregate."""
    if not is_ragged(rt):
        return reduce_op(rt, axis, keepdims=keepdims, name=name)
    if keepdims:
        raise ValueError("keepdims=True is not supported for RaggedTensors.")
    axis = _static_axis(axis)
    rt = _to_tensor_or_ragged(rt, name="rt_input")
    if axis is None:
        return reduce_op(rt.flat_values, None, name=name)
    with _graph.name_scope(name, default_name, [rt]):
        if isinstance(axis, (list, tuple)):
            if not axis:
                return rt
            if len(axis) > 1:
                # One axis at a time, innermost first, so the others keep their numbers.
                axes = sorted({get_positive_axis(a, rt.shape.ndims) for a in axis})
                for a in reversed(axes):
                    rt = _reduce_aggregate(reduce_op, segment_op, rt, a, False, None,
                                           default_name)
                return rt
            axis = axis[0]
        axis = get_positive_axis(axis, rt.shape.ndims)
        if axis == 0:
            lengths = rt.row_lengths()
            num = M.maximum(R.reduce_max(lengths), GEN.zeros([], lengths.dtype))
            ids = ragged_range(lengths, row_splits_dtype=lengths.dtype).values
            return _segment_aggregate(segment_op, rt.values, ids, num)
        if axis == 1:
            return _segment_aggregate(segment_op, rt.values, rt.value_rowids(), rt.nrows())
        return rt.with_values(_reduce_aggregate(reduce_op, segment_op, rt.values, axis - 1,
                                                False, None, default_name))


def reduce_sum(input_tensor, axis=None, keepdims=None, name=None):
    return _reduce_aggregate(R.reduce_sum, S.unsorted_segment_sum, input_tensor, axis,
                             keepdims, name, "RaggedReduceSum")


def reduce_prod(input_tensor, axis=None, keepdims=None, name=None):
    return _reduce_aggregate(R.reduce_prod, SR.unsorted_segment_prod, input_tensor, axis,
                             keepdims, name, "RaggedReduceProd")


def reduce_min(input_tensor, axis=None, keepdims=None, name=None):
    return _reduce_aggregate(R.reduce_min, SR.unsorted_segment_min, input_tensor, axis,
                             keepdims, name, "RaggedReduceMin")


def reduce_max(input_tensor, axis=None, keepdims=None, name=None):
    return _reduce_aggregate(R.reduce_max, SR.unsorted_segment_max, input_tensor, axis,
                             keepdims, name, "RaggedReduceMax")


def _ones_like(rt):
    if is_ragged(rt):
        return rt.with_flat_values(GEN.ones_like(rt.flat_values))
    return GEN.ones_like(rt)


def _divide_values(total, count, fn=None):
    count = count if fn is None else fn(count)
    if isinstance(total, RaggedTensor):
        return total.with_flat_values(total.flat_values / count.flat_values)
    return total / count


def reduce_mean(input_tensor, axis=None, keepdims=None, name=None):
    """The ragged sum over the ragged count (NaN for an empty row, as TF)."""
    with _graph.name_scope(name, "RaggedReduceMean", [input_tensor]):
        rt = _to_tensor_or_ragged(input_tensor, name="input_tensor")
        total = reduce_sum(rt, axis, keepdims)
        count = reduce_sum(_ones_like(rt), axis, keepdims)
        return _divide_values(total, count)


def _cast(rt, dtype):
    return rt.with_flat_values(M.cast(rt.flat_values, dtype)) if is_ragged(rt) \
        else M.cast(rt, dtype)


def reduce_all(input_tensor, axis=None, keepdims=None, name=None):
    with _graph.name_scope(name, "RaggedReduceAll", [input_tensor]):
        rt = _to_tensor_or_ragged(input_tensor, name="input_tensor")
        return _cast(reduce_prod(_cast(rt, _dtypes.int32), axis, keepdims), _dtypes.bool)


def reduce_any(input_tensor, axis=None, keepdims=None, name=None):
    with _graph.name_scope(name, "RaggedReduceAny", [input_tensor]):
        rt = _to_tensor_or_ragged(input_tensor, name="input_tensor")
        return _cast(reduce_sum(_cast(rt, _dtypes.int32), axis, keepdims), _dtypes.bool)


# -- segment ops on ragged data --------------------------------------------------------------
def _segment_fn(segment_op, default_name):
    def fn(data, segment_ids, num_segments, name=None):
        with _graph.name_scope(name, default_name, [data, segment_ids, num_segments]):
            return _segment_aggregate(segment_op, data, segment_ids, num_segments)
    return fn


segment_sum = _segment_fn(S.unsorted_segment_sum, "RaggedSegmentSum")
segment_prod = _segment_fn(SR.unsorted_segment_prod, "RaggedSegmentProd")
segment_min = _segment_fn(SR.unsorted_segment_min, "RaggedSegmentMin")
segment_max = _segment_fn(SR.unsorted_segment_max, "RaggedSegmentMax")


def segment_mean(data, segment_ids, num_segments, name=None):
    with _graph.name_scope(name, "RaggedSegmentMean", [data, segment_ids, num_segments]):
        data = _to_tensor_or_ragged(data, name="data")
        total = _segment_aggregate(S.unsorted_segment_sum, data, segment_ids, num_segments)
        count = _segment_aggregate(S.unsorted_segment_sum, _ones_like(data), segment_ids,
                                   num_segments)
        return _divide_values(total, count)


def segment_sqrt_n(data, segment_ids, num_segments, name=None):
    with _graph.name_scope(name, "RaggedSegmentSqrtN", [data, segment_ids, num_segments]):
        data = _to_tensor_or_ragged(data, name="data")
        total = _segment_aggregate(S.unsorted_segment_sum, data, segment_ids, num_segments)
        count = _segment_aggregate(S.unsorted_segment_sum, _ones_like(data), segment_ids,
                                   num_segments)
        return _divide_values(total, count, lambda c: c.with_flat_values(M.sqrt(c.flat_values))
                              if is_ragged(c) else M.sqrt(c))
