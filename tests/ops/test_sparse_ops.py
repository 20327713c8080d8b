"""tf.sparse structure ops (reorder, reshape, concat, slice, split, to_dense,
fill_empty_rows and TF1's compositions) against dense NumPy equivalents written here; the
SparseTensor class, sparse_placeholder feeds, TF's index errors and kernel messages, and
finite-difference gradients of the host records' values.
"""

import numpy as np
import pytest

import tensorflux as tf
from tests.ops.harness import numeric_gradient

InvalidArgumentError = tf.errors.InvalidArgumentError


def run(fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed)


def random_sparse(rng, shape, n, dtype=np.float32):
    """(row-major indices, values) of n distinct random positions of `shape`."""
    flat = np.sort(rng.choice(int(np.prod(shape)), n, replace=False))
    indices = np.stack(np.unravel_index(flat, shape), axis=1).astype(np.int64)
    return indices, rng.uniform(-3, 3, n).astype(dtype)


def densify(indices, values, shape, default=0):
    out = np.full(shape, default, np.asarray(values).dtype)
    for i, v in zip(np.asarray(indices).tolist(), np.asarray(values).tolist()):
        out[tuple(i)] = v
    return out


def dense_of(value):
    return densify(value.indices, value.values, value.dense_shape)


def check_row_major(value):
    keys = [tuple(r) for r in value.indices.tolist()]
    assert keys == sorted(keys) and len(set(keys)) == len(keys)


SHAPE = (3, 4, 5)


def test_structure_ops_match_dense_numpy():
    rng = np.random.default_rng(0)
    idx, vals = random_sparse(rng, SHAPE, 12)
    idx2, vals2 = random_sparse(rng, (3, 2, 5), 5)
    perm = rng.permutation(len(vals))
    unordered = tf.SparseTensor(idx[perm], vals[perm], SHAPE)
    st = tf.SparseTensor(idx, vals, SHAPE)
    other = tf.SparseTensor(idx2, vals2, (3, 2, 5))
    keep = rng.random(len(vals)) < 0.5
    fetches = {
        "reorder": tf.sparse.reorder(unordered),
        "reshape": tf.sparse.reshape(st, [-1, 5]),
        "reshape2": tf.sparse_reshape(st, [6, -1, 2]),
        "concat": tf.sparse.concat(1, [st, other]),
        "concat_expand": tf.sparse_concat(axis=0, sp_inputs=[st, other],
                                          expand_nonconcat_dim=True),
        "slice": tf.sparse.slice(st, [1, 1, 0], [5, 2, 3]),
        "split": tf.sparse.split(sp_input=st, num_split=3, axis=1),
        "transpose": tf.sparse.transpose(st),
        "transpose_perm": tf.sparse_transpose(st, [1, 0, 2]),
        "retain": tf.sparse.retain(st, keep),
        "reset_tight": tf.sparse.reset_shape(st),
        "reset_bigger": tf.sparse_reset_shape(st, [4, 4, 6]),
        "dense_default": tf.sparse.to_dense(st, default_value=-1.0),
        "expand": tf.sparse.expand_dims(st, 1),
        "expand_last": tf.sparse.expand_dims(st),
        "eye": tf.sparse.eye(3, 5, dtype=tf.int32),
        "from_dense": tf.sparse.from_dense(densify(idx, vals, SHAPE)),
    }
    got = run(fetches)
    dense = densify(idx, vals, SHAPE)
    check_row_major(got["reorder"])
    np.testing.assert_array_equal(dense_of(got["reorder"]), dense)
    np.testing.assert_array_equal(dense_of(got["reshape"]), dense.reshape(-1, 5))
    np.testing.assert_array_equal(got["reshape2"].dense_shape, [6, 5, 2])
    np.testing.assert_array_equal(dense_of(got["reshape2"]), dense.reshape(6, 5, 2))
    dense2 = densify(idx2, vals2, (3, 2, 5))
    check_row_major(got["concat"])
    np.testing.assert_array_equal(dense_of(got["concat"]), np.concatenate([dense, dense2], 1))
    padded = np.zeros((3, 4, 5), np.float32)
    padded[:, :2] = dense2
    np.testing.assert_array_equal(dense_of(got["concat_expand"]),
                                  np.concatenate([dense, padded], 0))
    np.testing.assert_array_equal(got["slice"].dense_shape, [2, 2, 3])
    np.testing.assert_array_equal(dense_of(got["slice"]), dense[1:, 1:3, 0:3])
    for piece, want in zip(got["split"], np.array_split(dense, 3, axis=1)):
        np.testing.assert_array_equal(dense_of(piece), want)
    check_row_major(got["transpose"])
    np.testing.assert_array_equal(dense_of(got["transpose"]), dense.transpose())
    np.testing.assert_array_equal(dense_of(got["transpose_perm"]), dense.transpose(1, 0, 2))
    np.testing.assert_array_equal(got["retain"].values, vals[keep])
    np.testing.assert_array_equal(got["retain"].indices, idx[keep])
    np.testing.assert_array_equal(got["reset_tight"].dense_shape, idx.max(axis=0) + 1)
    np.testing.assert_array_equal(got["reset_bigger"].dense_shape, [4, 4, 6])
    np.testing.assert_array_equal(got["dense_default"], densify(idx, vals, SHAPE, -1))
    np.testing.assert_array_equal(dense_of(got["expand"]), dense[:, None])
    np.testing.assert_array_equal(dense_of(got["expand_last"]), dense[..., None])
    np.testing.assert_array_equal(dense_of(got["eye"]), np.eye(3, 5, dtype=np.int32))
    np.testing.assert_array_equal(got["from_dense"].indices, idx)
    np.testing.assert_array_equal(got["from_dense"].values, vals)


def test_fill_empty_rows_merge_indicator_and_mask():
    st = tf.SparseTensor([[0, 1], [0, 3], [2, 0], [3, 1]], ["a", "b", "c", "d"], [5, 6])
    filled, empty = tf.sparse.fill_empty_rows(st, "x")
    ids = tf.SparseTensor([[0, 0], [0, 1], [1, 0], [2, 0]],
                          tf.constant([3, 1, 2, 3], tf.int64), [3, 2])
    weights = tf.SparseTensor([[0, 0], [0, 1], [1, 0], [2, 0]], [0.5, 1.5, 2.0, 3.0], [3, 2])
    merged = tf.sparse.merge(ids, weights, 4)
    indicator = tf.sparse.to_indicator(ids, 4)

    class Slices:  # the IndexedSlices interface sparse_mask reads and rebuilds
        def __init__(self, values, indices, dense_shape):
            self.values, self.indices, self.dense_shape = values, indices, dense_shape

    masked = tf.sparse.mask(Slices(tf.constant([[1.0], [2.0], [3.0]]), tf.constant([0, 5, 7]),
                                   tf.constant([9, 1])), [5])
    got = run([filled, empty, merged, indicator, masked.values, masked.indices])
    np.testing.assert_array_equal(got[0].indices, [[0, 1], [0, 3], [1, 0], [2, 0], [3, 1],
                                                   [4, 0]])
    assert got[0].values.tolist() == [b"a", b"b", b"x", b"c", b"d", b"x"]
    np.testing.assert_array_equal(got[1], [False, True, False, False, True])
    want = np.zeros((3, 4), np.float32)
    want[0, 3], want[0, 1], want[1, 2], want[2, 3] = 0.5, 1.5, 2.0, 3.0
    np.testing.assert_array_equal(dense_of(got[2]), want)
    np.testing.assert_array_equal(got[3], want != 0)
    np.testing.assert_array_equal(got[4], [[1.0], [3.0]])
    np.testing.assert_array_equal(got[5], [0, 7])


def test_static_shapes_follow_tf():
    st = tf.SparseTensor([[0, 0]], [1.0], [3, 4])
    assert tf.sparse.reorder(st).shape.as_list() == [3, 4]
    assert tf.sparse.reshape(st, [-1, 2]).shape.as_list() == [6, 2]
    assert tf.sparse.concat(1, [st, st]).shape.as_list() == [3, 8]
    assert tf.sparse.to_dense(st).shape.as_list() == [3, 4]
    assert tf.sparse.transpose(st).shape.as_list() == [4, 3]
    assert tf.sparse.reduce_sum(st, 1).shape.as_list() == [3]
    ph = tf.sparse.placeholder(tf.float32, shape=[None, 4])
    assert ph.shape.as_list() == [None, None] and ph.indices.shape.as_list() == [None, 2]
    assert tf.sparse.placeholder(tf.float32, shape=[2, 4]).shape.as_list() == [2, 4]
    with pytest.raises(ValueError, match="Cannot reshape a tensor with 12 elements to shape "
                                         r"\[5, 2\] \(10 elements\)"):
        tf.sparse.reshape(st, [5, 2])
    with pytest.raises(ValueError, match="At most one dimension can be inferred"):
        tf.sparse.reshape(st, [-1, -1])


def test_sparse_placeholder_feed_and_fetch_round_trip():
    sp = tf.sparse.placeholder(tf.float32, name="x")
    assert sp.values.op.name == "x/values" and sp.indices.op.name == "x/indices"
    dense = tf.sparse.to_dense(sp)
    doubled = sp * 2.0
    value = tf.SparseTensorValue(np.array([[0, 1], [2, 0]], np.int64),
                                 np.array([1.5, -2.0], np.float32), np.array([3, 2], np.int64))
    with tf.Session() as sess:
        echoed, d, twice = sess.run([sp, dense, doubled], {sp: value})
        as_tuple = sess.run(dense, {sp: (value.indices, value.values, value.dense_shape)})
    assert isinstance(echoed, tf.SparseTensorValue)
    for a, b in zip(echoed, value):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(d, [[0, 1.5], [0, 0], [-2.0, 0]])
    np.testing.assert_array_equal(as_tuple, d)
    np.testing.assert_array_equal(twice.values, [3.0, -4.0])
    with pytest.raises(TypeError, match="cannot be a tf.SparseTensor"):
        run(dense, {sp: sp})


@pytest.mark.parametrize("indices, message", [
    ([[0, 1], [1, 2], [1, 0]], r"indices\[2\] = \[1,0\] is out of order"),
    ([[0, 1], [3, 0]], r"indices\[1\] = \[3,0\] is out of bounds: need 0 <= index < \[3,3\]"),
    ([[0, 1], [0, 1]], r"indices\[1\] = \[0,1\] is repeated"),
])
def test_to_dense_index_errors_fed_and_constant(indices, message):
    fed = tf.placeholder(tf.int64, [None, 2])
    values = tf.ones([len(indices)])
    with tf.Session() as sess:
        with pytest.raises(InvalidArgumentError, match=message):
            sess.run(tf.sparse.to_dense(tf.SparseTensor(fed, values, [3, 3])),
                     {fed: indices})
        with pytest.raises(InvalidArgumentError, match=message):
            sess.run(tf.sparse.to_dense(tf.SparseTensor(indices, values, [3, 3])))


def test_to_dense_without_validation_checks_bounds_only():
    fed = tf.placeholder(tf.int64, [None, 2])
    out = tf.sparse.to_dense(tf.SparseTensor(fed, [1, 2], [3, 3]), validate_indices=False)
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(out, {fed: [[2, 2], [0, 0]]}),
                                      [[2, 0, 0], [0, 0, 0], [0, 0, 1]])
        with pytest.raises(InvalidArgumentError, match=r"Indices are not valid \(out of "
                                                       r"bounds\).  Shape: \[3,3\]"):
            sess.run(out, {fed: [[2, 2], [0, 3]]})


def test_kernel_errors_are_tfs():
    shape = tf.placeholder(tf.int64, [None])
    st = tf.SparseTensor([[0, 0], [1, 1]], [1.0, 2.0], shape)
    a = tf.SparseTensor([[0, 0]], [1.0], [2, 3])
    b = tf.SparseTensor([[0, 0]], [1.0], [3, 3])
    cases = [
        (tf.sparse.reshape(st, [5, -1]), {shape: [2, 3]},
         "Input to reshape is a SparseTensor with 6 dense values, but the requested shape "
         r"requires a multiple of 5. inputShape=\[2,3\] outputShape=\[5,1\]"),
        (tf.sparse.reshape(st, [4, 2]), {shape: [2, 3]},
         r"Input to reshape is a tensor with 6 dense values, but the requested shape has 8"),
        (tf.sparse.concat(1, [a, b]).indices, None,
         "Input shapes must match: expected 2 for dimension 0 but got 3 at position 1"),
        (tf.sparse.split(sp_input=st, num_split=4, axis=0)[0].indices, {shape: [2, 3]},
         r"Input num_split should be between 1 and the splitting dimension size \(2\), got 4"),
        (tf.sparse.fill_empty_rows(st, 0.0)[0].indices, {shape: [1, 3]},
         r"indices\(1, 0\) is invalid: 1 >= 1"),
    ]
    with tf.Session() as sess:
        for fetch, feed, message in cases:
            with pytest.raises(InvalidArgumentError, match=message):
                sess.run(fetch, feed)
    with pytest.raises(TypeError, match="Input must be a SparseTensor."):
        tf.sparse.reorder(tf.constant([1]))
    with pytest.raises(ValueError, match="Keyword arguments are required"):
        tf.sparse.split(st, 2, 0)
    with pytest.raises(ValueError, match="Requested new_shape should have dimension sizes"):
        tf.sparse.reset_shape(a, [1, 3])


def check_gradient(build, arrays, expect, wrt=(0,)):
    """tf.gradients of sum(w * build(*xs)) against central differences of `expect`."""
    rng = np.random.default_rng(5)
    weights = rng.uniform(0.5, 1.5, np.shape(expect(*arrays)))
    with tf.Graph().as_default():
        phs = [tf.placeholder(tf.as_dtype(a.dtype), a.shape) for a in arrays]
        out = build(*phs)
        grads = tf.gradients(tf.reduce_sum(out * weights), [phs[i] for i in wrt])
        # A gather's gradient (tf.sparse.retain) is an IndexedSlices, as in TF1.
        grads = [tf.convert_to_tensor(g) for g in grads]
        with tf.Session() as sess:
            got = sess.run(grads, dict(zip(phs, arrays)))
    for i, g in zip(wrt, got):
        want = numeric_gradient(lambda *xs: float(np.sum(weights * expect(*xs))), arrays, i)
        np.testing.assert_allclose(g, want, rtol=1e-6, atol=1e-6)


def test_gradients_through_slice_fill_reshape_and_retain():
    idx = np.array([[0, 1], [1, 0], [2, 3], [3, 2]], np.int64)
    vals = np.array([0.5, -1.0, 2.0, 1.5])

    def sliced(v):
        return tf.sparse.to_dense(tf.sparse.slice(tf.SparseTensor(idx, v, [4, 4]), [1, 0],
                                                  [2, 4]))
    check_gradient(sliced, [vals], lambda v: densify(idx, v, (4, 4))[1:3])

    def filled(v, d):
        out, _ = tf.sparse.fill_empty_rows(tf.SparseTensor(idx[1:], v, [5, 4]), d)
        return tf.sparse.to_dense(out)

    def filled_expect(v, d):
        want = densify(idx[1:], v, (5, 4))
        want[0, 0] = want[4, 0] = d
        return want
    check_gradient(filled, [vals[1:], np.array(0.25)], filled_expect, wrt=(0, 1))

    def reshaped(v):
        st = tf.sparse.reshape(tf.SparseTensor(idx, v, [4, 4]), [2, 8])
        return tf.sparse.to_dense(tf.sparse.retain(st, [True, False, True, True]))
    keep = np.array([True, False, True, True])
    check_gradient(reshaped, [vals],
                   lambda v: densify(idx[keep], v[keep], (4, 4)).reshape(2, 8))


def test_sparse_tensor_members_spec_and_nest():
    st = tf.SparseTensor(tf.placeholder(tf.int64, [None, 2]), tf.placeholder(tf.float32, [None]),
                         tf.placeholder(tf.int64, [2]))
    assert st.shape.as_list() == [None, None]
    st.set_shape([None, 7])
    assert st.shape.as_list() == [None, 7]
    with pytest.raises(ValueError, match="not compatible"):
        st.set_shape([3, 8])
    doubled = st.with_values(st.values * 2)
    assert doubled.indices is st.indices and doubled.shape.as_list() == [None, 7]
    assert {op.name for op in st.consumers()} >= {doubled.values.op.name}
    assert tf.sparse.SparseTensor is tf.SparseTensor
    spec = tf.SparseTensorSpec([None, 7], tf.float32)
    assert spec.is_compatible_with(st) and not spec.is_compatible_with(
        tf.SparseTensorSpec([None, 6], tf.float32))
    assert st._type_spec == spec and spec.value_type is tf.SparseTensor
    flat = tf.nest.flatten({"a": st, "b": 1}, expand_composites=True)
    assert flat[:3] == [st.indices, st.values, st.dense_shape] and flat[3] == 1
    rebuilt = tf.nest.pack_sequence_as({"a": st, "b": 1}, flat, expand_composites=True)
    assert isinstance(rebuilt["a"], tf.SparseTensor) and rebuilt["a"].values is st.values
    assert tf.convert_to_tensor_or_sparse_tensor(
        tf.SparseTensorValue([[0]], [1.0], [2])).dtype == tf.float32
