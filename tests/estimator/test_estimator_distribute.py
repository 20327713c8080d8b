"""RunConfig(train_distribute=MirroredStrategy(2), eval_distribute=...): each replica
gets its own input_fn batch, as TF 1.15's Estimator; 2 forced CPU devices give one
device's result on the joined batch and NumPy's SGD (distribute_program.py runs in a
subprocess: JAX fixes its device count at start)."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import tensorflux as tf
from tests.estimator import distribute_program as program

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def numpy_sgd():
    x, y = program.data(program.STEPS * program.PER_REPLICA * 2)
    w, b = np.zeros((program.D, program.K)), np.zeros(program.K)
    batch = 2 * program.PER_REPLICA
    for start in range(0, len(x), batch):
        xs, ys = x[start:start + batch].astype(np.float64), y[start:start + batch]
        logits = xs @ w + b
        p = np.exp(logits - logits.max(1, keepdims=True))
        p /= p.sum(1, keepdims=True)
        p[np.arange(len(ys)), ys] -= 1
        w -= program.LR * xs.T @ p / len(ys)
        b -= program.LR * p.mean(0)
    return w, b


def test_train_and_evaluate_distributed_over_two_replicas():
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=2",
               JAX_PLATFORMS="cpu", PYTHONPATH=ROOT)
    proc = subprocess.run([sys.executable, "-m", "tests.estimator.distribute_program",
                           "1,2"], env=env, cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    runs = json.loads(proc.stdout.strip().splitlines()[-1])
    w, b = numpy_sgd()
    for run in runs.values():
        np.testing.assert_allclose(run["w"], w, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(run["b"], b, rtol=1e-4, atol=1e-5)
        # 20 steps of 2 x 8 rows: the input's end stops training (no steps given).
        assert run["eval"]["global_step"] == program.STEPS
    assert runs["2"]["eval"]["accuracy"] == runs["1"]["eval"]["accuracy"]
    np.testing.assert_allclose(runs["2"]["eval"]["loss"], runs["1"]["eval"]["loss"],
                               rtol=1e-5)


def test_a_distributed_input_fn_must_return_a_dataset(tmp_path):
    strategy = tf.distribute.MirroredStrategy(num_replicas=1)
    est = tf.estimator.Estimator(program.model_fn, model_dir=str(tmp_path),
                                 config=tf.estimator.RunConfig(train_distribute=strategy))
    x, y = program.data(8)
    with pytest.raises(ValueError, match="must return a tf.data.Dataset of per-replica"):
        est.train(lambda: (tf.constant(x), tf.constant(y)), steps=1)
    with pytest.raises(ValueError, match="train_distribute must be a tf.distribute "
                                         "strategy.*got str"):
        tf.estimator.Estimator(program.model_fn,
                               config=tf.estimator.RunConfig(train_distribute="mirrored"))
