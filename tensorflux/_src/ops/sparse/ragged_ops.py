"""tf.ragged's functions: constant / constant_value / placeholder, range (RaggedRange),
map_flat_values, boolean_mask, stack, stack_dynamic_partitions, the segment-id and
row-split conversions, cross / cross_hashed and TF's RaggedFillEmptyRows records
(`RaggedTensor.__getitem__` and the operators are in ragged_indexing).

Compositions follow TF's ragged_*_ops.py. RaggedRange and RaggedFillEmptyRows have
data-dependent sizes, so they are host records; gathering whole rows (for strided row
slices, stack along axis 1 and per-row slices) is RaggedRange over the rows' value spans
plus a gather. Crosses convert to SparseTensors, run SparseCross, and convert back.
"""

from __future__ import annotations

import collections

import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.framework.tensor_shape import TensorShape, as_shape
from tensorflux._src.ops.array import array_ops as A
from tensorflux._src.ops.array import gather_ops as G
from tensorflux._src.ops.array import generator_ops as GEN
from tensorflux._src.ops.array.host_ops import boolean_mask as dense_boolean_mask
from tensorflux._src.ops.array.sort_ops import argsort
from tensorflux._src.ops.constant import constant as dense_constant
from tensorflux._src.ops.constant import placeholder as dense_placeholder
from tensorflux._src.ops.debug import check_ops
from tensorflux._src.ops.math import math_ops as M
from tensorflux._src.ops.math import reduce_ops as R
from tensorflux._src.ops.math.counting import bincount
from tensorflux._src.ops.math.segment_ops import unsorted_segment_sum
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.op_helpers import kernel_error, with_rank
from tensorflux._src.ops.registry import OpDef, register
from tensorflux._src.ops.shape_fns import static_value
from tensorflux._src.ops.sparse import sparse_cross as C
from tensorflux._src.ops.sparse.ragged_tensor import (RaggedTensor, RaggedTensorValue,
                                                      segment_ids_from_splits)
from tensorflux._src.ops.sparse.sparse_ops import _fill_grad_lower, _fill_rows
from tensorflux._src.ops.sparse.sparse_kernels import check_ranks

__all__ = ["boolean_mask", "constant", "constant_value", "cross", "cross_hashed",
           "map_flat_values", "placeholder", "ragged_fill_empty_rows",
           "ragged_fill_empty_rows_grad", "range", "row_splits_to_segment_ids",
           "segment_ids_to_row_splits", "stack", "stack_dynamic_partitions"]

_I64 = _dtypes.int64
_RANGE_TYPES = (_dtypes.bfloat16, _dtypes.float32, _dtypes.float64, _dtypes.int32, _I64)


def is_ragged(value):
    return isinstance(value, (RaggedTensor, RaggedTensorValue))


def _to_tensor_or_ragged(value, dtype=None, name=None):
    if isinstance(value, RaggedTensor):
        return value
    if isinstance(value, RaggedTensorValue):
        return RaggedTensor.from_nested_row_splits(value.flat_values, value.nested_row_splits,
                                                   validate=False)
    return convert_to_tensor(value, dtype=dtype, name=name)


# -- constant, constant_value, placeholder ------------------------------------------------------
def _depths(pylist):
    """(nesting depth of the scalars or None when there are none, max list depth)."""
    if isinstance(pylist, (list, tuple)) or np.ndim(pylist) != 0:
        scalar_depth, max_depth = None, 1
        for child in pylist:
            d, m = _depths(child)
            if d is not None:
                if scalar_depth is not None and scalar_depth != d + 1:
                    raise ValueError("all scalar values must have the same nesting depth")
                scalar_depth = d + 1
            max_depth = max(max_depth, m + 1)
        return scalar_depth, max_depth
    return 0, 0


def _default_inner_shape(pylist, ragged_rank):
    def shape_of(item):
        if not isinstance(item, (list, tuple)) and np.ndim(item) == 0:
            return ()
        if len(item):
            return (len(item),) + shape_of(item[0])
        return (0,)

    def check(item, shape):
        nested = isinstance(item, (list, tuple)) or np.ndim(item) != 0
        if nested != bool(shape):
            raise ValueError("inner values have inconsistent shape")
        if nested:
            if shape[0] != len(item):
                raise ValueError("inner values have inconsistent shape")
            for child in item:
                check(child, shape[1:])

    flat = pylist
    for dim in builtins_range(ragged_rank):
        if not all(isinstance(v, (list, tuple)) or np.ndim(v) != 0 for v in flat):
            raise ValueError(f"pylist has scalar values depth {dim + 1}, but ragged_rank="
                             f"{ragged_rank} requires scalar value depth greater than "
                             f"{ragged_rank}")
        flat = [x for v in flat for x in v]
    inner = shape_of(flat)
    check(flat, inner)
    return inner[1:]


builtins_range = range  # `range` below is tf.ragged.range


def _constant_value(ragged_factory, inner_factory, pylist, dtype, ragged_rank, inner_shape):
    if is_ragged(pylist):
        raise TypeError("pylist may not be a RaggedTensor or RaggedTensorValue.")
    if not isinstance(pylist, (list, tuple)) and np.ndim(pylist) == 0:
        if ragged_rank is not None and ragged_rank != 0:
            raise ValueError(f"Invalid pylist={pylist!r}: incompatible with "
                             f"ragged_rank={ragged_rank}")
        if inner_shape is not None and inner_shape:
            raise ValueError(f"Invalid pylist={pylist!r}: incompatible with "
                             f"dim(inner_shape)={len(inner_shape)}")
        return inner_factory(pylist, dtype, ())
    if ragged_rank is not None and ragged_rank < 0:
        raise ValueError(f"Invalid ragged_rank={ragged_rank!r}: must be nonnegative")
    scalar_depth, max_depth = _depths(pylist)
    if scalar_depth is not None and max_depth > scalar_depth:
        raise ValueError(f"Invalid pylist={pylist!r}: empty list nesting is greater than "
                         f"scalar value nesting")
    if inner_shape is not None and ragged_rank is not None:
        expected = ragged_rank + len(inner_shape) + 1
        if (scalar_depth is not None and expected != scalar_depth) or \
                (scalar_depth is None and expected < max_depth):
            raise ValueError(f"Invalid pylist={pylist!r}: incompatible with ragged_rank="
                             f"{ragged_rank} and dim(inner_shape)={len(inner_shape)}")
    if ragged_rank == 0 or (ragged_rank is None and (
            max_depth < 2 or (inner_shape is not None and max_depth - len(inner_shape) < 2))):
        return inner_factory(pylist, dtype, inner_shape)
    if inner_shape is None:
        inner_shape = () if ragged_rank is None else _default_inner_shape(pylist, ragged_rank)
    inner_shape = tuple(inner_shape)
    if ragged_rank is None:
        ragged_rank = max(1, (max_depth if scalar_depth is None else scalar_depth)
                          - 1 - (0 if scalar_depth is None else len(inner_shape)))
    nested_splits, values = [], pylist
    for _ in builtins_range(ragged_rank):
        splits, concatenated = [0], []
        for row in values:
            splits.append(splits[-1] + len(row))
            concatenated.extend(row)
        nested_splits.append(splits)
        values = concatenated
    values = inner_factory(values, dtype, (len(values),) + inner_shape)
    for splits in reversed(nested_splits):
        values = ragged_factory(values, splits)
    return values


def constant(pylist, dtype=None, ragged_rank=None, inner_shape=None, name=None,
             row_splits_dtype=_I64):
    """A RaggedTensor from a nested Python list (a Tensor when it is not ragged)."""
    row_splits_dtype = _dtypes.as_dtype(row_splits_dtype)

    def ragged_factory(values, splits):
        splits = dense_constant(np.asarray(splits, row_splits_dtype.as_numpy_dtype))
        return RaggedTensor.from_row_splits(values, splits, validate=False)

    def inner_factory(values, dtype_, shape):
        if dtype_ is None and isinstance(values, list) and not values:
            dtype_ = _dtypes.float32
        return dense_constant(values, dtype=dtype_, shape=shape)

    with _graph.name_scope(name, "RaggedConstant"):
        return _constant_value(ragged_factory, inner_factory, pylist, dtype, ragged_rank,
                               inner_shape)


def constant_value(pylist, dtype=None, ragged_rank=None, inner_shape=None,
                   row_splits_dtype="int64"):
    """A RaggedTensorValue (numpy) from a nested Python list."""
    split_type = np.dtype(_dtypes.as_dtype(row_splits_dtype).as_numpy_dtype)

    def ragged_factory(values, splits):
        return RaggedTensorValue(values, np.asarray(splits, split_type))

    def inner_factory(values, dtype_, shape):
        dtype_ = None if dtype_ is None else (
            _dtypes.as_dtype(dtype_).as_numpy_dtype if not isinstance(dtype_, np.dtype)
            else dtype_)
        if dtype_ is None and isinstance(values, list) and not values:
            dtype_ = np.float64
        array = np.array(values, dtype=dtype_)
        return array.reshape(shape) if shape is not None else array

    return _constant_value(ragged_factory, inner_factory, pylist, dtype, ragged_rank,
                           inner_shape)


def placeholder(dtype, ragged_rank, value_shape=None, name=None):
    """A RaggedTensor of placeholders (flat values and one row_splits per ragged
    dimension), fed with a tf.ragged.RaggedTensorValue."""
    if ragged_rank == 0:
        return dense_placeholder(dtype, value_shape, name)
    with _graph.name_scope(name, "RaggedPlaceholder", []):
        flat_shape = TensorShape([None]).concatenate(as_shape(value_shape or []))
        result = dense_placeholder(dtype, flat_shape, "flat_values")
        for i in reversed(builtins_range(ragged_rank)):
            splits = dense_placeholder(_I64, [None], f"row_splits_{i}")
            result = RaggedTensor(result, splits, internal=True)
        return result


# -- RaggedRange (host) ----------------------------------------------------------------------
def _range_kernel(starts, limits, deltas, Tsplits):  # noqa: N803 - TF's attr name
    for what, v in (("starts", starts), ("limits", limits), ("deltas", deltas)):
        if v.ndim > 1:
            raise kernel_error(f"{what} must be a scalar or vector")
    sizes = {v.shape[0] for v in (starts, limits, deltas) if v.ndim == 1}
    if len(sizes) > 1:
        raise kernel_error("starts, limits, and deltas must have the same shape")
    n = sizes.pop() if sizes else 1
    starts, limits, deltas = (np.broadcast_to(v, (n,)) for v in (starts, limits, deltas))
    rows = []
    for start, limit, delta in zip(starts.tolist(), limits.tolist(), deltas.tolist()):
        if delta == 0:
            raise kernel_error("Requires delta != 0")
        rows.append(np.arange(start, limit, delta, dtype=starts.dtype)
                    if (limit - start) * delta > 0 else np.zeros([0], starts.dtype))
    splits = np.cumsum([0] + [len(r) for r in rows]).astype(Tsplits.as_numpy_dtype)
    values = np.concatenate(rows) if rows else np.zeros([0], starts.dtype)
    return splits, values.astype(starts.dtype)


def _range_shape(op):
    n = None
    for t in op.inputs:
        shape = t.shape
        if shape.ndims is not None and shape.ndims > 1:
            raise ValueError(f"Shape must be at most rank 1 but is rank {shape.ndims}")
        if shape.ndims == 1:
            n = shape[0].value if n is None else n
    rows = 1 if all(t.shape.ndims == 0 for t in op.inputs) else n
    return [TensorShape([None if rows is None else rows + 1]), TensorShape([None])]


register(OpDef(
    "RaggedRange", inputs=("starts: T", "limits: T", "deltas: T"),
    outputs=("rt_nested_splits: Tsplits", "rt_dense_values: T"),
    attrs={"T": _RANGE_TYPES, "Tsplits": (_dtypes.int32, _I64)},
    type_defaults={"Tsplits": _I64}, shape=_range_shape, host=_range_kernel,
    not_differentiable=True))


def range(starts, limits=None, deltas=1, dtype=None, name=None,  # noqa: A001
          row_splits_dtype=_I64):
    """A RaggedTensor whose row i is range(starts[i], limits[i], deltas[i]) (scalars
    broadcast)."""
    if limits is None:
        starts, limits = 0, starts
    with _graph.name_scope(name, "RaggedRange", [starts, limits, deltas]) as scope:
        args = [convert_to_tensor(v, dtype=dtype, name=n)
                for v, n in ((starts, "starts"), (limits, "limits"), (deltas, "deltas"))]
        if dtype is None:
            order = [_dtypes.int32, _I64, _dtypes.float32, _dtypes.float64]
            widest = max((a.dtype.base_dtype for a in args), key=lambda d: order.index(d)
                         if d in order else -1)
            args = [a if a.dtype.base_dtype == widest else M.cast(a, widest) for a in args]
        splits, values = apply_op("RaggedRange", name=scope, starts=args[0], limits=args[1],
                                  deltas=args[2], Tsplits=_dtypes.as_dtype(row_splits_dtype))
        return RaggedTensor.from_row_splits(values, splits, validate=False)


def gather_rows(rt, indices):
    """The rows `indices` of a RaggedTensor (TF's ragged gather on the row dimension)."""
    starts = G.gather(rt.row_starts(), indices)
    limits = G.gather(rt.row_limits(), indices)
    spans = range(starts, limits, M.cast(1, starts.dtype), row_splits_dtype=starts.dtype)
    values = rt.values
    picked = gather_rows(values, spans.values) if isinstance(values, RaggedTensor) else \
        G.gather(values, spans.values)
    return RaggedTensor(picked, spans.row_splits, internal=True)


# -- segment ids and row splits -----------------------------------------------------------------
def row_splits_to_segment_ids(splits, name=None, out_type=None):
    """The row of each value of a row partition given by `splits`."""
    with _graph.name_scope(name, "RaggedSplitsToSegmentIds", [splits]):
        splits = convert_to_tensor(splits, name="splits", preferred_dtype=_I64)
        if splits.dtype.base_dtype not in (_dtypes.int32, _I64):
            raise ValueError("splits must have dtype int32 or int64")
        splits.shape.with_rank(1)
        if splits.shape[0].value == 0:
            raise ValueError("Invalid row_splits: []")
        ids = segment_ids_from_splits(splits)
        out_type = splits.dtype if out_type is None else _dtypes.as_dtype(out_type)
        return ids if ids.dtype == out_type else M.cast(ids, out_type)


def segment_ids_to_row_splits(segment_ids, num_segments=None, out_type=None, name=None):
    """The row splits of sorted `segment_ids` (with `num_segments` rows when given)."""
    out_type = _I64 if out_type is None else _dtypes.as_dtype(out_type)
    with _graph.name_scope(name, "SegmentIdsToRaggedSplits", [segment_ids]):
        segment_ids = convert_to_tensor(segment_ids, name="segment_ids",
                                        preferred_dtype=_I64)
        segment_ids.shape.with_rank(1)
        n = None if num_segments is None else M.cast(
            convert_to_tensor(num_segments, name="num_segments"), _dtypes.int32)
        lengths = M.cast(bincount(M.cast(segment_ids, _dtypes.int32), minlength=n,
                                  maxlength=n), out_type)
        splits = A.concat([GEN.zeros([1], out_type), R.cumsum(lengths)], 0)
        known = None if num_segments is None else static_value(convert_to_tensor(num_segments))
        if known is not None:
            splits.set_shape([int(known) + 1])
        return splits


# -- map_flat_values ----------------------------------------------------------------------------
def _replace_ragged(value, nested_splits):
    if isinstance(value, RaggedTensor):
        nested_splits.append(value.nested_row_splits)
        return value.flat_values
    if isinstance(value, (list, tuple)):
        return type(value)(_replace_ragged(v, nested_splits) for v in value)
    if isinstance(value, dict):
        return {k: _replace_ragged(v, nested_splits) for k, v in value.items()}
    return value


def _assert_splits_match(nested_splits_lists):
    """TF's ragged_util.assert_splits_match: same ragged rank, equal splits."""
    message = "Inputs must have identical ragged splits"
    first = nested_splits_lists[0]
    checks = []
    for other in nested_splits_lists[1:]:
        if len(other) != len(first):
            raise ValueError(message)
        for s1, s2 in zip(first, other):
            if s1 is not s2:
                checks.append(check_ops.assert_equal(s1, s2, message=message))
    return checks


def map_flat_values(op, *args, **kwargs):
    """`op` applied to the flat values of the RaggedTensor arguments (which must share
    their row partitions); the result has their partitions."""
    nested_splits = []
    inner_args = _replace_ragged(args, nested_splits)
    inner_kwargs = _replace_ragged(kwargs, nested_splits)
    if not nested_splits:
        return op(*args, **kwargs)
    if len({splits[0].dtype for splits in nested_splits}) > 1:
        raise ValueError("Input RaggedTensors have mismatched row_splits dtypes; use "
                         "RaggedTensor.with_row_splits_dtype() to convert them to compatible "
                         "dtypes.")
    checks = _assert_splits_match(nested_splits)
    result = op(*inner_args, **inner_kwargs)
    if checks:
        with _graph.control_dependencies(checks):
            result = A.identity(result)
    return RaggedTensor.from_nested_row_splits(result, nested_splits[0], validate=False)


# -- boolean_mask -------------------------------------------------------------------------------
def _lengths_to_splits(lengths):
    return A.concat([GEN.zeros([1], lengths.dtype), R.cumsum(lengths)], 0)


def boolean_mask(data, mask, name=None):
    """The items of `data` where `mask` is true: a rank-k mask keeps, per innermost
    row of the mask, only the selected items (a RaggedTensor for k >= 2)."""
    with _graph.name_scope(name, "RaggedMask", [data, mask]):
        data = _to_tensor_or_ragged(data, name="data")
        mask = _to_tensor_or_ragged(mask, dtype=_dtypes.bool, name="mask")
        splits_dtype = data.row_splits.dtype if isinstance(data, RaggedTensor) else (
            mask.row_splits.dtype if isinstance(mask, RaggedTensor) else _I64)
        if mask.shape.ndims is None:
            raise ValueError("mask.shape.ndims must be known statically.")
        if mask.shape.ndims == 0:
            raise ValueError("mask cannot be scalar.")
        if isinstance(mask, RaggedTensor):
            if not isinstance(data, RaggedTensor):
                data = RaggedTensor.from_tensor(data, ragged_rank=mask.ragged_rank,
                                                row_splits_dtype=mask.row_splits.dtype)
            checks = _assert_splits_match([mask.nested_row_splits,
                                           data.nested_row_splits[:mask.ragged_rank]])
            splits = []
            while isinstance(mask, RaggedTensor):
                if mask.shape.ndims > 2:
                    splits.append(mask.row_splits)
                else:
                    counts = unsorted_segment_sum(M.cast(mask.values, splits_dtype),
                                                  mask.value_rowids(), mask.nrows())
                    splits.append(_lengths_to_splits(counts))
                mask, data = mask.values, data.values
            masked = boolean_mask(data, mask)
            if checks:
                with _graph.control_dependencies(checks):
                    masked = masked.with_flat_values(A.identity(masked.flat_values)) \
                        if isinstance(masked, RaggedTensor) else A.identity(masked)
            return RaggedTensor.from_nested_row_splits(masked, splits, validate=False)
        if isinstance(data, RaggedTensor) and mask.shape.ndims == 1:
            lengths = dense_boolean_mask(data.row_lengths(), mask)
            segment_mask = G.gather(mask, data.value_rowids())
            values = boolean_mask(data.values, segment_mask)
            return RaggedTensor.from_row_splits(values, _lengths_to_splits(lengths),
                                                validate=False)
        if isinstance(data, RaggedTensor):
            mask = RaggedTensor.from_tensor(mask, ragged_rank=min(data.ragged_rank,
                                                                  mask.shape.ndims - 1),
                                            row_splits_dtype=data.row_splits.dtype)
            return boolean_mask(data, mask)
        masked = dense_boolean_mask(data, mask)
        if mask.shape.ndims >= 2:
            lengths = R.count_nonzero(mask, axis=-1, dtype=splits_dtype)
            masked = RaggedTensor.from_row_lengths(masked, A.reshape(lengths, [-1]),
                                                   validate=False)
            if mask.shape.ndims > 2:
                mask_shape = A.shape(mask, out_type=splits_dtype)
                split_size = R.cumprod(mask_shape) + 1
                for dim in builtins_range(mask.shape.ndims - 3, -1, -1):
                    splits = M.range(split_size[dim]) * mask_shape[dim + 1]
                    masked = RaggedTensor.from_row_splits(masked, splits, validate=False)
        return masked


# -- stack, stack_dynamic_partitions ----------------------------------------------------------
def _concat_splits(splits_list):
    pieces, offset = [splits_list[0]], splits_list[0][-1]
    for splits in splits_list[1:]:
        pieces.append(splits[1:] + offset)
        offset = offset + splits[-1]
    return A.concat(pieces, 0)


def _stack_axis0(inputs, stack_values):
    flat = A.concat([rt.flat_values for rt in inputs], 0)
    rank = inputs[0].ragged_rank
    nested = [_concat_splits([rt.nested_row_splits[d] for rt in inputs])
              for d in builtins_range(rank)]
    if stack_values:
        lengths = A.stack([rt.nrows() for rt in inputs])
        nested.insert(0, _lengths_to_splits(lengths))
    return RaggedTensor.from_nested_row_splits(flat, nested, validate=False)


def _interleave_rows(inputs):
    """The rows of `inputs` interleaved (row 0 of each input, then row 1 of each, ...) and
    their common row count, checked at run time: stack and concat along axis 1."""
    n = len(inputs)
    nrows = inputs[0].nrows()
    checks = [check_ops.assert_equal(rt.nrows(), nrows,
                                     message="Input tensors have incompatible shapes.")
              for rt in inputs[1:]]
    concatenated = _stack_axis0(inputs, stack_values=False)
    if checks:
        with _graph.control_dependencies(checks):
            nrows = A.identity(nrows)
    order = A.reshape(A.transpose(A.reshape(M.range(nrows * n), A.stack([n, -1]))), [-1])
    return gather_rows(concatenated, order), nrows


def _stack_axis1(inputs):
    n = len(inputs)
    permuted, nrows = _interleave_rows(inputs)
    splits = M.range(0, nrows * n + 1, n)
    return RaggedTensor.from_row_splits(permuted, splits, validate=False)


def stack(values, axis=0, name=None):
    """Stacks RaggedTensors (and Tensors) along a new dimension `axis`."""
    if not isinstance(values, (list, tuple)):
        values = [values]
    with _graph.name_scope(name, "RaggedConcat", values):
        inputs = [_to_tensor_or_ragged(v, name=f"rt_input_{i}") for i, v in enumerate(values)]
        if not any(isinstance(v, RaggedTensor) for v in inputs):
            return A.stack(inputs, axis=axis)
        ranks = {v.shape.ndims for v in inputs}
        if None in ranks:
            raise ValueError("rt_input.shape.ndims must be known statically")
        if len(ranks) > 1:
            raise ValueError("rt_input.shape.ndims must be the same for all inputs")
        ndims = ranks.pop() + 1
        if not -ndims <= axis < ndims:
            raise ValueError(f"axis={axis} out of bounds: expected {-ndims}<=axis<{ndims}")
        axis = axis + ndims if axis < 0 else axis
        ragged_rank = max(v.ragged_rank for v in inputs if isinstance(v, RaggedTensor))
        inputs = [v if isinstance(v, RaggedTensor) else
                  RaggedTensor.from_tensor(v, ragged_rank=ragged_rank) for v in inputs]
        if any(v.ragged_rank != ragged_rank for v in inputs):
            raise ValueError("stack of RaggedTensors of different ragged ranks is not "
                             "supported here")
        if axis == 0:
            return _stack_axis0(inputs, stack_values=True)
        if axis == 1:
            return _stack_axis1(inputs)
        checks = _assert_splits_match([[rt.row_splits] for rt in inputs])
        inner = stack([rt.values for rt in inputs], axis - 1)
        splits = inputs[0].row_splits
        if checks:
            with _graph.control_dependencies(checks):
                splits = A.identity(splits)
        return RaggedTensor.from_row_splits(inner, splits, validate=False)


def stack_dynamic_partitions(data, partitions, num_partitions, name=None):
    """A RaggedTensor whose row p holds the items of `data` with partitions == p, in
    their order."""
    with _graph.name_scope(name, "SegmentStack", [data, partitions, num_partitions]):
        data = _to_tensor_or_ragged(data, name="data")
        partitions = convert_to_tensor(partitions, name="partitions",
                                       preferred_dtype=_dtypes.int32)
        partitions.shape.with_rank(1)
        num = M.cast(convert_to_tensor(num_partitions, name="num_partitions"),
                     partitions.dtype)
        message = "Partitions must be in the range [0, num_partitions)"
        checks = [check_ops.assert_non_negative(partitions, message=message),
                  check_ops.assert_less(partitions, num, message=message)]
        with _graph.control_dependencies(checks):
            partitions = A.identity(partitions)
        num32 = M.cast(num, _dtypes.int32)
        sizes = M.cast(bincount(M.cast(partitions, _dtypes.int32), minlength=num32,
                                maxlength=num32), _I64)
        order = argsort(partitions, stable=True)
        picked = gather_rows(data, order) if isinstance(data, RaggedTensor) else \
            G.gather(data, order)
        return RaggedTensor.from_row_lengths(picked, sizes, validate=False)


# -- cross, cross_hashed ---------------------------------------------------------------------
def _to_sparse_inputs(inputs):
    if not isinstance(inputs, (list, tuple)):
        raise TypeError("Inputs must be a list")
    out = []
    for x in inputs:
        x = _to_tensor_or_ragged(x)
        if isinstance(x, RaggedTensor):
            if x.ragged_rank != 1 or x.shape.ndims != 2:
                raise ValueError("tf.ragged.cross only supports inputs with rank=2")
            x = x.to_sparse()
        out.append(x)
    return list(out)


def cross(inputs, name=None):
    """Row-wise feature crosses of 2-D ragged/dense/sparse inputs, as strings joined by
    "_X_" (a RaggedTensor)."""
    with _graph.name_scope(name, "RaggedCross", inputs):
        result = C.sparse_cross(_to_sparse_inputs(inputs))
        return RaggedTensor.from_sparse(result)


def cross_hashed(inputs, num_buckets=0, hash_key=None, name=None):
    """Row-wise feature crosses as int64 hashes (see tf.sparse.cross_hashed)."""
    with _graph.name_scope(name, "RaggedCross", inputs):
        result = C.sparse_cross_hashed(_to_sparse_inputs(inputs), num_buckets=num_buckets,
                                       hash_key=hash_key)
        return RaggedTensor.from_sparse(result)


# -- RaggedFillEmptyRows and its gradient -----------------------------------------------------
def _ragged_fill_kernel(value_rowids, values, nrows, default_value):
    check_ranks(("value_rowids", value_rowids, 1), ("values", values, 1), ("nrows", nrows, 0),
                ("default_value", default_value, 0))
    n, rows = value_rowids.shape[0], int(nrows)
    if values.shape[0] != n:
        raise kernel_error(f"The length of `values` ({values.shape[0]}) must match the first "
                           f"dimension of `value_rowids` ({n}).")
    for i in np.flatnonzero((value_rowids < 0) | (value_rowids >= rows))[:1]:
        row = int(value_rowids[i])
        bound = f"{row} < 0" if row < 0 else f"{row} >= {rows}"
        raise kernel_error(f"value_rowids({i}) is invalid: {bound}")
    out_indices, out_values, empty, reverse = _fill_rows(
        value_rowids.astype(np.int64), value_rowids.reshape(-1, 1), values, rows, 1,
        default_value)
    return out_indices[:, 0], out_values, empty, reverse


def _ragged_fill_grad(op, unused_rowids_grad, values_grad, unused_indicator, unused_map):
    d_values, d_default = apply_op("RaggedFillEmptyRowsGrad", reverse_index_map=op.outputs[3],
                                   grad_values=values_grad)
    return [None, d_values, None, d_default]


def _ragged_fill_shape(op):
    rowids = with_rank(op.inputs[0].shape, 1)
    with_rank(op.inputs[1].shape, 1)
    with_rank(op.inputs[2].shape, 0)
    with_rank(op.inputs[3].shape, 0)
    nrows = static_value(op.inputs[2])
    return [TensorShape([None]), TensorShape([None]),
            TensorShape([None if nrows is None else int(nrows)]), rowids]


register(OpDef(
    "RaggedFillEmptyRows", inputs=("value_rowids: int64", "values: T", "nrows: int64",
                                   "default_value: T"),
    outputs=("output_value_rowids: int64", "output_values: T", "empty_row_indicator: bool",
             "reverse_index_map: int64"),
    attrs={"T": _dtypes.ALL}, shape=_ragged_fill_shape, host=_ragged_fill_kernel,
    grad=_ragged_fill_grad))
register(OpDef(
    "RaggedFillEmptyRowsGrad", inputs=("reverse_index_map: int64", "grad_values: T"),
    outputs=("d_values: T", "d_default_value: T"), attrs={"T": _dtypes.NUMBERS},
    shape=lambda op: [with_rank(op.inputs[0].shape, 1), TensorShape([])],
    lower=_fill_grad_lower, not_differentiable=True))

RaggedFillEmptyRowsResult = collections.namedtuple(
    "RaggedFillEmptyRows", ["output_value_rowids", "output_values", "empty_row_indicator",
                            "reverse_index_map"])
RaggedFillEmptyRowsGradResult = collections.namedtuple(
    "RaggedFillEmptyRowsGrad", ["d_values", "d_default_value"])


def ragged_fill_empty_rows(value_rowids, values, nrows, default_value, name=None):
    """TF's raw op: the ragged row ids and values with `default_value` put in each empty
    row, which rows were empty, and where each input value went."""
    return RaggedFillEmptyRowsResult(*apply_op(
        "RaggedFillEmptyRows", name=name, value_rowids=value_rowids, values=values,
        nrows=nrows, default_value=default_value))


def ragged_fill_empty_rows_grad(reverse_index_map, grad_values, name=None):
    """TF's raw op: RaggedFillEmptyRows' gradient for the values and the default."""
    return RaggedFillEmptyRowsGradResult(*apply_op(
        "RaggedFillEmptyRowsGrad", name=name, reverse_index_map=reverse_index_map,
        grad_values=grad_values))
