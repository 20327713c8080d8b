"""Serialized SparseTensors (tf.io.serialize_sparse and friends): SerializeSparse,
SerializeManySparse, DeserializeSparse, DeserializeManySparse.

A serialized SparseTensor is a string 3-vector: the TensorProtos of its indices, values
and dense_shape, each serialized, as TF's kernels write them (TF's `out_type=variant`
form, which holds the tensors themselves, has no use without TF's variant runtime and
is refused by the dtype check). All are host records (strings never enter XLA) and none
is differentiable, as in TF.
"""

from __future__ import annotations

import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import protos, tensor_util
from tensorflux._src.framework.protos import DecodeError
from tensorflux._src.framework.sparse_tensor import SparseTensor
from tensorflux._src.framework.tensor_shape import TensorShape
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.op_helpers import kernel_error, with_rank, with_rank_at_least
from tensorflux._src.ops.registry import OpDef, REQUIRED, register
from tensorflux._src.ops.sparse import sparse_kernels as K
from tensorflux._src.ops.sparse.sparse_ops import convert_to_sparse_tensor

__all__ = ["deserialize_many_sparse", "deserialize_sparse", "serialize_many_sparse",
           "serialize_sparse"]

_OUT_TYPES = (_dtypes.string,)


def _serialize(indices, values, shape, dtype):
    parts = [tensor_util.make_tensor_proto(np.asarray(indices, np.int64), dtype=_dtypes.int64),
             tensor_util.make_tensor_proto(values, dtype=dtype),
             tensor_util.make_tensor_proto(np.asarray(shape, np.int64), dtype=_dtypes.int64)]
    out = np.empty(3, object)
    out[:] = [p.SerializeToString() for p in parts]
    return out


def _dtype_of(values):
    return _dtypes.string if values.dtype == np.object_ else _dtypes.as_dtype(values.dtype)


def _serialize_kernel(sparse_indices, sparse_values, sparse_shape):
    K.check_sparse(sparse_indices, sparse_values, sparse_shape)
    return _serialize(sparse_indices, sparse_values, sparse_shape, _dtype_of(sparse_values))


def _serialize_many_kernel(sparse_indices, sparse_values, sparse_shape):
    K.check_sparse(sparse_indices, sparse_values, sparse_shape)
    rank = sparse_shape.shape[0]
    if rank <= 1:
        raise kernel_error(f"Rank of input SparseTensor should be > 1, but saw rank: {rank}")
    K.validate_indices(sparse_indices, sparse_shape)
    n = int(sparse_shape[0])
    dtype = _dtype_of(sparse_values)
    out = np.empty([n, 3], object)
    batch = sparse_indices[:, 0]
    for b in range(n):
        rows = batch == b
        out[b] = _serialize(sparse_indices[rows, 1:], sparse_values[rows], sparse_shape[1:],
                            dtype)
    return out


def _parse(serialized, where, dtype):
    parts = []
    for k in range(3):
        try:
            data = serialized[k]
            data = data.encode() if isinstance(data, str) else bytes(data)
            parts.append(tensor_util.make_ndarray(protos.TensorProto.FromString(data)))
        except (DecodeError, ValueError, TypeError, KeyError):
            raise kernel_error(f"Could not parse serialized_sparse[{where}, {k}]") from None
    indices, values, shape = parts
    got = _dtype_of(values)
    if got != dtype:
        raise kernel_error(f"Requested SparseTensor of type {dtype._tf_name} but "
                           f"SparseTensor[{where}].values.dtype() == {got._tf_name}")
    K.check_sparse(indices, values, shape)
    return indices.astype(np.int64), values, shape.astype(np.int64)


def _deserialize(serialized, dtype):
    """Deserializes every [..., 3] row and stacks them along new leading dimensions."""
    batch_shape = serialized.shape[:-1]
    parsed = []
    for pos in np.ndindex(*batch_shape):
        where = ",".join(str(p) for p in pos) if pos else "0"
        parsed.append((pos, _parse(serialized[pos], where, dtype)))
    if not parsed:
        return (np.zeros([0, len(batch_shape)], np.int64), np.zeros([0], dtype.as_numpy_dtype),
                np.asarray(batch_shape, np.int64))
    rank = parsed[0][1][2].shape[0]
    for k, (_, (_, _, shape)) in enumerate(parsed):
        if shape.shape[0] != rank:
            raise kernel_error(f"Inconsistent rank across SparseTensors: rank prior to "
                               f"SparseTensor[{k}] was: {rank} but rank of "
                               f"SparseTensor[{k}] is: {shape.shape[0]}")
    inner = np.max(np.stack([shape for _, (_, _, shape) in parsed]), axis=0)
    indices = np.concatenate([
        np.concatenate([np.tile(np.asarray(pos, np.int64), (len(ind), 1)), ind], axis=1)
        for pos, (ind, _, _) in parsed], axis=0)
    values = np.concatenate([vals for _, (_, vals, _) in parsed])
    return indices, values, np.r_[np.asarray(batch_shape, np.int64), inner]


def _deserialize_kernel(serialized_sparse, dtype):
    if serialized_sparse.ndim < 1 or serialized_sparse.shape[-1] != 3:
        raise kernel_error(f"Serialized sparse should have 3 as the last dimension "
                           f"{K.shape_str(serialized_sparse.shape)}")
    return _deserialize(serialized_sparse, dtype)


def _deserialize_many_kernel(serialized_sparse, dtype):
    if serialized_sparse.ndim != 2:
        raise kernel_error(f"Serialized sparse should be a matrix but received shape "
                           f"{K.shape_str(serialized_sparse.shape)}")
    if serialized_sparse.shape[1] != 3:
        raise kernel_error(f"Serialized sparse should have 3 columns but received shape "
                           f"{K.shape_str(serialized_sparse.shape)}")
    return _deserialize(serialized_sparse, dtype)


def _serialize_shape(many):
    def shape(op):
        with_rank(op.inputs[0].shape, 2)
        with_rank(op.inputs[1].shape, 1)
        with_rank(op.inputs[2].shape, 1)
        return TensorShape([None, 3]) if many else TensorShape([3])
    return shape


def _deserialize_shape(many):
    def shape(op):
        if many:
            serialized = with_rank(op.inputs[0].shape, 2)
            if serialized[1].value not in (None, 3):
                raise ValueError(f"Dimension must be 3 but is {serialized[1].value}")
        else:
            serialized = with_rank_at_least(op.inputs[0].shape, 1)
            if serialized.ndims is not None and serialized[-1].value not in (None, 3):
                raise ValueError(f"Dimension must be 3 but is {serialized[-1].value}")
        return [TensorShape([None, None]), TensorShape([None]), TensorShape([None])]
    return shape


_SPARSE_IN = ("sparse_indices: int64", "sparse_values: T", "sparse_shape: int64")
_SPARSE_OUT = ("sparse_indices: int64", "sparse_values: dtype", "sparse_shape: int64")
register(OpDef("SerializeSparse", inputs=_SPARSE_IN, outputs=("serialized_sparse: out_type",),
               attrs={"T": _dtypes.ALL, "out_type": _OUT_TYPES},
               type_defaults={"out_type": _dtypes.string}, shape=_serialize_shape(False),
               host=_serialize_kernel, not_differentiable=True))
register(OpDef("SerializeManySparse", inputs=_SPARSE_IN,
               outputs=("serialized_sparse: out_type",),
               attrs={"T": _dtypes.ALL, "out_type": _OUT_TYPES},
               type_defaults={"out_type": _dtypes.string}, shape=_serialize_shape(True),
               host=_serialize_many_kernel, not_differentiable=True))
register(OpDef("DeserializeSparse", inputs=("serialized_sparse: Tserialized",),
               outputs=_SPARSE_OUT,
               attrs={"dtype": REQUIRED, "Tserialized": _OUT_TYPES},
               shape=_deserialize_shape(False), host=_deserialize_kernel,
               not_differentiable=True))
register(OpDef("DeserializeManySparse", inputs=("serialized_sparse: string",),
               outputs=_SPARSE_OUT, attrs={"dtype": REQUIRED},
               shape=_deserialize_shape(True), host=_deserialize_many_kernel,
               not_differentiable=True))


def serialize_sparse(sp_input, name=None, out_type=_dtypes.string):
    """A string 3-vector holding the SparseTensor (its three TensorProtos, serialized)."""
    sp_input = convert_to_sparse_tensor(sp_input)
    return apply_op("SerializeSparse", name=name, sparse_indices=sp_input.indices,
                    sparse_values=sp_input.values, sparse_shape=sp_input.dense_shape,
                    out_type=out_type)


def serialize_many_sparse(sp_input, name=None, out_type=_dtypes.string):
    """[N, 3] strings: each row serializes one minibatch entry (dimension 0) of the rank
    R > 1 SparseTensor as a rank R - 1 SparseTensor."""
    sp_input = convert_to_sparse_tensor(sp_input)
    return apply_op("SerializeManySparse", name=name, sparse_indices=sp_input.indices,
                    sparse_values=sp_input.values, sparse_shape=sp_input.dense_shape,
                    out_type=out_type)


def _deserialized(op_type, serialized_sparse, dtype, rank, name):
    indices, values, shape = apply_op(op_type, name=name,
                                      serialized_sparse=serialized_sparse,
                                      dtype=_dtypes.as_dtype(dtype))
    indices.set_shape([None, rank])
    shape.set_shape([rank])
    return SparseTensor(indices, values, shape)


def deserialize_sparse(serialized_sparse, dtype, rank=None, name=None):
    """The SparseTensor of serialized [..., 3] rows, their leading dimensions first."""
    return _deserialized("DeserializeSparse", serialized_sparse, dtype, rank, name)


def deserialize_many_sparse(serialized_sparse, dtype, rank=None, name=None):
    """The minibatch SparseTensor of [N, 3] serialized rows: row i becomes entry i of a
    new first dimension; the other dimensions are the largest among the rows'."""
    return _deserialized("DeserializeManySparse", serialized_sparse, dtype, rank, name)
