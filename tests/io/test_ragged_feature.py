"""tf.io.RaggedFeature through parse_example / parse_single_example: TF's documented
example, every partition kind against row-building written here in Python, one record
and a batch, and TF's errors."""

import numpy as np
import pytest

import tensorflux as tf

train = tf.train
RF = tf.io.RaggedFeature


def _feature(values):
    if values and all(isinstance(v, (bytes, str)) for v in values):
        return train.Feature(bytes_list=train.BytesList(value=values))
    if any(isinstance(v, float) for v in values):
        return train.Feature(float_list=train.FloatList(value=values))
    return train.Feature(int64_list=train.Int64List(value=values))


def _example(**features):
    return train.Example(features=train.Features(
        feature={k: _feature(v) for k, v in features.items()})).SerializeToString()


# Row building in Python: each partition kind as TF documents it.
def _by_splits(values, splits):
    return [values[splits[i]:splits[i + 1]] for i in range(len(splits) - 1)]


def _by_lengths(values, lengths):
    return _by_splits(values, [0] + list(np.cumsum(lengths, dtype=int)))


def _by_starts(values, starts):
    return _by_splits(values, list(starts) + [len(values)])


def _by_limits(values, limits):
    return _by_splits(values, [0] + list(limits))


def _by_rowids(values, rowids):
    nrows = max(rowids) + 1 if rowids else 0
    return [[v for v, r in zip(values, rowids) if r == i] for i in range(nrows)]


def _uniform(values, length):
    return [values[i:i + length] for i in range(0, len(values), length)]


def _lists(value):
    return value.to_list() if isinstance(value, tf.ragged.RaggedTensorValue) else value.tolist()


# TF's documented example (tf.io.RaggedFeature).
DOC_RECORDS = [
    _example(v=[3, 1, 4, 1, 5, 9], s1=[0, 2, 3, 3, 6], s2=[0, 2, 3, 4]),
    _example(v=[2, 7, 1, 8, 2, 8, 1], s1=[0, 3, 4, 5, 7], s2=[0, 1, 1, 4]),
]
DOC_FEATURES = {
    "f1": RF(value_key="v", dtype=tf.int64),
    "f2": RF(value_key="v", dtype=tf.int64, partitions=[RF.RowSplits("s1")]),
    "f3": RF(value_key="v", dtype=tf.int64, partitions=[RF.RowSplits("s2"),
                                                       RF.RowSplits("s1")]),
}


def test_tf_documented_example():
    single = tf.io.parse_single_example(DOC_RECORDS[0], DOC_FEATURES)
    batch = tf.io.parse_example(DOC_RECORDS, DOC_FEATURES)
    named = tf.io.parse_single_example(DOC_RECORDS[1], DOC_FEATURES, example_names="r1")
    assert sorted(single) == ["f1", "f2", "f3"]
    assert isinstance(single["f1"], tf.Tensor) and single["f1"].dtype == tf.int64
    assert single["f2"].ragged_rank == 1 and single["f3"].ragged_rank == 2
    assert batch["f1"].ragged_rank == 1 and batch["f3"].ragged_rank == 3
    assert batch["f2"].row_splits.dtype == tf.int32  # RaggedFeature's default
    with tf.Session() as sess:
        single, batch, named = sess.run([single, batch, named])
    assert _lists(single["f1"]) == [3, 1, 4, 1, 5, 9]
    assert _lists(single["f2"]) == [[3, 1], [4], [], [1, 5, 9]]
    assert _lists(single["f3"]) == [[[3, 1], [4]], [[]], [[1, 5, 9]]]
    assert _lists(batch["f1"]) == [[3, 1, 4, 1, 5, 9], [2, 7, 1, 8, 2, 8, 1]]
    assert _lists(batch["f2"]) == [[[3, 1], [4], [], [1, 5, 9]], [[2, 7, 1], [8], [2], [8, 1]]]
    assert _lists(batch["f3"]) == [[[[3, 1], [4]], [[]], [[1, 5, 9]]],
                                   [[[2, 7, 1]], [], [[8], [2], [8, 1]]]]
    assert _lists(named["f3"]) == [[[2, 7, 1]], [], [[8], [2], [8, 1]]]


RECORDS = [
    dict(v=[1.5, 2.5, 3.5, 4.5, 5.5, 6.5], w=["a", "bc", "", "d"], lens=[2, 0, 4],
         starts=[0, 1, 1], limits=[3, 3, 6], ids=[0, 0, 2, 2, 2, 3], plens=[1, 0, 2]),
    dict(v=[7.5, 8.5], w=["e"], lens=[2], starts=[0], limits=[2], ids=[1, 1], plens=[0, 1]),
    dict(lens=[], starts=[], limits=[], ids=[], plens=[]),  # no values at all
]


def test_every_partition_kind_single_and_batched():
    features = {
        "lengths": RF(tf.float32, value_key="v", partitions=[RF.RowLengths("lens")]),
        "starts": RF(tf.float32, value_key="v", partitions=[RF.RowStarts("starts")]),
        "limits": RF(tf.float32, value_key="v", partitions=[RF.RowLimits("limits")]),
        "rowids": RF(tf.float32, value_key="v", partitions=[RF.ValueRowIds("ids")]),
        "pairs": RF(tf.float32, value_key="v", partitions=[RF.UniformRowLength(2)]),
        "ragged_pairs": RF(tf.float32, value_key="v", partitions=[
            RF.RowLengths("plens"), RF.UniformRowLength(2)]),
        "pairs_of_rows": RF(tf.float32, value_key="v", partitions=[
            RF.UniformRowLength(1), RF.RowLengths("lens")]),
        "w": RF(tf.string, row_splits_dtype=tf.int64),
    }
    serialized = [_example(**r) for r in RECORDS]
    batch = tf.io.parse_example(serialized, features)
    singles = [tf.io.parse_single_example(s, features) for s in serialized[:2]]
    assert isinstance(singles[0]["pairs"], tf.Tensor)  # a trailing uniform partition
    assert batch["w"].row_splits.dtype == tf.int64
    assert batch["starts"].row_splits.dtype == tf.int32
    with tf.Session() as sess:
        batch, singles = sess.run([batch, singles])
    expected = []
    for r in RECORDS:
        v, lens = r.get("v", []), r["lens"]
        expected.append({
            "lengths": _by_lengths(v, lens), "starts": _by_starts(v, r["starts"]),
            "limits": _by_limits(v, r["limits"]), "rowids": _by_rowids(v, r["ids"]),
            "pairs": _uniform(v, 2), "ragged_pairs": _by_lengths(_uniform(v, 2), r["plens"]),
            "pairs_of_rows": _uniform(_by_lengths(v, lens), 1),
            "w": [s.encode() for s in r.get("w", [])]})
    for key in features:
        assert _lists(batch[key]) == [e[key] for e in expected], key
        for single, e in zip(singles, expected):
            assert _lists(single[key]) == e[key], key


def test_validate_and_errors():
    with pytest.raises(ValueError, match="dtypes must be int64, float32, or bytes"):
        RF(tf.int32)
    with pytest.raises(ValueError, match="row_splits_dtype must be int32 or int64"):
        RF(tf.int64, row_splits_dtype=tf.float32)
    with pytest.raises(TypeError, match="partitions must be a list of partition objects"):
        RF(tf.int64, partitions=["s1"])
    with pytest.raises(TypeError, match="validate must be a bool"):
        RF(tf.int64, validate=1)
    with pytest.raises(ValueError, match="value_key may not be empty"):
        RF(tf.int64, value_key="")
    with pytest.raises(ValueError, match="Conflicting type <dtype: 'int64'> vs <dtype: "
                                         "'float32'> for feature v."):
        tf.io.parse_example(DOC_RECORDS, {"a": RF(tf.int64, value_key="v"),
                                          "b": RF(tf.float32, value_key="v")})
    with pytest.raises(ValueError, match="Conflicting partition type <dtype: 'int32'> vs "
                                         "<dtype: 'int64'> for feature v."):
        tf.io.parse_example(DOC_RECORDS, {"a": RF(tf.int64, value_key="v"),
                                          "b": RF(tf.int64, value_key="v",
                                                  row_splits_dtype=tf.int64)})
    with pytest.raises(ValueError, match="Ragged and sparse keys must not intersect; "
                                         "intersection: {'v'}"):
        tf.io.parse_example(DOC_RECORDS, {"a": RF(tf.int64, value_key="v"),
                                          "v": tf.io.VarLenFeature(tf.int64)})
    with pytest.raises(ValueError, match="Dense and ragged keys must not intersect"):
        tf.io.parse_example(DOC_RECORDS, {"a": RF(tf.int64, value_key="v"),
                                          "v": tf.io.FixedLenFeature([6], tf.int64)})
    bad = _example(v=[1, 2, 3], s=[0, 2, 5])  # the splits end past the values
    checked = tf.io.parse_single_example(
        bad, {"f": RF(tf.int64, value_key="v", partitions=[RF.RowSplits("s")],
                      validate=True)})
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="Arguments to from_row_splits do not form a valid RaggedTensor"):
        with tf.Session() as sess:
            sess.run(checked)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Data types don't match"):
        with tf.Session() as sess:
            sess.run(tf.io.parse_example(DOC_RECORDS, {"v": RF(tf.float32)}))
