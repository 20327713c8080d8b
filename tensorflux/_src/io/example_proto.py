"""`tf.train.Example` and `tf.train.SequenceExample`: TF's record format for input data.

The messages are protobuf classes (framework/proto/example.proto) with the field
numbers of TensorFlow's core/example/feature.proto and example.proto:

    Example          { Features features = 1; }
    SequenceExample  { Features context = 1; FeatureLists feature_lists = 2; }
    Features         { map<string, Feature> feature = 1; }
    Feature          { oneof kind { BytesList bytes_list = 1; FloatList float_list = 2;
                                    Int64List int64_list = 3; } }
    BytesList / FloatList / Int64List { repeated bytes|float|int64 value = 1; }
    FeatureList      { repeated Feature feature = 1; }
    FeatureLists     { map<string, FeatureList> feature_list = 1; }

Float and int64 lists are written packed (TF's `[packed = true]`); the parsers accept
unpacked lists too.

`read_feature_map` is the parsing ops' fast path: it decodes only the feature map of a
serialized Example, without building message objects (parsing_ops.py calls it for every
record of a batch).
"""

from __future__ import annotations

import numpy as np

from tensorflux._src.framework.protos import (  # noqa: F401 - re-exported
    BytesList, Example, Feature, FeatureList, FeatureLists, Features, FloatList, Int64List,
    SequenceExample,
)
from tensorflux._src.framework.protowire import (
    I32, LEN, VARINT, DecodeError, decode_varint, iter_fields,
)

__all__ = ["BytesList", "Example", "Feature", "FeatureList", "FeatureLists", "Features",
           "FloatList", "Int64List", "SequenceExample"]


# -- fast path for the parsing ops ---------------------------------------------------------
# The kind of a Feature, by its oneof field number (feature.proto), as the parsing ops
# name the dtypes they produce.
KIND_BY_NUMBER = {1: "string", 2: "float", 3: "int64"}


def read_feature_map(serialized) -> dict:
    """{key (str): Feature bytes} of a serialized Example; a repeated key keeps its last
    entry, as protobuf's map parsing does. Raises DecodeError for malformed bytes."""
    features = {}
    for number, wire_type, value, _, _ in iter_fields(serialized):
        if number != 1:
            continue  # Example has no other fields; unknown ones are skipped, as protobuf does
        if wire_type != LEN:
            raise DecodeError("Example.features is not length-delimited")
        features.update(_read_map(value, "Features.feature"))
    return features


def read_feature(feature: bytes):
    """(kind, values) of a serialized Feature: kind is "string", "float", "int64", or
    None when no kind is set (TF treats such a feature as missing). Values are a list of
    bytes, a float32 array or an int64 array."""
    kind, raw = None, b""
    for number, wire_type, value, _, _ in iter_fields(feature):
        if number in KIND_BY_NUMBER:
            if wire_type != LEN:
                raise DecodeError(f"Feature field {number} is not length-delimited")
            kind, raw = KIND_BY_NUMBER[number], value  # the oneof's last member wins
    if kind is None:
        return None, []
    if kind == "string":
        return kind, [v for n, t, v, _, _ in iter_fields(raw) if n == 1 and t == LEN]
    if kind == "float":
        return kind, _read_floats(raw)
    return kind, _read_int64s(raw)


def _read_floats(raw):
    chunks = []
    for number, wire_type, value, _, _ in iter_fields(raw):
        if number != 1:
            continue
        if wire_type == LEN:  # packed: little-endian float32s back to back
            if len(value) % 4:
                raise DecodeError("Packed FloatList length is not a multiple of 4")
            chunks.append(np.frombuffer(value, "<f4"))
        elif wire_type == I32:
            chunks.append(np.frombuffer(value, "<f4"))
        else:
            raise DecodeError(f"FloatList.value has wire type {wire_type}")
    return np.concatenate(chunks).astype(np.float32) if chunks else np.zeros(0, np.float32)


def _read_int64s(raw):
    values = []
    for number, wire_type, value, _, _ in iter_fields(raw):
        if number != 1:
            continue
        if wire_type == LEN:  # packed: varints back to back
            pos = 0
            while pos < len(value):
                v, pos = decode_varint(value, pos)
                values.append(v)
        elif wire_type == VARINT:
            values.append(value)
        else:
            raise DecodeError(f"Int64List.value has wire type {wire_type}")
    # Varints are unsigned 64-bit; the int64 is their two's complement reading.
    return np.array(values, np.uint64).view(np.int64)


def _read_map(serialized, what):
    """{key (str): value bytes} of the map entries (field 1) of a Features or
    FeatureLists message; a repeated key keeps its last entry."""
    out = {}
    for number, wire_type, entry, _, _ in iter_fields(serialized):
        if number != 1:
            continue
        if wire_type != LEN:
            raise DecodeError(f"{what} entry is not length-delimited")
        key, value = b"", b""
        for item_number, item_type, item, _, _ in iter_fields(entry):
            if item_type == LEN and item_number == 1:
                key = item
            elif item_type == LEN and item_number == 2:
                value = item
        out[key.decode("utf-8", "replace")] = value
    return out


def read_sequence_example(serialized):
    """(context {key: Feature bytes}, feature lists {key: [Feature bytes, ...]}) of a
    serialized SequenceExample. Raises DecodeError for malformed bytes."""
    context, lists = {}, {}
    for number, wire_type, value, _, _ in iter_fields(serialized):
        if number not in (1, 2):
            continue
        if wire_type != LEN:
            raise DecodeError("SequenceExample field is not length-delimited")
        if number == 1:
            context.update(_read_map(value, "Features.feature"))
        else:
            for key, feature_list in _read_map(value, "FeatureLists.feature_list").items():
                lists[key] = [item for n, t, item, _, _ in iter_fields(feature_list)
                              if n == 1 and t == LEN]
    return context, lists


def feature_text(feature: bytes) -> str:
    """A Feature in protobuf's text format (its DebugString), for TF's error messages."""
    kind, values = read_feature(feature)
    if kind is None:
        return ""
    if kind == "string":
        lines = ['  value: "' + "".join(
            chr(b) if 0x20 <= b < 0x7F and b not in (0x22, 0x27, 0x5C)
            else {0x22: '\\"', 0x27: "\\'", 0x5C: "\\\\", 0x0A: "\\n", 0x0D: "\\r",
                  0x09: "\\t"}.get(b, "\\%03o" % b) for b in v) + '"' for v in values]
        name = "bytes_list"
    elif kind == "float":
        lines = [f"  value: {np.float32(v)}" for v in values]
        name = "float_list"
    else:
        lines = [f"  value: {int(v)}" for v in values]
        name = "int64_list"
    return name + " {\n" + "".join(line + "\n" for line in lines) + "}\n"
