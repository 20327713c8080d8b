"""tf.bitwise beyond the registry cases: names, Python values, TF's shift clamping on
hand-worked values, dtype errors, and no gradients."""

import numpy as np
import pytest

import tensorflux as tf
from tensorflux._src.ops.registry import lookup


def test_names_python_values_and_hand_worked_shifts():
    x = tf.constant(np.array([1, -8, 127, -128, 5], np.int8))
    y = tf.constant(np.array([7, 1, 8, 200 - 256, -1], np.int8))  # 8, -56, -1: out of range
    outs = [tf.bitwise.left_shift(x, y), tf.bitwise.right_shift(x, y),
            tf.bitwise.bitwise_and([12, 10], 6), tf.bitwise.bitwise_or(12, [1, 2]),
            tf.bitwise.bitwise_xor([12], [10]), tf.bitwise.invert(tf.constant(0, tf.uint16)),
            tf.bitwise.right_shift(tf.constant([-1], tf.int64), 63),
            tf.bitwise.left_shift(tf.constant([3], tf.uint32), 64)]
    assert [o.op.type for o in outs[:6]] == ["LeftShift", "RightShift", "BitwiseAnd",
                                            "BitwiseOr", "BitwiseXor", "Invert"]
    assert outs[0].op.name == "LeftShift" and outs[2].dtype == tf.int32
    assert tf.bitwise.invert(x, name="flip").op.name == "flip"
    got = tf.Session().run(outs)
    # Amounts clamp to [0, 7] for int8: 1 << 7 = -128; 127 << 7 -> 0x80; -56 -> 0.
    np.testing.assert_array_equal(got[0], np.array([-128, -16, -128, -128, 5], np.int8))
    np.testing.assert_array_equal(got[1], np.array([0, -4, 0, -128, 5], np.int8))
    np.testing.assert_array_equal(got[2], [4, 2])
    np.testing.assert_array_equal(got[3], [13, 14])
    np.testing.assert_array_equal(got[4], [6])
    assert got[5] == 65535 and got[5].dtype == np.uint16
    np.testing.assert_array_equal(got[6], [-1])
    np.testing.assert_array_equal(got[7], [(3 << 31) % 2 ** 32])  # 64 clamps to 31


def test_dtype_errors_and_no_gradient():
    with pytest.raises(TypeError, match="Value passed to parameter 'x' has DataType float32 "
                                        "not in list of allowed values: int8, int16, int32, "
                                        "int64, uint8, uint16, uint32, uint64"):
        tf.bitwise.bitwise_and(tf.zeros([2]), tf.zeros([2]))
    with pytest.raises(TypeError, match="Input 'y' of 'LeftShift' Op has type int64 that does "
                                        "not match type int32 of argument 'x'."):
        tf.bitwise.left_shift(tf.constant([1]), tf.constant([1], tf.int64))
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 2 and 3"):
        tf.bitwise.bitwise_or(tf.constant([1, 2]), tf.constant([1, 2, 3]))
    for op in ("BitwiseAnd", "BitwiseOr", "BitwiseXor", "Invert", "LeftShift", "RightShift"):
        assert lookup(op).not_differentiable
