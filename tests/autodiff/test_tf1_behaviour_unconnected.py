"""tf.gradients(..., unconnected_gradients=...) and tf.UnconnectedGradients, as TF 1.15."""

import numpy as np
import pytest

import tensorflux as tf


def test_unconnected_gradients_none_or_zero():
    assert tf.UnconnectedGradients.NONE.value == "none"
    assert tf.UnconnectedGradients.ZERO.value == "zero"
    assert tf.compat.v1.UnconnectedGradients is tf.UnconnectedGradients
    x = tf.placeholder(tf.float32, [None, 3])
    v = tf.Variable([1.0, 2.0])
    i = tf.placeholder(tf.int32, [2])
    y = tf.reduce_sum(x * x)
    assert tf.gradients(y, [v, i]) == [None, None]
    assert tf.gradients(y, [v], unconnected_gradients="none") == [None]
    gx, gv, gi = tf.gradients(y, [x, v, i], unconnected_gradients=tf.UnconnectedGradients.ZERO)
    gz = tf.gradients(y, v, unconnected_gradients="zero")[0]
    assert gv.dtype == tf.float32 and gi.dtype == tf.int32
    assert gv.shape.as_list() == [2] and gi.shape.as_list() == [2]
    xv = np.array([[1.0, -2.0, 3.0]], np.float32)
    with tf.Session() as sess:  # the zeros need neither v initialized nor i fed
        got_x, got_v, got_z = sess.run([gx, gv, gz], {x: xv})
        got_i = sess.run(gi, {i: [4, 5]})
    np.testing.assert_array_equal(got_x, 2 * xv)  # connected: the gradient itself
    np.testing.assert_array_equal(got_v, [0.0, 0.0])
    np.testing.assert_array_equal(got_z, [0.0, 0.0])
    np.testing.assert_array_equal(got_i, [0, 0])


def test_unknown_unconnected_gradients_value_is_tfs_value_error():
    x = tf.constant(1.0)
    with pytest.raises(ValueError, match=r"^Unknown value for unconnected_gradients: 'zeros'$"):
        tf.gradients(x * 2.0, [x], unconnected_gradients="zeros")
