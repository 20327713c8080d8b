"""Variable scatter updates (scatter_mul/div/min/max, scatter_nd_*, batch_scatter_update,
the tf.Variable methods) against NumPy updates, and TF's errors for bad indices and shapes
in them and in tensor_scatter_nd_*."""

import collections

import numpy as np
import pytest

import tensorflux as tf

Slices = collections.namedtuple("Slices", ["values", "indices"])  # IndexedSlices-like


def np_apply(ref, indices, updates, fn):
    """ref after applying fn(old, update) once per index, in order (TF's CPU kernels)."""
    out = ref.copy()
    ups = np.broadcast_to(updates, np.shape(indices) + ref.shape[1:])
    for i, u in zip(np.reshape(indices, -1), ups.reshape((-1,) + ref.shape[1:])):
        out[i] = fn(out[i], u)
    return out


def np_apply_nd(ref, indices, updates, fn):
    out = ref.copy()
    k = indices.shape[-1]
    rows = indices.reshape(-1, k)
    for r, u in zip(rows, updates.reshape((rows.shape[0],) + ref.shape[k:])):
        out[tuple(r)] = fn(out[tuple(r)], u)
    return out


def trunc_div(a, b):
    return np.trunc(a / b).astype(a.dtype)


def test_variable_scatters_match_numpy_updates():
    f0 = np.array([[1.5, -2.0], [3.0, 4.0], [-0.5, 6.0], [2.0, -1.0]])
    i0 = np.array([-7, 9, 12, 5], np.int32)
    cases = [  # (initial value, function, indices, updates, NumPy update per index)
        (f0, tf.scatter_mul, [1, 3, 1], np.array([[2.0, 3.0], [0.5, 4.0], [-1.0, 2.0]]),
         lambda a, b: a * b),
        (f0, tf.scatter_div, [2, 2, 0], np.array([[2.0, 4.0], [-0.5, 2.0], [3.0, 8.0]]),
         lambda a, b: a / b),
        (i0, tf.scatter_div, [0, 0, 1], np.array([2, 2, -4], np.int32), trunc_div),
        (f0, tf.scatter_min, [3, 0, 3], np.array([[1.0, 0.0], [2.0, -3.0], [5.0, -4.0]]),
         np.minimum),
        (i0, tf.scatter_max, [3, 1, 3], np.array([6, 1, 8], np.int32), np.maximum),
        (f0, tf.scatter_mul, [0, 2], np.float64(10.0), lambda a, b: a * b),  # scalar updates
        (i0, tf.scatter_min, np.array([[2, 0], [2, 1]], np.int64),
         np.array([[4, 0], [20, 1]], np.int32), np.minimum),
    ]
    nd_cases = [
        (f0, tf.scatter_nd_update, [[1], [3]], np.array([[7.0, 8.0], [9.0, 1.0]]),
         lambda a, b: b),
        (f0, tf.scatter_nd_add, [[0, 1], [0, 1], [2, 0]], np.array([1.0, 2.0, 3.0]),
         lambda a, b: a + b),
        (i0, tf.scatter_nd_sub, [[1], [1], [3]], np.array([5, 6, 7], np.int32),
         lambda a, b: a - b),
    ]
    built = []
    for init, fn, idx, up, np_fn in cases + nd_cases:
        v = tf.Variable(init)
        built.append((v, fn(v, idx, up), init, idx, up, np_fn, fn in (
            tf.scatter_nd_update, tf.scatter_nd_add, tf.scatter_nd_sub)))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        results = sess.run([b[1] for b in built])
        finals = sess.run([b[0] for b in built])
    for (v, op, init, idx, up, np_fn, nd), got, final in zip(built, results, finals):
        apply = np_apply_nd if nd else np_apply
        want = apply(init, np.asarray(idx), np.asarray(up), np_fn)
        np.testing.assert_allclose(got, want, rtol=1e-12, err_msg=op.op.name)
        np.testing.assert_allclose(final, want, rtol=1e-12, err_msg=op.op.name)
        assert op.shape.as_list() == list(init.shape) and op.dtype == v.dtype._as_ref


def test_batch_scatter_update_and_variable_methods():
    base = np.arange(12, dtype=np.float32).reshape(3, 4)
    v = tf.Variable(base)
    batch = tf.batch_scatter_update(v, [[1, 3], [0, 0], [2, 1]],
                                    [[10.0, 11.0], [12.0, 12.0], [13.0, 14.0]])
    want = base.copy()
    for row, (cols, vals) in enumerate(zip([[1, 3], [0, 0], [2, 1]],
                                           [[10, 11], [12, 12], [13, 14]])):
        want[row, cols] = vals
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_array_equal(sess.run(batch), want)
        steps = [
            (v.scatter_add(Slices(np.ones((2, 4), np.float32), [0, 0])),
             lambda a: np_apply(a, [0, 0], np.ones((2, 4)), np.add)),
            (v.scatter_sub(Slices(np.full((1, 4), 2.0, np.float32), [2])),
             lambda a: np_apply(a, [2], np.full((1, 4), 2.0), np.subtract)),
            (v.scatter_mul(Slices(np.float32(3.0), [1])),
             lambda a: np_apply(a, [1], 3.0, np.multiply)),
            (v.scatter_div(Slices(np.full((1, 4), 2.0, np.float32), [1])),
             lambda a: np_apply(a, [1], np.full((1, 4), 2.0), np.divide)),
            (v.scatter_max(Slices(np.full((1, 4), 20.0, np.float32), [2])),
             lambda a: np_apply(a, [2], np.full((1, 4), 20.0), np.maximum)),
            (v.scatter_min(Slices(np.zeros((1, 4), np.float32), [0])),
             lambda a: np_apply(a, [0], np.zeros((1, 4)), np.minimum)),
            (v.scatter_nd_add([[1, 1], [1, 1]], [5.0, 6.0]),
             lambda a: np_apply_nd(a, np.array([[1, 1], [1, 1]]), np.array([5.0, 6.0]),
                                   np.add)),
            (v.scatter_nd_sub([[2]], [[1.0, 2.0, 3.0, 4.0]]),
             lambda a: np_apply_nd(a, np.array([[2]]), np.array([[1.0, 2, 3, 4]]),
                                   np.subtract)),
            (v.scatter_nd_update([[0, 3]], [-9.0]),
             lambda a: np_apply_nd(a, np.array([[0, 3]]), np.array([-9.0]),
                                   lambda x, y: y)),
            (v.batch_scatter_update(Slices([[7.0], [8.0], [9.0]], [[0], [1], [2]])),
             lambda a: np.where(np.eye(3, 4, dtype=bool), [[7.0], [8.0], [9.0]], a)),
        ]
        value = want
        for op, step in steps:
            value = step(value).astype(np.float32)
            np.testing.assert_allclose(sess.run(op), value, rtol=1e-6, err_msg=op.op.name)
        read = v.sparse_read([2, 0])
        nd = v.gather_nd([[1, 2], [0, 0]])
        assert (read.op.name, read.op.type, nd.op.name) == ("Gather", "GatherV2", "GatherNd")
        got_read, got_nd = sess.run([read, nd])
        np.testing.assert_allclose(got_read, value[[2, 0]], rtol=1e-6)
        np.testing.assert_allclose(got_nd, value[[1, 0], [2, 0]], rtol=1e-6)
    with pytest.raises(TypeError, match="sparse_delta is not IndexedSlices"):
        v.scatter_add([1.0])


def test_count_up_to_method():
    v = tf.Variable(0, dtype=tf.int64)
    up = v.count_up_to(2)
    with tf.Session() as sess:
        sess.run(v.initializer)
        assert [sess.run(up), sess.run(up)] == [0, 1]
        with pytest.raises(tf.errors.OutOfRangeError, match="Reached limit of 2"):
            sess.run(up)


def test_out_of_range_indices_fail_as_tf_cpu_and_leave_the_variable():
    v = tf.Variable(np.arange(6, dtype=np.float32))
    m = tf.Variable(np.zeros((4, 2), np.float32))
    idx = tf.placeholder(tf.int32, [None])
    nd_idx = tf.placeholder(tf.int32, [None, 1])
    mul = tf.scatter_mul(v, idx, [2.0, 2.0, 2.0])
    nd = tf.scatter_nd_update(v, nd_idx, [1.0, 1.0, 1.0])
    batch = tf.batch_scatter_update(v, idx, [-3.0, -4.0, -5.0])
    t_idx = tf.placeholder(tf.int64, [None, 1])
    tensor = tf.tensor_scatter_nd_add(tf.zeros([4, 2]), t_idx, tf.ones([2, 2]))
    const = tf.scatter_max(m, [0, 4], tf.ones([2, 2]))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"indices\[1\] = 6 is not in \[0, 6\)"):
            sess.run(mul, {idx: [0, 6, 1]})
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"indices\[2\] = -1 is not in \[0, 6\)"):
            sess.run(mul, {idx: [0, 2, -1]})
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"indices\[2\] = \[6\] does not index into shape \[6\]"):
            sess.run(nd, {nd_idx: [[2], [0], [6]]})
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"indices\[0\] = \[-1\] does not index into shape \[6\]"):
            sess.run(batch, {idx: [-1, 0, 5]})
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"indices\[1\] = \[7\] does not index into shape \[4,2\]"):
            sess.run(tensor, {t_idx: [[0], [7]]})
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"indices\[1\] = 4 is not in \[0, 4\)"):
            sess.run(const)
        # A failed update writes nothing; good indices then update as usual.
        np.testing.assert_array_equal(sess.run(v), np.arange(6))
        np.testing.assert_array_equal(sess.run(mul, {idx: [0, 5, 5]}), [0, 1, 2, 3, 4, 20])


def test_construction_errors_and_names():
    v = tf.Variable(np.zeros((4, 3), np.float32))
    with pytest.raises(ValueError, match=r"for 'ScatterMul' \(op: 'ScatterMul'\)"):
        tf.scatter_mul(v, [0, 1], tf.zeros([2, 4]))
    with pytest.raises(TypeError, match="has DataType complex64 not in list of allowed"):
        tf.scatter_max(tf.Variable(np.zeros(2, np.complex64)), [0], [1j])
    with pytest.raises(TypeError, match="'ScatterDiv' Op requires that input 'ref' be a mutable tensor"):
        tf.scatter_div(tf.zeros([2]), [0], [1.0])
    with pytest.raises(ValueError, match=r"The outer 1 dimensions of indices.shape=\[2,1\] must "
                                         r"match the outer 1 dimensions of updates.shape=\[3,3\]"):
        tf.tensor_scatter_nd_update(tf.zeros([4, 3]), [[0], [1]], tf.zeros([3, 3]))
    with pytest.raises(ValueError, match=r"The inner 1 dimensions of output.shape=\[4,3\] must "
                                         r"match the inner 1 dimensions of updates.shape=\[2,2\]"):
        tf.scatter_nd_add(v, [[0], [1]], tf.zeros([2, 2]))
    ops = [tf.scatter_mul(v, [0], tf.ones([1, 3])), tf.scatter_nd_sub(v, [[0]], tf.ones([1, 3])),
           tf.tensor_scatter_update(tf.zeros([2]), [[0]], [1.0]),
           tf.tensor_scatter_nd_max(tf.zeros([2]), [[0]], [1.0])]
    # Failed constructions above used up the first names, as in TF.
    assert [o.op.name for o in ops] == ["ScatterMul_1", "ScatterNdSub", "TensorScatterUpdate_1",
                                        "TensorScatterMax"]
    assert ops[0].op.get_attr("use_locking") is False
    assert tf.scatter_nd_update(v, [[0]], tf.ones([1, 3])).op.get_attr("use_locking") is True
    assert tf.tensor_scatter_add is tf.tensor_scatter_nd_add
    assert tf.tensor_scatter_sub is tf.tensor_scatter_nd_sub


def test_scatter_update_add_sub_take_scalar_updates_and_check_their_indices():
    # TF's ScatterUpdateShape allows a scalar `updates`; TF's CPU kernels reject indices
    # outside [0, rows), negative ones included, and the failed run writes nothing.
    v = tf.Variable([1.0, 2.0, 3.0])
    indices = tf.placeholder(tf.int32, [None])
    update = tf.scatter_update(v, [0, 2], 9.0)
    add = tf.scatter_add(v, indices, 1.0)
    sub = tf.scatter_sub(v, indices, [0.5, 0.5])
    with tf.Session() as sess:
        sess.run(v.initializer)
        np.testing.assert_array_equal(sess.run(update), [9.0, 2.0, 9.0])
        np.testing.assert_array_equal(sess.run(add, {indices: [1, 1]}), [9.0, 4.0, 9.0])
        np.testing.assert_array_equal(sess.run(sub, {indices: [0, 2]}), [8.5, 4.0, 8.5])
        for bad in ([-1, 0], [3, 0]):
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match=rf"indices\[0\] = {bad[0]} is not in \[0, 3\)"):
                sess.run(sub, {indices: bad})
        np.testing.assert_array_equal(sess.run(v), [8.5, 4.0, 8.5])
    with pytest.raises(ValueError, match="Dimension 0 in both shapes must be equal"):
        tf.scatter_update(v, [0, 1], [1.0, 2.0, 3.0])
