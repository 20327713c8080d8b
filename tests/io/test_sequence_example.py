"""tf.io.parse_single_sequence_example / parse_sequence_example on SequenceExamples built
with protobuf, and tf.io.SparseFeature in parse_example (TF's documented example)."""

import numpy as np
import pytest

import tensorflux as tf
from tests.helpers import run
from tests.io.test_example_proto import _protobuf_classes

InvalidArgumentError = tf.errors.InvalidArgumentError


def _feature(message, values):
    """Sets a Feature from a list of ints, floats or bytes; EMPTY_BYTES is an empty
    BytesList."""
    if values is EMPTY_BYTES:
        message.bytes_list.SetInParent()
        return
    kind = {int: "int64_list", float: "float_list", bytes: "bytes_list"}[type(values[0])]
    getattr(message, kind).value.extend(values)


EMPTY_BYTES = object()


def _sequence_example(context=None, lists=None):
    classes = _protobuf_classes()
    example = classes["tfxt.SequenceExample"]()
    for key, values in (context or {}).items():
        _feature(example.context.feature[key], values)
    for key, steps in (lists or {}).items():
        feature_list = example.feature_lists.feature_list[key]
        feature_list.SetInParent()
        for values in steps:
            _feature(feature_list.feature.add(), values)
    return example.SerializeToString()


FIRST = _sequence_example(
    context={"length": [3], "label": [b"cat"], "tags": [1.5, 2.5]},
    lists={"tokens": [[1, 2], [3, 4], [5, 6]], "words": [[b"a"], [b"b", b"c"], EMPTY_BYTES]})
SECOND = _sequence_example(
    context={"length": [1]},
    lists={"tokens": [[7, 8]], "words": [[b"d", b"e", b"f"]]})

CONTEXT = {"length": tf.io.FixedLenFeature([], tf.int64),
           "label": tf.io.FixedLenFeature([], tf.string, default_value="none"),
           "tags": tf.io.VarLenFeature(tf.float32)}
SEQUENCE = {"tokens": tf.io.FixedLenSequenceFeature([2], tf.int64),
            "words": tf.io.VarLenFeature(tf.string),
            "extra": tf.io.FixedLenSequenceFeature([], tf.float32, allow_missing=True)}


def test_parse_single_sequence_example():
    assert tf.parse_single_sequence_example is tf.io.parse_single_sequence_example
    context, lists = tf.io.parse_single_sequence_example(FIRST, CONTEXT, SEQUENCE,
                                                         example_name="first")
    assert lists["tokens"].shape.as_list() == [None, 2]
    assert lists["extra"].shape.as_list() == [None]
    assert context["length"].shape.as_list() == []
    assert isinstance(context["tags"], tf.SparseTensor)
    assert lists["tokens"].op.type == "ParseSingleSequenceExample"
    got_context, got_lists = run([context, lists])
    assert got_context["length"] == 3 and got_context["label"] == b"cat"
    assert got_context["tags"].values.tolist() == [1.5, 2.5]
    assert got_context["tags"].indices.tolist() == [[0], [1]]
    assert got_context["tags"].dense_shape.tolist() == [2]
    np.testing.assert_array_equal(got_lists["tokens"], [[1, 2], [3, 4], [5, 6]])
    assert got_lists["tokens"].dtype == np.int64
    assert got_lists["extra"].shape == (0,) and got_lists["extra"].dtype == np.float32
    words = got_lists["words"]
    assert words.indices.tolist() == [[0, 0], [1, 0], [1, 1]]
    assert words.values.tolist() == [b"a", b"b", b"c"]
    assert words.dense_shape.tolist() == [3, 2]
    # A missing context feature takes its default.
    got = run(tf.io.parse_single_sequence_example(SECOND, CONTEXT, SEQUENCE))
    assert got[0]["label"] == b"none" and got[0]["tags"].values.tolist() == []


def test_parse_sequence_example_batch():
    context, lists, lengths = tf.io.parse_sequence_example(
        [FIRST, SECOND], CONTEXT, SEQUENCE, example_names=["first", "second"])
    assert lists["tokens"].shape.as_list() == [2, None, 2]
    assert context["length"].shape.as_list() == [2]
    assert sorted(lengths) == ["extra", "tokens"]
    got_context, got_lists, got_lengths = run([context, lists, lengths])
    assert got_context["length"].tolist() == [3, 1]
    assert got_context["label"].tolist() == [b"cat", b"none"]
    assert got_context["tags"].indices.tolist() == [[0, 0], [0, 1]]
    assert got_context["tags"].dense_shape.tolist() == [2, 2]
    # Shorter feature lists are padded with 0 ("" for strings).
    np.testing.assert_array_equal(got_lists["tokens"], [[[1, 2], [3, 4], [5, 6]],
                                                        [[7, 8], [0, 0], [0, 0]]])
    assert got_lengths["tokens"].tolist() == [3, 1] and got_lengths["extra"].tolist() == [0, 0]
    words = got_lists["words"]
    assert words.indices.tolist() == [[0, 0, 0], [0, 1, 0], [0, 1, 1], [1, 0, 0], [1, 0, 1],
                                      [1, 0, 2]]
    assert words.values.tolist() == [b"a", b"b", b"c", b"d", b"e", b"f"]
    assert words.dense_shape.tolist() == [2, 3, 3]


def test_sequence_example_errors():
    with pytest.raises(InvalidArgumentError) as info:
        run(tf.io.parse_single_sequence_example(
            SECOND, sequence_features={"missing": tf.io.FixedLenSequenceFeature([2], tf.int64)},
            example_name="in1"))
    assert info.value.message.splitlines()[0] == (
        "Name: in1, Feature list 'missing' is required but could not be found.  Did you mean "
        "to include it in feature_list_dense_missing_assumed_empty or "
        "feature_list_dense_defaults?")
    with pytest.raises(InvalidArgumentError) as info:
        run(tf.io.parse_single_sequence_example(
            FIRST, sequence_features={"tokens": tf.io.FixedLenSequenceFeature([], tf.float32)}))
    assert info.value.message.startswith(
        "Name: <unknown>, Feature list: tokens, Index: 0.  Data types don't match. Expected "
        "type: float  Feature is: int64_list {\n  value: 1\n  value: 2\n}")
    with pytest.raises(InvalidArgumentError, match="Name: <unknown>, Key: tokens, Index: 0.  "
                                                   "Number of int64 values != expected.  "
                                                   r"values size: 2 but output shape: \[3\]"):
        run(tf.io.parse_single_sequence_example(
            FIRST, sequence_features={"tokens": tf.io.FixedLenSequenceFeature([3], tf.int64)}))
    with pytest.raises(InvalidArgumentError, match="Name: <unknown>, Context feature 'nope' is "
                                                   "required but could not be found."):
        run(tf.io.parse_single_sequence_example(
            FIRST, {"nope": tf.io.FixedLenFeature([], tf.int64)}))
    with pytest.raises(InvalidArgumentError, match=r"Feature: nope \(data type: int64\) is "
                                                   "required but could not be found."):
        run(tf.io.parse_sequence_example([FIRST], {"nope": tf.io.FixedLenFeature([], tf.int64)}))
    with pytest.raises(InvalidArgumentError, match="Could not parse example input"):
        run(tf.io.parse_single_sequence_example(b"\xff\xff", CONTEXT))
    with pytest.raises(ValueError, match="Missing features."):
        tf.io.parse_sequence_example([FIRST])
    with pytest.raises(ValueError, match=r"Value feature_list.dense_defaults\[a\] must be None"):
        tf.io.parse_single_sequence_example(FIRST, sequence_features={
            "a": tf.io.FixedLenSequenceFeature([], tf.int64, True, default_value=0)})
    with pytest.raises(ValueError, match="Unsupported FixedLenSequenceFeature"):
        tf.io.parse_single_sequence_example(FIRST, {
            "a": tf.io.FixedLenSequenceFeature([], tf.int64, True)})


def _example(features):
    classes = _protobuf_classes()
    example = classes["tfxt.Example"]()
    for key, values in features.items():
        _feature(example.features.feature[key], values)
    return example.SerializeToString()


def test_sparse_feature_tf_documented_example():
    serialized = [_example({"val": [0.5, -1.0], "ix": [3, 20]}),
                  _example({"val": [0.0], "ix": [42]}),
                  _example({"val": [1.0, 2.0, 3.0], "ix": [9, 2, 5], "iy": [1, 0, 1]})]
    parsed = tf.io.parse_example(serialized, {
        "sparse": tf.io.SparseFeature(index_key="ix", value_key="val", dtype=tf.float32,
                                      size=100)})
    two_d = tf.io.parse_example(serialized[2:], {
        "grid": tf.SparseFeature(["ix", "iy"], "val", tf.float32, [10, 2])})
    single = tf.io.parse_single_example(serialized[2], {
        "sparse": tf.io.SparseFeature("ix", "val", tf.float32, 10, already_sorted=True)})
    assert sorted(parsed) == ["sparse"]
    got, got_2d, got_single = run([parsed["sparse"], two_d["grid"], single["sparse"]])
    # Indices [batch, ix] in row-major order (the third record's ix are sorted).
    assert got.indices.tolist() == [[0, 3], [0, 20], [1, 42], [2, 2], [2, 5], [2, 9]]
    np.testing.assert_array_equal(got.values, [0.5, -1.0, 0.0, 2.0, 3.0, 1.0])
    assert got.dense_shape.tolist() == [3, 100]
    assert got_2d.indices.tolist() == [[0, 2, 0], [0, 5, 1], [0, 9, 1]]
    np.testing.assert_array_equal(got_2d.values, [2.0, 3.0, 1.0])
    assert got_2d.dense_shape.tolist() == [1, 10, 2]
    assert got_single.indices.tolist() == [[9], [2], [5]]  # already_sorted: kept as given
    assert got_single.dense_shape.tolist() == [10]
    with pytest.raises(ValueError, match="Conflicting type"):
        tf.io.parse_example(serialized, {"sparse": tf.io.SparseFeature("ix", "val", tf.float32,
                                                                       100),
                                         "ix": tf.io.VarLenFeature(tf.float32)})
