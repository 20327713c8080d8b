"""softmax_cross_entropy_with_logits(_v2) as TF 1.15's wrappers and kernel: labels cast to
the logits' dtype, both flattened to matrices and broadcast in the batch dimension.
Expectations are NumPy formulas written here."""

import numpy as np
import pytest

import tensorflux as tf


def np_log_softmax(x):
    x = x - x.max(-1, keepdims=True)
    return x - np.log(np.exp(x).sum(-1, keepdims=True))


LOGITS = np.array([[1.0, 2.0, 0.5, -1.0, 0.0, 3.0, 0.2],
                   [0.3, -0.7, 2.2, 1.0, 0.1, 0.0, -2.0]], np.float32)
ONE_HOT = np.eye(7, dtype=np.float32)[[5, 2]]


def test_labels_wrapped_in_a_list_broadcast_against_the_logits():
    logits = tf.placeholder(tf.float32, [None, 7])
    one_hot = tf.placeholder(tf.float32, [None, 7])
    loss = tf.nn.softmax_cross_entropy_with_logits_v2(labels=[one_hot], logits=logits)
    assert loss.shape.as_list() == [None]  # labels are [1, ?, 7]: one loss per logits row
    one_row = tf.nn.softmax_cross_entropy_with_logits_v2(labels=ONE_HOT[0], logits=logits)
    assert one_row.shape.as_list() == [None]
    d_logits, d_labels = tf.gradients(tf.reduce_sum(one_row), [logits, one_row.op.inputs[0]])
    with tf.Session() as sess:
        got, got_row, g_logits = sess.run([loss, one_row, d_logits],
                                          {logits: LOGITS, one_hot: ONE_HOT})
    log_p = np_log_softmax(LOGITS.astype(np.float64))
    np.testing.assert_allclose(got, -(ONE_HOT * log_p).sum(-1), rtol=1e-6)
    np.testing.assert_allclose(got_row, -(ONE_HOT[0] * log_p).sum(-1), rtol=1e-6)
    np.testing.assert_allclose(g_logits, np.exp(log_p) - ONE_HOT[0], rtol=1e-5, atol=1e-7)
    assert d_labels is not None


def test_gradient_into_broadcast_labels_sums_over_the_rows():
    logits = tf.constant(LOGITS.astype(np.float64))
    labels = tf.constant(np.full([1, 7], 1.0 / 7))  # one row of labels for the batch
    loss = tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits)
    g_labels, g_logits = tf.gradients(tf.reduce_sum(loss), [labels, logits])
    assert g_labels.shape.as_list() == [1, 7]
    with tf.Session() as sess:
        got_labels, got_logits = sess.run([g_labels, g_logits])
    log_p = np_log_softmax(LOGITS.astype(np.float64))
    np.testing.assert_allclose(got_labels, -log_p.sum(0, keepdims=True), rtol=1e-12)
    np.testing.assert_allclose(got_logits, np.exp(log_p) - 1.0 / 7, rtol=1e-12, atol=1e-15)


def test_labels_are_cast_to_the_logits_dtype_in_v1_and_v2():
    labels64 = tf.constant(ONE_HOT.astype(np.float64))
    v1 = tf.nn.softmax_cross_entropy_with_logits(labels=labels64, logits=LOGITS)
    v2 = tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels64, logits=LOGITS)
    half = tf.nn.softmax_cross_entropy_with_logits_v2(labels=ONE_HOT,
                                                      logits=LOGITS.astype(np.float16))
    assert v1.dtype == tf.float32 and v2.dtype == tf.float32 and half.dtype == tf.float16
    assert half.shape.as_list() == [2]
    with tf.Session() as sess:
        got1, got2, got_half = sess.run([v1, v2, half])
    want = -(ONE_HOT * np_log_softmax(LOGITS.astype(np.float64))).sum(-1)
    np.testing.assert_allclose(got1, want, rtol=1e-6)
    np.testing.assert_allclose(got2, want, rtol=1e-6)
    np.testing.assert_allclose(got_half, want, rtol=2e-3)  # float16 inputs, float32 math


def test_rows_that_do_not_broadcast_are_tf1s_shape_error():
    with pytest.raises(ValueError, match=r"Dimensions must be equal, but are 3 and 4 for "
                       r"'softmax_cross_entropy_with_logits' \(op: "
                       r"'SoftmaxCrossEntropyWithLogits'\) with input shapes: \[2,3\], \[2,4\]"):
        tf.nn.softmax_cross_entropy_with_logits_v2(labels=tf.ones([2, 4]), logits=tf.ones([2, 3]))
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 2 and 4"):
        tf.nn.softmax_cross_entropy_with_logits_v2(labels=tf.ones([2, 2, 3]),
                                                   logits=tf.ones([2, 3]))
