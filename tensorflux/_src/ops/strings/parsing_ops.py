"""Parsing ops: `tf.train.Example` records into tensors, and raw bytes into numbers.

`tf.parse_example` / `tf.parse_single_example` take serialized Examples (string
tensors) and a dict of feature configs, and build TF1.15's graph: a `ParseExample`
(batch) or `ParseSingleExample` (one record) op whose dense defaults are graph inputs.
Strings never enter XLA, so these are `host` records: NumPy kernels that decode the
protobuf wire format (io/example_proto.py) after the compiled part of a run.

What each config gives, as in TF1.15 (B: batch size, N: values found, L: longest list):

    FixedLenFeature(shape, dtype)        dense [B] + shape; a missing feature takes
                                         default_value, or fails when there is none
    VarLenFeature(dtype)                 SparseTensor, indices [N, 2] as [batch, index],
                                         dense_shape [B, L]; one record: [N, 1] and [L]
    FixedLenSequenceFeature(shape, dtype, allow_missing=True)
                                         dense [B, None] + shape, padded with
                                         default_value (0 / ""); one record: [None] + shape
    RaggedFeature(dtype, value_key, partitions)
                                         RaggedTensor [B, (rows)...]; one record: the
                                         values split by the partitions (ragged_feature.py)

Kernels raise the InvalidArgumentError texts of TF's example_proto_fast_parsing.cc.
Also here: `tf.decode_raw` (DecodeRaw) and `tf.io.parse_tensor` / `serialize_tensor`.
None of these ops is differentiable.
"""

from __future__ import annotations

import collections
import math
import re

import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import errors
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework import tensor_shape
from tensorflux._src.framework.operation import Tensor
from tensorflux._src.framework.sparse_tensor import SparseTensor
from tensorflux._src.framework.tensor_conversion import convert_to_tensor, make_ndarray
from tensorflux._src.framework.tensor_shape import TensorShape, unknown_shape
from tensorflux._src.framework import protos, tensor_util
from tensorflux._src.io import example_proto
from tensorflux._src.framework.protos import DecodeError
from tensorflux._src.ops.array import array_ops, slicing_ops
from tensorflux._src.ops.constant import constant
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.op_helpers import dims_str, kernel_error, with_rank
from tensorflux._src.ops.registry import OpDef, REQUIRED, register
from tensorflux._src.ops.strings.ragged_feature import (
    RaggedFeature, check_disjoint, construct_ragged_features, ragged_keys,
)
from tensorflux._src.ops.strings.sparse_feature import (
    SparseFeature, construct_sparse_features, index_keys,
)

__all__ = ["FixedLenFeature", "FixedLenSequenceFeature", "SparseFeature", "VarLenFeature",
           "decode_raw",
           "parse_example", "parse_single_example", "parse_tensor", "serialize_tensor"]

# The dtypes an Example holds: BytesList, FloatList, Int64List.
_FEATURE_DTYPES = (_dtypes.float32, _dtypes.int64, _dtypes.string)
# TF's words for a list's values in shape errors.
_VALUES_WORD = {"float": "float", "int64": "int64", "string": "bytes"}


# -- feature configs (TF's namedtuples) ------------------------------------------------------
class VarLenFeature(collections.namedtuple("VarLenFeature", ["dtype"])):
    """Configuration for parsing a variable-length feature into a SparseTensor."""


class FixedLenFeature(collections.namedtuple("FixedLenFeature",
                                             ["shape", "dtype", "default_value"])):
    """Configuration for parsing a fixed-length feature into a dense Tensor of `shape`;
    without `default_value`, a record missing the feature fails the parse."""

    def __new__(cls, shape, dtype, default_value=None):
        return super().__new__(cls, shape, dtype, default_value)


class FixedLenSequenceFeature(collections.namedtuple(
        "FixedLenSequenceFeature", ["shape", "dtype", "allow_missing", "default_value"])):
    """Configuration for parsing a variable number of `shape` blocks into a dense Tensor
    of shape [None] + shape; `default_value` (a scalar) pads a batch to its longest."""

    def __new__(cls, shape, dtype, allow_missing=False, default_value=None):
        return super().__new__(cls, shape, dtype, allow_missing, default_value)


_RawParams = collections.namedtuple("_RawParams", ["sparse_keys", "sparse_types", "dense_keys",
                                                   "dense_types", "dense_defaults",
                                                   "dense_shapes"])


def _feature_dtype(key, dtype):
    if not dtype:
        raise ValueError(f"Missing type for feature {key}.")
    dtype = _dtypes.as_dtype(dtype).base_dtype
    if dtype not in _FEATURE_DTYPES:
        raise TypeError(f"Feature {key!r} has dtype {dtype.name}, but an Example holds only "
                        f"float32 (FloatList), int64 (Int64List) and string (BytesList).")
    return dtype


def _features_to_raw_params(features) -> _RawParams:
    """Splits the configs into the op's sparse and dense lists, keys sorted as in TF.
    FixedLenSequenceFeature shapes gain their leading None (a variable number of rows)."""
    sparse_keys, sparse_types, dense_keys, dense_types, dense_shapes = [], [], [], [], []
    dense_defaults = {}
    for key in sorted(features):
        feature = features[key]
        if isinstance(feature, VarLenFeature):
            _add_sparse(sparse_keys, sparse_types, key, _feature_dtype(key, feature.dtype))
        elif isinstance(feature, SparseFeature):
            if not feature.index_key:
                raise ValueError(f"Missing index_key for SparseFeature {feature}.")
            if not feature.value_key:
                raise ValueError(f"Missing value_key for SparseFeature {feature}.")
            dtype = _feature_dtype(key, feature.dtype)
            for index_key in sorted(index_keys(feature)):
                _add_sparse(sparse_keys, sparse_types, index_key, _dtypes.int64)
            _add_sparse(sparse_keys, sparse_types, feature.value_key, dtype)
        elif isinstance(feature, FixedLenFeature):
            dtype = _feature_dtype(key, feature.dtype)
            if feature.shape is None:
                raise ValueError(f"Missing shape for feature {key}.")
            shape = tensor_shape.as_shape(feature.shape)
            if shape.ndims and shape.dims[0].value is None:
                raise ValueError(f"First dimension of shape for feature {key} unknown. "
                                 f"Consider using FixedLenSequenceFeature.")
            if not shape.is_fully_defined():
                raise ValueError(f"All dimensions of shape for feature {key} need to be "
                                 f"known but received {feature.shape}.")
            dense_keys.append(key)
            dense_types.append(dtype)
            dense_shapes.append(shape)
            if feature.default_value is not None:
                dense_defaults[key] = feature.default_value
        elif isinstance(feature, FixedLenSequenceFeature):
            dtype = _feature_dtype(key, feature.dtype)
            if feature.shape is None:
                raise ValueError(f"Missing shape for feature {key}.")
            if not feature.allow_missing:
                raise ValueError("Unsupported: FixedLenSequenceFeature requires allow_missing "
                                 "to be True.")
            inner = tensor_shape.as_shape(feature.shape)
            if not inner.is_fully_defined():
                raise ValueError(f"All dimensions of shape for feature {key} need to be "
                                 f"known but received {feature.shape}.")
            dense_keys.append(key)
            dense_types.append(dtype)
            dense_shapes.append(TensorShape([None]).concatenate(inner))
            if feature.default_value is not None:
                dense_defaults[key] = feature.default_value
        elif not isinstance(feature, RaggedFeature):
            raise ValueError(f"Invalid feature {key}:{feature}.")
    # RaggedFeature keys are parsed as VarLenFeatures (ragged_feature.py builds the rows).
    ragged = ragged_keys(features)
    check_disjoint(dense_keys, sparse_keys, ragged)
    sparse_keys += [key for key, _ in ragged]
    sparse_types += [dtype for _, dtype in ragged]
    return _RawParams(sparse_keys, sparse_types, dense_keys, dense_types, dense_defaults,
                      dense_shapes)


def _add_sparse(keys, types, key, dtype):
    """A sparse key, once; a key a SparseFeature shares must agree on its type."""
    if key in keys:
        known = types[keys.index(key)]
        if known != dtype:
            raise ValueError(f"Conflicting type {known} vs {dtype} for feature {key}.")
        return
    keys.append(key)
    types.append(dtype)


def _is_varlen(shape: TensorShape) -> bool:
    return bool(shape.ndims) and shape.dims[0].value is None


def _safe_name(key):
    return re.sub(r"[^A-Za-z0-9_.\-/]", "_", key)


def _dense_default_tensors(params: _RawParams):
    """One default per dense key, as TF builds them: an empty tensor (required feature),
    the default in the feature's shape, or a scalar padding value (sequence features).

    TF reshapes Python defaults with a Reshape op; here their values are known now, and
    Reshape is a compiled op without strings, so they are reshaped in NumPy instead."""
    tensors = []
    for key, dtype, shape in zip(params.dense_keys, params.dense_types, params.dense_shapes):
        default = params.dense_defaults.get(key)
        varlen = _is_varlen(shape)
        if default is None:
            value = ("" if dtype == _dtypes.string else 0) if varlen else []
            default = constant(value, dtype=dtype)
        elif isinstance(default, Tensor):
            if varlen and dtype != _dtypes.string:
                default = array_ops.reshape(default, [])
        else:
            dims = [] if varlen else shape.as_list()
            value = make_ndarray(default, dtype=dtype)
            if value.size != int(np.prod(dims)):
                what = ("a FixedLenSequenceFeature's default_value pads records and must be "
                        "a scalar" if varlen else f"its default_value must have shape {dims}")
                raise ValueError(f"Cannot reshape a tensor with {value.size} elements to shape "
                                 f"{dims} ({int(np.prod(dims))} elements) for feature "
                                 f"'{key}': {what}.")
            prefix = "padding_" if varlen else "key_"
            default = constant(value.reshape(dims), dtype=dtype, name=prefix + _safe_name(key))
        tensors.append(default)
    return tensors


# -- the kernels' shared rules -----------------------------------------------------------------
class _Record:
    """Where a record sits, for TF's error texts: a batch names the record and its index;
    a single record (ParseSingleExample) names only the key."""

    def __init__(self, name=None, index=None):
        self.name, self.index = name, index

    @property
    def batched(self):
        return self.index is not None

    def key_error(self, key, text):
        if self.batched:
            return kernel_error(f"Name: {self.name}, Key: {key}, Index: {self.index}.  {text}")
        return kernel_error(f"Key: {key}.  {text}")

    def missing(self, key, dtype):
        where = f"Name: {self.name}, " if self.batched else ""
        return kernel_error(f"{where}Feature: {key} (data type: {dtype._tf_name}) is required "
                            f"but could not be found.")


def _shape_text(shape):
    """TF's TensorShape::DebugString: [2,3], [] and [?,3] for an unknown dimension."""
    return "[" + ",".join("?" if d is None else str(d) for d in shape) + "]"


def _read_record(serialized, keys, record: _Record):
    """{key: (kind, values)} for the wanted keys present in one serialized Example."""
    try:
        feature_map = example_proto.read_feature_map(_as_bytes(serialized))
    except DecodeError:
        raise kernel_error(f"Could not parse example input, value: '{_printable(serialized)}'") \
            from None
    found = {}
    for key in keys:
        if key in feature_map:
            try:
                found[key] = example_proto.read_feature(feature_map[key])
            except DecodeError:
                raise record.key_error(key, "Can't parse serialized Example.") from None
    return found


def _values_array(kind, values):
    if kind == "string":
        out = np.empty(len(values), object)
        out[:] = values
        return out
    return values


def _dense_value(key, dtype, shape, default, feature, record: _Record):
    """One record's value of a dense key: (rows, ...) for FixedLenSequenceFeature, else
    exactly `shape` (the default when the feature is missing)."""
    kind, values = feature if feature is not None else (None, ())
    dims = [d.value for d in shape.dims]
    if kind is None:  # absent, or a Feature with no list set: TF treats both as missing
        if _is_varlen(shape):
            return np.zeros([0] + dims[1:], dtype.as_numpy_dtype)
        if default.size == 0:
            raise record.missing(key, dtype)
        return default
    if kind != dtype._tf_name:
        raise record.key_error(key, f"Data types don't match. Data type: {kind} but expected "
                                    f"type: {dtype._tf_name}")
    array, count, word = _values_array(kind, values), len(values), _VALUES_WORD[kind]
    if not _is_varlen(shape):
        if count != math.prod(dims):
            raise record.key_error(key, f"{_cant_parse(record)}Number of {word} values != "
                                        f"expected.  Values size: {count} but output shape: "
                                        f"{_shape_text(dims)}")
        return array.reshape(dims)
    stride = math.prod(dims[1:])
    if (count % stride if stride else count):
        raise record.key_error(key, f"{_cant_parse(record)}Number of {word} values is not a "
                                    f"multiple of stride length. Saw {count} values but output "
                                    f"shape is: {_shape_text(dims)}")
    return array.reshape([count // stride if stride else 0] + dims[1:])


def _cant_parse(record):
    # TF's single-record kernel says only this; the details after it are ours.
    return "" if record.batched else "Can't parse serialized Example. "


def _sparse_value(key, dtype, feature, record: _Record):
    """One record's values of a VarLenFeature (empty when the feature is missing)."""
    kind, values = feature if feature is not None else (None, ())
    if kind is None:
        return np.zeros(0, dtype.as_numpy_dtype)
    if kind != dtype._tf_name:
        raise record.key_error(key, f"Data types don't match. Expected type: "
                                    f"{dtype._tf_name}, Actual type: {kind}")
    return _values_array(kind, values)


def _check_defaults(defaults, dense_shapes):
    """TF's checks of dense_defaults against dense_shapes (the wrappers reshape Python
    defaults; a Tensor default is used as given)."""
    for d, (default, shape) in enumerate(zip(defaults, dense_shapes)):
        dims = [dim.value for dim in shape.dims]
        if _is_varlen(shape):
            if default.size != 1:
                raise kernel_error(f"dense_shape[{d}] is a variable length shape: "
                                   f"{_shape_text(dims)}, therefore def_value[{d}] must "
                                   f"contain a single element (the padding element).  But "
                                   f"its shape is: {dims_str(default.shape)}")
        elif default.size and list(default.shape) != dims:
            raise kernel_error(f"def_value[{d}].shape() == {dims_str(default.shape)} != "
                               f"dense_shapes_[{d}] == {_shape_text(dims)}")


def _as_bytes(value):
    return value.encode("utf-8") if isinstance(value, str) else bytes(value)


def _printable(value, limit=100):
    text = _as_bytes(value)[:limit].decode("latin-1")
    return text.encode("unicode_escape").decode("ascii")


def _stack(dtype, rows, inner):
    out = np.empty((len(rows),) + tuple(inner), dtype.as_numpy_dtype)
    for i, row in enumerate(rows):
        out[i] = row
    return out


# -- ParseExample ------------------------------------------------------------------------------
def _parse_example_kernel(serialized, names, *keys_and_defaults, Nsparse, Ndense,  # noqa: N803
                          sparse_types, dense_shapes):
    sparse_keys = [_as_bytes(k[()]).decode() for k in keys_and_defaults[:Nsparse]]
    dense_keys = [_as_bytes(k[()]).decode() for k in keys_and_defaults[Nsparse:Nsparse + Ndense]]
    defaults = keys_and_defaults[Nsparse + Ndense:]
    dense_types = [_dtypes.as_dtype(d.dtype) if d.dtype != object else _dtypes.string
                   for d in defaults]
    if serialized.ndim != 1:
        raise kernel_error(f"Expected serialized to be a vector, got shape: "
                           f"{dims_str(serialized.shape)}")
    if names.size and names.shape != serialized.shape:
        raise kernel_error(f"Expected len(names) == len(serialized), but got: {names.size} vs. "
                           f"{serialized.size}")
    _check_defaults(defaults, dense_shapes)
    dense_rows = [[] for _ in dense_keys]
    sparse_rows = [[] for _ in sparse_keys]
    for i, record_bytes in enumerate(serialized):
        record = _Record(_as_bytes(names[i]).decode("utf-8", "replace") if names.size
                         else "<unknown>", i)
        found = _read_record(record_bytes, dense_keys + sparse_keys, record)
        for d, key in enumerate(dense_keys):
            dense_rows[d].append(_dense_value(key, dense_types[d], dense_shapes[d], defaults[d],
                                              found.get(key), record))
        for s, key in enumerate(sparse_keys):
            sparse_rows[s].append(_sparse_value(key, sparse_types[s], found.get(key), record))
    indices, values, shapes = [], [], []
    for dtype, rows in zip(sparse_types, sparse_rows):
        lengths = [len(r) for r in rows]
        # (N, 2): [batch, position in that record's list], in record order.
        indices.append(np.array([(b, j) for b, n in enumerate(lengths) for j in range(n)],
                                np.int64).reshape(-1, 2))
        values.append(np.concatenate(rows) if rows else np.zeros(0, dtype.as_numpy_dtype))
        shapes.append(np.array([len(rows), max(lengths, default=0)], np.int64))
    dense = []
    for dtype, shape, default, rows in zip(dense_types, dense_shapes, defaults, dense_rows):
        inner = [dim.value for dim in shape.dims]
        if _is_varlen(shape):
            # (B, longest, ...): shorter records are padded with the scalar default.
            longest = max((len(r) for r in rows), default=0)
            out = np.full((len(rows), longest) + tuple(inner[1:]), default.reshape(()),
                          dtype.as_numpy_dtype)
            for b, row in enumerate(rows):
                out[b, :len(row)] = row
            dense.append(out)
        else:
            dense.append(_stack(dtype, rows, inner))
    return indices + values + shapes + dense


def _parse_example_shape(op):
    n_sparse = op.get_attr("Nsparse")
    batch = with_rank(op.inputs[0].shape, 1)[0]
    with_rank(op.inputs[1].shape, 1)
    # [B] + shape; a FixedLenSequenceFeature's shape starts with None (rows vary).
    dense = [TensorShape([batch]).concatenate(s) for s in op.get_attr("dense_shapes")]
    return ([TensorShape([None, 2])] * n_sparse + [TensorShape([None])] * n_sparse
            + [TensorShape([2])] * n_sparse + dense)


register(OpDef(
    "ParseExample",
    inputs=("serialized: string", "names: string", "sparse_keys: Nsparse * string",
            "dense_keys: Ndense * string", "dense_defaults: list(Tdense)"),
    outputs=("sparse_indices: Nsparse * int64", "sparse_values: list(sparse_types)",
             "sparse_shapes: Nsparse * int64", "dense_values: list(Tdense)"),
    attrs={"sparse_types": REQUIRED, "dense_shapes": REQUIRED},
    shape=_parse_example_shape, host=_parse_example_kernel, not_differentiable=True,
))


# -- ParseExampleV2 (what TF 2.x's graph code writes for tf.io.parse_example) ---------------
def _parse_example_v2_kernel(serialized, names, sparse_keys, dense_keys, ragged_keys,
                             *defaults, num_sparse, sparse_types, dense_shapes):
    if ragged_keys.size:
        raise errors.UnimplementedError(
            None, None, f"ParseExampleV2 with ragged_keys {ragged_keys.tolist()} is not "
                        f"supported; parse them as sparse (VarLenFeature) features instead")
    if sparse_keys.size != num_sparse:
        raise kernel_error(f"Expected len(sparse_keys) == num_sparse, but got: "
                           f"{sparse_keys.size} vs. {num_sparse}")
    if dense_keys.size != len(defaults):
        raise kernel_error(f"Expected len(dense_keys) == len(dense_defaults), but got: "
                           f"{dense_keys.size} vs. {len(defaults)}")
    single = serialized.ndim == 0  # a scalar: outputs without the batch dimension
    if serialized.ndim > 1:
        raise kernel_error(f"Expected serialized to be a scalar or vector, got shape: "
                           f"{dims_str(serialized.shape)}")
    keys = [np.asarray(k, dtype=object) for k in list(sparse_keys) + list(dense_keys)]
    outs = _parse_example_kernel(serialized.reshape(-1), names.reshape(-1), *keys, *defaults,
                                 Nsparse=num_sparse, Ndense=len(defaults),
                                 sparse_types=sparse_types, dense_shapes=dense_shapes)
    if single:
        n = num_sparse
        outs = ([ix[:, 1:] for ix in outs[:n]] + outs[n:2 * n]
                + [shape[1:] for shape in outs[2 * n:3 * n]] + [d[0] for d in outs[3 * n:]])
    return outs


def _parse_example_v2_shape(op):
    n_sparse = op.get_attr("num_sparse")
    batch_shape = op.inputs[0].shape
    if batch_shape.ndims is not None and batch_shape.ndims > 1:
        raise ValueError(f"Shape must be at most rank 1 but is rank {batch_shape.ndims} for "
                         f"'{{node ParseExampleV2}}'")
    rank = batch_shape.ndims  # 0 or 1 (None: unknown)
    dense = [batch_shape.concatenate(s) for s in op.get_attr("dense_shapes")]
    index_width = None if rank is None else rank + 1
    return ([TensorShape([None, index_width])] * n_sparse + [TensorShape([None])] * n_sparse
            + [TensorShape([index_width])] * n_sparse + dense)


register(OpDef(
    "ParseExampleV2",
    inputs=("serialized: string", "names: string", "sparse_keys: string",
            "dense_keys: string", "ragged_keys: string", "dense_defaults: list(Tdense)"),
    outputs=("sparse_indices: num_sparse * int64", "sparse_values: list(sparse_types)",
             "sparse_shapes: num_sparse * int64", "dense_values: list(Tdense)",
             "ragged_values: list(ragged_value_types)",
             "ragged_row_splits: list(ragged_split_types)"),
    attrs={"num_sparse": REQUIRED, "sparse_types": REQUIRED, "dense_shapes": REQUIRED,
           "ragged_value_types": (), "ragged_split_types": ()},
    shape=_parse_example_v2_shape, host=_parse_example_v2_kernel, not_differentiable=True,
))


# -- ParseSingleExample ------------------------------------------------------------------------
def _parse_single_example_kernel(serialized, *defaults, sparse_keys, dense_keys, sparse_types,
                                 dense_shapes):
    if serialized.ndim != 0:
        raise kernel_error(f"Expected serialized to be a scalar, got shape: "
                           f"{dims_str(serialized.shape)}")
    _check_defaults(defaults, dense_shapes)
    record = _Record()
    found = _read_record(serialized[()], list(dense_keys) + list(sparse_keys), record)
    indices, values, shapes = [], [], []
    for key, dtype in zip(sparse_keys, sparse_types):
        row = _sparse_value(key, dtype, found.get(key), record)
        indices.append(np.arange(len(row), dtype=np.int64).reshape(-1, 1))
        values.append(row)
        shapes.append(np.array([len(row)], np.int64))
    dense = []
    for key, shape, default in zip(dense_keys, dense_shapes, defaults):
        dtype = _dtypes.as_dtype(default.dtype) if default.dtype != object else _dtypes.string
        dense.append(_dense_value(key, dtype, shape, default, found.get(key), record))
    return indices + values + shapes + dense


def _parse_single_example_shape(op):
    n_sparse = op.get_attr("num_sparse")
    with_rank(op.inputs[0].shape, 0)
    dense = list(op.get_attr("dense_shapes"))
    return ([TensorShape([None, 1])] * n_sparse + [TensorShape([None])] * n_sparse
            + [TensorShape([1])] * n_sparse + dense)


register(OpDef(
    "ParseSingleExample",
    inputs=("serialized: string", "dense_defaults: list(Tdense)"),
    outputs=("sparse_indices: num_sparse * int64", "sparse_values: list(sparse_types)",
             "sparse_shapes: num_sparse * int64", "dense_values: list(Tdense)"),
    attrs={"num_sparse": REQUIRED, "sparse_keys": REQUIRED, "dense_keys": REQUIRED,
           "sparse_types": REQUIRED, "dense_shapes": REQUIRED},
    shape=_parse_single_example_shape, host=_parse_single_example_kernel,
    not_differentiable=True,
))


# -- public wrappers ---------------------------------------------------------------------------
def _check_features(features):
    if not features:
        raise ValueError(f"Missing: features was {features}.")
    if not isinstance(features, dict):
        raise TypeError(f"features must be a dict mapping feature keys to FixedLenFeature, "
                        f"VarLenFeature, SparseFeature, RaggedFeature or "
                        f"FixedLenSequenceFeature; got "
                        f"{type(features).__name__}.")


def _as_outputs(params, outs):
    """{key: Tensor or SparseTensor} from the op's flat outputs."""
    n = len(params.sparse_keys)
    sparse = [SparseTensor(ix, val, shape)
              for ix, val, shape in zip(outs[:n], outs[n:2 * n], outs[2 * n:3 * n])]
    return dict(zip(params.sparse_keys + params.dense_keys, sparse + list(outs[3 * n:])))


def _parse_example_raw(serialized, names, params: _RawParams, name):
    with _graph.name_scope(name, "ParseExample", [serialized, names]):
        names = [] if names is None else names
        outs = apply_op("ParseExample", name=name, serialized=serialized, names=names,
                        sparse_keys=list(params.sparse_keys), dense_keys=list(params.dense_keys),
                        dense_defaults=_dense_default_tensors(params),
                        sparse_types=tuple(params.sparse_types),
                        dense_shapes=tuple(params.dense_shapes))
        return _as_outputs(params, outs)


def parse_example(serialized, features, name=None, example_names=None):
    """Parses a batch of serialized `Example` protos (a 1-D string tensor) into a dict
    of Tensors and SparseTensors, one per key of `features` (see the module docstring)."""
    _check_features(features)
    outputs = _parse_example_raw(serialized, example_names, _features_to_raw_params(features),
                                 name)
    return _composite_features(features, outputs, batched=True)


def parse_single_example(serialized, features, name=None, example_names=None):
    """Parses one serialized `Example` (a string scalar): like `parse_example` without
    the batch dimension; VarLenFeature indices are [N, 1] and dense_shape [N]."""
    _check_features(features)
    params = _features_to_raw_params(features)
    if example_names is not None:
        outputs = _parse_single_example_with_name(serialized, example_names, params, name)
        return _composite_features(features, outputs, batched=False)
    with _graph.name_scope(name, "ParseSingleExample", [serialized]):
        serialized = convert_to_tensor(serialized, name="serialized")
        outs = apply_op("ParseSingleExample", name=name, serialized=serialized,
                        dense_defaults=_dense_default_tensors(params),
                        num_sparse=len(params.sparse_keys),
                        sparse_keys=tuple(params.sparse_keys),
                        dense_keys=tuple(params.dense_keys),
                        sparse_types=tuple(params.sparse_types),
                        dense_shapes=tuple(params.dense_shapes))
        return _composite_features(features, _as_outputs(params, outs), batched=False)


def _composite_features(features, outputs, batched):
    """The SparseFeature and RaggedFeature values built from the parsed keys, and only
    the keys of `features` kept."""
    return construct_sparse_features(features,
                                     construct_ragged_features(features, outputs, batched))


def _parse_single_example_with_name(serialized, example_names, params, name):
    """TF1's path when a record name is given (it appears in error messages): a batch of
    one through ParseExample, with the batch dimension taken off again."""
    with _graph.name_scope(name, "ParseSingleExample", [serialized, example_names]):
        serialized = convert_to_tensor(serialized, dtype=_dtypes.string)
        names = convert_to_tensor(example_names, dtype=_dtypes.string)
        for arg, tensor in (("serialized", serialized), ("names", names)):
            if tensor.shape.ndims not in (None, 0):
                raise ValueError(f"Input {arg} must be a scalar")
        outputs = _parse_example_raw(apply_op("_BatchOfOne", name="ExpandDims", input=serialized),
                                     apply_op("_BatchOfOne", name="ExpandDims", input=names),
                                     params, name)
        for key in params.dense_keys:
            outputs[key] = apply_op("_UnbatchOne", name="Squeeze_" + _safe_name(key),
                                    input=outputs[key])
        for key in params.sparse_keys:
            sp = outputs[key]
            outputs[key] = SparseTensor(
                slicing_ops.slice(sp.indices, [0, 1], [-1, -1],
                                  name="Slice_Indices_" + _safe_name(key)),
                sp.values,
                slicing_ops.slice(sp.dense_shape, [1], [-1],
                                  name="Squeeze_Shape_" + _safe_name(key)))
        return outputs


def _unbatch_one_kernel(input):  # noqa: A002
    if input.ndim == 0 or input.shape[0] != 1:
        raise kernel_error(f"Expected a batch of one record, got shape: {dims_str(input.shape)}")
    # An array, not input[0]: a bare bytes scalar would come back as numpy bytes_, which
    # drops trailing NUL bytes.
    return input.reshape(input.shape[1:])


def _unbatch_one_shape(op):
    shape = op.inputs[0].shape
    return unknown_shape() if shape.ndims is None else shape.with_rank_at_least(1)[1:]


# TF1 adds and drops that batch dimension with ExpandDims and Squeeze, which here are
# compiled ops without strings; these two host records do it for every dtype.
register(OpDef("_BatchOfOne", inputs=("input: T",), outputs=("output: T",),
               attrs={"T": _dtypes.ALL},
               shape=lambda op: TensorShape([1]).concatenate(op.inputs[0].shape),
               host=lambda input: input[None], not_differentiable=True))
register(OpDef("_UnbatchOne", inputs=("input: T",), outputs=("output: T",),
               attrs={"T": _dtypes.ALL}, shape=_unbatch_one_shape, host=_unbatch_one_kernel,
               not_differentiable=True))


# -- DecodeRaw ---------------------------------------------------------------------------------
_DECODE_RAW_TYPES = (_dtypes.float16, _dtypes.float32, _dtypes.float64, _dtypes.int32,
                     _dtypes.uint16, _dtypes.uint8, _dtypes.int16, _dtypes.int8, _dtypes.int64,
                     _dtypes.complex64, _dtypes.complex128, _dtypes.bool)


def _decode_raw_kernel(bytes, out_type, little_endian):  # noqa: A002 - TF's argument name
    flat = [_as_bytes(s) for s in bytes.reshape(-1)]
    size = len(flat[0]) if flat else 0
    for i, s in enumerate(flat):
        if len(s) != size:
            # TF's text puts the first element's size first.
            raise kernel_error(f"DecodeRaw requires input strings to all be the same size, "
                               f"but element {i} has size {size} != {len(s)}")
    dtype = np.dtype(out_type.as_numpy_dtype)
    if size == 0:
        return np.zeros(bytes.shape + (0,), dtype)
    if size % dtype.itemsize:
        raise kernel_error(f"Input to DecodeRaw has length {size} that is not a multiple of "
                           f"{dtype.itemsize}, the size of {out_type._tf_name}")
    order = "<" if little_endian else ">"
    values = np.frombuffer(b"".join(flat), dtype.newbyteorder(order))
    return values.astype(dtype).reshape(bytes.shape + (size // dtype.itemsize,))


register(OpDef("DecodeRaw", inputs=("bytes: string",), outputs=("output: out_type",),
               attrs={"out_type": _DECODE_RAW_TYPES, "little_endian": True},
               shape=lambda op: (unknown_shape() if op.inputs[0].shape.ndims is None
                                 else op.inputs[0].shape.concatenate([None])),
               host=_decode_raw_kernel, not_differentiable=True))


def decode_raw(input_bytes=None, out_type=None, little_endian=True, name=None,
               bytes=None):  # noqa: A002 - TF1's deprecated argument name
    """Reinterprets the bytes of each string as a vector of `out_type` numbers; all
    strings must have the same length. `bytes` is the deprecated name of `input_bytes`."""
    if input_bytes is not None and bytes is not None:
        raise ValueError("Cannot specify both 'input_bytes' and 'bytes'")
    input_bytes = bytes if input_bytes is None else input_bytes
    if input_bytes is None or out_type is None:
        raise TypeError("decode_raw() needs input_bytes (a string tensor) and out_type "
                        f"(one of {', '.join(d.name for d in _DECODE_RAW_TYPES)}).")
    return apply_op("DecodeRaw", name=name, bytes=input_bytes, out_type=out_type,
                    little_endian=bool(little_endian))


# -- SerializeTensor / ParseTensor -------------------------------------------------------------
def _serialize_tensor_kernel(tensor, T):  # noqa: N803 - TF's attr name
    proto = tensor_util.make_tensor_proto(tensor, dtype=T)
    return np.array(proto.SerializeToString(), dtype=object)


def _parse_tensor_kernel(serialized, out_type):
    if serialized.ndim != 0:
        raise kernel_error(f"Expected `serialized` to be a scalar, got shape: "
                           f"{dims_str(serialized.shape)}")
    data = _as_bytes(serialized[()])
    try:
        proto = protos.TensorProto.FromString(data)
    except (DecodeError, ValueError):
        raise kernel_error(f"Could not parse `serialized` as TensorProto: "
                           f"'{_printable(data)}'") from None
    if proto.dtype != out_type.as_datatype_enum:
        try:
            parsed = _dtypes.as_dtype(proto.dtype)._tf_name
        except (KeyError, TypeError, ValueError):
            parsed = "invalid"  # DT_INVALID (0), or an enum tensorflux does not know
        raise kernel_error(f"Type mismatch between parsed tensor ({parsed}) and dtype "
                           f"({out_type._tf_name})")
    return tensor_util.make_ndarray(proto)


register(OpDef("SerializeTensor", inputs=("tensor: T",), outputs=("serialized: string",),
               attrs={"T": _dtypes.ALL}, shape=lambda op: TensorShape([]),
               host=_serialize_tensor_kernel, not_differentiable=True))
register(OpDef("ParseTensor", inputs=("serialized: string",), outputs=("output: out_type",),
               attrs={"out_type": _dtypes.ALL}, shape=lambda op: unknown_shape(),
               host=_parse_tensor_kernel, not_differentiable=True))


def serialize_tensor(tensor, name=None):
    """A string scalar: the TensorProto of `tensor`, serialized (tf.io.serialize_tensor)."""
    return apply_op("SerializeTensor", name=name, tensor=tensor)


def parse_tensor(serialized, out_type, name=None):
    """The tensor a serialized TensorProto holds; its dtype must be `out_type`."""
    return apply_op("ParseTensor", name=name, serialized=serialized, out_type=out_type)
