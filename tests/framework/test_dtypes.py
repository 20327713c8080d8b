import ml_dtypes
import numpy as np
import pytest

import tensorflux as tf


@pytest.mark.parametrize("dtype, np_type, name", [
    (tf.float16, np.float16, "float16"), (tf.bfloat16, ml_dtypes.bfloat16, "bfloat16"),
    (tf.float32, np.float32, "float32"), (tf.float64, np.float64, "float64"),
    (tf.int8, np.int8, "int8"), (tf.int16, np.int16, "int16"), (tf.int32, np.int32, "int32"),
    (tf.int64, np.int64, "int64"), (tf.uint8, np.uint8, "uint8"),
    (tf.uint16, np.uint16, "uint16"), (tf.uint32, np.uint32, "uint32"),
    (tf.uint64, np.uint64, "uint64"), (tf.bool, np.bool_, "bool"),
    (tf.complex64, np.complex64, "complex64"), (tf.complex128, np.complex128, "complex128"),
    (tf.string, np.object_, "string"),
])
def test_numpy_counterparts_and_names(dtype, np_type, name):
    assert dtype.as_numpy_dtype is np_type
    assert dtype.name == name
    assert repr(dtype) == "tf." + name
    assert str(dtype) == f"<dtype: '{name}'>"
    assert tf.as_dtype(name) == dtype
    if np_type is not np.object_:
        assert tf.as_dtype(np.dtype(np_type)) == dtype


def test_classification():
    assert tf.float32.is_floating and not tf.float32.is_integer
    assert tf.bfloat16.is_floating
    assert tf.int8.is_integer and not tf.int8.is_unsigned
    assert tf.uint8.is_unsigned
    assert tf.complex64.is_complex and not tf.complex64.is_floating
    assert tf.bool.is_bool and not tf.bool.is_integer
    assert tf.complex128.real_dtype == tf.float64


def test_limits():
    assert tf.int8.min == -128 and tf.int8.max == 127
    assert tf.uint16.max == 65535
    assert tf.float32.max == np.finfo(np.float32).max
    assert tf.bfloat16.max == float(ml_dtypes.finfo(ml_dtypes.bfloat16).max)
    with pytest.raises(TypeError):
        tf.bool.min  # noqa: B018


def test_aliases_and_python_types():
    assert tf.half == tf.float16 and tf.double == tf.float64
    assert tf.as_dtype("float") == tf.float32 and tf.as_dtype("double") == tf.float64
    assert tf.as_dtype(float) == tf.float32 and tf.as_dtype(bool) == tf.bool
    assert tf.as_dtype(np.float64) == tf.float64
    with pytest.raises(TypeError, match="Cannot convert value"):
        tf.as_dtype("floot32")


def test_ref_types_and_equality():
    ref = tf.float32._as_ref
    assert ref.name == "float32_ref" and ref.base_dtype == tf.float32
    assert ref != tf.float32
    assert tf.float32 == "float32" and tf.float32 != "int32" and tf.float32 != None  # noqa: E711
    assert len({tf.float32, tf.as_dtype("float32")}) == 1
