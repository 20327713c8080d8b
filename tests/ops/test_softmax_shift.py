"""Softmax, log-softmax and the cross-entropies shift each row by its maximum through a
select-combined reduction (ops/nn/softmax_kernels.py); their values against NumPy
written here, on rows where the shift matters: huge logits, -inf entries, NaN, ties,
and half precision."""

import numpy as np
import pytest

import tensorflux as tf


def np_log_softmax(x):
    x = x.astype(np.float64)
    m = np.max(x, axis=-1, keepdims=True)
    return x - m - np.log(np.sum(np.exp(x - m), axis=-1, keepdims=True))


ROWS = np.array([
    [1.0, 2.0, 3.0, 4.0],
    [1e30, -1e30, 1e30, 0.0],        # overflows without the shift; a tie at the maximum
    [-np.inf, 0.0, 1.0, -np.inf],    # impossible classes
    [-5.0, -5.0, -5.0, -5.0],
    [88.0, 89.0, 90.0, -90.0],       # exp(90) overflows float32
], np.float32)


def _run(fetch, feed=None):
    with tf.Session() as sess:
        return sess.run(fetch, feed)


def test_log_softmax_and_softmax_match_numpy():
    x = tf.placeholder(tf.float32, ROWS.shape)
    log_p, p = _run([tf.nn.log_softmax(x), tf.nn.softmax(x)], {x: ROWS})
    want = np_log_softmax(ROWS)
    np.testing.assert_allclose(log_p, want, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(p, np.exp(want), rtol=1e-6, atol=1e-7)
    assert np.all(np.isfinite(p)) and np.allclose(p.sum(-1), 1.0, atol=1e-6)


def test_a_nan_logit_makes_its_row_nan_only():
    rows = ROWS.copy()
    rows[3, 1] = np.nan
    x = tf.placeholder(tf.float32, rows.shape)
    log_p, p = _run([tf.nn.log_softmax(x), tf.nn.softmax(x)], {x: rows})
    assert np.all(np.isnan(log_p[3])) and np.all(np.isnan(p[3]))
    keep = [0, 1, 2, 4]
    np.testing.assert_allclose(log_p[keep], np_log_softmax(ROWS)[keep], rtol=1e-6,
                               atol=1e-6)


@pytest.mark.parametrize("dtype", [tf.float16, tf.bfloat16])
def test_half_precision(dtype):
    rows = np.array([[1.0, 2.0, 3.0, 4.0], [60.0, 61.0, 62.0, -3.0]], np.float32)
    x = tf.placeholder(tf.float32, rows.shape)
    got = _run(tf.cast(tf.nn.log_softmax(tf.cast(x, dtype)), tf.float32), {x: rows})
    np.testing.assert_allclose(got, np_log_softmax(rows), rtol=2e-2, atol=2e-2)


def test_sparse_cross_entropy_and_its_gradient_on_large_logits():
    rng = np.random.default_rng(0)
    logits = (rng.standard_normal((6, 1000)) * 40).astype(np.float32)
    labels = rng.integers(0, 1000, 6)
    x = tf.placeholder(tf.float32, logits.shape)
    loss = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=x)
    (grad,) = tf.gradients(tf.reduce_sum(loss), [x])
    got_loss, got_grad = _run([loss, grad], {x: logits})
    log_p = np_log_softmax(logits)
    np.testing.assert_allclose(got_loss, -log_p[np.arange(6), labels], rtol=1e-5)
    want_grad = np.exp(log_p)
    want_grad[np.arange(6), labels] -= 1
    np.testing.assert_allclose(got_grad, want_grad, rtol=1e-4, atol=1e-6)


def test_dense_cross_entropy_matches_numpy():
    rng = np.random.default_rng(1)
    logits = (rng.standard_normal((5, 7)) * 30).astype(np.float32)
    labels = rng.dirichlet(np.ones(7), 5).astype(np.float32)
    x = tf.placeholder(tf.float32, logits.shape)
    got = _run(tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=x),
               {x: logits})
    np.testing.assert_allclose(got, -(labels * np_log_softmax(logits)).sum(-1), rtol=1e-5)
