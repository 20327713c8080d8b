"""A small protocol-buffer implementation: the wire format plus table-driven messages.

TensorBoard event files, `Summary` tensors and (later) `tf.train.Example` records are
protocol buffers. Rather than depending on `protobuf` and generated code, a message is
a Python class with a table of its fields, using the field numbers and types of TF's
.proto files:

    class HistogramProto(Message):
        FIELDS = (Field(1, "min", "double"), ...,
                  Field(6, "bucket_limit", "double", repeated=True))

Instances behave like protobuf's Python messages for the parts TF1 programs use:
keyword construction, attribute access with proto3 defaults, `HasField`, `ClearField`,
`WhichOneof`, repeated fields with `add()`/`append()`, map fields as dicts,
`SerializeToString()`, `ParseFromString()` / `FromString()`, `CopyFrom`, `MergeFrom`.
Reading an unset sub-message returns an empty one that joins its parent only when
something is written into it, so reading never changes what is serialized (protobuf's
rule; it matters for oneofs such as `Summary.Value.value`).

Encoding follows proto3: fields go out in field-number order, scalars equal to their
default are skipped unless they belong to a oneof, repeated numeric fields are packed,
and fields a table does not know are kept as raw bytes and written back unchanged.
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass
from typing import Callable

# Wire types (encoding.md in the protobuf docs).
VARINT, I64, LEN, I32 = 0, 1, 2, 5

_U64 = (1 << 64) - 1


class DecodeError(ValueError):
    """Bytes that are not a valid encoding of the message (protobuf's DecodeError)."""


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


def zigzag_encode(value: int) -> int:
    return (value << 1) ^ (value >> 63)


def zigzag_decode(value: int) -> int:
    return (value >> 1) ^ -(value & 1)


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


# -- scalar kinds -------------------------------------------------------------------------------
def _to_signed(value: int, bits: int) -> int:
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >> (bits - 1) else value


@dataclass(frozen=True)
class _Kind:
    """How one scalar type is written: its wire type, Python default and converters."""

    wire_type: int
    default: object
    encode: Callable  # Python value -> payload bytes (varint kinds: the int to write)
    decode: Callable  # wire value -> Python value
    coerce: Callable  # user value -> Python value (raises TypeError/ValueError)


def _fixed(fmt):
    size = struct.calcsize(fmt)
    return (lambda v: struct.pack(fmt, v)), (lambda raw: struct.unpack(fmt, raw[:size])[0])


def _as_int(value):
    if isinstance(value, float) and not value.is_integer():
        raise TypeError(f"{value!r} has type float, but expected one of: int")
    return int(value)


def _as_text(value):
    return value.decode("utf-8") if isinstance(value, (bytes, bytearray)) else str(value)


def _as_bytes(value):
    return value.encode("utf-8") if isinstance(value, str) else bytes(value)


def _identity(value):
    return value


_FLOAT32_MAX = 3.4028234663852886e38


def _as_float32(value):
    """A `float` field holds a float32: protobuf rounds on assignment (so a value reads
    back as it will after a round trip) and turns out-of-range values into +-inf."""
    value = float(value)
    if value > _FLOAT32_MAX:
        return math.inf
    if value < -_FLOAT32_MAX:
        return -math.inf
    return struct.unpack("<f", struct.pack("<f", value))[0]


_KINDS = {
    "int32": _Kind(VARINT, 0, _identity, lambda v: _to_signed(v, 32), _as_int),
    "int64": _Kind(VARINT, 0, _identity, lambda v: _to_signed(v, 64), _as_int),
    "uint32": _Kind(VARINT, 0, _identity, lambda v: v & 0xFFFFFFFF, _as_int),
    "uint64": _Kind(VARINT, 0, _identity, _identity, _as_int),
    "sint32": _Kind(VARINT, 0, zigzag_encode, lambda v: _to_signed(zigzag_decode(v), 32),
                    _as_int),
    "sint64": _Kind(VARINT, 0, zigzag_encode, zigzag_decode, _as_int),
    "bool": _Kind(VARINT, False, int, bool, bool),
    "enum": _Kind(VARINT, 0, _identity, lambda v: _to_signed(v, 32), _as_int),
    "double": _Kind(I64, 0.0, *_fixed("<d"), float),
    "float": _Kind(I32, 0.0, *_fixed("<f"), _as_float32),
    "fixed64": _Kind(I64, 0, *_fixed("<Q"), _as_int),
    "sfixed64": _Kind(I64, 0, *_fixed("<q"), _as_int),
    "fixed32": _Kind(I32, 0, *_fixed("<I"), _as_int),
    "sfixed32": _Kind(I32, 0, *_fixed("<i"), _as_int),
    "string": _Kind(LEN, "", lambda v: v.encode("utf-8"),
                    lambda raw: bytes(raw).decode("utf-8"), _as_text),
    "bytes": _Kind(LEN, b"", _identity, bytes, _as_bytes),
}
_PACKABLE = {name for name, kind in _KINDS.items() if kind.wire_type != LEN}


def _payload(kind: _Kind, value) -> bytes:
    """The bytes of one value without its tag (varints encoded, LEN values prefixed)."""
    raw = kind.encode(value)
    if kind.wire_type == VARINT:
        return encode_varint(raw)
    if kind.wire_type == LEN:
        return encode_varint(len(raw)) + raw
    return raw


def _unpack(kind: _Kind, raw: bytes) -> list:
    """The values of a packed repeated field."""
    if kind.wire_type == VARINT:
        values, pos = [], 0
        while pos < len(raw):
            value, pos = decode_varint(raw, pos)
            values.append(kind.decode(value))
        return values
    width = 8 if kind.wire_type == I64 else 4
    if len(raw) % width:
        raise DecodeError("Packed field length is not a multiple of its element size")
    return [kind.decode(raw[i:i + width]) for i in range(0, len(raw), width)]


# -- field tables -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Field:
    """One field of a message table.

    kind:     a scalar type ("int64", "string", "double", ...), "message" or "map".
    message:  for "message" fields and message-valued maps: a zero-argument callable
              returning the Message class (so tables can refer to later or own classes).
    map_key / map_value: for "map" fields, the key kind and (for scalar maps) value kind.
    oneof:    the oneof group's name: members have presence, and setting one clears
              the others.
    packed:   repeated numeric fields are packed unless False (proto3's default).
    """

    number: int
    name: str
    kind: str
    repeated: bool = False
    message: Callable | None = None
    oneof: str | None = None
    map_key: str | None = None
    map_value: str | None = None
    packed: bool = True

    @property
    def message_class(self):
        return self.message()

    @property
    def is_message(self) -> bool:
        return self.kind == "message"

    @property
    def is_map(self) -> bool:
        return self.kind == "map"


# -- containers ---------------------------------------------------------------------------------
class _Repeated(list):
    """A repeated field: a list that tells its message when it is written to."""

    def __init__(self, owner, field, values=()):
        super().__init__()
        self._owner, self._field = owner, field
        if values:
            self.extend(values)

    def _convert(self, value):
        return _KINDS[self._field.kind].coerce(value)

    def append(self, value):
        super().append(self._convert(value))
        self._owner._mark_present()

    def extend(self, values):
        super().extend(self._convert(v) for v in values)
        self._owner._mark_present()

    def insert(self, index, value):
        super().insert(index, self._convert(value))
        self._owner._mark_present()

    def __setitem__(self, index, value):
        if isinstance(index, slice):
            value = [self._convert(v) for v in value]
        else:
            value = self._convert(value)
        super().__setitem__(index, value)
        self._owner._mark_present()

    def __iadd__(self, values):
        self.extend(values)
        return self

    def MergeFrom(self, other):  # noqa: N802 - protobuf's name
        self.extend(other)


def _as_message(field, value):
    """`value` as a message of `field`'s message class (a dict gives its fields)."""
    cls = field.message_class
    if isinstance(value, dict):
        return cls(**value)
    if not isinstance(value, cls):
        raise TypeError(f"Expected {cls.__name__}, got {type(value).__name__}")
    return value


class _RepeatedMessages(_Repeated):
    """A repeated message field; `add(**fields)` appends a new message and returns it."""

    def _convert(self, value):
        return _as_message(self._field, value)

    def add(self, **fields):
        message = self._field.message_class(**fields)
        self.append(message)
        return message


class _Map(dict):
    """A map field. Reading a missing key of a message-valued map creates its entry."""

    def __init__(self, owner, field, values=None):
        super().__init__()
        self._owner, self._field = owner, field
        if values:
            for key, value in dict(values).items():
                self[key] = value

    def _convert_value(self, value):
        if self._field.message is not None:
            return _as_message(self._field, value)
        return _KINDS[self._field.map_value].coerce(value)

    def __setitem__(self, key, value):
        key = _KINDS[self._field.map_key].coerce(key)
        super().__setitem__(key, self._convert_value(value))
        self._owner._mark_present()

    def __missing__(self, key):
        if self._field.message is None:
            return _KINDS[self._field.map_value].default
        value = self._field.message_class()
        self[key] = value
        return value

    def get_or_create(self, key):
        return self[key]

    def update(self, *args, **kwargs):
        for key, value in dict(*args, **kwargs).items():
            self[key] = value

    def MergeFrom(self, other):  # noqa: N802 - protobuf's name
        self.update(other)


# -- messages -----------------------------------------------------------------------------------
class Message:
    """Base class of table-driven messages. Subclasses set `FIELDS`."""

    FIELDS: tuple = ()

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._by_name = {f.name: f for f in cls.FIELDS}
        cls._by_number = {f.number: f for f in cls.FIELDS}
        cls._in_order = tuple(sorted(cls.FIELDS, key=lambda f: f.number))
        oneofs = {}
        for f in cls.FIELDS:
            if f.oneof:
                oneofs.setdefault(f.oneof, []).append(f.name)
        cls._oneofs = oneofs

    def __init__(self, **fields):
        object.__setattr__(self, "_values", {})
        object.__setattr__(self, "_unset_children", {})
        object.__setattr__(self, "_unknown", bytearray())
        object.__setattr__(self, "_parent", None)  # (message, field name) until attached
        for name, value in fields.items():
            if value is not None:
                setattr(self, name, value)

    # -- field access --------------------------------------------------------------------------
    def _field(self, name) -> Field:
        try:
            return self._by_name[name]
        except KeyError:
            raise AttributeError(f"Protocol message {type(self).__name__} has no "
                                 f'"{name}" field.') from None

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        field = self._field(name)
        values = self._values
        if name in values:
            return values[name]
        if field.is_map:
            values[name] = _Map(self, field)
            return values[name]
        if field.repeated:
            container = _RepeatedMessages if field.is_message else _Repeated
            values[name] = container(self, field)
            return values[name]
        if field.is_message:
            # An empty child that joins this message once something is written into it.
            child = self._unset_children.get(name)
            if child is None:
                child = field.message_class()
                object.__setattr__(child, "_parent", (self, name))
                self._unset_children[name] = child
            return child
        return _KINDS[field.kind].default

    def __setattr__(self, name, value):
        if name.startswith("_"):
            object.__setattr__(self, name, value)
            return
        field = self._field(name)
        if field.is_map:
            self._values[name] = _Map(self, field, value)
        elif field.repeated:
            container = _RepeatedMessages if field.is_message else _Repeated
            self._values[name] = container(self, field, value)
        elif field.is_message:
            cls = field.message_class
            if isinstance(value, dict):
                value = cls(**value)
            if not isinstance(value, cls):
                raise TypeError(f"Expected {cls.__name__} for field {name}, got "
                                f"{type(value).__name__}")
            self._set_singular(field, value)
        else:
            try:
                value = _KINDS[field.kind].coerce(value)
            except (TypeError, ValueError) as e:
                raise TypeError(f"Cannot set {type(self).__name__}.{name} to {value!r}: "
                                f"{e}") from None
            self._set_singular(field, value)
        self._mark_present()

    def _set_singular(self, field, value):
        if field.oneof:
            for other in self._oneofs[field.oneof]:
                if other != field.name:
                    self._values.pop(other, None)
        self._unset_children.pop(field.name, None)
        self._values[field.name] = value

    def _mark_present(self):
        """Called on every write: attaches this message to the parent that made it."""
        if self._parent is not None:
            parent, name = self._parent
            object.__setattr__(self, "_parent", None)
            parent._set_singular(parent._field(name), self)
            parent._mark_present()

    # -- protobuf's message API ----------------------------------------------------------------
    def HasField(self, name) -> bool:  # noqa: N802 - protobuf's names
        field = self._by_name.get(name)
        if field is None and name in self._oneofs:
            return self.WhichOneof(name) is not None
        if field is None:
            raise ValueError(f'Protocol message has no singular "{name}" field.')
        if field.repeated or field.is_map:
            raise ValueError(f'Protocol message has no singular "{name}" field.')
        if field.is_message or field.oneof:
            return name in self._values
        raise ValueError(f'Can\'t test non-optional, non-submessage field "{name}" for '
                         "presence in proto3.")

    def ClearField(self, name):  # noqa: N802
        if name in self._oneofs:
            for member in self._oneofs[name]:
                self._values.pop(member, None)
            return
        self._field(name)
        self._values.pop(name, None)
        self._unset_children.pop(name, None)

    def WhichOneof(self, group):  # noqa: N802
        if group not in self._oneofs:
            raise ValueError(f'Protocol message has no oneof "{group}" field.')
        for name in self._oneofs[group]:
            if name in self._values:
                return name
        return None

    def ListFields(self):  # noqa: N802
        """(Field, value) of every field that would be serialized, by field number."""
        listed = []
        for field in self._in_order:
            if field.name not in self._values:
                continue
            value = self._values[field.name]
            if (field.repeated or field.is_map) and not value:
                continue
            if not (field.repeated or field.is_map or field.is_message or field.oneof) \
                    and _is_default(field, value):
                continue
            listed.append((field, value))
        return listed

    def Clear(self):  # noqa: N802
        self._values.clear()
        self._unset_children.clear()
        self._unknown.clear()

    def SerializeToString(self, deterministic=None) -> bytes:  # noqa: N802, ARG002
        out = bytearray()
        _write_message(self, out)
        return bytes(out)

    def ByteSize(self) -> int:  # noqa: N802
        return len(self.SerializeToString())

    def ParseFromString(self, data) -> int:  # noqa: N802
        self.Clear()
        return self.MergeFromString(data)

    def MergeFromString(self, data) -> int:  # noqa: N802
        _merge_bytes(self, data)
        self._mark_present()
        return len(data)

    @classmethod
    def FromString(cls, data):  # noqa: N802
        message = cls()
        message.MergeFromString(data)
        return message

    def CopyFrom(self, other):  # noqa: N802
        if other is self:
            return
        self.ParseFromString(other.SerializeToString())

    def MergeFrom(self, other):  # noqa: N802
        self.MergeFromString(other.SerializeToString())

    # -- Python protocol -----------------------------------------------------------------------
    def __eq__(self, other):
        if type(other) is not type(self):
            return NotImplemented
        return (self.ListFields() == other.ListFields()
                and bytes(self._unknown) == bytes(other._unknown))

    def __hash__(self):
        raise TypeError("unhashable object")

    def __reduce__(self):
        return type(self).FromString, (self.SerializeToString(),)

    def __str__(self):
        return text_format(self)

    def __repr__(self):
        return text_format(self)


def _is_default(field, value) -> bool:
    default = _KINDS[field.kind].default
    if isinstance(value, float):
        # -0.0 == 0.0, but it is a different value and protobuf writes it.
        return value == 0.0 and math.copysign(1.0, value) > 0
    return value == default


# -- encoding -----------------------------------------------------------------------------------
def _write_message(message, out: bytearray):
    for field, value in message.ListFields():
        if field.is_map:
            _write_map(field, value, out)
        elif field.repeated:
            _write_repeated(field, value, out)
        elif field.is_message:
            _write_len(field.number, value.SerializeToString(), out)
        else:
            kind = _KINDS[field.kind]
            out += tag(field.number, kind.wire_type)
            out += _payload(kind, value)
    out += message._unknown


def _write_len(number, payload: bytes, out: bytearray):
    out += tag(number, LEN)
    out += encode_varint(len(payload))
    out += payload


def _write_repeated(field, values, out: bytearray):
    if field.is_message:
        for value in values:
            _write_len(field.number, value.SerializeToString(), out)
        return
    kind = _KINDS[field.kind]
    if field.packed and field.kind in _PACKABLE:
        _write_len(field.number, b"".join(_payload(kind, v) for v in values), out)
        return
    for value in values:
        out += tag(field.number, kind.wire_type)
        out += _payload(kind, value)


def _write_map(field, entries: dict, out: bytearray):
    """Each entry is a message {1: key, 2: value}; keys sorted, so output is stable."""
    key_kind = _KINDS[field.map_key]
    for key in sorted(entries):
        value = entries[key]
        entry = bytearray(tag(1, key_kind.wire_type) + _payload(key_kind, key))
        if field.message is not None:
            _write_len(2, value.SerializeToString(), entry)
        else:
            value_kind = _KINDS[field.map_value]
            entry += tag(2, value_kind.wire_type) + _payload(value_kind, value)
        _write_len(field.number, bytes(entry), out)


# -- decoding -----------------------------------------------------------------------------------
def _merge_bytes(message, data):
    """Merges the fields encoded in `data` into `message` (protobuf's MergeFromString)."""
    for number, wire_type, value, start, end in iter_fields(data):
        field = message._by_number.get(number)
        if field is None or not _read_field(message, field, wire_type, value):
            message._unknown.extend(memoryview(data)[start:end])


def _read_field(message, field, wire_type, value) -> bool:
    """Stores one decoded field; False when the wire type does not fit the field."""
    if field.is_map:
        return wire_type == LEN and _read_map_entry(message, field, value)
    if field.is_message:
        if wire_type != LEN:
            return False
        if field.repeated:
            getattr(message, field.name).append(field.message_class.FromString(value))
        elif field.name in message._values:
            _merge_bytes(message._values[field.name], value)  # repeated occurrences merge
        else:
            message._set_singular(field, field.message_class.FromString(value))
        return True
    kind = _KINDS[field.kind]
    if field.repeated:
        values = getattr(message, field.name)
        if wire_type == LEN and field.kind in _PACKABLE:
            list.extend(values, _unpack(kind, value))  # decoded values need no coercion
        elif wire_type == kind.wire_type:
            list.append(values, kind.decode(value))
        else:
            return False
        return True
    if wire_type != kind.wire_type:
        return False
    message._set_singular(field, kind.decode(value))
    return True


def _read_map_entry(message, field, raw) -> bool:
    key_kind = _KINDS[field.map_key]
    key, value = key_kind.default, None
    for number, wire_type, item, _, _ in iter_fields(raw):
        if number == 1 and wire_type == key_kind.wire_type:
            key = key_kind.decode(item)
        elif number == 2:
            value = item
    entries = getattr(message, field.name)
    if field.message is not None:
        dict.__setitem__(entries, key, field.message_class.FromString(value or b""))
    else:
        value_kind = _KINDS[field.map_value]
        dict.__setitem__(entries, key,
                         value_kind.default if value is None else value_kind.decode(value))
    return True


# -- text form (for printing) -------------------------------------------------------------------
def text_format(message, indent: int = 0) -> str:
    """protobuf's text format, close enough for reading what a message holds."""
    pad = " " * indent
    lines = []
    for field, value in message.ListFields():
        if field.is_map:
            for key in sorted(value):
                lines.append(f"{pad}{field.name} {{")
                lines.append(f"{pad}  key: {_text_scalar(key)}")
                lines.append(_text_value(field, "value", value[key], indent + 2))
                lines.append(f"{pad}}}")
        elif field.repeated:
            lines.extend(_text_value(field, field.name, v, indent) for v in value)
        else:
            lines.append(_text_value(field, field.name, value, indent))
    return "".join(line + "\n" for line in lines)


def _text_value(field, name, value, indent):
    pad = " " * indent
    if isinstance(value, Message):
        return f"{pad}{name} {{\n{text_format(value, indent + 2)}{pad}}}"
    return f"{pad}{name}: {_text_scalar(value)}"


def _text_scalar(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        value = value.encode("utf-8")
    if isinstance(value, bytes):
        return '"' + "".join(_escape_byte(b) for b in value) + '"'
    return repr(value)


def _escape_byte(b: int) -> str:
    special = {0x0A: "\\n", 0x0D: "\\r", 0x09: "\\t", 0x22: '\\"', 0x27: "\\'", 0x5C: "\\\\"}
    if b in special:
        return special[b]
    return chr(b) if 0x20 <= b < 0x7F else f"\\{b:03o}"
