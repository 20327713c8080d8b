"""TPUEstimator (tf.contrib.tpu): 4 shards and 1 shard, iterations_per_loop 50 and 1,
give the same training as NumPy's softmax regression with SGD; a loop of 50 steps is
one Session.run; evaluate / predict / export; TF 1.15's errors for bad input.

The sharded runs need forced CPU devices, so they run tpu_programs.py in a subprocess
with XLA_FLAGS=--xla_force_host_platform_device_count=4."""

import json
import os
import pathlib
import subprocess
import sys
import tempfile

import numpy as np
import pytest

import tensorflux as tf

PROGRAMS = pathlib.Path(__file__).with_name("tpu_programs.py")
sys.path.insert(0, str(PROGRAMS.parent))
import tpu_programs as P

TOLERANCE = 1e-5


def numpy_softmax_regression():
    """The same training in NumPy: mean cross-entropy, SGD, one batch per step."""
    x, labels = P.data(P.STEPS * P.BATCH)
    w, b = np.zeros((P.D, P.K)), np.zeros(P.K)
    losses = []
    for step in range(P.STEPS):
        xb = x[step * P.BATCH:(step + 1) * P.BATCH].astype(np.float64)
        yb = labels[step * P.BATCH:(step + 1) * P.BATCH]
        logits = xb @ w + b
        p = np.exp(logits - logits.max(1, keepdims=True))
        p /= p.sum(1, keepdims=True)
        losses.append(-np.mean(np.log(p[np.arange(P.BATCH), yb])))
        grad = (p - np.eye(P.K)[yb]) / P.BATCH
        w -= P.LR * xb.T @ grad
        b -= P.LR * grad.sum(0)
    return np.array(losses), w, b


@pytest.fixture(scope="module")
def runs():
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=4",
               JAX_PLATFORMS="cpu")
    proc = subprocess.run([sys.executable, str(PROGRAMS), "4,1", "50,1"], env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_four_shards_and_one_shard_train_as_numpy(runs):
    losses, w, b = numpy_softmax_regression()
    for key in ("4x50", "1x50", "4x1"):
        out = runs[key]
        assert out["global_step"] == P.STEPS
        steps, host_losses = zip(*out["host_call"])  # host_call: every step's tensors
        assert list(steps) == list(range(P.STEPS))
        np.testing.assert_allclose(host_losses, losses, atol=TOLERANCE, err_msg=key)
        # the losses at loop ends (steps 50, 100, ...) are among them
        np.testing.assert_allclose(np.array(host_losses)[49::50], losses[49::50],
                                   atol=TOLERANCE)
        np.testing.assert_allclose(out["w"], w, atol=TOLERANCE, err_msg=key)
        np.testing.assert_allclose(out["b"], b, atol=TOLERANCE, err_msg=key)
    np.testing.assert_allclose(runs["4x50"]["w"], runs["1x50"]["w"], atol=TOLERANCE)


def test_one_session_run_per_loop(runs):
    # 200 steps: 4 runs of a 50-step loop, against 200 runs with iterations_per_loop=1
    assert runs["4x50"]["runs"] == 4 and runs["1x50"]["runs"] == 4
    assert runs["4x1"]["runs"] == 200 and runs["1x1"]["runs"] == 200
    # checkpoints every 100 steps land on loop boundaries
    assert runs["4x50"]["checkpoints"] == [0, 100, 200]


def test_batch_size_params_follow_tf(runs):
    # model_fn sees the per-shard batch size; input_fn the per-host one (PER_HOST_V1)
    assert runs["4x50"]["batch_sizes"] == {"train": 2, "eval": 2, "infer": 2}
    assert runs["1x50"]["batch_sizes"] == {"train": 8, "eval": 8, "infer": 8}


def test_evaluate_predict_and_export_match_numpy(runs):
    _, w, b = numpy_softmax_regression()
    x, labels = P.data(P.STEPS * P.BATCH)
    logits = x[:64] @ w + b
    p = np.exp(logits - logits.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    accuracy = np.mean(np.argmax(logits, 1) == labels[:64])
    per_batch = [-np.mean(np.log(p[i:i + 8][np.arange(8), labels[i:i + 8]]))
                 for i in range(0, 64, 8)]
    logits16 = x[:16] @ w + b
    p16 = np.exp(logits16 - logits16.max(1, keepdims=True))
    p16 /= p16.sum(1, keepdims=True)
    for key in ("4x50", "1x50"):
        out = runs[key]
        assert out["eval"]["global_step"] == P.STEPS
        assert out["eval"]["accuracy"] == pytest.approx(accuracy)
        assert out["eval"]["loss"] == pytest.approx(np.mean(per_batch), abs=1e-5)
        assert len(out["predict"]) == 16
        np.testing.assert_allclose([r["probabilities"] for r in out["predict"]], p16,
                                   atol=1e-5)
        assert [r["class"] for r in out["predict"]] == np.argmax(p16, 1).tolist()
        np.testing.assert_allclose(out["served"], p16[:2], atol=1e-5)


# -- in this process (one CPU device) ------------------------------------------------------
def _model_fn(features, labels, mode, params):
    w = tf.get_variable("w", [P.D, P.K], initializer=tf.zeros_initializer())
    logits = tf.matmul(features, w)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=labels, logits=logits))
    if mode == tf.estimator.ModeKeys.EVAL:  # a plain EstimatorSpec: not for TPU eval
        return tf.estimator.EstimatorSpec(mode, loss=loss)
    train_op = tf.train.GradientDescentOptimizer(P.LR).minimize(
        loss, global_step=tf.train.get_global_step())
    return tf.contrib.tpu.TPUEstimatorSpec(mode, loss=loss, train_op=train_op)


def _config(num_shards=None, iterations_per_loop=2):
    return tf.contrib.tpu.RunConfig(
        model_dir=tempfile.mkdtemp(),
        tpu_config=tf.contrib.tpu.TPUConfig(iterations_per_loop, num_shards=num_shards))


def test_use_tpu_false_runs_as_a_plain_estimator_with_the_global_batch():
    seen = []

    def model_fn(features, labels, mode, params):
        seen.append((params["batch_size"], params["use_tpu"], "context" in params))
        return _model_fn(features, labels, mode, params)
    est = tf.compat.v1.estimator.tpu.TPUEstimator(
        model_fn, config=_config(num_shards=4), use_tpu=False, train_batch_size=P.BATCH)
    est.train(P.train_input_fn, max_steps=P.STEPS)
    assert seen == [(P.BATCH, False, False)]
    # no bias here: compare against NumPy without one
    x, labels = P.data(P.STEPS * P.BATCH)
    wn = np.zeros((P.D, P.K))
    for step in range(P.STEPS):
        xb, yb = x[step * 8:(step + 1) * 8].astype(np.float64), labels[step * 8:(step + 1) * 8]
        logits = xb @ wn
        p = np.exp(logits - logits.max(1, keepdims=True))
        p /= p.sum(1, keepdims=True)
        wn -= P.LR * xb.T @ ((p - np.eye(P.K)[yb]) / 8)
    np.testing.assert_allclose(est.get_variable_value("w"), wn, atol=TOLERANCE)


def test_max_steps_lands_exactly_with_a_short_last_loop():
    est = tf.contrib.tpu.TPUEstimator(_model_fn, config=_config(iterations_per_loop=7),
                                      train_batch_size=P.BATCH)
    est.train(P.train_input_fn, max_steps=10)
    assert est.get_variable_value("global_step") == 10
    est.train(P.train_input_fn, steps=3)
    assert est.get_variable_value("global_step") == 13


def test_errors_are_tf_1_15s():
    with pytest.raises(ValueError, match=r"\['batch_size', 'context'\] are reserved keys but "
                                         r"existed in params \{'batch_size': 3\}"):
        tf.contrib.tpu.TPUEstimator(_model_fn, config=_config(), params={"batch_size": 3},
                                    train_batch_size=8)
    with pytest.raises(ValueError, match="`config` must be provided with type "
                                         "`tpu_config.RunConfig`"):
        tf.contrib.tpu.TPUEstimator(_model_fn, config=tf.estimator.RunConfig(),
                                    train_batch_size=8)
    with pytest.raises(ValueError, match="`train_batch_size` cannot be `None`"):
        tf.contrib.tpu.TPUEstimator(_model_fn, config=_config())
    with pytest.raises(TypeError, match="train_batch_size must be int"):
        tf.contrib.tpu.TPUEstimator(_model_fn, config=_config(), train_batch_size=8.0)
    with pytest.raises(ValueError, match="TPUConfig iterations_per_loop must be positive, "
                                         "got 0"):
        tf.contrib.tpu.TPUConfig(iterations_per_loop=0)
    with pytest.raises(ValueError, match="Unsupported reduction"):
        tf.contrib.tpu.CrossShardOptimizer(tf.train.GradientDescentOptimizer(0.1),
                                           reduction="none")
    est = tf.contrib.tpu.TPUEstimator(_model_fn, config=_config(num_shards=4),
                                      train_batch_size=6)
    with pytest.raises(ValueError, match="train batch size 6 must be divisible by number "
                                         "of replicas 4"):
        est.train(P.train_input_fn, max_steps=1)
    est = tf.contrib.tpu.TPUEstimator(_model_fn, config=_config(num_shards=64),
                                      train_batch_size=64)
    with pytest.raises(ValueError, match=r"num_replicas should be at most \(1\), got \(64\)"
                                         r".*xla_force_host_platform_device_count=64"):
        est.train(P.train_input_fn, max_steps=1)

    def no_params(features, labels, mode):
        return None
    est = tf.contrib.tpu.TPUEstimator(no_params, config=_config(), train_batch_size=8)
    with pytest.raises(ValueError, match=r"does not include params argument, required by "
                                         r"TPUEstimator to pass batch size as "
                                         r"params\['batch_size'\]"):
        est.train(P.train_input_fn, max_steps=1)
    est = tf.contrib.tpu.TPUEstimator(_model_fn, config=_config(), train_batch_size=8,
                                      eval_batch_size=8)
    est.train(P.train_input_fn, max_steps=2)
    with pytest.raises(RuntimeError, match="estimator_spec used by TPU evaluation must have "
                                           "type`TPUEstimatorSpec`. Got"):
        est.evaluate(P.eval_input_fn, steps=2)
    with pytest.raises(ValueError, match="Evaluate `steps` must be set on TPU"):
        est.evaluate(P.eval_input_fn)
    with pytest.raises(ValueError, match="eval_metrics should have two elements"):
        tf.contrib.tpu.TPUEstimatorSpec("eval", loss=tf.constant(1.0), eval_metrics=(len,))
