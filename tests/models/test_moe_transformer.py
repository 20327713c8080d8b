"""The Transformer LM with mixture-of-experts feed-forward sublayers (the zoo's
transformer_moe_lm family member): its parameters, its loss, and that it trains."""

import dataclasses

import numpy as np
import pytest

import tensorflux as tf
from tensorflux.models import transformer
from tensorflux.models.registry import specs

TINY_MOE = transformer.TransformerConfig(
    vocab_size=12, hidden_size=16, filter_size=32, num_heads=2, num_encoder_layers=0,
    num_decoder_layers=2, dropout=0.0, label_smoothing=0.0, max_length=16,
    learning_rate=2.0, warmup_steps=20, num_experts=4, experts_per_token=2,
    expert_filter_size=16, capacity_factor=2.0)


def test_registered_moe_lm_keeps_the_dense_lms_compute_per_token():
    spec = specs()["transformer_moe_lm"]
    dense = specs()["transformer_lm"].config
    assert spec.kind == "language_model" and spec.config.num_experts == 16
    assert spec.config.experts_per_token * spec.config.expert_filter_size == dense.filter_size


def test_parameter_count():
    ids = tf.placeholder(tf.int32, [None, None])
    transformer.build_language_model(ids, TINY_MOE)
    count = sum(int(np.prod(v.shape.as_list())) for v in tf.trainable_variables())
    d, e, h, v = 16, 4, 16, 12
    experts = e * (d * h + h + h * d + d) + 2 * d * e       # + w_gate, w_noise
    layer = 4 * d * d + experts + 2 * 2 * d                 # attention, experts, 2 norms
    assert count == v * d + 2 * layer + 2 * d == transformer.parameter_count(TINY_MOE)


def test_bad_experts_per_token():
    with pytest.raises(ValueError, match="experts_per_token must be between 1 and "
                                         "num_experts. Received: experts_per_token=5"):
        dataclasses.replace(TINY_MOE, experts_per_token=5)


def test_moe_lm_learns_a_token_cycle_and_its_loss_has_the_aux_term():
    """Sequences cycle through 2..11 from a random start; next-token loss must fall."""
    rng = np.random.default_rng(0)

    def batch():
        starts = rng.integers(0, 10, size=(16, 1))
        return (2 + (starts + np.arange(12)) % 10).astype(np.int32)

    ids = tf.placeholder(tf.int32, [16, 12])
    labels = tf.pad(ids, [[0, 0], [0, 1]])[:, 1:]
    tf.set_random_seed(1)
    spec = transformer.model_fn(ids, labels, "train", TINY_MOE)
    # The prediction at the last position has no next token (its label is padding).
    ce = transformer.smoothed_cross_entropy(spec.predictions["logits"], labels, 0.0)
    aux = spec.loss - ce
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        first, first_aux = sess.run([ce, aux], {ids: batch()})
        for _ in range(80):
            sess.run(spec.train_op, {ids: batch()})
        last = np.mean([sess.run(ce, {ids: batch()}) for _ in range(3)])
    assert 0 < first_aux < 0.1          # loss_coef 1e-2 * (cv^2(importance) + cv^2(load))
    assert first > 2.0                  # ~log(12) at the start
    assert last < 0.3 * first, (first, last)
