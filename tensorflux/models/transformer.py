"""The Transformer (Vaswani et al. 2017, "Attention Is All You Need") and a decoder-only LM.

    import tensorflux as tf
    from tensorflux import models
    from tensorflux.models import transformer

    source = tf.placeholder(tf.int32, [None, None])       # (batch, source_len), 0 = padding
    target = tf.placeholder(tf.int32, [None, None])       # (batch, target_len), ends in EOS=1
    logits = models.build("transformer_base", (source, target), training=True)
    ids, scores = transformer.beam_search(source, transformer.TRANSFORMER_BASE)

Conventions (those of tensor2tensor, whose layout this file follows):
- id 0 is padding and id 1 is end-of-sequence. Padding keys are masked out of attention.
- `num_classes`, when given to `build`, is the vocabulary size (it replaces
  `config.vocab_size`); the registry passes the config's own vocabulary by default.
- Seq2seq logits[:, t] predict target[:, t]: the decoder reads the targets shifted right
  by one (a 0 in front). LM logits[:, t] predict token t + 1 of the input.
- Layers are pre-norm (layer norm on each sublayer's input, residual around it, and one
  final layer norm per stack), as tensor2tensor's v2 hparams; the paper puts the norm
  after the residual. Parameter counts are the same either way except for the final
  norms (2 * hidden each).
- Attention projections have no biases; the feed-forward layers do (as tensor2tensor).
- Dropout (`config.dropout`, the paper's P_drop) is applied to each sublayer's output and
  to the embedding + position sums, only when `training`.
- `activation_dtype="bfloat16"` is mixed precision: variables stay float32 (what the
  optimizer updates) and are read through a cast, the matmuls run in bfloat16, and layer
  norm, the attention softmax and the output logits are computed in float32. In float32
  every one of those casts is a no-op, so the graph is the plain one.

Trainable parameters with the paper's shared 37,000-token vocabulary: transformer_base
63,047,680 and transformer_big 214,175,744 (the paper's Table 3 says 65M and 213M; it
does not give its exact vocabulary or count, so ~2M of the base model's difference is
unexplained; separate source/target/softmax matrices would add 2 * 37000 * hidden).

Mixture of experts: `num_experts > 0` replaces every feed-forward sublayer by a sparsely
gated mixture of experts (tensorflux.layers.moe; `transformer_moe_lm` is the LM with 16
experts, 2 per token, each half as wide, so the dense LM's FLOPs per token). Their
load-balancing losses join REGULARIZATION_LOSSES; `model_fn` adds those created while it
builds the model to its loss (`auxiliary_loss`).

Decoding (`greedy_decode`, `beam_search`) runs in one `tf.while_loop` whose state has a
fixed shape, because XLA loops carry fixed-shape values: the decoded ids live in a
(batch[, beam], decode_length) buffer of zeros that each step fills one position of, and
each step re-runs the decoder over the whole buffer (the causal mask makes the zeros
after position i irrelevant to position i). There is no key/value cache, so a step costs
a full decoder pass; simple and exact, not fast.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, NamedTuple, Optional

import numpy as np

import tensorflux as tf
from tensorflux.models import precision
from tensorflux.models.registry import ModelSpec, register

PAD_ID = 0
EOS_ID = 1
# Added to attention logits that must get no weight; large but finite, so that a fully
# masked row (a padding query) stays a uniform softmax rather than NaN.
_MASK = -1e9
# "Minus infinity" for beam scores: finite so that sums of it stay comparable.
_NEG_INF = -1e7


@dataclasses.dataclass(frozen=True)
class TransformerConfig:
    vocab_size: int = 37000             # the paper's shared English-German BPE vocabulary
    hidden_size: int = 512              # d_model
    filter_size: int = 2048             # d_ff, the feed-forward inner size
    num_heads: int = 8
    num_encoder_layers: int = 6         # 0 makes a decoder-only language model
    num_decoder_layers: int = 6
    dropout: float = 0.1                # P_drop
    label_smoothing: float = 0.1        # epsilon_ls
    shared_embeddings: bool = True      # one matrix for source, target and softmax weights
    max_length: int = 256               # longest position encoded; default decode length
    layer_norm_epsilon: float = 1e-6
    activation_dtype: str = "float32"   # "bfloat16": mixed precision (see the docstring)
    # Training (the paper's section 5.3): Adam(0.9, 0.98, 1e-9) and
    # lr = learning_rate * hidden^-0.5 * min(step^-0.5, step * warmup^-1.5).
    learning_rate: float = 1.0
    warmup_steps: int = 4000
    adam_beta1: float = 0.9
    adam_beta2: float = 0.98
    adam_epsilon: float = 1e-9
    # Decoding (the paper's section 6.1).
    beam_size: int = 4
    length_penalty_alpha: float = 0.6
    # Mixture of experts (Shazeer et al. 2017; tensorflux.layers.moe): num_experts > 0
    # makes every feed-forward sublayer a mixture of that many experts, each token routed
    # to `experts_per_token` of them by noisy top-k gating. An expert is the dense
    # sublayer with `expert_filter_size` inner units (0: filter_size), so k experts of
    # filter_size / k cost a token what the dense sublayer does.
    num_experts: int = 0
    experts_per_token: int = 2
    expert_filter_size: int = 0
    capacity_factor: Optional[float] = 2.0   # None: no token is ever dropped
    moe_group_size: Optional[int] = None     # tokens per capacity group (None: the batch)
    moe_loss_coef: float = 1e-2              # weight of the importance + load losses

    @property
    def decoder_only(self) -> bool:
        return self.num_encoder_layers == 0

    def __post_init__(self):
        if self.hidden_size % self.num_heads:
            raise ValueError(f"hidden_size must be a multiple of num_heads. Received: "
                             f"hidden_size={self.hidden_size}, num_heads={self.num_heads}")
        if self.num_experts and not 1 <= self.experts_per_token <= self.num_experts:
            raise ValueError(f"experts_per_token must be between 1 and num_experts. "
                             f"Received: experts_per_token={self.experts_per_token}, "
                             f"num_experts={self.num_experts}")
        if self.activation_dtype not in ("float32", "bfloat16"):
            raise ValueError(f"activation_dtype must be 'float32' or 'bfloat16'. Received: "
                             f"activation_dtype={self.activation_dtype!r}")


TRANSFORMER_BASE = TransformerConfig()
TRANSFORMER_BIG = TransformerConfig(hidden_size=1024, filter_size=4096, num_heads=16,
                                    dropout=0.3)
# A GPT-2-small-sized language model (12 layers, 768 wide, 12 heads, 50257 tokens, tied
# softmax), with this file's sinusoidal positions instead of GPT-2's learned ones.
TRANSFORMER_LM = TransformerConfig(vocab_size=50257, hidden_size=768, filter_size=3072,
                                   num_heads=12, num_encoder_layers=0, num_decoder_layers=12,
                                   label_smoothing=0.0, max_length=1024)

# The LM above with a mixture of 16 experts in every feed-forward sublayer, 2 per token,
# each half as wide as the dense sublayer: the dense model's compute per token (plus the
# gating) with 8x its feed-forward parameters.
TRANSFORMER_MOE_LM = dataclasses.replace(TRANSFORMER_LM, num_experts=16, experts_per_token=2,
                                         expert_filter_size=TRANSFORMER_LM.filter_size // 2)

_SCOPE = "transformer"


# -- building blocks ----------------------------------------------------------------------

def layer_norm(x, epsilon, name="layer_norm"):
    """Normalizes the last axis to zero mean / unit variance, then scales and shifts.
    Computed in float32 whatever x's dtype; returns x's dtype."""
    depth = x.shape[-1].value
    with tf.variable_scope(name):
        scale = tf.get_variable("scale", [depth], initializer=tf.ones_initializer())
        bias = tf.get_variable("bias", [depth], initializer=tf.zeros_initializer())
    x32 = tf.cast(x, tf.float32)
    mean, variance = tf.nn.moments(x32, axes=[-1], keep_dims=True)
    return tf.cast((x32 - mean) * tf.rsqrt(variance + epsilon) * scale + bias, x.dtype)


def positional_encoding(length, depth, max_length):
    """Sinusoids of geometric wavelengths: (length, depth), no parameters.

    sin(pos / 10000^(2i/depth)) fills the first half of the channels and cos the second
    (tensor2tensor's layout; the paper interleaves them, which is a fixed permutation of
    channels and so the same model).
    """
    positions = np.arange(max_length, dtype=np.float64)[:, None]
    inv_freq = 1.0 / 10000.0 ** (np.arange(depth // 2, dtype=np.float64) * 2.0 / depth)
    angles = positions * inv_freq[None, :]
    table = np.concatenate([np.sin(angles), np.cos(angles)], axis=1).astype(np.float32)
    return tf.constant(table, name="positional_encoding")[:length]


def padding_bias(ids):
    """(batch, 1, 1, len): _MASK at padding keys, so no query attends to them."""
    is_pad = tf.cast(tf.equal(ids, PAD_ID), tf.float32)
    return tf.expand_dims(tf.expand_dims(is_pad * _MASK, 1), 1)


def causal_bias(length):
    """(1, 1, len, len): _MASK where key position > query position."""
    positions = tf.range(length)
    future = tf.greater(tf.expand_dims(positions, 0), tf.expand_dims(positions, 1))
    return tf.reshape(tf.cast(future, tf.float32) * _MASK, [1, 1, length, length])


def _split_heads(x, num_heads):
    """(batch, len, hidden) -> (batch, heads, len, hidden / heads)."""
    batch, length = tf.shape(x)[0], tf.shape(x)[1]
    depth = x.shape[-1].value // num_heads
    return tf.transpose(tf.reshape(x, [batch, length, num_heads, depth]), [0, 2, 1, 3])


def _combine_heads(x):
    """(batch, heads, len, depth) -> (batch, len, heads * depth)."""
    heads, depth = x.shape[1].value, x.shape[3].value
    x = tf.transpose(x, [0, 2, 1, 3])
    return tf.reshape(x, [tf.shape(x)[0], tf.shape(x)[1], heads * depth])


def multihead_attention(queries, memory, bias, config, name="multihead_attention"):
    """Scaled dot-product attention of `queries` (b, lq, d) over `memory` (b, lk, d)."""
    d, heads = config.hidden_size, config.num_heads
    with tf.variable_scope(name):
        q = _split_heads(tf.layers.dense(queries, d, use_bias=False, name="q"), heads)
        k = _split_heads(tf.layers.dense(memory, d, use_bias=False, name="k"), heads)
        v = _split_heads(tf.layers.dense(memory, d, use_bias=False, name="v"), heads)
        # Scaling by depth^-0.5 keeps the logits' variance ~1 whatever the head width.
        # The masks and the softmax are float32 (a no-op cast unless mixed precision).
        logits = tf.cast(tf.matmul(q * (d // heads) ** -0.5, k, transpose_b=True),
                         tf.float32) + bias                                      # (b,h,lq,lk)
        context = tf.matmul(tf.cast(tf.nn.softmax(logits), v.dtype), v)          # (b,h,lq,dh)
        return tf.layers.dense(_combine_heads(context), d, use_bias=False, name="output")


def feed_forward(x, config, name="dense_relu_dense"):
    """Position-wise relu(x W1 + b1) W2 + b2."""
    with tf.variable_scope(name):
        h = tf.layers.dense(x, config.filter_size, activation=tf.nn.relu, name="filter")
        return tf.layers.dense(h, config.hidden_size, name="output")


def moe_feed_forward(x, config, training, name="mixture_of_experts"):
    """The feed-forward sublayer as a mixture of experts (tensorflux.layers.moe); its
    auxiliary loss joins REGULARIZATION_LOSSES (see `auxiliary_loss`)."""
    from tensorflux.layers import moe
    outputs, _ = moe.mixture_of_experts(
        x, config.num_experts, config.expert_filter_size or config.filter_size,
        k=config.experts_per_token, capacity_factor=config.capacity_factor,
        group_size=config.moe_group_size, loss_coef=config.moe_loss_coef,
        training=training, name=name)
    return outputs


def _ffn_sublayer(x, config, training):
    if config.num_experts:
        return moe_feed_forward(x, config, training)
    return feed_forward(x, config)


def auxiliary_loss(regularization_losses_before=0):
    """The sum of the mixture-of-experts losses added to REGULARIZATION_LOSSES after its
    first `regularization_losses_before` entries (0.0 when there are none): pass the
    collection's length from before building the model."""
    losses = tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)[
        regularization_losses_before:]
    return tf.add_n(losses) if losses else tf.constant(0.0)


def _residual(x, sublayer, config, training, name):
    """Pre-norm residual block: x + dropout(sublayer(layer_norm(x)))."""
    with tf.variable_scope(name):
        y = sublayer(layer_norm(x, config.layer_norm_epsilon))
        return x + tf.layers.dropout(y, rate=config.dropout, training=training)


# -- embeddings ---------------------------------------------------------------------------

def _embedding_matrix(name, vocab, config):
    # Normal(0, d^-0.5): after the sqrt(d) scaling below, embeddings have unit variance.
    return tf.get_variable(name, [vocab, config.hidden_size],
                           initializer=tf.random_normal_initializer(
                               stddev=config.hidden_size ** -0.5))


def _embeddings(vocab, config, which):
    """The embedding matrix for `which` in ("source", "target", "softmax")."""
    with tf.variable_scope("embeddings"):
        if config.shared_embeddings:
            return _embedding_matrix("shared", vocab, config)
        return _embedding_matrix(which, vocab, config)


def embed(ids, vocab, config, which, training):
    """ids (b, len) -> (b, len, d): scaled embeddings plus positions, with dropout."""
    x = tf.nn.embedding_lookup(_embeddings(vocab, config, which), ids)
    x = tf.cast(x, config.activation_dtype) * config.hidden_size ** 0.5  # the paper's sqrt(d)
    x = x + tf.cast(positional_encoding(tf.shape(ids)[1], config.hidden_size,
                                        config.max_length), x.dtype)
    return tf.layers.dropout(x, rate=config.dropout, training=training)


def output_logits(x, vocab, config):
    """(b, len, d) -> float32 (b, len, vocab), with the softmax weights W (vocab, d): x W^T
    (the matmul in x's dtype)."""
    weights = tf.cast(_embeddings(vocab, config, "softmax"), x.dtype)
    flat = tf.reshape(x, [-1, config.hidden_size])
    logits = tf.cast(tf.matmul(flat, weights, transpose_b=True), tf.float32)
    return tf.reshape(logits, [tf.shape(x)[0], tf.shape(x)[1], vocab])


# -- the stacks -----------------------------------------------------------------------------

def _encoder_layer(x, bias, config, training):
    x = _residual(x, lambda h: multihead_attention(h, h, bias, config), config, training,
                  "self_attention")
    return _residual(x, lambda h: _ffn_sublayer(h, config, training), config, training,
                     "ffn")


def _decoder_layer(x, self_bias, memory, memory_bias, config, training):
    x = _residual(x, lambda h: multihead_attention(h, h, self_bias, config), config,
                  training, "self_attention")
    if memory is not None:
        x = _residual(x, lambda h: multihead_attention(h, memory, memory_bias, config),
                      config, training, "encdec_attention")
    return _residual(x, lambda h: _ffn_sublayer(h, config, training), config, training,
                     "ffn")


def _model_scope(config):
    getter = precision.bfloat16_getter if config.activation_dtype == "bfloat16" else None
    return tf.variable_scope(_SCOPE, reuse=tf.AUTO_REUSE, custom_getter=getter)


def encode(source_ids, config, vocab, training=False):
    """Source ids (b, ls) -> (memory (b, ls, d), its padding bias (b, 1, 1, ls))."""
    bias = padding_bias(source_ids)
    with _model_scope(config):
        x = embed(source_ids, vocab, config, "source", training)
        with tf.variable_scope("encoder"):
            for i in range(config.num_encoder_layers):
                with tf.variable_scope(f"layer_{i}"):
                    x = _encoder_layer(x, bias, config, training)
            return layer_norm(x, config.layer_norm_epsilon), bias


def decode(decoder_ids, memory, memory_bias, config, vocab, training=False):
    """Decoder input ids (b, lt) -> logits (b, lt, vocab); position t sees ids[:, :t+1].

    `memory` is None for a decoder-only language model (no encoder-decoder attention).
    """
    self_bias = causal_bias(tf.shape(decoder_ids)[1])
    with _model_scope(config):
        x = embed(decoder_ids, vocab, config, "target", training)
        with tf.variable_scope("decoder"):
            for i in range(config.num_decoder_layers):
                with tf.variable_scope(f"layer_{i}"):
                    x = _decoder_layer(x, self_bias, memory, memory_bias, config, training)
            x = layer_norm(x, config.layer_norm_epsilon)
        return output_logits(x, vocab, config)


def shift_right(ids):
    """(b, l) -> (b, l): a 0 in front and the last id dropped (teacher forcing input)."""
    return tf.pad(ids, [[0, 0], [1, 0]])[:, :-1]


def _vocab(config, num_classes):
    return config.vocab_size if num_classes is None else int(num_classes)


def build_seq2seq(inputs, config, *, num_classes=None, training=False):
    """(source_ids, target_ids), int32 (b, l) each -> logits (b, target_len, vocab)."""
    source_ids, target_ids = inputs
    vocab = _vocab(config, num_classes)
    memory, memory_bias = encode(source_ids, config, vocab, training)
    return decode(shift_right(target_ids), memory, memory_bias, config, vocab, training)


def build_language_model(inputs, config, *, num_classes=None, training=False):
    """Token ids (b, l) -> next-token logits (b, l, vocab): logits[:, t] predict id t+1."""
    return decode(inputs, None, None, config, _vocab(config, num_classes), training)


# -- loss and schedule ----------------------------------------------------------------------

def smoothed_cross_entropy(logits, targets, label_smoothing):
    """Mean label-smoothed cross-entropy over non-padding targets (a scalar).

    The smoothed target puts 1 - eps on the label and eps / (vocab - 1) on each other id.
    As in tensor2tensor, the smoothed distribution's own entropy is subtracted, so a model
    that predicts it exactly scores 0 (the value is the KL divergence; gradients are those
    of the cross-entropy).
    """
    vocab = logits.shape[-1].value
    if label_smoothing:
        confidence = 1.0 - label_smoothing
        low = label_smoothing / (vocab - 1)
        soft = tf.one_hot(targets, vocab, on_value=confidence, off_value=low)
        xent = tf.nn.softmax_cross_entropy_with_logits_v2(labels=soft, logits=logits)
        entropy = -(confidence * math.log(confidence) + (vocab - 1) * low * math.log(low))
    else:  # the same value without a (b, l, vocab) one-hot target to build and read
        xent = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=targets, logits=logits)
        entropy = 0.0
    weights = tf.cast(tf.not_equal(targets, PAD_ID), tf.float32)
    total = tf.reduce_sum((xent - entropy) * weights)
    return total / tf.maximum(tf.reduce_sum(weights), 1.0)


def learning_rate_schedule(global_step, config):
    """lr = scale * d^-0.5 * min(step^-0.5, step * warmup^-1.5), steps counted from 1."""
    step = tf.cast(global_step, tf.float32) + 1.0
    warmup = float(config.warmup_steps)
    return (config.learning_rate * config.hidden_size ** -0.5
            * tf.minimum(tf.rsqrt(step), step * warmup ** -1.5))


# -- decoding ---------------------------------------------------------------------------------

def _step_log_probs(buffer, step, memory, memory_bias, config, vocab):
    """Log-probabilities (n, vocab) of the id at position `step` of the buffer (n, length).

    The padding id is never a decoded token (0 in the buffer means "not decoded yet"),
    so it gets probability 0 and the others are renormalized.
    """
    logits = decode(shift_right(buffer), memory, memory_bias, config, vocab)[:, step, :]
    never_pad = tf.one_hot(PAD_ID, vocab, on_value=_MASK, off_value=0.0)
    return tf.nn.log_softmax(logits + never_pad)


def _write(buffer, step, ids):
    """buffer (..., length) with `ids` (...) at position `step` (which holds 0)."""
    length = buffer.shape[-1].value
    return buffer + tf.one_hot(step, length, dtype=tf.int32) * tf.expand_dims(ids, -1)


def greedy_decode(source_ids, config, *, num_classes=None, decode_length=None):
    """Most likely next id at each step until EOS: (ids (b, decode_length), log-prob (b,)).

    Ids after a sequence's EOS are 0. The loop stops early once every sequence is done.
    """
    vocab = _vocab(config, num_classes)
    length = decode_length or config.max_length
    memory, memory_bias = encode(source_ids, config, vocab)
    batch = tf.shape(source_ids)[0]

    def step(i, ids, done, log_prob):
        logp = _step_log_probs(ids, i, memory, memory_bias, config, vocab)
        best = tf.cast(tf.argmax(logp, axis=-1), tf.int32)
        best_logp = tf.reduce_max(logp, axis=-1)
        next_ids = tf.where(done, tf.zeros_like(best), best)  # 0s after a sequence's EOS
        log_prob = log_prob + tf.where(done, tf.zeros_like(best_logp), best_logp)
        done = tf.logical_or(done, tf.equal(next_ids, EOS_ID))
        return i + 1, _write(ids, i, next_ids), done, log_prob

    def not_done(i, ids, done, log_prob):
        return tf.logical_and(i < length, tf.logical_not(tf.reduce_all(done)))

    start = (tf.constant(0), tf.zeros([batch, length], tf.int32),
             tf.zeros([batch], tf.bool), tf.zeros([batch], tf.float32))
    # The first step runs outside the loop: it creates the decoder's variables if the
    # model was not built before (TF1 cannot initialize variables made in a loop body).
    state = step(*start)
    _, ids, _, log_prob = tf.while_loop(not_done, step, state)
    return ids, log_prob


def length_penalty(length, alpha):
    """The GNMT / tensor2tensor length penalty ((5 + length) / 6) ^ alpha."""
    return ((5.0 + tf.cast(length, tf.float32)) / 6.0) ** alpha


class _Beams(NamedTuple):
    step: Any             # scalar int32: the position the next step fills
    alive_ids: Any        # (b, k, length) int32: unfinished hypotheses
    alive_logp: Any       # (b, k) float32: their log-probabilities
    finished_ids: Any     # (b, k, length) int32: hypotheses that emitted EOS
    finished_score: Any   # (b, k) float32: their log-probability / length penalty
    finished_flag: Any    # (b, k) bool: whether the finished slot holds a hypothesis


def _gather_beams(values, indices):
    """values (b, n, ...) at indices (b, k) -> (b, k, ...)."""
    return tf.gather(values, indices, batch_dims=1)


def _beam_step(beams, memory, memory_bias, config, vocab, k, length, alpha):
    """One step of tensor2tensor's beam search.

    Extend every alive hypothesis by every id, keep the 2k best by log-probability (at
    most k of them end in EOS, so at least k stay alive), move those ending in EOS to the
    finished set scored with the length penalty, and keep the k best of each set.
    """
    i = beams.step
    batch = tf.shape(beams.alive_logp)[0]
    flat_ids = tf.reshape(beams.alive_ids, [batch * k, length])
    logp = _step_log_probs(flat_ids, i, memory, memory_bias, config, vocab)
    scores = tf.expand_dims(beams.alive_logp, 2) + tf.reshape(logp, [batch, k, vocab])
    top_logp, top_index = tf.nn.top_k(tf.reshape(scores, [batch, k * vocab]), 2 * k)
    parent, token = top_index // vocab, top_index % vocab                 # (b, 2k)
    candidates = _write(_gather_beams(beams.alive_ids, parent), i, token)  # (b, 2k, length)
    is_eos = tf.equal(token, EOS_ID)

    # Alive: the k best candidates that did not end.
    alive_scores = top_logp + tf.cast(is_eos, tf.float32) * _NEG_INF
    alive_logp, alive_index = tf.nn.top_k(alive_scores, k)
    alive_ids = _gather_beams(candidates, alive_index)

    # Finished: the k best of the old finished set and the new EOS candidates. Candidates
    # grown from the initial placeholder beams (log-prob ~_NEG_INF) are not real.
    new_flag = tf.logical_and(is_eos, top_logp > _NEG_INF / 2)
    new_score = tf.where(new_flag, top_logp / length_penalty(i + 1, alpha),
                         tf.fill(tf.shape(top_logp), _NEG_INF))
    all_scores = tf.concat([beams.finished_score, new_score], 1)         # (b, 3k)
    finished_score, finished_index = tf.nn.top_k(all_scores, k)
    finished_ids = _gather_beams(tf.concat([beams.finished_ids, candidates], 1),
                                 finished_index)
    finished_flag = _gather_beams(tf.concat([beams.finished_flag, new_flag], 1),
                                  finished_index)
    return _Beams(i + 1, alive_ids, alive_logp, finished_ids, finished_score, finished_flag)


def _search_can_improve(beams, length, alpha):
    """False once no alive hypothesis can beat the best finished one, for every example.

    A hypothesis' log-probability only falls as it grows, so the best an alive one can
    still score is its log-probability over the largest penalty any length can give.
    This early stop therefore never changes the result.
    """
    max_penalty = max(((5.0 + 1) / 6.0) ** alpha, ((5.0 + length) / 6.0) ** alpha)
    best_alive = beams.alive_logp[:, 0] / max_penalty
    best_finished = tf.where(tf.reduce_any(beams.finished_flag, 1), beams.finished_score[:, 0],
                             tf.fill(tf.shape(best_alive), _NEG_INF))
    return tf.reduce_any(tf.greater(best_alive, best_finished))


def beam_search(source_ids, config, *, num_classes=None, beam_size=None, alpha=None,
                decode_length=None):
    """Beam search: (ids (b, decode_length), score (b,)), the best hypothesis per example.

    The score is log P(ids | source) / ((5 + len) / 6) ^ alpha with len counting the EOS.
    An example with no hypothesis ending in EOS within decode_length steps returns its
    best unfinished one, scored with the penalty of decode_length.
    """
    vocab = _vocab(config, num_classes)
    k = beam_size or config.beam_size
    alpha = config.length_penalty_alpha if alpha is None else alpha
    length = decode_length or config.max_length
    memory, memory_bias = encode(source_ids, config, vocab)
    batch = tf.shape(source_ids)[0]
    # Every beam attends to its example's memory: repeat it k times, beam-major per example.
    memory = tf.reshape(tf.tile(tf.expand_dims(memory, 1), [1, k, 1, 1]),
                        [batch * k, tf.shape(memory)[1], config.hidden_size])
    memory_bias = tf.reshape(tf.tile(memory_bias, [1, k, 1, 1]), [batch * k, 1, 1, -1])

    # One real beam to start; the others start at ~-inf so step 0 does not pick k copies.
    first_beam = tf.one_hot(0, k, on_value=0.0, off_value=_NEG_INF)
    start = _Beams(tf.constant(0), tf.zeros([batch, k, length], tf.int32),
                   tf.tile(tf.expand_dims(first_beam, 0), [batch, 1]),
                   tf.zeros([batch, k, length], tf.int32), tf.fill([batch, k], _NEG_INF),
                   tf.zeros([batch, k], tf.bool))

    def step(*state):
        return tuple(_beam_step(_Beams(*state), memory, memory_bias, config, vocab, k,
                                length, alpha))

    def keep_going(*state):
        beams = _Beams(*state)
        return tf.logical_and(beams.step < length, _search_can_improve(beams, length, alpha))

    state = step(*start)  # outside the loop, so the model's variables exist (see greedy)
    final = _Beams(*tf.while_loop(keep_going, step, state))
    any_finished = tf.reduce_any(final.finished_flag, 1)
    ids = tf.where(any_finished, final.finished_ids[:, 0], final.alive_ids[:, 0])
    fallback = final.alive_logp[:, 0] / length_penalty(length, alpha)
    score = tf.where(any_finished, final.finished_score[:, 0], fallback)
    return ids, score


# -- model_fn ---------------------------------------------------------------------------------

def _resolve_config(params) -> TransformerConfig:
    """params: a TransformerConfig, or a dict with "model" (a registered name, default
    transformer_base) and/or "config", plus field overrides."""
    if isinstance(params, TransformerConfig):
        return params
    params = {k: v for k, v in (params or {}).items()
              if k not in ("batch_size", "use_tpu", "context")}   # TPUEstimator's keys
    config = params.pop("config", None)
    name = params.pop("model", "transformer_base")
    if config is None:
        from tensorflux.models.registry import specs
        if name not in specs():
            from tensorflux import models
            models.get(name)  # raises ValueError naming the known models
        config = specs()[name].config
    return dataclasses.replace(config, **params) if params else config


def model_fn(features, labels, mode, params=None):
    """The model_fn for tf.estimator.Estimator: returns an EstimatorSpec. mode: "train",
    "eval" or "infer" (tf.estimator.ModeKeys).

    Seq2seq: `features` is the source ids (or {"inputs": ids}), `labels` the target ids.
    Language model: `features` is the token ids and `labels` the next ids (default: the
    features shifted left, with 0 after the end). Infer decodes with beam search
    (seq2seq; `params["beam_size"] = 1` still runs the beam loop, use greedy_decode for
    plain greedy) or, for a language model, returns each position's most likely next id.
    The vocabulary is `config.vocab_size` (set it through params). Under TPUEstimator
    (params holding "use_tpu") the spec is a TPUEstimatorSpec, and on the shards Adam is
    wrapped in tf.contrib.tpu.CrossShardOptimizer, as the reference TPU Transformer.
    """
    if mode not in ("train", "eval", "infer"):
        raise ValueError(f"mode must be 'train', 'eval' or 'infer'. Received: mode={mode!r}")
    tpu = isinstance(params, dict) and "use_tpu" in params
    spec_class = tf.contrib.tpu.TPUEstimatorSpec if tpu else tf.estimator.EstimatorSpec
    config = _resolve_config(params)
    if isinstance(features, dict):
        features = features["inputs"]
    if mode == "infer":
        if config.decoder_only:
            logits = build_language_model(features, config)
            return spec_class(mode, predictions={
                "ids": tf.cast(tf.argmax(logits, -1), tf.int32), "logits": logits})
        ids, scores = beam_search(features, config)
        return spec_class(mode, predictions={"ids": ids, "scores": scores})

    training = mode == "train"
    before = len(tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES))
    if config.decoder_only:
        if labels is None:
            labels = tf.pad(features, [[0, 0], [0, 1]])[:, 1:]
        logits = build_language_model(features, config, training=training)
    else:
        logits = build_seq2seq((features, labels), config, training=training)
    loss = smoothed_cross_entropy(logits, labels, config.label_smoothing)
    if config.num_experts:  # the experts' load-balancing losses
        loss = loss + auxiliary_loss(before)
    train_op = None
    if training:
        global_step = tf.train.get_or_create_global_step()
        optimizer = tf.train.AdamOptimizer(learning_rate_schedule(global_step, config),
                                           beta1=config.adam_beta1, beta2=config.adam_beta2,
                                           epsilon=config.adam_epsilon)
        if tpu and params["use_tpu"]:
            optimizer = tf.contrib.tpu.CrossShardOptimizer(optimizer)
        train_op = optimizer.minimize(loss, global_step=global_step)
    return spec_class(mode, predictions={"logits": logits}, loss=loss, train_op=train_op)


# -- the registry -----------------------------------------------------------------------------

def parameter_count(config: TransformerConfig, vocab: Optional[int] = None) -> int:
    """Trainable parameters of `config`, from the layout above (no graph needed)."""
    d, f, v = config.hidden_size, config.filter_size, vocab or config.vocab_size
    attention = 4 * d * d                      # q, k, v, output; no biases
    ffn = d * f + f + f * d + d                # two dense layers with biases
    if config.num_experts:                     # E experts of h units, plus w_gate, w_noise
        e, h = config.num_experts, config.expert_filter_size or f
        ffn = e * (d * h + h + h * d + d) + 2 * d * e
    norm = 2 * d                               # scale and bias
    embeddings = v * d * (1 if config.shared_embeddings
                          else (2 if config.decoder_only else 3))
    encoder = config.num_encoder_layers * (attention + ffn + 2 * norm)
    if config.num_encoder_layers:
        encoder += norm
    cross = 0 if config.decoder_only else attention + norm   # encoder-decoder attention
    decoder = config.num_decoder_layers * (attention + norm + cross + ffn + norm)
    return embeddings + encoder + decoder + norm


for _name, _config in (("transformer_base", TRANSFORMER_BASE),
                       ("transformer_big", TRANSFORMER_BIG)):
    register(ModelSpec(name=_name, family="transformer", kind="seq2seq", config=_config,
                       build=build_seq2seq, input_shape=(_config.max_length,),
                       num_classes=_config.vocab_size))
register(ModelSpec(name="transformer_lm", family="transformer", kind="language_model",
                   config=TRANSFORMER_LM, build=build_language_model,
                   input_shape=(TRANSFORMER_LM.max_length,),
                   num_classes=TRANSFORMER_LM.vocab_size))
register(ModelSpec(name="transformer_moe_lm", family="transformer", kind="language_model",
                   config=TRANSFORMER_MOE_LM, build=build_language_model,
                   input_shape=(TRANSFORMER_MOE_LM.max_length,),
                   num_classes=TRANSFORMER_MOE_LM.vocab_size))
