"""tf.train.Example and friends: bytes written out by hand from the protobuf encoding
rules, and the same messages built with the `protobuf` package from TF's feature.proto /
example.proto field tables (skipped when protobuf is not installed)."""

import numpy as np
import pytest

import tensorflux as tf
from tensorflux._src.io import example_proto

train = tf.train


def _small_example():
    return train.Example(features=train.Features(feature={
        "a": train.Feature(int64_list=train.Int64List(value=[1, 300])),
        "b": train.Feature(float_list=train.FloatList(value=[1.0])),
        "c": train.Feature(bytes_list=train.BytesList(value=[b"hi"])),
    }))


# Example{features(1)} > Features{feature(1): entries} > entry{key(1), value(2)} > Feature
# {bytes_list(1) | float_list(2) | int64_list(3)} > *List{value(1), floats/int64s packed}.
SMALL_EXAMPLE_BYTES = bytes([
    0x0A, 0x2A,                                      # Example.features, 42 bytes
    0x0A, 0x0C,                                      # Features.feature entry, 12 bytes
    0x0A, 0x01, ord("a"),                            #   key "a"
    0x12, 0x07,                                      #   value: Feature, 7 bytes
    0x1A, 0x05,                                      #     int64_list, 5 bytes
    0x0A, 0x03, 0x01, 0xAC, 0x02,                    #       packed varints 1, 300
    0x0A, 0x0D,                                      # entry, 13 bytes
    0x0A, 0x01, ord("b"),                            #   key "b"
    0x12, 0x08,                                      #   value: Feature, 8 bytes
    0x12, 0x06,                                      #     float_list, 6 bytes
    0x0A, 0x04, 0x00, 0x00, 0x80, 0x3F,              #       packed float32 1.0
    0x0A, 0x0B,                                      # entry, 11 bytes
    0x0A, 0x01, ord("c"),                            #   key "c"
    0x12, 0x06,                                      #   value: Feature, 6 bytes
    0x0A, 0x04,                                      #     bytes_list, 4 bytes
    0x0A, 0x02, ord("h"), ord("i"),                  #       value "hi"
])


def test_small_example_bytes_by_hand():
    assert _small_example().SerializeToString(deterministic=True) == SMALL_EXAMPLE_BYTES


def test_round_trip_and_attribute_access():
    parsed = train.Example.FromString(SMALL_EXAMPLE_BYTES)
    assert parsed == _small_example()
    feature = parsed.features.feature
    assert list(feature["a"].int64_list.value) == [1, 300]
    assert list(feature["b"].float_list.value) == [1.0]
    assert list(feature["c"].bytes_list.value) == [b"hi"]
    assert feature["a"].WhichOneof("kind") == "int64_list"
    again = train.Example()
    assert again.ParseFromString(SMALL_EXAMPLE_BYTES) == len(SMALL_EXAMPLE_BYTES)
    assert again == parsed and again != train.Example()
    text = repr(parsed)
    assert 'key: "a"' in text and "int64_list {" in text and "value: 300" in text


def test_unpacked_lists_and_negative_ints_parse():
    # Int64List{value: 1, value: -1} and FloatList{value: 2.5} written unpacked.
    int64_list = bytes([0x08, 0x01, 0x08]) + b"\xff" * 9 + b"\x01"
    float_list = bytes([0x0D]) + np.float32(2.5).tobytes()
    assert list(train.Int64List.FromString(int64_list).value) == [1, -1]
    assert list(train.FloatList.FromString(float_list).value) == [2.5]
    # Packed, -1 is ten bytes of two's complement.
    assert train.Int64List(value=[-1]).SerializeToString() == bytes([0x0A, 0x0A]) + \
        b"\xff" * 9 + b"\x01"


def test_float_values_are_float32_and_build_styles():
    floats = train.FloatList(value=[0.1, 1e39])
    assert floats.value[0] == float(np.float32(0.1)) and floats.value[1] == float("inf")
    ex = train.Example()
    ex.features.feature["x"].float_list.value.extend([0.5, 2])  # protobuf's mutable style
    ex.features.feature["y"].int64_list.value.append(np.int64(7))
    assert list(ex.features.feature["x"].float_list.value) == [0.5, 2.0]
    assert train.Example.FromString(ex.SerializeToString()) == ex
    with pytest.raises(TypeError):
        train.Int64List(value=[1.5])


def test_sequence_example_round_trip():
    seq = train.SequenceExample(
        context=train.Features(feature={"len": train.Feature(
            int64_list=train.Int64List(value=[2]))}),
        feature_lists=train.FeatureLists(feature_list={"tok": train.FeatureList(feature=[
            train.Feature(bytes_list=train.BytesList(value=[b"a"])),
            train.Feature(bytes_list=train.BytesList(value=[b"b", b"c"]))])}))
    parsed = train.SequenceExample.FromString(seq.SerializeToString())
    assert parsed == seq
    steps = parsed.feature_lists.feature_list["tok"].feature
    assert [list(f.bytes_list.value) for f in steps] == [[b"a"], [b"b", b"c"]]


def test_read_feature_map():
    features = example_proto.read_feature_map(SMALL_EXAMPLE_BYTES)
    assert sorted(features) == ["a", "b", "c"]
    kind, values = example_proto.read_feature(features["a"])
    assert kind == "int64" and values.dtype == np.int64 and values.tolist() == [1, 300]
    kind, values = example_proto.read_feature(features["b"])
    assert kind == "float" and values.dtype == np.float32 and values.tolist() == [1.0]
    assert example_proto.read_feature(features["c"]) == ("string", [b"hi"])
    assert example_proto.read_feature(train.Feature()) == (None, [])  # no kind set


# -- against google.protobuf -------------------------------------------------------------------
def _protobuf_classes():
    """TF's example.proto / feature.proto messages, built with the protobuf package from
    descriptors written here (tensorboard does not ship example_pb2)."""
    pytest.importorskip("google.protobuf")
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    F = descriptor_pb2.FieldDescriptorProto
    proto = descriptor_pb2.FileDescriptorProto(name="tfx_example_test.proto", package="tfxt",
                                               syntax="proto3")

    def message(name, *fields, parent=None):
        msg = (parent.nested_type if parent else proto.message_type).add(name=name)
        for field_name, number, kind, type_name, repeated in fields:
            field = msg.field.add(name=field_name, number=number, type=kind,
                                  label=F.LABEL_REPEATED if repeated else F.LABEL_OPTIONAL)
            if type_name:
                field.type_name = type_name
        return msg

    message("BytesList", ("value", 1, F.TYPE_BYTES, None, True))
    message("FloatList", ("value", 1, F.TYPE_FLOAT, None, True))
    message("Int64List", ("value", 1, F.TYPE_INT64, None, True))
    feature = message("Feature", ("bytes_list", 1, F.TYPE_MESSAGE, ".tfxt.BytesList", False),
                      ("float_list", 2, F.TYPE_MESSAGE, ".tfxt.FloatList", False),
                      ("int64_list", 3, F.TYPE_MESSAGE, ".tfxt.Int64List", False))
    feature.oneof_decl.add(name="kind")
    for field in feature.field:
        field.oneof_index = 0
    for name, value_type, field_name in (("Features", ".tfxt.Feature", "feature"),
                                         ("FeatureLists", ".tfxt.FeatureList", "feature_list")):
        msg = message(name, (field_name, 1, F.TYPE_MESSAGE, f".tfxt.{name}.Entry", True))
        entry = message("Entry", ("key", 1, F.TYPE_STRING, None, False),
                        ("value", 2, F.TYPE_MESSAGE, value_type, False), parent=msg)
        entry.options.map_entry = True
    message("FeatureList", ("feature", 1, F.TYPE_MESSAGE, ".tfxt.Feature", True))
    message("Example", ("features", 1, F.TYPE_MESSAGE, ".tfxt.Features", False))
    message("SequenceExample", ("context", 1, F.TYPE_MESSAGE, ".tfxt.Features", False),
            ("feature_lists", 2, F.TYPE_MESSAGE, ".tfxt.FeatureLists", False))
    pool = descriptor_pool.DescriptorPool()
    pool.Add(proto)
    return message_factory.GetMessageClassesForFiles([proto.name], pool)


def test_bytes_match_protobuf():
    classes = _protobuf_classes()
    theirs = classes["tfxt.Example"]()
    feature = theirs.features.feature
    feature["a"].int64_list.value.extend([1, 300, -5, 2 ** 62])
    feature["b"].float_list.value.extend([1.0, -0.1, float("inf")])
    feature["c"].bytes_list.value.extend([b"hi", b"\x00\xff"])
    feature["empty"].float_list.SetInParent()
    ours = train.Example(features=train.Features(feature={
        "a": train.Feature(int64_list=train.Int64List(value=[1, 300, -5, 2 ** 62])),
        "b": train.Feature(float_list=train.FloatList(value=[1.0, -0.1, float("inf")])),
        "c": train.Feature(bytes_list=train.BytesList(value=[b"hi", b"\x00\xff"])),
        "empty": train.Feature(float_list=train.FloatList()),
    }))
    wire = theirs.SerializeToString(deterministic=True)  # map entries sorted by key
    assert ours.SerializeToString(deterministic=True) == wire
    assert train.Example.FromString(wire) == ours
    back = classes["tfxt.Example"].FromString(ours.SerializeToString())
    assert back == theirs
    assert classes["tfxt.Example"].FromString(SMALL_EXAMPLE_BYTES) == \
        classes["tfxt.Example"].FromString(_small_example().SerializeToString())


def test_sequence_example_bytes_match_protobuf():
    classes = _protobuf_classes()
    theirs = classes["tfxt.SequenceExample"]()
    theirs.context.feature["id"].bytes_list.value.append(b"x")
    steps = theirs.feature_lists.feature_list["v"].feature
    steps.add().float_list.value.extend([1.5])
    steps.add().float_list.value.extend([2.5, 3.5])
    ours = train.SequenceExample(
        context=train.Features(feature={"id": train.Feature(
            bytes_list=train.BytesList(value=[b"x"]))}),
        feature_lists=train.FeatureLists(feature_list={"v": train.FeatureList(feature=[
            train.Feature(float_list=train.FloatList(value=[1.5])),
            train.Feature(float_list=train.FloatList(value=[2.5, 3.5]))])}))
    assert ours.SerializeToString() == theirs.SerializeToString(deterministic=True)
