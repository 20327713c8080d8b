"""tf.debugging.assert_shapes: static violations at graph construction, the rest at run
time, with TF's rules for symbols, '.', '*' and scalars."""

import numpy as np
import pytest

import tensorflux as tf


def test_static_shapes_that_satisfy_every_constraint():
    with tf.Graph().as_default():
        x, y = tf.zeros([10, 3]), tf.ones([10, 7])
        param = tf.Variable([1.0, 2.0, 3.0])
        check = tf.debugging.assert_shapes([(x, ("N", "Q")), (y, ("N", "D")),
                                            (param, ("Q",)), (1.0, ()),
                                            (tf.zeros([2, 5, 3]), ("*", "Q"))])
        assert check.type == "NoOp"


@pytest.mark.parametrize("shapes, message", [
    (lambda x, y: [(x, ("N", "D")), (y, ("N", "D"))],
     "Specified by tensor zeros:0 dimension 1.  Tensor ones:0 dimension 1 must have size 3"),
    (lambda x, y: [(x, (10, 4))], "Specified explicitly.  Tensor zeros:0 dimension 1 must "
                                  "have size 4.  Received size 3"),
    (lambda x, y: [(x, ("A", "B", "C"))], "must have rank 3"),
    (lambda x, y: [(x, ("N", "*"))], "only allowed as the first entry"),
    (lambda x, y: [(x, 3)], "Specified shape must be an iterable"),
])
def test_static_violations_raise_value_error(shapes, message):
    with tf.Graph().as_default():
        x, y = tf.zeros([10, 3], name="zeros"), tf.ones([10, 7], name="ones")
        with pytest.raises(ValueError, match=message):
            tf.debugging.assert_shapes(shapes(x, y))


def test_dynamic_constraints_are_checked_when_the_graph_runs():
    with tf.Graph().as_default():
        a = tf.placeholder(tf.float32, [None, 3], name="a")
        b = tf.placeholder(tf.float32, [None, None], name="b")
        check = tf.debugging.assert_shapes({a: ("N", 3), b: ("N", ".")}, message="batch")
        with tf.control_dependencies([check]):
            out = tf.identity(a)
        with tf.Session() as sess:
            assert sess.run(out, {a: np.ones((2, 3)), b: np.ones((2, 9))}).shape == (2, 3)
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match=r"batch.*Specified by tensor a:0 dimension 0.*b:0"):
                sess.run(out, {a: np.ones((2, 3)), b: np.ones((5, 9))})


def test_unknown_rank_and_scalars():
    with tf.Graph().as_default():
        u = tf.placeholder(tf.float32, name="u")
        check = tf.debugging.assert_shapes([(u, (2, "K")), (tf.constant(1.0), (1,))])
        with tf.Session() as sess:
            sess.run(check, {u: np.ones((2, 4))})
            with pytest.raises(tf.errors.InvalidArgumentError):
                sess.run(check, {u: np.ones((3, 4))})
            with pytest.raises(tf.errors.InvalidArgumentError):
                sess.run(check, {u: np.ones((2, 4, 1))})


def test_enable_check_numerics_checks_ops_created_while_enabled():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2], name="x")
        tf.debugging.enable_check_numerics()
        try:
            checked = tf.log(x, name="log_checked") * 2.0
            ints = tf.constant([1, 2]) + 1  # integer outputs are not checked
        finally:
            tf.debugging.disable_check_numerics()
        unchecked = tf.log(x, name="log_plain")
        assert ints.op.type == "Add"
        with tf.Session() as sess:
            np.testing.assert_allclose(sess.run(checked, {x: [1.0, np.e]}), [0.0, 2.0],
                                       rtol=1e-6)
            assert sess.run(unchecked, {x: [0.0, 1.0]})[0] == -np.inf
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match=r'Infinity or NaN in output 0 of graph op "Log"'):
                sess.run(checked, {x: [0.0, 1.0]})
