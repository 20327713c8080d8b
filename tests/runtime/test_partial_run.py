"""Session.partial_run: one run fed and fetched in steps; each op runs once."""

import numpy as np
import pytest

import tensorflux as tf


def test_steps_feed_and_fetch_in_turn():
    a = tf.placeholder(tf.float32, shape=[], name="a")
    b = tf.placeholder(tf.float32, shape=[], name="b")
    c = tf.placeholder(tf.float32, shape=[], name="c")
    r1 = tf.add(a, b)
    r2 = tf.multiply(r1, c)
    with tf.Session() as sess:
        h = sess.partial_run_setup([r1, r2], [a, b, c])
        assert sess.partial_run(h, r1, feed_dict={a: 1, b: 2}) == 3.0
        assert sess.partial_run(h, r2, feed_dict={c: 17.0}) == 51.0
        with pytest.raises(tf.errors.InvalidArgumentError, match="already been fetched"):
            sess.partial_run(h, r2)
        with pytest.raises(tf.errors.InvalidArgumentError, match="already been fed"):
            sess.partial_run(h, [], feed_dict={a: 5})


def test_stateful_ops_of_an_earlier_step_do_not_run_again():
    counter = tf.Variable(0.0, name="counter")
    x = tf.placeholder(tf.float32, [], name="x")
    bumped = tf.assign_add(counter, 1.0)  # runs when the first step's value is needed
    first = bumped * 10.0
    second = first + x
    with tf.Session() as sess:
        sess.run(counter.initializer)
        h = sess.partial_run_setup([first, second], [x])
        assert sess.partial_run(h, first) == 10.0
        assert sess.partial_run(h, second, feed_dict={x: 0.5}) == 10.5
        assert sess.run(counter) == 1.0  # the assign ran once over both steps


def test_undeclared_feeds_and_fetches_are_refused():
    a = tf.placeholder(tf.float32, [], name="a")
    out = a * 2.0
    other = a + 1.0
    with tf.Session() as sess:
        h = sess.partial_run_setup([out], [a])
        with pytest.raises(tf.errors.InvalidArgumentError, match="not specified in "
                                                               "partial_run_setup: add"):
            sess.partial_run(h, other, feed_dict={a: 1.0})
        with pytest.raises(tf.errors.InvalidArgumentError, match="Must run 'setup'"):
            sess.partial_run("nonsense", out)
        np.testing.assert_allclose(sess.partial_run(h, [out], {a: 4.0}), [8.0])
