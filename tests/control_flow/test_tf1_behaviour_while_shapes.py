"""tf.while_loop with loop variables that change shape (shape_invariants), TF1's values,
static shapes and errors; expectations computed by hand."""

import numpy as np
import pytest

import tensorflux as tf


def test_growing_vector_with_an_unknown_dimension_invariant():
    i0 = tf.constant(0)
    x0 = tf.constant([1.0, 2.0])
    i, x = tf.while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, tf.concat([x, x + 1.0], 0)),
                         [i0, x0], shape_invariants=[i0.shape, tf.TensorShape([None])])
    assert x.shape.as_list() == [None]  # the invariant, as in TF1
    assert i.shape.as_list() == []
    with tf.Session() as sess:
        got_i, got_x = sess.run([i, x])
    want = np.array([1.0, 2.0])
    for _ in range(3):
        want = np.concatenate([want, want + 1.0])
    assert got_i == 3
    np.testing.assert_array_equal(got_x, want)


def test_trip_count_fed_at_run_time_with_a_variable_update_in_the_body():
    n = tf.placeholder(tf.int32, [])
    total = tf.Variable(0.0)

    def body(i, x):
        with tf.control_dependencies([tf.assign_add(total, tf.reduce_sum(x))]):
            return i + 1, tf.concat([x, x * 10.0], 0)

    i, x = tf.while_loop(lambda i, x: i < n, body, [0, tf.constant([[1.0], [2.0]])],
                         shape_invariants=[tf.TensorShape([]), tf.TensorShape([None, 1])],
                         maximum_iterations=3)
    assert x.shape.as_list() == [None, 1]
    with tf.Session() as sess:
        sess.run(total.initializer)
        got_i, got_x = sess.run([i, x], {n: 2})
        assert got_i == 2
        np.testing.assert_array_equal(got_x[:, 0], [1.0, 2.0, 10.0, 20.0, 10.0, 20.0,
                                                    100.0, 200.0])
        assert sess.run(total) == 3.0 + 33.0  # sums of x entering iterations 1 and 2
        got_i, got_x = sess.run([i, x], {n: 10})  # maximum_iterations stops it at 3
        assert got_i == 3 and got_x.shape == (16, 1)


def test_unknown_batch_dimension_growing_with_a_static_trip_count():
    p = tf.placeholder(tf.float32, [None, 2])
    _, y = tf.while_loop(lambda j, y: j < 2, lambda j, y: (j + 1, tf.concat([y, y[:1] * 2.0], 0)),
                         [0, p])
    assert y.shape.as_list() == [None, 2]
    with tf.Session() as sess:
        got = sess.run(y, {p: [[1.0, 3.0]]})
    np.testing.assert_array_equal(got, [[1.0, 3.0], [2.0, 6.0], [2.0, 6.0]])


def test_shape_changes_without_an_invariant_are_tf1s_value_error():
    x0 = tf.constant([1.0])
    with pytest.raises(ValueError) as e:
        tf.while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, tf.concat([x, x], 0)), [0, x0])
    assert str(e.value) == (
        "Input tensor 'Const:0' enters the loop with shape (1,), but has shape (2,) after one "
        "iteration. To allow the shape to vary across iterations, use the `shape_invariants` "
        "argument of tf.while_loop to specify a less-specific shape.")
    with pytest.raises(ValueError) as e:
        tf.while_loop(lambda x: tf.size(x) < 3, lambda x: tf.concat([x, x], 0), [x0],
                      shape_invariants=[tf.TensorShape([2])])
    assert str(e.value) == (
        "The shape invariant specified for Const:0 is not compatible with the initial shape "
        "of the loop variable. It enters the loop with shape (1,), but the specified shape "
        "invariant is (2,).")


def test_gradient_through_a_shape_changing_loop_is_refused_at_run_time():
    x0 = tf.placeholder(tf.float32, [1])
    _, x = tf.while_loop(lambda i, x: i < 2, lambda i, x: (i + 1, tf.concat([x, x * x], 0)),
                         [0, x0], shape_invariants=[tf.TensorShape([]), tf.TensorShape([None])])
    (g,) = tf.gradients(tf.reduce_sum(x), [x0])
    with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError,
                                             match="change shape across iterations"):
        sess.run(g, {x0: [2.0]})
