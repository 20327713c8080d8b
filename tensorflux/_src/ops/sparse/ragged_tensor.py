"""`tf.RaggedTensor`: rows of different lengths, as flat values plus row partitions.

A RaggedTensor holds `values` (a Tensor, or another RaggedTensor for more ragged
dimensions) and `row_splits` (int64 or int32, [nrows + 1]): row i is
values[row_splits[i]:row_splits[i + 1]]. It is a `CompositeTensor` like SparseTensor:
`Session.run` fetches its flat values and row splits and returns a
`tf.ragged.RaggedTensorValue`, a feed keyed by one takes a RaggedTensorValue, and
`tf.nest` opens it with `expand_composites=True`.

Conversions to dense and sparse form are TF's host records RaggedTensorToTensor (the
output's shape depends on the row lengths) and RaggedTensorToSparse; gradients flow to
the flat values through both. The factories' `validate=True` adds TF's run-time asserts
on the partition (splits start at 0, never decrease, end at the number of values).
"""

from __future__ import annotations

import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework import tensor_shape
from tensorflux._src.framework.composite_tensor import CompositeTensor
from tensorflux._src.framework.operation import Tensor
from tensorflux._src.framework.sparse_tensor import SparseTensor
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.framework.tensor_shape import TensorShape, unknown_shape
from tensorflux._src.framework.type_spec import TensorSpec, TypeSpec
from tensorflux._src.ops.array import array_ops as A
from tensorflux._src.ops.array import gather_ops as G
from tensorflux._src.ops.array import generator_ops as GEN
from tensorflux._src.ops.array.host_ops import boolean_mask
from tensorflux._src.ops.array.layout import repeat, sequence_mask
from tensorflux._src.ops.debug import check_ops
from tensorflux._src.ops.debug.debug_ops import Assert
from tensorflux._src.ops.math import math_ops as M
from tensorflux._src.ops.math import reduce_ops as R
from tensorflux._src.ops.math.counting import bincount
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.op_helpers import kernel_error
from tensorflux._src.ops.registry import OpDef, REQUIRED, register
from tensorflux._src.ops.shape_fns import static_shape_from_tensor, static_value

__all__ = ["RaggedTensor", "RaggedTensorSpec", "RaggedTensorValue"]

_SPLIT_TYPES = (_dtypes.int32, _dtypes.int64)


# -- the fetched value ------------------------------------------------------------------------
class RaggedTensorValue:
    """`tf.ragged.RaggedTensorValue(values, row_splits)`: a RaggedTensor's numpy value,
    what Session.run returns for one."""

    def __init__(self, values, row_splits):
        if not (isinstance(row_splits, (np.ndarray, np.generic)) and
                row_splits.dtype in (np.int64, np.int32) and row_splits.ndim == 1):
            raise TypeError("row_splits must be a 1D int32 or int64 numpy array")
        if not isinstance(values, (np.ndarray, np.generic, RaggedTensorValue)):
            raise TypeError("values must be a numpy array or a RaggedTensorValue")
        if isinstance(values, RaggedTensorValue) and row_splits.dtype != values.row_splits.dtype:
            raise ValueError("row_splits and values.row_splits must have the same dtype")
        self._values = values
        self._row_splits = row_splits

    row_splits = property(lambda self: self._row_splits)
    values = property(lambda self: self._values)

    @property
    def dtype(self):
        return self._values.dtype

    @property
    def flat_values(self):
        rt = self._values
        while isinstance(rt, RaggedTensorValue):
            rt = rt.values
        return rt

    @property
    def nested_row_splits(self):
        rt, splits = self, []
        while isinstance(rt, RaggedTensorValue):
            splits.append(rt.row_splits)
            rt = rt.values
        return tuple(splits)

    @property
    def ragged_rank(self):
        inner = self._values.ragged_rank if isinstance(self._values, RaggedTensorValue) else 0
        return inner + 1

    @property
    def shape(self):
        return (self._row_splits.shape[0] - 1, None) + self._values.shape[1:]

    def to_list(self):
        """The nested Python list of the value's rows."""
        values = self._values.to_list() if isinstance(self._values, RaggedTensorValue) \
            else self._values.tolist()
        splits = self._row_splits.tolist()
        return [values[splits[i]:splits[i + 1]] for i in range(len(splits) - 1)]

    def __str__(self):
        return f"<tf.RaggedTensorValue {self.to_list()}>"

    def __repr__(self):
        return f"tf.RaggedTensorValue(values={self._values!r}, row_splits={self._row_splits!r})"


# -- the graph value --------------------------------------------------------------------------
def _splits_tensor(splits, name, dtype=None):
    splits = convert_to_tensor(splits, name=name, dtype=dtype,
                               preferred_dtype=None if dtype else _dtypes.int64)
    if splits.dtype.base_dtype not in _SPLIT_TYPES:
        raise ValueError(f"{name} must have dtype int32 or int64")
    return splits


def _values_tensor(values, name="values"):
    if isinstance(values, RaggedTensor):
        return values
    values = convert_to_tensor(values, name=name)
    values.shape.with_rank_at_least(1)
    return values


def _nrows(values, dtype):
    if isinstance(values, RaggedTensor):
        return values.nrows(out_type=dtype)
    return A.shape(values, out_type=dtype)[0]


def _with_checks(checks, tensor):
    with _graph.control_dependencies(checks):
        return A.identity(tensor)


class RaggedTensor(CompositeTensor):
    """Rows of different lengths; build one with the `from_*` factories."""

    def __init__(self, values, row_splits, internal=False):
        if not internal:
            raise ValueError("RaggedTensor constructor is private; please use one of the "
                             "factory methods instead (e.g., "
                             "RaggedTensor.from_row_lengths())")
        if isinstance(values, RaggedTensor) and \
                values.row_splits.dtype != row_splits.dtype:
            raise ValueError("dtype mismatch: row_splits and values.row_splits")
        self._values = values
        self._row_splits = row_splits

    # -- factories ----------------------------------------------------------------------
    @classmethod
    def from_row_splits(cls, values, row_splits, name=None, validate=True):
        """Row i is values[row_splits[i]:row_splits[i + 1]]."""
        with _graph.name_scope(name, "RaggedFromRowSplits", [values, row_splits]):
            values = _values_tensor(values)
            dtype = values.row_splits.dtype if isinstance(values, RaggedTensor) else None
            row_splits = _splits_tensor(row_splits, "row_splits", dtype)
            row_splits.shape.with_rank(1)
            if validate:
                msg = "Arguments to from_row_splits do not form a valid RaggedTensor"
                zero = convert_to_tensor(0, dtype=row_splits.dtype)
                checks = [check_ops.assert_equal(row_splits[0], zero, message=msg),
                          check_ops.assert_non_negative(row_splits[1:] - row_splits[:-1],
                                                        message=msg),
                          check_ops.assert_equal(row_splits[-1],
                                                 _nrows(values, row_splits.dtype),
                                                 message=msg)]
                row_splits = _with_checks(checks, row_splits)
            return cls(values, row_splits, internal=True)

    @classmethod
    def from_row_lengths(cls, values, row_lengths, name=None, validate=True):
        """Row i holds the next row_lengths[i] values."""
        with _graph.name_scope(name, "RaggedFromRowLengths", [values, row_lengths]):
            values = _values_tensor(values)
            dtype = values.row_splits.dtype if isinstance(values, RaggedTensor) else None
            row_lengths = _splits_tensor(row_lengths, "row_lengths", dtype)
            row_lengths.shape.with_rank(1)
            if validate:
                msg = "Arguments to from_row_lengths do not form a valid RaggedTensor"
                row_lengths = _with_checks(
                    [check_ops.assert_non_negative(row_lengths, message=msg)], row_lengths)
            splits = A.concat([GEN.zeros([1], row_lengths.dtype), R.cumsum(row_lengths)], 0)
            return cls.from_row_splits(values, splits, validate=validate)

    @classmethod
    def from_row_starts(cls, values, row_starts, name=None, validate=True):
        with _graph.name_scope(name, "RaggedFromRowStarts", [values, row_starts]):
            values = _values_tensor(values)
            row_starts = _splits_tensor(row_starts, "row_starts")
            splits = A.concat([row_starts, A.reshape(_nrows(values, row_starts.dtype), [1])],
                              0)
            return cls.from_row_splits(values, splits, validate=validate)

    @classmethod
    def from_row_limits(cls, values, row_limits, name=None, validate=True):
        with _graph.name_scope(name, "RaggedFromRowLimits", [values, row_limits]):
            row_limits = _splits_tensor(row_limits, "row_limits")
            splits = A.concat([GEN.zeros([1], row_limits.dtype), row_limits], 0)
            return cls.from_row_splits(values, splits, validate=validate)

    @classmethod
    def from_value_rowids(cls, values, value_rowids, nrows=None, name=None, validate=True):
        """Value j sits in row value_rowids[j] (sorted); `nrows` adds empty trailing
        rows (default: the last row id + 1)."""
        with _graph.name_scope(name, "RaggedFromValueRowIds", [values, value_rowids, nrows]):
            values = _values_tensor(values)
            value_rowids = _splits_tensor(value_rowids, "value_rowids")
            value_rowids.shape.with_rank(1)
            dtype = value_rowids.dtype
            if nrows is None:
                nrows = R.reduce_sum(value_rowids[-1:] + 1)  # 0 without values
            else:
                nrows = convert_to_tensor(nrows, dtype=dtype, name="nrows")
                nrows.shape.with_rank(0)
            if validate:
                msg = "Arguments to from_value_rowids do not form a valid RaggedTensor"
                checks = [check_ops.assert_non_negative(value_rowids, message=msg),
                          check_ops.assert_non_negative(value_rowids[1:] - value_rowids[:-1],
                                                        message=msg),
                          check_ops.assert_less(value_rowids, nrows, message=msg),
                          check_ops.assert_equal(A.size(value_rowids, out_type=dtype),
                                                 _nrows(values, dtype), message=msg)]
                value_rowids = _with_checks(checks, value_rowids)
            nrows32 = M.cast(nrows, _dtypes.int32)
            lengths = M.cast(bincount(M.cast(value_rowids, _dtypes.int32), minlength=nrows32,
                                      maxlength=nrows32), dtype)
            splits = A.concat([GEN.zeros([1], dtype), R.cumsum(lengths)], 0)
            static = static_value(nrows)
            if static is not None:
                splits.set_shape([int(static) + 1])
            return cls(values, splits, internal=True)

    @classmethod
    def from_nested_row_splits(cls, flat_values, nested_row_splits, name=None, validate=True):
        if isinstance(nested_row_splits, Tensor):
            raise TypeError("nested_row_splits must be a list of Tensors")
        with _graph.name_scope(name, "RaggedFromNestedRowSplits",
                               [flat_values] + list(nested_row_splits)):
            result = flat_values
            for splits in reversed(nested_row_splits):
                result = cls.from_row_splits(result, splits, validate=validate)
            return result

    @classmethod
    def from_nested_row_lengths(cls, flat_values, nested_row_lengths, name=None,
                                validate=True):
        if isinstance(nested_row_lengths, Tensor):
            raise TypeError("nested_row_lengths must be a list of Tensors")
        with _graph.name_scope(name, "RaggedFromNestedRowlengths",
                               [flat_values] + list(nested_row_lengths)):
            result = flat_values
            for lengths in reversed(nested_row_lengths):
                result = cls.from_row_lengths(result, lengths, validate=validate)
            return result

    @classmethod
    def from_nested_value_rowids(cls, flat_values, nested_value_rowids, nested_nrows=None,
                                 name=None, validate=True):
        if nested_nrows is None:
            nested_nrows = [None] * len(nested_value_rowids)
        if len(nested_nrows) != len(nested_value_rowids):
            raise ValueError("nested_nrows must have the same length as nested_value_rowids")
        with _graph.name_scope(name, "RaggedFromNestedValueRowIds",
                               [flat_values] + list(nested_value_rowids)):
            result = flat_values
            for rowids, nrows in reversed(list(zip(nested_value_rowids, nested_nrows))):
                result = cls.from_value_rowids(result, rowids, nrows, validate=validate)
            return result

    @classmethod
    def from_tensor(cls, tensor, lengths=None, padding=None, ragged_rank=1, name=None,
                    row_splits_dtype=_dtypes.int64):
        """A RaggedTensor of a dense tensor's rows: whole rows, the first `lengths[i]`
        items of each, or each row without its trailing `padding`."""
        row_splits_dtype = _dtypes.as_dtype(row_splits_dtype)
        if lengths is not None and padding is not None:
            raise ValueError("Specify lengths or padding, but not both")
        if not isinstance(ragged_rank, int) or ragged_rank <= 0:
            raise ValueError(f"ragged_rank must be greater than 0; got {ragged_rank}")
        with _graph.name_scope(name, "RaggedFromTensor", [tensor, lengths, padding]):
            tensor = convert_to_tensor(tensor, name="tensor")
            tensor.shape.with_rank_at_least(ragged_rank + 1)
            if ragged_rank > 1:
                inner = cls.from_tensor(
                    A.reshape(tensor, A.concat([[-1], A.shape(tensor)[2:]], 0)),
                    lengths, padding, ragged_rank - 1, row_splits_dtype=row_splits_dtype)
                ncols = M.cast(A.shape(tensor)[1], row_splits_dtype)
                nrows = M.cast(A.shape(tensor)[0], row_splits_dtype)
                return cls(inner, M.range(nrows + 1) * ncols, internal=True)
            shape = A.shape(tensor, out_type=row_splits_dtype)
            nrows, ncols = shape[0], shape[1]
            if padding is not None:
                padding = convert_to_tensor(padding, dtype=tensor.dtype, name="padding")
                is_pad = M.equal(tensor, padding)
                inner_axes = list(range(2, tensor.shape.ndims)) if tensor.shape.ndims \
                    else M.range(2, A.rank(tensor))
                if tensor.shape.ndims is None or tensor.shape.ndims > 2:
                    is_pad = R.reduce_all(is_pad, axis=inner_axes)
                keep = M.cast(M.logical_not(is_pad), row_splits_dtype)
                lengths = R.reduce_max(keep * A.expand_dims(M.range(1, ncols + 1), 0), axis=1)
            if lengths is not None:
                lengths = M.cast(convert_to_tensor(lengths, name="lengths"), row_splits_dtype)
                mask = sequence_mask(lengths, ncols)
                values = boolean_mask(tensor, mask)
                return cls.from_row_lengths(values, lengths, validate=False)
            values = A.reshape(tensor, A.concat([[-1], A.shape(tensor)[2:]], 0))
            static = tensor.shape
            if static.ndims is not None:
                n = None if static[0].value is None or static[1].value is None else \
                    static[0].value * static[1].value
                values.set_shape(TensorShape([n]).concatenate(static[2:]))
            splits = M.range(nrows + 1) * ncols
            if static.ndims is not None and static[0].value is not None:
                splits.set_shape([static[0].value + 1])
            return cls(values, splits, internal=True)

    @classmethod
    def from_sparse(cls, st_input, name=None, row_splits_dtype=_dtypes.int64):
        """The RaggedTensor of a right-ragged 2-D SparseTensor (each row's columns 0..n-1)."""
        if not isinstance(st_input, SparseTensor):
            raise TypeError(f"st_input must be a SparseTensor; got {st_input!r}")
        row_splits_dtype = _dtypes.as_dtype(row_splits_dtype)
        with _graph.name_scope(name, "RaggedFromSparse", [st_input]):
            static_rank = st_input.dense_shape.shape[0].value \
                if st_input.dense_shape.shape.ndims is not None else None
            static_cols = st_input.indices.shape[1].value \
                if st_input.indices.shape.ndims == 2 else None
            if static_rank != 2 and static_cols != 2:
                raise ValueError("rank(st_input) must be 2")
            segment_ids = _with_checks([_assert_right_ragged(st_input.indices)],
                                       M.cast(st_input.indices[:, 0], row_splits_dtype))
            nrows = M.cast(st_input.dense_shape[0], row_splits_dtype)
            return cls.from_value_rowids(st_input.values, segment_ids, nrows, validate=False)

    # -- properties -----------------------------------------------------------------------
    @property
    def dtype(self):
        return self._values.dtype

    @property
    def shape(self):
        nrows = self._row_splits.shape[0] - 1 if self._row_splits.shape.ndims == 1 \
            and self._row_splits.shape[0].value is not None else None
        values = self._values.shape
        inner = values[1:] if values.ndims is not None else unknown_shape()
        return TensorShape([nrows, None]).concatenate(inner)

    def get_shape(self):
        return self.shape

    @property
    def ragged_rank(self):
        inner = self._values.ragged_rank if isinstance(self._values, RaggedTensor) else 0
        return inner + 1

    values = property(lambda self: self._values)
    row_splits = property(lambda self: self._row_splits)

    @property
    def row_splits_dtype(self):
        return self._row_splits.dtype

    @property
    def flat_values(self):
        rt = self._values
        while isinstance(rt, RaggedTensor):
            rt = rt.values
        return rt

    @property
    def nested_row_splits(self):
        rt, splits = self, []
        while isinstance(rt, RaggedTensor):
            splits.append(rt.row_splits)
            rt = rt.values
        return tuple(splits)

    @property
    def graph(self):
        return self._row_splits.graph

    # -- partition views ---------------------------------------------------------------
    def value_rowids(self, name=None):
        """The row of each value (the segment ids of row_splits)."""
        with _graph.name_scope(name, "RaggedValueRowIds", [self]):
            return segment_ids_from_splits(self._row_splits)

    def nrows(self, out_type=None, name=None):
        with _graph.name_scope(name, "RaggedNRows", [self]):
            out_type = self._row_splits.dtype if out_type is None else out_type
            static = self._row_splits.shape[0].value \
                if self._row_splits.shape.ndims == 1 else None
            if static is not None:
                return convert_to_tensor(static - 1, dtype=out_type)
            return A.shape(self._row_splits, out_type=out_type)[0] - 1

    def row_starts(self, name=None):
        with _graph.name_scope(name, "RaggedRowStarts", [self]):
            return self._row_splits[:-1]

    def row_limits(self, name=None):
        with _graph.name_scope(name, "RaggedRowLimits", [self]):
            return self._row_splits[1:]

    def row_lengths(self, axis=1, name=None):
        if axis == 0:
            return self.nrows()
        if axis == 1:
            with _graph.name_scope(name, "RaggedRowLengths", [self]):
                return self._row_splits[1:] - self._row_splits[:-1]
        if isinstance(self._values, RaggedTensor):
            return self.with_values(self._values.row_lengths(axis - 1))
        shape = A.shape(self._values, out_type=self._row_splits.dtype)
        return self.with_values(GEN.ones(shape[:axis - 1], self._row_splits.dtype)
                                * shape[axis - 1])

    def nested_row_lengths(self, name=None):
        with _graph.name_scope(name, "RaggedNestedRowLengths", [self]):
            rt, out = self, []
            while isinstance(rt, RaggedTensor):
                out.append(rt.row_lengths())
                rt = rt.values
            return tuple(out)

    def bounding_shape(self, axis=None, name=None, out_type=None):
        """[nrows, the longest row at each ragged level, the inner dims]."""
        with _graph.name_scope(name, "RaggedBoundingBox", [self, axis]):
            out_type = self._row_splits.dtype if out_type is None else out_type
            dims = [self.nrows(out_type=out_type)]
            rt = self
            while isinstance(rt, RaggedTensor):
                lengths = M.cast(rt.row_lengths(), out_type)
                dims.append(R.reduce_max(A.concat([lengths, GEN.zeros([1], out_type)], 0)))
                rt = rt.values
            shape = A.concat([A.stack(dims), A.shape(rt, out_type=out_type)[1:]], 0)
            return shape if axis is None else G.gather(shape, axis)

    # -- transformations ---------------------------------------------------------------
    def with_values(self, new_values):
        new_values = _values_tensor(new_values)
        return RaggedTensor(new_values, self._row_splits, internal=True)

    def with_flat_values(self, new_values):
        if isinstance(self._values, RaggedTensor):
            return self.with_values(self._values.with_flat_values(new_values))
        return self.with_values(new_values)

    def with_row_splits_dtype(self, dtype):
        dtype = _dtypes.as_dtype(dtype)
        if dtype not in _SPLIT_TYPES:
            raise ValueError(f"dtype must be int32 or int64; got {dtype}")
        if self._row_splits.dtype == dtype:
            return self
        values = self._values.with_row_splits_dtype(dtype) \
            if isinstance(self._values, RaggedTensor) else self._values
        return RaggedTensor(values, M.cast(self._row_splits, dtype), internal=True)

    def to_tensor(self, default_value=None, name=None, shape=None):
        """The dense tensor, rows padded with `default_value` (zeros) to the longest row
        at each ragged level, or cropped/padded to `shape`."""
        with _graph.name_scope(name, "RaggedToTensor", [self, default_value, shape]):
            flat = self.flat_values
            if default_value is None:
                default_value = b"" if flat.dtype == _dtypes.string else 0
            default_value = convert_to_tensor(default_value, dtype=flat.dtype,
                                              name="default_value")
            if shape is None:
                shape_t = convert_to_tensor(-1, dtype=_dtypes.int64)
            else:
                dims = shape.as_list() if isinstance(shape, TensorShape) else shape
                if isinstance(dims, (list, tuple)):
                    dims = [-1 if d is None else int(d) for d in dims]
                shape_t = M.cast(convert_to_tensor(dims), _dtypes.int64)
            splits = list(self.nested_row_splits)
            return apply_op("RaggedTensorToTensor", shape=shape_t, values=flat,
                            default_value=default_value, row_partition_tensors=splits,
                            row_partition_types=["ROW_SPLITS"] * len(splits))

    def to_sparse(self, name=None):
        """The SparseTensor holding this value's entries (inner dims expanded)."""
        with _graph.name_scope(name, "RaggedToSparse", [self]):
            indices, values, shape = apply_op(
                "RaggedTensorToSparse", rt_nested_splits=list(self.nested_row_splits),
                rt_dense_values=self.flat_values)
            return SparseTensor(indices, values, shape)

    def to_list(self):
        raise ValueError("RaggedTensor.to_list() is only supported in eager mode; in graph "
                         "mode, evaluate the RaggedTensor first and then use "
                         "RaggedTensorValue.to_list().")

    # -- CompositeTensor ---------------------------------------------------------------
    def _components(self):
        return [self.flat_values] + list(self.nested_row_splits)

    def _from_components(self, components):
        return RaggedTensor.from_nested_row_splits(components[0], components[1:],
                                                   validate=False)

    def _value_from_components(self, values):
        value = values[0]
        for splits in reversed(values[1:]):
            value = RaggedTensorValue(value, np.asarray(splits))
        return value

    def _feed_components(self, value):
        if not isinstance(value, RaggedTensorValue):
            raise TypeError(f"A RaggedTensor is fed with a tf.ragged.RaggedTensorValue; got "
                            f"{type(value).__name__}")
        if value.ragged_rank != self.ragged_rank:
            raise ValueError(f"Cannot feed a RaggedTensorValue of ragged_rank "
                             f"{value.ragged_rank} to a RaggedTensor of ragged_rank "
                             f"{self.ragged_rank}")
        return list(zip(self._components(),
                        [value.flat_values] + list(value.nested_row_splits)))

    @property
    def _type_spec(self):
        return RaggedTensorSpec(self.shape, self.dtype, self.ragged_rank,
                                self._row_splits.dtype)

    def __str__(self):
        return f"tf.RaggedTensor(values={self._values}, row_splits={self._row_splits})"

    __repr__ = __str__


def _assert_right_ragged(indices):
    """TF's check that a 2-D SparseTensor's columns count 0, 1, ... within each row."""
    prefix, suffix = indices[:, :-1], indices[:, -1]
    changed = R.reduce_any(M.not_equal(prefix[1:], prefix[:-1]), axis=1)
    ok = G.where(changed, M.equal(suffix[1:], 0), M.equal(suffix[1:], suffix[:-1] + 1))
    right_ragged = M.logical_and(R.reduce_all(M.equal(suffix[:1], 0)), R.reduce_all(ok))
    return Assert(right_ragged, ["SparseTensor is not right-ragged", "SparseTensor.indices =",
                                 indices])


def segment_ids_from_splits(splits):
    """The row of each value, TF's recipe: range(nrows) repeated by the row lengths."""
    nrows = A.shape(splits, out_type=splits.dtype)[-1] - 1
    return repeat(M.range(nrows), splits[1:] - splits[:-1], axis=0)


# -- RaggedTensorToTensor, RaggedTensorToSparse (host) ----------------------------------------
def _coordinates(nested_splits, nvals):
    """Per flat value, its coordinates through the ragged dimensions [n, ragged_rank + 1],
    and the bounding sizes of those dimensions."""
    rows = np.arange(nvals, dtype=np.int64)
    cols = []
    bounds = []
    for splits in reversed(nested_splits):
        splits = np.asarray(splits, np.int64)
        if splits.ndim != 1 or splits.shape[0] == 0 or splits[0] != 0 or \
                np.any(np.diff(splits) < 0):
            raise kernel_error("Invalid row_splits: the splits must start at 0 and never "
                               "decrease")
        parent = np.searchsorted(splits, rows, side="right") - 1
        cols.insert(0, rows - splits[parent])
        lengths = np.diff(splits)
        bounds.insert(0, int(lengths.max()) if lengths.size else 0)
        rows = parent
        nrows = splits.shape[0] - 1
    coords = np.stack([rows] + cols, axis=1) if nvals else np.zeros([0, len(cols) + 1],
                                                                    np.int64)
    return coords, [nrows] + bounds


def _check_last_split(nested_splits, values):
    if int(nested_splits[-1][-1]) != values.shape[0]:
        raise kernel_error(f"Final value of ragged splits must match the length the "
                           f"corresponding ragged values: {int(nested_splits[-1][-1])} vs "
                           f"{values.shape[0]}")


def _to_tensor_kernel(shape, values, default_value, *partitions, row_partition_types):
    for kind in row_partition_types:
        kind = kind.decode() if isinstance(kind, bytes) else kind
        if kind != "ROW_SPLITS":
            raise kernel_error(f"Unsupported partition type {kind}: only ROW_SPLITS")
    _check_last_split(partitions, values)
    coords, bounds = _coordinates(partitions, values.shape[0])
    ragged = len(bounds)
    full = bounds + list(values.shape[1:])
    if shape.ndim == 1:
        if shape.shape[0] != len(full):
            raise kernel_error(f"shape must have rank {len(full)}, got {shape.shape[0]}")
        full = [f if int(s) < 0 else int(s) for s, f in zip(shape.tolist(), full)]
        if list(full[ragged:]) != list(values.shape[1:]):
            raise kernel_error("The inner dimensions of shape must match the values' inner "
                               "dimensions")
    try:
        out = np.broadcast_to(default_value, full[ragged:]).astype(values.dtype)
    except ValueError:
        raise kernel_error(f"default_value {list(default_value.shape)} cannot broadcast to "
                           f"the inner shape {full[ragged:]}") from None
    out = np.broadcast_to(out, full).copy()
    keep = (coords < np.asarray(full[:ragged])).all(axis=1) if len(coords) else \
        np.zeros(0, bool)
    out[tuple(coords[keep].T)] = values[keep]
    return out


def _to_tensor_shape(op):
    n = op.get_attr("num_row_partition_tensors")
    values = op.inputs[1].shape
    inner = values[1:] if values.ndims is not None else None
    given = static_shape_from_tensor(op.inputs[0]) if op.inputs[0].shape.ndims == 1 \
        else unknown_shape()
    if inner is None:
        return given
    out = TensorShape([None] * (n + 1)).concatenate(inner)
    if given.ndims is not None:
        if given.ndims != out.ndims:
            raise ValueError(f"shape must have rank {out.ndims}, got {given.ndims}")
        out = out.merge_with(given)
    splits = op.inputs[3].shape
    if out[0].value is None and splits.ndims == 1 and splits[0].value is not None:
        out = TensorShape([splits[0].value - 1]).concatenate(out[1:])
    return out


def _to_tensor_grad(op, grad):
    # Each flat value's gradient is the output gradient at its position (zero where the
    # output shape cropped it); the default value gets the rest.
    values, default = op.inputs[1], op.inputs[2]
    splits = list(op.inputs[3:])
    positions = M.range(A.shape(values, out_type=splits[0].dtype)[0], dtype=splits[0].dtype)
    coords, _, _ = apply_op("RaggedTensorToSparse", rt_nested_splits=splits,
                            rt_dense_values=positions)
    limits = M.cast(A.shape(grad), _dtypes.int64)[:len(splits) + 1]
    inside = R.reduce_all(M.less(coords, limits), axis=1)
    safe = G.where(A.tile(A.expand_dims(inside, 1), [1, len(splits) + 1]), coords,
                   GEN.zeros_like(coords))
    picked = G.gather_nd(grad, safe)
    mask = A.reshape(M.cast(inside, grad.dtype),
                     A.concat([[-1], GEN.ones_like(A.shape(picked))[1:]], 0))
    values_grad = picked * mask
    outer = list(range(len(splits) + 1))
    default_grad = R.reduce_sum(grad, axis=outer) - R.reduce_sum(values_grad, axis=0)
    if default.shape.ndims == 0:
        default_grad = R.reduce_sum(default_grad)
    return [None, values_grad, default_grad] + [None] * len(splits)


register(OpDef(
    "RaggedTensorToTensor",
    inputs=("shape: Tshape", "values: T", "default_value: T",
            "row_partition_tensors: num_row_partition_tensors * Tindex"),
    outputs=("result: T",),
    attrs={"T": _dtypes.ALL, "Tindex": _SPLIT_TYPES, "Tshape": _SPLIT_TYPES,
           "row_partition_types": REQUIRED},
    shape=_to_tensor_shape, host=_to_tensor_kernel, grad=_to_tensor_grad))


def _to_sparse_kernel(*args, RAGGED_RANK):  # noqa: N803 - TF's attr name
    splits, values = args[:RAGGED_RANK], args[RAGGED_RANK]
    _check_last_split(splits, values)
    coords, bounds = _coordinates(splits, values.shape[0])
    inner = list(values.shape[1:])
    if inner:
        inner_idx = np.stack(np.unravel_index(np.arange(int(np.prod(inner))), inner), axis=1)
        reps = inner_idx.shape[0]
        coords = np.concatenate([np.repeat(coords, reps, axis=0),
                                 np.tile(inner_idx, (coords.shape[0], 1))], axis=1)
    return (coords.astype(np.int64), values.reshape(-1),
            np.asarray(bounds + inner, np.int64))


def _to_sparse_shape(op):
    n = op.get_attr("RAGGED_RANK")
    values = op.inputs[n].shape
    rank = None if values.ndims is None else n + values.ndims
    return [TensorShape([None, rank]), TensorShape([None]), TensorShape([rank])]


def _to_sparse_grad(op, unused_indices_grad, values_grad, unused_shape_grad):
    n = op.get_attr("RAGGED_RANK")
    flat = A.reshape(values_grad, A.shape(op.inputs[n]))
    return [None] * n + [flat]


register(OpDef(
    "RaggedTensorToSparse",
    inputs=("rt_nested_splits: RAGGED_RANK * Tsplits", "rt_dense_values: T"),
    outputs=("sparse_indices: int64", "sparse_values: T", "sparse_dense_shape: int64"),
    attrs={"T": _dtypes.ALL, "Tsplits": _SPLIT_TYPES},
    type_defaults={"Tsplits": _dtypes.int64}, shape=_to_sparse_shape,
    host=_to_sparse_kernel, grad=_to_sparse_grad))


# -- RaggedTensorSpec -------------------------------------------------------------------------
class RaggedTensorSpec(TypeSpec):
    """`tf.RaggedTensorSpec(shape=None, dtype=tf.float32, ragged_rank=None,
    row_splits_dtype=tf.int64)`: the type of a RaggedTensor."""

    __slots__ = ("_shape", "_dtype", "_ragged_rank", "_row_splits_dtype")

    def __init__(self, shape=None, dtype=_dtypes.float32, ragged_rank=None,
                 row_splits_dtype=_dtypes.int64, flat_values_spec=None):
        self._shape = tensor_shape.as_shape(shape)
        self._dtype = _dtypes.as_dtype(dtype) if flat_values_spec is None \
            else flat_values_spec.dtype
        self._row_splits_dtype = _dtypes.as_dtype(row_splits_dtype)
        rank = self._shape.ndims
        if ragged_rank is None:
            if rank is None:
                raise ValueError("Must specify ragged_rank or a shape with a known rank.")
            ragged_rank = rank - 1
        if not isinstance(ragged_rank, int):
            raise TypeError(f"ragged_rank must be an int; got {ragged_rank!r}")
        if rank is not None and (ragged_rank >= rank or ragged_rank < 0):
            raise ValueError(f"ragged_rank must be non-negative and less than the shape's "
                             f"rank; got ragged_rank={ragged_rank}, rank={rank}")
        self._ragged_rank = ragged_rank

    shape = property(lambda self: self._shape)
    dtype = property(lambda self: self._dtype)
    ragged_rank = property(lambda self: self._ragged_rank)
    row_splits_dtype = property(lambda self: self._row_splits_dtype)

    @property
    def value_type(self):
        return RaggedTensor if self._ragged_rank > 0 else Tensor

    @classmethod
    def from_value(cls, value):
        return cls(value.shape, value.dtype, value.ragged_rank, value.row_splits.dtype)

    def is_compatible_with(self, spec_or_value) -> bool:
        other = spec_or_value
        if isinstance(other, (RaggedTensor, RaggedTensorValue)):
            other = RaggedTensorSpec(TensorShape(other.shape), other.dtype, other.ragged_rank,
                                     other.row_splits.dtype)
        if not isinstance(other, RaggedTensorSpec):
            return False
        return (self._dtype.is_compatible_with(other.dtype) and
                self._shape.is_compatible_with(other.shape) and
                self._ragged_rank == other.ragged_rank and
                self._row_splits_dtype == other.row_splits_dtype)

    def most_specific_compatible_type(self, other):
        if type(other) is not RaggedTensorSpec or self._dtype != other.dtype or \
                self._ragged_rank != other.ragged_rank or \
                self._row_splits_dtype != other.row_splits_dtype:
            raise ValueError(f"No TypeSpec is compatible with both {self} and {other}")
        return RaggedTensorSpec(self._shape.most_specific_compatible_shape(other.shape),
                                self._dtype, self._ragged_rank, self._row_splits_dtype)

    def _key(self):
        return (self._dtype, self._shape.as_tuple_or_none(), self._ragged_rank,
                self._row_splits_dtype)

    @property
    def _component_specs(self):
        # TF's: the flat values [None, inner dims...], then each level's row splits (the
        # outermost [nrows + 1] when nrows is known).
        if self._ragged_rank == 0:
            return [TensorSpec(self._shape, self._dtype)]
        inner = self._shape[self._ragged_rank + 1:] if self._shape.ndims is not None \
            else unknown_shape()
        outer = self._shape[0].value if self._shape.ndims is not None else None
        return ([TensorSpec(TensorShape([None]).concatenate(inner), self._dtype),
                 TensorSpec([None if outer is None else outer + 1], self._row_splits_dtype)]
                + [TensorSpec([None], self._row_splits_dtype)
                   for _ in range(self._ragged_rank - 1)])

    def _from_components(self, components):
        components = list(components)
        if self._ragged_rank == 0:
            return components[0]
        if all(isinstance(c, np.ndarray) for c in components):
            value = components[0]
            for splits in reversed(components[1:]):
                value = RaggedTensorValue(value, splits)
            return value
        if all(isinstance(c, TypeSpec) for c in components):
            return self
        value = convert_to_tensor(components[0])
        for splits in reversed(components[1:]):
            value = RaggedTensor(value, convert_to_tensor(splits), internal=True)
        return value

    def __repr__(self):
        dims = self._shape.as_list() if self._shape.ndims is not None else None
        return (f"RaggedTensorSpec(TensorShape({dims}), {self._dtype!r}, {self._ragged_rank}, "
                f"{self._row_splits_dtype!r})")
