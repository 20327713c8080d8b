"""Initializers against TF1's formulas, checked on large samples with NumPy."""

import numpy as np
import pytest

import tensorflux as tf


def _value(init, shape, dtype=tf.float32):
    with tf.Graph().as_default():
        tf.set_random_seed(0)
        t = init(shape, dtype=dtype)
        with tf.Session() as sess:
            return sess.run(t)


def test_constant_zeros_ones():
    np.testing.assert_array_equal(_value(tf.zeros_initializer(), [2, 2]), np.zeros((2, 2)))
    np.testing.assert_array_equal(_value(tf.ones_initializer(), [3], tf.int32), [1, 1, 1])
    np.testing.assert_array_equal(_value(tf.constant_initializer(2.5), [2]), [2.5, 2.5])
    np.testing.assert_array_equal(_value(tf.constant_initializer([1, 2, 3, 4]), [2, 2]),
                                  [[1, 2], [3, 4]])


def test_glorot_uniform_bounds_and_variance():
    v = _value(tf.glorot_uniform_initializer(), [300, 500])
    limit = np.sqrt(6.0 / 800)
    assert np.abs(v).max() <= limit
    assert abs(v.var() - limit ** 2 / 3) / (limit ** 2 / 3) < 0.02


@pytest.mark.parametrize("mode, n", [("fan_in", 3 * 3 * 16), ("fan_out", 3 * 3 * 32),
                                     ("fan_avg", 3 * 3 * 24)])
def test_variance_scaling_truncated_normal_has_the_asked_variance(mode, n):
    v = _value(tf.variance_scaling_initializer(2.0, mode=mode), [3, 3, 16, 32])
    np.testing.assert_allclose(v.var(), 2.0 / n, rtol=0.05)


def test_he_and_lecun_uniform():
    v = _value(tf.he_uniform(), [400, 300])
    assert np.abs(v).max() <= np.sqrt(6.0 / 400)
    v = _value(tf.lecun_normal(), [400, 300])
    np.testing.assert_allclose(v.var(), 1.0 / 400, rtol=0.05)


@pytest.mark.parametrize("shape", [[6, 4], [4, 6], [2, 3, 5]])
def test_orthogonal(shape):
    v = _value(tf.orthogonal_initializer(gain=2.0), shape)
    assert v.shape == tuple(shape)
    flat = v.reshape(-1, shape[-1])
    if flat.shape[0] >= flat.shape[1]:
        np.testing.assert_allclose(flat.T @ flat, 4.0 * np.eye(flat.shape[1]), atol=1e-4)
    else:
        np.testing.assert_allclose(flat @ flat.T, 4.0 * np.eye(flat.shape[0]), atol=1e-4)


def test_identity_and_errors():
    np.testing.assert_array_equal(_value(tf.identity_initializer(3.0), [2, 3]),
                                  3.0 * np.eye(2, 3))
    with pytest.raises(ValueError, match="2D"):
        _value(tf.identity_initializer(), [2, 2, 2])
    with pytest.raises(ValueError, match="Invalid `mode`"):
        tf.variance_scaling_initializer(mode="fan_wrong")
