"""RaggedTensor components through tf.data: element specs as TF gives them (slices of a
RaggedTensor are RaggedTensorSpecs of ragged_rank 0, batching adds an outer ragged
dimension), map/batch/unbatch/rebatch, shuffle/prefetch/cache/save/snapshot,
ragged_batch and dense_to_ragged_batch (TF's documented example), iterators, optionals
and parsed RaggedFeatures. Expected values are nested lists written from the inputs."""

import numpy as np
import pytest

import tensorflux as tf
from tests.data.test_dataset import drain

ROWS = [[1, 2], [], [3, 4, 5], [6]]
Spec = tf.RaggedTensorSpec


def _lists(value):
    if isinstance(value, dict):
        return {k: _lists(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return tuple(_lists(v) for v in value)
    if isinstance(value, tf.ragged.RaggedTensorValue):
        return value.to_list()
    return np.asarray(value).tolist()


def _batches(rows, size):
    return [rows[i:i + size] for i in range(0, len(rows), size)]


def test_slices_batches_and_specs():
    rt = tf.ragged.constant(ROWS)
    slices = tf.data.Dataset.from_tensor_slices(rt)
    # TF: the rows of a ragged_rank-1 RaggedTensor are dense tensors of ragged_rank 0.
    assert slices.element_spec == Spec([None], tf.int32, 0, tf.int64)
    assert slices.output_classes == slices.element_spec  # TF's legacy class: the spec
    assert slices.output_types == tf.int32 and slices.output_shapes.as_list() == [None]
    batched = slices.batch(3)
    assert batched.element_spec == Spec([None, None], tf.int32, 1, tf.int64)
    assert slices.batch(2, drop_remainder=True).element_spec.shape.as_list() == [2, None]
    whole = tf.data.Dataset.from_tensors(rt).repeat(2).batch(2)
    assert whole.element_spec == Spec([None, 4, None], tf.int32, 2, tf.int64)
    doubled = batched.map(lambda x: x * 2)
    dense = batched.map(lambda x: (x.row_lengths(), x.to_tensor()))
    made = tf.data.Dataset.range(3).map(
        lambda n: tf.RaggedTensor.from_row_lengths(tf.range(n * 2), tf.stack([n, n])))
    assert made.element_spec == Spec([2, None], tf.int64, 1, tf.int64)
    pairs = tf.data.Dataset.zip((batched, tf.data.Dataset.range(2)))
    got = [drain(d) for d in (slices, batched, whole, doubled, dense, made, batched.unbatch(),
                              batched.rebatch(2), pairs, slices.filter(lambda x: tf.size(x) > 1))]
    rows_, batches, wholes, doubles, denses, mades, unbatched, rebatched, zipped, kept = got
    assert [_lists(r) for r in rows_] == ROWS
    assert isinstance(rows_[0], np.ndarray)  # a ragged_rank-0 component is a dense value
    assert [_lists(b) for b in batches] == _batches(ROWS, 3)
    assert isinstance(batches[0], tf.ragged.RaggedTensorValue)
    assert [_lists(w) for w in wholes] == [[ROWS, ROWS]]
    assert [_lists(d) for d in doubles] == [[[2 * v for v in r] for r in b]
                                            for b in _batches(ROWS, 3)]
    assert _lists(denses[0]) == ([2, 0, 3], [[1, 2, 0], [0, 0, 0], [3, 4, 5]])
    assert [_lists(m) for m in mades] == [[list(range(n)), list(range(n, 2 * n))]
                                          for n in range(3)]
    assert [_lists(u) for u in unbatched] == ROWS
    assert [_lists(r) for r in rebatched] == _batches(ROWS, 2)
    assert [_lists(z) for z in zipped] == [(ROWS[:3], 0), (ROWS[3:], 1)]
    assert [_lists(k) for k in kept] == [[1, 2], [3, 4, 5]]


def test_ragged_batch_and_dense_to_ragged_batch():
    # TF's documented example of dense_to_ragged_batch.
    ranges = tf.data.Dataset.range(6).map(lambda x: tf.range(x))
    assert ranges.element_spec.shape.as_list() == [None]
    documented = ranges.apply(tf.data.experimental.dense_to_ragged_batch(batch_size=2))
    assert documented.element_spec == Spec([None, None], tf.int64, 1, tf.int64)
    mixed = tf.data.Dataset.range(4).map(
        lambda x: (tf.fill(tf.stack([x, 2]), x), tf.zeros([3]),
                   tf.fill(tf.stack([x, x]), "s"), tf.RaggedTensor.from_row_lengths(
                       tf.range(x), tf.stack([x]))))
    batched = mixed.ragged_batch(2, row_splits_dtype=tf.int32)
    # Ragged up to the last unknown dimension; fully defined and ragged components as is.
    assert batched.element_spec == (Spec([None, None, 2], tf.int64, 1, tf.int32),
                                     tf.TensorSpec([None, 3], tf.float32),
                                     Spec([None, None, None], tf.string, 2, tf.int32),
                                     Spec([None, 1, None], tf.int64, 2, tf.int64))
    assert mixed.ragged_batch(2, drop_remainder=True).element_spec[1].shape.as_list() == [2, 3]
    got_doc, got_mixed = drain(documented), drain(batched)
    assert [_lists(b) for b in got_doc] == [[[], [0]], [[0, 1], [0, 1, 2]],
                                            [[0, 1, 2, 3], [0, 1, 2, 3, 4]]]
    for batch, xs in zip(got_mixed, ([0, 1], [2, 3])):
        fills, zeros, strings, ranged = batch
        assert fills.row_splits.dtype == np.int32 and strings.row_splits.dtype == np.int32
        assert _lists(fills) == [[[x, x]] * x for x in xs]
        assert zeros.shape == (2, 3)
        assert _lists(strings) == [[[b"s"] * x] * x for x in xs]
        assert _lists(ranged) == [[list(range(x))] for x in xs]


def test_pipeline_stages_keep_ragged_values(tmp_path):
    rt = tf.ragged.constant(ROWS)
    batched = tf.data.Dataset.from_tensor_slices(rt).batch(2)
    cached = batched.cache(str(tmp_path / "cache"))
    path = str(tmp_path / "saved")
    with tf.Session() as sess:
        sess.run(batched.save(path))
    loaded = tf.data.Dataset.load(path)
    assert loaded.element_spec == batched.element_spec
    snap = batched.apply(tf.data.experimental.snapshot(str(tmp_path / "snap")))
    shuffled = tf.data.Dataset.from_tensor_slices(rt).shuffle(4, seed=3).prefetch(2)
    interleaved = batched.interleave(tf.data.Dataset.from_tensor_slices, cycle_length=2)
    windows = tf.data.Dataset.from_tensor_slices(rt).window(3).flat_map(lambda w: w.batch(3))
    expected = _batches(ROWS, 2)
    for dataset in (cached, cached, loaded, snap, snap):  # a second pass reads the files
        assert [_lists(b) for b in drain(dataset)] == expected
    assert sorted(map(str, (_lists(r) for r in drain(shuffled)))) == sorted(map(str, ROWS))
    # Round robin over two inputs: rows 0 and 2, then 1 and 3.
    assert [_lists(r) for r in drain(interleaved)] == [ROWS[0], ROWS[2], ROWS[1], ROWS[3]]
    assert [_lists(w) for w in drain(windows)] == [ROWS[:3], ROWS[3:]]


def test_iterators_optionals_and_consumers():
    rt = tf.ragged.constant(ROWS)
    batched = tf.data.Dataset.from_tensor_slices(rt).batch(2)
    iterator = tf.data.Iterator.from_structure(batched.output_types, batched.output_shapes,
                                               output_classes=batched.output_classes)
    init, element = iterator.make_initializer(batched), iterator.get_next()
    assert isinstance(element, tf.RaggedTensor) and element.ragged_rank == 1
    flat = tf.nest.flatten(element, expand_composites=True)
    optional = tf.data.experimental.Optional.from_value(rt)
    one_shot = tf.data.make_one_shot_iterator(batched).get_next_as_optional()
    single = tf.data.experimental.get_single_element(tf.data.Dataset.from_tensors(rt))
    total = batched.reduce(np.int64(0), lambda s, x: s + tf.cast(tf.reduce_sum(x.values),
                                                                 tf.int64))
    with tf.Session() as sess:
        sess.run(init)
        first, flat_values = sess.run([element, flat])
        got = sess.run({"optional": optional.get_value(), "has": one_shot.has_value(),
                        "next": one_shot.get_value(), "single": single, "total": total})
    assert first.to_list() == ROWS[:2]
    assert [v.tolist() for v in flat_values] == [[1, 2], [0, 2, 2]]  # flat values, splits
    assert got["optional"].to_list() == ROWS and got["has"]
    assert got["next"].to_list() == ROWS[:2] and got["single"].to_list() == ROWS
    assert got["total"] == sum(map(sum, ROWS))
    assert optional.element_spec == Spec([4, None], tf.int32, 1, tf.int64)
    assert tf.data.experimental.RaggedTensorStructure(tf.int32, [None, None], 1) == \
        Spec([None, None], tf.int32, 1, tf.int64)
    with pytest.raises(TypeError, match="padded_batch is only supported for datasets that "
                                        "produce values with type TensorSpec"):
        batched.padded_batch(2)
    # A ragged placeholder fed to the initializer run reaches the pipeline.
    fed = tf.ragged.placeholder(tf.int32, 1)
    iterator = tf.data.Dataset.from_tensor_slices(fed).map(lambda r: r * 2) \
        .make_initializable_iterator()
    element = iterator.get_next()
    with tf.Session() as sess:
        for rows in (ROWS, [[7]]):
            sess.run(iterator.initializer,
                     {fed: tf.ragged.constant_value(rows, dtype=np.int32)})
            assert [sess.run(element).tolist() for _ in rows] == [[2 * v for v in r]
                                                                 for r in rows]


def test_parsed_ragged_features_and_batch_errors():
    def example(values, lengths):
        return tf.train.Example(features=tf.train.Features(feature={
            "v": tf.train.Feature(int64_list=tf.train.Int64List(value=values)),
            "l": tf.train.Feature(int64_list=tf.train.Int64List(value=lengths))})
        ).SerializeToString()

    records = np.array([example([1, 2, 3], [2, 1]), example([], []), example([4], [0, 1])],
                       object)
    features = {"r": tf.io.RaggedFeature(tf.int64, value_key="v",
                                         partitions=[tf.io.RaggedFeature.RowLengths("l")])}
    slices = tf.data.Dataset.from_tensor_slices(records)
    parsed = slices.batch(2).apply(tf.data.experimental.parse_example_dataset(features))
    single = slices.map(lambda s: tf.io.parse_single_example(s, features)).batch(3)
    assert parsed.element_spec == single.element_spec == {
        "r": Spec([None, None, None], tf.int64, 2, tf.int32)}
    expected = [[[1, 2], [3]], [], [[], [4]]]
    assert [_lists(b["r"]) for b in drain(parsed)] == [expected[:2], expected[2:]]
    assert [_lists(b["r"]) for b in drain(single)] == [expected]
    # Flat values whose inner dimension differs between elements cannot be batched.
    square = tf.data.Dataset.range(1, 3).map(
        lambda n: tf.RaggedTensor.from_row_lengths(tf.zeros(tf.stack([n, n])), tf.stack([n])))
    with pytest.raises(tf.errors.InvalidArgumentError, match="Cannot batch ragged tensors "
                                                             "with different inner shapes"):
        drain(square.batch(2))
