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


# -- shuffle, multinomial, gamma, poisson, crop ----------------------------------------------
def _seeded(build):
    """(first run, second run) of one program built twice with the same op seed."""
    a = _draws(build, runs=2)
    b = _draws(build, runs=1)
    return a, b


@pytest.mark.parametrize("build", [
    lambda: tf.random_shuffle(tf.range(50), seed=5),
    lambda: tf.multinomial([[0.0, 1.0, 2.0]], 50, seed=5),
    lambda: tf.random_gamma([50], 2.0, seed=5),
    lambda: tf.random_poisson(3.0, [50], seed=5),
    lambda: tf.random_crop(tf.reshape(tf.range(400), [20, 20]), [3, 3], seed=5),
], ids=["shuffle", "multinomial", "gamma", "poisson", "crop"])
def test_new_random_ops_are_reproducible_and_fresh_per_run(build):
    (first, second), (again,) = _seeded(build)
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, second)


def test_random_shuffle_permutes_rows():
    value = np.arange(12).reshape(6, 2)
    (a,) = _draws(lambda: tf.random_shuffle(value), runs=1)
    assert sorted(map(tuple, a)) == sorted(map(tuple, value))  # rows move whole
    # Every position is equally likely for an element.
    firsts = [v[0] for v in _draws(lambda: tf.random_shuffle(tf.range(4)), runs=2000, seed=3)]
    np.testing.assert_allclose(np.bincount(firsts, minlength=4) / 2000, 0.25, atol=0.04)
    s = tf.random_shuffle(tf.placeholder(tf.float32, [None, 3]))
    assert s.shape.as_list() == [None, 3] and s.op.type == "RandomShuffle"


def test_multinomial_frequencies_dtypes_and_categorical():
    with np.errstate(divide="ignore"):
        logits = np.log([[0.2, 0.3, 0.5], [0.7, 0.0, 0.3]]).astype(np.float32)
    (v,) = _draws(lambda: tf.multinomial(logits, 100000), runs=1, seed=1)
    assert v.shape == (2, 100000) and v.dtype == np.int64
    np.testing.assert_allclose(np.bincount(v[0], minlength=3) / 1e5, [0.2, 0.3, 0.5], atol=0.01)
    np.testing.assert_allclose(np.bincount(v[1], minlength=3) / 1e5, [0.7, 0.0, 0.3], atol=0.01)
    assert not (v[1] == 1).any()  # probability 0 (-inf logit) is never drawn
    m = tf.multinomial(logits, 4, output_dtype=tf.int32, name="m")
    assert m.dtype == tf.int32 and m.shape.as_list() == [2, 4] and m.op.name == "m/Multinomial"
    from tensorflux._src.ops.random.random_ops import categorical
    c = categorical(tf.placeholder(tf.float64, [None, 5]), 3, dtype=tf.int32)
    assert c.dtype == tf.int32 and c.shape.as_list() == [None, 3]
    with pytest.raises(ValueError, match="Shape must be rank 2 but is rank 1"):
        tf.multinomial([0.0, 1.0], 2)
    with pytest.raises(ValueError, match="Dimension size, given by scalar input 1, must be "
                                         "non-negative but is -1"):
        tf.multinomial(logits, -1)
    n = tf.placeholder_with_default(-1, [])  # known only when the run is compiled
    with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError,
                                             match="num_samples should be nonnegative, got -1"):
        sess.run(tf.multinomial(logits, n))


@pytest.mark.parametrize("dtype", [tf.float32, tf.float64])
def test_random_gamma_shape_and_moments(dtype):
    alpha = np.array([[0.5], [2.0], [5.0]])  # [3, 1]
    beta = np.array([1.0, 4.0])  # [2]: alpha and beta broadcast to [3, 2]
    g = tf.random_gamma([40000], alpha, beta, dtype=dtype)
    assert g.shape.as_list() == [40000, 3, 2] and g.dtype == dtype
    (v,) = _draws(lambda: tf.random_gamma([40000], alpha, beta, dtype=dtype), runs=1, seed=2)
    mean, var = alpha / beta, alpha / beta ** 2
    np.testing.assert_allclose(v.mean(0), mean, rtol=0.03)
    np.testing.assert_allclose(v.var(0), var, rtol=0.08)
    assert v.min() >= np.finfo(dtype.as_numpy_dtype).tiny


def test_random_gamma_is_differentiable_in_alpha_and_beta():
    # E[x] = alpha / beta: the reparameterized gradients of the sample mean are 1 / beta
    # and -alpha / beta ** 2.
    alpha, beta = tf.constant([1.5, 4.0], tf.float64), tf.constant(2.0, tf.float64)
    x = tf.random_gamma([50000], alpha, beta, dtype=tf.float64, seed=4)
    with tf.Session() as sess:
        ga, gb = sess.run(tf.gradients(tf.reduce_sum(tf.reduce_mean(x, 0)), [alpha, beta]))
    np.testing.assert_allclose(ga, [0.5, 0.5], rtol=0.02)
    np.testing.assert_allclose(gb, -(1.5 + 4.0) / 4.0, rtol=0.02)


def test_random_poisson_shape_moments_and_dtype():
    lam = np.array([0.5, 3.0, 20.0])
    p = tf.random_poisson(lam, [30000, 2])
    assert p.shape.as_list() == [30000, 2, 3] and p.dtype == tf.float32
    (v,) = _draws(lambda: tf.random_poisson(lam, [30000, 2]), runs=1, seed=3)
    assert np.array_equal(v, np.round(v)) and v.min() >= 0
    np.testing.assert_allclose(v.mean((0, 1)), lam, rtol=0.03)
    np.testing.assert_allclose(v.var((0, 1)), lam, rtol=0.06)
    i = tf.random_poisson(2.0, [5], dtype=tf.int64)
    assert i.dtype == tf.int64 and i.op.inputs[1].dtype == tf.float64


def test_random_crop_takes_every_window_with_equal_chance():
    value = np.arange(20).reshape(4, 5)
    v = np.stack(_draws(lambda: tf.random_crop(value, [2, 3]), runs=900, seed=6))
    corners = v[:, 0, 0]
    rows, cols = corners // 5, corners % 5
    # Each crop is the contiguous window at its corner; corners range over 3 x 3 offsets.
    for c, r, k in zip(v, rows, cols):
        np.testing.assert_array_equal(c, value[r:r + 2, k:k + 3])
    np.testing.assert_allclose(np.bincount(rows * 3 + cols, minlength=9) / 900, 1 / 9,
                               atol=0.04)
    with pytest.raises(ValueError, match="Need value.shape >= size"):
        tf.random_crop(value, [5, 1])
