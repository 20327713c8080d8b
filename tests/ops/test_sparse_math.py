"""Sparse arithmetic (add, reductions, softmax, maximum/minimum, sparse x dense products,
the SparseTensor operators) against dense NumPy equivalents written here, TF's error
messages, and finite-difference gradients of the host records' values.
"""

import numpy as np
import pytest

import tensorflux as tf
from tests.ops.test_sparse_ops import (check_gradient, check_row_major, dense_of, densify,
                                       random_sparse, run)

InvalidArgumentError = tf.errors.InvalidArgumentError


def test_add_sparse_and_dense_against_numpy():
    a = tf.SparseTensor([[0, 0], [0, 2], [1, 1], [2, 0]], [1.0, 0.05, 2.0, 3.0], [3, 3])
    b = tf.SparseTensor([[0, 2], [1, 1], [1, 2], [2, 1]], [-0.1, -2.0, 4.0, 0.01], [3, 3])
    dense = np.arange(9, dtype=np.float32).reshape(3, 3)
    got = run([tf.sparse.add(a, b), tf.sparse_add(a, b, threshold=0.1),
               tf.sparse.add(a, b, thresh=0.5), tf.sparse.add(a, dense),
               tf.sparse_add(dense, b)])
    da = densify([[0, 0], [0, 2], [1, 1], [2, 0]], np.float32([1.0, 0.05, 2.0, 3.0]), (3, 3))
    db = densify([[0, 2], [1, 1], [1, 2], [2, 1]], np.float32([-0.1, -2.0, 4.0, 0.01]), (3, 3))
    check_row_major(got[0])
    np.testing.assert_allclose(dense_of(got[0]), da + db)
    assert len(got[0].values) == 6  # [1, 1] sums to 0 and is kept without a threshold
    # Only sums of entries in both are thresholded (TF's kernel): -0.05 and 0 go; 0.01
    # (from b alone) stays.
    np.testing.assert_array_equal(got[1].indices, [[0, 0], [1, 2], [2, 0], [2, 1]])
    np.testing.assert_array_equal(got[2].indices, got[1].indices)
    np.testing.assert_allclose(got[3], da + dense)
    np.testing.assert_allclose(got[4], db + dense)
    with pytest.raises(TypeError, match="At least one input should be SparseTensor"):
        tf.sparse.add(dense, dense)


def test_add_shape_errors_and_gradient():
    a = tf.SparseTensor([[0, 0]], [1.0], tf.placeholder(tf.int64, [None]))
    b = tf.SparseTensor([[0, 0]], [1.0], [2, 3])
    out = tf.sparse.add(a, b).values
    with tf.Session() as sess:
        with pytest.raises(InvalidArgumentError, match="Operands' shapes do not match: got 2 "
                                                       "and 3 for dimension 1"):
            sess.run(out, {a.dense_shape: [2, 2]})
        with pytest.raises(InvalidArgumentError, match="Operands do not have the same ranks; "
                                                       "got shapes: 2 2 1 and 2 3"):
            sess.run(out, {a.dense_shape: [2, 2, 1]})
    ia, ib = [[0, 1], [1, 0], [2, 2]], [[0, 1], [1, 1], [2, 2]]

    def build(va, vb):
        return tf.sparse.to_dense(tf.sparse.add(tf.SparseTensor(ia, va, [3, 3]),
                                                tf.SparseTensor(ib, vb, [3, 3])))
    check_gradient(build, [np.array([1.0, 2.0, 3.0]), np.array([0.5, -1.0, 4.0])],
                   lambda va, vb: densify(ia, va, (3, 3)) + densify(ib, vb, (3, 3)),
                   wrt=(0, 1))


def reduce_present(dense, present, axis, fn, keepdims):
    """TF's sparse reductions: only present entries take part; empty groups give 0."""
    masked = np.where(present, dense, -np.inf if fn is np.max else 0)
    out = fn(masked, axis=axis, keepdims=keepdims)
    return np.where(np.isneginf(out), 0, out)


@pytest.mark.parametrize("axis, keepdims", [(None, False), (1, False), ([0, 2], True),
                                            (-1, False)])
def test_reductions_against_numpy(axis, keepdims):
    rng = np.random.default_rng(1)
    shape = (3, 4, 2)
    idx, vals = random_sparse(rng, shape, 9)
    st = tf.SparseTensor(idx, vals, shape)
    got = run([tf.sparse.reduce_sum(st, axis, keepdims=keepdims),
               tf.sparse_reduce_max(st, axis, keep_dims=keepdims),
               tf.sparse.reduce_sum_sparse(st, axis, keepdims),
               tf.sparse_reduce_max_sparse(st, reduction_axes=axis, keepdims=keepdims)])
    dense = densify(idx, vals, shape)
    present = densify(idx, np.ones(len(vals), bool), shape)
    np_axis = tuple(axis) if isinstance(axis, list) else axis
    want_sum = reduce_present(dense, present, np_axis, np.sum, keepdims)
    want_max = reduce_present(dense, present, np_axis, np.max, keepdims)
    np.testing.assert_allclose(got[0], want_sum, rtol=1e-6)
    np.testing.assert_allclose(got[1], want_max)
    np.testing.assert_allclose(dense_of(got[2]), want_sum, rtol=1e-6)
    np.testing.assert_allclose(dense_of(got[3]), want_max)
    check_row_major(got[2])
    # The sparse forms hold exactly the groups with entries.
    any_present = np.any(present, axis=np_axis, keepdims=keepdims)
    assert len(got[3].values) == int(np.sum(any_present))


def test_reduce_sum_gradient_and_axis_error():
    idx = [[0, 1, 0], [1, 0, 1], [1, 2, 1], [2, 2, 0]]

    def build(v):
        return tf.sparse.reduce_sum(tf.SparseTensor(idx, v, [3, 3, 2]), [0, 2], keepdims=True)
    check_gradient(build, [np.array([1.0, 2.0, -3.0, 0.5])],
                   lambda v: densify(idx, v, (3, 3, 2)).sum(axis=(0, 2), keepdims=True))
    with pytest.raises(InvalidArgumentError, match="Invalid reduction dimension 3, for input "
                                                   "with 3 dimensions."):
        run(tf.sparse.reduce_sum(tf.SparseTensor(idx, [1.0] * 4, [3, 3, 2]), 3))


def test_softmax_maximum_minimum_against_numpy():
    rng = np.random.default_rng(2)
    idx, vals = random_sparse(rng, (2, 3, 4), 10, np.float64)
    idx2, vals2 = random_sparse(rng, (2, 3, 4), 10, np.float64)
    a = tf.SparseTensor(idx, vals, [2, 3, 4])
    b = tf.SparseTensor(idx2, vals2, [2, 3, 4])
    got = run([tf.sparse.softmax(a), tf.sparse.maximum(a, b), tf.sparse_minimum(a, b)])
    want = np.empty_like(vals)
    for row in {tuple(r) for r in idx[:, :2].tolist()}:
        mine = (idx[:, :2] == row).all(axis=1)
        e = np.exp(vals[mine] - vals[mine].max())
        want[mine] = e / e.sum()
    np.testing.assert_allclose(got[0].values, want, rtol=1e-12)
    da, db = densify(idx, vals, (2, 3, 4)), densify(idx2, vals2, (2, 3, 4))
    np.testing.assert_allclose(dense_of(got[1]), np.maximum(da, db))
    np.testing.assert_allclose(dense_of(got[2]), np.minimum(da, db))
    union = {tuple(r) for r in idx.tolist()} | {tuple(r) for r in idx2.tolist()}
    assert len(got[1].values) == len(union)
    check_row_major(got[1])


def test_sparse_dense_matmul_errors_and_variants():
    idx = tf.placeholder(tf.int64, [None, 2])
    st = tf.SparseTensor(idx, [1.0, 2.0], [2, 3])
    b = np.arange(6, dtype=np.float32).reshape(3, 2)
    out = tf.sparse.matmul(st, b)
    assert out.op.name == "SparseTensorDenseMatMul/SparseTensorDenseMatMul"
    assert out.shape.as_list() == [2, 2]
    adj = tf.sparse_tensor_dense_matmul(st, b.T, adjoint_a=False, adjoint_b=True)
    with tf.Session() as sess:
        got, got_adj = sess.run([out, adj], {idx: [[0, 2], [1, 0]]})
        with pytest.raises(InvalidArgumentError, match=r"k \(3\) from index\[1,1\] out of "
                                                       r"bounds \(>=3\)"):
            sess.run(out, {idx: [[0, 2], [1, 3]]})
        with pytest.raises(InvalidArgumentError, match=r"m \(2\) from index\[0,0\] out of "
                                                       r"bounds \(>=2\)"):
            sess.run(out, {idx: [[2, 0], [1, 0]]})
    want = densify([[0, 2], [1, 0]], np.float32([1, 2]), (2, 3)) @ b
    np.testing.assert_allclose(got, want)
    np.testing.assert_allclose(got_adj, want)
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 3 and 4"):
        tf.sparse.matmul(st, np.ones([4, 2], np.float32))


def test_sparse_dense_cwise_ops_and_operators():
    st = tf.SparseTensor([[0, 1], [1, 0], [1, 2]], [2, 7, -9], [2, 3])
    dense = tf.constant([[1, 2, 3], [4, 5, 6]])
    from tensorflux._src.ops.sparse.sparse_math import sparse_dense_cwise_add
    got = run([(st * dense).values, (st / 2).values, st.__div__(tf.constant(2)).values,
               sparse_dense_cwise_add(st, tf.constant([10, 20, 30])).values])
    np.testing.assert_array_equal(got[0], [4, 28, -54])
    assert got[1].dtype == np.float64  # truediv of int32 is float64, as TF's table
    np.testing.assert_allclose(got[1], [1.0, 3.5, -4.5])
    np.testing.assert_array_equal(got[2], [1, 3, -4])  # C++ division truncates
    np.testing.assert_array_equal(got[3], [22, 17, 21])


def test_sparse_matmul_gradients_match_closed_forms():
    rng = np.random.default_rng(3)
    a = rng.uniform(-1, 1, (2, 3)).astype(np.float32)
    b = rng.uniform(-1, 1, (4, 3)).astype(np.float32)
    g = rng.uniform(-1, 1, (2, 4)).astype(np.float32)  # the output's shape
    ta, tb = tf.constant(a), tf.constant(b)
    out = tf.sparse_matmul(ta, tb, transpose_b=True, b_is_sparse=True)
    out_t = tf.sparse_matmul(tf.transpose(ta), tb, transpose_a=True, transpose_b=True)
    grads = tf.gradients(out, [ta, tb], grad_ys=g) + tf.gradients(out_t, [ta, tb], grad_ys=g)
    got_out, ga, gb, ga_t, gb_t = run([out] + grads)
    np.testing.assert_allclose(got_out, a @ b.T, rtol=1e-5)
    for grad_a, grad_b in ((ga, gb), (ga_t, gb_t)):
        np.testing.assert_allclose(grad_a, g @ b, rtol=1e-5)
        np.testing.assert_allclose(grad_b, g.T @ a, rtol=1e-5)
    with pytest.raises(TypeError, match="not in list of allowed values"):
        tf.sparse_matmul(tf.ones([2, 2], tf.float64), tf.ones([2, 2], tf.float64))
