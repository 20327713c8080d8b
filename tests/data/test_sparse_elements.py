"""SparseTensor components through tf.data: parsed VarLenFeatures, slicing, batching
(TF1's rule: indices prefixed by the element's position, the dense shape the largest
of each dimension), unbatching, shuffle/prefetch/cache, dense_to_sparse_batch. The
expected values are written out by hand from the inputs."""

import numpy as np
import pytest

import tensorflux as tf
from tests.data.test_dataset import drain


def _example(values, label):
    return tf.train.Example(features=tf.train.Features(feature={
        "v": tf.train.Feature(int64_list=tf.train.Int64List(value=values)),
        "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[label])),
    })).SerializeToString()


RECORDS = [_example([1, 2], 0), _example([], 1), _example([3], 2)]  # [] ends in a NUL byte
FEATURES = {"v": tf.VarLenFeature(tf.int64), "label": tf.FixedLenFeature([], tf.int64)}


def _sparse(value):
    return (np.asarray(value.indices).tolist(), np.asarray(value.values).tolist(),
            np.asarray(value.dense_shape).tolist())


def test_parsed_varlen_features_map_batch_unbatch():
    records = tf.data.Dataset.from_tensor_slices(np.array(RECORDS, object))
    parsed = records.map(lambda r: tf.parse_single_example(r, FEATURES))
    assert parsed.output_classes["v"] is tf.SparseTensor
    assert parsed.output_classes["label"] is tf.Tensor
    assert parsed.output_shapes["v"].as_list() == [None]
    batches = drain(parsed.batch(2))
    assert isinstance(batches[0]["v"], tf.SparseTensorValue)
    assert _sparse(batches[0]["v"]) == ([[0, 0], [0, 1]], [1, 2], [2, 2])
    assert _sparse(batches[1]["v"]) == ([[0, 0]], [3], [1, 1])
    assert batches[0]["label"].tolist() == [0, 1]
    # Unbatching keeps the batch's dense shape for every row, as TF's unbatch does.
    rows = drain(parsed.batch(3).unbatch())
    assert [_sparse(r["v"]) for r in rows] == [([[0], [1]], [1, 2], [2]),
                                              ([], [], [2]), ([[0]], [3], [2])]
    # parse_example on batches of records (the raising case before): map after batch.
    batched = records.batch(2).map(lambda r: tf.parse_example(r, FEATURES))
    assert [_sparse(b["v"]) for b in drain(batched)] == [([[0, 0], [0, 1]], [1, 2], [2, 2]),
                                                         ([[0, 0]], [3], [1, 1])]
    assert parsed.element_spec["v"] == tf.data.experimental.SparseTensorStructure(
        tf.int64, [None])


def test_sparse_through_shuffle_prefetch_and_file_cache(tmp_path):
    records = tf.data.Dataset.from_tensor_slices(np.array(RECORDS, object))
    parsed = records.map(lambda r: tf.parse_single_example(r, FEATURES))
    path = str(tmp_path / "sparse")
    pipeline = parsed.shuffle(3, seed=5).prefetch(2).cache(path)
    first = drain(pipeline)
    expected = {0: ([[0], [1]], [1, 2], [2]), 1: ([], [], [0]), 2: ([[0]], [3], [1])}
    assert sorted(int(e["label"]) for e in first) == [0, 1, 2]
    assert all(_sparse(e["v"]) == expected[int(e["label"])] for e in first)
    second = drain(pipeline)  # read back from the cache file
    assert [(int(e["label"]), _sparse(e["v"])) for e in second] == \
        [(int(e["label"]), _sparse(e["v"])) for e in first]


def test_sparse_slices_and_tensors():
    st = tf.SparseTensor([[0, 0], [1, 2], [1, 0]], [1, 2, 3], [3, 4])
    rows = drain(tf.data.Dataset.from_tensor_slices(st))
    assert [_sparse(r) for r in rows] == [([[0]], [1], [4]), ([[2], [0]], [2, 3], [4]),
                                          ([], [], [4])]
    legacy = drain(tf.data.Dataset.from_sparse_tensor_slices(st))  # TF1: (indices, values, shape)
    assert [tuple(np.asarray(p).tolist() for p in row) for row in legacy] == \
        [([[0]], [1], [4]), ([[2], [0]], [2, 3], [4]), ([], [], [4])]
    whole = drain(tf.data.Dataset.from_tensors(st))
    assert _sparse(whole[0]) == ([[0, 0], [1, 2], [1, 0]], [1, 2, 3], [3, 4])
    with pytest.raises(TypeError, match="must be a `tf.SparseTensor` object"):
        tf.data.Dataset.from_sparse_tensor_slices(np.zeros(3))


def test_sparse_iterator_from_structure_and_padded_batch_error():
    dataset = tf.data.Dataset.range(3).map(lambda x: tf.SparseTensor([[1]], [x * 10], [3]))
    iterator = tf.data.Iterator.from_structure(dataset.output_types, dataset.output_shapes,
                                               output_classes=dataset.output_classes)
    element = iterator.get_next()
    assert isinstance(element, tf.SparseTensor)
    with tf.Session() as sess:
        sess.run(iterator.make_initializer(dataset.skip(2)))
        assert _sparse(sess.run(element)) == ([[1]], [20], [3])
    with pytest.raises(TypeError, match="Batching of padded sparse tensors"):
        dataset.padded_batch(2, [None])


def test_dense_to_sparse_batch():
    ragged = tf.data.Dataset.range(4).map(lambda n: tf.range(n) + 1)
    batches = drain(ragged.apply(tf.data.experimental.dense_to_sparse_batch(3, [None])))
    # every element of each input row, at its position; dense shape [batch, longest]
    assert [_sparse(b) for b in batches] == [
        ([[1, 0], [2, 0], [2, 1]], [1, 1, 2], [3, 2]), ([[0, 0], [0, 1], [0, 2]],
                                                        [1, 2, 3], [1, 3])]
    assert ragged.apply(tf.data.experimental.dense_to_sparse_batch(3, [5])) \
        .output_shapes.as_list() == [None, 5]
    fixed = ragged.sparse_batch(2, [2])
    with pytest.raises(tf.errors.DataLossError, match=r"Input element had shape \(\[3\]\) "
                       r"that is larger than the row shape \(\[2\]\)"):
        drain(fixed)
    with pytest.raises(tf.errors.InvalidArgumentError, match="incompatible with the row shape"):
        drain(ragged.sparse_batch(2, [2, 2]))
    with pytest.raises(TypeError, match="single component"):
        tf.data.Dataset.zip((ragged, ragged)).sparse_batch(2, [2])
