"""tf.sets (SetSize and the three set-operation host records) against Python set
arithmetic written here, for dense and sparse inputs of ints and strings; TF's argument
checks, index validation and messages.
"""

import itertools

import numpy as np
import pytest

import tensorflux as tf
from tensorflux._src.ops.registry import lookup

InvalidArgumentError = tf.errors.InvalidArgumentError


def run(fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed)


# -- Python references ------------------------------------------------------------------------
def dense_sets(array):
    array = np.asarray(array)
    return {key: set(array[key].tolist()) for key in np.ndindex(*array.shape[:-1])}


def sparse_sets(indices, values):
    groups = {}
    for index, value in zip(indices, values):
        groups.setdefault(tuple(index[:-1]), set()).add(value)
    return groups


def expected(a, b, group_shape, op):
    """(indices, values, dense_shape) of the per-group results, values sorted."""
    rows = []
    for key in itertools.product(*[range(d) for d in group_shape]):
        sa, sb = a.get(key, set()), b.get(key, set())
        result = {"intersection": sa & sb, "union": sa | sb, "a-b": sa - sb,
                  "b-a": sb - sa}[op]
        if result:
            rows.append((key, sorted(result)))
    indices = [list(key) + [j] for key, vals in rows for j in range(len(vals))]
    values = [v for _, vals in rows for v in vals]
    width = max((len(vals) for _, vals in rows), default=0)
    return indices, values, list(group_shape) + [width]


def check(got, want):
    indices, values, shape = want
    assert isinstance(got, tf.SparseTensorValue)
    assert got.indices.dtype == np.int64 and got.dense_shape.dtype == np.int64
    np.testing.assert_array_equal(got.indices.reshape(-1, len(shape)),
                                  np.reshape(indices, (-1, len(shape))))
    assert got.values.tolist() == values
    np.testing.assert_array_equal(got.dense_shape, shape)


A_SPARSE = ([[0, 0, 0], [0, 0, 1], [0, 1, 0], [1, 0, 0], [1, 1, 0], [1, 1, 1]],
            [1, 2, 3, 4, 5, 6], [2, 2, 2])
B_SPARSE = ([[0, 0, 0], [0, 0, 2], [1, 0, 0], [1, 1, 0], [1, 1, 1], [1, 1, 2], [1, 1, 3]],
            [1, 9, 4, 5, 6, 7, 8], [2, 2, 4])


# -- dense and sparse inputs --------------------------------------------------------------
def test_dense_dense_operations_on_ints():
    rng = np.random.default_rng(0)
    a = rng.integers(0, 6, (3, 5)).astype(np.int32)
    b = rng.integers(0, 6, (3, 4)).astype(np.int32)
    pa, pb = tf.placeholder(tf.int32, [None, 5]), tf.placeholder(tf.int32, [None, 4])
    results = {"intersection": tf.sets.set_intersection(pa, pb),
               "union": tf.sets.union(pa, pb),
               "a-b": tf.sets.set_difference(pa, pb),
               "b-a": tf.sets.difference(pa, pb, aminusb=False)}
    union = results["union"]
    assert isinstance(union, tf.SparseTensor) and union.values.dtype == tf.int32
    assert union.indices.shape.as_list() == [None, 2] and union.values.shape.as_list() == [None]
    assert union.dense_shape.shape.as_list() == [2]
    assert union.values.op.type == "DenseToDenseSetOperation"
    assert union.values.op.name == "DenseToDenseSetOperation_1"
    assert union.values.op.get_attr("set_operation") == "union"
    got = run(results, {pa: a, pb: b})
    for op, value in got.items():
        check(value, expected(dense_sets(a), dense_sets(b), (3,), op))


def test_tf_documented_union_and_difference():
    set1 = tf.constant([[2, 3, 5, 7], [7, 9, 0, 0]])
    set2 = tf.constant([[4, 5, 6], [9, 10, 0]])
    union, diff = run([tf.sets.union(set1, set2), tf.sets.difference(set1, set2)])
    check(union, ([[0, 0], [0, 1], [0, 2], [0, 3], [0, 4], [0, 5], [1, 0], [1, 1], [1, 2],
                   [1, 3]], [2, 3, 4, 5, 6, 7, 0, 7, 9, 10], [2, 6]))
    check(diff, ([[0, 0], [0, 1], [0, 2], [1, 0]], [2, 3, 7, 7], [2, 3]))


def test_sparse_inputs_rank_3_and_the_dense_sparse_flip():
    a = tf.SparseTensor(*A_SPARSE)
    b = tf.SparseTensor(*B_SPARSE)
    dense = np.array([[[1, 9], [3, 3]], [[0, 0], [6, 6]]], np.int32)
    sa, sb = sparse_sets(*A_SPARSE[:2]), sparse_sets(*B_SPARSE[:2])
    outs = [tf.sets.intersection(a, b), tf.sets.union(a, b), tf.sets.difference(a, b),
            tf.sets.difference(a, b, aminusb=False),
            tf.sets.difference(a, tf.constant(dense)),      # sparse - dense: flipped
            tf.sets.difference(tf.constant(dense), a),      # dense - sparse
            tf.sets.union(a, tf.constant(dense))]
    types = [o.values.op.type for o in outs]
    assert types == ["SparseToSparseSetOperation"] * 4 + ["DenseToSparseSetOperation"] * 3
    assert outs[4].values.op.get_attr("set_operation") == "b-a"
    assert outs[0].indices.shape.as_list() == [None, 3]
    got = run(outs)
    ds = dense_sets(dense)
    wants = [expected(sa, sb, (2, 2), "intersection"), expected(sa, sb, (2, 2), "union"),
             expected(sa, sb, (2, 2), "a-b"), expected(sa, sb, (2, 2), "b-a"),
             expected(sa, ds, (2, 2), "a-b"), expected(ds, sa, (2, 2), "a-b"),
             expected(sa, ds, (2, 2), "union")]
    for g, w in zip(got, wants):
        check(g, w)
    # The TF docstring's intersection example.
    check(got[0], ([[0, 0, 0], [1, 0, 0], [1, 1, 0], [1, 1, 1]], [1, 4, 5, 6], [2, 2, 2]))


def test_string_sets_and_sparse_tensor_values():
    a = np.array([[b"b", b"a", b"b"], [b"c", b"d", b"a"]], object)
    b = tf.SparseTensorValue(np.array([[0, 0], [0, 1], [1, 0]], np.int64),
                             np.array([b"z", b"a", b"c"], object), np.array([2, 2], np.int64))
    pa = tf.placeholder(tf.string, [2, 3])
    outs = [tf.sets.union(pa, b), tf.sets.intersection(b, pa), tf.sets.difference(b, pa)]
    assert outs[0].values.dtype == tf.string
    got = run(outs, {pa: a})
    sb = sparse_sets(b.indices.tolist(), b.values.tolist())
    for g, op in zip(got, ["union", "intersection", "b-a"]):
        check(g, expected(dense_sets(a), sb, (2,), op))
    assert got[0].values.dtype == object


def test_empty_results_and_set_size():
    a = tf.constant([[1, 2], [3, 4]], tf.int64)
    b = tf.constant([[5, 6], [7, 8]], tf.int64)
    sp = tf.SparseTensor(*A_SPARSE)
    sizes = tf.sets.set_size(sp)
    repeated = tf.sets.size(tf.SparseTensor([[0, 0], [0, 1], [0, 2], [2, 0]],
                                            tf.constant([7, 7, 8, 1], tf.int16), [3, 3]))
    assert sizes.dtype == tf.int32 and sizes.op.type == "SetSize"
    assert tf.sets.size is tf.sets.set_size and tf.sets.union is tf.sets.set_union
    assert tf.sets.intersection is tf.sets.set_intersection
    assert tf.sets.difference is tf.sets.set_difference
    empty, got_sizes, got_repeated = run([tf.sets.intersection(a, b), sizes, repeated])
    assert empty.indices.shape == (0, 2) and empty.values.shape == (0,)
    assert empty.values.dtype == np.int64
    np.testing.assert_array_equal(empty.dense_shape, [2, 0])
    np.testing.assert_array_equal(got_sizes, [[2, 1], [1, 2]])
    np.testing.assert_array_equal(got_repeated, [2, 0, 1])
    assert got_sizes.dtype == np.int32


# -- validation ---------------------------------------------------------------------------
def test_sparse_index_validation():
    unordered = tf.SparseTensor([[0, 1], [0, 0], [1, 0]], [1, 2, 3], [2, 2])
    dense = tf.constant([[1, 5], [3, 3]])
    with pytest.raises(InvalidArgumentError, match=r"indices\[1\] = \[0,0\] is out of order. "
                                                   r"Many sparse ops require sorted indices."):
        run(tf.sets.union(dense, unordered))
    # Without validation the values are grouped wherever they appear.
    check(run(tf.sets.union(dense, unordered, validate_indices=False)),
          ([[0, 0], [0, 1], [0, 2], [1, 0]], [1, 2, 5, 3], [2, 3]))
    outside = tf.SparseTensor([[0, 0], [2, 0]], [1, 2], [2, 2])
    with pytest.raises(InvalidArgumentError, match=r"indices\[1\] = \[2,0\] is out of bounds: "
                                                   r"need 0 <= index < \[2,2\]"):
        run(tf.sets.set_size(outside))
    repeated = tf.SparseTensor([[0, 0], [0, 0]], [1, 2], [2, 2])
    with pytest.raises(InvalidArgumentError, match=r"indices\[1\] = \[0,0\] is repeated"):
        run(tf.sets.intersection(repeated, repeated))


def test_shape_and_type_errors():
    with pytest.raises(TypeError, match="'a' invalid dtype <dtype: 'float32'>"):
        tf.sets.union(tf.zeros([2, 2]), tf.zeros([2, 2]))
    with pytest.raises(TypeError, match="Types don't match, <dtype: 'int32'> vs "
                                        "<dtype: 'int64'>"):
        tf.sets.union(tf.constant([[1]]), tf.constant([[1]], tf.int64))
    with pytest.raises(TypeError, match="Expected `SparseTensor`, got"):
        tf.sets.set_size(tf.constant([[1, 2]]))
    with pytest.raises(ValueError, match="Shape must be at least rank 2 but is rank 1"):
        tf.sets.intersection(tf.constant([1, 2]), tf.constant([1, 2]))
    with pytest.raises(ValueError, match="Dimension 0 in both shapes must be equal, but are 2 "
                                         "and 3"):
        tf.sets.union(tf.zeros([2, 4], tf.int32), tf.zeros([3, 4], tf.int32))
    with pytest.raises(ValueError, match="Dimension must be 2 but is 3"):
        tf.sets.union(tf.zeros([2, 4], tf.int32), tf.SparseTensor(*A_SPARSE))
    pa, pb = tf.placeholder(tf.int32, [None, 2]), tf.placeholder(tf.int32, [None, 2])
    with pytest.raises(InvalidArgumentError, match=r"Mismatched shapes \[2\] vs \[3\]"):
        run(tf.sets.union(pa, pb), {pa: [[1, 2], [3, 4]], pb: [[1, 2], [3, 4], [5, 6]]})
    for op in ("SetSize", "DenseToDenseSetOperation", "DenseToSparseSetOperation",
               "SparseToSparseSetOperation"):
        assert lookup(op).not_differentiable and lookup(op).host is not None
