"""tf.io.decode_proto and tf.io.encode_proto: the DecodeProtoV2 and EncodeProto host
records (TF's kernels over io/proto_codec.py, which reads and writes the wire format).

DecodeProtoV2 turns each serialized message of `bytes` (shape batch) into `sizes` (int32,
batch + [len(field_names)], the number of values of each field) and one tensor per field
(batch + [max count over the batch, at least 1]), padded with the field's default.
EncodeProto is the inverse: values [batch..., max] with `sizes` saying how many of each
to write. Descriptor, field and dtype checks happen when the kernel runs, with TF's
messages (TF checks them when it builds the kernel, at the first run). Neither op is
differentiable.
"""

from __future__ import annotations

import collections

import numpy as np

from tensorflux._src.framework import dtypes
from tensorflux._src.framework.tensor_shape import TensorShape, unknown_shape
from tensorflux._src.io import proto_codec as codec
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.op_helpers import dims_str, kernel_error
from tensorflux._src.ops.registry import REQUIRED, OpDef, register
from tensorflux._src.ops.strings.string_util import as_bytes, strings_like

__all__ = ["decode_proto", "encode_proto"]

DecodeProtoV2Output = collections.namedtuple("DecodeProtoV2", ["sizes", "values"])


def _text(value):
    return value.decode("utf-8", "surrogateescape") if isinstance(value, bytes) else str(value)


def _default(fd):
    """The value padding a field: its declared default (0 / "" for repeated fields and
    messages, as the C++ descriptor's default_value_* give)."""
    if fd.type in (codec.T_MESSAGE, codec.T_GROUP):
        return b""
    if codec.is_repeated(fd):
        return {codec.T_BOOL: False, codec.T_STRING: b"", codec.T_BYTES: b"",
                codec.T_FLOAT: 0.0, codec.T_DOUBLE: 0.0}.get(fd.type, 0)
    value = fd.default_value
    return value.encode("utf-8") if isinstance(value, str) else value


def _as_output(values, dtype):
    """Python values (integers unwrapped) as an array of `dtype`, wrapping integers to its
    width as the kernel's static_casts do."""
    if dtype == dtypes.string:
        return values
    np_dtype = dtype.as_numpy_dtype
    if dtype.is_integer:
        bits = np.dtype(np_dtype).itemsize * 8
        signed = np.issubdtype(np_dtype, np.signedinteger)
        values = [codec.wrap(int(v), bits, signed) for v in values]
    return values


def _decode_kernel(bytes, *, message_type, field_names, output_types,  # noqa: A002
                   descriptor_source, message_format, sanitize):
    message_type = _text(message_type)
    pool = codec.descriptor_pool_for(descriptor_source)
    desc = codec.message_descriptor(pool, message_type)
    if len(field_names) != len(output_types):
        raise kernel_error("field_names and output_types attributes must have the same "
                           "length")
    fds = [codec.find_field(pool, desc, _text(n), message_type, True) for n in field_names]
    out_dtypes = [dtypes.as_dtype(t).base_dtype for t in output_types]
    for fd, dtype in zip(fds, out_dtypes):
        if not codec.compatible(fd.type, dtype):
            raise kernel_error(f"Unexpected output type for {fd.full_name}: "
                               f"{codec.cpp_type_name(fd)} to {codec.datatype_name(dtype)}")
    fmt = _text(message_format)
    if fmt not in ("binary", "text"):
        raise kernel_error("format must be one of binary or text")
    bufs = np.asarray(bytes, dtype=object)
    batch = bufs.shape
    if bufs.size < 1:
        raise kernel_error("Bufs argument must contain at least one value")
    wanted = {fd.number: (fd.type, codec.is_repeated(fd)) for fd in fds}
    parsed = []
    for buf in bufs.reshape(-1):
        buf = as_bytes(buf)
        if fmt == "text" or sanitize:
            buf = codec.reserialize(pool, desc, buf, text=fmt == "text")
        parsed.append(codec.read_fields(buf, wanted))
    sizes = np.array([[len(found[fd.number]) for fd in fds] for found in parsed],
                     dtype=np.int32).reshape(batch + (len(fds),))
    outputs = []
    for i, (fd, dtype) in enumerate(zip(fds, out_dtypes)):
        width = max([1] + [len(found[fd.number]) for found in parsed])
        pad = _default(fd)
        flat = []
        for found in parsed:
            got = found[fd.number]
            flat.extend(got + [pad] * (width - len(got)))
        flat = _as_output(flat, dtype)
        if dtype == dtypes.string:
            outputs.append(strings_like(batch + (width,), flat))
        else:
            outputs.append(np.array(flat, dtype=dtype.as_numpy_dtype)
                           .reshape(batch + (width,)))
    return (sizes, *outputs)


def _decode_shape(op):
    batch = op.inputs[0].shape
    n = len(op.attrs["output_types"])
    if batch.ndims is None:
        return [unknown_shape()] * (n + 1)
    return [batch.concatenate([n])] + [batch.concatenate([None])] * n


register(OpDef("DecodeProtoV2", inputs=("bytes: string",),
               outputs=("sizes: int32", "values: list(output_types)"),
               attrs={"message_type": REQUIRED, "field_names": REQUIRED,
                      "output_types": REQUIRED, "descriptor_source": "local://",
                      "message_format": "binary", "sanitize": False},
               shape=_decode_shape, host=_decode_kernel, not_differentiable=True))


def _check_list(value, arg, op):
    if not isinstance(value, (list, tuple)):
        raise TypeError(f"Expected list for '{arg}' argument to '{op}' Op, not {value!r}.")
    return value


def decode_proto(bytes, message_type, field_names, output_types,  # noqa: A002 - TF's names
                 descriptor_source="local://", message_format="binary", sanitize=False,
                 name=None):
    """The fields `field_names` of serialized `message_type` protos: (sizes, values), a
    tensor per field, shape bytes.shape + [max repeat count], padded with defaults."""
    field_names = [_text(n) for n in _check_list(field_names, "field_names",
                                                 "decode_proto_v2")]
    output_types = tuple(dtypes.as_dtype(t).base_dtype for t in _check_list(
        output_types, "output_types", "decode_proto_v2"))
    result = apply_op("DecodeProtoV2", name=name or "DecodeProtoV2", bytes=bytes,
                      message_type=_text(message_type), field_names=field_names,
                      output_types=output_types, descriptor_source=descriptor_source,
                      message_format=_text(message_format), sanitize=bool(sanitize))
    result = list(result) if isinstance(result, (list, tuple)) else [result]
    return DecodeProtoV2Output(result[0], result[1:])


# -- EncodeProto -------------------------------------------------------------------------------
def _encode_kernel(sizes, *values, field_names, message_type, descriptor_source):
    message_type = _text(message_type)
    pool = codec.descriptor_pool_for(descriptor_source)
    desc = codec.message_descriptor(pool, message_type)
    names = [_text(n) for n in field_names]
    fds = [codec.find_field(pool, desc, n, message_type, False) for n in names]
    if len(fds) != len(values):
        raise kernel_error("Length of inputs list must match field_names")
    prefix = None
    arrays = []
    for name, fd, v in zip(names, fds, values):
        v = np.asarray(v)
        dtype = dtypes.string if v.dtype == object else dtypes.as_dtype(v.dtype)
        if not codec.compatible(fd.type, dtype):
            raise kernel_error(f"Incompatible type for field {name}.  Saw dtype: "
                               f"{codec.datatype_string(dtype)} but field type is: "
                               f"{codec.TYPE_NAMES[fd.type]}")
        if v.ndim < 2:
            raise kernel_error(f"Invalid shape for field {name}.  Saw shape {dims_str(v.shape)}"
                               f" but it should be at least a matrix.")
        if prefix is None:
            prefix = v.shape[:-1]
        elif v.shape[:-1] != prefix:
            raise kernel_error("Values must match up to the last dimension")
        arrays.append(v.reshape(-1, v.shape[-1]))
    prefix = prefix if prefix is not None else ()
    sizes = np.asarray(sizes)
    expected = prefix + (len(fds),)
    if sizes.shape != expected:
        raise kernel_error(f"sizes should be batch_size + [len(field_names)].  Saw: "
                           f"{dims_str(sizes.shape)} but expected: {dims_str(expected)}")
    count = int(np.prod(prefix, dtype=np.int64))
    sizes = sizes.reshape(count, len(fds))
    for i, v in enumerate(arrays):
        for m in range(count):
            if sizes[m, i] > v.shape[1]:
                raise kernel_error(
                    f"Size to write must not be larger than value tensor; but saw: "
                    f"{sizes[m, i]} > {v.shape[1]} at message {m} field {i}")
    order = sorted(range(len(fds)), key=lambda i: fds[i].number)
    out = []
    for m in range(count):
        buf = bytearray()
        for i in order:
            size = int(sizes[m, i])
            if size <= 0:
                continue
            fd = fds[i]
            row = arrays[i][m, :size]
            vals = [as_bytes(x) for x in row] if fd.type in _BYTES_TYPES else list(row)
            codec.write_field(buf, fd.number, fd.type, fd.GetOptions().packed, vals)
        out.append(bytes(buf))
    return strings_like(prefix, out)


_BYTES_TYPES = (codec.T_STRING, codec.T_BYTES, codec.T_MESSAGE, codec.T_GROUP)


def _encode_shape(op):
    output = unknown_shape()
    for v in reversed(op.inputs[1:]):
        shape = v.shape
        if shape.ndims is not None and shape.ndims < 2:
            raise ValueError(f"Shape must be at least rank 2 but is rank {shape.ndims}")
        inner = unknown_shape() if shape.ndims is None else TensorShape(shape.dims[:-1])
        try:
            output = inner.merge_with(output)
        except ValueError as e:
            raise ValueError(str(e)) from None
    return output


register(OpDef("EncodeProto", inputs=("sizes: int32", "values: list(Tinput_types)"),
               outputs=("bytes: string",),
               attrs={"field_names": REQUIRED, "message_type": REQUIRED,
                      "descriptor_source": "local://"},
               shape=_encode_shape, host=_encode_kernel, not_differentiable=True))


def encode_proto(sizes, values, field_names, message_type, descriptor_source="local://",
                 name=None):
    """Serialized `message_type` protos from per-field tensors [batch..., max count] and
    `sizes` [batch..., len(field_names)] (how many values of each field to write)."""
    field_names = [_text(n) for n in _check_list(field_names, "field_names", "encode_proto")]
    values = _check_list(values, "values", "encode_proto")
    return apply_op("EncodeProto", name=name or "EncodeProto", sizes=sizes,
                    values=list(values), field_names=field_names,
                    message_type=_text(message_type), descriptor_source=descriptor_source)
