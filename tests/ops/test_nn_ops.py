"""tf.nn beyond the registry cases: dropout statistics and seeds, fused batch norm in
training and inference (values, gradients, second derivatives), LRN gradients,
partitioned embedding lookups, in_top_k ties, candidate samplers, nce_loss and
sampled_softmax_loss against NumPy, and TF's error messages.

Kernels TF defines for float32 only (FusedBatchNormV3, LRN) are differentiated in
float32 and compared with central differences of a float64 NumPy expectation.
"""

import numpy as np
import pytest

import tensorflux as tf
from tests.ops.harness import numeric_gradient
from tests.ops.cases_nn import (np_batch_norm_infer, np_batch_norm_train,
                                np_batch_norm_train_backward, np_embedding, np_lrn,
                                np_lrn_backward)

FLT_MAX = float(np.finfo(np.float32).max)


def _run(fetches, feeds=None):
    with tf.Session() as sess:
        return sess.run(fetches, feeds)


def _numeric_grad(objective, arrays, i, eps=1e-6):
    return numeric_gradient(objective, [np.array(a, np.float64) for a in arrays], i, eps)


def check_gradients(build, objective, arrays, wrt, tol=2e-3):
    """tf.gradients of the scalar build(*placeholders) against central differences of the
    float64 NumPy `objective`, for the inputs listed in `wrt`."""
    with tf.Graph().as_default():
        phs = [tf.placeholder(tf.as_dtype(a.dtype), a.shape) for a in arrays]
        grads = tf.gradients(build(*phs), [phs[i] for i in wrt])
        # embedding lookups give IndexedSlices, as TF's: compare them densified
        grads = [tf.convert_to_tensor(g) if isinstance(g, tf.IndexedSlices) else g
                 for g in grads]
        got = _run(grads, dict(zip(phs, arrays)))
    for i, g in zip(wrt, got):
        np.testing.assert_allclose(g, _numeric_grad(objective, arrays, i), rtol=tol, atol=tol,
                                   err_msg=f"gradient of input {i}")


# -- dropout -----------------------------------------------------------------------------------
def test_dropout_keeps_a_fraction_and_scales_by_one_over_keep_prob():
    x = tf.ones([200000])
    a, b = tf.nn.dropout(x, keep_prob=0.7), tf.nn.dropout(x, rate=0.3)
    va, vb = _run([a, b])
    for v in (va, vb):
        kept = v != 0
        assert abs(kept.mean() - 0.7) < 0.005
        np.testing.assert_allclose(v[kept], 1 / 0.7, rtol=1e-6)
        assert abs(v.mean() - 1.0) < 0.01
    assert a.shape.as_list() == [200000] and a.op.name == "dropout/mul_1"


def test_dropout_rate_can_be_a_tensor():
    rate = tf.placeholder(tf.float32, [])
    v = _run(tf.nn.dropout(tf.ones([50000]), rate=rate), {rate: 0.75})
    assert abs((v != 0).mean() - 0.25) < 0.01
    np.testing.assert_allclose(v[v != 0], 4.0)


def test_dropout_noise_shape_shares_decisions():
    x = tf.ones([400, 6])
    v = _run(tf.nn.dropout(x, rate=0.5, noise_shape=[400, 1]))
    rows = v.sum(1)
    assert set(np.unique(rows)) == {0.0, 12.0}  # whole rows kept (x2) or dropped
    v = _run(tf.nn.dropout(tf.ones([3, 500]), rate=0.5, noise_shape=[1, None]))
    assert (v == v[0]).all()  # columns decided once, for every row
    assert 0.4 < (v[0] != 0).mean() < 0.6


def test_dropout_zero_rate_is_the_input():
    x = tf.ones([3])
    assert tf.nn.dropout(x, rate=0.0) is x
    assert tf.nn.dropout(x, keep_prob=1) is x
    assert tf.nn.dropout(x, rate=tf.constant(0.0)) is x


def test_dropout_seeds():
    def draw(seed=None, graph_seed=None, runs=1):
        with tf.Graph().as_default():
            if graph_seed is not None:
                tf.set_random_seed(graph_seed)
            d = tf.nn.dropout(tf.ones([64]), rate=0.5, seed=seed)
            with tf.Session() as sess:
                return [sess.run(d) for _ in range(runs)]
    np.testing.assert_array_equal(draw(seed=3)[0], draw(seed=3)[0])
    np.testing.assert_array_equal(draw(graph_seed=5)[0], draw(graph_seed=5)[0])
    first, second = draw(seed=3, runs=2)
    assert not np.array_equal(first, second)  # fresh mask each run
    assert not np.array_equal(draw()[0], draw()[0])


def test_dropout_gradient_is_the_mask_times_the_scale():
    x = tf.constant(np.arange(1.0, 41.0, dtype=np.float32))
    y = tf.nn.dropout(x, keep_prob=0.8, seed=1)
    out, grad = _run([y, tf.gradients(tf.reduce_sum(y), x)[0]])
    np.testing.assert_allclose(grad, np.where(out != 0, 1 / 0.8, 0), rtol=1e-6)


def test_dropout_errors():
    x = tf.ones([3])
    for rate in (1, 1.5, -0.1):
        with pytest.raises(ValueError, match=r"rate must be a scalar tensor or a float in the "
                                             r"range \[0, 1\), got"):
            tf.nn.dropout(x, rate=rate)
    with pytest.raises(ValueError, match=r"range \[0, 1\), got 1$"):
        tf.nn.dropout(x, keep_prob=0.0)
    with pytest.raises(ValueError, match="keep_prob must be a floating point number or Tensor"):
        tf.nn.dropout(x, keep_prob="half")
    with pytest.raises(ValueError, match="You must provide a rate to dropout."):
        tf.nn.dropout(x)
    with pytest.raises(ValueError, match="Cannot specify both 'keep_prob' and 'rate'"):
        tf.nn.dropout(x, keep_prob=0.5, rate=0.5)
    with pytest.raises(ValueError, match="x has to be a floating point tensor since it's going "
                                         "to be scaled. Got a tf.int32 tensor instead."):
        tf.nn.dropout(tf.constant([1, 2]), rate=0.5)


# -- fused batch norm ----------------------------------------------------------------------------
def _bn_inputs(shape, channels, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.uniform(-2, 2, shape).astype(np.float32),
            rng.uniform(0.5, 2, channels).astype(np.float32),
            rng.uniform(-1, 1, channels).astype(np.float32))


def test_fused_batch_norm_training_returns_bessel_corrected_variance():
    x = np.array([1, 2, 3, 6], np.float32).reshape(1, 2, 2, 1)  # mean 3, biased var 3.5
    y, mean, var = _run(tf.nn.fused_batch_norm(x, [2.0], [0.5], epsilon=0.0))
    np.testing.assert_allclose(mean, [3.0])
    np.testing.assert_allclose(var, [3.5 * 4 / 3], rtol=1e-6)  # n / (n - 1)
    # y uses the biased variance and TF's minimum epsilon 1.001e-5.
    want = (np.array([1, 2, 3, 6]) - 3) / np.sqrt(3.5 + 1.001e-5) * 2 + 0.5
    np.testing.assert_allclose(y.reshape(-1), want, rtol=1e-5)


@pytest.mark.parametrize("data_format", ["NHWC", "NCHW"])
def test_fused_batch_norm_training_and_inference(data_format):
    nchw = data_format == "NCHW"
    x, scale, offset = _bn_inputs((3, 2, 2, 4) if not nchw else (3, 4, 2, 2), 4)
    y, m, v = _run(tf.nn.fused_batch_norm(x, scale, offset, data_format=data_format))
    for got, want in zip((y, m, v), np_batch_norm_train(x, scale, offset, nchw=nchw)):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    mean, var = np.float32([0.1, -0.2, 0.3, 0.0]), np.float32([1.5, 0.5, 2.0, 1.0])
    outs = _run(tf.nn.fused_batch_norm(x, scale, offset, mean, var, epsilon=0.01,
                                       data_format=data_format, is_training=False))
    wants = np_batch_norm_infer(x, scale, offset, mean, var, eps=0.01, nchw=nchw)
    for got, want in zip(outs, wants):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("data_format,is_training", [("NHWC", True), ("NCHW", True),
                                                     ("NHWC", False)])
def test_fused_batch_norm_gradients(data_format, is_training):
    nchw = data_format == "NCHW"
    x, scale, offset = _bn_inputs((2, 3, 2, 2) if nchw else (2, 2, 2, 3), 3, seed=1)
    mean, var = np.float32([0.2, -0.1, 0.4]), np.float32([0.8, 1.3, 2.0])
    w = np.random.default_rng(2).uniform(0.5, 1.5, x.shape)

    def build(x, scale, offset):
        stats = {} if is_training else dict(mean=mean, variance=var)
        y = tf.nn.fused_batch_norm(x, scale, offset, data_format=data_format,
                                   is_training=is_training, **stats)[0]
        return tf.reduce_sum(y * w.astype(np.float32))

    def objective(x, scale, offset):
        if is_training:
            y = np_batch_norm_train(x, scale, offset, nchw=nchw)[0]
        else:
            y = np_batch_norm_infer(x, scale, offset, mean.astype(np.float64),
                                    var.astype(np.float64), nchw=nchw)[0]
        return float(np.sum(w * y))

    check_gradients(build, objective, [x, scale, offset], [0, 1, 2])


def test_fused_batch_norm_second_derivatives():
    x, scale, _ = _bn_inputs((2, 2, 1, 3), 3, seed=3)
    dy = np.random.default_rng(4).uniform(-1, 1, x.shape).astype(np.float32)
    w = np.random.default_rng(5).uniform(0.5, 1.5, x.shape)

    def build(dy, x, scale):
        y = tf.nn.fused_batch_norm(x, scale, tf.zeros([3]))[0]
        dx = tf.gradients(y, x, grad_ys=dy)[0]
        return tf.reduce_sum(dx * w.astype(np.float32))

    def objective(dy, x, scale):
        return float(np.sum(w * np_batch_norm_train_backward(dy, x, scale)[0]))

    check_gradients(build, objective, [dy, x, scale], [0, 1, 2], tol=5e-3)


def test_fused_batch_norm_errors_and_names():
    x = tf.placeholder(tf.float32, [2, 2, 2, 3])
    y, _, _ = tf.nn.fused_batch_norm(x, tf.ones([3]), tf.zeros([3]), name="bn")
    assert y.op.type == "FusedBatchNormV3" and y.name == "bn:0"
    assert y.op.get_attr("epsilon") == pytest.approx(0.001)
    with pytest.raises(ValueError, match="Both 'mean' and 'variance' must be None if "
                                         "is_training is True."):
        tf.nn.fused_batch_norm(x, tf.ones([3]), tf.zeros([3]), mean=tf.zeros([3]))
    with pytest.raises(ValueError, match="must be a 1D tensor when is_training is False"):
        tf.nn.fused_batch_norm(x, tf.ones([3]), tf.zeros([3]), is_training=False)
    with pytest.raises(ValueError, match="Shape must be rank 4 but is rank 3"):
        tf.nn.fused_batch_norm(tf.ones([2, 2, 3]), tf.ones([3]), tf.zeros([3]))
    with pytest.raises(ValueError, match="Dimensions? .*must be equal"):
        tf.nn.fused_batch_norm(x, tf.ones([4]), tf.zeros([4]))
    with pytest.raises(TypeError, match="Value passed to parameter 'x' has DataType float64 "
                                        "not in list of allowed values: float16, bfloat16, "
                                        "float32"):
        tf.nn.fused_batch_norm(tf.ones([1, 1, 1, 3], tf.float64), tf.ones([3]), tf.zeros([3]))


def test_moments_of_float16_are_computed_in_float32():
    x = np.full([4096], 60000.0, np.float16)  # the sum overflows float16
    mean, var = _run(tf.nn.moments(tf.constant(x), [0]))
    assert mean.dtype == np.float16 and mean == np.float16(60000.0) and var == 0


# -- local response normalization ------------------------------------------------------------
def test_lrn_gradient_matches_finite_differences():
    x = np.random.default_rng(6).uniform(-2, 2, (1, 2, 2, 6)).astype(np.float32)
    w = np.random.default_rng(7).uniform(0.5, 1.5, x.shape)
    args = dict(depth_radius=2, bias=1.5, alpha=0.3, beta=0.75)
    check_gradients(lambda x: tf.reduce_sum(tf.nn.lrn(x, **args) * w.astype(np.float32)),
                    lambda x: float(np.sum(w * np_lrn(x, r=2, bias=1.5, alpha=0.3, beta=0.75))),
                    [x], [0])
    g = np.random.default_rng(8).uniform(-1, 1, x.shape).astype(np.float32)
    xt = tf.constant(x)
    dx = _run(tf.gradients(tf.nn.lrn(xt, **args), xt, grad_ys=g)[0])
    np.testing.assert_allclose(dx, np_lrn_backward(g, x), rtol=1e-4, atol=1e-5)
    with pytest.raises(LookupError, match="No gradient defined for operation"):
        tf.gradients(tf.gradients(tf.nn.lrn(xt), xt)[0], xt)


# -- embedding_lookup --------------------------------------------------------------------------
@pytest.mark.parametrize("strategy", ["mod", "div"])
def test_partitioned_embedding_lookup_values_and_gradients(strategy):
    rng = np.random.default_rng(9)
    parts = [rng.uniform(-1, 1, (n, 2, 2)) for n in (4, 3, 3)]  # 10 ids, [2, 2] embeddings
    ids = np.array([[0, 9, 4], [4, 5, 1]], np.int64)
    phs = [tf.constant(p) for p in parts]
    out = tf.nn.embedding_lookup(phs, ids, partition_strategy=strategy)
    assert out.shape.as_list() == [2, 3, 2, 2]
    up = rng.uniform(-1, 1, (2, 3, 2, 2))
    grads = tf.gradients(out, phs, grad_ys=up)
    assert all(isinstance(g, tf.IndexedSlices) for g in grads)  # as TF's: compare densified
    got, got_grads = _run([out, [tf.convert_to_tensor(g) for g in grads]])
    np.testing.assert_allclose(got, np_embedding(parts, ids, strategy))
    # Each table row receives the sum of the upstream gradients of the ids that read it.
    table_grad = np.zeros((10, 2, 2))
    np.add.at(table_grad, ids.reshape(-1), up.reshape(-1, 2, 2))
    if strategy == "mod":
        want = [table_grad[p::3] for p in range(3)]
    else:
        want = [table_grad[:4], table_grad[4:7], table_grad[7:]]
    for g, w in zip(got_grads, want):
        np.testing.assert_allclose(g, w)


def test_embedding_lookup_max_norm_clips_each_embedding():
    params = np.array([[3.0, 4.0], [0.3, 0.4], [0.0, 0.0]], np.float32)
    got = _run(tf.nn.embedding_lookup(params, [0, 1, 2, 0], max_norm=1.0))
    np.testing.assert_allclose(got, [[0.6, 0.8], [0.3, 0.4], [0, 0], [0.6, 0.8]], rtol=1e-6)
    got = _run(tf.nn.embedding_lookup([params[:2], params[2:]], [[0], [1], [2]],
                                      partition_strategy="div", max_norm=2.5))
    np.testing.assert_allclose(got, [[[1.5, 2.0]], [[0.3, 0.4]], [[0, 0]]], rtol=1e-6)


def test_embedding_lookup_of_variables_and_errors():
    v = [tf.Variable(np.arange(6.0).reshape(3, 2) + 10 * i) for i in range(2)]
    out = tf.nn.embedding_lookup(v, [5, 0, 1])  # mod: 5 -> partition 1, row 2
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_allclose(sess.run(out), [[14, 15], [0, 1], [10, 11]])
    with pytest.raises(ValueError, match="Need at least one param"):
        tf.nn.embedding_lookup([], [0])
    with pytest.raises(ValueError, match="Unrecognized partition strategy: foo"):
        tf.nn.embedding_lookup(v, [0], partition_strategy="foo")


# -- in_top_k --------------------------------------------------------------------------------
def test_in_top_k_counts_ties_as_in_and_rejects_bad_targets():
    predictions = np.array([[0.1, 0.3, 0.3, 0.2], [0.1, 0.3, 0.3, 0.2],
                            [0.1, 0.3, 0.3, 0.2], [np.nan, 0.3, 0.3, 0.2],
                            [0.1, 0.2, np.inf, 0.2]], np.float32)
    targets = np.array([2, 3, 4, 0, 2], np.int64)
    got = _run(tf.nn.in_top_k(predictions, targets, 1))
    # Row 0: class 2 ties the max. Row 1: two classes beat 0.2. Row 2: out of range.
    # Rows 3 and 4: a non-finite score of the target is never in the top k.
    np.testing.assert_array_equal(got, [True, False, False, False, False])
    got = _run(tf.nn.in_top_k(predictions, targets, 3))
    np.testing.assert_array_equal(got, [True, True, False, False, False])
    assert tf.nn.in_top_k(predictions, targets, 1).dtype == tf.bool
    with pytest.raises(ValueError, match="Shape must be rank 2 but is rank 1"):
        tf.nn.in_top_k([0.1, 0.2], [0], 1)


# -- candidate samplers ------------------------------------------------------------------------
def _log_uniform_p(k, range_max):
    return np.log((k + 2.0) / (k + 1.0)) / np.log(range_max + 1.0)


def _np_unique_log_uniform(rng, num_sampled, range_max):
    """TF's RangeSampler: draw until num_sampled distinct classes; returns (classes, tries)."""
    picked, tries = [], 0
    while len(picked) < num_sampled:
        tries += 1
        value = (int(np.exp(rng.random() * np.log(range_max + 1))) - 1) % range_max
        if value not in picked:
            picked.append(value)
    return picked, tries


def test_log_uniform_sampler_draws_the_zipfian_distribution():
    range_max, n = 30, 60000
    labels = tf.constant([[0], [7]], tf.int64)
    s = tf.nn.log_uniform_candidate_sampler(labels, 1, n, False, range_max, seed=1)
    sampled, true_ec, sampled_ec = _run(s)
    assert sampled.dtype == np.int64 and sampled.min() >= 0 and sampled.max() < range_max
    p = _log_uniform_p(np.arange(range_max), range_max)
    freq = np.bincount(sampled, minlength=range_max) / n
    np.testing.assert_allclose(freq, p, atol=4 * np.sqrt(p * (1 - p) / n).max())
    # Without unique, expected counts are p * num_sampled.
    np.testing.assert_allclose(sampled_ec, p[sampled] * n, rtol=1e-5)
    np.testing.assert_allclose(true_ec, p[[[0], [7]]] * n, rtol=1e-5)


def _tries_from_counts(expected, p):
    # expected = 1 - (1 - p) ** tries
    return np.log1p(-expected.astype(np.float64)) / np.log1p(-p)


def test_unique_log_uniform_sampler_matches_tfs_rejection_sampling():
    range_max, num_sampled, runs = 12, 5, 3000
    labels = tf.constant([[3, 0]], tf.int64)
    s = tf.nn.log_uniform_candidate_sampler(labels, 2, num_sampled, True, range_max, seed=2)
    p = _log_uniform_p(np.arange(range_max), range_max)
    inclusion, tries = np.zeros(range_max), []
    with tf.Session() as sess:
        for _ in range(runs):
            sampled, true_ec, sampled_ec = sess.run(s)
            assert len(set(sampled.tolist())) == num_sampled
            inclusion[sampled] += 1
            # One number of tries explains every expected count of the run; when no draw
            # was rejected TF's shortcut gives p * num_sampled instead.
            if np.allclose(sampled_ec, p[sampled] * num_sampled, rtol=1e-5):
                np.testing.assert_allclose(true_ec[0], p[[3, 0]] * num_sampled, rtol=1e-5)
                tries.append(num_sampled)
                continue
            t = _tries_from_counts(sampled_ec, p[sampled])
            t_true = _tries_from_counts(true_ec[0], p[[3, 0]])
            np.testing.assert_allclose(np.concatenate([t, t_true]), np.round(t[0]), rtol=2e-3)
            tries.append(t[0])
    rng = np.random.default_rng(0)
    ref_inclusion, ref_tries = np.zeros(range_max), []
    for _ in range(20000):
        picked, t = _np_unique_log_uniform(rng, num_sampled, range_max)
        ref_inclusion[picked] += 1
        ref_tries.append(t)
    np.testing.assert_allclose(inclusion / runs, ref_inclusion / 20000, atol=0.03)
    assert min(tries) >= num_sampled
    assert abs(np.mean(np.array(tries) == num_sampled)
               - np.mean(np.array(ref_tries) == num_sampled)) < 0.03
    assert abs(np.mean(tries) - np.mean(ref_tries)) < 0.1 * np.mean(ref_tries)
    assert abs(np.std(tries) - np.std(ref_tries)) < 0.15 * np.std(ref_tries)


def test_uniform_sampler_and_seeds():
    labels = tf.constant([[1]], tf.int64)
    s = tf.nn.uniform_candidate_sampler(labels, 1, 8, True, 8, seed=4)
    sampled, true_ec, sampled_ec = _run(s)
    assert sorted(sampled.tolist()) == list(range(8))  # a permutation
    t = _tries_from_counts(sampled_ec, np.full(8, 1 / 8))
    np.testing.assert_allclose(t, t[0], rtol=1e-3)
    np.testing.assert_allclose(_tries_from_counts(true_ec, np.float64(1 / 8)), t[0], rtol=1e-3)

    def draw(runs=1):
        with tf.Graph().as_default():
            out = tf.nn.uniform_candidate_sampler(tf.constant([[1]], tf.int64), 1, 20, False,
                                                  1000, seed=7)
            with tf.Session() as sess:
                return [sess.run(out.sampled_candidates) for _ in range(runs)]
    np.testing.assert_array_equal(draw()[0], draw()[0])
    a, b = draw(2)
    assert not np.array_equal(a, b)


def test_sampler_errors():
    labels = tf.constant([[1, 2]], tf.int64)
    with pytest.raises(ValueError, match="Sampler's range is too small."):
        tf.nn.log_uniform_candidate_sampler(labels, 2, 6, True, 5)
    with pytest.raises(ValueError, match="true_classes must have num_true columns, expected: "
                                         "1 was: 2"):
        tf.nn.uniform_candidate_sampler(labels, 1, 2, False, 5)


def test_compute_accidental_hits_marks_the_last_position_of_a_class():
    true_classes = np.array([[1, 2], [3, 5], [2, 2]], np.int64)
    sampled = np.array([2, 7, 3, 2, 9], np.int64)
    indices, ids, weights = _run(tf.nn.compute_accidental_hits(true_classes, sampled, 2))
    np.testing.assert_array_equal(indices, [0, 1, 2, 2])
    np.testing.assert_array_equal(ids, [3, 2, 3, 3])
    np.testing.assert_array_equal(weights, np.full(4, -FLT_MAX, np.float32))
    assert indices.dtype == np.int32 and ids.dtype == np.int64


# -- nce_loss and sampled_softmax_loss ---------------------------------------------------------
def _np_sampled_logits(table, biases, labels, inputs, sampled, true_ec, sampled_ec,
                       remove_accidental_hits):
    num_true = labels.shape[1]
    true_logits = (inputs[:, None, :] * table[labels]).sum(-1) + biases[labels]
    sampled_logits = inputs @ table[sampled].T + biases[sampled]
    if remove_accidental_hits:
        last = {int(c): j for j, c in enumerate(sampled)}
        for i, row in enumerate(labels):
            hit = {last[int(c)] for c in row if int(c) in last}
            for j in hit:
                sampled_logits[i, j] += -FLT_MAX
    true_logits = true_logits - np.log(true_ec.astype(np.float64))
    sampled_logits = sampled_logits - np.log(sampled_ec.astype(np.float64))
    logits = np.concatenate([true_logits, sampled_logits], 1)
    targets = np.concatenate([np.full(true_logits.shape, 1.0 / num_true),
                              np.zeros(sampled_logits.shape)], 1)
    return logits, targets


def _np_nce(*args):
    logits, z = _np_sampled_logits(*args)
    return (np.maximum(logits, 0) - logits * z + np.log1p(np.exp(-np.abs(logits)))).sum(1)


def _np_sampled_softmax(*args):
    logits, z = _np_sampled_logits(*args)
    shifted = logits - logits.max(1, keepdims=True)
    log_p = shifted - np.log(np.exp(shifted).sum(1, keepdims=True))
    return -(z * log_p).sum(1)


def _sampled_problem(seed=10, batch=3, num_true=2, dim=4, num_classes=9):
    rng = np.random.default_rng(seed)
    table = rng.uniform(-1, 1, (num_classes, dim))
    biases = rng.uniform(-0.5, 0.5, num_classes)
    labels = np.array([[1, 4], [0, 8], [4, 4]], np.int64)[:batch, :num_true]
    inputs = rng.uniform(-1, 1, (batch, dim))
    sampled = np.array([4, 2, 7, 0, 2], np.int64)  # 2 twice: only its last position is hit
    true_ec = rng.uniform(0.2, 0.9, (batch, num_true)).astype(np.float32)
    sampled_ec = rng.uniform(0.2, 0.9, 5).astype(np.float32)
    return table, biases, labels, inputs, sampled, true_ec, sampled_ec


@pytest.mark.parametrize("loss,np_loss,remove", [
    (tf.nn.nce_loss, _np_nce, False), (tf.nn.nce_loss, _np_nce, True),
    (tf.nn.sampled_softmax_loss, _np_sampled_softmax, True)])
@pytest.mark.parametrize("strategy", ["mod", "div"])
def test_sampled_losses_match_numpy_given_the_samples(loss, np_loss, remove, strategy):
    table, biases, labels, inputs, sampled, true_ec, sampled_ec = _sampled_problem()
    # Three partitions of the 9-row table, split as the strategy splits it.
    if strategy == "mod":
        weights = [table[p::3] for p in range(3)]
    else:
        weights = [table[0:3], table[3:6], table[6:9]]
    got = _run(loss(weights, biases, labels, inputs, num_sampled=5, num_classes=9, num_true=2,
                    sampled_values=(sampled, true_ec, sampled_ec),
                    remove_accidental_hits=remove, partition_strategy=strategy))
    want = np_loss(table, biases, labels, inputs, sampled, true_ec, sampled_ec, remove)
    np.testing.assert_allclose(got, want, rtol=1e-10)


@pytest.mark.parametrize("loss,np_loss", [(tf.nn.nce_loss, _np_nce),
                                          (tf.nn.sampled_softmax_loss, _np_sampled_softmax)])
def test_sampled_loss_gradients(loss, np_loss):
    table, biases, labels, inputs, sampled, true_ec, sampled_ec = _sampled_problem(batch=2)
    w = np.array([0.7, 1.3])

    def build(table, biases, inputs):
        return tf.reduce_sum(w * loss(table, biases, labels, inputs, 5, 9, num_true=2,
                                      sampled_values=(sampled, true_ec, sampled_ec)))

    def objective(table, biases, inputs):
        remove = loss is tf.nn.sampled_softmax_loss
        return float(np.sum(w * np_loss(table, biases, labels, inputs, sampled, true_ec,
                                         sampled_ec, remove)))

    check_gradients(build, objective, [table, biases, inputs], [0, 1, 2], tol=1e-6)


def test_sampled_softmax_with_its_default_sampler():
    table, biases, labels, inputs, *_ = _sampled_problem()
    labels = labels[:, :1]
    tf.set_random_seed(11)
    samples = tf.nn.log_uniform_candidate_sampler(labels, 1, 5, True, 9)
    loss = tf.nn.sampled_softmax_loss(table, biases, labels, inputs, 5, 9,
                                      sampled_values=samples)
    default = tf.nn.sampled_softmax_loss(table, biases, labels, inputs, 5, 9, seed=3)
    with tf.Session() as sess:
        for _ in range(3):
            (sampled, true_ec, sampled_ec), got = sess.run([samples, loss])
            want = _np_sampled_softmax(table, biases, labels, inputs, sampled, true_ec,
                                       sampled_ec, True)
            np.testing.assert_allclose(got, want, rtol=1e-10)
        first, second = sess.run(default), sess.run(default)
    assert first.shape == (3,) and np.all(first > 0) and not np.array_equal(first, second)


# -- activations, losses: names and errors ----------------------------------------------------
def test_activation_names_and_dtypes():
    x = tf.placeholder(tf.float32, [2, 3])
    assert tf.nn.relu6(x, name="r6").op.type == "Relu6"
    assert tf.nn.relu6(x, name="r6b").name == "r6b:0"
    c = tf.nn.crelu(x)
    assert c.shape.as_list() == [2, 6] and c.op.type == "Relu" and c.name == "CRelu:0"
    leaky = tf.nn.leaky_relu(tf.constant([-2, 3]))
    assert leaky.dtype == tf.float32 and leaky.op.get_attr("alpha") == pytest.approx(0.2)
    np.testing.assert_allclose(_run(leaky), [-0.4, 3.0])
    assert tf.nn.l2_loss(x).shape.as_list() == []
    z = tf.nn.zero_fraction(tf.constant([0.0, 1.0, 0.0, 2.0]))
    assert z.name == "zero_fraction/fraction:0" and z.dtype == tf.float32
    assert _run(z) == 0.5
    with np.errstate(invalid="ignore"):
        assert np.isnan(_run(tf.nn.zero_fraction(tf.zeros([0]))))
    with pytest.raises(TypeError, match="Value passed to parameter 'features' has DataType "
                                        "int32 not in list of allowed values"):
        tf.nn.elu(tf.constant([1, 2]))


def test_softsign_grad_has_no_gradient_as_in_tf():
    x = tf.constant([1.0, -2.0])
    g = tf.gradients(tf.nn.softsign(x), x)[0]
    with pytest.raises(LookupError, match=r"No gradient defined for operation .* \(op type: "
                                          r"SoftsignGrad\)"):
        tf.gradients(g, x)


def test_logistic_loss_errors():
    with pytest.raises(ValueError, match=r"logits and labels must have the same shape "
                                         r"\(\(2, 3\) vs \(3, 2\)\)"):
        tf.nn.sigmoid_cross_entropy_with_logits(labels=tf.ones([3, 2]), logits=tf.ones([2, 3]))
    with pytest.raises(ValueError, match=r"Only call `sigmoid_cross_entropy_with_logits` with "
                                         r"named arguments \(labels=..., logits=..., ...\)"):
        tf.nn.sigmoid_cross_entropy_with_logits(tf.ones([2]), tf.ones([2]))
    with pytest.raises(ValueError, match="Both labels and logits must be provided."):
        tf.nn.sigmoid_cross_entropy_with_logits(logits=tf.ones([2]))
    with pytest.raises(ValueError, match="logits and labels must have the same shape"):
        tf.nn.weighted_cross_entropy_with_logits(tf.ones([2]), tf.ones([3]), 2.0)
    # TF1's deprecated `targets` spelling still works.
    got = _run(tf.nn.weighted_cross_entropy_with_logits(targets=[1.0], logits=[0.0],
                                                        pos_weight=3.0))
    np.testing.assert_allclose(got, [3 * np.log(2)], rtol=1e-6)
    out = tf.nn.sigmoid_cross_entropy_with_logits(labels=[1.0], logits=[0.0], name="xent")
    assert out.name == "xent:0"


def test_sparse_xent_rejects_labels_out_of_range_as_tf_cpu():
    logits = tf.placeholder(tf.float32, [None, 10])
    labels = tf.placeholder(tf.int32, [None])
    bias = tf.Variable(tf.zeros([10]))
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=labels, logits=logits + bias))
    step = tf.train.GradientDescentOptimizer(1.0).minimize(loss)
    zeros = np.zeros((3, 10), np.float32)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(step, {logits: zeros, labels: [1, 2, 3]})
        before = sess.run(bias)
        traces = sess.compile_stats.traces
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            sess.run(step, {logits: zeros, labels: [1, 2, 10]})
        assert info.value.message.startswith(
            "Received a label value of 10 which is outside the valid range of [0, 10).  "
            "Label values: 1 2 10\n\t [[{{node ")
        after_failure = sess.run(bias)
        sess.run(step, {logits: zeros, labels: [9, 0, 5]})
        assert sess.compile_stats.traces == traces  # failing and passing runs: one executable
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"^Received a label value of -1 which is outside the valid "
                                 r"range of \[0, 10\)\.  Label values: -1 2 10\n"):
            sess.run(loss, {logits: zeros, labels: [-1, 2, 10]})  # the negative one is named
    np.testing.assert_array_equal(after_failure, before)  # the failed step changed nothing


def test_sparse_xent_of_constant_out_of_range_labels_fails_when_run():
    loss = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tf.constant([0, 5]),
                                                          logits=tf.zeros([2, 3]))
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"^Received a label value of 5 which is outside the valid range "
                             r"of \[0, 3\)\.  Label values: 0 5\n"):
        _run(loss)
