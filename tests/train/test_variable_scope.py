import numpy as np
import pytest

import tensorflux as tf


def test_names_follow_variable_scopes_and_ops_follow_name_scopes():
    with tf.variable_scope("foo"):
        v = tf.get_variable("v", [2, 3])
        c = tf.constant(1, name="c")
    with tf.variable_scope("foo", reuse=True):
        same = tf.get_variable("v")
        c2 = tf.constant(1, name="c")
    assert v.name == "foo/v:0" and same is v
    assert c.name == "foo/c:0" and c2.name == "foo_1/c:0"
    assert v.initializer.name == "foo/v/Assign"
    assert "foo/v/Initializer/random_uniform" in [op.name for op in
                                                   tf.get_default_graph().get_operations()]


def test_reuse_errors_match_tf1():
    with tf.variable_scope("foo"):
        tf.get_variable("v", [1])
    with tf.variable_scope("foo"), pytest.raises(
            ValueError, match="Variable foo/v already exists, disallowed. Did you mean to set "
                              "reuse=True or reuse=tf.AUTO_REUSE in VarScope?"):
        tf.get_variable("v", [1])
    with tf.variable_scope("bar", reuse=True), pytest.raises(
            ValueError, match="Variable bar/w does not exist, or was not created with "
                              "tf.get_variable\\(\\)."):
        tf.get_variable("w", [1])
    with tf.variable_scope("foo", reuse=True), pytest.raises(ValueError, match="Trying to share "
                                                                               "variable foo/v"):
        tf.get_variable("v", [2])


def test_reuse_is_inherited_and_auto_reuse():
    with tf.variable_scope("outer", reuse=tf.AUTO_REUSE):
        with tf.variable_scope("inner"):
            a = tf.get_variable("a", [1])
    with tf.variable_scope("outer", reuse=tf.AUTO_REUSE):
        with tf.variable_scope("inner"):
            assert tf.get_variable("a", [1]) is a
    with tf.variable_scope("outer", reuse=True):
        with tf.variable_scope("inner", reuse=False):  # False cannot undo inherited reuse
            assert tf.get_variable_scope().reuse is True
            assert tf.get_variable("a") is a


def test_reuse_variables_and_scope_objects():
    with tf.variable_scope("model") as scope:
        w = tf.get_variable("w", [1])
        scope.reuse_variables()
        assert tf.get_variable("w") is w
    with tf.variable_scope(scope, reuse=True):
        assert tf.get_variable("w") is w
        assert tf.constant(0, name="k").name == "model/k:0"  # original name scope


def test_default_names_are_unique_scopes():
    with tf.variable_scope(None, default_name="dense"):
        first = tf.get_variable_scope().name
    with tf.variable_scope(None, default_name="dense"):
        second = tf.get_variable_scope().name
    assert (first, second) == ("dense", "dense_1")


def test_scope_defaults_initializer_dtype_and_regularizer():
    reg = lambda v: tf.reduce_sum(v) if hasattr(tf, "reduce_sum") else v * 1.0  # noqa: E731
    with tf.variable_scope("s", initializer=tf.constant_initializer(3.0),
                           regularizer=reg, dtype=tf.float64):
        v = tf.get_variable("v", [2])
        i = tf.get_variable("i", [2], dtype=tf.int32, initializer=tf.zeros_initializer())
    assert v.dtype.base_dtype == tf.float64
    assert len(tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)) == 2
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_array_equal(sess.run(v), [3.0, 3.0])
        np.testing.assert_array_equal(sess.run(i), [0, 0])


def test_get_variable_defaults_and_errors():
    w = tf.get_variable("w", [20, 30])
    k = tf.get_variable("k", [3], dtype=tf.int64)
    with pytest.raises(ValueError, match="must be fully defined"):
        tf.get_variable("x", [None, 3])
    with pytest.raises(ValueError, match="An initializer for variable s of tf.string"):
        tf.get_variable("s", [1], dtype=tf.string)
    t = tf.get_variable("t", initializer=tf.constant([1.0, 2.0]))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        wv = sess.run(w)
        limit = np.sqrt(6.0 / 50)  # glorot uniform: sqrt(6 / (fan_in + fan_out))
        assert np.all(np.abs(wv) <= limit) and wv.std() > limit / 3
        np.testing.assert_array_equal(sess.run(k), [0, 0, 0])
        np.testing.assert_array_equal(sess.run(t), [1.0, 2.0])
