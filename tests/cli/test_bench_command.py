"""`tensorflux bench`: option errors, a tiny end-to-end run, mixed precision, the price
arithmetic and the JAX peer's parameter count (the Transformer and the PyTorch and
TensorFlow peers: test_bench_peers.py)."""

import dataclasses
import importlib.util
import json

import numpy as np
import pytest

import tensorflux as tf
from tensorflux import cli
from tensorflux.models import registry
from tensorflux._src.cli import bench_job, bench_report, bench_step

TINY = "bench_tiny_test"


@dataclasses.dataclass(frozen=True)
class TinyConfig:
    filters: int = 4


def _build_tiny(inputs, config, *, num_classes, training):
    h = tf.layers.conv2d(inputs, config.filters, 3, padding="same", use_bias=False,
                         name="conv")
    h = tf.nn.relu(tf.layers.batch_normalization(h, training=training, name="bn"))
    return tf.layers.dense(tf.reduce_mean(h, axis=[1, 2]), num_classes, name="logits")


@pytest.fixture
def tiny_model():
    """A 3-layer classifier registered for the test only."""
    registry.register(registry.ModelSpec(TINY, "test", "image_classifier", TinyConfig(),
                                         _build_tiny, (8, 8, 3), num_classes=5))
    try:
        yield TINY
    finally:
        registry.specs().pop(TINY, None)


def _error(capsys, *args):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["bench", *args])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("tensorflux: error: ")
    return err


@pytest.mark.parametrize("args, message", [
    (["--batch-sizes", "8,x"], "--batch-sizes must be a comma-separated list"),
    (["--batch-sizes", "0,4"], "--batch-sizes must be a comma-separated list"),
    (["--precision", "float16"], "--precision must be float32, bfloat16 or both"),
    (["--windows", "0"], "--windows must be at least 1"),
    (["--image-size", "4"], "--image-size must be at least 8"),
    (["--price-per-hour", "-1"], "--price-per-hour must be positive"),
    (["--time-to-accuracy", "150"], "--time-to-accuracy must be an accuracy"),
])
def test_bad_options_are_one_line_errors(capsys, tiny_model, args, message):
    assert message in _error(capsys, "--model", tiny_model, *args)


def test_unknown_and_untimeable_models(capsys, tiny_model):
    assert "--model 'no_such_net' is unknown" in _error(capsys, "--model", "no_such_net")
    registry.register(registry.ModelSpec("bench_detector_test", "test", "detector", None,
                                         None, (16,)))
    try:
        assert "is a detector; bench times image classifiers" in _error(
            capsys, "--model", "bench_detector_test")
    finally:
        registry.specs().pop("bench_detector_test", None)


def test_price_per_million_images():
    # $3.60/hour at 500 images/sec: 1.8M images an hour, so $2 per million.
    assert bench_report.cost_per_million(3.6, 500.0) == pytest.approx(2.0)


def test_tiny_run_writes_json_and_png(tmp_path, tiny_model, capsys):
    out = tmp_path / "bench"
    cli.main(["bench", "--model", tiny_model, "--batch-sizes", "4,2", "--precision", "both",
              "--warmup", "1", "--steps", "2", "--windows", "1", "--price-per-hour", "3.6",
              "--compare", "--output", str(out)])
    printed = capsys.readouterr().out
    assert "has no peers" in printed and "images/sec" in printed
    results = json.loads((out / "bench.json").read_text())
    assert results["model"] == tiny_model and results["image_size"] == 8
    assert results["batch_sizes"] == [2, 4] and results["precisions"] == ["float32",
                                                                          "bfloat16"]
    assert [(r["precision"], r["batch_size"]) for r in results["rows"]] == [
        ("float32", 2), ("float32", 4), ("bfloat16", 2), ("bfloat16", 4)]
    for row in results["rows"]:
        assert row["min_images_per_sec"] <= row["images_per_sec"] <= row["max_images_per_sec"]
        assert row["images_per_sec"] > 0 and np.isfinite(row["first_loss"])
        assert row["cost_per_million_images"] == pytest.approx(
            3.6 / (row["images_per_sec"] * 3600) * 1e6)
    assert (out / "bench.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not list(out.glob("*.tmp"))


def test_bfloat16_computes_in_bfloat16_with_float32_weights(tiny_model):
    step = bench_step.TrainStep(tiny_model, 2, 8, 5, "bfloat16")
    try:
        conv = step.graph.get_operation_by_name("conv/Conv2D")
        assert conv.outputs[0].dtype == tf.bfloat16
        assert all(t.dtype == tf.bfloat16 for t in conv.inputs)
        assert step.logits.dtype == tf.float32  # the loss is computed in float32
        with step.graph.as_default():
            variables = tf.global_variables()
        assert {v.name for v in variables} >= {"conv/kernel:0", "logits/kernel:0"}
        assert all(v.dtype.base_dtype == tf.float32 for v in variables)
        # The optimizer updates the float32 masters (gradients flow back through the casts).
        with step.graph.as_default():
            assert {v.name for v in tf.trainable_variables()} == {
                "conv/kernel:0", "bn/gamma:0", "bn/beta:0", "logits/kernel:0", "logits/bias:0"}
    finally:
        step.close()


@pytest.mark.skipif(importlib.util.find_spec("tensorflux.models.resnet") is None,
                    reason="the zoo's resnet.py is not there yet")
def test_jax_resnet50_has_the_zoo_parameter_count():
    from tensorflux import models
    peers = bench_job.load_peer("jax_models")
    images = tf.placeholder(tf.float32, [None, 224, 224, 3])
    models.build("resnet50", images, num_classes=1000, training=True)
    zoo = sum(int(np.prod(v.shape.as_list())) for v in tf.trainable_variables())
    assert peers.parameter_count("resnet50", num_classes=1000) == zoo == 25_557_032


def test_cold_warm_rows(tmp_path, tiny_model, monkeypatch, capsys):
    """--cold-warm adds the children's times to each row (children stubbed here: they
    import tensorflux afresh and cannot see the test's model; the real children run in
    test_cold_warm_children_share_the_cache)."""
    from tensorflux._src.cli import first_step
    calls = []

    def fake(model, batch_size, image_size, precision, num_classes):
        calls.append((model, batch_size, image_size, precision, num_classes))
        times = {"init_seconds": 1.0, "first_step_seconds": 2.0,
                 "process_to_first_step_seconds": 5.0}
        return {"cold": times, "warm": {k: v / 10 for k, v in times.items()}}
    monkeypatch.setattr(first_step, "cold_warm", fake)
    out = tmp_path / "bench"
    cli.main(["bench", "--model", tiny_model, "--batch-sizes", "2", "--warmup", "1",
              "--steps", "1", "--windows", "1", "--cold-warm", "--output", str(out)])
    assert calls == [(tiny_model, 2, 8, "float32", 5)]
    row = json.loads((out / "bench.json").read_text())["rows"][0]
    assert row["cold_first_step_seconds"] == 2.0 and row["warm_first_step_seconds"] == 0.2
    assert row["cold_init_seconds"] == 1.0 and row["warm_init_seconds"] == 0.1
    assert "cold 2.00 s (1.00 s), warm 0.20 s (0.10 s)" in capsys.readouterr().out


def test_cold_warm_children_share_the_cache():
    """Two fresh processes and a new cache directory: the second reads every executable
    from disk (no timing is asserted), the clusters by their graph, untraced."""
    from tensorflux._src.cli import first_step
    times = first_step.cold_warm("resnet20", 2, 8, steps=2)
    assert times["cold"]["cache_hits"] == 0 and times["cold"]["stored_loads"] == 0
    assert times["warm"]["stored_loads"] == 2  # the initializers and the training step
    for kind in ("cold", "warm"):
        assert times[kind]["first_step_seconds"] > 0
