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

`read_feature_map`, `read_feature` and `read_sequence_example` are what the parsing ops
read each record with.
"""

from __future__ import annotations

import numpy as np

from google.protobuf import text_format

from tensorflux._src.framework.protos import (  # noqa: F401 - re-exported
    BytesList, Example, Feature, FeatureList, FeatureLists, Features, FloatList, Int64List,
    SequenceExample,
)

__all__ = ["BytesList", "Example", "Feature", "FeatureList", "FeatureLists", "Features",
           "FloatList", "Int64List", "SequenceExample"]


# -- what the parsing ops read -------------------------------------------------------------
# protobuf's C parser (upb) reads a record about twice as fast as walking its wire format
# in Python did, so the parsing ops read messages: Feature values come out as numpy
# arrays (float32 / int64) or lists of bytes.


def read_feature_map(serialized) -> dict:
    """{key: Feature} of a serialized Example; a repeated key keeps its last entry.
    Raises DecodeError for malformed bytes."""
    return dict(Example.FromString(serialized).features.feature)


def read_feature(feature):
    """(kind, values) of a Feature: kind is "string", "float", "int64", or None when no
    kind is set (TF treats such a feature as missing). Values are a list of bytes, a
    float32 array or an int64 array."""
    kind = feature.WhichOneof("kind")
    if kind is None:
        return None, []
    if kind == "bytes_list":
        return "string", list(feature.bytes_list.value)
    if kind == "float_list":
        return "float", np.array(feature.float_list.value, np.float32)
    return "int64", np.array(feature.int64_list.value, np.int64)


def read_sequence_example(serialized):
    """(context {key: Feature}, feature lists {key: [Feature, ...]}) of a serialized
    SequenceExample. Raises DecodeError for malformed bytes."""
    record = SequenceExample.FromString(serialized)
    lists = {key: list(value.feature) for key, value in record.feature_lists.feature_list.items()}
    return dict(record.context.feature), lists


def feature_text(feature) -> str:
    """A Feature in protobuf's text format (its DebugString), for TF's error messages."""
    return text_format.MessageToString(feature)
