"""tf.py_func / tf.numpy_function: Python functions as host steps between compiled math.

Expected values are computed by hand or with NumPy in the test; error texts are TF's
(py_func.cc): wrong result dtype or count is InvalidArgumentError, a ValueError or
TypeError raised by the function is InvalidArgumentError, other exceptions map to
OutOfRange / Unimplemented / Unknown, each with "Type: message" and the traceback.
"""

import numpy as np
import pytest

import tensorflux as tf
from tensorflux._src.ops.control import script_ops


def _error(fetches, feeds=None):
    with pytest.raises(tf.errors.OpError) as info:
        with tf.Session() as sess:
            sess.run(fetches, feeds)
    return info.value


def test_single_dtype_gives_a_tensor_list_gives_a_list():
    x = tf.placeholder(tf.float32, [3])
    one = tf.py_func(lambda a: a * np.float32(2), [x], tf.float32)
    pair = tf.py_func(lambda a: (a.astype(np.int64), np.float64(a.sum())), [x],
                      [tf.int64, tf.float64])
    listed = tf.py_func(lambda a: [a], [x], [tf.float32])
    assert isinstance(one, tf.Tensor) and one.dtype == tf.float32
    assert [t.dtype for t in pair] == [tf.int64, tf.float64] and len(listed) == 1
    assert one.shape.ndims is None and pair[1].shape.ndims is None  # unknown, as in TF
    assert one.op.type == "PyFunc" and one.op.name == "PyFunc"
    token = one.op.get_attr("token")
    assert isinstance(token, str) and token.startswith("pyfunc_")
    with tf.Session() as sess:
        got_one, (got_int, got_sum), (got_listed,) = sess.run(
            [one, pair, listed], {x: [1.5, 2.0, -3.0]})
    np.testing.assert_array_equal(got_one, np.array([3.0, 4.0, -6.0], np.float32))
    assert got_one.dtype == np.float32
    np.testing.assert_array_equal(got_int, np.array([1, 2, -3], np.int64))
    assert got_int.dtype == np.int64 and got_sum == 0.5 and got_sum.dtype == np.float64
    np.testing.assert_array_equal(got_listed, [1.5, 2.0, -3.0])


def test_stateless_variant_and_numpy_function():
    x = tf.constant([1, 2])
    stateless = tf.py_func(lambda a: a + np.int32(1), [x], tf.int32, stateful=False)
    numpy_fn = tf.numpy_function(lambda a: a * np.int32(3), [x], tf.int32)
    assert stateless.op.type == "PyFuncStateless" and numpy_fn.op.type == "PyFunc"
    with tf.Session() as sess:
        got = sess.run([stateless, numpy_fn])
    np.testing.assert_array_equal(got[0], [2, 3])
    np.testing.assert_array_equal(got[1], [3, 6])


def test_py_func_between_compiled_math():
    x = tf.placeholder(tf.float32, [None])
    seen = []

    def sort(values):
        seen.append(values.copy())
        return np.sort(values)

    total = tf.reduce_sum(tf.py_func(sort, [x * 2], tf.float32) + 1)
    with tf.Session() as sess:
        # sort([6, 2, 4]) + 1 = [3, 5, 7] -> 15
        assert sess.run(total, {x: [3.0, 1.0, 2.0]}) == 15.0
        traces = sess.compile_stats.traces
        assert sess.run(total, {x: [0.5, 0.0, -1.0]}) == 2.0  # [-2, 0, 1] + 1 -> 2
        assert sess.compile_stats.traces == traces  # same shapes: no tracing
    np.testing.assert_array_equal(seen[0], [6.0, 2.0, 4.0])  # got x * 2 from cluster 0


def test_stateful_py_func_runs_once_per_run():
    calls = []

    def count(a):
        calls.append(1)
        return a + np.float32(len(calls))

    x = tf.placeholder(tf.float32, [2])
    y = tf.py_func(count, [x], tf.float32)
    both = [y * 2.0, y + 1.0, y]
    with tf.Session() as sess:
        first = sess.run(both, {x: [0.0, 1.0]})
        second = sess.run(both, {x: [0.0, 1.0]})
    assert len(calls) == 2
    np.testing.assert_array_equal(first[2], [1.0, 2.0])
    np.testing.assert_array_equal(first[0], [2.0, 4.0])
    np.testing.assert_array_equal(second[1], [3.0, 4.0])  # [2, 3] + 1


def test_inputs_are_writable_and_strings_round_trip():
    def scale_in_place(a):
        a *= 10
        return a

    x = tf.placeholder(tf.int32, [2])
    scaled = tf.py_func(scale_in_place, [x + 1], tf.int32)
    words = tf.py_func(lambda s: np.array([w.upper() + b"!" for w in s], dtype=object),
                       [tf.constant(["ab", "c"])], tf.string)
    text = tf.py_func(lambda: "unicode", [], tf.string)
    with tf.Session() as sess:
        got_scaled, got_words, got_text = sess.run([scaled, words, text], {x: [1, 2]})
    np.testing.assert_array_equal(got_scaled, [20, 30])
    assert list(got_words) == [b"AB!", b"C!"] and got_text == b"unicode"


def test_no_results_returns_the_operation():
    calls = []
    op = tf.py_func(lambda: calls.append(1), [], [])
    assert isinstance(op, tf.Operation) and op.type == "PyFunc"
    with tf.Session() as sess:
        sess.run(op)
        sess.run(op)
    assert calls == [1, 1]


def test_wrong_result_dtype_or_count_is_tfs_error():
    x = tf.placeholder(tf.float32, [2])
    wrong_type = tf.py_func(lambda a: a.astype(np.float64), [x], tf.float32)
    token = wrong_type.op.get_attr("token")
    error = _error(wrong_type, {x: [1.0, 2.0]})
    assert type(error) is tf.errors.InvalidArgumentError
    assert error.message == (f"0-th value returned by {token} is double, but expects float\n"
                             f"\t [[{{{{node {wrong_type.op.name}}}}}]]")
    python_int = tf.py_func(lambda a: 3, [x], tf.int32)  # np.asarray(3) is int64
    assert _error(python_int, {x: [1.0, 2.0]}).message.startswith(
        f"0-th value returned by {python_int.op.get_attr('token')} is int64, but expects int32")
    wrong_count = tf.py_func(lambda a: [a, a], [x], tf.float32)
    assert _error(wrong_count, {x: [1.0, 2.0]}).message.startswith(
        f"{wrong_count.op.get_attr('token')} returns 2 values, but expects to see 1 values.")


def _raiser(exc):
    def f(a):
        raise exc
    return f


@pytest.mark.parametrize("exc, error_type", [
    (ValueError("bad value"), tf.errors.InvalidArgumentError),
    (TypeError("bad type"), tf.errors.InvalidArgumentError),
    (StopIteration("done"), tf.errors.OutOfRangeError),
    (NotImplementedError("later"), tf.errors.UnimplementedError),
    (ZeroDivisionError("division by zero"), tf.errors.UnknownError),
])
def test_exceptions_map_to_tf_errors(exc, error_type):
    x = tf.placeholder(tf.float32, [1])
    y = tf.py_func(_raiser(exc), [x], tf.float32, name="failing")
    error = _error(y, {x: [1.0]})
    assert type(error) is error_type
    name = type(exc).__name__
    assert error.message.startswith(f"{name}: {exc}\nTraceback (most recent call last):\n")
    assert "in f\n" in error.message and f"\n{name}: {exc}\n" in error.message
    assert error.message.endswith("\n\t [[{{node failing}}]]")


def test_gradient_none_without_override_and_custom_with_it():
    x = tf.placeholder(tf.float32, [3])
    plain = tf.py_func(np.square, [x], tf.float32)
    assert tf.gradients(tf.reduce_sum(plain), x) == [None]  # TF: NotDifferentiable

    @tf.RegisterGradient("TestPyFuncSquareGrad")
    def _square_grad(op, grad):
        return [grad * 2.0 * op.inputs[0]]

    graph = tf.get_default_graph()
    with graph.gradient_override_map({"PyFunc": "TestPyFuncSquareGrad",
                                      "PyFuncStateless": "TestPyFuncSquareGrad"}):
        square = tf.py_func(np.square, [x], tf.float32)
        square_stateless = tf.py_func(np.square, [x], tf.float32, stateful=False)
    loss = tf.reduce_sum(3.0 * square + square_stateless)
    grad = tf.gradients(loss, x)[0]
    with tf.Session() as sess:
        got = sess.run(grad, {x: [1.0, -2.0, 0.5]})
    # d/dx (3 x^2 + x^2) = 8 x
    np.testing.assert_allclose(got, [8.0, -16.0, 4.0])


def test_registry_holds_functions_by_token():
    def f(a):
        return a

    y = tf.py_func(f, [tf.constant(1.0)], tf.float32)
    assert script_ops._py_funcs.lookup(y.op.get_attr("token")) is f
    with pytest.raises(ValueError, match="Expected func to be callable"):
        tf.py_func(3, [], tf.float32)
