"""The zoo's model_fns under tf.estimator.Estimator, unchanged, as the reference TF/TPU
models ran: train / evaluate / predict / export on tasks whose answers the test knows."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import tensorflux as tf
from tensorflux._src.runtime.config import compiler_options_config
from tensorflux.models import resnet, transformer

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FAST_COMPILE = compiler_options_config({"xla_cpu_experimental_ynn_fusion_type": None})
SIZE = 8


def quadrant_images(n, seed):
    """Noise images with one bright quadrant; the label is the quadrant (0..3)."""
    rng = np.random.RandomState(seed)
    labels = rng.randint(0, 4, n)
    images = rng.uniform(-0.3, 0.3, (n, SIZE, SIZE, 3)).astype(np.float32)
    half = SIZE // 2
    for image, label in zip(images, labels):
        row, col = divmod(label, 2)
        image[row * half:(row + 1) * half, col * half:(col + 1) * half] += 1.0
    return images, labels.astype(np.int64)


def test_resnet_model_fn_trains_evaluates_predicts_and_exports(tmp_path):
    train_x, train_y = quadrant_images(256, seed=0)
    test_x, test_y = quadrant_images(64, seed=1)
    params = {"model": "resnet20", "num_classes": 4, "depth": 8, "width": 8,
              "learning_rate": 0.05, "weight_decay": 0.0}
    est = tf.estimator.Estimator(
        resnet.model_fn, model_dir=str(tmp_path / "resnet"), params=params,
        config=tf.estimator.RunConfig(tf_random_seed=3, session_config=FAST_COMPILE,
                                      save_checkpoints_steps=100))
    est.train(lambda: tf.data.Dataset.from_tensor_slices((train_x, train_y)).shuffle(
        256, seed=1).repeat().batch(32), max_steps=100)
    result = est.evaluate(lambda: tf.data.Dataset.from_tensor_slices(
        (test_x, test_y)).batch(32))
    assert result["global_step"] == 100
    assert result["accuracy"] >= 0.9, result

    preds = list(est.predict(lambda: tf.data.Dataset.from_tensor_slices(test_x).batch(32)))
    assert len(preds) == 64 and set(preds[0]) == {"classes", "probabilities", "logits"}
    classes = np.array([p["classes"] for p in preds])
    np.testing.assert_allclose(result["accuracy"], np.mean(classes == test_y), rtol=1e-6)
    # The checkpoint holds the reference layout's names under the model's scope.
    assert "resnet8/stem/bn1/moving_mean" in est.get_variable_names()

    def receiver():
        images = tf.placeholder(tf.float32, [None, SIZE, SIZE, 3], name="images")
        return tf.estimator.export.TensorServingInputReceiver(images, {"images": images})
    path = est.export_saved_model(str(tmp_path / "export"), receiver).decode()
    from tensorflux.serving import load_servable
    servable = load_servable(path)
    try:
        served = servable.run("serving_default", {"images": test_x[:8]})
    finally:
        servable.close()
    np.testing.assert_array_equal(served["classes"], classes[:8])


def test_transformer_language_model_learns_a_cycle_under_estimator(tmp_path):
    # A decoder-only Transformer fed the cycle 2, 3, ..., 8, 2, 3, ...: the next token
    # after t is t + 1 (8 -> 2); a trained model predicts it at every position.
    config = transformer.TransformerConfig(
        vocab_size=9, hidden_size=16, filter_size=32, num_heads=2, num_encoder_layers=0,
        num_decoder_layers=1, dropout=0.0, max_length=16, learning_rate=0.2,
        warmup_steps=10)
    cycle = np.arange(2, 9)
    starts = np.random.RandomState(0).randint(0, 7, 64)
    seqs = np.stack([cycle[(s + np.arange(13)) % 7] for s in starts]).astype(np.int32)
    features, labels = seqs[:, :12], seqs[:, 1:]

    est = tf.estimator.Estimator(
        transformer.model_fn, model_dir=str(tmp_path / "lm"),
        params={"config": config},
        config=tf.estimator.RunConfig(tf_random_seed=1, session_config=FAST_COMPILE))
    before = est.evaluate(lambda: tf.data.Dataset.from_tensor_slices(
        (features, labels)).batch(64), steps=1)
    est.train(lambda: tf.data.Dataset.from_tensor_slices((features, labels)).repeat()
              .batch(16), steps=150)
    after = est.evaluate(lambda: tf.data.Dataset.from_tensor_slices(
        (features, labels)).batch(64))
    assert after["global_step"] == 150
    assert after["loss"] < 0.25 * before["loss"], (before, after)
    ids = np.stack([p["ids"] for p in est.predict(
        lambda: tf.data.Dataset.from_tensor_slices(features[:8]).batch(8))])
    np.testing.assert_array_equal(ids, labels[:8])


def test_zoo_model_fn_errors_are_the_estimator_s(tmp_path):
    est = tf.estimator.Estimator(resnet.model_fn, model_dir=str(tmp_path),
                                 params={"model": "resnet20", "num_classes": 4})
    images, _ = quadrant_images(4, seed=0)
    with pytest.raises(ValueError, match="resnet model_fn: mode 'train' needs labels"):
        est.train(lambda: tf.data.Dataset.from_tensor_slices(images).batch(4), steps=1)


def test_resnet_model_fn_under_tpu_estimator_on_two_shards():
    """The same model_fn under TPUEstimator (TPUEstimatorSpec, CrossShardOptimizer,
    25 steps per loop): 2 forced CPU shards train as 1 shard and learn the task."""
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=2",
               JAX_PLATFORMS="cpu", PYTHONPATH=ROOT)
    proc = subprocess.run([sys.executable, "-m", "tests.estimator.zoo_tpu_program", "1,2"],
                          env=env, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = json.loads(proc.stdout.strip().splitlines()[-1])
    one, two = results["1"], results["2"]
    assert one["global_step"] == two["global_step"] == 100
    assert two["accuracy"] >= 0.9, results
    np.testing.assert_allclose(two["loss"], one["loss"], rtol=1e-3, atol=1e-4)
    assert two["accuracy"] == one["accuracy"]
