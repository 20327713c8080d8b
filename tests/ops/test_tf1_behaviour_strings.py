"""Array ops on string tensors, as TF1 allows them (an input pipeline shuffling file
names): they run on the host with each string's rank standing for it. Expected values
are written out by hand."""

import numpy as np
import pytest

import tensorflux as tf

NAMES = [b"b.tfrecord", b"a.tfrecord", b"", b"c.tfrecord"]


def test_moving_selecting_and_comparing_strings():
    s = tf.constant(NAMES)
    m = tf.constant([[b"x", b"y"], [b"z", b"w"]])
    fed = tf.placeholder(tf.string, [None])
    idx = tf.placeholder(tf.int32, [None])
    fetches = {
        "gather": tf.gather(s, [3, 0]),
        "gather_fed": tf.gather(fed, idx),
        "gather_nd": tf.gather_nd(m, [[1, 0], [0, 1]]),
        "slice": tf.slice(s, [1], [2]),
        "getitem": m[:, 1],
        "strided": s[::-2],
        "reshape": tf.reshape(s, [2, 2]),
        "tile": tf.tile(m[0], [2]),
        "concat": tf.concat([s[:1], fed], 0),
        "stack": tf.stack([m[0], m[1]], axis=1),
        "unstack": tf.unstack(m, axis=1)[1],
        "expand_squeeze": tf.squeeze(tf.expand_dims(s, 0), [0]),
        "reverse": tf.reverse(s, [0]),
        "transpose": tf.transpose(m),
        "identity": tf.identity(s),
        "boolean_mask": tf.boolean_mask(s, [True, False, False, True]),
        "split": tf.split(s, [1, 3])[1],
        "pad": tf.pad(m, [[0, 1], [1, 0]]),
        "pad_value": tf.pad(s[:1], [[1, 0]], constant_values="?"),
        "fill": tf.fill([2], "z"),
        "where": tf.where([True, False, True, False], s, tf.reverse(s, [0])),
        "broadcast": tf.broadcast_to(s[:2], [2, 2]),
        "equal": tf.equal(s, b"a.tfrecord"),
        "not_equal": tf.not_equal(fed, s[:3]),
        "reverse_sequence": tf.reverse_sequence(m, [2, 1], seq_axis=1, batch_axis=0),
    }
    with tf.Session() as sess:
        got = sess.run(fetches, {fed: [b"a.tfrecord", b"q", b""], idx: [2, 2, 0]})

    def obj(values):
        return np.array(values, dtype=object)

    want = {
        "gather": [b"c.tfrecord", b"b.tfrecord"],
        "gather_fed": [b"", b"", b"a.tfrecord"],
        "gather_nd": [b"z", b"y"],
        "slice": [b"a.tfrecord", b""],
        "getitem": [b"y", b"w"],
        "strided": [b"c.tfrecord", b"a.tfrecord"],
        "reshape": [[b"b.tfrecord", b"a.tfrecord"], [b"", b"c.tfrecord"]],
        "tile": [b"x", b"y", b"x", b"y"],
        "concat": [b"b.tfrecord", b"a.tfrecord", b"q", b""],
        "stack": [[b"x", b"z"], [b"y", b"w"]],
        "unstack": [b"y", b"w"],
        "expand_squeeze": NAMES,
        "reverse": NAMES[::-1],
        "transpose": [[b"x", b"z"], [b"y", b"w"]],
        "identity": NAMES,
        "boolean_mask": [b"b.tfrecord", b"c.tfrecord"],
        "split": NAMES[1:],
        "pad": [[b"", b"x", b"y"], [b"", b"z", b"w"], [b"", b"", b""]],  # TF pads with b""
        "pad_value": [b"?", b"b.tfrecord"],
        "fill": [b"z", b"z"],
        "where": [b"b.tfrecord", b"", b"", b"b.tfrecord"],
        "broadcast": [[b"b.tfrecord", b"a.tfrecord"]] * 2,
        "reverse_sequence": [[b"y", b"x"], [b"z", b"w"]],
    }
    for key, value in want.items():
        assert got[key].dtype == object, key
        np.testing.assert_array_equal(got[key], obj(value), err_msg=key)
    np.testing.assert_array_equal(got["equal"], [False, True, False, False])
    np.testing.assert_array_equal(got["not_equal"], [True, True, False])
    assert fetches["gather_fed"].dtype == tf.string
    assert fetches["reshape"].shape.as_list() == [2, 2]


def test_random_shuffle_of_file_names_is_a_permutation_per_run():
    files = tf.constant([b"f%d" % i for i in range(20)])
    shuffled = tf.random_shuffle(files, seed=7)
    first_two = tf.random.shuffle(files, seed=7)[:2]
    with tf.Session() as sess:
        runs = [sess.run(shuffled) for _ in range(3)]
        assert sess.run(first_two).dtype == object
    for r in runs:
        assert sorted(r.tolist()) == sorted(b"f%d" % i for i in range(20))
    assert runs[0].tolist() != runs[1].tolist()  # a fresh permutation each run


def test_ops_without_string_kernels_still_refuse_strings():
    s = tf.constant([b"a"])
    with pytest.raises(TypeError, match="Value passed to parameter 'features' has DataType "
                       "string not in list of allowed values"):
        tf.nn.relu(s)
    with pytest.raises(TypeError, match="DataType string not in list of allowed values"):
        tf.reduce_max(s)
