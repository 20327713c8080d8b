import numpy as np
import pytest

import tensorflux as tf


def run(t):
    with tf.Session() as sess:
        return sess.run(t)


@pytest.mark.parametrize("value, dtype", [
    (1, tf.int32), (1.5, tf.float32), (True, tf.bool), ([1, 2], tf.int32),
    ([[1.0, 2.0]], tf.float32), (2 ** 40, tf.int64), ("abc", tf.string),
    (np.float64(1.0), tf.float64), (np.array([1, 2], np.int64), tf.int64),
    (np.zeros((2, 2), np.float16), tf.float16), (1 + 2j, tf.complex128),
])
def test_dtype_inference_follows_tf(value, dtype):
    assert tf.constant(value).dtype == dtype


def test_values_and_shapes():
    c = tf.constant([[1, 2, 3], [4, 5, 6]], name="c")
    assert c.shape.as_list() == [2, 3]
    assert c.op.type == "Const" and c.op.name == "c"
    got = run(c)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, [[1, 2, 3], [4, 5, 6]])


def test_scalar_results_are_numpy_scalars():
    got = run(tf.constant(3.5))
    assert isinstance(got, np.float32) and got == 3.5


def test_shape_argument_fills_and_reshapes():
    np.testing.assert_array_equal(run(tf.constant(7, shape=[2, 3])), np.full((2, 3), 7))
    np.testing.assert_array_equal(run(tf.constant([1, 2, 3, 4], shape=[2, 2])),
                                  [[1, 2], [3, 4]])
    # TF1 repeats the last value to fill a larger shape.
    np.testing.assert_array_equal(run(tf.constant([1, 2], shape=[4])), [1, 2, 2, 2])
    with pytest.raises(ValueError, match="Too many elements provided. Needed at most 2, but "
                                         "received 3"):
        tf.constant([1, 2, 3], shape=[2])
    with pytest.raises(TypeError, match="Expected Tensor's shape"):
        tf.constant([1, 2], shape=[4], verify_shape=True)


def test_requested_dtype_must_fit_python_values():
    with pytest.raises(TypeError, match="Expected int32, got 1.5 of type 'float' instead."):
        tf.constant(1.5, dtype=tf.int32)
    with pytest.raises(TypeError, match="Expected int32, got 2.5 of type 'float' instead."):
        tf.constant([1, 2.5], dtype=tf.int32)
    assert tf.constant(1, dtype=tf.float64).dtype == tf.float64
    # numpy arrays are cast, as TF does
    assert run(tf.constant(np.array([1.7]), dtype=tf.int32))[0] == 1


def test_bad_values():
    with pytest.raises(ValueError, match="None values not supported."):
        tf.constant(None)
    with pytest.raises(ValueError, match="Argument must be a dense tensor"):
        tf.constant([[1, 2], [3]])


def test_strings_are_bytes():
    got = run(tf.constant(["ab", "c"]))
    assert got.dtype == object and list(got) == [b"ab", b"c"]
    assert run(tf.constant("x")) == b"x"


def test_bfloat16_constant():
    got = run(tf.constant([1.5, 2.0], dtype=tf.bfloat16))
    assert str(got.dtype) == "bfloat16"
    np.testing.assert_array_equal(got.astype(np.float32), [1.5, 2.0])


def test_autopacking_lists_with_tensors():
    a = tf.constant(1.0)
    packed = tf.convert_to_tensor([a, 2.0, 3.0])
    assert packed.op.type == "Pack" and packed.op.name == "packed"
    np.testing.assert_array_equal(run(packed), np.array([1, 2, 3], np.float32))


def test_convert_to_tensor_dtype_mismatch():
    a = tf.constant(1)
    with pytest.raises(ValueError, match="Tensor conversion requested dtype float32 for "
                                         "Tensor with dtype int32"):
        tf.convert_to_tensor(a, dtype=tf.float32)
