"""Variable.initialized_value(): TF1's cond(is_variable_initialized(v), v.read_value,
lambda: v.initial_value), so variables can be initialized from others in any order."""

import numpy as np
import pytest

import tensorflux as tf


def test_initializing_a_variable_from_another_in_one_run():
    w = tf.Variable([1.0, 2.0], name="w")
    w2 = tf.Variable(w.initialized_value() * 2.0, name="w2")
    w3 = tf.Variable(w2.initialized_value() + 1.0, name="w3")
    assert w2.shape.as_list() == [2]
    with tf.Session() as sess:
        # Initializers in reverse order, in one run: each reads the initial value of the
        # variable it depends on, which is not initialized yet when the run starts.
        sess.run(tf.variables_initializer([w3, w2, w]))
        got = sess.run([w, w2, w3])
        np.testing.assert_array_equal(got[0], [1.0, 2.0])
        np.testing.assert_array_equal(got[1], [2.0, 4.0])
        np.testing.assert_array_equal(got[2], [3.0, 5.0])
        # Once w is initialized, initialized_value reads its current value.
        sess.run(tf.assign(w, [5.0, -1.0]))
        sess.run(w2.initializer)
        np.testing.assert_array_equal(sess.run(w2), [10.0, -2.0])
        np.testing.assert_array_equal(sess.run(w.initialized_value()), [5.0, -1.0])
    with tf.Session() as sess:  # a new session: w has no value, so its initial value
        np.testing.assert_array_equal(sess.run(w.initialized_value()), [1.0, 2.0])
        with pytest.raises(tf.errors.FailedPreconditionError,
                           match="Attempting to use uninitialized value w"):
            sess.run(w.value())
        update = tf.assign(w, [7.0, 8.0])
        with tf.control_dependencies([update]):
            after = tf.is_variable_initialized(w)  # ordered after the assign: true
        assert sess.run([tf.is_variable_initialized(w), after]) == [False, True]


def test_cond_on_is_variable_initialized_reads_only_in_the_taken_branch():
    v = tf.Variable(3.0, name="v")
    # "Initialize if needed": the read branch is not built while v has no value.
    value = tf.cond(tf.is_variable_initialized(v), v.read_value, lambda: tf.assign(v, 5.0))
    with tf.Session() as sess:
        assert sess.run(value) == 5.0 and sess.run(v) == 5.0
        sess.run(tf.assign(v, 9.0))
        assert sess.run(value) == 9.0 and sess.run(v) == 9.0
