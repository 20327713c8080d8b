"""tf.regularizers (tf.contrib.layers semantics) against NumPy."""

import numpy as np
import pytest

import tensorflux as tf

W = np.array([[1.0, -2.0], [0.5, 3.0]], np.float32)


def _run(fetches):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(fetches)


def test_l1_l2_and_combinations():
    w = tf.constant(W)
    l1 = tf.regularizers.l1_regularizer(0.1)(w)
    l2 = tf.regularizers.l2_regularizer(0.2)(w)
    both = tf.regularizers.l1_l2_regularizer(0.1, 0.2)(w)
    summed = tf.regularizers.sum_regularizer([tf.regularizers.l1_regularizer(1.0), None,
                                              tf.regularizers.l2_regularizer(1.0)])(w)
    assert l1.name == "l1_regularizer:0" and l2.name == "l2_regularizer:0"
    assert both.name == "l1_l2_regularizer:0"
    got = _run([l1, l2, both, summed])
    a, s = np.abs(W).sum(), np.square(W).sum()
    np.testing.assert_allclose(got, [0.1 * a, 0.2 * s / 2, 0.1 * a + 0.1 * s, a + s / 2],
                               rtol=1e-6)


def test_zero_scale_disables_and_bad_scales():
    assert tf.regularizers.l2_regularizer(0.0)(tf.constant(W)) is None
    assert tf.regularizers.sum_regularizer([None]) is None
    with pytest.raises(ValueError, match="scale cannot be an integer: 1"):
        tf.regularizers.l1_regularizer(1)
    with pytest.raises(ValueError, match="Setting a scale less than 0 on a regularizer: -0.5"):
        tf.regularizers.l2_regularizer(-0.5)
    with pytest.raises(ValueError, match="scale_l2 cannot be an integer"):
        tf.regularizers.l1_l2_regularizer(0.1, 2)


def test_variable_scope_regularizer_and_get_variable():
    with tf.variable_scope("s", regularizer=tf.regularizers.l2_regularizer(0.5)):
        v = tf.get_variable("v", initializer=tf.constant(W))
    losses = tf.losses.get_regularization_losses()
    assert [t.name for t in losses] == ["s/v/Regularizer/l2_regularizer:0"]
    np.testing.assert_allclose(_run(losses[0]), 0.5 * np.square(W).sum() / 2, rtol=1e-6)
    assert v in tf.global_variables()


def test_apply_regularization():
    a, b = tf.constant(W), tf.constant(2 * W)
    total = tf.regularizers.apply_regularization(tf.regularizers.l1_regularizer(0.5), [a, b])
    assert total.name == "get_regularization_penalty:0"
    assert tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES) == [total]
    np.testing.assert_allclose(_run(total), 0.5 * 3 * np.abs(W).sum(), rtol=1e-6)
    with pytest.raises(ValueError, match="No weights to regularize."):
        tf.regularizers.apply_regularization(tf.regularizers.l1_regularizer(0.5))
    tf.add_to_collection(tf.GraphKeys.WEIGHTS, a)  # the default list
    default = tf.regularizers.apply_regularization(tf.regularizers.l2_regularizer(1.0))
    np.testing.assert_allclose(_run(default), np.square(W).sum() / 2, rtol=1e-6)
