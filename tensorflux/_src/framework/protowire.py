"""The protocol-buffer wire format, for the few readers that work below messages.

TF's messages are `protobuf` classes (framework/protos.py). These primitives serve the
code that reads or writes bytes without building messages: the parsing ops' fast path
over serialized tf.train.Examples (io/example_proto.py), `tf.io.decode_proto` /
`encode_proto`, which follow TF's wire-level kernels (io/proto_codec.py), the tensor
bundle's varint-framed tables (io/tensor_bundle.py) and summary merging.
"""

from __future__ import annotations

from google.protobuf import message as _message

# Wire types (encoding.md in the protobuf docs).
VARINT, I64, LEN, I32 = 0, 1, 2, 5

_U64 = (1 << 64) - 1


class DecodeError(_message.DecodeError, ValueError):
    """Bytes that are not a valid encoding (a protobuf DecodeError, so one `except`
    catches what these readers and protobuf's own parsers raise)."""


# -- varints and tags ---------------------------------------------------------------------------
def encode_varint(value: int) -> bytes:
    """Base-128 varint; negative numbers are written as their 64-bit two's complement."""
    value &= _U64
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def decode_varint(data, pos: int) -> tuple[int, int]:
    """(value, position after it) of the varint starting at `pos`."""
    result = shift = 0
    while True:
        if pos >= len(data):
            raise DecodeError("Truncated varint")
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result & _U64, pos
        shift += 7
        if shift >= 70:
            raise DecodeError("Varint longer than 10 bytes")


def tag(number: int, wire_type: int) -> bytes:
    return encode_varint((number << 3) | wire_type)


def iter_fields(data):
    """Yields (field number, wire type, value, start, end) for each field in `data`.

    `value` is an int for varints and the raw bytes for the other wire types (decoded
    by the field's kind); data[start:end] is the whole field, tag included.
    """
    data = memoryview(data)
    pos, size = 0, len(data)
    while pos < size:
        start = pos
        key, pos = decode_varint(data, pos)
        number, wire_type = key >> 3, key & 7
        if number == 0:
            raise DecodeError("Field number 0 is invalid")
        if wire_type == VARINT:
            value, pos = decode_varint(data, pos)
        elif wire_type in (I64, I32):
            width = 8 if wire_type == I64 else 4
            value, pos = bytes(data[pos:pos + width]), pos + width
        elif wire_type == LEN:
            length, pos = decode_varint(data, pos)
            value, pos = bytes(data[pos:pos + length]), pos + length
        else:
            raise DecodeError(f"Unsupported wire type {wire_type} (groups are not supported)")
        if pos > size:
            raise DecodeError("Truncated message")
        yield number, wire_type, value, start, pos
