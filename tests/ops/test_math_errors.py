"""Graph-construction errors and op naming of the math, reduction and matmul families,
checked against TF1's exact messages and names, plus a few hand-computed values where
TF's integer semantics differ from NumPy's."""

import re

import numpy as np
import pytest

import tensorflux as tf


def ph(dtype, shape):
    return tf.placeholder(dtype, shape)


def run(fetches, feeds=None):
    with tf.Session() as sess:
        return sess.run(fetches, feeds)


# -- dtype errors -------------------------------------------------------------------------------
def test_mismatched_input_dtypes():
    a, b = ph(tf.int32, [2]), ph(tf.float32, [2])
    with pytest.raises(TypeError, match=re.escape(
            "Input 'y' of 'Add' Op has type float32 that does not match type int32 of "
            "argument 'x'.")):
        a + b


def test_python_float_added_to_int_tensor():
    with pytest.raises(TypeError, match=re.escape(
            "Expected int32, got 1.5 of type 'float' instead.")):
        ph(tf.int32, [2]) + 1.5


def test_python_float_compared_with_int_tensor():
    with pytest.raises(TypeError, match=re.escape(
            "Expected int32 passed to parameter 'y' of op 'Less', got 1.5 of type 'float' "
            "instead.")):
        ph(tf.int32, [2]) < 1.5


def test_python_int_first_fixes_the_type():
    # TF converts inputs in order: the 1 becomes int32 before x is seen.
    with pytest.raises(TypeError, match=re.escape(
            "Input 'y' of 'Less' Op has type float32 that does not match type int32 of "
            "argument 'x'.")):
        tf.less(1, ph(tf.float32, [2]))


def test_dtype_not_allowed():
    with pytest.raises(TypeError, match=re.escape(
            "Value passed to parameter 'x' has DataType int32 not in list of allowed values: "
            "float16, bfloat16, float32, float64, complex64, complex128")):
        tf.sqrt(ph(tf.int32, [2]))


def test_truediv_dtype_errors():
    with pytest.raises(TypeError, match=re.escape(
            "x and y must have the same dtype, got tf.int32 != tf.float32")):
        tf.truediv(ph(tf.int32, [2]), ph(tf.float32, [2]))
    with pytest.raises(TypeError, match=re.escape("Invalid dtype tf.bool in __truediv__")):
        ph(tf.bool, [2]) / ph(tf.bool, [2])


def test_complex_of_mixed_types():
    with pytest.raises(TypeError, match="real and imag have incorrect types: float32 float64"):
        tf.complex(ph(tf.float32, [2]), ph(tf.float64, [2]))


# -- shape errors -----------------------------------------------------------------------------
def test_broadcast_error_names_op_and_shapes():
    with pytest.raises(ValueError, match=re.escape(
            "Dimensions must be equal, but are 2 and 3 for 'add' (op: 'Add') with input "
            "shapes: [2], [3].")):
        ph(tf.float32, [2]) + ph(tf.float32, [3])


def test_unknown_dims_broadcast():
    assert (ph(tf.float32, [None, 3]) * ph(tf.float32, [4, 1])).shape.as_list() == [4, 3]
    assert (ph(tf.float32, None) + ph(tf.float32, [2])).shape.ndims is None


def test_add_n_errors():
    with pytest.raises(ValueError, match="inputs must be a list of at least one"):
        tf.add_n([])
    with pytest.raises(ValueError, match="Dimension 0 in both shapes must be equal, but are 2 "
                                         "and 3"):
        tf.add_n([ph(tf.float32, [2]), ph(tf.float32, [3])])


def test_clip_by_value_must_not_grow_t():
    with pytest.raises(ValueError, match="are not compatible"):
        tf.clip_by_value(ph(tf.float32, [2]), ph(tf.float32, [3, 2]), 1.0)


def test_scalar_mul_needs_a_scalar():
    with pytest.raises(ValueError, match=re.escape("Only scalar multiply works, got shape "
                                                   "(2,)")):
        tf.scalar_mul([1.0, 2.0], ph(tf.float32, [2]))


# -- reductions --------------------------------------------------------------------------------
def test_reduction_axis_out_of_range():
    with pytest.raises(ValueError, match=re.escape(
            "Invalid reduction dimension 5 for input with 2 dimensions. for 'Sum' "
            "(op: 'Sum') with input shapes: [2,3], [].")):
        tf.reduce_sum(ph(tf.float32, [2, 3]), 5)
    with pytest.raises(ValueError, match="Invalid reduction dimension -3 for input with 2 "
                                         "dimensions."):
        tf.reduce_max(ph(tf.float32, [2, 3]), [0, -3])


def test_reduction_axis_must_be_at_most_a_vector():
    with pytest.raises(ValueError, match="Shape must be at most rank 1 but is rank 2"):
        tf.reduce_mean(ph(tf.float32, [2, 3]), [[0], [1]])


def test_deprecated_aliases_conflict():
    x = ph(tf.float32, [2, 3])
    with pytest.raises(ValueError, match="Cannot specify both 'reduction_indices' and 'axis'"):
        tf.reduce_sum(x, axis=0, reduction_indices=0)
    with pytest.raises(ValueError, match="Cannot specify both 'keep_dims' and 'keepdims'"):
        tf.reduce_sum(x, keepdims=True, keep_dims=True)
    with pytest.raises(ValueError, match="Cannot specify both 'dimension' and 'axis'"):
        tf.argmax(x, axis=0, dimension=0)


def test_reduction_static_shapes():
    x = ph(tf.float32, [None, 3, 4])
    assert tf.reduce_sum(x, 1).shape.as_list() == [None, 4]
    assert tf.reduce_sum(x, [0, -1], keepdims=True).shape.as_list() == [1, 3, 1]
    assert tf.reduce_sum(x).shape.as_list() == []
    axis = ph(tf.int32, [])
    assert tf.reduce_sum(x, axis).shape.ndims is None
    assert tf.reduce_sum(x, axis, keep_dims=True).shape.as_list() == [None, None, None]
    # Axes computed from shapes are folded, so the shape is still known.
    assert tf.reduce_sum(x, tf.rank(x) - 1).shape.as_list() == [None, 3]


def test_reduce_all_axes_of_unknown_rank_is_scalar():
    u = ph(tf.float32, None)
    total = tf.reduce_sum(u)
    assert total.shape.as_list() == []
    assert tf.reduce_sum(u, keepdims=True).shape.ndims is None
    assert run(total, {u: np.ones((2, 3), np.float32)}) == 6.0


def test_reduction_runtime_errors():
    x = ph(tf.float32, [2, 3])
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="Axes contains duplicate dimension: 0"):
        run(tf.reduce_sum(x, [0, 0]), {x: np.ones((2, 3))})
    axis = ph(tf.int32, [])
    with pytest.raises(tf.errors.InvalidArgumentError, match="only known at run time"):
        run(tf.reduce_sum(x, axis), {x: np.ones((2, 3)), axis: 1})


def test_argmax_errors():
    x = ph(tf.float32, [2, 3])
    with pytest.raises(ValueError, match=re.escape(
            "Dimension (2) must be in the range [-2, 2), where 2 is the number of dimensions "
            "in the input. for 'ArgMax' (op: 'ArgMax')")):
        tf.argmax(x, 2)
    with pytest.raises(ValueError, match="Shape must be rank 0 but is rank 1"):
        tf.argmin(x, [0])
    assert tf.argmax(x, ph(tf.int32, [])).shape.as_list() == [None]
    assert tf.argmax(ph(tf.float32, [5])).shape.as_list() == []


def test_cumsum_axis_checked_at_run_time():
    x = ph(tf.float32, [2, 3])
    out = tf.cumsum(x, 5)
    assert out.shape.as_list() == [2, 3]
    with pytest.raises(tf.errors.InvalidArgumentError, match=re.escape(
            "ScanOp: Expected scan axis in the range [-2, 2), but got 5")):
        run(out, {x: np.ones((2, 3))})


# -- matmul, tensordot, einsum -------------------------------------------------------------
def test_matmul_inner_dimensions():
    with pytest.raises(ValueError, match=re.escape(
            "Dimensions must be equal, but are 3 and 4 for 'MatMul' (op: 'MatMul') with input "
            "shapes: [2,3], [4,5].")):
        tf.matmul(ph(tf.float32, [2, 3]), ph(tf.float32, [4, 5]))
    with pytest.raises(ValueError, match=re.escape(
            "Dimensions must be equal, but are 3 and 4 for 'MatMul_1' (op: 'BatchMatMulV2')")):
        tf.matmul(ph(tf.float32, [7, 2, 3]), ph(tf.float32, [7, 4, 5]))


def test_matmul_rank_and_flag_errors():
    with pytest.raises(ValueError, match=re.escape(
            "Shape must be rank 2 but is rank 1 for 'MatMul' (op: 'MatMul') with input "
            "shapes: [3], [3,4].")):
        tf.matmul(ph(tf.float32, [3]), ph(tf.float32, [3, 4]))
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 2 and 5"):
        tf.matmul(ph(tf.float32, [2, 3, 4]), ph(tf.float32, [5, 4, 6]))
    with pytest.raises(ValueError, match="Only one of transpose_a and adjoint_a can be True."):
        tf.matmul(ph(tf.float32, [2, 2]), ph(tf.float32, [2, 2]), transpose_a=True,
                  adjoint_a=True)
    with pytest.raises(TypeError, match="Input 'b' of 'MatMul' Op has type float64"):
        tf.matmul(ph(tf.float32, [2, 2]), ph(tf.float64, [2, 2]))


def test_matmul_op_types_and_shapes():
    a = tf.matmul(ph(tf.float32, [None, 3]), ph(tf.float32, [3, 4]))
    assert a.op.type == "MatMul" and a.shape.as_list() == [None, 4]
    b = tf.matmul(ph(tf.float32, [2, 1, 3, 4]), ph(tf.float32, [5, 4, 6]))
    assert b.op.type == "BatchMatMulV2" and b.shape.as_list() == [2, 5, 3, 6]
    c = tf.matmul(ph(tf.float32, None), ph(tf.float32, [3, 4]))
    assert c.op.type == "BatchMatMulV2" and c.shape.ndims is None


def test_tensordot_errors():
    a, b = ph(tf.float32, [2, 3]), ph(tf.float32, [3, 4])
    with pytest.raises(ValueError, match="'axes' must be at least 0."):
        tf.tensordot(a, b, -1)
    with pytest.raises(ValueError, match=re.escape(
            "Different number of contraction axes 'a' and 'b', 2 != 1.")):
        tf.tensordot(a, b, [[0, 1], [0]])
    with pytest.raises(ValueError, match="'axes' must be an integer or have length 2."):
        tf.tensordot(a, b, [[1], [0], [1]])


def test_einsum_errors():
    a, b = ph(tf.float32, [2, 3, 4]), ph(tf.float32, [3, 5])
    with pytest.raises(ValueError, match=re.escape(
            "Shape must be rank 2 but is rank 3\n\t for 0th input and equation: ij,jk->ik "
            "for 'einsum/Einsum' (op: 'Einsum')")):
        tf.einsum("ij,jk->ik", a, b)
    with pytest.raises(ValueError, match=re.escape(
            'Got 1 inputs for equation "ij,jk->ik", expecting 2')):
        tf.einsum("ij,jk->ik", b)
    with pytest.raises(ValueError, match="Output subscripts contain the label z not present"):
        tf.einsum("ij->iz", b)
    with pytest.raises(ValueError, match="Subscripts have incorrect format: i\\$j->ij"):
        tf.einsum("i$j->ij", b)
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 5 and 3"):
        tf.einsum("ij,ij->i", b, ph(tf.float32, [3, 3]))


def test_einsum_static_shapes():
    out = tf.einsum("...ij,jk->...ik", ph(tf.float32, [None, 7, 2, 3]), ph(tf.float32, [3, 4]))
    assert out.shape.as_list() == [None, 7, 2, 4]
    assert tf.einsum("ij,jk", ph(tf.float32, [2, 3]), ph(tf.float32, [3, 4])).shape == [2, 4]


# -- op names, as TF1 gives them ------------------------------------------------------------
def test_default_op_names():
    a, b = ph(tf.float32, [2]), ph(tf.float32, [2])
    assert (a + b).name == "add:0"
    assert (a + b).name == "add_1:0"
    # Names are unique case-insensitively in TF, so "Add" now takes the next suffix.
    assert tf.add(a, b).name == "Add_2:0"
    assert (a * b).name == "mul:0"
    assert (a - 1.0).name == "sub:0"
    assert (-a).name == "Neg:0"
    assert abs(a).name == "Abs:0"
    assert (a // b).name == "floordiv:0"
    assert (a % b).name == "mod:0" and (a % b).op.type == "FloorMod"
    assert (a ** b).name == "pow:0"
    assert (a < b).name == "Less:0"


def test_generated_op_names():
    a, b = ph(tf.float32, [2]), ph(tf.float32, [2])
    assert tf.add(a, b).name == "Add:0"
    assert tf.multiply(a, b).name == "Mul:0"
    assert tf.subtract(a, b).name == "Sub:0"
    assert tf.negative(a).name == "Neg:0"
    assert tf.floormod(a, b).name == "FloorMod:0"
    assert tf.floordiv(a, b).name == "floordiv:0"
    assert tf.pow(a, b).name == "Pow:0"
    assert tf.sqrt(a, name="root").name == "root:0"
    assert tf.reduce_sum(a).name == "Sum:0"
    assert tf.reduce_mean(a).name == "Mean:0"
    assert tf.argmax(a).name == "ArgMax:0"
    assert tf.cumsum(a).name == "Cumsum:0"
    assert tf.logical_xor(a > b, a < b).name == "LogicalXor:0"


def test_python_constant_names_in_operator_scope():
    a = ph(tf.float32, [2])
    out = a + 1.0
    assert out.op.inputs[1].name == "add/y:0"
    out = 2.0 * a
    assert out.op.inputs[0].name == "mul/x:0"


def test_truediv_of_ints_casts_first():
    a, b = ph(tf.int32, [2]), ph(tf.int32, [2])
    out = a / b
    assert out.name == "truediv:0" and out.dtype == tf.float64
    assert [op.name for op in out.op.inputs[0].graph.get_operations()][-3:] == \
        ["truediv/Cast", "truediv/Cast_1", "truediv"]
    assert (ph(tf.int8, [2]) / ph(tf.int8, [2])).dtype == tf.float32
    assert (tf.cast(a, tf.float32) / 2).dtype == tf.float32
    quotient = tf.div(a, b)
    assert quotient.op.type == "FloorDiv" and quotient.name == "div:0"
    assert tf.divide(a, b).name == "truediv_3:0"  # after the three divisions above
    assert tf.divide(a, b, name="ratio").name == "ratio:0"


def test_cast_names_and_no_op_casts():
    a = ph(tf.int32, [2])
    assert tf.cast(a, tf.float32).name == "Cast:0"
    assert tf.cast(a, tf.int32) is a  # no op and no name used up
    assert tf.cast(a, tf.int64).name == "Cast_1:0"
    assert tf.to_float(a).name == "ToFloat:0"
    assert tf.round(a) is a
    assert tf.real(ph(tf.float32, [2])).op.type == "Placeholder"
    assert tf.conj(ph(tf.float32, [2])).op.type == "Placeholder"


def test_matmul_and_composite_names():
    a, b = ph(tf.float32, [2, 2]), ph(tf.float32, [2, 2])
    assert tf.matmul(a, b).name == "MatMul:0"
    assert (a @ b).name == "matmul_1:0"  # TF's names are unique case-insensitively
    assert tf.einsum("ij,jk->ik", a, b).name == "einsum/Einsum:0"
    assert tf.tensordot(a, b, 1).name == "Tensordot:0"
    assert tf.count_nonzero(a).op.name.startswith("count_nonzero/")


def test_public_functions_are_named():
    for fn, name in ((tf.add, "add"), (tf.multiply, "multiply"), (tf.sqrt, "sqrt"),
                     (tf.reduce_sum, "reduce_sum"), (tf.matmul, "matmul"),
                     (tf.real, "real"), (tf.cumsum, "cumsum")):
        assert fn.__name__ == name
    a = ph(tf.float32, [2])
    assert tf.add(x=a, y=a).op.type == "Add"  # inputs by keyword, as TF's generated ops


# -- TF's integer semantics, hand-computed ------------------------------------------------------
def test_integer_division_family():
    x = tf.constant([-7, 7, -7, 7])
    y = tf.constant([2, 2, -2, -2])
    got = run([x // y, x % y, tf.truncatediv(x, y), tf.truncatemod(x, y), x / y])
    np.testing.assert_array_equal(got[0], [-4, 3, 3, -4])
    np.testing.assert_array_equal(got[1], [1, 1, -1, -1])
    np.testing.assert_array_equal(got[2], [-3, 3, 3, -3])
    np.testing.assert_array_equal(got[3], [-1, 1, -1, 1])
    np.testing.assert_array_equal(got[4], [-3.5, 3.5, 3.5, -3.5])
    assert got[4].dtype == np.float64


def test_float_floordiv_is_floor_of_quotient():
    # floor(1 / 0.1) == 10 in TF; Python's 1 // 0.1 == 9.
    assert run(tf.constant(1.0, tf.float64) // tf.constant(0.1, tf.float64)) == 10.0


def test_reciprocal_round_sign_mean():
    got = run([tf.reciprocal(tf.constant([2, -1, 1, -3])),
               tf.round(tf.constant([0.5, 1.5, 2.5, -0.5, -1.5])),
               tf.sign(tf.constant([np.nan, -2.0, 0.0, 3.0])),
               tf.reduce_mean(tf.constant([-1, -2])),
               tf.reduce_mean(tf.constant([1, 0, 1, 0])),
               tf.pow(tf.constant([2, 3]), tf.constant([10, 3]))])
    np.testing.assert_array_equal(got[0], [0, -1, 1, 0])
    np.testing.assert_array_equal(got[1], [0.0, 2.0, 2.0, -0.0, -2.0])
    np.testing.assert_array_equal(got[2], [0.0, -1.0, 0.0, 1.0])
    assert got[3] == -1 and got[3].dtype == np.int32  # -3 / 2 truncates toward zero
    assert got[4] == 0
    np.testing.assert_array_equal(got[5], [1024, 27])


def test_static_folding_uses_the_same_semantics():
    # Constants fold at graph build time through the same lowerings.
    from tensorflux._src.ops.shape_fns import static_value
    np.testing.assert_array_equal(
        static_value(tf.truncatediv(tf.constant([-7, 7]), tf.constant(2))), [-3, 3])
    assert static_value(tf.reduce_prod(tf.constant([2, 3, 4]))) == 24
