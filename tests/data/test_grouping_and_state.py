"""window, group_by_window, group_by_reducer, bucket_by_sequence_length, scan, reduce
and the other stream transformations, against element sequences computed in Python."""

import collections

import numpy as np
import pytest

import tensorflux as tf
from tests.data.test_dataset import drain, values


def _py_windows(n, size, shift, stride, drop_remainder):
    out = []
    for start in range(0, n, shift):
        window = list(range(start, min(n, start + (size - 1) * stride + 1), stride))
        if drop_remainder and len(window) < size:
            break
        out.append(window)
    return out


@pytest.mark.parametrize("size,shift,stride,drop", [(3, 2, 1, False), (3, 1, 2, True),
                                                     (2, 4, 1, False), (4, None, 1, True)])
def test_window_matches_python(size, shift, stride, drop):
    dataset = tf.data.Dataset.range(10).window(size, shift, stride, drop)
    assert isinstance(dataset.element_spec, tf.data.DatasetSpec)
    got = values(drain(dataset.flat_map(lambda w: w.batch(size))))
    expected = _py_windows(10, size, shift or size, stride, drop)
    assert got == expected
    assert values(drain(tf.data.Dataset.from_tensors(dataset.cardinality()))) == \
        [len(expected)]


def test_window_of_tuples_and_errors():
    pairs = tf.data.Dataset.zip((tf.data.Dataset.range(5),
                                 tf.data.Dataset.range(5).map(lambda x: x * 10)))
    windows = pairs.window(2).flat_map(lambda a, b: tf.data.Dataset.zip((a, b)).batch(2))
    assert [(list(a), list(b)) for a, b in drain(windows)] == \
        [([0, 1], [0, 10]), ([2, 3], [20, 30]), ([4], [40])]
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="Window shift must be greater than zero, but got 0"):
        drain(tf.data.Dataset.range(3).window(2, 0).flat_map(lambda w: w))
    with pytest.raises(TypeError, match="takes elements that are datasets"):
        tf.data.Dataset.range(3).window(2).map(lambda w: w)
    with pytest.raises(TypeError, match="cannot produce elements that are datasets"):
        tf.data.Dataset.range(3).window(2).make_one_shot_iterator().get_next()


def test_group_by_window_order_and_sizes():
    dataset = tf.data.Dataset.range(11)
    got = values(drain(dataset.group_by_window(lambda x: x % 3, lambda k, w: w.batch(4),
                                               window_size=3)))
    # full windows as soon as they fill, then the rest by increasing key (TF's kernel)
    assert got == [[0, 3, 6], [1, 4, 7], [2, 5, 8], [9], [10]]
    sized = dataset.apply(tf.data.experimental.group_by_window(
        lambda x: x % 2, lambda k, w: w.batch(10).map(lambda b: (k, b)),
        window_size_func=lambda k: k + 2))
    assert [(int(k), list(b)) for k, b in drain(sized)] == \
        [(0, [0, 2]), (1, [1, 3, 5]), (0, [4, 6]), (0, [8, 10]), (1, [7, 9])]
    with pytest.raises(ValueError, match="Either the `window_size` argument or"):
        dataset.group_by_window(lambda x: x, lambda k, w: w)
    with pytest.raises(ValueError, match="`key_func` must return a single tf.int64"):
        dataset.group_by_window(lambda x: tf.cast(x, tf.int32), lambda k, w: w, 2)
    with pytest.raises(TypeError, match="`reduce_func` must return a `Dataset` object"):
        dataset.group_by_window(lambda x: x, lambda k, w: k, 2)


def test_group_by_reducer_and_reducer_state_growth():
    reducer = tf.data.experimental.Reducer(
        init_func=lambda key: (np.int64(0), tf.zeros([0], tf.int64)),
        reduce_func=lambda state, x: (state[0] + x, tf.concat([state[1], [x]], 0)),
        finalize_func=lambda total, items: (total, tf.size(items)))
    dataset = tf.data.Dataset.range(10).apply(
        tf.data.experimental.group_by_reducer(lambda x: x % 3, reducer))
    groups = collections.defaultdict(list)
    for x in range(10):
        groups[x % 3].append(x)
    assert [(int(t), int(n)) for t, n in drain(dataset)] == \
        [(sum(groups[k]), len(groups[k])) for k in sorted(groups)]


def test_bucket_by_sequence_length():
    sequences = [[1], [1, 2, 3], [1, 2], [1, 2, 3, 4, 5], [1, 2, 3, 4], [7]]
    source = tf.data.Dataset.from_generator(lambda: iter(sequences), tf.int64, [None])
    length = lambda x: tf.shape(x)[0]  # noqa: E731
    # buckets: length < 3, 3 <= length < 5, length >= 5; two per batch
    got = values(drain(source.bucket_by_sequence_length(length, [3, 5], [2, 2, 2])))
    assert got == [[[1, 0], [1, 2]], [[1, 2, 3, 0], [1, 2, 3, 4]], [[7]], [[1, 2, 3, 4, 5]]]
    padded = source.apply(tf.data.experimental.bucket_by_sequence_length(
        length, [3, 6], [2, 2, 2], pad_to_bucket_boundary=True))
    assert values(drain(padded)) == [[[1, 0], [1, 2]], [[1, 2, 3, 0, 0], [1, 2, 3, 4, 5]],
                                     [[7, 0]], [[1, 2, 3, 4, 0]]]
    too_long = source.bucket_by_sequence_length(length, [2, 3], [1, 1, 1],
                                                pad_to_bucket_boundary=True)
    with pytest.raises(tf.errors.InvalidArgumentError, match="pad_to_bucket_boundary=True"):
        drain(too_long)
    with pytest.raises(ValueError, match=r"len\(bucket_batch_sizes\) must equal"):
        source.bucket_by_sequence_length(length, [3], [2])


def test_scan_reduce_and_single_element():
    dataset = tf.data.Dataset.range(1, 6)
    running = dataset.scan(np.int64(0), lambda s, x: (s + x, s * 100 + x))
    assert values(drain(running)) == [1, 102, 303, 604, 1005]
    # a growing state gets an unknown dimension (TF's retracing)
    grown = dataset.apply(tf.data.experimental.scan(
        tf.zeros([0], tf.int64), lambda s, x: (tf.concat([s, [x]], 0), tf.size(s))))
    assert values(drain(grown)) == [0, 1, 2, 3, 4]
    with pytest.raises(TypeError, match="must return a pair"):
        dataset.scan(np.int64(0), lambda s, x: s + x)
    with pytest.raises(TypeError, match="The element types for the new state must match"):
        dataset.scan(np.int64(0), lambda s, x: (tf.cast(s, tf.int32), x))
    total = dataset.reduce(np.int64(0), lambda s, x: s + x)
    pair = dataset.reduce((np.int64(0), np.int64(1)), lambda s, x: (s[0] + x, s[1] * x))
    stacked = dataset.reduce(tf.zeros([0], tf.int64), lambda s, x: tf.concat([s, [x]], 0))
    assert stacked.shape.as_list() == [None]
    single = tf.data.Dataset.from_tensors((np.int64(4), "x")).get_single_element()
    with tf.Session() as sess:
        got = sess.run([total, pair, stacked, single])
        assert got[0] == 15 and tuple(got[1]) == (15, 120)
        assert got[2].tolist() == [1, 2, 3, 4, 5] and tuple(got[3]) == (4, b"x")
        with pytest.raises(tf.errors.InvalidArgumentError, match="Dataset was empty."):
            sess.run(tf.data.experimental.get_single_element(dataset.take(0)))
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="Dataset had more than one element."):
            sess.run(dataset.get_single_element())


def test_enumerate_take_while_unique_rebatch():
    dataset = tf.data.Dataset.from_tensor_slices(np.array([5, 3, 5, 1, 3, 8]))
    assert [tuple(e) for e in values(drain(dataset.enumerate(start=10)))] == \
        [(10 + i, v) for i, v in enumerate([5, 3, 5, 1, 3, 8])]
    assert values(drain(dataset.take_while(lambda x: x > 2))) == [5, 3, 5]
    assert values(drain(dataset.apply(tf.data.experimental.unique()))) == [5, 3, 1, 8]
    words = tf.data.Dataset.from_tensor_slices(np.array([b"a", b"b\x00", b"a", b"b"], object))
    assert drain(words.unique()) == [b"a", b"b\x00", b"b"]
    with pytest.raises(TypeError, match="only supports inputs with a single"):
        tf.data.Dataset.range(3).map(lambda x: tf.cast(x, tf.float32)).unique()
    with pytest.raises(ValueError, match="scalar boolean"):
        dataset.take_while(lambda x: x)
    batches = tf.data.Dataset.range(7).batch(3)
    assert values(drain(batches.rebatch(2))) == [[0, 1], [2, 3], [4, 5], [6]]
    assert values(drain(batches.rebatch([1, 3]))) == [[0], [1, 2, 3], [4], [5, 6]]
    assert values(drain(batches.rebatch([1, 3], drop_remainder=True))) == \
        [[0], [1, 2, 3], [4]]
    assert batches.rebatch(2, drop_remainder=True).output_shapes.as_list() == [2]


def test_counter_random_from_list_pad_to_cardinality():
    assert values(drain(tf.data.experimental.Counter(5, -2).take(3))) == [5, 3, 1]
    counter = tf.data.Dataset.counter(1, dtype=tf.int32)
    assert counter.output_types == tf.int32 and values(drain(counter.take(2))) == [1, 2]
    a = values(drain(tf.data.Dataset.random(seed=4).take(50)))
    assert a == values(drain(tf.data.experimental.RandomDataset(seed=4).take(50)))
    assert len(set(a)) == 50 and min(a) < 0 < max(a)  # spread over the int64 range
    listed = tf.data.experimental.from_list([(1, "a"), (2, "bc")])
    assert [(int(x), y) for x, y in drain(listed)] == [(1, b"a"), (2, b"bc")]
    with pytest.raises(ValueError, match="must not be empty"):
        tf.data.experimental.from_list([])
    padded = tf.data.Dataset.from_tensor_slices({"a": [1, 2]}).apply(
        tf.data.experimental.pad_to_cardinality(4))
    assert [(int(e["a"]), bool(e["valid"])) for e in drain(padded)] == \
        [(1, True), (2, True), (0, False), (0, False)]
    with pytest.raises(tf.errors.InvalidArgumentError, match="must have a known cardinalty"):
        drain(tf.data.Dataset.from_tensor_slices({"a": [1]}).filter(lambda e: True)
              .apply(tf.data.experimental.pad_to_cardinality(2)))
    with pytest.raises(ValueError, match="requires its input dataset to be a dictionary"):
        tf.data.Dataset.range(2).apply(tf.data.experimental.pad_to_cardinality(2))
