"""JSON `tf.train.Example`s to their binary form, by protobuf's JSON mapping (proto3), as
TF's DecodeJSONExample does with protobuf's JsonToBinaryString:

    {"features": {"feature": {"age": {"int64List": {"value": ["35"]}},
                              "name": {"bytesList": {"value": ["aGk="]}},
                              "score": {"floatList": {"value": [0.5, "NaN"]}}}}}

- field names in lowerCamelCase ("int64List") or as in the .proto ("int64_list");
- bytes are base64 (standard or URL-safe alphabet, padding optional);
- int64 values are integral JSON numbers or decimal strings; floats are numbers or
  strings, including "NaN", "Infinity" and "-Infinity"; null is the field's default;
- unknown fields, a second member of the `kind` oneof, values of the wrong type and
  numbers out of range are errors (JsonError, with a short description).

The bytes are written as protobuf's stream writer does: fields in the order they appear
in the JSON (map entries too), float and int64 lists packed.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
import struct

from tensorflux._src.framework.protowire import LEN, encode_varint, tag

_FLOAT_MAX = 3.4028234663852886e38
_INT64 = (-(1 << 63), (1 << 63) - 1)


class JsonError(ValueError):
    pass


class _Object(list):
    """A JSON object as its (name, value) pairs, in order (arrays stay plain lists)."""


def _field(number, payload: bytes) -> bytes:
    return tag(number, LEN) + encode_varint(len(payload)) + payload


def _members(value, message, fields):
    """[(number, value)] of a JSON object for `message`, by {name: number}."""
    if value is None:
        return []
    if not isinstance(value, _Object):
        raise JsonError(f"Expected an object for {message}, got {json.dumps(value)}")
    out = []
    for name, member in value:
        number = fields.get(name)
        if number is None:
            raise JsonError(f"Cannot find field: {name} in message {message}")
        if member is not None:
            out.append((number, name, member))
    return out


def _int64(value) -> int:
    if isinstance(value, bool):
        raise JsonError(f"Invalid value for int64: {json.dumps(value)}")
    if isinstance(value, str):
        if not re.fullmatch(r"-?\d+", value.strip()):
            raise JsonError(f"Invalid value for int64: \"{value}\"")
        number = int(value)
    elif isinstance(value, int):
        number = value
    elif isinstance(value, float) and value.is_integer():
        number = int(value)
    else:
        raise JsonError(f"Invalid value for int64: {json.dumps(value)}")
    if not _INT64[0] <= number <= _INT64[1]:
        raise JsonError(f"Int64 value out of range: {value}")
    return number


def _float(value) -> float:
    specials = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}
    if isinstance(value, str):
        if value in specials:
            return specials[value]
        try:
            number = float(value)
        except ValueError:
            raise JsonError(f"Invalid value for float: \"{value}\"") from None
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        number = float(value)
    else:
        raise JsonError(f"Invalid value for float: {json.dumps(value)}")
    if math.isfinite(number) and abs(number) > _FLOAT_MAX:
        raise JsonError(f"Float out of range: {value}")
    return number


def _bytes(value) -> bytes:
    if not isinstance(value, str):
        raise JsonError(f"Invalid value for bytes: {json.dumps(value)}")
    text = value.replace("-", "+").replace("_", "/")
    try:
        return base64.b64decode(text + "=" * (-len(text) % 4), validate=True)
    except (binascii.Error, ValueError):
        raise JsonError(f"Invalid base64 value: \"{value}\"") from None


def _list(value, kind, message):
    items = [member for number, _, member in _members(value, message, {"value": 1})]
    if not items:
        return b""
    if not isinstance(items[0], list) or isinstance(items[0], _Object):
        raise JsonError(f"Expected an array for {message}.value")
    values = items[0]
    if kind == "bytes":
        return b"".join(_field(1, _bytes(v)) for v in values)
    if not values:
        return b""
    if kind == "float":
        packed = b"".join(struct.pack("<f", _float(v)) for v in values)
    else:
        packed = b"".join(encode_varint(_int64(v) & ((1 << 64) - 1)) for v in values)
    return _field(1, packed)


_KINDS = {"bytesList": (1, "bytes", "BytesList"), "bytes_list": (1, "bytes", "BytesList"),
          "floatList": (2, "float", "FloatList"), "float_list": (2, "float", "FloatList"),
          "int64List": (3, "int64", "Int64List"), "int64_list": (3, "int64", "Int64List")}


def _feature(value) -> bytes:
    numbers = {name: number for name, (number, _, _) in _KINDS.items()}
    out, seen = [], None
    for number, name, member in _members(value, "tensorflow.Feature", numbers):
        if seen is not None:
            raise JsonError(f"oneof field 'kind' is already set. Cannot set '{name}'")
        seen = name
        _, kind, message = _KINDS[name]
        out.append(_field(number, _list(member, kind, f"tensorflow.{message}")))
    return b"".join(out)


def _features(value) -> bytes:
    out = []
    for _, _, feature_map in _members(value, "tensorflow.Features", {"feature": 1}):
        if not isinstance(feature_map, _Object):
            raise JsonError("Expected an object for tensorflow.Features.feature")
        for key, feature in feature_map:
            entry = _field(1, key.encode("utf-8")) + _field(2, _feature(feature))
            out.append(_field(1, entry))
    return b"".join(out)


def _reject_constant(name):
    raise JsonError(f"Unexpected token: {name}")


def json_to_example(text: bytes) -> bytes:
    """The serialized Example a JSON text describes; raises JsonError."""
    try:
        value = json.loads(text.decode("utf-8"), object_pairs_hook=_Object,
                           parse_constant=_reject_constant)
    except UnicodeDecodeError:
        raise JsonError("Invalid UTF-8 in JSON input") from None
    except json.JSONDecodeError as e:
        raise JsonError(f"{e.msg} at line {e.lineno} column {e.colno}") from None
    return b"".join(_field(1, _features(member))
                    for _, _, member in _members(value, "tensorflow.Example", {"features": 1}))
