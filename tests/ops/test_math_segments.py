"""Segment reductions beyond the registry cases: static shapes, empty and gap segments,
TF's CPU-kernel errors for bad ids, and gradients where finite differences say nothing
(ties of max, zeros of prod). Values are hand-computed or NumPy."""

import re

import numpy as np
import pytest

import tensorflux as tf
from tests.helpers import raises_at_run, run

F32 = np.float32


# -- sorted segments ------------------------------------------------------------------------------
def test_sorted_static_shapes():
    data, ids = tf.placeholder(tf.float32, [None, 3]), tf.placeholder(tf.int32, [None])
    assert tf.math.segment_sum(data, ids).shape.as_list() == [None, 3]
    assert tf.segment_max(tf.placeholder(tf.float32), ids).shape.ndims is None
    with pytest.raises(ValueError, match="Shape must be at least rank 1 but is rank 0"):
        tf.math.segment_mean(tf.constant(1.0), ids)
    with pytest.raises(ValueError, match="Shape must be rank 1 but is rank 2"):
        tf.math.segment_min(data, tf.placeholder(tf.int32, [2, 2]))
    with pytest.raises(TypeError, match="DataType complex64 not in list of allowed values"):
        tf.math.segment_max(tf.placeholder(tf.complex64, [2]), ids)


def test_sorted_gaps_and_empty_ids():
    # TF's sorted kernels fill segments no id names with 0 (1 for prod), max and min too.
    data = tf.constant([[1.0, -2.0], [3.0, 4.0]])
    ids = tf.constant([1, 1])
    empty = tf.zeros([0, 2])
    no_ids = tf.zeros([0], tf.int32)
    fns = [tf.math.segment_sum, tf.math.segment_mean, tf.math.segment_prod,
           tf.math.segment_min, tf.math.segment_max]
    got = run([f(data, ids) for f in fns] + [f(empty, no_ids) for f in fns])
    np.testing.assert_array_equal(got[0], [[0, 0], [4, 2]])
    np.testing.assert_array_equal(got[1], [[0, 0], [2, 1]])
    np.testing.assert_array_equal(got[2], [[1, 1], [3, -8]])
    np.testing.assert_array_equal(got[3], [[0, 0], [1, -2]])
    np.testing.assert_array_equal(got[4], [[0, 0], [3, 4]])
    for value in got[5:]:
        assert value.shape == (0, 2) and value.dtype == F32


def test_sorted_integer_mean_truncates():
    # Eigen's mean reducer divides in T: -7 / 2 == -3 for int32, as C does.
    got = run(tf.math.segment_mean(tf.constant([-3, -4, 5]), tf.constant([0, 0, 1])))
    np.testing.assert_array_equal(got, [-3, 5])


@pytest.mark.parametrize("ids, message", [
    ([0, 2, 1], "segment ids are not increasing"),
    ([-1, 0, 1], "Segment id -1 out of range [0, 2), possibly because 'segment_ids' input is "
                 "not sorted."),
    ([-3, -2, -1], "segment ids must be >= 0"),
    ([0, 1], "segment_ids should be the same size as dimension 0 of input."),
])
def test_sorted_id_errors(ids, message):
    # TF's CPU kernel (segment_reduction_ops.cc) walks the ids and stops at the first bad one.
    data = tf.placeholder(tf.float32, [None])
    seg = tf.placeholder(tf.int32, [None])
    raises_at_run(tf.math.segment_sum(data, seg), {data: [1, 2, 3], seg: ids}, message)


def test_sorted_max_and_prod_gradients_at_ties_and_zeros():
    x = tf.placeholder(tf.float64, [6])
    ids = tf.constant([0, 0, 0, 1, 1, 2])
    loss = (tf.reduce_sum(tf.math.segment_max(x, ids) * tf.constant([1.0, 2.0, 3.0], tf.float64))
            + tf.reduce_sum(tf.math.segment_prod(x, ids)))
    grad_max = tf.gradients(tf.math.segment_max(x, ids), x)[0]
    grad_prod = tf.gradients(tf.math.segment_prod(x, ids), x)[0]
    got = run([grad_max, grad_prod, tf.gradients(loss, x)[0]],
              {x: [1.0, 3.0, 3.0, 2.0, 0.0, 0.0]})
    np.testing.assert_allclose(got[0], [0, 0.5, 0.5, 1, 0, 1])  # ties share the gradient
    # one zero: only it gets the product of the rest; two zeros would zero them all
    np.testing.assert_allclose(got[1], [9, 3, 3, 0, 2, 1])
    got = run(grad_prod, {x: [0.0, 0.0, 3.0, 2.0, 5.0, 7.0]})
    np.testing.assert_allclose(got, [0, 0, 0, 5, 2, 1])


# -- unsorted segments ----------------------------------------------------------------------------
def test_unsorted_empty_segments_hold_identities():
    ids = tf.constant([2, -1, 2])
    got = run([tf.math.unsorted_segment_max(tf.constant([1.0, 9.0, 2.0]), ids, 3),
               tf.math.unsorted_segment_max(tf.constant([1, 9, 2]), ids, 3),
               tf.math.unsorted_segment_min(tf.constant([1.0, 9.0, 2.0], tf.float64), ids, 3),
               tf.math.unsorted_segment_min(tf.constant([1, 9, 2], tf.int64), ids, 3),
               tf.math.unsorted_segment_prod(tf.constant([2.0, 9.0, 3.0]), ids, 3),
               tf.math.unsorted_segment_mean(tf.constant([2.0, 9.0, 3.0]), ids, 3),
               tf.math.unsorted_segment_sqrt_n(tf.constant([2.0, 9.0, 3.0]), ids, 3)])
    lo32, hi64 = np.finfo(F32).min, np.finfo(np.float64).max
    np.testing.assert_array_equal(got[0], [lo32, lo32, 2])
    np.testing.assert_array_equal(got[1], [np.iinfo(np.int32).min] * 2 + [2])
    np.testing.assert_array_equal(got[2], [hi64, hi64, 1])
    np.testing.assert_array_equal(got[3], [np.iinfo(np.int64).max] * 2 + [1])
    np.testing.assert_array_equal(got[4], [1, 1, 6])
    np.testing.assert_array_equal(got[5], [0, 0, 2.5])
    np.testing.assert_allclose(got[6], [0, 0, 5 / np.sqrt(2)], rtol=1e-6)


def test_unsorted_mean_with_matrix_ids():
    data = np.arange(12, dtype=F32).reshape(2, 2, 3)
    ids = np.array([[0, 2], [2, -1]])
    expect_sum = np.zeros((3, 3), F32)
    counts = np.zeros(3)
    for i in range(2):
        for j in range(2):
            if ids[i, j] >= 0:
                expect_sum[ids[i, j]] += data[i, j]
                counts[ids[i, j]] += 1
    out = tf.math.unsorted_segment_mean(data, ids, 3)
    out_sqrt = tf.math.unsorted_segment_sqrt_n(data, ids, 3)
    assert out.shape.as_list() == [3, 3]
    got = run([out, out_sqrt])
    n = np.maximum(counts, 1)[:, None]
    np.testing.assert_allclose(got[0], expect_sum / n)
    np.testing.assert_allclose(got[1], expect_sum / np.sqrt(n), rtol=1e-6)


def test_unsorted_out_of_range_ids():
    # TF's CPU error, for ids known when the graph is compiled and for fed ones (checked
    # in the run); negative ids are skipped, as TF's kernel does.
    raises_at_run(tf.math.unsorted_segment_max(tf.constant([1.0, 2.0]), tf.constant([0, 5]), 3),
                  None, "segment_ids[1] = 5 is out of range [0, 3)")
    ids = tf.placeholder(tf.int32, [2])
    raises_at_run(tf.math.unsorted_segment_prod(tf.constant([2.0, 3.0]), ids, 2), {ids: [0, 7]},
                  "segment_ids[1] = 7 is out of range [0, 2)")
    raises_at_run(tf.math.unsorted_segment_sum(tf.constant([[2.0], [3.0]]), ids, 2),
                  {ids: [2, 0]}, "segment_ids[0] = 2 is out of range [0, 2)")
    got = run(tf.math.unsorted_segment_prod(tf.constant([2.0, 3.0]), ids, 2), {ids: [-1, 1]})
    np.testing.assert_array_equal(got, [1, 3])
    # Inside a loop body the check is left out (it would be a host callback per
    # iteration): the row of an id past the end is dropped there.
    ids3 = tf.placeholder(tf.int32, [2])
    _, looped = tf.while_loop(
        lambda i, acc: i < 2,
        lambda i, acc: (i + 1, acc + tf.math.unsorted_segment_sum([1.0, 2.0], ids3, 3)),
        [0, tf.zeros(3)])
    np.testing.assert_array_equal(run(looped, {ids3: [0, 5]}), [2, 0, 0])
    with pytest.raises(ValueError, match="must be non-negative but is -1"):
        tf.math.unsorted_segment_min(tf.constant([1.0]), tf.constant([0]), -1)


def test_unsorted_max_gradient_ties_and_dropped_rows():
    x = tf.placeholder(tf.float64, [4])
    out = tf.math.unsorted_segment_max(x, tf.constant([1, 1, -1, 0]), 2)
    got = run(tf.gradients(out, x)[0], {x: [5.0, 5.0, 9.0, 1.0]})
    np.testing.assert_allclose(got, [0.5, 0.5, 0, 1])


# -- sparse segments ------------------------------------------------------------------------------
def test_sparse_static_shapes_and_errors():
    data = tf.placeholder(tf.float32, [None, 4])
    idx, seg = tf.placeholder(tf.int64, [None]), tf.placeholder(tf.int32, [None])
    assert tf.sparse_segment_sum(data, idx, seg).shape.as_list() == [None, 4]
    assert tf.sparse_segment_mean(data, idx, seg, num_segments=7).shape.as_list() == [7, 4]
    with pytest.raises(ValueError, match="Cannot specify a negative value for num_segments"):
        tf.sparse_segment_sqrt_n(data, idx, seg, num_segments=-1)
    with pytest.raises(ValueError, match=re.escape(
            "Dimension 0 in both shapes must be equal, but are 2 and 3. Shapes are [2] and "
            "[3].")):
        tf.sparse_segment_sum(data, [0, 1], [0, 0, 1])
    with pytest.raises(TypeError, match="DataType int32 not in list of allowed values"):
        tf.sparse_segment_mean(tf.placeholder(tf.int32, [3]), idx, seg)


@pytest.mark.parametrize("num_segments", [None, 4])
@pytest.mark.parametrize("indices, ids, message", [
    ([0, 1, 2], [0, 2, 1], "segment ids are not increasing"),
    ([0, 7, 2], [0, 0, 1], "Bad: indices[1] == 7 out of range [0, 3)"),
    ([0, 1, 2], [-1, 0, 0], "Segment id -1 out of range"),
])
def test_sparse_id_and_index_errors(num_segments, indices, ids, message):
    # Host kernels without num_segments; a run-time check in the compiled program with it.
    data = tf.placeholder(tf.float32, [None, 2])
    idx, seg = tf.placeholder(tf.int32, [None]), tf.placeholder(tf.int32, [None])
    out = tf.sparse_segment_sum(data, idx, seg, num_segments=num_segments)
    raises_at_run(out, {data: np.ones((3, 2)), idx: indices, seg: ids}, message)


def test_sparse_ids_past_num_segments():
    seg = tf.placeholder(tf.int32, [None])
    out = tf.sparse_segment_mean(tf.ones([3, 2]), [0, 1, 2], seg, num_segments=2)
    raises_at_run(out, {seg: [0, 1, 2]}, "segment ids must be < num_segments")


def test_sparse_empty_and_int64_indices():
    data = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    empty = tf.zeros([0], tf.int32)
    got = run([tf.sparse_segment_sum(data, empty, empty, num_segments=3),
               tf.sparse_segment_sum(data, empty, empty),
               tf.sparse_segment_sqrt_n(data, tf.constant([1, 1, 0], tf.int64), [1, 1, 1])])
    np.testing.assert_array_equal(got[0], np.zeros((3, 2)))
    assert got[1].shape == (0, 2)
    np.testing.assert_allclose(got[2], [[0, 0], [7 / np.sqrt(3), 10 / np.sqrt(3)]], rtol=1e-6)
