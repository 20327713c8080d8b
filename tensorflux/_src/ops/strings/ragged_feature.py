"""tf.io.RaggedFeature: a RaggedTensor built from an Example's value list and partition
lists, with TF's semantics (TF 2.x's config, also in its compat.v1).

`RaggedFeature(dtype, value_key=None, partitions=(), row_splits_dtype=tf.int32,
validate=False)`: the values of `value_key` (default: the feature's own key), split into
rows by each partition from outermost to innermost: `RowSplits(key)`, `RowLengths(key)`,
`RowStarts(key)`, `RowLimits(key)`, `ValueRowIds(key)` (the partition's numbers are the
int64 list under `key`) or `UniformRowLength(length)`. One record gives a RaggedTensor of
ragged_rank len(partitions) (no partitions: the dense vector of values; trailing uniform
partitions reshape the dense values); a batch adds the outer batch dimension.

TF parses ragged keys with its ParseExampleV2 op (values plus per-record row splits).
Here they travel through the VarLenFeature channel of ParseExample / ParseSingleExample
(the same values, with each value's record in indices[:, 0]), and
`construct_ragged_features` builds TF's RaggedTensors from those with graph ops, after
TF's `_add_ragged_partition` / `_add_batched_ragged_partition`.
"""

from __future__ import annotations

import collections

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.ops.array import array_ops
from tensorflux._src.ops.array.layout import repeat
from tensorflux._src.ops.debug import check_ops
from tensorflux._src.ops.math import math_ops, reduce_ops
from tensorflux._src.ops.math.segment_reductions import unsorted_segment_max
from tensorflux._src.ops.sparse.ragged_tensor import RaggedTensor

__all__ = ["RaggedFeature"]


class RaggedFeature(collections.namedtuple(
        "RaggedFeature", ["dtype", "value_key", "partitions", "row_splits_dtype", "validate"])):
    """Configuration for parsing a RaggedTensor feature (see the module docstring)."""

    RowSplits = collections.namedtuple("RowSplits", ["key"])
    RowLengths = collections.namedtuple("RowLengths", ["key"])
    RowStarts = collections.namedtuple("RowStarts", ["key"])
    RowLimits = collections.namedtuple("RowLimits", ["key"])
    ValueRowIds = collections.namedtuple("ValueRowIds", ["key"])
    UniformRowLength = collections.namedtuple("UniformRowLength", ["length"])

    _PARTITION_TYPES = (RowSplits, RowLengths, RowStarts, RowLimits, ValueRowIds,
                        UniformRowLength)

    def __new__(cls, dtype, value_key=None, partitions=(), row_splits_dtype=_dtypes.int32,
                validate=False):
        if value_key is not None:
            if not isinstance(value_key, str):
                raise ValueError(f"value_key must be a string; got {value_key!r}")
            if not value_key:
                raise ValueError("value_key may not be empty")
        dtype = _dtypes.as_dtype(dtype)
        if dtype not in (_dtypes.int64, _dtypes.float32, _dtypes.string):
            raise ValueError(f"dtypes must be int64, float32, or bytes; got {dtype!r}")
        row_splits_dtype = _dtypes.as_dtype(row_splits_dtype)
        if row_splits_dtype not in (_dtypes.int32, _dtypes.int64):
            raise ValueError(f"row_splits_dtype must be int32 or int64; got "
                             f"{row_splits_dtype!r}")
        if not isinstance(partitions, (list, tuple)):
            raise TypeError("partitions must be a list or tuple")
        for partition in partitions:
            if not isinstance(partition, cls._PARTITION_TYPES):
                raise TypeError(f"partitions must be a list of partition objects "
                                f"{cls._PARTITION_TYPES}; got: {partition!r}")
        if not isinstance(validate, bool):
            raise TypeError(f"validate must be a bool; got {validate!r}")
        return super().__new__(cls, dtype, value_key, partitions, row_splits_dtype, validate)


def ragged_keys(features):
    """[(key, value dtype)] parsed for the RaggedFeatures, in TF's order (feature keys
    sorted; each value key, then its partition keys), with TF's conflict checks."""
    keys, value_types, split_types = [], [], []

    def add(key, value_type, split_type):
        if key in keys:
            i = keys.index(key)
            if value_types[i] != value_type:
                raise ValueError(f"Conflicting type {value_types[i]} vs {value_type} for "
                                 f"feature {key}.")
            if split_types[i] != split_type:
                raise ValueError(f"Conflicting partition type {split_types[i]} vs "
                                 f"{split_type} for feature {key}.")
            return
        keys.append(key)
        value_types.append(value_type)
        split_types.append(split_type)

    for key in sorted(features):
        feature = features[key]
        if not isinstance(feature, RaggedFeature):
            continue
        add(key if feature.value_key is None else feature.value_key, feature.dtype,
            feature.row_splits_dtype)
        for partition in feature.partitions:
            if not isinstance(partition, RaggedFeature.UniformRowLength):
                add(partition.key, _dtypes.int64, feature.row_splits_dtype)
    return list(zip(keys, value_types))


def check_disjoint(dense_keys, sparse_keys, ragged):
    """TF's _ParseOpParams._validate for ragged keys."""
    ragged = {key for key, _ in ragged}
    for kind, others in (("Dense", set(dense_keys)), ("sparse", set(sparse_keys))):
        common = others & ragged
        if common:
            if kind == "Dense":
                raise ValueError(f"Dense and ragged keys must not intersect; intersection: "
                                 f"{common}")
            raise ValueError(f"Ragged and sparse keys must not intersect; intersection: "
                             f"{common}")


# -- building the RaggedTensors -----------------------------------------------------------------
def _rows(sparse, dtype):
    """A parsed batch of lists (a VarLenFeature's SparseTensor) as a RaggedTensor
    [batch, (values)] with row splits of `dtype`."""
    return RaggedTensor.from_value_rowids(
        sparse.values, math_ops.cast(sparse.indices[:, 0], dtype),
        math_ops.cast(sparse.dense_shape[0], dtype), validate=False)


def _uniform_rows(values, length, validate):
    """TF 2's RaggedTensor.from_uniform_row_length: rows of `length` values each."""
    dtype = values.row_splits.dtype
    length = convert_to_tensor(length, dtype=dtype)
    nvals = values.nrows(out_type=dtype)
    splits = math_ops.range(nvals // length + 1, dtype=dtype) * length
    if validate:
        check = check_ops.assert_equal(nvals % length, convert_to_tensor(0, dtype=dtype),
                                       message="nvals is not a multiple of uniform_row_length")
        with _graph.control_dependencies([check]):
            splits = array_ops.identity(splits)
    return RaggedTensor.from_row_splits(values, splits, validate=False)


def _reshape_rows(values, length):
    return array_ops.reshape(values, array_ops.concat(
        [[-1, length], array_ops.shape(values)[1:]], axis=0))


_FACTORIES = {
    RaggedFeature.RowSplits: RaggedTensor.from_row_splits,
    RaggedFeature.RowLengths: RaggedTensor.from_row_lengths,
    RaggedFeature.RowStarts: RaggedTensor.from_row_starts,
    RaggedFeature.RowLimits: RaggedTensor.from_row_limits,
    RaggedFeature.ValueRowIds: RaggedTensor.from_value_rowids,
}


def _add_partition(values, partition, outputs, dtype, validate):
    """One record: `values` split by one partition."""
    if isinstance(partition, RaggedFeature.UniformRowLength):
        if isinstance(values, RaggedTensor):
            return _uniform_rows(values, partition.length, validate)
        return _reshape_rows(values, partition.length)
    numbers = math_ops.cast(outputs[partition.key].values, dtype)
    return _FACTORIES[type(partition)](values, numbers, validate=validate)


def _add_batched_partition(rt, partition, outputs, validate):
    """A batch: each record's values (row i of `rt`) split by that record's partition."""
    dtype = rt.row_splits.dtype
    if isinstance(partition, RaggedFeature.UniformRowLength):
        length = partition.length
        if rt.ragged_rank > 1:
            inner = _uniform_rows(rt.values, length, validate)
        else:
            inner = _reshape_rows(rt.values, length)
        return RaggedTensor.from_row_splits(
            inner, rt.row_splits // convert_to_tensor(length, dtype=dtype), validate=validate)
    part = _rows(outputs[partition.key], dtype)
    part = part.with_values(math_ops.cast(part.values, dtype))
    lengths = part.row_lengths()
    if isinstance(partition, (RaggedFeature.RowSplits, RaggedFeature.RowLimits)):
        if isinstance(partition, RaggedFeature.RowSplits):
            part = part[:, 1:]  # each record's splits without the leading 0: its limits
        limits = part.values + repeat(rt.row_starts(), part.row_lengths())
        return part.with_values(RaggedTensor.from_row_limits(rt.values, limits,
                                                             validate=validate))
    if isinstance(partition, RaggedFeature.RowStarts):
        starts = part.values + repeat(rt.row_starts(), lengths)
        return part.with_values(RaggedTensor.from_row_starts(rt.values, starts,
                                                             validate=validate))
    if isinstance(partition, RaggedFeature.RowLengths):
        return part.with_values(RaggedTensor.from_row_lengths(rt.values, part.values,
                                                              validate=validate))
    # ValueRowIds: each record has max(id) + 1 rows; ids move by the rows before it.
    nrows = math_ops.maximum(unsorted_segment_max(part.values + 1, part.value_rowids(),
                                                  part.nrows()), 0)
    rowids = part.values + repeat(reduce_ops.cumsum(nrows, exclusive=True), lengths)
    return RaggedTensor.from_row_lengths(
        RaggedTensor.from_value_rowids(rt.values, rowids, validate=validate), nrows,
        validate=validate)


def construct_ragged_features(features, outputs, batched):
    """`outputs` (parsed keys; ragged keys as VarLenFeature SparseTensors) with each
    RaggedFeature's key holding its RaggedTensor (or dense tensor). Every RaggedTensor
    is built from the parsed values before any key is replaced, as in TF."""
    updates = {}
    for key in sorted(features):
        feature = features[key]
        if not isinstance(feature, RaggedFeature):
            continue
        values = outputs[key if feature.value_key is None else feature.value_key]
        with _graph.name_scope(None, "RaggedFeature"):
            if batched:
                rt = _rows(values, feature.row_splits_dtype)
                for partition in reversed(feature.partitions):
                    rt = _add_batched_partition(rt, partition, outputs, feature.validate)
            else:
                rt = values.values
                for partition in reversed(feature.partitions):
                    rt = _add_partition(rt, partition, outputs, feature.row_splits_dtype,
                                        feature.validate)
        updates[key] = rt
    outputs = dict(outputs)
    outputs.update(updates)
    return outputs
