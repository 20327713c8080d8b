"""tf.train.SequenceExample parsing: ParseSingleSequenceExample (one record) and
ParseSequenceExample (a batch), host records after TF1.15's kernels, and their wrappers
tf.io.parse_single_sequence_example / tf.io.parse_sequence_example.

A SequenceExample has context features (a Features map, as an Example) and feature
lists (each key a list of Features, one per time step). What each config gives, as in
TF1.15 (B: batch size, T: length of a feature list, N: values found):

    context  FixedLenFeature(shape)   dense shape ([B] + shape); missing: default_value,
                                      or an error when there is none
             VarLenFeature            SparseTensor [N, 1] / batch [N, 2]
    sequence FixedLenSequenceFeature  dense [T] + shape / batch [B, max T] + shape padded
             (shape)                  with 0 or "" (and a dict of lengths T per record);
                                      a missing list needs allow_missing=True (then T=0)
             VarLenFeature            SparseTensor [time, index] / batch [b, time, index]

Kernels raise the InvalidArgumentError texts of TF's kernels: the single-record op names
the record ("Name: <example_name>"), its key, and for type mismatches the feature in
protobuf text; the batch op follows TF's fast parser.
"""

from __future__ import annotations

import re

import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework import tensor_shape
from tensorflux._src.framework.operation import Tensor
from tensorflux._src.framework.protos import DecodeError
from tensorflux._src.framework.sparse_tensor import SparseTensor
from tensorflux._src.framework.tensor_conversion import convert_to_tensor, make_ndarray
from tensorflux._src.framework.tensor_shape import TensorShape
from tensorflux._src.io import example_proto
from tensorflux._src.ops.constant import constant
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.op_helpers import dims_str, kernel_error, with_rank
from tensorflux._src.ops.registry import OpDef, REQUIRED, register
from tensorflux._src.ops.strings.parsing_ops import (
    FixedLenFeature, FixedLenSequenceFeature, VarLenFeature, _feature_dtype, _values_array,
)
from tensorflux._src.ops.strings.string_util import as_bytes

__all__ = ["parse_sequence_example", "parse_single_sequence_example"]

_WORD = {"float": "float", "int64": "int64", "string": "bytes"}


def _shape_text(dims):
    return "[" + ",".join(str(d) for d in dims) + "]"


def _printable(value, limit=100):
    return as_bytes(value)[:limit].decode("latin-1").encode("unicode_escape").decode("ascii")


class _Where:
    """A record's name for messages, and which kernel's texts to use."""

    def __init__(self, name, batched):
        self.name, self.batched = name, batched

    def mismatch(self, what, key, dtype, feature, index=None):
        at = f", Index: {index}" if index is not None else ""
        text = (f"Name: {self.name}, {what}: {key}{at}.  Data types don't match. Expected "
                f"type: {dtype._tf_name}")
        if not self.batched:
            text += f"  Feature is: {example_proto.feature_text(feature)}"
        return kernel_error(text)

    def count(self, key, index, kind, count, dims):
        return kernel_error(f"Name: {self.name}, Key: {key}, Index: {index}.  Number of "
                            f"{_WORD[kind]} values != expected.  values size: {count} but "
                            f"output shape: {_shape_text(dims)}")


def _typed(feature, dtype, where, what, key, index=None):
    """The values of a Feature, which must be of `dtype`."""
    kind, values = example_proto.read_feature(feature)
    if kind != dtype._tf_name:
        raise where.mismatch(what, key, dtype, feature, index)
    return kind, _values_array(kind, values)


def _read(serialized, where):
    try:
        return example_proto.read_sequence_example(as_bytes(serialized))
    except DecodeError:
        if where.batched:
            raise kernel_error(f"Invalid protocol message input, example id: {where.name}") \
                from None
        raise kernel_error(f"Could not parse example input, value: "
                           f"'{_printable(serialized)}'") from None


def _context_dense(context, key, dtype, dims, default, where):
    feature = context.get(key)
    if feature is None:
        if default.size == 0:
            if where.batched:
                raise kernel_error(f"Feature: {key} (data type: {dtype._tf_name}) is required "
                                   f"but could not be found.")
            raise kernel_error(f"Name: {where.name}, Context feature '{key}' is required but "
                               f"could not be found.")
        return np.asarray(default).reshape(dims)
    kind, values = _typed(feature, dtype, where, "Context feature", key)
    if len(values) != int(np.prod(dims, dtype=np.int64)):
        raise where.count(key, 0, kind, len(values), dims)
    return values.reshape(dims)


def _context_sparse(context, key, dtype, where):
    feature = context.get(key)
    if feature is None or example_proto.read_feature(feature)[0] is None:
        return np.zeros(0, object if dtype == _dtypes.string else dtype.as_numpy_dtype)
    return _typed(feature, dtype, where, "Context feature", key)[1]


def _list_dense(lists, key, dtype, dims, allowed_missing, where):
    """[T] + dims values of a dense feature list."""
    if key not in lists and not allowed_missing:
        raise kernel_error(f"Name: {where.name}, Feature list '{key}' is required but could "
                           f"not be found.  Did you mean to include it in "
                           f"feature_list_dense_missing_assumed_empty or "
                           f"feature_list_dense_defaults?")
    rows = []
    for t, feature in enumerate(lists.get(key, [])):
        kind, values = _typed(feature, dtype, where, "Feature list", key, t)
        if len(values) != int(np.prod(dims, dtype=np.int64)):
            raise where.count(key, t, kind, len(values), dims)
        rows.append(values.reshape(dims))
    out = np.zeros([len(rows)] + list(dims),
                   object if dtype == _dtypes.string else dtype.as_numpy_dtype)
    if dtype == _dtypes.string:
        out[...] = b""
    for t, row in enumerate(rows):
        out[t] = row
    return out


def _list_sparse(lists, key, dtype, where):
    """The value rows of a sparse feature list (one per time step)."""
    what = "Feature list" if where.batched else "Feature List"
    return [_typed(feature, dtype, where, what, key, t)[1]
            for t, feature in enumerate(lists.get(key, []))]


def _empty(dtype, shape=(0,)):
    return np.zeros(shape, object if dtype == _dtypes.string else dtype.as_numpy_dtype)


def _join(dtype, parts):
    return np.concatenate(parts) if parts else _empty(dtype)


# -- ParseSingleSequenceExample -----------------------------------------------------------------
def _single_kernel(serialized, missing_assumed_empty, *rest, Ncontext_sparse,  # noqa: N803
                   Ncontext_dense, Nfeature_list_sparse, Nfeature_list_dense,
                   context_sparse_types, context_dense_shapes, feature_list_sparse_types,
                   feature_list_dense_types, feature_list_dense_shapes):
    counts = [Ncontext_sparse, Ncontext_dense, Nfeature_list_sparse, Nfeature_list_dense]
    keys, pos = [], 0
    for n in counts:
        keys.append([as_bytes(np.asarray(k)[()]).decode() for k in rest[pos:pos + n]])
        pos += n
    defaults, debug_name = rest[pos:pos + Ncontext_dense], np.asarray(rest[-1], object)
    if np.asarray(serialized).ndim != 0:
        raise kernel_error(f"Expected serialized to be a scalar, got shape: "
                           f"{dims_str(np.shape(serialized))}")
    if debug_name.size and debug_name.ndim != 0:
        raise kernel_error(f"Expected debug_name to be a scalar, got shape: "
                           f"{dims_str(debug_name.shape)}")
    name = as_bytes(debug_name.reshape(-1)[0]).decode("utf-8", "replace") if debug_name.size \
        else "<unknown>"
    where = _Where(name, batched=False)
    allowed = {as_bytes(k).decode() for k in np.asarray(missing_assumed_empty).reshape(-1)}
    context, lists = _read(np.asarray(serialized)[()], where)
    c_sparse, c_dense, f_sparse, f_dense = keys
    dense = []
    for key, default, shape in zip(c_dense, defaults, context_dense_shapes):
        dims = shape.as_list()
        if default.size and list(default.shape) != dims:
            raise kernel_error(f"def_value[{len(dense)}].shape() == {dims_str(default.shape)} "
                               f"!= context_dense_shapes_[{len(dense)}] == {_shape_text(dims)}")
        dtype = _dtypes.string if default.dtype == object else _dtypes.as_dtype(default.dtype)
        dense.append(_context_dense(context, key, dtype, dims, default, where))
    sp_ix, sp_val, sp_shape = [], [], []
    for key, dtype in zip(c_sparse, context_sparse_types):
        values = _context_sparse(context, key, dtype, where)
        sp_ix.append(np.arange(len(values), dtype=np.int64).reshape(-1, 1))
        sp_val.append(values)
        sp_shape.append(np.array([len(values)], np.int64))
    fl_ix, fl_val, fl_shape = [], [], []
    for key, dtype in zip(f_sparse, feature_list_sparse_types):
        rows = _list_sparse(lists, key, dtype, where)
        fl_ix.append(np.array([(t, j) for t, row in enumerate(rows) for j in range(len(row))],
                              np.int64).reshape(-1, 2))
        fl_val.append(_join(dtype, rows))
        fl_shape.append(np.array([len(rows), max((len(r) for r in rows), default=0)],
                                 np.int64))
    fl_dense = [_list_dense(lists, key, dtype, shape.as_list(), key in allowed, where)
                for key, dtype, shape in zip(f_dense, feature_list_dense_types,
                                             feature_list_dense_shapes)]
    return sp_ix + sp_val + sp_shape + dense + fl_ix + fl_val + fl_shape + fl_dense


def _single_shape(op):
    with_rank(op.inputs[0].shape, 0)
    n_cs, n_fs = op.get_attr("Ncontext_sparse"), op.get_attr("Nfeature_list_sparse")
    return ([TensorShape([None, 1])] * n_cs + [TensorShape([None])] * n_cs
            + [TensorShape([1])] * n_cs + list(op.get_attr("context_dense_shapes"))
            + [TensorShape([None, 2])] * n_fs + [TensorShape([None])] * n_fs
            + [TensorShape([2])] * n_fs
            + [TensorShape([None]).concatenate(s)
               for s in op.get_attr("feature_list_dense_shapes")])


# What both ops output (the batch op adds the dense lists' lengths) and their type attrs.
_OUTPUTS = ("context_sparse_indices: Ncontext_sparse * int64",
            "context_sparse_values: list(context_sparse_types)",
            "context_sparse_shapes: Ncontext_sparse * int64",
            "context_dense_values: list(Tcontext_dense)",
            "feature_list_sparse_indices: Nfeature_list_sparse * int64",
            "feature_list_sparse_values: list(feature_list_sparse_types)",
            "feature_list_sparse_shapes: Nfeature_list_sparse * int64",
            "feature_list_dense_values: list(feature_list_dense_types)")
_TYPE_ATTRS = {"context_sparse_types": (), "feature_list_dense_types": (),
               "context_dense_shapes": (), "feature_list_sparse_types": (),
               "feature_list_dense_shapes": ()}


register(OpDef(
    "ParseSingleSequenceExample",
    inputs=("serialized: string", "feature_list_dense_missing_assumed_empty: string",
            "context_sparse_keys: Ncontext_sparse * string",
            "context_dense_keys: Ncontext_dense * string",
            "feature_list_sparse_keys: Nfeature_list_sparse * string",
            "feature_list_dense_keys: Nfeature_list_dense * string",
            "context_dense_defaults: list(Tcontext_dense)", "debug_name: string"),
    outputs=_OUTPUTS,
    attrs=dict(_TYPE_ATTRS),
    shape=_single_shape, host=_single_kernel, not_differentiable=True))


# -- ParseSequenceExample (batch) ---------------------------------------------------------------
def _batch_kernel(serialized, debug_name, *defaults, feature_list_dense_missing_assumed_empty,
                  context_sparse_keys, context_dense_keys, feature_list_sparse_keys,
                  feature_list_dense_keys, context_sparse_types, context_dense_shapes,
                  feature_list_sparse_types, feature_list_dense_types,
                  feature_list_dense_shapes):
    records, names = np.asarray(serialized, object), np.asarray(debug_name, object)
    if records.ndim != 1:
        raise kernel_error(f"Expected serialized to be a vector, got shape: "
                           f"{dims_str(records.shape)}")
    allowed = set(feature_list_dense_missing_assumed_empty)
    parsed = []
    for i, record in enumerate(records):
        name = as_bytes(names[i]).decode("utf-8", "replace") if names.size else "<unknown>"
        where = _Where(name, batched=True)
        parsed.append((where, _read(record, where)))
    b = len(parsed)
    outs_cs_ix, outs_cs_val, outs_cs_shape = [], [], []
    for key, dtype in zip(context_sparse_keys, context_sparse_types):
        rows = [_context_sparse(ctx, key, dtype, where) for where, (ctx, _) in parsed]
        outs_cs_ix.append(np.array([(i, j) for i, row in enumerate(rows)
                                    for j in range(len(row))], np.int64).reshape(-1, 2))
        outs_cs_val.append(_join(dtype, rows))
        outs_cs_shape.append(np.array([b, max((len(r) for r in rows), default=0)], np.int64))
    dense = []
    for key, default, shape in zip(context_dense_keys, defaults, context_dense_shapes):
        dims = shape.as_list()
        dtype = _dtypes.string if default.dtype == object else _dtypes.as_dtype(default.dtype)
        rows = [_context_dense(ctx, key, dtype, dims, default, where)
                for where, (ctx, _) in parsed]
        out = _empty(dtype, [b] + dims)
        for i, row in enumerate(rows):
            out[i] = row
        dense.append(out)
    fl_ix, fl_val, fl_shape = [], [], []
    for key, dtype in zip(feature_list_sparse_keys, feature_list_sparse_types):
        per_record = [_list_sparse(lists, key, dtype, where) for where, (_, lists) in parsed]
        fl_ix.append(np.array([(i, t, j) for i, rows in enumerate(per_record)
                               for t, row in enumerate(rows) for j in range(len(row))],
                              np.int64).reshape(-1, 3))
        fl_val.append(_join(dtype, [row for rows in per_record for row in rows]))
        fl_shape.append(np.array([b, max((len(rows) for rows in per_record), default=0),
                                  max((len(r) for rows in per_record for r in rows),
                                      default=0)], np.int64))
    fl_dense, lengths = [], []
    for key, dtype, shape in zip(feature_list_dense_keys, feature_list_dense_types,
                                 feature_list_dense_shapes):
        dims = shape.as_list()
        rows = [_list_dense(lists, key, dtype, dims, key in allowed, where)
                for where, (_, lists) in parsed]
        longest = max((len(r) for r in rows), default=0)
        out = _empty(dtype, [b, longest] + dims)
        if dtype == _dtypes.string:
            out[...] = b""
        for i, row in enumerate(rows):
            out[i, :len(row)] = row
        fl_dense.append(out)
        lengths.append(np.array([len(r) for r in rows], np.int64))
    return (outs_cs_ix + outs_cs_val + outs_cs_shape + dense + fl_ix + fl_val + fl_shape
            + fl_dense + lengths)


def _batch_shape(op):
    batch = with_rank(op.inputs[0].shape, 1)[0]
    n_cs = len(op.get_attr("context_sparse_keys"))
    n_fs = len(op.get_attr("feature_list_sparse_keys"))
    n_fd = len(op.get_attr("feature_list_dense_keys"))
    return ([TensorShape([None, 2])] * n_cs + [TensorShape([None])] * n_cs
            + [TensorShape([2])] * n_cs
            + [TensorShape([batch]).concatenate(s) for s in op.get_attr("context_dense_shapes")]
            + [TensorShape([None, 3])] * n_fs + [TensorShape([None])] * n_fs
            + [TensorShape([3])] * n_fs
            + [TensorShape([batch, None]).concatenate(s)
               for s in op.get_attr("feature_list_dense_shapes")]
            + [TensorShape([batch])] * n_fd)


register(OpDef(
    "ParseSequenceExample",
    inputs=("serialized: string", "debug_name: string",
            "context_dense_defaults: list(Tcontext_dense)"),
    outputs=_OUTPUTS + ("feature_list_dense_lengths: Nfeature_list_dense * int64",),
    attrs={"feature_list_dense_missing_assumed_empty": REQUIRED,
           "context_sparse_keys": REQUIRED, "context_dense_keys": REQUIRED,
           "feature_list_sparse_keys": REQUIRED, "feature_list_dense_keys": REQUIRED,
           "Ncontext_sparse": 0, "Ncontext_dense": 0, "Nfeature_list_sparse": 0,
           "Nfeature_list_dense": 0, **_TYPE_ATTRS},
    shape=_batch_shape, host=_batch_kernel, not_differentiable=True))


# -- public wrappers --------------------------------------------------------------------------
class _Params:
    """The op's lists for one dict of configs, keys sorted as TF sorts them."""

    def __init__(self, features, allowed, scope):
        self.sparse_keys, self.sparse_types = [], []
        self.dense_keys, self.dense_types, self.dense_shapes = [], [], []
        self.dense_defaults, self.missing_ok = {}, []
        for key in sorted(features or {}):
            feature = features[key]
            if not isinstance(feature, allowed):
                if isinstance(feature, (VarLenFeature, FixedLenFeature,
                                        FixedLenSequenceFeature)):
                    raise ValueError(f"Unsupported {type(feature).__name__} {feature}.")
                raise ValueError(f"Invalid feature {key}:{feature}.")
            dtype = _feature_dtype(key, feature.dtype)
            if isinstance(feature, VarLenFeature):
                self.sparse_keys.append(key)
                self.sparse_types.append(dtype)
                continue
            if feature.shape is None:
                raise ValueError(f"Missing shape for feature {key}.")
            shape = tensor_shape.as_shape(feature.shape)
            if not shape.is_fully_defined():
                raise ValueError(f"All dimensions of shape for feature {key} need to be "
                                 f"known but received {feature.shape}.")
            self.dense_keys.append(key)
            self.dense_types.append(dtype)
            self.dense_shapes.append(shape)
            if isinstance(feature, FixedLenSequenceFeature):
                if feature.default_value is not None:
                    raise ValueError(f"Value {scope}.dense_defaults[{key}] must be None")
                if feature.allow_missing:
                    self.missing_ok.append(key)
            elif feature.default_value is not None:
                self.dense_defaults[key] = feature.default_value

    @property
    def count(self):
        return len(self.sparse_keys) + len(self.dense_keys)

    def default_tensors(self):
        """One per dense key: an empty tensor (required) or the default in its shape."""
        tensors = []
        for key, dtype, shape in zip(self.dense_keys, self.dense_types, self.dense_shapes):
            default = self.dense_defaults.get(key)
            if default is None:
                tensors.append(constant([], dtype=dtype))
            elif isinstance(default, Tensor):
                tensors.append(default)
            else:
                value = make_ndarray(default, dtype=dtype)
                dims = shape.as_list()
                if value.size != int(np.prod(dims, dtype=np.int64)):
                    raise ValueError(f"Cannot reshape a tensor with {value.size} elements to "
                                     f"shape {dims} ({int(np.prod(dims, dtype=np.int64))} "
                                     f"elements) for feature '{key}'.")
                name = "key_" + re.sub(r"[^A-Za-z0-9_.\-/]", "_", key)
                tensors.append(constant(value.reshape(dims), dtype=dtype, name=name))
        return tensors


def _sparse(indices, values, shapes):
    return [SparseTensor(ix, val, shape) for ix, val, shape in zip(indices, values, shapes)]


def _split(outs, counts):
    parts, pos = [], 0
    for n in counts:
        parts.append(list(outs[pos:pos + n]))
        pos += n
    return parts


def _context_and_lists(context_features, sequence_features):
    if not (context_features or sequence_features):
        raise ValueError("Missing features.")
    return (_Params(context_features, (VarLenFeature, FixedLenFeature), "context"),
            _Params(sequence_features, (VarLenFeature, FixedLenSequenceFeature),
                    "feature_list"))


def parse_single_sequence_example(serialized, context_features=None, sequence_features=None,
                                  example_name=None, name=None):
    """Parses one serialized SequenceExample (a string scalar) into (context dict,
    feature list dict) of Tensors and SparseTensors (see the module docstring)."""
    context, lists = _context_and_lists(context_features, sequence_features)
    if context.count + lists.count == 0:
        raise ValueError("Must provide at least one sparse key or dense key")
    with _graph.name_scope(name, "ParseSingleSequenceExample", [serialized]):
        debug_name = constant([], dtype=_dtypes.string) if example_name is None \
            else example_name
        outs = apply_op(
            "ParseSingleSequenceExample", name=name,
            serialized=convert_to_tensor(serialized, dtype=_dtypes.string),
            feature_list_dense_missing_assumed_empty=constant(lists.missing_ok,
                                                              dtype=_dtypes.string),
            context_sparse_keys=list(context.sparse_keys),
            context_dense_keys=list(context.dense_keys),
            feature_list_sparse_keys=list(lists.sparse_keys),
            feature_list_dense_keys=list(lists.dense_keys),
            context_dense_defaults=context.default_tensors(), debug_name=debug_name,
            context_sparse_types=tuple(context.sparse_types),
            context_dense_shapes=tuple(context.dense_shapes),
            feature_list_sparse_types=tuple(lists.sparse_types),
            feature_list_dense_types=tuple(lists.dense_types),
            feature_list_dense_shapes=tuple(lists.dense_shapes))
        ncs, ncd, nfs = len(context.sparse_keys), len(context.dense_keys), len(lists.sparse_keys)
        cs_ix, cs_val, cs_shape, cd, fs_ix, fs_val, fs_shape, fd = _split(
            outs, [ncs, ncs, ncs, ncd, nfs, nfs, nfs, len(lists.dense_keys)])
        context_out = dict(zip(context.sparse_keys + context.dense_keys,
                               _sparse(cs_ix, cs_val, cs_shape) + cd))
        lists_out = dict(zip(lists.sparse_keys + lists.dense_keys,
                             _sparse(fs_ix, fs_val, fs_shape) + fd))
        return context_out, lists_out


def parse_sequence_example(serialized, context_features=None, sequence_features=None,
                           example_names=None, name=None):
    """Parses a batch of serialized SequenceExamples (a string vector) into (context
    dict, feature list dict, dict of feature list lengths) (see the module docstring)."""
    context, lists = _context_and_lists(context_features, sequence_features)
    if context.count + lists.count == 0:
        raise ValueError("Must provide at least one feature key")
    with _graph.name_scope(name, "ParseSequenceExample", [serialized, example_names]):
        names = constant([], dtype=_dtypes.string) if example_names is None else example_names
        outs = apply_op(
            "ParseSequenceExample", name=name,
            serialized=convert_to_tensor(serialized, dtype=_dtypes.string), debug_name=names,
            context_dense_defaults=context.default_tensors(),
            feature_list_dense_missing_assumed_empty=tuple(lists.missing_ok),
            context_sparse_keys=tuple(context.sparse_keys),
            context_dense_keys=tuple(context.dense_keys),
            feature_list_sparse_keys=tuple(lists.sparse_keys),
            feature_list_dense_keys=tuple(lists.dense_keys),
            Ncontext_sparse=len(context.sparse_keys), Ncontext_dense=len(context.dense_keys),
            Nfeature_list_sparse=len(lists.sparse_keys),
            Nfeature_list_dense=len(lists.dense_keys),
            context_sparse_types=tuple(context.sparse_types),
            context_dense_shapes=tuple(context.dense_shapes),
            feature_list_sparse_types=tuple(lists.sparse_types),
            feature_list_dense_types=tuple(lists.dense_types),
            feature_list_dense_shapes=tuple(lists.dense_shapes))
        ncs, ncd = len(context.sparse_keys), len(context.dense_keys)
        nfs, nfd = len(lists.sparse_keys), len(lists.dense_keys)
        cs_ix, cs_val, cs_shape, cd, fs_ix, fs_val, fs_shape, fd, lengths = _split(
            outs, [ncs, ncs, ncs, ncd, nfs, nfs, nfs, nfd, nfd])
        context_out = dict(zip(context.sparse_keys + context.dense_keys,
                               _sparse(cs_ix, cs_val, cs_shape) + cd))
        lists_out = dict(zip(lists.sparse_keys + lists.dense_keys,
                             _sparse(fs_ix, fs_val, fs_shape) + fd))
        return context_out, lists_out, dict(zip(lists.dense_keys, lengths))
