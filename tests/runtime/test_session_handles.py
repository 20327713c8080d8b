"""Persistent tensors: values kept in a Session between runs through session handles."""

import numpy as np
import pytest

import tensorflux as tf


def test_store_read_feed_and_delete_a_persistent_tensor():
    a = tf.placeholder(tf.float32, [2], name="a")
    doubled = a * 2.0
    h = tf.get_session_handle(doubled)
    holder, stored = tf.get_session_tensor(h, tf.float32)
    plus_one = stored + 1.0
    b = tf.placeholder(tf.float32, [2], name="b")
    b_squared = b * b
    deleter_holder, deleter = tf.delete_session_tensor(h)
    with tf.Session() as sess:
        handle = sess.run(h, {a: [1.0, 3.0]})
        assert type(handle).__name__ == "TensorHandle"
        assert handle.handle.startswith("GetSessionHandle;") and handle.dtype == tf.float32
        # the stored value outlives the run that made it, and feeds no longer matter
        np.testing.assert_array_equal(sess.run(plus_one, {holder: handle.handle}), [3.0, 7.0])
        np.testing.assert_array_equal(sess.run(plus_one, {holder: handle}), [3.0, 7.0])
        np.testing.assert_array_equal(handle.eval(), [2.0, 6.0])
        # a handle fed as the value of a tensor of its dtype
        np.testing.assert_array_equal(sess.run(b_squared, {b: handle}), [4.0, 36.0])
        sess.run(deleter, {deleter_holder: handle.handle})
        with pytest.raises(tf.errors.InvalidArgumentError, match="not in the session"):
            sess.run(plus_one, {holder: handle.handle})
        second = sess.run(h, {a: [5.0, 5.0]})
        assert second.handle != handle.handle
        second.delete()
        with pytest.raises(tf.errors.InvalidArgumentError, match="not in the session"):
            second.eval()


def test_handles_are_per_session_and_typed():
    x = tf.constant([1, 2])
    h = tf.get_session_handle(x)
    holder, as_float = tf.get_session_tensor(h, tf.float32)
    with tf.Session() as first, tf.Session() as second:
        handle = first.run(h)
        with pytest.raises(tf.errors.InvalidArgumentError, match="not in the session"):
            second.run(as_float, {holder: handle.handle})
        with pytest.raises(tf.errors.InvalidArgumentError, match="has dtype int32"):
            first.run(as_float, {holder: handle.handle})


def test_session_reset_closes_the_sessions_of_its_target():
    # Targets of this test alone, so the reset closes no other test's sessions.
    here, elsewhere = "grpc://reset-test:1", "grpc://reset-test:2"
    v = tf.Variable(1.0, name="v")
    first, second, other = tf.Session(here), tf.Session(here), tf.Session(elsewhere)
    for session in (first, second, other):
        session.run(v.initializer)
    tf.Session.reset(here, containers=["experiment"])
    for session in (first, second):
        with pytest.raises(RuntimeError, match="closed Session"):
            session.run(v)
    assert other.run(v) == 1.0  # another target's sessions are left alone
    tf.Session.reset(elsewhere)
    with pytest.raises(RuntimeError, match="closed Session"):
        other.run(v)
