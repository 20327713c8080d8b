"""Random ops: TF1 seed semantics and distribution statistics (checked with NumPy)."""

import numpy as np
import pytest

import tensorflux as tf


def _draws(build, runs=2, seed=None):
    with tf.Graph().as_default():
        if seed is not None:
            tf.set_random_seed(seed)
        t = build()
        with tf.Session() as sess:
            return [sess.run(t) for _ in range(runs)]


def test_each_run_draws_fresh_values():
    a, b = _draws(lambda: tf.random_normal([100]))
    assert not np.array_equal(a, b)


def test_graph_seed_makes_programs_reproducible():
    first = _draws(lambda: tf.random_uniform([50]), seed=7)
    second = _draws(lambda: tf.random_uniform([50]), seed=7)
    np.testing.assert_array_equal(first[0], second[0])
    np.testing.assert_array_equal(first[1], second[1])
    assert not np.array_equal(first[0], first[1])
    other = _draws(lambda: tf.random_uniform([50]), seed=8)
    assert not np.array_equal(first[0], other[0])


def test_op_seed_alone_is_reproducible_and_unseeded_is_not():
    a = _draws(lambda: tf.random_normal([20], seed=3), runs=1)[0]
    b = _draws(lambda: tf.random_normal([20], seed=3), runs=1)[0]
    np.testing.assert_array_equal(a, b)
    c = _draws(lambda: tf.random_normal([20]), runs=1)[0]
    d = _draws(lambda: tf.random_normal([20]), runs=1)[0]
    assert not np.array_equal(c, d)


def test_two_ops_with_graph_seed_differ():
    def build():
        return tf.random_normal([10]), tf.random_normal([10])
    (x, y), = _draws(build, runs=1, seed=1)
    assert not np.array_equal(x, y)


@pytest.mark.parametrize("dtype", [tf.float32, tf.float64])
def test_normal_statistics(dtype):
    (v,) = _draws(lambda: tf.random_normal([200000], mean=2.0, stddev=3.0, dtype=dtype),
                  runs=1, seed=1)
    assert v.dtype == dtype.as_numpy_dtype
    assert abs(v.mean() - 2.0) < 0.05 and abs(v.std() - 3.0) < 0.05


def test_truncated_normal_stays_within_two_stddevs():
    (v,) = _draws(lambda: tf.truncated_normal([100000], mean=1.0, stddev=2.0), runs=1, seed=1)
    assert v.min() >= 1.0 - 4.0 and v.max() <= 1.0 + 4.0
    # std of N(0,1) truncated to [-2, 2] is 0.8796
    assert abs(v.std() - 2.0 * 0.8796) < 0.03


def test_uniform_range_and_ints():
    (f,) = _draws(lambda: tf.random_uniform([100000], -1.0, 3.0), runs=1, seed=2)
    assert f.min() >= -1.0 and f.max() < 3.0 and abs(f.mean() - 1.0) < 0.03
    (i,) = _draws(lambda: tf.random_uniform([10000], 2, 7, dtype=tf.int64), runs=1, seed=2)
    assert i.dtype == np.int64 and set(np.unique(i)) == {2, 3, 4, 5, 6}
    with pytest.raises(ValueError, match="Must specify maxval for integer dtype"):
        tf.random_uniform([2], dtype=tf.int32)


def test_random_names_match_tf1():
    r = tf.random_normal([2], name="noise")
    assert r.op.name == "noise" and r.op.type == "Add"
    assert r.op.inputs[0].op.inputs[0].op.type == "RandomStandardNormal"
