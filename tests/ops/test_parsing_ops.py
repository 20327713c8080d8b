"""tf.parse_example / tf.parse_single_example, tf.decode_raw, tf.io.parse_tensor.

Records are built with tf.train.Example (its bytes are checked against protobuf in
tests/io/test_example_proto.py) or written byte by byte; expected outputs are NumPy
arrays written here, following TF1.15's documented results.
"""

import numpy as np
import pytest

import tensorflux as tf
from tests.helpers import run

InvalidArgumentError = tf.errors.InvalidArgumentError
train = tf.train


def _feature(values):
    """An Int64List for ints, FloatList for floats, BytesList for bytes/str."""
    if all(isinstance(v, (bytes, str)) for v in values) and values:
        # protobuf's bytes fields take bytes only, as in TF; the tests write str for short.
        return train.Feature(bytes_list=train.BytesList(
            value=[v.encode() if isinstance(v, str) else v for v in values]))
    if any(isinstance(v, float) for v in values):
        return train.Feature(float_list=train.FloatList(value=values))
    return train.Feature(int64_list=train.Int64List(value=values))


def _example(**features):
    return train.Example(features=train.Features(
        feature={k: _feature(v) for k, v in features.items()})).SerializeToString()


def _assert_sparse(value, indices, values, dense_shape, dtype):
    # One column per dense dimension: [batch, index], or [index] for a single record.
    np.testing.assert_array_equal(value.indices,
                                  np.array(indices, np.int64).reshape(-1, len(dense_shape)))
    assert value.indices.dtype == np.int64 and value.dense_shape.dtype == np.int64
    assert value.values.dtype == dtype
    assert value.values.tolist() == values
    np.testing.assert_array_equal(value.dense_shape, dense_shape)


# -- parse_example -----------------------------------------------------------------------------
def test_parse_example_dense_sparse_and_sequence_features():
    records = [
        _example(label=[3], pos=[1.5, -2.0], word=[b"knit", b"big"], seq=[1, 2, 3, 4]),
        _example(label=[0], pos=[0.0, 4.0], seq=[5, 6]),  # no "word"; seq shorter
        _example(label=[7], pos=[1.0, 1.0], word=["emmy"], seq=[]),
    ]
    serialized = tf.placeholder(tf.string, [None])
    parsed = tf.parse_example(serialized, {
        "label": tf.FixedLenFeature([], tf.int64),
        "pos": tf.FixedLenFeature([2], tf.float32),
        "missing": tf.FixedLenFeature([2], tf.string, default_value=["x", "y"]),
        "word": tf.VarLenFeature(tf.string),
        "seq": tf.FixedLenSequenceFeature([2], tf.int64, allow_missing=True, default_value=-1),
    })
    assert sorted(parsed) == ["label", "missing", "pos", "seq", "word"]
    assert parsed["label"].op.type == "ParseExample"
    assert parsed["label"].op.name == "ParseExample/ParseExample"
    assert (parsed["label"].dtype, parsed["pos"].dtype, parsed["missing"].dtype) == \
        (tf.int64, tf.float32, tf.string)
    assert parsed["label"].shape.as_list() == [None]
    assert parsed["pos"].shape.as_list() == [None, 2]
    assert parsed["seq"].shape.as_list() == [None, None, 2]
    assert isinstance(parsed["word"], tf.SparseTensor) and parsed["word"].dtype == tf.string
    assert parsed["word"].indices.shape.as_list() == [None, 2]
    assert parsed["word"].dense_shape.shape.as_list() == [2]

    got = run(parsed, {serialized: records})
    np.testing.assert_array_equal(got["label"], np.array([3, 0, 7], np.int64))
    assert got["label"].dtype == np.int64
    np.testing.assert_array_equal(got["pos"], np.array([[1.5, -2], [0, 4], [1, 1]], np.float32))
    assert got["pos"].dtype == np.float32
    assert got["missing"].tolist() == [[b"x", b"y"]] * 3
    np.testing.assert_array_equal(got["seq"], np.array(
        [[[1, 2], [3, 4]], [[5, 6], [-1, -1]], [[-1, -1], [-1, -1]]], np.int64))
    _assert_sparse(got["word"], [[0, 0], [0, 1], [2, 0]], [b"knit", b"big", b"emmy"], [3, 2],
                   object)


def test_var_len_features_as_in_tf_docs():
    # parse_example's docstring example: kw / dank / gps over two records.
    records = [
        train.Example(features=train.Features(feature={
            "kw": _feature([b"knit", b"big"]),
            "gps": train.Feature(float_list=train.FloatList())})).SerializeToString(),
        train.Example(features=train.Features(feature={
            "kw": _feature([b"emmy"]), "dank": _feature([42]),
            "gps": train.Feature()})).SerializeToString(),
    ]
    parsed = tf.parse_example(records, {"kw": tf.VarLenFeature(tf.string),
                                        "dank": tf.VarLenFeature(tf.int64),
                                        "gps": tf.VarLenFeature(tf.float32)},
                              example_names=["input0", "input1"])
    got = run(parsed)
    _assert_sparse(got["kw"], [[0, 0], [0, 1], [1, 0]], [b"knit", b"big", b"emmy"], [2, 2],
                   object)
    _assert_sparse(got["dank"], [[1, 0]], [42], [2, 1], np.int64)
    _assert_sparse(got["gps"], [], [], [2, 0], np.float32)


def test_defaults_fill_missing_and_empty_features():
    # A Feature with no list set counts as missing (TF's DT_INVALID), like an absent key.
    records = [_example(age=[0], gender=["f"]),
               train.Example(features=train.Features(feature={
                   "age": train.Feature(), "gender": _feature(["m"])})).SerializeToString()]
    got = run(tf.parse_example(records, {
        "age": tf.FixedLenFeature([], tf.int64, default_value=-1),
        "gender": tf.FixedLenFeature([], tf.string),
        "grid": tf.FixedLenFeature([2, 2], tf.float32, default_value=[1, 2, 3, 4]),
    }))
    np.testing.assert_array_equal(got["age"], [0, -1])
    assert got["gender"].tolist() == [b"f", b"m"]
    np.testing.assert_array_equal(got["grid"], np.tile(
        np.array([[1, 2], [3, 4]], np.float32), (2, 1, 1)))


def test_missing_required_feature_names_the_key():
    serialized = tf.placeholder(tf.string, [None])
    parsed = tf.parse_example(serialized, {"label": tf.FixedLenFeature([1], tf.int64)})
    with pytest.raises(InvalidArgumentError, match=r"Name: <unknown>, Feature: label \(data "
                                                   r"type: int64\) is required but could not "
                                                   r"be found\."):
        run(parsed, {serialized: [_example(label=[1]), _example(other=[2])]})
    named = tf.parse_example(serialized, {"label": tf.FixedLenFeature([1], tf.int64)},
                             example_names=["r0", "r1"])
    with pytest.raises(InvalidArgumentError, match=r"Name: r1, Feature: label "):
        run(named, {serialized: [_example(label=[1]), _example()]})


def test_wrong_dtype_and_length_in_a_record():
    serialized = tf.placeholder(tf.string, [None])
    dense = tf.parse_example(serialized, {"x": tf.FixedLenFeature([2], tf.int64)})
    with pytest.raises(InvalidArgumentError, match=r"Name: <unknown>, Key: x, Index: 1\.  Data "
                                                   r"types don't match\. Data type: float but "
                                                   r"expected type: int64"):
        run(dense, {serialized: [_example(x=[1, 2]), _example(x=[1.0, 2.0])]})
    with pytest.raises(InvalidArgumentError, match=r"Key: x, Index: 0\.  Number of int64 values "
                                                   r"!= expected\.  Values size: 3 but output "
                                                   r"shape: \[2\]"):
        run(dense, {serialized: [_example(x=[1, 2, 3])]})
    sparse = tf.parse_example(serialized, {"x": tf.VarLenFeature(tf.string)})
    with pytest.raises(InvalidArgumentError, match=r"Data types don't match\. Expected type: "
                                                   r"string, Actual type: int64"):
        run(sparse, {serialized: [_example(x=[1])]})
    seq = tf.parse_example(serialized, {
        "x": tf.FixedLenSequenceFeature([2], tf.int64, allow_missing=True)})
    with pytest.raises(InvalidArgumentError, match=r"Number of int64 values is not a multiple "
                                                   r"of stride length\. Saw 3 values but output "
                                                   r"shape is: \[\?,2\]"):
        run(seq, {serialized: [_example(x=[1, 2, 3])]})
    with pytest.raises(InvalidArgumentError, match=r"Could not parse example input, value: "
                                                   r"'\\xff\\xff'"):
        run(sparse, {serialized: [b"\xff\xff"]})


def test_hand_written_records_unpacked_and_repeated_keys():
    def entry(key, feature):  # Features.feature map entry, as bytes
        body = b"\x0a" + bytes([len(key)]) + key + b"\x12" + bytes([len(feature)]) + feature
        return b"\x0a" + bytes([len(body)]) + body

    unpacked_ints = b"\x1a\x04" + b"\x08\x05\x08\x07"  # int64_list {value: 5 value: 7}
    unpacked_floats = b"\x12\x05" + b"\x0d" + np.float32(0.5).tobytes()
    first, last = b"\x1a\x02\x08\x01", b"\x1a\x02\x08\x02"  # "k" twice: the last one wins
    features = entry(b"i", unpacked_ints) + entry(b"f", unpacked_floats) + \
        entry(b"k", first) + entry(b"k", last)
    record = b"\x0a" + bytes([len(features)]) + features
    got = run(tf.parse_single_example(record, {"i": tf.FixedLenFeature([2], tf.int64),
                                               "f": tf.VarLenFeature(tf.float32),
                                               "k": tf.FixedLenFeature([], tf.int64)}))
    np.testing.assert_array_equal(got["i"], [5, 7])
    _assert_sparse(got["f"], [[0]], [0.5], [1], np.float32)
    assert got["k"] == 2


def test_large_and_special_values_survive():
    record = _example(i=[-1, 2 ** 63 - 1, -(2 ** 63)], f=[float("inf"), -0.0, 1e-45])
    got = run(tf.parse_single_example(record, {"i": tf.FixedLenFeature([3], tf.int64),
                                               "f": tf.FixedLenFeature([3], tf.float32)}))
    assert got["i"].tolist() == [-1, 2 ** 63 - 1, -(2 ** 63)]
    expected = np.array([np.inf, -0.0, 1e-45], np.float32)
    assert got["f"].tobytes() == expected.tobytes()


def test_fed_records_keep_trailing_nul_bytes():
    # A record whose last value is 0 ends with a NUL byte; feeding it must not drop it.
    record = _example(label=[0])
    assert record.endswith(b"\x00")
    serialized = tf.placeholder(tf.string, [None])
    got = run(tf.parse_example(serialized, {"label": tf.FixedLenFeature([], tf.int64)}),
              {serialized: [record, record]})
    np.testing.assert_array_equal(got["label"], [0, 0])


def test_empty_batch():
    serialized = tf.placeholder(tf.string, [None])
    got = run(tf.parse_example(serialized, {
        "a": tf.FixedLenFeature([2], tf.float32),
        "s": tf.FixedLenSequenceFeature([], tf.int64, allow_missing=True),
        "v": tf.VarLenFeature(tf.int64)}), {serialized: np.zeros([0], object)})
    assert got["a"].shape == (0, 2) and got["s"].shape == (0, 0)
    _assert_sparse(got["v"], [], [], [0, 0], np.int64)


# -- parse_single_example ----------------------------------------------------------------------
def test_parse_single_example_shapes_and_values():
    serialized = tf.placeholder(tf.string, [])
    parsed = tf.parse_single_example(serialized, {
        "label": tf.FixedLenFeature([], tf.int64),
        "pos": tf.FixedLenFeature([2], tf.float32, default_value=[0.0, 0.0]),
        "word": tf.VarLenFeature(tf.string),
        "none": tf.VarLenFeature(tf.float32),
        "seq": tf.FixedLenSequenceFeature([2], tf.float32, allow_missing=True),
        "noseq": tf.FixedLenSequenceFeature([], tf.string, allow_missing=True),
    })
    assert parsed["label"].op.type == "ParseSingleExample"
    assert parsed["label"].op.name == "ParseSingleExample/ParseSingleExample"
    assert parsed["label"].shape.as_list() == [] and parsed["pos"].shape.as_list() == [2]
    assert parsed["seq"].shape.as_list() == [None, 2]
    assert parsed["word"].indices.shape.as_list() == [None, 1]
    assert parsed["word"].dense_shape.shape.as_list() == [1]
    got = run(parsed, {serialized: _example(label=[9], word=["a", "bc", "d"],
                                            seq=[1.0, 2.0, 3.0, 4.0, 5.0, 6.0])})
    assert got["label"] == 9 and got["label"].dtype == np.int64
    np.testing.assert_array_equal(got["pos"], np.zeros(2, np.float32))
    _assert_sparse(got["word"], [[0], [1], [2]], [b"a", b"bc", b"d"], [3], object)
    _assert_sparse(got["none"], [], [], [0], np.float32)
    np.testing.assert_array_equal(got["seq"], np.arange(1, 7, dtype=np.float32).reshape(3, 2))
    assert got["noseq"].shape == (0,) and got["noseq"].dtype == object


def test_parse_single_example_errors():
    serialized = tf.placeholder(tf.string, [])
    parsed = tf.parse_single_example(serialized, {"x": tf.FixedLenFeature([2], tf.int64)})
    with pytest.raises(InvalidArgumentError, match=r"^Feature: x \(data type: int64\) is "
                                                   r"required but could not be found\."):
        run(parsed, {serialized: _example(y=[1])})
    with pytest.raises(InvalidArgumentError, match=r"Key: x\.  Data types don't match\. Data "
                                                   r"type: string but expected type: int64"):
        run(parsed, {serialized: _example(x=["a", "b"])})
    with pytest.raises(InvalidArgumentError, match=r"Key: x\.  Can't parse serialized Example"):
        run(parsed, {serialized: _example(x=[1])})
    # With example_names, TF1 goes through ParseExample, and errors name the record.
    named = tf.parse_single_example(serialized, {"x": tf.FixedLenFeature([2], tf.int64),
                                                 "w": tf.FixedLenFeature([], tf.string),
                                                 "v": tf.VarLenFeature(tf.int64)},
                                    example_names="rec7")
    with pytest.raises(InvalidArgumentError, match=r"Name: rec7, Feature: w "):
        run(named, {serialized: _example(x=[1, 2])})
    got = run(named, {serialized: _example(x=[1, 2], w=["z"], v=[4, 5])})
    np.testing.assert_array_equal(got["x"], [1, 2])
    assert got["w"] == b"z"
    _assert_sparse(got["v"], [[0], [1]], [4, 5], [2], np.int64)
    with pytest.raises(ValueError, match=r"Shape must be rank 0 but is rank 1"):
        tf.parse_single_example(["a"], {"x": tf.VarLenFeature(tf.int64)})


def test_feature_config_errors():
    s = tf.placeholder(tf.string, [None])
    with pytest.raises(ValueError, match="Missing: features was"):
        tf.parse_example(s, {})
    with pytest.raises(ValueError, match="First dimension of shape for feature x unknown"):
        tf.parse_example(s, {"x": tf.FixedLenFeature([None], tf.int64)})
    with pytest.raises(ValueError, match="All dimensions of shape for feature x need to be "
                                         "known"):
        tf.parse_example(s, {"x": tf.FixedLenFeature([2, None], tf.int64)})
    with pytest.raises(ValueError, match="FixedLenSequenceFeature requires allow_missing"):
        tf.parse_example(s, {"x": tf.FixedLenSequenceFeature([], tf.int64)})
    with pytest.raises(TypeError, match="has dtype int32, but an Example holds only"):
        tf.parse_example(s, {"x": tf.VarLenFeature(tf.int32)})
    with pytest.raises(ValueError, match="Invalid feature x"):
        tf.parse_example(s, {"x": "int64"})
    with pytest.raises(ValueError, match=r"Cannot reshape a tensor with 3 elements to shape "
                                         r"\[2\].*feature 'x'"):
        tf.parse_example(s, {"x": tf.FixedLenFeature([2], tf.int64, default_value=[1, 2, 3])})
    with pytest.raises(ValueError, match="Shape must be rank 1 but is rank 0"):
        tf.parse_example(tf.placeholder(tf.string, []), {"x": tf.VarLenFeature(tf.int64)})
    assert tf.FixedLenFeature([2], tf.int64) == (([2], tf.int64, None))
    assert tf.FixedLenSequenceFeature([], tf.float32)._fields == (
        "shape", "dtype", "allow_missing", "default_value")
    assert tf.io.parse_example is tf.parse_example and tf.io.VarLenFeature is tf.VarLenFeature


# -- decode_raw --------------------------------------------------------------------------------
def test_decode_raw_endianness_and_shapes():
    raw = tf.placeholder(tf.string, [None])
    little = tf.decode_raw(raw, tf.int32)
    big = tf.io.decode_raw(raw, tf.int32, little_endian=False)
    as_bytes = tf.decode_raw(input_bytes=raw, out_type=tf.uint8)
    floats = tf.decode_raw(bytes=raw, out_type=tf.float32)
    assert little.op.type == "DecodeRaw" and little.dtype == tf.int32
    assert little.shape.as_list() == [None, None]
    records = [b"\x01\x00\x00\x00\x00\x01\x00\x00", b"\xff\xff\xff\xff\x00\x00\x80\x3f"]
    got = run([little, big, as_bytes, floats], {raw: records})
    np.testing.assert_array_equal(got[0], np.array([[1, 256], [-1, 0x3F800000]], np.int32))
    np.testing.assert_array_equal(got[1], np.array([[0x01000000, 0x00010000],
                                                    [-1, 0x0000803F]], np.int32))
    np.testing.assert_array_equal(got[2], np.frombuffer(b"".join(records), np.uint8)
                                  .reshape(2, 8))
    assert got[3][1, 1] == 1.0 and got[3].dtype == np.float32
    scalar = run(tf.decode_raw(tf.constant(b"\x00\x3c"), tf.float16))  # 1.0 as IEEE half
    assert scalar.shape == (1,) and scalar[0] == 1.0
    assert run(tf.decode_raw(tf.constant([b"", b""]), tf.int64)).shape == (2, 0)


def test_decode_raw_errors():
    raw = tf.placeholder(tf.string, [None])
    with pytest.raises(InvalidArgumentError, match=r"DecodeRaw requires input strings to all "
                                                   r"be the same size, but element 1 has size "
                                                   r"4 != 2"):
        run(tf.decode_raw(raw, tf.int16), {raw: [b"abcd", b"ab"]})
    with pytest.raises(InvalidArgumentError, match=r"Input to DecodeRaw has length 3 that is "
                                                   r"not a multiple of 4, the size of float"):
        run(tf.decode_raw(raw, tf.float32), {raw: [b"abc"]})
    with pytest.raises(TypeError, match="not in list of allowed values"):
        tf.decode_raw(raw, tf.string)
    with pytest.raises(ValueError, match="Cannot specify both 'input_bytes' and 'bytes'"):
        tf.decode_raw(raw, tf.uint8, bytes=raw)


# -- serialize_tensor / parse_tensor -----------------------------------------------------------
def test_serialize_and_parse_tensor_round_trip():
    x = tf.placeholder(tf.float32, [2, 3])
    serialized = tf.io.serialize_tensor(x * 2.0)
    assert serialized.dtype == tf.string and serialized.shape.as_list() == []
    back = tf.io.parse_tensor(serialized, tf.float32)
    strings = tf.io.parse_tensor(tf.io.serialize_tensor(tf.constant([["a", "b\x00"]])),
                                 tf.string)
    value = np.arange(6, dtype=np.float32).reshape(2, 3)
    got, got_strings = run([back, strings], {x: value})
    np.testing.assert_array_equal(got, value * 2)
    assert got_strings.tolist() == [[b"a", b"b\x00"]]
    with pytest.raises(InvalidArgumentError, match=r"Type mismatch between parsed tensor "
                                                   r"\(float\) and dtype \(int32\)"):
        run(tf.io.parse_tensor(serialized, tf.int32), {x: value})
