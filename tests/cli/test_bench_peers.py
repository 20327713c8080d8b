"""`tensorflux bench` for Transformers and the peers behind `--compare`.

The peers (benchmarks/peers/) must be the zoo's models: their parameter counts are
checked against the published counts (classifiers) and against a tensorflux graph of the
same small Transformer config. The PyTorch and TensorFlow peers are checked only where
those frameworks are installed (CI does not install them); training the JAX classifier
peers compiles ResNet-50 and MobileNet v2 (about a minute on 2 cores), so that check is
opt-in with TENSORFLUX_FULL_MODELS=1.
"""

import dataclasses
import json
import os
import sys

import numpy as np
import pytest

import tensorflux as tf
from tensorflux import cli, models
from tensorflux.models import registry, transformer
from tensorflux._src.cli import bench_job, bench_report, bench_step

TINY_LM = "bench_tiny_lm_test"
PUBLISHED = {"resnet50": 25_557_032, "mobilenet_v2": 3_504_872}  # 1000 classes, 224x224
FRAMEWORKS = {"jax_models": "jax", "torch_models": "torch", "tf_models": "tensorflow"}
# One layer per stack keeps each compile to a few seconds; every kind of layer is there.
SMALL_LM = dataclasses.replace(
    transformer.TRANSFORMER_LM, vocab_size=64, hidden_size=16, filter_size=32, num_heads=2,
    num_decoder_layers=1, max_length=16)
SMALL_SEQ2SEQ = dataclasses.replace(
    transformer.TRANSFORMER_BASE, vocab_size=64, hidden_size=16, filter_size=32, num_heads=2,
    num_encoder_layers=1, num_decoder_layers=1, max_length=16)


def _peer(module_name):
    """The peer module, or a clean skip when its framework is not installed."""
    pytest.importorskip(FRAMEWORKS[module_name])
    return bench_job.load_peer(module_name)


def _spec(name, config):
    kind = "language_model" if config.decoder_only else "seq2seq"
    build = (transformer.build_language_model if config.decoder_only
             else transformer.build_seq2seq)
    return registry.ModelSpec(name, "transformer", kind, config, build,
                              (config.max_length,), num_classes=config.vocab_size)


@pytest.fixture
def tiny_lm():
    """A 1-layer, 16-wide language model (dropout 0.1) registered for the test only."""
    registry.register(_spec(TINY_LM, SMALL_LM))
    try:
        yield TINY_LM
    finally:
        registry.specs().pop(TINY_LM, None)


def _zoo_transformer_count(config, seq_len=8):
    """Trainable values of the tensorflux graph of `config`, counted from its variables."""
    with tf.Graph().as_default():
        ids = tf.placeholder(tf.int32, [None, seq_len])
        inputs = ids if config.decoder_only else (ids, ids)
        _spec("count", config).build(inputs, config, num_classes=config.vocab_size,
                                     training=True)
        return sum(int(np.prod(v.shape.as_list())) for v in tf.trainable_variables())


# -- parameter counts --------------------------------------------------------------------------
@pytest.mark.parametrize("model", sorted(PUBLISHED))
@pytest.mark.parametrize("module_name", sorted(FRAMEWORKS))
def test_classifier_peers_have_the_zoo_parameter_counts(module_name, model):
    peer = _peer(module_name)
    assert peer.parameter_count(model, num_classes=1000) == PUBLISHED[model]


@pytest.mark.parametrize("config", [SMALL_LM, SMALL_SEQ2SEQ], ids=["lm", "seq2seq"])
@pytest.mark.parametrize("module_name", sorted(FRAMEWORKS))
def test_transformer_peers_have_the_zoo_parameter_count(module_name, config):
    peer = _peer(module_name)
    peer_config = bench_job.peer_transformer_config(_spec("small", config), 8)
    zoo = _zoo_transformer_count(config)
    assert zoo == transformer.parameter_count(config) == peer_config.parameter_count()
    assert peer.parameter_count("transformer", config=peer_config) == zoo


def test_peer_config_of_transformer_lm_is_the_zoo_model():
    config = bench_job.peer_transformer_config(models.get("transformer_lm"), 128)
    assert (config.vocab_size, config.d_model, config.num_heads, config.num_decoder_layers,
            config.d_ff, config.seq_len, config.num_encoder_layers) == (
                50257, 768, 12, 12, 3072, 128, 0)
    assert config.parameter_count() == transformer.parameter_count(
        transformer.TRANSFORMER_LM)


# -- one training step lowers the loss ------------------------------------------------------------
@pytest.mark.parametrize("config", [SMALL_LM, SMALL_SEQ2SEQ], ids=["lm", "seq2seq"])
@pytest.mark.parametrize("module_name", sorted(FRAMEWORKS))
def test_transformer_peer_step_lowers_the_loss(module_name, config):
    peer = _peer(module_name)
    # No dropout, so the loss moves only with the weights; a short warm-up so that step 1
    # takes a real step (lr = 0.1 * 16^-0.5).
    config = dataclasses.replace(config, dropout=0.0, warmup_steps=1, learning_rate=0.1)
    run = peer.transformer_step(4, bench_job.peer_transformer_config(_spec("s", config), 8))
    first, second = float(run()), float(run())
    assert np.isfinite(first) and second < first
    assert abs(first - np.log(64)) < 1.0  # starts near a uniform guess over 64 ids


@pytest.mark.parametrize("model", sorted(PUBLISHED))
@pytest.mark.parametrize("module_name", ["torch_models", "tf_models"])
def test_classifier_peer_step_lowers_the_loss(module_name, model):
    _classifier_step_lowers_the_loss(_peer(module_name), model)


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get("TENSORFLUX_FULL_MODELS"),
                    reason="compiling the JAX ResNet-50 and MobileNet v2 steps takes about a "
                           "minute on 2 CPU cores; set TENSORFLUX_FULL_MODELS=1")
@pytest.mark.parametrize("model", sorted(PUBLISHED))
def test_jax_classifier_peer_step_lowers_the_loss(model):
    _classifier_step_lowers_the_loss(bench_job.load_peer("jax_models"), model)


def _classifier_step_lowers_the_loss(peer, model):
    run = peer.image_classifier_step(model, batch_size=4, image_size=32, num_classes=10,
                                     learning_rate=0.01)
    first, second = float(run()), float(run())
    assert np.isfinite(first) and second < first


# -- --compare: one column per peer that imports, a note for the others --------------------------
def _hide(monkeypatch, *modules):
    """Makes `import module` fail as if it were not installed."""
    for name in modules:
        monkeypatch.setitem(sys.modules, name, None)


def test_missing_frameworks_are_skipped_with_a_note(monkeypatch, tiny_lm):
    _hide(monkeypatch, "torch", "tensorflow")
    peers, notes = bench_job.select_peers(registry.specs()[tiny_lm])
    assert [p.KEY for p in peers] == ["jax"]
    assert notes == ["PyTorch peer skipped: torch not installed",
                     "TensorFlow peer skipped: tensorflow not installed"]


def test_peer_columns_follow_the_peers_present(capsys):
    row = {"precision": "float32", "batch_size": 8, "tokens_per_sec": 1000.0,
           "min_tokens_per_sec": 900.0, "max_tokens_per_sec": 1100.0,
           "sequences_per_sec": 62.5, "first_step_seconds": 1.0,
           "jax_tokens_per_sec": 800.0, "time_ratio_vs_jax": 0.8,
           "tf_tokens_per_sec": 500.0, "time_ratio_vs_tf": 0.5}
    results = {"model": "m", "unit": "tokens", "seq_len": 16, "device": "cpu", "rows": [row],
               "peers": [{"key": "jax", "name": "JAX", "short": "JAX"},
                         {"key": "tf", "name": "TensorFlow", "short": "TF"}]}
    bench_report.results_table(results)
    printed = capsys.readouterr().out
    for title in ("tokens/sec", "seq/sec", "JAX tok/s", "time tfx/JAX", "TF tok/s",
                  "time tfx/TF", "0.80x", "0.50x", "62.50"):
        assert title in printed
    assert "torch" not in printed


def test_transformer_bench_compares_with_the_jax_peer(tmp_path, tiny_lm, monkeypatch,
                                                     capsys):
    _hide(monkeypatch, "torch", "tensorflow")
    out = tmp_path / "bench"
    cli.main(["bench", "--model", tiny_lm, "--batch-sizes", "2", "--seq-len", "8",
              "--warmup", "1", "--steps", "2", "--windows", "2", "--compare",
              "--price-per-hour", "3.6", "--output", str(out)])
    printed = capsys.readouterr().out
    assert "PyTorch peer skipped: torch not installed" in printed
    assert "TensorFlow peer skipped: tensorflow not installed" in printed
    assert "time tfx/JAX" in printed and "time tfx/torch" not in printed
    results = json.loads((out / "bench.json").read_text())
    assert results["unit"] == "tokens" and results["seq_len"] == 8
    assert results["config"]["parameters"] == _zoo_transformer_count(SMALL_LM)
    assert [p["key"] for p in results["peers"]] == ["jax"]
    assert len(results["skipped_peers"]) == 2
    (row,) = results["rows"]
    assert row["min_tokens_per_sec"] <= row["tokens_per_sec"] <= row["max_tokens_per_sec"]
    assert row["sequences_per_sec"] == pytest.approx(row["tokens_per_sec"] / 8)
    assert row["time_ratio_vs_jax"] == pytest.approx(
        row["jax_tokens_per_sec"] / row["tokens_per_sec"])
    assert not any(key.startswith(("torch_", "tf_")) or key.endswith(("_torch", "_tf"))
                   for key in row)
    # Both start from random weights on 2 + 8 random ids of 64: near ln(64).
    assert abs(row["first_loss"] - np.log(64)) < 1.0
    assert abs(row["jax_first_loss"] - np.log(64)) < 1.0
    assert row["cost_per_million_tokens"] == pytest.approx(
        3.6 / (row["tokens_per_sec"] * 3600) * 1e6)
    assert (out / "bench.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# -- the tensorflux side ------------------------------------------------------------------------------
def test_bfloat16_transformer_computes_in_bfloat16_with_float32_variables(tiny_lm):
    step = bench_step.TransformerTrainStep(registry.specs()[tiny_lm], 2, 8, "bfloat16")
    try:
        matmuls = [op for op in step.graph.get_operations()
                   if op.type in ("MatMul", "BatchMatMul", "BatchMatMulV2")]
        assert matmuls and all(op.outputs[0].dtype == tf.bfloat16 for op in matmuls)
        assert step.logits.dtype == tf.float32  # the loss is computed in float32
        with step.graph.as_default():
            assert all(v.dtype.base_dtype == tf.float32 for v in tf.global_variables()
                       if v.dtype.base_dtype.is_floating)
            assert len(tf.trainable_variables()) == 1 + 12 + 2  # embeddings, a layer, norm
    finally:
        step.close()


@pytest.mark.parametrize("args, message", [
    (["--model", "resnet20", "--seq-len", "8"], "--seq-len is for Transformers"),
    (["--model", TINY_LM, "--image-size", "32"], "--image-size is for image classifiers"),
    (["--model", TINY_LM, "--real-data"], "--real-data is for image classifiers"),
    (["--model", TINY_LM, "--cold-warm"], "--cold-warm is for image classifiers"),
    (["--model", TINY_LM, "--seq-len", "17"], "--seq-len must be at most"),
    (["--model", TINY_LM, "--seq-len", "1"], "--seq-len must be at least 2"),
])
def test_transformer_option_errors(capsys, tiny_lm, args, message):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["bench", *args])
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err
