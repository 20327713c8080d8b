"""The mixture-of-experts layer against NumPy: noisy top-k gating, tensor2tensor's
importance and load losses, capacity dropping, and finite-difference gradients."""

import math

import numpy as np
import pytest

import tensorflux as tf
from tensorflux.layers import moe

_erf = np.vectorize(math.erf)


# -- NumPy references (the formulas of tensor2tensor's expert_utils.py) --------------------

def np_softplus(x):
    return np.log1p(np.exp(-np.abs(x))) + np.maximum(x, 0)


def np_cv_squared(v):
    eps = 1e-10
    n = v.size + eps
    mean = v.sum() / n
    return ((v - mean) ** 2).sum() / n / (mean ** 2 + eps)


def np_phi(x, stddev):
    return 0.5 * (1 + _erf(x / (math.sqrt(2) * stddev + 1e-20)))


def np_gating(x, w_gate, w_noise, noise, k, eps=1e-2):
    """(gates, smooth load, top-k indices) as tensor2tensor computes them."""
    clean = x @ w_gate
    stddev = np_softplus(x @ w_noise) + eps
    noisy = clean + noise * stddev
    num_experts = w_gate.shape[1]
    order = np.argsort(-noisy, axis=1, kind="stable")
    top = np.take_along_axis(noisy, order, 1)
    gates = np.zeros_like(clean)
    top_k = top[:, :k]
    soft = np.exp(top_k - top_k.max(1, keepdims=True))
    soft /= soft.sum(1, keepdims=True)
    np.put_along_axis(gates, order[:, :k], soft, 1)
    if k < num_experts:
        thr_in, thr_out = top[:, k:k + 1], top[:, k - 1:k]
        prob = np.where(noisy > thr_in, np_phi(clean - thr_in, stddev),
                        np_phi(clean - thr_out, stddev))
        load = prob.sum(0)
    else:
        load = (gates > 0).sum(0).astype(x.dtype)
    return gates, load, order[:, :k]


def np_moe_outputs(x, indices, top_gates, weights, capacity, group_size):
    """The documented dispatch rule as loops: per group, each expert takes places first
    for every token's first choice (in token order), then second choices, ...; an
    assignment past `capacity` contributes nothing."""
    w1, b1, w2, b2 = weights
    out = np.zeros((x.shape[0], w2.shape[2]))
    num_experts = w1.shape[0]
    for start in range(0, x.shape[0], group_size):
        used = np.zeros(num_experts, int)
        for j in range(indices.shape[1]):
            for t in range(start, start + group_size):
                e = indices[t, j]
                if used[e] < capacity:
                    h = np.maximum(x[t] @ w1[e] + b1[e], 0)
                    out[t] += top_gates[t, j] * (h @ w2[e] + b2[e])
                used[e] += 1
    return out


def _random_weights(rng, d, e, h, o):
    return (rng.normal(size=(e, d, h)), rng.normal(size=e * h).reshape(e, h) * 0.1,
            rng.normal(size=(e, h, o)), rng.normal(size=(e, o)) * 0.1)


# -- gating --------------------------------------------------------------------------------

@pytest.mark.parametrize("k", [1, 2, 3])
def test_noisy_top_k_gating_and_aux_losses_match_tensor2tensor(k):
    rng = np.random.default_rng(k)
    n, d, e = 40, 5, 6
    x = rng.normal(size=(n, d))
    w_gate, w_noise = rng.normal(size=(d, e)), rng.normal(size=(d, e)) * 0.5
    layer = moe.MixtureOfExperts(e, 4, k=k, loss_coef=0.1, dtype=tf.float64, seed=3)
    xt = tf.constant(x)
    layer.apply(xt, training=True)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        layer.w_gate.load(w_gate, sess)
        layer.w_noise.load(w_noise, sess)
        gates, load, importance, aux, noise, indices, reg = sess.run(
            [layer.gating.gates, layer.load, layer.importance, layer.aux_loss,
             layer.gating.noise, layer.gating.top_k_indices,
             tf.losses.get_regularization_loss()])
    want_gates, want_load, want_indices = np_gating(x, w_gate, w_noise, noise, k)
    assert (np.count_nonzero(gates, axis=1) == k).all()   # exactly k experts per token
    np.testing.assert_allclose(gates.sum(1), 1.0, rtol=1e-12)
    np.testing.assert_allclose(gates, want_gates, rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(indices, want_indices)
    np.testing.assert_allclose(importance, want_gates.sum(0), rtol=1e-10)
    np.testing.assert_allclose(load, want_load, rtol=1e-9)
    want_aux = 0.1 * (np_cv_squared(want_gates.sum(0)) + np_cv_squared(want_load))
    np.testing.assert_allclose(aux, want_aux, rtol=1e-9)
    np.testing.assert_allclose(reg, aux, rtol=1e-12)  # in REGULARIZATION_LOSSES
    if k < e:  # the smooth load is not the hard count
        assert not np.allclose(load, (want_gates > 0).sum(0))


def test_without_training_the_gates_are_clean_top_k_and_load_is_the_count():
    rng = np.random.default_rng(7)
    x, w_gate, w_noise = rng.normal(size=(30, 4)), rng.normal(size=(4, 5)), rng.normal(
        size=(4, 5))
    g = moe.noisy_top_k_gating(tf.constant(x), tf.constant(w_gate), tf.constant(w_noise),
                               k=2, training=False)
    with tf.Session() as sess:
        gates, load = sess.run([g.gates, g.load])
    want, _, _ = np_gating(x, w_gate, w_noise, np.zeros((30, 5)), 2)
    np.testing.assert_allclose(gates, want, rtol=1e-12)
    np.testing.assert_array_equal(load, (want > 0).sum(0))


def test_cv_squared_and_gates_to_load():
    v = np.array([1.0, 2.0, 3.0, 10.0])
    with tf.Session() as sess:
        got, empty, count = sess.run([
            moe.cv_squared(tf.constant(v)), moe.cv_squared(tf.zeros([0])),
            moe.gates_to_load(tf.constant([[0.5, 0.0, 0.5], [0.0, 0.0, 1.0]]))])
    np.testing.assert_allclose(got, np.var(v) / np.mean(v) ** 2, rtol=1e-9)
    assert empty == 0.0
    np.testing.assert_array_equal(count, [1, 0, 2])


# -- dispatch, capacity ----------------------------------------------------------------------

def _run_layer(x, weights, k, capacity_factor, group_size, w_gate):
    e, _, h = weights[0].shape
    layer = moe.MixtureOfExperts(e, h, k=k, capacity_factor=capacity_factor,
                                 group_size=group_size, noisy_gating=False,
                                 dtype=tf.float64)
    y = layer.apply(tf.constant(x), training=True)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for var, value in zip([layer.w_gate, layer.expert_kernel_1, layer.expert_bias_1,
                               layer.expert_kernel_2, layer.expert_bias_2],
                              [w_gate, *weights]):
            var.load(value, sess)
        # The capacity is a Python int when the token count is static.
        capacity = layer.capacity
        if isinstance(capacity, tf.Tensor):
            capacity = sess.run(capacity)
        return (*sess.run([y, layer.gating.top_k_indices, layer.gating.top_k_gates]),
                capacity)


@pytest.mark.parametrize("k,capacity_factor,group_size", [
    (2, None, None), (2, 0.6, None), (1, 1.0, 8), (3, 0.5, 12)])
def test_outputs_follow_the_documented_dispatch_rule(k, capacity_factor, group_size):
    rng = np.random.default_rng(11)
    n, d, e, h = 24, 5, 4, 6
    x = rng.normal(size=(n, d))
    weights = _random_weights(rng, d, e, h, d)
    # A gate that favours expert 0, so that capacity binds.
    w_gate = rng.normal(size=(d, e)) + np.array([1.0, 0, 0, 0])
    y, indices, top_gates, capacity = _run_layer(x, weights, k, capacity_factor,
                                                 group_size, w_gate)
    size = group_size or n
    want_capacity = size if capacity_factor is None else min(
        size, math.ceil(capacity_factor * k * size / e))
    assert capacity == want_capacity
    want = np_moe_outputs(x, indices, top_gates, weights, want_capacity, size)
    np.testing.assert_allclose(y, want, rtol=1e-10, atol=1e-12)


def test_overflow_tokens_are_dropped_in_token_order():
    # Every token prefers expert 0 (k=1); capacity = ceil(1.0 * 1 * 6 / 2) = 3, so tokens
    # 0-2 get expert 0's output and tokens 3-5 get nothing.
    x = np.abs(np.random.default_rng(0).normal(size=(6, 3))) + 0.1
    weights = _random_weights(np.random.default_rng(1), 3, 2, 4, 3)
    w_gate = np.array([[5.0, -5.0]] * 3)
    y, indices, top_gates, capacity = _run_layer(x, weights, 1, 1.0, None, w_gate)
    assert capacity == 3 and (indices == 0).all()
    np.testing.assert_allclose(top_gates, 1.0)
    w1, b1, w2, b2 = weights
    expert0 = np.maximum(x @ w1[0] + b1[0], 0) @ w2[0] + b2[0]
    np.testing.assert_allclose(y[:3], expert0[:3], rtol=1e-10)
    np.testing.assert_array_equal(y[3:], 0.0)


def test_second_choices_queue_behind_every_first_choice():
    # E=2, k=2, capacity_factor 0.5 -> 2 places per expert for 4 tokens. Tokens 0, 1 pick
    # expert 0 first, tokens 2, 3 expert 1 first: first choices fill both experts, so
    # every second choice is dropped and each token gets only its first expert, weighted
    # by its (unrenormalized) first gate.
    x = np.array([[1.0, 0.0], [1.0, 0.1], [0.0, 1.0], [0.1, 1.0]])
    weights = _random_weights(np.random.default_rng(2), 2, 2, 3, 2)
    w_gate = np.array([[2.0, 0.0], [0.0, 2.0]])
    y, indices, top_gates, capacity = _run_layer(x, weights, 2, 0.5, None, w_gate)
    assert capacity == 2
    np.testing.assert_array_equal(indices[:, 0], [0, 0, 1, 1])
    w1, b1, w2, b2 = weights
    for t in range(4):
        e = indices[t, 0]
        want = top_gates[t, 0] * (np.maximum(x[t] @ w1[e] + b1[e], 0) @ w2[e] + b2[e])
        np.testing.assert_allclose(y[t], want, rtol=1e-10)


def test_bad_arguments_name_themselves():
    with pytest.raises(ValueError, match="k must be at most num_experts"):
        moe.MixtureOfExperts(2, 4, k=3)
    with pytest.raises(ValueError, match="capacity_factor must be positive"):
        moe.MixtureOfExperts(2, 4, capacity_factor=0)
    with pytest.raises(ValueError, match=r"multiple of group_size. Received: group_size=4"):
        moe.mixture_of_experts(tf.zeros([6, 3]), 2, 4, group_size=4)


# -- gradients -------------------------------------------------------------------------------

def _finite_difference_check(loss_fn, values, eps=1e-6):
    """Compares tf.gradients of loss_fn(*placeholders) with central differences."""
    holders = [tf.placeholder(tf.float64, v.shape) for v in values]
    loss = loss_fn(*holders)
    grads = tf.gradients(loss, holders)
    with tf.Session() as sess:
        feed = dict(zip(holders, values))
        got = sess.run(grads, feed)
        for i, value in enumerate(values):
            assert got[i] is not None and np.abs(got[i]).sum() > 0, f"no gradient to #{i}"
            numeric = np.zeros_like(value)
            for idx in np.ndindex(value.shape):
                plus, minus = value.copy(), value.copy()
                plus[idx] += eps
                minus[idx] -= eps
                lp = sess.run(loss, {**feed, holders[i]: plus})
                lm = sess.run(loss, {**feed, holders[i]: minus})
                numeric[idx] = (lp - lm) / (2 * eps)
            np.testing.assert_allclose(got[i], numeric, rtol=1e-5, atol=1e-7)


def test_load_loss_gradient_reaches_both_gating_matrices():
    rng = np.random.default_rng(5)
    x, noise = rng.normal(size=(8, 3)), rng.normal(size=(8, 4))

    def loss(w_gate, w_noise):
        g = moe.noisy_top_k_gating(tf.constant(x), w_gate, w_noise, k=2, noise=noise)
        return (moe.cv_squared(tf.reduce_sum(g.gates, 0)) + moe.cv_squared(g.load)
                + tf.reduce_sum(g.gates * np.arange(4.0)))

    _finite_difference_check(loss, [rng.normal(size=(3, 4)), rng.normal(size=(3, 4))])


def test_layer_gradient_reaches_gate_and_expert_weights():
    rng = np.random.default_rng(6)
    x = rng.normal(size=(6, 3))
    target = rng.normal(size=(6, 3))

    def loss(w_gate, w1, w2):
        layer = moe.MixtureOfExperts(3, 4, k=2, noisy_gating=False, dtype=tf.float64)
        layer.build(tf.TensorShape([None, 3]))
        layer.w_gate, layer.expert_kernel_1, layer.expert_kernel_2 = w_gate, w1, w2
        layer.expert_bias_1 = tf.constant(np.full((3, 4), 0.1))
        layer.expert_bias_2 = tf.constant(np.full((3, 3), -0.1))
        y = layer.call(tf.constant(x), training=False)
        return tf.reduce_sum((y - target) ** 2) + layer.aux_loss

    _finite_difference_check(loss, [rng.normal(size=(3, 3)), rng.normal(size=(3, 3, 4)),
                                    rng.normal(size=(3, 4, 3))])
