"""bincount, confusion_matrix, the monotonicity tests, accumulate_n, cumulative_logsumexp,
approx top-k, sobol_sample and tf.math's aliases: values against NumPy or hand-worked
results, TF's errors, static shapes."""

import re

import numpy as np
import pytest

import tensorflux as tf
from tensorflux._src.ops.op_builder import apply_op
from tests.helpers import raises_at_run, run


# -- bincount ----------------------------------------------------------------------------------
def test_bincount_lengths_dtypes_and_clipping():
    arr = tf.placeholder(tf.int32, [None])
    outs = [tf.math.bincount(arr), tf.bincount(arr, minlength=8),
            tf.math.bincount(arr, maxlength=3), tf.math.bincount(arr, dtype=tf.float32),
            tf.math.bincount(arr, weights=tf.ones_like(arr, tf.int64) * 2, maxlength=4)]
    assert all(o.shape.as_list() == [None] for o in outs)
    values = np.array([5, 1, 1, 0, 3])
    got = run(outs, {arr: values})
    np.testing.assert_array_equal(got[0], np.bincount(values))
    np.testing.assert_array_equal(got[1], np.bincount(values, minlength=8))
    np.testing.assert_array_equal(got[2], [1, 2, 0])  # values >= maxlength are not counted
    assert got[3].dtype == np.float32 and got[4].dtype == np.int64
    np.testing.assert_array_equal(got[4], [2, 4, 0, 2])
    empty = run(outs[:2], {arr: np.zeros([0], np.int32)})
    assert empty[0].shape == (0,) and empty[0].dtype == np.int32
    np.testing.assert_array_equal(empty[1], np.zeros(8))


def test_bincount_errors():
    arr = tf.placeholder(tf.int32, [None])
    raises_at_run(tf.math.bincount(arr), {arr: [1, -1]}, "Input arr must be non-negative!")
    raises_at_run(tf.math.bincount(arr, weights=[1.0, 2.0, 3.0]), {arr: [1, 2]},
                  "If weights are passed, they must have the same shape ([3]) as arr ([2])")
    with pytest.raises(ValueError, match="Tensor conversion requested dtype int32 for Tensor "
                                         "with dtype int64"):  # arr must be int32, as in TF
        tf.math.bincount(tf.constant([1, 2], tf.int64))
    with pytest.raises(ValueError, match=re.escape("size (-2) must be non-negative")):
        apply_op("Bincount", arr=[1], size=-2, weights=np.zeros([0], np.float32))


# -- confusion_matrix ---------------------------------------------------------------------------
def confusion(labels, predictions, n, weights=None):
    out = np.zeros((n, n))
    np.add.at(out, (labels, predictions), 1 if weights is None else weights)
    return out


def test_confusion_matrix_values():
    labels = np.array([0, 2, 1, 2, 2, 0])
    preds = np.array([0, 1, 1, 2, 1, 3])
    weights = np.array([1.0, 0.5, 2.0, 1.0, 0.25, 3.0], np.float32)
    lab, pre = tf.placeholder(tf.int64, [6]), tf.placeholder(tf.int32, [6, 1])
    static = tf.math.confusion_matrix(lab, pre, num_classes=5)
    weighted = tf.confusion_matrix(lab, pre, num_classes=5, weights=weights,
                                   dtype=tf.float32)
    dynamic = tf.math.confusion_matrix(lab, pre)  # size from the data: max + 1 = 4
    half = tf.math.confusion_matrix(lab, pre, weights=weights, dtype=tf.float16)
    assert static.shape.as_list() == [5, 5] and static.dtype == tf.int32
    got = run([static, weighted, dynamic, half], {lab: labels, pre: preds[:, None]})
    np.testing.assert_array_equal(got[0], confusion(labels, preds, 5))
    np.testing.assert_allclose(got[1], confusion(labels, preds, 5, weights))
    np.testing.assert_array_equal(got[2], confusion(labels, preds, 4))
    assert got[3].dtype == np.float16
    np.testing.assert_allclose(got[3], confusion(labels, preds, 4, weights))


@pytest.mark.parametrize("labels, num_classes, message", [
    ([0, -1], None, "`labels` contains negative values"),
    ([0, 3], 3, "`labels` out of bound"),
])
def test_confusion_matrix_checks(labels, num_classes, message):
    lab = tf.placeholder(tf.int32, [2])
    out = tf.math.confusion_matrix(lab, [1, 0], num_classes=num_classes)
    raises_at_run(out, {lab: labels}, message)


def test_confusion_matrix_weights_shape():
    with pytest.raises(ValueError, match="are incompatible"):
        tf.math.confusion_matrix([0, 1], [1, 0], num_classes=2, weights=[1.0, 2.0, 3.0])


# -- monotonicity ----------------------------------------------------------------------------------
def test_monotonicity():
    x = tf.placeholder(tf.int32, [None, 2])
    checks = [tf.math.is_non_decreasing(x), tf.is_strictly_increasing(x)]
    cases = {((1, 2), (2, 5)): [True, False], ((1, 2), (3, 5)): [True, True],
             ((1, 2), (1, 5)): [False, False],
             # TF compares x[1:] - x[:-1] with 0, which overflows here; compared directly:
             ((-2 ** 31, 2 ** 31 - 1),): [True, True]}
    for values, expected in cases.items():
        assert [bool(v) for v in run(checks, {x: np.array(values)})] == expected
    assert run(tf.math.is_strictly_increasing(tf.constant([3.0]))) == np.True_
    assert run(tf.is_non_decreasing(tf.zeros([0]))) == np.True_
    with pytest.raises(TypeError, match="Expected x to be numeric, instead found"):
        tf.math.is_non_decreasing(tf.constant(["a", "b"]))


# -- accumulate_n ----------------------------------------------------------------------------------
def test_accumulate_n_checks_and_gradient():
    a = tf.placeholder(tf.float32, [2, None])
    b = tf.placeholder(tf.float32, [None, 3])
    total = tf.math.accumulate_n([a, b, a], shape=[2, 3])
    assert total.op.type == "AccumulateNV2" and total.shape.as_list() == [2, 3]
    assert tf.accumulate_n([a]) is a
    assert tf.accumulate_n([a], name="same").op.type == "Identity"
    grads = tf.gradients(total, [a, b])
    av, bv = np.ones((2, 3), np.float32), np.arange(6, dtype=np.float32).reshape(2, 3)
    got = run([total] + grads, {a: av, b: bv})
    np.testing.assert_array_equal(got[0], 2 * av + bv)
    np.testing.assert_array_equal(got[1], np.full((2, 3), 2))
    np.testing.assert_array_equal(got[2], np.ones((2, 3)))
    message = ("inputs must be a list of at least one Tensor/IndexedSlices with the same "
               "dtype and shape")
    with pytest.raises(ValueError, match=re.escape(message)):
        tf.math.accumulate_n([])
    with pytest.raises(ValueError, match=re.escape(message)):
        tf.math.accumulate_n([a, tf.zeros([2, 3], tf.float64)])
    with pytest.raises(ValueError, match="not compatible"):
        tf.math.accumulate_n([a, tf.zeros([3, 3])])
    with pytest.raises(ValueError, match="not compatible"):
        tf.math.accumulate_n([a, b], shape=[3, 3])
    with pytest.raises(TypeError, match="tensor_dtype is <dtype: 'int32'>, but input is of "
                                        "type <dtype: 'float32'>"):
        tf.math.accumulate_n([a, b], tensor_dtype=tf.int32)


# -- cumulative_logsumexp ------------------------------------------------------------------------
def test_cumulative_logsumexp_exclusive_start_and_types():
    x = tf.constant([[0.0, 1.0, 2.0]], tf.float64)
    got = run([tf.math.cumulative_logsumexp(x, axis=1, exclusive=True),
               tf.math.cumulative_logsumexp(x, axis=-1, reverse=True)])
    # TF 1.15's kernel starts exclusive scans from the lowest finite value, not -inf.
    np.testing.assert_allclose(got[0], [[np.finfo(np.float64).min, 0, np.logaddexp(0, 1)]])
    np.testing.assert_allclose(got[1], [[np.log(1 + np.e + np.e ** 2),
                                         np.logaddexp(1, 2), 2]])
    with pytest.raises(TypeError, match="DataType int32 not in list of allowed values"):
        tf.math.cumulative_logsumexp(tf.constant([1, 2]))
    assert tf.math.cumulative_logsumexp(tf.zeros([2], tf.float16)).dtype == tf.float16


# -- approx top-k, in_top_k ------------------------------------------------------------------------
def test_approx_top_k_gradient_shapes_and_aliases():
    x = tf.placeholder(tf.float32, [2, 5])
    values, indices = tf.math.approx_max_k(x, 2)
    assert values.shape.as_list() == [2, 2] and indices.dtype == tf.int32
    low = tf.approx_top_k(x, 1, reduction_dimension=0, is_max_k=False)
    assert low.values.shape.as_list() == [1, 5] and low.indices.shape.as_list() == [1, 5]
    weights = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    grad = tf.gradients(tf.reduce_sum(values * weights), x)[0]
    xv = np.array([[0.5, 3.0, -1.0, 2.0, 0.0], [9.0, 1.0, 8.0, 7.0, 6.0]], np.float32)
    got = run([values, indices, grad, low.indices], {x: xv})
    np.testing.assert_array_equal(got[0], [[3, 2], [9, 8]])
    np.testing.assert_array_equal(got[1], [[1, 3], [0, 2]])
    np.testing.assert_array_equal(got[2], [[0, 1, 0, 2, 0], [3, 0, 4, 0, 0]])
    np.testing.assert_array_equal(got[3], [[0, 1, 0, 0, 0]])
    with pytest.raises(ValueError, match="input must have last dimension >= k = 6 but was 5"):
        tf.math.approx_min_k(x, 6)
    with pytest.raises(ValueError, match="input must have last dimension >= k = 3 but was 2"):
        tf.math.approx_max_k(x, 3, reduction_dimension=0)
    assert tf.math.in_top_k is tf.nn.in_top_k  # TF1: (predictions, targets, k)


# -- sobol_sample ----------------------------------------------------------------------------------
# The first rows of TF's own test of SobolSample (sobol_ops_test.py, 5 dimensions).
TF_SOBOL_5D = [[0.5, 0.5, 0.5, 0.5, 0.5], [0.75, 0.25, 0.25, 0.25, 0.75],
               [0.25, 0.75, 0.75, 0.75, 0.25], [0.375, 0.375, 0.625, 0.875, 0.375],
               [0.875, 0.875, 0.125, 0.375, 0.875], [0.625, 0.125, 0.875, 0.625, 0.625],
               [0.125, 0.625, 0.375, 0.125, 0.125], [0.1875, 0.3125, 0.9375, 0.4375, 0.5625],
               [0.6875, 0.8125, 0.4375, 0.9375, 0.0625]]


def test_sobol_known_values_skip_and_shapes():
    dim = tf.placeholder(tf.int32, [])
    fed = tf.math.sobol_sample(dim, 100)
    assert fed.shape.as_list() == [100, None] and fed.dtype == tf.float32
    many = tf.math.sobol_sample(10, 67, dtype=tf.float64)
    skipped = tf.math.sobol_sample(10, 50, skip=17, dtype=tf.float64)
    assert many.shape.as_list() == [67, 10]
    got = run([tf.math.sobol_sample(5, 9), many, skipped, fed], {dim: 3})
    np.testing.assert_array_equal(got[0], TF_SOBOL_5D)
    np.testing.assert_array_equal(got[1][17:], got[2])
    assert got[3].shape == (100, 3)


@pytest.mark.parametrize("args, message", [
    ((0, 2, 0), "dim must be at least one"),
    ((21202, 2, 0), "dim must be at most 21201"),
    ((2, 0, 0), "num_results must be at least one"),
    ((2, 2, -1), "skip must be non-negative"),
    ((1, 1, 2 ** 31 - 1), "num_results+skip must be less than 2147483647"),
])
def test_sobol_errors(args, message):
    raises_at_run(tf.math.sobol_sample(*args), None, message)


def test_sobol_needs_scalars():
    with pytest.raises(ValueError, match="Shape must be rank 0 but is rank 1"):
        tf.math.sobol_sample(7, tf.constant([1, 0]))
