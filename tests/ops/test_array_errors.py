"""TF1's construction-time errors, run-time errors and op naming for the array ops."""

import numpy as np
import pytest

import tensorflux as tf
from tests.helpers import run
from tensorflux._src.ops.array.sort_ops import top_k


# -- naming -----------------------------------------------------------------------------------
def test_getitem_builds_one_strided_slice_named_as_tf():
    t = tf.placeholder(tf.float32, [3, 4])
    y = t[1:, ::-1]
    op = y.op
    assert op.type == "StridedSlice" and op.name == "strided_slice"
    assert [i.op.name for i in op.inputs[1:]] == ["strided_slice/stack", "strided_slice/stack_1",
                                                  "strided_slice/stack_2"]
    assert (op.get_attr("begin_mask"), op.get_attr("end_mask")) == (2, 3)
    assert op.get_attr("shrink_axis_mask") == 0
    assert y.shape.as_list() == [2, 4]
    assert t[0].op.name == "strided_slice_1" and t[0].op.get_attr("shrink_axis_mask") == 1
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    np.testing.assert_array_equal(run(y, {t: x}), x[1:, ::-1])


def test_default_op_names():
    x = tf.placeholder(tf.float32, [2, 3])
    assert tf.reshape(x, [3, 2]).op.name == "Reshape"
    assert tf.transpose(x).op.name == "transpose"
    assert tf.matrix_transpose(x).op.name == "matrix_transpose/transpose"
    assert tf.concat([x, x], 0).op.name == "concat"
    assert tf.concat([x], 0).op.name == "concat_1/concat"  # one value: an Identity
    assert tf.concat([x], 0).op.type == "Identity"
    assert tf.stack([x, x]).op.name == "stack" and tf.stack([x, x]).op.type == "Pack"
    assert tf.split(x, 3, axis=1)[0].op.name == "split"
    assert tf.split(x, [1, 2], axis=1)[0].op.type == "SplitV"
    assert tf.unstack(x)[0].op.name == "unstack"
    assert tf.gather(x, [1]).op.name == "GatherV2"
    assert tf.one_hot([1], 2).op.name == "one_hot"
    assert tf.range(3).op.name == "range"
    assert tf.where(tf.constant([True, False]), x, x).op.type == "Select"
    assert tf.sort(x).op.name.startswith("sort/")
    assert tf.pad(x, [[1, 1], [0, 0]]).op.type == "Pad"
    assert tf.pad(x, [[1, 1], [0, 0]], constant_values=1.0).op.type == "PadV2"
    assert tf.pad(x, [[1, 1], [0, 0]], mode="Reflect").op.type == "MirrorPad"


def test_constant_shapes_fold_into_constants_as_tf():
    s = tf.stack([1, 2, 3])
    assert s.op.type == "Const" and s.op.name == "stack"
    z = tf.zeros([2, 3])
    assert z.op.type == "Const" and z.op.name == "zeros" and z.dtype == tf.float32
    big = tf.ones([100, 100], dtype=tf.int32)
    assert big.op.type == "Fill" and big.op.name == "ones" and big.shape.as_list() == [100, 100]
    assert tf.zeros_like(tf.placeholder(tf.float32, [2])).op.type == "Const"
    assert tf.zeros_like(tf.placeholder(tf.float32, [None])).op.type == "ZerosLike"


# -- reshape ------------------------------------------------------------------------------------
def test_reshape_static_errors():
    x = tf.placeholder(tf.float32, [2, 3])
    with pytest.raises(ValueError, match=r"Cannot reshape a tensor with 6 elements to shape "
                                         r"\[4\] \(4 elements\) for 'Reshape' \(op: 'Reshape'\)"):
        tf.reshape(x, [4])
    with pytest.raises(ValueError, match="Dimension size must be evenly divisible by 4 but is 6"):
        tf.reshape(x, [4, -1])
    assert tf.reshape(x, [-1, 2]).shape.as_list() == [3, 2]
    assert tf.reshape(tf.placeholder(tf.float32, [None, 3]), [-1]).shape.as_list() == [None]


def test_reshape_runtime_errors():
    with pytest.raises(ValueError, match="Dimension size must be evenly divisible by 3 but is 4"):
        tf.reshape(tf.placeholder(tf.float32, [None, 3]), [4])  # caught at construction
    x = tf.placeholder(tf.float32, [None, None])
    feed = {x: np.zeros((2, 3), np.float32)}
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="Input to reshape is a tensor with 6 values, but the requested "
                             "shape has 4"):
        run(tf.reshape(x, [4]), feed)
    with pytest.raises(tf.errors.InvalidArgumentError, match="requires a multiple of 4"):
        run(tf.reshape(x, [4, -1]), feed)


def test_shape_inputs_must_be_static_for_xla():
    x = tf.placeholder(tf.float32, [None])
    n = tf.placeholder(tf.int32, [2])
    # a fed shape is compiled in as a constant (one executable per shape value)
    assert run(tf.reshape(x, n), {x: np.zeros(4, np.float32), n: [2, 2]}).shape == (2, 2)
    # a shape held in a variable is only known at run time: XLA cannot compile it
    v = tf.Variable([2, 2])
    with pytest.raises(tf.errors.InvalidArgumentError, match="Reshape needs its input 'shape'"):
        with tf.Session() as sess:
            sess.run(v.initializer)
            sess.run(tf.reshape(x, v), {x: np.zeros(4, np.float32)})
    # computed from tf.shape, it is known at compile time even for an unknown batch
    y = tf.reshape(x, tf.stack([2, tf.shape(x)[0] // 2]))
    assert run(y, {x: np.arange(6, dtype=np.float32)}).shape == (2, 3)


# -- squeeze / expand_dims / transpose -------------------------------------------------------
def test_squeeze_errors():
    x = tf.placeholder(tf.float32, [2, 3, 1])
    with pytest.raises(ValueError, match=r"Can not squeeze dim\[1\], expected a dimension of 1, "
                                         r"got 3 for 'Squeeze' \(op: 'Squeeze'\)"):
        tf.squeeze(x, [1])
    with pytest.raises(ValueError, match=r"squeeze_dims\[0\] not in \[-3,3\)"):
        tf.squeeze(x, [3])
    with pytest.raises(ValueError, match="Cannot specify both 'squeeze_dims' and 'axis'"):
        tf.squeeze(x, axis=[2], squeeze_dims=[2])
    assert tf.squeeze(x, squeeze_dims=[2]).shape.as_list() == [2, 3]
    u = tf.placeholder(tf.float32, [None, None])
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"Can not squeeze dim\[1\], expected a dimension of 1, got 3"):
        run(tf.squeeze(u, [1]), {u: np.zeros((1, 3), np.float32)})


def test_expand_dims_and_transpose_errors():
    x = tf.placeholder(tf.float32, [2, 3])
    with pytest.raises(ValueError, match=r"dim 3 not in the interval \[-3, 2\]"):
        tf.expand_dims(x, 3)
    with pytest.raises(ValueError, match="Must specify an axis argument to tf.expand_dims"):
        tf.expand_dims(x)
    assert tf.expand_dims(x, dim=0).shape.as_list() == [1, 2, 3]
    with pytest.raises(ValueError, match="Cannot specify both 'dim' and 'axis'"):
        tf.expand_dims(x, axis=0, dim=0)
    with pytest.raises(ValueError, match="Cannot specify both 'dim' and 'axis'"):
        tf.losses.cosine_distance(tf.ones([2, 3]), tf.ones([2, 3]), axis=1, dim=1)
    with pytest.raises(ValueError, match="perm dim 2 is out of range of input rank 2"):
        tf.transpose(x, [0, 2])
    with pytest.raises(ValueError, match=r"should be a \(batch\) matrix, with rank >= 2"):
        tf.matrix_transpose(tf.placeholder(tf.float32, [3]))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"1 is missing from \{0,0\}"):
        run(tf.transpose(x, [0, 0]), {x: np.zeros((2, 3), np.float32)})


# -- concat / split / unstack ---------------------------------------------------------------
def test_concat_errors():
    a, b = tf.placeholder(tf.float32, [2, 3]), tf.placeholder(tf.float32, [3, 4])
    with pytest.raises(ValueError, match=r"Dimension 0 in both shapes must be equal, but are 2 "
                                         r"and 3. Shapes are \[2\] and \[3\]"):
        tf.concat([a, b], 1)
    with pytest.raises(ValueError, match="Shape must be at least rank 3 but is rank 2"):
        tf.concat([a, a], 2)
    with pytest.raises(ValueError, match=r"Can't concatenate scalars \(use tf.stack instead\)"):
        tf.concat([tf.constant(1.0), tf.constant(2.0)], tf.placeholder(tf.int32, []))
    u, v = tf.placeholder(tf.float32, [None, 3]), tf.placeholder(tf.float32, [None, 3])
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"ConcatOp : Dimensions of inputs should match: shape\[0\] = "
                             r"\[2,3\] vs. shape\[1\] = \[1,3\]"):
        run(tf.concat([u, v], 1), {u: np.zeros((2, 3)), v: np.zeros((1, 3))})


def test_split_errors():
    x = tf.placeholder(tf.float32, [10])
    with pytest.raises(ValueError, match="Dimension size must be evenly divisible by 3 but is 10"):
        tf.split(x, 3)
    with pytest.raises(ValueError, match=r"can't split axis of size 10 into pieces of size "
                                         r"\[3,4\]"):
        tf.split(x, [3, 4])
    with pytest.raises(ValueError, match="size_splits can only have one -1"):
        tf.split(x, [-1, -1])
    with pytest.raises(ValueError, match="Cannot infer num from shape"):
        tf.split(x, tf.placeholder(tf.int32, [None]))
    with pytest.raises(ValueError, match="Rank-0 tensors are not supported"):
        tf.split(x, tf.constant(2))
    with pytest.raises(ValueError, match=r"Dimension size, given by scalar input 1 must be in "
                                         r"range \[-1, 1\)"):
        tf.split(x, 2, axis=1)
    parts = tf.split(x, [2, -1, 3])
    assert [p.shape.as_list() for p in parts] == [[2], [5], [3]]
    u = tf.placeholder(tf.float32, [None])
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="Number of ways to split should evenly divide the split dimension"):
        run(tf.split(u, 3), {u: np.zeros(10, np.float32)})


def test_unstack_errors():
    with pytest.raises(ValueError, match="Cannot infer num from shape"):
        tf.unstack(tf.placeholder(tf.float32, [None, 2]))
    with pytest.raises(ValueError, match=r"axis = 2 not in \[-2, 2\)"):
        tf.unstack(tf.placeholder(tf.float32, [3, 2]), axis=2)
    assert len(tf.unstack(tf.placeholder(tf.float32, [None, 2]), axis=1)) == 2


# -- slicing --------------------------------------------------------------------------------------
def test_slicing_errors():
    x = tf.placeholder(tf.float32, [3, 4])
    with pytest.raises(ValueError, match="slice index 5 of dimension 0 out of bounds"):
        x[5]
    with pytest.raises(ValueError, match="Index out of range using input dim 2"):
        x[1, 2, 3]
    with pytest.raises(ValueError, match="Multiple ellipses in slice spec not allowed"):
        x[..., 1, ...]
    with pytest.raises(TypeError, match="Only integers, slices"):
        x[1.5]
    with pytest.raises(TypeError, match="Only integers, slices"):
        x[tf.constant([0, 1])]
    with pytest.raises(ValueError, match=r"Expected size\[0\]|sizes vector cannot be < -1"):
        tf.slice(x, [0, 0], [-2, 1])
    u = tf.placeholder(tf.float32, [None])
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="slice index 7 of dimension 0 out of bounds"):
        run(u[7], {u: np.zeros(3, np.float32)})
    i = tf.placeholder(tf.int32, [])
    xv = np.arange(12, dtype=np.float32).reshape(3, 4)
    np.testing.assert_array_equal(run(x[1:, i], {x: xv, i: 1}), xv[1:, 1])  # i compiled in
    j = tf.Variable(1)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"write x\[1:\]\[:, i\] instead"):
        with tf.Session() as sess:
            sess.run(j.initializer)
            sess.run(x[1:, j], {x: xv})


def test_slicing_shapes_with_unknown_dims():
    x = tf.placeholder(tf.float32, [None, 4, 5])
    assert x[0].shape.as_list() == [4, 5]
    assert x[:, 1:3].shape.as_list() == [None, 2, 5]
    assert x[..., ::2].shape.as_list() == [None, 4, 3]
    assert x[:, tf.newaxis, -1, 2].shape.as_list() == [None, 1]
    assert x[tf.placeholder(tf.int32, [])].shape.as_list() == [4, 5]
    assert tf.placeholder(tf.float32)[1:].shape.ndims is None


# -- gather and friends ---------------------------------------------------------------------
def test_gather_out_of_range_static_indices():
    params = tf.placeholder(tf.float32, [3])
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices\[1\] = 5 is not in "
                                                             r"\[0, 3\)"):
        run(tf.gather(params, [0, 5]), {params: np.zeros(3, np.float32)})
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"indices\[1,0\] = -1 is not in \[0, 3\)"):
        run(tf.gather(tf.constant([1.0, 2.0, 3.0]), [[0], [-1]]))
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"indices\[1\] = \[3, 0\] does not index into param shape \[3,2\]"):
        run(tf.gather_nd(tf.zeros([3, 2]), [[0, 1], [3, 0]]))
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"indices\[0\] = \[4\] does not index into shape \[4\]"):
        run(tf.scatter_nd([[4]], [1.0], [4]))


def test_gather_out_of_range_fed_indices_fail_the_run():
    # TF's CPU kernel's error, raised by the run (the indices are only known then).
    idx = tf.placeholder(tf.int32, [None])
    params = tf.constant([[1.0], [2.0], [3.0]])
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"indices\[1\] = 7 is not in \[0, 3\)\n\t \[\[\{\{node GatherV2\}\}"):
        run(tf.gather(params, idx), {idx: [2, 7, -1]})
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices\[0,1\] = -1 is not in"):
        run(tf.gather(params, tf.reshape(idx, [1, 2])), {idx: [0, -1]})
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices\[1\] = 3 is not in"):
        run(tf.gather(params, idx, axis=0), {idx: [0, 3]})
    np.testing.assert_array_equal(run(tf.gather(params, idx), {idx: [2, 0]}), [[3.0], [1.0]])


def test_gather_out_of_range_indices_in_a_loop_body_read_zeros():
    # Inside a loop body the check would be a host callback (effects.check): there the
    # gather reads zeros for an index out of range, TF's GPU rule.
    idx = tf.placeholder(tf.int32, [2])
    params = tf.constant([1.0, 2.0, 3.0])
    _, out = tf.while_loop(lambda i, acc: i < 1,
                           lambda i, acc: (i + 1, acc + tf.gather(params, idx)),
                           [tf.constant(0), tf.zeros([2])])
    np.testing.assert_array_equal(run(out, {idx: [1, 5]}), [2.0, 0.0])


def test_one_hot_dtype_rules():
    assert tf.one_hot([0, 1], 3).dtype == tf.float32
    assert tf.one_hot([0, 1], 3, on_value=3).dtype == tf.int32
    assert tf.one_hot([0, 1], 3, dtype=tf.float64).dtype == tf.float64
    with pytest.raises(TypeError, match="dtype <dtype: 'int32'> of on_value does not match "
                                        "dtype parameter <dtype: 'float32'>"):
        tf.one_hot([0], 2, on_value=1, dtype=tf.float32)
    with pytest.raises(TypeError, match="of on_value does not match dtype <dtype: 'int32'> "
                                        "of off_value"):
        tf.one_hot([0], 2, on_value=1.0, off_value=0)
    with pytest.raises(ValueError, match="axis must be >= -1"):
        tf.one_hot([0], 2, axis=-2)


# -- generators ------------------------------------------------------------------------------
def test_range_dtype_inference_and_errors():
    assert tf.range(5).dtype == tf.int32
    assert tf.range(0, 5, 0.5).dtype == tf.float32
    assert tf.range(np.int64(3)).dtype == tf.int64
    assert tf.range(3, dtype=tf.float64).dtype == tf.float64
    np.testing.assert_array_equal(run(tf.range(1, 10, 4)), [1, 5, 9])
    with pytest.raises(ValueError, match="Requires start <= limit when delta > 0: 5/1"):
        tf.range(5, 1)
    with pytest.raises(ValueError, match="Requires delta != 0"):
        tf.range(0, 1, 0)


def test_linspace_fill_and_eye():
    np.testing.assert_allclose(run(tf.linspace(1.0, 2.0, 3)), [1.0, 1.5, 2.0])
    with pytest.raises(ValueError, match="Requires num > 0: 0"):
        tf.linspace(0.0, 1.0, 0)
    with pytest.raises(ValueError, match="Fill dimensions must be >= 0"):
        tf.fill([2, -1], 1.0)
    np.testing.assert_array_equal(run(tf.eye(2, 3, dtype=tf.int32)), np.eye(2, 3, dtype=np.int32))
    assert tf.eye(4, batch_shape=[5, 2]).shape.as_list() == [5, 2, 4, 4]


# -- pad / tile / where / sort -----------------------------------------------------------------
def test_pad_tile_where_errors():
    x = tf.placeholder(tf.float32, [2, 3])
    with pytest.raises(ValueError, match="Unknown padding mode: WRAP"):
        tf.pad(x, [[0, 0], [1, 1]], mode="wrap")
    with pytest.raises(ValueError, match="Paddings must be non-negative"):
        tf.pad(x, [[0, -1], [1, 1]])
    with pytest.raises(ValueError, match="Shape must be rank 2 but is rank 1"):
        tf.pad(x, [1, 1])
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="paddings must be less than the dimension size: 2, 0 not less than 2"):
        run(tf.pad(x, [[2, 0], [0, 0]], mode="REFLECT"), {x: np.zeros((2, 3), np.float32)})
    with pytest.raises(ValueError, match="Shape must be rank 2 but is rank 1"):
        tf.tile(x, [2])
    with pytest.raises(ValueError, match=r"Dimension 0 in both shapes must be equal, but are 3 "
                                         r"and 2"):
        tf.where(tf.placeholder(tf.bool, [3]), x, x)
    with pytest.raises(ValueError, match="x and y must both be non-None or both be None"):
        tf.where(tf.placeholder(tf.bool, [2]), x)
    assert tf.where(tf.placeholder(tf.bool, [2])).op.type == "Where"  # one argument: indices


def test_top_k_and_sort_errors():
    x = tf.placeholder(tf.float32, [2, 3])
    with pytest.raises(ValueError, match="input must have last dimension >= k = 5 but is 3"):
        top_k(x, 5)
    result = top_k(x, 2)
    assert result.values.shape.as_list() == [2, 2] and result.indices.dtype == tf.int32
    with pytest.raises(ValueError, match="UP should be one of ASCENDING, DESCENDING"):
        tf.sort(x, direction="UP")
    with pytest.raises(ValueError, match="axis must be a constant scalar"):
        tf.sort(x, axis=tf.placeholder(tf.int32, []))
    u = tf.placeholder(tf.float32, [None])
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="input must have at least k columns. Had 2, needed 3"):
        run(top_k(u, 3), {u: np.zeros(2, np.float32)})
    big = np.array([np.iinfo(np.int32).min, 0, np.iinfo(np.int32).max, -1], np.int32)
    np.testing.assert_array_equal(run(tf.sort(tf.constant(big))), np.sort(big))


def test_argsort_floats_is_stable_both_ways():
    x = np.array([[0.5, -1.0, 0.5, 2.0, -1.0, 0.5]], np.float32)
    up, down = run([tf.argsort(x), tf.argsort(tf.constant(x), direction="DESCENDING")])
    np.testing.assert_array_equal(up, np.argsort(x, axis=-1, kind="stable"))
    np.testing.assert_array_equal(down, np.argsort(-x, axis=-1, kind="stable"))
    assert up.dtype == np.int32
