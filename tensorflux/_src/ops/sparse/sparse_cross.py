"""Feature crosses and counts over SparseTensors: tf.sparse.cross / cross_hashed
(SparseCross, SparseCrossV2) and tf.sparse.bincount (Dense/Sparse/RaggedCountSparseOutput).

SparseCross follows TF's kernel: per batch row, the Cartesian product of the row's
features in each input (sparse inputs first, then dense ones; the last input varies
fastest). Unhashed, a cross is the features joined with "_X_" (int64 features as their
decimal text). Hashed, string features are FarmHash `Fingerprint64` (pyfarmhash) and
int64 features their own value, folded left to right from `hash_key` with TF's
`FingerprintCat64`, then taken modulo `num_buckets` (or modulo INT64_MAX). All host
records, not differentiable.
"""

from __future__ import annotations

import itertools

import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.operation import Tensor
from tensorflux._src.framework.sparse_tensor import SparseTensor
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.framework.tensor_shape import TensorShape
from tensorflux._src.ops.array import array_ops as A
from tensorflux._src.ops.math import math_ops as M
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.op_helpers import kernel_error
from tensorflux._src.ops.registry import OpDef, REQUIRED, register
from tensorflux._src.ops.sparse import sparse_kernels as K
from tensorflux._src.ops.strings import hashing

__all__ = ["bincount", "sparse_cross", "sparse_cross_hashed"]

DEFAULT_HASH_KEY = 0xDECAFCAFFE  # TF's sparse_ops._DEFAULT_HASH_KEY
_MASK = (1 << 64) - 1
_INT64_MAX = (1 << 63) - 1


def _as_bytes(value):
    return value if isinstance(value, bytes) else str(value).encode()


# -- SparseCross (host) ------------------------------------------------------------------------
def _validate(inds, vals, shapes, dense):
    for i, ind in enumerate(inds):
        if ind.ndim != 2:
            raise kernel_error(f"Input indices should be a matrix but received shape "
                               f"{K.shape_str(ind.shape)} at position {i}")
        if ind.shape[1] != 2:
            raise kernel_error(f"Expected D2 of index to be 2 got {ind.shape[1]} at "
                               f"position {i}")
    for i, val in enumerate(vals):
        if val.ndim != 1:
            raise kernel_error(f"Input values should be a vector but received shape "
                               f"{K.shape_str(val.shape)} at position {i}")
        if inds[i].shape[0] != val.shape[0]:
            raise kernel_error(f"Expected size of values to be {inds[i].shape[0]} got "
                               f"{val.shape[0]} at position {i}")
    for i, shape in enumerate(shapes):
        if shape.ndim != 1:
            raise kernel_error(f"Input shapes should be a vector but received shape "
                               f"{K.shape_str(shape.shape)} at position {i}")
        if shape.shape[0] != 2:
            raise kernel_error(f"shape should imply a 2D tensor, but got "
                               f"{K.shape_str(shape.shape)} at position {i}")
    for i, d in enumerate(dense):
        if d.ndim != 2:
            raise kernel_error(f"Dense inputs should be a matrix but received shape "
                               f"{K.shape_str(d.shape)} at position {i}")
    batch = int(shapes[0][0]) if shapes else (dense[0].shape[0] if dense else 0)
    for i, shape in enumerate(shapes):
        if int(shape[0]) != batch:
            raise kernel_error(f"Expected batch size {batch} got {int(shape[0])} at "
                               f"position {i}")
    for i, d in enumerate(dense):
        if d.shape[0] != batch:
            raise kernel_error(f"Expected batch size {batch} got {d.shape[0]} at dense "
                               f"tensor {i}")
    return batch


def _columns(inds, vals, dense, batch):
    """Per input, per batch row: that row's features in order."""
    columns = []
    for ind, val in zip(inds, vals):
        rows = [[] for _ in range(batch)]
        for b, v in zip(ind[:, 0].tolist(), val.tolist()):
            if 0 <= b < batch:
                rows[b].append(v)
        columns.append(rows)
    for d in dense:
        columns.append([d[b].tolist() for b in range(batch)])
    return columns


def _cross(args, num_sparse, hashed_output, num_buckets, hash_key, separator):
    inds, vals = args[:num_sparse], args[num_sparse:2 * num_sparse]
    shapes, dense = args[2 * num_sparse:3 * num_sparse], args[3 * num_sparse:]
    batch = _validate(inds, vals, shapes, dense)
    columns = _columns(inds, vals, dense, batch)
    if hashed_output:
        def feature(v):
            return hashing.fingerprint64(v) if isinstance(v, bytes) else int(v) & _MASK
    else:
        def feature(v):
            return _as_bytes(v)
    out_indices, out_values, width = [], [], 0
    for b in range(batch):
        features = [[feature(v) for v in column[b]] for column in columns]
        count = 0
        if columns:
            for combo in itertools.product(*features):
                if hashed_output:
                    h = hash_key & _MASK
                    for f in combo:
                        h = hashing.fingerprint_cat64(h, f)
                    out_values.append(h % num_buckets if num_buckets > 0 else h % _INT64_MAX)
                else:
                    out_values.append(separator.join(combo))
                out_indices.append((b, count))
                count += 1
        width = max(width, count)
    indices = np.asarray(out_indices, np.int64).reshape(-1, 2)
    if hashed_output:
        values = np.asarray(out_values, np.int64).reshape(-1)
    else:
        values = np.empty(len(out_values), object)
        values[:] = out_values
    return indices, values, np.array([batch, width], np.int64)


def _cross_kernel(*args, N, hashed_output, num_buckets, hash_key):  # noqa: N803
    return _cross(args, N, hashed_output, num_buckets, hash_key, b"_X_")


def _cross_v2_kernel(*args, N):  # noqa: N803
    sep = args[-1]
    sep = sep.item() if isinstance(sep, np.ndarray) else sep
    return _cross(args[:-1], N, False, 0, 0, _as_bytes(sep))


def _cross_shape(op):
    return [TensorShape([None, 2]), TensorShape([None]), TensorShape([2])]


_CROSS_INPUTS = ("indices: N * int64", "values: list(sparse_types)", "shapes: N * int64",
                 "dense_inputs: list(dense_types)")
_CROSS_OUTPUTS = ("output_indices: int64", "output_values: out_type", "output_shape: int64")
register(OpDef("SparseCross", inputs=_CROSS_INPUTS, outputs=_CROSS_OUTPUTS,
               attrs={"hashed_output": REQUIRED, "num_buckets": REQUIRED,
                      "hash_key": REQUIRED, "out_type": (_dtypes.int64, _dtypes.string),
                      "internal_type": (_dtypes.int64, _dtypes.string)},
               shape=_cross_shape, host=_cross_kernel, not_differentiable=True))
register(OpDef("SparseCrossV2", inputs=_CROSS_INPUTS + ("sep: string",),
               outputs=("output_indices: int64", "output_values: string",
                        "output_shape: int64"),
               attrs={}, shape=_cross_shape, host=_cross_v2_kernel, not_differentiable=True))


def _cross_inputs(inputs):
    if not isinstance(inputs, list):
        raise TypeError("Inputs must be a list")
    if not all(isinstance(i, (SparseTensor, Tensor)) for i in inputs):
        raise TypeError("All inputs must be SparseTensors")
    sparse = [i for i in inputs if isinstance(i, SparseTensor)]
    dense = [i for i in inputs if not isinstance(i, SparseTensor)]
    internal = _dtypes.string
    values = [s.values for s in sparse]
    for i, v in enumerate(values):
        if v.dtype != _dtypes.string:
            values[i] = M.cast(v, _dtypes.int64)
            internal = _dtypes.int64
    for i, d in enumerate(dense):
        if d.dtype != _dtypes.string:
            dense[i] = M.cast(d, _dtypes.int64)
            internal = _dtypes.int64
    return sparse, values, dense, internal


def _sparse_cross_internal(inputs, hashed_output=False, num_buckets=0, hash_key=None,
                           name=None):
    sparse, values, dense, internal = _cross_inputs(inputs)
    out_type = _dtypes.int64 if hashed_output else _dtypes.string
    indices, values, shape = apply_op(
        "SparseCross", name=name, indices=[s.indices for s in sparse], values=values,
        shapes=[s.dense_shape for s in sparse], dense_inputs=dense,
        hashed_output=bool(hashed_output), num_buckets=int(num_buckets),
        hash_key=int(hash_key or DEFAULT_HASH_KEY), out_type=out_type,
        internal_type=internal)
    return SparseTensor(indices, values, shape)


def sparse_cross(inputs, name=None, separator=None):
    """The batchwise crosses of 2-D sparse and dense string/int features as strings
    joined by "_X_" (or `separator`)."""
    if separator is None:
        return _sparse_cross_internal(inputs, hashed_output=False, name=name)
    sparse, values, dense, _ = _cross_inputs(inputs)
    indices, values, shape = apply_op(
        "SparseCrossV2", name=name, indices=[s.indices for s in sparse], values=values,
        shapes=[s.dense_shape for s in sparse], dense_inputs=dense,
        sep=convert_to_tensor(separator, _dtypes.string))
    return SparseTensor(indices, values, shape)


def sparse_cross_hashed(inputs, num_buckets=0, hash_key=None, name=None):
    """The batchwise crosses as int64 hashes (FingerprintCat64 of the features'
    fingerprints from `hash_key`), modulo `num_buckets` when positive."""
    return _sparse_cross_internal(inputs, hashed_output=True, num_buckets=num_buckets,
                                  hash_key=hash_key, name=name)


# -- counts: tf.sparse.bincount (host) ------------------------------------------------------------
def _counts(values, batch_of, num_batches, weights, minlength, maxlength, binary_output,
            out_dtype):
    """(indices, values, dense_shape) of per-batch value counts (or weight sums)."""
    values = np.asarray(values).reshape(-1)
    weights = np.asarray(weights).reshape(-1)
    if weights.size and weights.size != values.size:
        raise kernel_error(f"Weights and values must have the same shape. Weight shape: "
                           f"[{weights.size}]; values shape: [{values.size}]")
    keep = (values >= 0) & ((values < maxlength) if maxlength > 0 else True)
    max_value = int(values[keep].max()) if keep.any() else 0
    size = maxlength if maxlength > 0 else max(max_value + 1, minlength)
    table = {}
    for k in np.flatnonzero(keep):
        key = (int(batch_of[k]), int(values[k]))
        table[key] = table.get(key, 0) + (weights[k] if weights.size else 1)
    keys = sorted(table)
    batched = num_batches is not None
    if batched:
        indices = np.asarray(keys, np.int64).reshape(-1, 2)
        shape = np.array([num_batches, size], np.int64)
    else:
        indices = np.asarray([k[1] for k in keys], np.int64).reshape(-1, 1)
        shape = np.array([size], np.int64)
    counts = np.asarray([1 if binary_output else table[k] for k in keys], out_dtype)
    return indices, counts.reshape(-1), shape


def _dense_count_kernel(values, weights, minlength, maxlength, binary_output):
    if values.ndim not in (1, 2):
        raise kernel_error(f"Input must be a 1 or 2-dimensional tensor. Got: {values.ndim}")
    if values.ndim == 1:
        batch_of, batches = np.zeros(values.size, np.int64), None
    else:
        batch_of = np.repeat(np.arange(values.shape[0]), values.shape[1])
        batches = values.shape[0]
    return _counts(values, batch_of, batches, weights, minlength, maxlength, binary_output,
                   weights.dtype)


def _sparse_count_kernel(indices, values, dense_shape, weights, minlength, maxlength,
                         binary_output):
    K.check_sparse(indices, values, dense_shape)
    if dense_shape.shape[0] == 1:
        batch_of, batches = np.zeros(values.size, np.int64), None
    else:
        batch_of, batches = indices[:, 0], int(dense_shape[0])
    return _counts(values, batch_of, batches, weights, minlength, maxlength, binary_output,
                   weights.dtype)


def _ragged_count_kernel(splits, values, weights, minlength, maxlength, binary_output):
    if splits.ndim != 1 or splits.shape[0] < 1 or splits[0] != 0 or \
            splits[-1] != values.shape[0]:
        raise kernel_error("Splits must be a valid row_splits vector for the values.")
    lengths = np.diff(splits)
    batch_of = np.repeat(np.arange(len(lengths)), lengths)
    return _counts(values, batch_of, len(lengths), weights, minlength, maxlength,
                   binary_output, weights.dtype)


_COUNT_ATTRS = {"T": _dtypes.INDEX, "minlength": -1, "maxlength": -1,
                "binary_output": REQUIRED,
                "output_type": (_dtypes.int32, _dtypes.int64, _dtypes.float32,
                                _dtypes.float64)}
_COUNT_OUT = ("output_indices: int64", "output_values: output_type",
              "output_dense_shape: int64")


def _count_shape(op):
    return [TensorShape([None, None]), TensorShape([None]), TensorShape([None])]


register(OpDef("DenseCountSparseOutput", inputs=("values: T", "weights: output_type"),
               outputs=_COUNT_OUT, attrs=dict(_COUNT_ATTRS), shape=_count_shape,
               host=_dense_count_kernel, not_differentiable=True))
register(OpDef("SparseCountSparseOutput",
               inputs=("indices: int64", "values: T", "dense_shape: int64",
                       "weights: output_type"),
               outputs=_COUNT_OUT, attrs=dict(_COUNT_ATTRS), shape=_count_shape,
               host=_sparse_count_kernel, not_differentiable=True))
register(OpDef("RaggedCountSparseOutput",
               inputs=("splits: int64", "values: T", "weights: output_type"),
               outputs=_COUNT_OUT, attrs=dict(_COUNT_ATTRS), shape=_count_shape,
               host=_ragged_count_kernel, not_differentiable=True))


def bincount(values, weights=None, axis=0, minlength=None, maxlength=None,
             binary_output=False, name=None):
    """Counts (or sums of `weights`) of each non-negative value, as a SparseTensor:
    over everything with axis=0, per row of a 2-D input with axis=-1. A RaggedTensor's
    rows count separately with axis=-1."""
    with _graph.name_scope(name, "count", [values, weights]):
        ragged = hasattr(values, "row_splits") and hasattr(values, "flat_values")
        if not ragged and not isinstance(values, SparseTensor):
            values = convert_to_tensor(values, name="values")
        if weights is not None and not isinstance(weights, SparseTensor) and \
                not hasattr(weights, "row_splits"):
            weights = convert_to_tensor(weights, name="weights")
        if axis is None:
            axis = 0
        if axis not in (0, -1):
            raise ValueError(f"Unsupported value for argument axis={axis}. Only 0 and -1 "
                             f"are currently supported.")
        minlength = -1 if minlength is None else int(minlength)
        maxlength = -1 if maxlength is None else int(maxlength)
        weight_values = None if weights is None else (
            weights.values if isinstance(weights, SparseTensor) else
            weights.flat_values if hasattr(weights, "flat_values") else weights)
        if axis == 0:
            if isinstance(values, SparseTensor):
                values = values.values
            elif ragged:
                values = values.flat_values
            else:
                values = A.reshape(values, [-1])
            if weight_values is not None:
                weight_values = A.reshape(weight_values, [-1])
            ragged = False
        value_dtype = (values.values if isinstance(values, SparseTensor) else
                       values.flat_values if ragged else values).dtype
        if weight_values is None:
            weight_values = convert_to_tensor(np.zeros([0], value_dtype.as_numpy_dtype))
        elif weight_values.dtype != value_dtype and not weight_values.dtype.is_floating:
            raise ValueError(f"weights ({weight_values.dtype.name}) and values "
                             f"({value_dtype.name}) must have compatible dtypes")
        attrs = dict(minlength=minlength, maxlength=maxlength,
                     binary_output=bool(binary_output))
        if isinstance(values, SparseTensor):
            out = apply_op("SparseCountSparseOutput", indices=values.indices,
                           values=values.values, dense_shape=values.dense_shape,
                           weights=weight_values, **attrs)
        elif ragged:
            out = apply_op("RaggedCountSparseOutput",
                           splits=M.cast(values.row_splits, _dtypes.int64),
                           values=values.values, weights=weight_values, **attrs)
        else:
            out = apply_op("DenseCountSparseOutput", values=values, weights=weight_values,
                           **attrs)
        return SparseTensor(*out)
