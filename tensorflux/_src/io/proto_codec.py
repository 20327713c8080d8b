"""Protocol buffer messages of any type to and from tensors, for tf.io.decode_proto and
tf.io.encode_proto (TF's decode_proto_op.cc / encode_proto_op.cc and util/proto/).

Descriptors come from the `protobuf` package: `descriptor_source` "local://" (or "") is
protobuf's default pool, the messages of every `_pb2` module the program imported, and
then tensorflux's own TF messages (tensorflow.Example, tensorflow.GraphDef...; TF: the
C++ protos linked into the binary);
a path names a file holding a serialized FileDescriptorSet; "bytes://<set>" holds one.

The wire format is read and written here, field by field as TF's kernels do, so TF's
rules hold: a singular field keeps the last value on the wire, packed and unpacked
repeated encodings are both read, a field whose wire type does not match its schema is
skipped, unknown fields are skipped, and each output is padded with the field's default.
Writing packs only fields declared `[packed = true]` (TF checks options().packed).
"""

from __future__ import annotations

import os
import struct
import threading

import numpy as np
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory, text_format

from tensorflux._src.framework import dtypes, errors
from tensorflux._src.framework import proto as tf_protos
from tensorflux._src.framework.protowire import encode_varint

_VARINT, _I64, _LEN, _SGROUP, _EGROUP, _I32 = 0, 1, 2, 3, 4, 5

# descriptor.proto's FieldDescriptorProto.Type numbers.
(T_DOUBLE, T_FLOAT, T_INT64, T_UINT64, T_INT32, T_FIXED64, T_FIXED32, T_BOOL, T_STRING,
 T_GROUP, T_MESSAGE, T_BYTES, T_UINT32, T_ENUM, T_SFIXED32, T_SFIXED64, T_SINT32,
 T_SINT64) = range(1, 19)

TYPE_NAMES = {T_DOUBLE: "double", T_FLOAT: "float", T_INT64: "int64", T_UINT64: "uint64",
              T_INT32: "int32", T_FIXED64: "fixed64", T_FIXED32: "fixed32", T_BOOL: "bool",
              T_STRING: "string", T_GROUP: "group", T_MESSAGE: "message", T_BYTES: "bytes",
              T_UINT32: "uint32", T_ENUM: "enum", T_SFIXED32: "sfixed32",
              T_SFIXED64: "sfixed64", T_SINT32: "sint32", T_SINT64: "sint64"}
# FieldDescriptor::CppTypeName, indexed by the cpp_type number.
_CPP_TYPE_NAMES = {1: "int32", 2: "int64", 3: "uint32", 4: "uint64", 5: "double",
                   6: "float", 7: "bool", 8: "enum", 9: "string", 10: "message"}

_WIRE_TYPE = {T_DOUBLE: _I64, T_FLOAT: _I32, T_INT64: _VARINT, T_UINT64: _VARINT,
              T_INT32: _VARINT, T_FIXED64: _I64, T_FIXED32: _I32, T_BOOL: _VARINT,
              T_STRING: _LEN, T_GROUP: _SGROUP, T_MESSAGE: _LEN, T_BYTES: _LEN,
              T_UINT32: _VARINT, T_ENUM: _VARINT, T_SFIXED32: _I32, T_SFIXED64: _I64,
              T_SINT32: _VARINT, T_SINT64: _VARINT}
_FIXED = {T_DOUBLE: "<d", T_FLOAT: "<f", T_FIXED64: "<Q", T_FIXED32: "<I",
          T_SFIXED32: "<i", T_SFIXED64: "<q"}

_i32, _i64, _u32, _u64 = dtypes.int32, dtypes.int64, dtypes.uint32, dtypes.uint64
# proto_utils::IsCompatibleType. TF 1.15 documents unsigned fields as the signed dtypes
# of the same width (two's complement), or uint32 as int64 exactly; later TF adds the
# unsigned dtypes. Both are accepted.
_COMPATIBLE = {
    T_DOUBLE: (dtypes.float64,), T_FLOAT: (dtypes.float32, dtypes.float64),
    T_INT64: (_i64,), T_UINT64: (_i64, _u64), T_INT32: (_i32, _i64),
    T_FIXED64: (_i64, _u64), T_FIXED32: (_i32, _i64, _u32, _u64), T_BOOL: (dtypes.bool,),
    T_STRING: (dtypes.string,), T_GROUP: (dtypes.string,), T_MESSAGE: (dtypes.string,),
    T_BYTES: (dtypes.string,), T_UINT32: (_i32, _i64, _u32, _u64), T_ENUM: (_i32,),
    T_SFIXED32: (_i32, _i64), T_SFIXED64: (_i64,), T_SINT32: (_i32, _i64),
    T_SINT64: (_i64,)}


def compatible(field_type: int, dtype) -> bool:
    return dtypes.as_dtype(dtype).base_dtype in _COMPATIBLE[field_type]


def datatype_name(dtype) -> str:
    """A dtype as TF's DataType enum names it (DT_FLOAT, DT_STRING)."""
    name = dtypes.as_dtype(dtype).base_dtype.name
    return "DT_" + {"float32": "FLOAT", "float64": "DOUBLE"}.get(name, name.upper())


def datatype_string(dtype) -> str:
    """DataTypeString: float, double, int32, string..."""
    name = dtypes.as_dtype(dtype).base_dtype.name
    return {"float32": "float", "float64": "double"}.get(name, name)


def _dataloss(text):
    return errors.DataLossError(None, None, text)


def _invalid(text):
    return errors.InvalidArgumentError(None, None, text)


# -- descriptors -------------------------------------------------------------------------------
def _protobuf():
    return descriptor_pb2, descriptor_pool, message_factory, text_format


_POOLS: dict = {}
_POOLS_LOCK = threading.Lock()


def _pool_from_set(data: bytes, descriptor_pb2, descriptor_pool):
    files = descriptor_pb2.FileDescriptorSet()
    try:
        files.ParseFromString(data)
    except Exception:  # noqa: BLE001 - protobuf's DecodeError and others
        return None
    pool = descriptor_pool.DescriptorPool()
    for file in files.file:
        try:
            pool.Add(file)
        except Exception:  # noqa: BLE001 - TypeError from upb, others from python
            raise _invalid(f"Failed to load FileDescriptorProto: {file}") from None
    return pool


def descriptor_pool_for(source):
    """util/proto/descriptors.cc's GetDescriptorPool: the registered "local://" (and ""),
    else a file holding a FileDescriptorSet, else "bytes://" and the set itself."""
    raw = source if isinstance(source, bytes) else str(source).encode("utf-8")
    source = raw.decode("utf-8", "surrogateescape")
    with _POOLS_LOCK:
        if raw in _POOLS:
            return _POOLS[raw]
    descriptor_pb2, descriptor_pool, _, _ = _protobuf()
    if raw in (b"", b"local://"):
        return descriptor_pool.Default()
    if os.path.isfile(source):
        with open(source, "rb") as f:
            pool = _pool_from_set(f.read(), descriptor_pb2, descriptor_pool)
        if pool is None:
            raise _invalid(f"descriptor_source contains invalid FileDescriptorSet: {source}")
        return pool  # read at every run: TF reads it when the kernel is built
    else:
        pool = None
        if raw.startswith(b"bytes://"):
            pool = _pool_from_set(raw[len(b"bytes://"):], descriptor_pb2, descriptor_pool)
        if pool is None:
            raise _invalid(
                "Source does not represent serialized file descriptor set proto. This may "
                "be due to a missing dependency on the file containing "
                f'REGISTER_DESCRIPTOR_POOL("{source}", ...);')
    with _POOLS_LOCK:
        _POOLS[raw] = pool
    return pool


def message_descriptor(pool, message_type):
    pools = [pool]
    if pool is descriptor_pool.Default():  # "local://": TF's own messages are linked in
        pools.append(tf_protos.pool())
    for candidate in pools:
        try:
            return candidate.FindMessageTypeByName(message_type)
        except KeyError:
            pass
    raise _invalid(f"No descriptor found for message type {message_type}")


def find_field(pool, desc, name, message_type, extensions=True):
    """The field `name` of `desc`, or (DecodeProto only) an extension by full name."""
    fd = desc.fields_by_name.get(name)
    if fd is None and extensions:
        fd = next((e for e in pool.FindAllExtensions(desc) if e.full_name == name), None)
    if fd is None:
        raise _invalid(f"Unknown field: {name} in message type {message_type}")
    return fd


def is_repeated(fd) -> bool:
    flag = getattr(fd, "is_repeated", None)  # protobuf >= 5; `label` before
    return bool(flag) if flag is not None else fd.label == fd.LABEL_REPEATED


def cpp_type_name(fd) -> str:
    return _CPP_TYPE_NAMES[fd.cpp_type]


def reserialize(pool, desc, buf: bytes, text: bool) -> bytes:
    """DecodeProto's slow path: text protos (and, with `sanitize`, binary ones) parsed by
    protobuf and written back as binary."""
    _, _, message_factory, text_format = _protobuf()
    get_class = getattr(message_factory, "GetMessageClass", None)
    cls = get_class(desc) if get_class else message_factory.MessageFactory(pool) \
        .GetPrototype(desc)
    message = cls()
    try:
        if text:
            text_format.Parse(buf.decode("utf-8", "surrogateescape"), message,
                              descriptor_pool=pool)
        else:
            message.ParseFromString(buf)
    except Exception:  # noqa: BLE001 - ParseError, DecodeError, UnicodeError...
        raise _dataloss("Unable to parse text protobuf" if text
                        else "Unable to parse binary protobuf") from None
    return message.SerializeToString()


# -- wire reading ------------------------------------------------------------------------------
class _Truncated(Exception):
    pass


def _varint(buf, pos):
    result = shift = 0
    while True:
        if pos >= len(buf) or shift >= 70:
            raise _Truncated
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result & 0xFFFFFFFFFFFFFFFF, pos
        shift += 7


def _skip(buf, pos, wire, number):
    """WireFormatLite::SkipField for one value of wire type `wire`; a group is skipped
    through its matching end tag. Returns the new position; _Truncated on bad input."""
    if wire == _VARINT:
        return _varint(buf, pos)[1]
    if wire in (_I64, _I32):
        end = pos + (8 if wire == _I64 else 4)
    elif wire == _LEN:
        length, pos = _varint(buf, pos)
        end = pos + length
    elif wire == _SGROUP:
        while True:
            tag, pos = _varint(buf, pos)
            if tag & 7 == _EGROUP:
                if tag >> 3 != number:
                    raise _Truncated
                return pos
            pos = _skip(buf, pos, tag & 7, tag >> 3)
    else:
        raise _Truncated
    if end > len(buf):
        raise _Truncated
    return end


def _value(buf, pos, ftype, number):
    """One value of a field of type `ftype` (already checked to have the schema's wire
    type): (python value, new position). Integers are returned unwrapped (varints as
    unsigned 64-bit) and wrapped to the output dtype later."""
    if ftype in _FIXED:
        fmt = _FIXED[ftype]
        end = pos + struct.calcsize(fmt)
        if end > len(buf):
            raise _Truncated
        return struct.unpack_from(fmt, buf, pos)[0], end
    if ftype in (T_STRING, T_BYTES, T_MESSAGE):
        length, pos = _varint(buf, pos)
        if pos + length > len(buf):
            raise _Truncated
        return bytes(buf[pos:pos + length]), pos + length
    if ftype == T_GROUP:
        start = pos
        end = _skip(buf, pos, _SGROUP, number)
        # The group's fields, without the end tag: its message in binary form.
        tag_len = len(encode_varint((number << 3) | _EGROUP))
        return bytes(buf[start:end - tag_len]), end
    v, pos = _varint(buf, pos)
    if ftype == T_SINT32:
        v &= 0xFFFFFFFF
        return (v >> 1) ^ -(v & 1), pos
    if ftype == T_SINT64:
        return (v >> 1) ^ -(v & 1), pos
    if ftype == T_BOOL:
        return v != 0, pos
    if ftype in (T_INT32, T_UINT32, T_ENUM):
        return v & 0xFFFFFFFF, pos  # read as varint32: the low 32 bits
    return v, pos


def _packed(buf, pos, length, ftype, number):
    """The values of a packed field; TF's counting pass's errors."""
    end = pos + length
    if end > len(buf):
        raise _dataloss("ReadPackedValues: Skipping packed field failed")
    values = []
    if ftype in _FIXED:
        size = struct.calcsize(_FIXED[ftype])
        if length % size:
            raise _dataloss(f"Illegal data length for packed fixed-size type: {length}")
        fmt = "<" + _FIXED[ftype][1] * (length // size)
        return list(struct.unpack_from(fmt, buf, pos)), end
    if length and buf[end - 1] & 0x80:
        raise _dataloss("Corrupt packed varint")
    while pos < end:
        try:
            v, pos = _value(buf, pos, ftype, number)
        except _Truncated:
            raise _dataloss("Corrupt packed varint") from None
        values.append(v)
    return values, end


def read_fields(buf: bytes, fields: dict) -> dict:
    """{field number: [values]} for the requested fields (number -> (type, repeated)) of
    one serialized message, by TF's Collect loop. Singular fields keep their last value."""
    found = {number: [] for number in fields}
    pos, n = 0, len(buf)
    while pos < n:
        try:
            tag, after = _varint(buf, pos)
        except _Truncated:
            break  # ReadTag gives 0: the loop ends, and the rest is unconsumed
        if tag == 0 or tag & 7 == _EGROUP:
            break
        pos = after
        number, wire = tag >> 3, tag & 7
        field = fields.get(number)
        if field is None:
            try:
                pos = _skip(buf, pos, wire, number)
            except _Truncated:
                raise _dataloss("Failed skipping unrequested field") from None
            continue
        ftype, repeated = field
        schema_wire = _WIRE_TYPE[ftype]
        if wire == _LEN and schema_wire != _LEN:
            try:
                length, pos = _varint(buf, pos)
            except _Truncated:
                raise _dataloss("CollectField: Failed reading packed size") from None
            values, pos = _packed(buf, pos, length, ftype, number)
        elif wire != schema_wire:
            try:
                pos = _skip(buf, pos, wire, number)
            except _Truncated:
                raise _dataloss("CollectField: Failed skipping malformed field") from None
            continue
        else:
            try:
                value, pos = _value(buf, pos, ftype, number)
            except _Truncated:
                raise _dataloss("ReadValue: Failed skipping field when counting") from None
            values = [value]
        if repeated:
            found[number].extend(values)
        elif values:
            found[number] = values[-1:]
    if pos != n:
        raise _dataloss("CountFields: Failed to consume entire buffer")
    return found


# -- wire writing ------------------------------------------------------------------------------
def wrap(v: int, bits: int, signed: bool) -> int:
    v &= (1 << bits) - 1
    return v - (1 << bits) if signed and v >> (bits - 1) else v


def _encode_value(ftype, v) -> bytes:
    """One value's bytes (no tag), after WireFormatLite's Write*NoTag; `v` is a tensor
    element, cast to the field's C++ type as the kernel's static_cast does."""
    if ftype == T_FLOAT:
        return struct.pack("<f", np.float32(v))
    if ftype == T_DOUBLE:
        return struct.pack("<d", float(v))
    if ftype == T_BOOL:
        return b"\x01" if v else b"\x00"
    v = int(v)
    if ftype in (T_FIXED32, T_SFIXED32):
        return struct.pack("<I", v & 0xFFFFFFFF)
    if ftype in (T_FIXED64, T_SFIXED64):
        return struct.pack("<Q", v & 0xFFFFFFFFFFFFFFFF)
    if ftype in (T_INT32, T_ENUM):
        return encode_varint(wrap(v, 32, True))  # negative: 10 bytes, sign-extended
    if ftype == T_UINT32:
        return encode_varint(v & 0xFFFFFFFF)
    if ftype == T_SINT32:
        v = wrap(v, 32, True)
        return encode_varint(((v << 1) ^ (v >> 31)) & 0xFFFFFFFF)
    if ftype == T_SINT64:
        v = wrap(v, 64, True)
        return encode_varint((v << 1) ^ (v >> 63))
    return encode_varint(v)  # int64, uint64


def write_field(out: bytearray, number, ftype, packed, values) -> None:
    """Appends one (possibly repeated) field holding `values` to `out`."""
    if ftype in (T_STRING, T_BYTES, T_MESSAGE):
        for v in values:
            out += encode_varint((number << 3) | _LEN) + encode_varint(len(v)) + v
    elif ftype == T_GROUP:
        for v in values:
            out += encode_varint((number << 3) | _SGROUP) + v
            out += encode_varint((number << 3) | _EGROUP)
    elif packed:
        body = b"".join(_encode_value(ftype, v) for v in values)
        out += encode_varint((number << 3) | _LEN) + encode_varint(len(body)) + body
    else:
        tag = encode_varint((number << 3) | _WIRE_TYPE[ftype])
        for v in values:
            out += tag + _encode_value(ftype, v)
