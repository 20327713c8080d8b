"""save/load/snapshot, options, Optional, cardinality, fingerprint, sampling, errors
that do not end the iteration, and the structure names of tf.data.experimental."""

import os

import numpy as np
import pytest

import tensorflux as tf
from tests.data.test_csv_sql_examples import drain_with_errors
from tests.data.test_dataset import drain, values


def _numbers():
    return tf.data.Dataset.range(6).map(lambda x: (x, tf.strings.as_string(x * 10)))


def test_save_and_load_with_shards_and_reader_func(tmp_path):
    path = str(tmp_path / "saved")
    save = _numbers().save(path, compression="GZIP", shard_func=lambda x, s: x % 2)
    with tf.Session() as sess:
        sess.run(save)
    assert not [n for n in os.listdir(tmp_path) if "tmp" in n]
    loaded = tf.data.Dataset.load(path)  # element_spec read from the saved run
    assert loaded.element_spec == (tf.TensorSpec([], tf.int64), tf.TensorSpec([], tf.string))
    expected = [(x, str(10 * x).encode()) for x in range(6)]
    # shard 0 (even numbers), then shard 1
    assert drain(loaded) == [expected[i] for i in (0, 2, 4, 1, 3, 5)]
    interleaved = tf.data.Dataset.load(
        path, reader_func=lambda shards: shards.interleave(lambda s: s, cycle_length=2))
    assert drain(interleaved) == expected
    assert values(drain(tf.data.Dataset.from_tensors(loaded.cardinality()))) == [6]
    # saving again replaces the run atomically: one run directory is left
    with tf.Session() as sess:
        sess.run(_numbers().take(2).save(path))
    assert drain(tf.data.Dataset.load(path)) == expected[:2]
    assert len([n for n in os.listdir(path) if n.startswith("run_")]) == 1
    with pytest.raises(tf.errors.NotFoundError, match="element_spec"):
        tf.data.Dataset.load(str(tmp_path / "missing"))


def test_failed_save_leaves_the_previous_run(tmp_path):
    path = str(tmp_path / "saved")
    with tf.Session() as sess:
        sess.run(tf.data.Dataset.range(3).save(path))
    failing = tf.data.Dataset.from_tensor_slices([1.0, 0.0]).map(
        lambda x: tf.cast(tf.debugging.check_numerics(1.0 / x, "inf"), tf.int64))
    with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError, match="inf"):
        sess.run(failing.save(path))
    assert values(drain(tf.data.Dataset.load(path))) == [0, 1, 2]
    assert sorted(n.startswith("run_") for n in os.listdir(path)) == [False, True]


def test_snapshot_writes_once_then_reads(tmp_path):
    calls = []

    def gen():
        calls.append(1)
        yield from range(4)

    path = str(tmp_path / "snap")
    source = tf.data.Dataset.from_generator(gen, tf.int64, [])
    snap = source.map(lambda x: x * 3).apply(tf.data.experimental.snapshot(path))
    assert values(drain(snap)) == [0, 3, 6, 9] and len(calls) == 1
    assert values(drain(snap)) == [0, 3, 6, 9] and len(calls) == 1  # read from disk
    other = source.map(lambda x: x * 4).snapshot(path)  # another pipeline: its own run
    assert values(drain(other)) == [0, 4, 8, 12] and len(calls) == 2
    assert len(os.listdir(path)) == 2
    cut = source.map(lambda x: x + 1).snapshot(path).take(2)  # a partial pass records nothing
    assert values(drain(cut)) == [1, 2]
    assert len(os.listdir(path)) == 2


def test_errors_do_not_end_the_iteration():
    dataset = tf.data.Dataset.from_tensor_slices([1.0, 0.0, 4.0, 0.0, 5.0]).map(
        lambda x: tf.debugging.check_numerics(1.0 / x, "division"))
    got = drain_with_errors(dataset)
    fifth = float(np.float32(1.0) / np.float32(5.0))
    assert [g if isinstance(g, tuple) else float(g) for g in got] == [
        1.0, ("error", "InvalidArgumentError", "division : Tensor had Inf values"), 0.25,
        ("error", "InvalidArgumentError", "division : Tensor had Inf values"), fifth]
    assert values(drain(dataset.ignore_errors())) == [1.0, 0.25, fifth]
    # a batch holding a failed element fails as a whole; take counts produced elements
    assert [g[0] if isinstance(g, tuple) else g.tolist()
            for g in drain_with_errors(dataset.batch(2))] == ["error", "error", [fifth]]
    assert values(drain(dataset.ignore_errors().take(2))) == [1.0, 0.25]
    mixed = tf.data.Dataset.from_generator(lambda: iter([1, 2, "x", 4]), tf.int64)
    assert values(drain(mixed.ignore_errors())) == [1, 2, 4]


def test_cardinality_and_assert_cardinality():
    r = tf.data.Dataset.range(10)
    cases = {
        "range": (r, 10), "batch": (r.batch(3), 4), "drop": (r.batch(3, True), 3),
        "repeat": (r.repeat(2), 20), "forever": (r.repeat(), tf.data.INFINITE_CARDINALITY),
        "filter": (r.filter(lambda x: x > 3), tf.data.UNKNOWN_CARDINALITY),
        "take": (r.repeat().take(7), 7), "skip": (r.skip(4), 6), "shard": (r.shard(3, 1), 3),
        "zip": (tf.data.Dataset.zip((r, r.take(4))), 4), "concat": (r.concatenate(r), 20),
        "slices": (tf.data.Dataset.from_tensor_slices(np.zeros((5, 2))), 5),
        "map": (r.map(lambda x: x).prefetch(1).enumerate(), 10),
        "asserted": (r.filter(lambda x: True).apply(
            tf.data.experimental.assert_cardinality(10)), 10),
    }
    tensors = {k: tf.data.experimental.cardinality(d) for k, (d, _) in cases.items()}
    with tf.Session() as sess:
        got = sess.run(tensors)
    assert got == {k: n for k, (_, n) in cases.items()}
    assert tf.data.INFINITE_CARDINALITY == -1 and tf.data.UNKNOWN_CARDINALITY == -2
    with pytest.raises(tf.errors.FailedPreconditionError,
                       match="Input dataset was expected to contain 5 elements but contained "
                             "only 3 elements."):
        drain(tf.data.Dataset.range(3).apply(tf.data.experimental.assert_cardinality(5)))
    with pytest.raises(tf.errors.FailedPreconditionError,
                       match="expected to contain 1 element but contained at least 2 "
                             "elements."):
        drain(tf.data.Dataset.range(3).apply(tf.data.experimental.assert_cardinality(1)))


def test_fingerprint_identifies_the_computation():
    fingerprints = [tf.data.Dataset.range(5).map(lambda x: x * 2).fingerprint(),
                    tf.data.Dataset.range(5).map(lambda x: x * 2).fingerprint(),
                    tf.data.Dataset.range(6).map(lambda x: x * 2).fingerprint(),
                    tf.data.Dataset.range(5).map(lambda x: x * 3).fingerprint()]
    assert fingerprints[0].dtype == tf.uint64
    with tf.Session() as sess:
        a, b, c, d = sess.run(fingerprints)
    assert a == b and len({a, c, d}) == 3


def test_options():
    options = tf.data.Options()
    options.experimental_deterministic = False
    options.experimental_threading.private_threadpool_size = 3
    options.experimental_optimization.map_fusion = True
    later = tf.data.Options()
    later.experimental_optimization.map_fusion = False
    later.experimental_distribute.auto_shard_policy = \
        tf.data.experimental.AutoShardPolicy.DATA
    dataset = tf.data.Dataset.range(3).with_options(options).map(lambda x: x) \
        .with_options(later)
    merged = dataset.options()
    assert merged.deterministic is False and merged.threading.private_threadpool_size == 3
    assert merged.experimental_optimization.map_fusion is False  # the later setting wins
    assert merged.experimental_distribute.auto_shard_policy == \
        tf.data.experimental.AutoShardPolicy.DATA
    assert tf.data.Dataset.range(1).options() == tf.data.Options()
    assert values(drain(dataset)) == [0, 1, 2]
    with pytest.raises(AttributeError, match="Cannot set the property nope on Options."):
        options.nope = 1
    with pytest.raises(TypeError, match='Property "private_threadpool_size" must be of type'):
        options.threading.private_threadpool_size = "3"
    with pytest.raises(ValueError, match="has no effect"):
        merged.deterministic = True
    assert isinstance(tf.data.experimental.ThreadingOptions(), tf.data.ThreadingOptions)


def test_optional_and_get_next_as_optional():
    iterator = tf.data.Dataset.range(2).make_initializable_iterator()
    optional = iterator.get_next_as_optional()
    assert optional.element_spec == tf.TensorSpec([], tf.int64)
    has_value, value = optional.has_value(), optional.get_value()
    built = tf.data.experimental.Optional.from_value((tf.constant(1), [2.0, 3.0]))
    empty = tf.data.experimental.Optional.none_from_structure(tf.TensorSpec([2], tf.int32))
    assert isinstance(optional, tf.data.experimental.Optional)
    with tf.Session() as sess:
        sess.run(iterator.initializer)
        assert sess.run([has_value, value]) == [True, 0]
        assert sess.run([has_value, value]) == [True, 1]
        assert sess.run(has_value) == False  # noqa: E712 - a numpy bool
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="The optional does not have a value."):
            sess.run(value)
        flag, (one, pair) = sess.run([built.has_value(), built.get_value()])
        assert flag and one == 1 and pair.tolist() == [2.0, 3.0]
        assert sess.run(empty.has_value()) == False  # noqa: E712
    second = tf.data.experimental.get_next_as_optional(
        tf.data.Dataset.range(1).make_one_shot_iterator())
    assert second.value_structure == tf.TensorSpec([], tf.int64)


def test_numpy_iterator_and_structures():
    dataset = tf.data.Dataset.from_tensor_slices(([1, 2], ["a", "b"]))
    with pytest.raises(RuntimeError, match="only supported in eager mode"):
        dataset.as_numpy_iterator()
    with tf.Session():
        assert [(int(x), s) for x, s in dataset.as_numpy_iterator()] == [(1, b"a"), (2, b"b")]
        assert isinstance(tf.data.NumpyIterator(dataset), tf.data.NumpyIterator)
    spec = tf.data.experimental.get_structure(dataset)
    assert spec == (tf.TensorSpec([], tf.int32), tf.TensorSpec([], tf.string))
    assert dataset.make_one_shot_iterator().element_spec == spec
    assert tf.data.experimental.TensorStructure(tf.int32, []) == spec[0]
    assert isinstance(spec[0], tf.data.experimental.Structure)
    nested = tf.data.Dataset.range(3).window(2).element_spec
    assert nested == tf.data.experimental.DatasetStructure(tf.TensorSpec([], tf.int64))
    with pytest.raises(TypeError, match="must be a `tf.data.Dataset` or tf.data.Iterator"):
        tf.data.experimental.get_structure(3)
    with pytest.raises(ValueError, match="only supported in eager mode"):
        tf.data.experimental.enable_debug_mode()
    with pytest.raises(tf.errors.FailedPreconditionError, match="SHARD_HINT"):
        drain(tf.data.Dataset.range(3).shard(tf.data.experimental.SHARD_HINT,
                                             tf.data.experimental.SHARD_HINT))
    with pytest.raises(RuntimeError, match=r"__iter__\(\) is only supported"):
        iter(dataset)


def test_choose_sample_and_rejection_resample():
    constant = [tf.data.Dataset.from_tensors(np.int64(i)).repeat(3) for i in range(3)]
    choice = tf.data.Dataset.from_tensor_slices(np.array([2, 0, 0, 1, 0, 0, 2], np.int64))
    # experimental: an exhausted input is skipped; Dataset's default stops there
    assert values(drain(tf.data.experimental.choose_from_datasets(constant, choice))) == \
        [2, 0, 0, 1, 0, 2]
    assert values(drain(tf.data.Dataset.choose_from_datasets(constant, choice))) == \
        [2, 0, 0, 1, 0]
    with pytest.raises(TypeError, match="must be a dataset of scalar `tf.int64` tensors"):
        tf.data.Dataset.choose_from_datasets(constant, tf.data.Dataset.range(2).batch(2))
    with pytest.raises(TypeError, match="All datasets must have the same type"):
        tf.data.Dataset.choose_from_datasets([constant[0], tf.data.Dataset.from_tensors(1.0)],
                                             choice)
    sources = [tf.data.Dataset.from_tensors(np.int64(i)).repeat(2000) for i in range(2)]
    sampled = values(drain(tf.data.experimental.sample_from_datasets(
        sources, [0.25, 0.75], seed=3).take(2000)))
    assert abs(np.mean(sampled) - 0.75) < 0.04  # binomial sd ~0.01
    small = [tf.data.Dataset.from_tensors(np.int64(i)).repeat(5) for i in range(2)]
    everything = values(drain(tf.data.Dataset.sample_from_datasets(small, seed=1)))
    assert sorted(everything) == [0] * 5 + [1] * 5  # exhausted inputs drop out
    with pytest.raises(ValueError, match="must be a vector of length"):
        tf.data.Dataset.sample_from_datasets(small, [0.5, 0.2, 0.3])
    rng = np.random.default_rng(0)
    labels = rng.permutation(np.array([0] * 1600 + [1] * 400, np.int64))
    resampled = drain(tf.data.Dataset.from_tensor_slices(labels).rejection_resample(
        lambda x: x, [0.5, 0.5], initial_dist=[0.8, 0.2], seed=2))
    classes = [int(c) for c, _ in resampled]
    assert all(int(c) == int(x) for c, x in resampled)
    # class 1 always kept (400), class 0 kept with probability 0.25 (~400)
    assert classes.count(1) == 400 and abs(classes.count(0) - 400) < 70


def test_dataset_initializer_fills_a_table():
    keys = tf.data.Dataset.from_tensor_slices(np.array([b"a", b"b", b"c"], object))
    pairs = tf.data.Dataset.zip((keys, tf.data.Dataset.range(10, 13)))
    table = tf.lookup.StaticHashTable(tf.data.experimental.DatasetInitializer(pairs), -1)
    looked_up = table.lookup(tf.constant([b"c", b"z", b"a"]))
    with tf.Session() as sess:
        sess.run(tf.tables_initializer())
        assert sess.run(looked_up).tolist() == [12, -1, 10]


def _checkpointed_pipeline(n):
    tf.reset_default_graph()
    dataset = tf.data.Dataset.range(n).shuffle(10).map(lambda x: x * 2).batch(3)
    iterator = dataset.make_initializable_iterator()
    saveable = tf.data.experimental.make_saveable_from_iterator(iterator)
    tf.add_to_collection(tf.GraphKeys.SAVEABLE_OBJECTS, saveable)
    tf.Variable(1.0)
    return iterator, iterator.get_next(), tf.train.Saver()


def test_iterator_position_in_checkpoints(tmp_path):
    iterator, next_batch, saver = _checkpointed_pipeline(60)
    with tf.Session() as sess:
        sess.run([tf.global_variables_initializer(), iterator.initializer])
        seen = [sess.run(next_batch).tolist() for _ in range(4)]
        path = saver.save(sess, str(tmp_path / "ckpt"))
        after = [sess.run(next_batch).tolist() for _ in range(4)]
    # a new graph and Session: the unseeded shuffle continues where it was saved
    iterator, next_batch, saver = _checkpointed_pipeline(60)
    with tf.Session() as sess:
        saver.restore(sess, path)
        assert [sess.run(next_batch).tolist() for _ in range(4)] == after
        rest = []
        while True:
            try:
                rest.extend(sess.run(next_batch).tolist())
            except tf.errors.OutOfRangeError:
                break
    taken = [x for batch in seen + after for x in batch] + rest
    assert sorted(taken) == [2 * x for x in range(60)]
    iterator, next_batch, saver = _checkpointed_pipeline(61)  # another pipeline
    with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError,
                                             match="another input pipeline"):
        saver.restore(sess, path)
    with pytest.raises(ValueError, match="make_one_shot_iterator or make_initializable"):
        tf.data.experimental.make_saveable_from_iterator(tf.data.Iterator.from_structure(
            tf.int64, []))
