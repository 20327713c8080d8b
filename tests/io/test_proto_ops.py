"""tf.io.decode_proto / tf.io.encode_proto against messages built and serialized by the
protobuf package from a .proto described here (descriptor_pb2), through each
descriptor_source (bytes://, a FileDescriptorSet file, local://)."""

import numpy as np
import pytest

import tensorflux as tf
from tests.helpers import run

pytest.importorskip("google.protobuf")
from google.protobuf import (  # noqa: E402
    descriptor_pb2, descriptor_pool, message_factory, text_format, timestamp_pb2,
)

F = descriptor_pb2.FieldDescriptorProto
InvalidArgumentError = tf.errors.InvalidArgumentError
DataLossError = tf.errors.DataLossError

# (name, number, type, TF dtype) of TestValue's repeated fields; "packed" copies them.
_FIELDS = [("double_value", 1, F.TYPE_DOUBLE, tf.float64),
           ("float_value", 2, F.TYPE_FLOAT, tf.float32),
           ("int64_value", 3, F.TYPE_INT64, tf.int64),
           ("uint64_value", 4, F.TYPE_UINT64, tf.int64),
           ("int32_value", 5, F.TYPE_INT32, tf.int32),
           ("fixed64_value", 6, F.TYPE_FIXED64, tf.int64),
           ("fixed32_value", 7, F.TYPE_FIXED32, tf.int64),
           ("bool_value", 8, F.TYPE_BOOL, tf.bool),
           ("string_value", 9, F.TYPE_STRING, tf.string),
           ("bytes_value", 12, F.TYPE_BYTES, tf.string),
           ("uint32_value", 13, F.TYPE_UINT32, tf.int64),
           ("sfixed32_value", 15, F.TYPE_SFIXED32, tf.int32),
           ("sfixed64_value", 16, F.TYPE_SFIXED64, tf.int64),
           ("sint32_value", 17, F.TYPE_SINT32, tf.int32),
           ("sint64_value", 18, F.TYPE_SINT64, tf.int64),
           ("enum_value", 35, F.TYPE_ENUM, tf.int32)]
_VALUES = {"double_value": [-1.7976931348623157e308, 2.5, 1e-300],
           "float_value": [-3.4028234663852886e38, 1.5],
           "int64_value": [-2 ** 63, 2 ** 63 - 1], "uint64_value": [0, 2 ** 64 - 1],
           "int32_value": [-2 ** 31, 2 ** 31 - 1, -1], "fixed64_value": [2 ** 64 - 1],
           "fixed32_value": [2 ** 32 - 1, 7], "bool_value": [True, False, True],
           "string_value": ["", "I refer to the infinite."], "bytes_value": [b"\x00\xff"],
           "uint32_value": [2 ** 32 - 1], "sfixed32_value": [-2 ** 31, 5],
           "sfixed64_value": [-2 ** 63], "sint32_value": [-2 ** 31, 2 ** 31 - 1],
           "sint64_value": [-2 ** 63, 1], "enum_value": [3, 6]}


def _file_proto():
    proto = descriptor_pb2.FileDescriptorProto(name="tfx_proto_ops_test.proto",
                                               package="tfxp", syntax="proto2")
    color = proto.enum_type.add(name="Color")
    for i, name in enumerate(["RED", "ORANGE", "YELLOW", "GREEN", "BLUE", "INDIGO", "VIOLET"]):
        color.value.add(name=name, number=i)
    prim = proto.message_type.add(name="PrimitiveValue")
    prim.field.add(name="double_value", number=1, type=F.TYPE_DOUBLE, label=F.LABEL_OPTIONAL)
    prim.field.add(name="string_value", number=9, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    for message_name, packed in (("TestValue", False), ("PackedTestValue", True)):
        msg = proto.message_type.add(name=message_name)
        for name, number, kind, _ in _FIELDS:
            field = msg.field.add(name=name, number=number, type=kind,
                                  label=F.LABEL_REPEATED)
            if kind == F.TYPE_ENUM:
                field.type_name = ".tfxp.Color"
            elif packed and kind not in (F.TYPE_STRING, F.TYPE_BYTES):
                field.options.packed = True
        msg.field.add(name="message_value", number=19, type=F.TYPE_MESSAGE,
                      label=F.LABEL_REPEATED, type_name=".tfxp.PrimitiveValue")
        for name, number, kind, default in (
                ("double_value_with_default", 20, F.TYPE_DOUBLE, "1.0"),
                ("float_value_with_default", 21, F.TYPE_FLOAT, "2.0"),
                ("int64_value_with_default", 22, F.TYPE_INT64, "3"),
                ("uint64_value_with_default", 23, F.TYPE_UINT64, "18446744073709551615"),
                ("int32_value_with_default", 24, F.TYPE_INT32, "-5"),
                ("bool_value_with_default", 27, F.TYPE_BOOL, "true"),
                ("string_value_with_default", 28, F.TYPE_STRING, "a"),
                ("bytes_value_with_default", 29, F.TYPE_BYTES, "a longer default string"),
                ("enum_value_with_default", 36, F.TYPE_ENUM, "GREEN")):
            field = msg.field.add(name=name, number=number, type=kind,
                                  label=F.LABEL_OPTIONAL, default_value=default)
            if kind == F.TYPE_ENUM:
                field.type_name = ".tfxp.Color"
        msg.field.add(name="int32_singular", number=40, type=F.TYPE_INT32,
                      label=F.LABEL_OPTIONAL)
        if not packed:
            msg.extension_range.add(start=100, end=200)
    proto.extension.add(name="ext_value", number=100, type=F.TYPE_MESSAGE,
                        label=F.LABEL_REPEATED, type_name=".tfxp.PrimitiveValue",
                        extendee=".tfxp.TestValue")
    extra = proto.message_type.add(name="ExtraFields")
    extra.field.add(name="string_value", number=1776, type=F.TYPE_STRING,
                    label=F.LABEL_OPTIONAL)
    return proto


@pytest.fixture(scope="module")
def proto():
    """(classes by full name, serialized FileDescriptorSet)."""
    file_proto = _file_proto()
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file_proto)
    classes = message_factory.GetMessageClassesForFiles([file_proto.name], pool)
    fds = descriptor_pb2.FileDescriptorSet(file=[file_proto]).SerializeToString()
    return classes, fds


def _filled(cls, values):
    msg = cls()
    for name, vs in values.items():
        getattr(msg, name).extend(vs)
    return msg


def test_decode_every_field_type_binary_packed_and_text(proto):
    classes, fds = proto
    source = b"bytes://" + fds
    names = [f[0] for f in _FIELDS]
    types = [f[3] for f in _FIELDS]
    value = _filled(classes["tfxp.TestValue"], _VALUES)
    packed = _filled(classes["tfxp.PackedTestValue"], _VALUES)
    assert value.SerializeToString() != packed.SerializeToString()
    text = text_format.MessageToString(value)
    # Unknown fields first, as TF's "disordered" test does (the kernel skips them).
    extra = classes["tfxp.ExtraFields"](string_value="IGNORE ME").SerializeToString()
    cases = [(value.SerializeToString(), "tfxp.TestValue", "binary", False),
             (extra + value.SerializeToString(), "tfxp.TestValue", "binary", False),
             (packed.SerializeToString(), "tfxp.PackedTestValue", "binary", False),
             (value.SerializeToString(), "tfxp.TestValue", "binary", True),
             (text.encode(), "tfxp.TestValue", "text", False)]
    outs = [tf.io.decode_proto([buf], msg_type, names, types, descriptor_source=source,
                               message_format=fmt, sanitize=sanitize)
            for buf, msg_type, fmt, sanitize in cases]
    assert outs[0].sizes.shape.as_list() == [1, len(names)]
    assert all(v.shape.as_list() == [1, None] for v in outs[0].values)
    assert [v.dtype for v in outs[0].values] == types
    for sizes, values in run([tuple(o) for o in outs]):
        np.testing.assert_array_equal(sizes, [[len(_VALUES[n]) for n in names]])
        for name, tf_type, got in zip(names, types, values):
            expected = _VALUES[name]
            if name in ("uint64_value", "fixed64_value"):  # two's complement in int64
                expected = np.array(expected, np.uint64).astype(np.int64)
            elif tf_type == tf.string:
                expected = [e.encode() if isinstance(e, str) else e for e in expected]
            want = np.array([expected], dtype=object if tf_type == tf.string
                            else tf_type.as_numpy_dtype)
            assert got.dtype == want.dtype, name
            np.testing.assert_array_equal(got, want, err_msg=name)


def test_decode_pads_batches_with_defaults_and_keeps_the_last_singular_value(proto):
    classes, fds = proto
    cls = classes["tfxp.TestValue"]
    msgs = [cls(double_value=[23.5, 123.0], bool_value=[True]),
            cls(double_value=[3.1], int32_value_with_default=7),
            cls(message_value=[classes["tfxp.PrimitiveValue"](string_value="abc")]),
            cls()]
    # A singular field twice on the wire: the last value counts (size 1).
    twice = cls(int32_singular=1).SerializeToString() + \
        cls(int32_singular=-9).SerializeToString()
    bufs = np.array([[m.SerializeToString() for m in msgs[:2]],
                     [msgs[2].SerializeToString(), twice]], dtype=object)
    names = ["double_value", "bool_value", "int32_value_with_default",
             "double_value_with_default", "float_value_with_default",
             "uint64_value_with_default", "string_value_with_default",
             "bytes_value_with_default", "enum_value_with_default",
             "bool_value_with_default", "message_value", "int32_singular",
             "int64_value_with_default"]
    types = [tf.float64, tf.bool, tf.int64, tf.float64, tf.float64, tf.int64, tf.string,
             tf.string, tf.int32, tf.bool, tf.string, tf.int32, tf.int64]
    batch = tf.placeholder(tf.string, [2, None])
    sizes, values = tf.io.decode_proto(batch, "tfxp.TestValue", names, types,
                                       descriptor_source=b"bytes://" + fds)
    assert sizes.shape.as_list() == [2, None, len(names)]
    sizes, values = run((sizes, values), {batch: bufs})
    np.testing.assert_array_equal(sizes, [[[2, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
                                           [1, 0, 1] + [0] * 10],
                                          [[0] * 10 + [1, 0, 0], [0] * 11 + [1, 0]]])
    got = dict(zip(names, values))
    np.testing.assert_array_equal(got["double_value"], [[[23.5, 123.0], [3.1, 0.0]],
                                                        [[0.0, 0.0], [0.0, 0.0]]])
    np.testing.assert_array_equal(got["bool_value"], [[[True], [False]], [[False], [False]]])
    np.testing.assert_array_equal(got["int32_value_with_default"], [[[-5], [7]], [[-5], [-5]]])
    np.testing.assert_array_equal(got["double_value_with_default"], np.ones((2, 2, 1)))
    np.testing.assert_array_equal(got["float_value_with_default"], np.full((2, 2, 1), 2.0))
    np.testing.assert_array_equal(got["uint64_value_with_default"], np.full((2, 2, 1), -1))
    assert got["string_value_with_default"].tolist() == [[[b"a"]] * 2] * 2
    assert got["bytes_value_with_default"][0, 0, 0] == b"a longer default string"
    np.testing.assert_array_equal(got["enum_value_with_default"], np.full((2, 2, 1), 3))
    np.testing.assert_array_equal(got["bool_value_with_default"], np.ones((2, 2, 1), bool))
    sub = classes["tfxp.PrimitiveValue"].FromString(got["message_value"][1, 0, 0])
    assert sub.string_value == "abc" and got["message_value"][0, 0, 0] == b""
    np.testing.assert_array_equal(got["int32_singular"], [[[0], [0]], [[0], [-9]]])
    np.testing.assert_array_equal(got["int64_value_with_default"], np.full((2, 2, 1), 3))


def test_encode_round_trips_through_protobuf(proto, tmp_path):
    classes, fds = proto
    path = tmp_path / "test.desc"
    path.write_bytes(fds)
    names = ["int32_value", "double_value", "string_value", "uint64_value", "sint64_value",
             "bool_value", "fixed32_value", "enum_value"]
    sizes = np.array([[2, 1, 2, 1, 1, 0, 1, 1], [0, 2, 1, 1, 2, 1, 0, 1]], np.int32)
    values = [np.array([[-1, 300], [0, 0]], np.int32), np.array([[1.5, 0], [-2.0, 1e300]]),
              np.array([[b"ab", b""], ["é".encode(), b"x"]], dtype=object),
              np.array([[-1], [5]], np.int64), np.array([[-3, 9], [2 ** 62, -2 ** 63]]),
              np.array([[True], [True]]), np.array([[2 ** 32 - 1], [1]], np.int64),
              np.array([[6], [0]], np.int32)]
    results = []
    for message_type in ("tfxp.TestValue", "tfxp.PackedTestValue"):
        encoded = tf.io.encode_proto(sizes, values, names, message_type,
                                     descriptor_source=str(path))
        assert encoded.shape.as_list() == [2]
        back = tf.io.decode_proto(encoded, message_type, names,
                                  [tf.int32, tf.float64, tf.string, tf.int64, tf.int64,
                                   tf.bool, tf.int64, tf.int32], descriptor_source=str(path))
        results.append((encoded, back.sizes))
    for (encoded, back_sizes), message_type in zip(run(results),
                                                   ("tfxp.TestValue", "tfxp.PackedTestValue")):
        np.testing.assert_array_equal(back_sizes, sizes)
        cls = classes[message_type]
        expected = [cls(int32_value=[-1, 300], double_value=[1.5], string_value=["ab", ""],
                        uint64_value=[2 ** 64 - 1], sint64_value=[-3], fixed32_value=[2 ** 32 - 1],
                        enum_value=[6]),
                    cls(double_value=[-2.0, 1e300], string_value=["é"],
                        uint64_value=[5], sint64_value=[2 ** 62, -2 ** 63], bool_value=[True],
                        enum_value=[0])]
        first = cls.FromString(encoded[0])
        assert first == expected[0]
        # Fields in field-number order: protobuf's own serialization gives the same bytes.
        assert encoded[0] == expected[0].SerializeToString()
        assert cls.FromString(encoded[1]) == expected[1]


def test_local_descriptor_source_uses_imported_modules():
    ts = timestamp_pb2.Timestamp(seconds=1234567890123, nanos=-5)
    encoded = tf.io.encode_proto(np.array([[1, 1]], np.int32),
                                 [np.array([[1234567890123]]), np.array([[-5]], np.int32)],
                                 ["seconds", "nanos"], "google.protobuf.Timestamp")
    decoded = tf.io.decode_proto(tf.constant([ts.SerializeToString()]),
                                 "google.protobuf.Timestamp", ["nanos", "seconds"],
                                 [tf.int32, tf.int64])
    out, (sizes, (nanos, seconds)) = run((encoded, decoded))
    assert out[0] == ts.SerializeToString()
    np.testing.assert_array_equal(sizes, [[1, 1]])
    assert nanos.tolist() == [[-5]] and seconds.tolist() == [[1234567890123]]


def test_errors(proto):
    classes, fds = proto
    source = b"bytes://" + fds
    good = classes["tfxp.TestValue"](int64_value=[3]).SerializeToString()

    def fails(kind, message, fetch):
        with pytest.raises(kind) as info:
            run(fetch)
        assert message in str(info.value), str(info.value)

    # An extension is found by its full name; its values are the submessages' bytes.
    sub = classes["tfxp.PrimitiveValue"](double_value=23.5).SerializeToString()
    with_ext = good + bytes([(100 << 3 | 2) & 0x7F | 0x80, 100 >> 4, len(sub)]) + sub
    sizes, (ext,) = run(tf.io.decode_proto([with_ext], "tfxp.TestValue", ["tfxp.ext_value"],
                                           [tf.string], descriptor_source=source))
    assert sizes.tolist() == [[1]] and ext.tolist() == [[sub]]

    fails(InvalidArgumentError, "No descriptor found for message type tfxp.Nope",
          tf.io.decode_proto([good], "tfxp.Nope", ["a"], [tf.int32], descriptor_source=source))
    fails(InvalidArgumentError, "Unknown field: nope in message type tfxp.TestValue",
          tf.io.decode_proto([good], "tfxp.TestValue", ["nope"], [tf.int32],
                             descriptor_source=source))
    fails(InvalidArgumentError, "Unexpected output type for "
          "tfxp.TestValue.int64_value_with_default: int64 to DT_STRING",
          tf.io.decode_proto([good], "tfxp.TestValue", ["int64_value_with_default"],
                             [tf.string], descriptor_source=source))
    fails(InvalidArgumentError, "Unexpected output type for tfxp.TestValue.enum_value: "
          "enum to DT_INT64", tf.io.decode_proto([good], "tfxp.TestValue", ["enum_value"],
                                                 [tf.int64], descriptor_source=source))
    fails(InvalidArgumentError, "Source does not represent serialized file descriptor set "
          "proto.", tf.io.decode_proto([good], "tfxp.TestValue", ["int64_value"], [tf.int64],
                                       descriptor_source="/no/such/file.desc"))
    fails(InvalidArgumentError, "format must be one of binary or text",
          tf.io.decode_proto([good], "tfxp.TestValue", ["int64_value"], [tf.int64],
                             descriptor_source=source, message_format="json"))
    fails(InvalidArgumentError, "Bufs argument must contain at least one value",
          tf.io.decode_proto(tf.constant([], tf.string), "tfxp.TestValue", ["int64_value"],
                             [tf.int64], descriptor_source=source))
    fails(DataLossError, "Failed to consume entire buffer",
          tf.io.decode_proto(["This is not a binary protobuf"], "tfxp.TestValue",
                             ["int64_value"], [tf.int64], descriptor_source=source))
    fails(DataLossError, "Unable to parse binary protobuf",
          tf.io.decode_proto([good[:-1]], "tfxp.TestValue", ["int64_value"], [tf.int64],
                             descriptor_source=source, sanitize=True))
    fails(DataLossError, "Unable to parse text protobuf",
          tf.io.decode_proto(["int64_value: oops"], "tfxp.TestValue", ["int64_value"],
                             [tf.int64], descriptor_source=source, message_format="text"))
    fails(DataLossError, "ReadValue: Failed skipping field when counting",
          tf.io.decode_proto([good[:-1]], "tfxp.TestValue", ["int64_value"], [tf.int64],
                             descriptor_source=source))
    ones = np.ones((2, 1), np.int32)
    fails(InvalidArgumentError, "Incompatible type for field int32_value.  Saw dtype: float "
          "but field type is: int32",
          tf.io.encode_proto(ones, [np.ones((2, 1), np.float32)], ["int32_value"],
                             "tfxp.TestValue", descriptor_source=source))
    fails(InvalidArgumentError, "sizes should be batch_size + [len(field_names)].  Saw: "
          "[2,1] but expected: [2,2]",
          tf.io.encode_proto(ones, [ones, ones], ["int32_value", "sint32_value"],
                             "tfxp.TestValue", descriptor_source=source))
    fails(InvalidArgumentError, "Size to write must not be larger than value tensor; but "
          "saw: 2 > 1 at message 1 field 0",
          tf.io.encode_proto(np.array([[1], [2]], np.int32), [ones], ["int32_value"],
                             "tfxp.TestValue", descriptor_source=source))
    with pytest.raises(ValueError, match="Shape must be at least rank 2 but is rank 1"):
        tf.io.encode_proto(ones, [np.ones(2, np.int32)], ["int32_value"], "tfxp.TestValue")
    with pytest.raises(TypeError, match="Expected list for 'field_names'"):
        tf.io.decode_proto([good], "tfxp.TestValue", "int64_value", [tf.int64])


def test_local_source_finds_tensorflows_own_messages():
    # "local://" holds the messages linked into the binary; TF's own are among them.
    example = tf.train.Example(features=tf.train.Features(feature={
        "x": tf.train.Feature(int64_list=tf.train.Int64List(value=[3, -4]))}))
    features = tf.io.decode_proto([example.SerializeToString()], "tensorflow.Example",
                                  ["features"], [tf.string])
    with tf.Session() as sess:
        sizes, (raw,) = sess.run(features)
    np.testing.assert_array_equal(sizes, [[1]])
    # Features { map<string, Feature> feature = 1 }: one entry, key "x", value the
    # Feature with int64_list {3, -4} as ten-byte two's-complement varints.
    entry = b"\x0a\x01x" + b"\x12\x0f\x1a\x0d\x0a\x0b\x03" + b"\xfc" + b"\xff" * 8 + b"\x01"
    assert raw[0, 0] == b"\x0a" + bytes([len(entry)]) + entry
