"""Layers given a bool tensor `training` of unknown shape (`tf.placeholder(tf.bool)`):
TF1's smart_cond is a tf.cond, whose output keeps the branches' static shape."""

import numpy as np

import tensorflux as tf


def test_dropout_with_an_unshaped_training_placeholder_feeds_conv_and_dense():
    is_training = tf.placeholder(tf.bool)  # no shape given, as many TF1 programs write it
    x = tf.placeholder(tf.float32, [None, 4, 4, 1])
    d = tf.layers.dropout(x, rate=0.5, training=is_training)
    assert d.shape.as_list() == [None, 4, 4, 1]
    c = tf.layers.conv2d(d, 2, 3, padding="same",
                         kernel_initializer=tf.ones_initializer())
    assert c.shape.as_list() == [None, 4, 4, 2]
    bn = tf.layers.batch_normalization(c, training=is_training)
    assert bn.shape.as_list() == [None, 4, 4, 2]
    y = tf.layers.dense(tf.layers.flatten(bn), 3)
    assert y.shape.as_list() == [None, 3]
    xv = np.arange(32, dtype=np.float32).reshape(2, 4, 4, 1) + 1.0
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        inferred, dropped, out = sess.run([d, c, y], {x: xv, is_training: False})
        np.testing.assert_array_equal(inferred, xv)  # inference: the identity
        # A 3x3 kernel of ones with SAME padding sums each pixel's neighbourhood.
        padded = np.pad(xv[..., 0], ((0, 0), (1, 1), (1, 1)))
        sums = sum(padded[:, i:i + 4, j:j + 4] for i in range(3) for j in range(3))
        np.testing.assert_allclose(dropped[..., 0], sums, rtol=1e-6)
        assert out.shape == (2, 3)
        trained = sess.run(d, {x: xv, is_training: True})
        kept = trained != 0
        np.testing.assert_allclose(trained[kept], xv[kept] * 2.0, rtol=1e-6)  # 1/(1-rate)
        assert 0 < kept.sum() < kept.size


def test_cond_output_shape_is_the_branches_shape_for_any_predicate_shape():
    p = tf.placeholder(tf.bool)
    x = tf.placeholder(tf.float32, [None, 3])
    same = tf.cond(p, lambda: x * 2.0, lambda: x - 1.0)
    assert same.shape.as_list() == [None, 3]
    # The most specific shape compatible with both (TF1's Merge): differing dims unknown.
    mixed = tf.cond(p, lambda: tf.zeros([2, 3]), lambda: x)
    assert mixed.shape.as_list() == [None, 3]
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(same, {p: True, x: [[1.0, 2.0, 3.0]]}),
                                      [[2.0, 4.0, 6.0]])
