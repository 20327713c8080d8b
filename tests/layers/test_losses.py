"""tf.losses against NumPy formulas, for every reduction, plus the collection helpers."""

import numpy as np
import pytest

import tensorflux as tf

R = tf.losses.Reduction
REDUCTIONS = [R.NONE, R.SUM, R.MEAN, R.SUM_OVER_BATCH_SIZE, R.SUM_BY_NONZERO_WEIGHTS]
RNG = np.random.default_rng(0)


def np_reduce(losses, weights, reduction):
    """TF1's reductions written out: weighted losses, then a sum over a divisor."""
    w = np.broadcast_to(np.asarray(weights, np.float64), losses.shape)
    weighted = losses * w
    if reduction == R.NONE:
        return weighted
    total = weighted.sum()
    divisor = {R.SUM: 1.0, R.MEAN: w.sum(), R.SUM_OVER_BATCH_SIZE: losses.size,
               R.SUM_BY_NONZERO_WEIGHTS: np.count_nonzero(w)}[reduction]
    return total / divisor if divisor != 0 else 0.0


def check_all_reductions(loss_fn, np_losses, weights, rtol=1e-5, np_weights=None):
    """Builds the loss under every reduction and compares each with NumPy."""
    got = [loss_fn(weights=weights, reduction=r) for r in REDUCTIONS]
    with tf.Session() as sess:
        values = sess.run(got)
    np_weights = weights if np_weights is None else np_weights
    for r, value in zip(REDUCTIONS, values):
        np.testing.assert_allclose(value, np_reduce(np_losses, np_weights, r), rtol=rtol,
                                   atol=1e-6, err_msg=r)
    return got


LABELS = RNG.uniform(-1, 1, size=(4, 3)).astype(np.float32)
PREDS = RNG.uniform(-1, 1, size=(4, 3)).astype(np.float32)
ROW_WEIGHTS = np.array([[1.0], [0.0], [2.5], [0.5]], np.float32)  # (4, 1): broadcast


def test_absolute_difference_and_mean_squared_error():
    check_all_reductions(lambda **kw: tf.losses.absolute_difference(LABELS, PREDS, **kw),
                         np.abs(PREDS - LABELS), ROW_WEIGHTS)
    check_all_reductions(lambda **kw: tf.losses.mean_squared_error(LABELS, PREDS, **kw),
                         (PREDS - LABELS) ** 2, 0.5)


@pytest.mark.parametrize("delta", [1.0, 0.3])
def test_huber_loss(delta):
    err = np.abs(PREDS - LABELS)
    want = np.where(err <= delta, 0.5 * err ** 2, delta * (err - 0.5 * delta))
    check_all_reductions(lambda **kw: tf.losses.huber_loss(LABELS, PREDS, delta=delta, **kw),
                         want, ROW_WEIGHTS)


def test_hinge_and_log_loss():
    labels01 = (RNG.uniform(size=(4, 3)) > 0.5).astype(np.float32)
    logits = RNG.normal(size=(4, 3)).astype(np.float32)
    want = np.maximum(0.0, 1.0 - (2 * labels01 - 1) * logits)
    check_all_reductions(lambda **kw: tf.losses.hinge_loss(labels01, logits, **kw), want,
                         ROW_WEIGHTS)
    probs = RNG.uniform(0.01, 0.99, size=(4, 3)).astype(np.float32)
    eps = 1e-4
    want = -labels01 * np.log(probs + eps) - (1 - labels01) * np.log(1 - probs + eps)
    check_all_reductions(lambda **kw: tf.losses.log_loss(labels01, probs, epsilon=eps, **kw),
                         want, ROW_WEIGHTS)


def test_cosine_distance():
    a = RNG.normal(size=(4, 3))
    b = RNG.normal(size=(4, 3))
    a = (a / np.linalg.norm(a, axis=1, keepdims=True)).astype(np.float32)
    b = (b / np.linalg.norm(b, axis=1, keepdims=True)).astype(np.float32)
    want = 1 - np.sum(a * b, axis=1, keepdims=True)  # (4, 1)
    check_all_reductions(lambda **kw: tf.losses.cosine_distance(a, b, axis=1, **kw), want,
                         ROW_WEIGHTS)
    check_all_reductions(lambda **kw: tf.losses.cosine_distance(a, b, dim=1, **kw), want, 1.0)
    with pytest.raises(ValueError, match="You must specify 'axis'."):
        tf.losses.cosine_distance(a, b)


def _np_sigmoid_xent(labels, logits):
    return np.maximum(logits, 0) - logits * labels + np.log1p(np.exp(-np.abs(logits)))


@pytest.mark.parametrize("smoothing", [0.0, 0.2])
def test_sigmoid_cross_entropy(smoothing):
    labels01 = (RNG.uniform(size=(4, 3)) > 0.5).astype(np.float32)
    logits = RNG.normal(size=(4, 3)).astype(np.float32) * 3
    smoothed = labels01 * (1 - smoothing) + 0.5 * smoothing
    check_all_reductions(
        lambda **kw: tf.losses.sigmoid_cross_entropy(labels01, logits,
                                                     label_smoothing=smoothing, **kw),
        _np_sigmoid_xent(smoothed, logits), ROW_WEIGHTS)


def _np_log_softmax(logits):
    shifted = logits - logits.max(-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))


@pytest.mark.parametrize("smoothing", [0.0, 0.1])
def test_softmax_cross_entropy(smoothing):
    ids = np.array([0, 2, 1, 2])
    onehot = np.eye(3, dtype=np.float32)[ids]
    logits = RNG.normal(size=(4, 3)).astype(np.float32)
    smoothed = onehot * (1 - smoothing) + smoothing / 3
    want = -np.sum(smoothed * _np_log_softmax(logits), axis=1)
    weights = np.array([1.0, 0.0, 2.0, 3.0], np.float32)  # one per example
    got = check_all_reductions(
        lambda **kw: tf.losses.softmax_cross_entropy(onehot, logits,
                                                     label_smoothing=smoothing, **kw),
        want, weights)
    assert got[0].op.name.startswith("softmax_cross_entropy_loss/Mul")  # Reduction.NONE
    assert got[-1].name == "softmax_cross_entropy_loss_4/value:0"


def test_sparse_softmax_cross_entropy_squeezes_labels():
    ids = np.array([[0], [2], [1], [2]], np.int32)  # (4, 1): the last axis is squeezed
    logits = RNG.normal(size=(4, 3)).astype(np.float32)
    want = -_np_log_softmax(logits)[np.arange(4), ids[:, 0]]
    weights = np.array([[1.0], [0.5], [0.0], [2.0]], np.float32)  # squeezed like the labels
    check_all_reductions(lambda **kw: tf.losses.sparse_softmax_cross_entropy(ids, logits, **kw),
                         want, weights, np_weights=weights[:, 0])


def test_mean_pairwise_squared_error():
    labels = RNG.normal(size=(3, 4)).astype(np.float32)
    preds = RNG.normal(size=(3, 4)).astype(np.float32)
    weights = np.array([[1.0], [0.0], [2.0]], np.float32)
    loss = tf.losses.mean_pairwise_squared_error(labels, preds, weights=weights)
    scalar = tf.losses.mean_pairwise_squared_error(labels, preds)
    with tf.Session() as sess:
        got, got_scalar = sess.run([loss, scalar])
    d = preds - labels

    def per_row(row):  # mean over ordered pairs i != j of (d_i - d_j)^2
        n = row.size
        return sum((row[i] - row[j]) ** 2 for i in range(n) for j in range(n)) / (n * (n - 1))

    rows = np.array([per_row(r) for r in d])
    np.testing.assert_allclose(got, np.sum(rows * weights[:, 0]), rtol=1e-5)
    np.testing.assert_allclose(got_scalar, rows.sum(), rtol=1e-5)


def test_loss_names_collections_and_float64():
    loss = tf.losses.mean_squared_error([1.0, 2.0], [1.5, 2.0])
    assert loss.name == "mean_squared_error/value:0"
    unlisted = tf.losses.absolute_difference([1.0], [2.0], loss_collection=None)
    assert tf.losses.get_losses() == [loss] and unlisted not in tf.get_collection("losses")
    f64 = tf.losses.mean_squared_error(tf.constant([1.0, 2.0], tf.float64),
                                       tf.constant([1.5, 2.0], tf.float64))
    assert f64.dtype == tf.float32  # TF1 casts labels and predictions to float32 first
    with tf.Session() as sess:
        assert sess.run(loss) == pytest.approx(0.125)


def test_total_and_regularization_losses():
    assert tf.losses.get_regularization_losses() == []
    w = tf.Variable([1.0, -2.0])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run(tf.losses.get_regularization_loss()) == 0.0
    tf.add_to_collection(tf.GraphKeys.REGULARIZATION_LOSSES, 0.1 * tf.reduce_sum(w * w))
    tf.losses.mean_squared_error([0.0, 0.0], w)  # 2.5
    tf.losses.add_loss(tf.constant(1.0))
    total = tf.losses.get_total_loss()
    without = tf.losses.get_total_loss(add_regularization_losses=False, name="plain")
    assert total.name == "total_loss:0"
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got = sess.run([total, without, tf.losses.get_regularization_loss()])
    np.testing.assert_allclose(got, [3.5 + 0.5, 3.5, 0.5], rtol=1e-6)


def test_argument_errors():
    with pytest.raises(ValueError, match="Invalid Reduction Key bogus."):
        tf.losses.mean_squared_error([1.0], [1.0], reduction="bogus")
    with pytest.raises(ValueError, match="labels must not be None."):
        tf.losses.absolute_difference(None, [1.0])
    with pytest.raises(ValueError, match="weights can not be broadcast to values. "
                                         "values.rank=2. weights.rank=1"):
        tf.losses.mean_squared_error(LABELS, PREDS, weights=np.ones(4, np.float32))
    with pytest.raises(ValueError, match="Mismatch at dim 1"):
        tf.losses.mean_squared_error(LABELS, PREDS, weights=np.ones((4, 2), np.float32))
    with pytest.raises(ValueError):
        tf.losses.mean_squared_error(np.ones((2, 3)), np.ones((2, 4)))


def test_gradient_of_weighted_loss_matches_numpy():
    x = tf.Variable(PREDS)
    loss = tf.losses.mean_squared_error(LABELS, x, weights=ROW_WEIGHTS)
    (g,) = tf.gradients(loss, x)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got = sess.run(g)
    w = np.broadcast_to(ROW_WEIGHTS, PREDS.shape)
    want = 2 * (PREDS - LABELS) * w / np.count_nonzero(w)
    np.testing.assert_allclose(got, want, rtol=1e-5)
