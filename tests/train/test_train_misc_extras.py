"""Loss scaling (tf.train.experimental), tf.py_function, the ranking metrics
(average_precision_at_k, sensitivity/specificity) and the TF2-related tf.summary names,
against NumPy formulas and TF's errors."""

import numpy as np
import pytest

import tensorflux as tf


# -- loss scaling ----------------------------------------------------------------------------
def test_fixed_and_dynamic_loss_scale_training():
    w = tf.Variable([1.0, 2.0], name="w")
    x = tf.placeholder(tf.float32, [2])
    loss = tf.reduce_sum(w * x)
    step = tf.train.get_or_create_global_step()
    scale = tf.train.experimental.DynamicLossScale(initial_loss_scale=8.0, increment_period=2,
                                                   multiplier=2.0)
    opt = tf.train.experimental.MixedPrecisionLossScaleOptimizer(
        tf.train.GradientDescentOptimizer(0.1), scale)
    (grad, _), = opt.compute_gradients(loss, var_list=[w])
    train = opt.minimize(loss, global_step=step)
    assert [v.op.name for v in opt.variables()] == ["current_loss_scale", "good_steps"]
    assert scale.get_config() == {"initial_loss_scale": 8.0, "increment_period": 2,
                                  "multiplier": 2.0}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        # The unscaled gradient of sum(w * x) is x.
        np.testing.assert_allclose(sess.run(grad, {x: [3.0, 4.0]}), [3.0, 4.0])
        w_np, s, good, steps = np.array([1.0, 2.0]), 8.0, 0, 0
        for xv in ([1.0, 1.0], [1.0, 1.0], [np.inf, 1.0], [1.0, 1.0]):
            sess.run(train, {x: xv})
            if np.all(np.isfinite(xv)):
                w_np, steps = w_np - 0.1 * np.array(xv), steps + 1
                good += 1
                if good >= 2:
                    s, good = s * 2.0, 0
            else:  # skipped: the scale halves, the update and the step do not happen
                s, good = max(s / 2.0, 1.0), 0
            got = sess.run([w, scale(), scale._num_good_steps, step])
            np.testing.assert_allclose(got[0], w_np, rtol=1e-6)
            assert got[1:] == [s, good, steps]
    fixed = tf.train.experimental.FixedLossScale(128)
    assert fixed.get_config() == {"loss_scale_value": 128.0}
    assert tf.train.experimental.FixedLossScale.from_config({"loss_scale_value": 4}) \
        .get_config() == {"loss_scale_value": 4.0}
    with pytest.raises(ValueError, match="must be at least 1"):
        tf.train.experimental.FixedLossScale(0.5)
    with pytest.raises(ValueError, match="must be a Python int or float"):
        tf.train.experimental.FixedLossScale("4")
    with pytest.raises(ValueError, match='"opt" must be an instance of Optimizer'):
        tf.train.experimental.MixedPrecisionLossScaleOptimizer(object(), 4)


def test_mixed_precision_graph_rewrite_wraps_and_sets_option():
    opt = tf.train.experimental.enable_mixed_precision_graph_rewrite(
        tf.train.AdamOptimizer(), loss_scale=64)
    assert isinstance(opt, tf.train.experimental.MixedPrecisionLossScaleOptimizer)
    assert tf.config.optimizer.get_experimental_options()["auto_mixed_precision"] is True
    with pytest.raises(ValueError, match="must not already be an instance"):
        tf.train.experimental.enable_mixed_precision_graph_rewrite(opt)
    tf.train.experimental.disable_mixed_precision_graph_rewrite()
    assert tf.config.optimizer.get_experimental_options()["auto_mixed_precision"] is False
    w = tf.Variable(2.0)
    train = opt.minimize(w * w)  # fixed scale: gradients always applied
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train)
        np.testing.assert_allclose(sess.run(w), 2.0 - 0.001, rtol=1e-5)  # Adam's first step


# -- py_function -----------------------------------------------------------------------------
def test_py_function_eager_values_outputs_and_gradient():
    x = tf.placeholder(tf.float32, [3])

    def f(a):
        total = tf.reduce_sum(a * a)
        if total.numpy() > 10:  # eager: a Python branch on a value
            return a * 3.0, total
        return tf.sin(a), total

    y, s = tf.py_function(f, [x], [tf.float32, tf.float32])
    assert y.op.type == "EagerPyFunc" and y.shape.ndims is None
    grad = tf.gradients(tf.reduce_sum(y) + s, x)[0]
    doubled = tf.py_function(lambda a: np.asarray(a) * 2, [x], tf.float32)
    unused = tf.py_function(lambda a, b: a * 2.0, [x, tf.constant(1.0)], tf.float32)
    grad_unused = tf.gradients(tf.reduce_sum(unused), tf.get_default_graph()
                               .get_tensor_by_name("Const:0"))[0]
    with tf.Session() as sess:
        big = np.array([1.0, 2.0, 3.0], np.float32)
        out = sess.run([y, s, grad], {x: big})
        np.testing.assert_allclose(out[0], 3 * big)
        np.testing.assert_allclose(out[2], 3 + 2 * big)
        small = np.array([0.1, 0.2, 0.3], np.float32)
        out = sess.run([y, s, grad, doubled], {x: small})
        np.testing.assert_allclose(out[0], np.sin(small), rtol=1e-6)
        np.testing.assert_allclose(out[2], np.cos(small) + 2 * small, rtol=1e-5)
        np.testing.assert_allclose(out[3], 2 * small)
        assert sess.run(grad_unused, {x: small}) == 0.0
        with pytest.raises(tf.errors.InvalidArgumentError, match="returns 2 values, but "
                                                                 "expects to see 1 values"):
            sess.run(tf.py_function(lambda a: (a, a), [x], tf.float32), {x: small})
        with pytest.raises(tf.errors.InvalidArgumentError, match="ValueError: bad"):
            sess.run(tf.py_function(_raise, [x], tf.float32), {x: small})
    with pytest.raises(ValueError, match="Expected func to be callable"):
        tf.py_function(3, [x], tf.float32)


def _raise(a):
    raise ValueError("bad")


# -- metrics -----------------------------------------------------------------------------------
def _average_precision_np(labels, scores, k):
    out = []
    for row_labels, row_scores in zip(labels, scores):
        top = np.argsort(-row_scores, kind="stable")[:k]
        hits, total = 0, 0.0
        for i, p in enumerate(top, 1):
            if p in set(row_labels):
                hits += 1
                total += hits / i
        out.append(total / min(len(row_labels), k))
    return np.array(out)


def test_average_precision_at_k_streams_the_mean():
    rng = np.random.RandomState(0)
    # Two batches of 4 rows; scores without ties (a permutation per row).
    scores = [np.stack([rng.permutation(6) for _ in range(4)]).astype(np.float32) / 6
              for _ in range(2)]
    labels = [rng.randint(0, 6, (4, 2)) for _ in range(2)]
    weights = np.array([1.0, 2.0, 0.0, 1.0])
    pred = tf.placeholder(tf.float32, [4, 6])
    lab = tf.placeholder(tf.int64, [4, 2])
    value, update = tf.metrics.average_precision_at_k(lab, pred, 3)
    w_value, w_update = tf.metrics.average_precision_at_k(lab, pred, 3, weights=weights,
                                                          name="weighted")
    assert tf.metrics.sparse_average_precision_at_k is tf.metrics.average_precision_at_k
    assert value.op.name == "average_precision_at_3/mean"
    assert update.op.name == "average_precision_at_3"
    assert [v.op.name for v in tf.local_variables()][:2] == ["average_precision_at_3/max",
                                                            "average_precision_at_3/total"]
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        for s, l in zip(scores, labels):
            sess.run([update, w_update], {pred: s, lab: l})
        ap = np.concatenate([_average_precision_np(l, s, 3) for s, l in zip(scores, labels)])
        w = np.tile(weights, 2)
        np.testing.assert_allclose(sess.run([value, w_value]),
                                   [ap.mean(), (ap * w).sum() / w.sum()], rtol=1e-6)
    with pytest.raises(ValueError, match="Invalid k=0"):
        tf.metrics.average_precision_at_k(lab, pred, 0)


def _sens_spec_np(labels, scores, n=200):
    eps = 1e-7
    thresholds = [-eps] + [(i + 1) / (n - 1) for i in range(n - 2)] + [1 + eps]
    thresholds = np.array(thresholds, np.float32)[:, None]
    pos = scores[None, :] > thresholds
    tp = np.sum(pos & labels, 1).astype(np.float32)
    fp = np.sum(pos & ~labels, 1).astype(np.float32)
    tn = np.sum(~pos & ~labels, 1).astype(np.float32)
    fn = np.sum(~pos & labels, 1).astype(np.float32)
    return tp, fp, tn, fn


def test_sensitivity_at_specificity_and_specificity_at_sensitivity():
    rng = np.random.RandomState(1)
    labels = rng.rand(50) > 0.5
    scores = np.clip(labels * 0.3 + rng.rand(50) * 0.7, 0, 1).astype(np.float32)
    sens, sens_update = tf.metrics.sensitivity_at_specificity(labels, scores, 0.8)
    spec, spec_update = tf.metrics.specificity_at_sensitivity(labels, scores, 0.6,
                                                              num_thresholds=50)
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        sess.run([sens_update, spec_update])
        got_sens, got_spec = sess.run([sens, spec])
    eps = 1e-7
    tp, fp, tn, fn = _sens_spec_np(labels, scores)
    i = np.argmin(np.abs(tn / (tn + fp + eps) - 0.8))  # the first closest threshold
    np.testing.assert_allclose(got_sens, tp[i] / (tp[i] + fn[i] + eps), rtol=1e-5)
    tp, fp, tn, fn = _sens_spec_np(labels, scores, 50)
    d = np.abs(tp / (tp + fn + eps) - 0.6)
    i = np.nonzero(d == d.min())[0][-1]  # the last closest threshold
    np.testing.assert_allclose(got_spec, tn[i] / (tn[i] + fp[i] + eps), rtol=1e-5)
    with pytest.raises(ValueError, match="`specificity` must be in the range \\[0, 1\\]"):
        tf.metrics.sensitivity_at_specificity(labels, scores, 1.5)
    with pytest.raises(ValueError, match="`sensitivity` must be in the range \\[0, 1\\]"):
        tf.metrics.specificity_at_sensitivity(labels, scores, -0.1)


# -- tf.summary ----------------------------------------------------------------------------
def test_summary_v2_names_in_a_tf1_graph():
    summary = tf.summary.tensor_summary("t", tf.constant(1.0))
    assert tf.summary.all_v2_summary_ops() == []
    with pytest.raises(ValueError, match="Can't get_summary_description on TensorSummaryV2"):
        tf.summary.get_summary_description(summary.op.node_def)

    class NodeDef:  # an old TensorSummary node, as TF1.0 graphs hold them
        op = "TensorSummary"
        attr = {"description": b'{"typeHint": "scalar"}'}

    assert tf.summary.get_summary_description(NodeDef()).type_hint == "scalar"
    with pytest.raises(RuntimeError, match="No default tf.contrib.summary.SummaryWriter"):
        tf.summary.initialize()
