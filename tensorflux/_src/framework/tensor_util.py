"""Tensors as TF's TensorProto and back: `make_tensor_proto` / `make_ndarray` (TF's
tensor_util conversions, `tf.make_tensor_proto` / `tf.make_ndarray`).

A TensorProto keeps strings one per `string_val` entry and every other dtype as
little-endian `tensor_content` bytes, as TF's kernels write them.
"""

from __future__ import annotations

import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework.protos import TensorProto, shape_proto
from tensorflux._src.framework.tensor_conversion import make_ndarray as _as_array


def make_tensor_proto(values, dtype=None, shape=None, verify_shape=False,
                      allow_broadcast=False) -> TensorProto:
    """A TensorProto holding `values`, as TF's kernels write them: strings one per
    `string_val` entry, every other dtype as little-endian `tensor_content` bytes.
    With `shape`, values are filled or checked by `tf.constant`'s rules."""
    if isinstance(values, TensorProto):
        return values
    dtype = _dtypes.as_dtype(dtype) if dtype is not None else None
    if shape is not None:
        if allow_broadcast:
            array = np.asarray(values, dtype=None if dtype is None or dtype ==
                               _dtypes.string else dtype.as_numpy_dtype)
            try:
                values = np.broadcast_to(array, tuple(shape))
            except ValueError:
                raise TypeError(f"Expected Tensor's shape: {tuple(shape)}, got "
                                f"{array.shape}.") from None
        else:
            values = _as_array(values, dtype, shape, verify_shape)
    if dtype is not None and dtype.base_dtype == _dtypes.string:
        array = np.asarray(values, dtype=object)
    elif dtype is not None:
        array = np.asarray(values, dtype=dtype.as_numpy_dtype)
    else:
        array = np.asarray(values)
        if array.dtype.kind in "USO":
            array = array.astype(object)
        dtype = _dtypes.as_dtype(array.dtype) if array.dtype != object else _dtypes.string
    proto = TensorProto(dtype=dtype.as_datatype_enum,
                        tensor_shape=shape_proto(array.shape))
    if dtype.base_dtype == _dtypes.string:
        proto.string_val.extend(_as_bytes(s) for s in array.reshape(-1))
    else:
        little = array.astype(array.dtype.newbyteorder("<"), copy=False)
        proto.tensor_content = np.ascontiguousarray(little).tobytes()
    return proto


def make_ndarray(proto: TensorProto) -> np.ndarray:
    """The numpy array a TensorProto holds (TF's `tf.make_ndarray`)."""
    dtype = _dtypes.as_dtype(proto.dtype)
    shape = tuple(d.size for d in proto.tensor_shape.dim)
    count = int(np.prod(shape, dtype=np.int64))
    if dtype.base_dtype == _dtypes.string:
        out = np.empty(len(proto.string_val), dtype=object)
        out[:] = list(proto.string_val)
        return _fill(out, count).reshape(shape)
    np_dtype = np.dtype(dtype.as_numpy_dtype)
    if proto.tensor_content:
        flat = np.frombuffer(proto.tensor_content, dtype=np_dtype.newbyteorder("<"))
        return flat.astype(np_dtype).reshape(shape)
    return _fill(np.asarray(_typed_values(proto, dtype), dtype=np_dtype), count).reshape(shape)


def _typed_values(proto, dtype):
    """The repeated `*_val` field that holds `dtype`'s values in a TensorProto."""
    name = dtype.base_dtype.name
    by_name = {"float32": proto.float_val, "float64": proto.double_val,
               "int64": proto.int64_val, "bool": proto.bool_val,
               "uint32": proto.uint32_val, "uint64": proto.uint64_val}
    if name in by_name:
        return list(by_name[name])
    if name in ("float16", "bfloat16"):
        raw = np.asarray(list(proto.half_val), dtype=np.uint16)
        return raw.view(np.dtype(dtype.as_numpy_dtype))
    if name == "complex64":
        v = list(proto.scomplex_val)
        return [complex(a, b) for a, b in zip(v[::2], v[1::2])]
    if name == "complex128":
        v = list(proto.dcomplex_val)
        return [complex(a, b) for a, b in zip(v[::2], v[1::2])]
    return list(proto.int_val)  # int32, int16, int8, uint8, uint16


def _fill(flat: np.ndarray, count: int) -> np.ndarray:
    """TF's rule for short value lists: the last value repeats (an empty list is zeros)."""
    if flat.size >= count:
        return flat[:count]
    if flat.size == 0:
        return np.zeros(count, dtype=flat.dtype) if flat.dtype != object \
            else np.full(count, b"", dtype=object)
    out = np.empty(count, dtype=flat.dtype)
    out[:flat.size] = flat
    out[flat.size:] = flat[-1]
    return out


def _as_bytes(value) -> bytes:
    if isinstance(value, str):
        return value.encode("utf-8")
    return bytes(value)
