"""The Transformer family: parameter counts, the forward pass against NumPy, masks,
training, and greedy / beam decoding against NumPy searches written here.

Every expectation is computed in this file: parameter counts from a formula over the
config, logits from a NumPy forward pass over the session's weights, and decoded ids from
plain-Python searches that call that NumPy forward pass on unpadded sequences.
"""

import dataclasses

import numpy as np
import pytest

import tensorflux as tf
from tensorflux.models import transformer
from tensorflux.models.registry import specs

EOS = 1
# One layer per stack keeps XLA compile times (most of this file's runtime) small; the
# parameter-count tests vary the depth without running anything.
TINY = transformer.TransformerConfig(
    vocab_size=9, hidden_size=16, filter_size=24, num_heads=2, num_encoder_layers=1,
    num_decoder_layers=1, dropout=0.0, max_length=16, beam_size=3, warmup_steps=10)


def initialize(sess, seed, embedding_scale=1.0, kernel_scale=1.0):
    """Initializes every variable, feeding NumPy values to the trainable ones.

    Compiling the model's random initializers costs seconds of XLA time per session;
    feeding their initial values skips them (the graph is cut at a fed tensor).
    """
    rng = np.random.RandomState(seed)
    feed = {}
    for v in tf.trainable_variables():
        shape = v.shape.as_list()
        if v.name.endswith("scale:0"):        # layer norm gains
            value = 1.0 + 0.1 * rng.randn(*shape)
        elif "embeddings" in v.name:
            value = embedding_scale * rng.randn(*shape) / np.sqrt(shape[1])
        else:                                  # kernels and biases
            value = kernel_scale * rng.randn(*shape) / np.sqrt(shape[0] if len(shape) == 2
                                                               else 10.0)
        feed[v.initializer.inputs[1]] = value.astype(np.float32)
    sess.run(tf.global_variables_initializer(), feed)


# -- parameter counts ---------------------------------------------------------------------

def expected_parameters(c, vocab):
    """Counted by hand from the architecture: embeddings + layers + final layer norms."""
    d, f = c.hidden_size, c.filter_size
    attention = 4 * d * d              # Wq, Wk, Wv, Wo, no biases
    ffn = (d * f + f) + (f * d + d)    # two dense layers with biases
    norm = 2 * d                       # scale + bias
    if c.num_encoder_layers == 0:      # language model: token embedding (+ softmax)
        matrices = 1 if c.shared_embeddings else 2
        return (matrices * vocab * d
                + c.num_decoder_layers * (attention + ffn + 2 * norm) + norm)
    matrices = 1 if c.shared_embeddings else 3   # source, target, softmax
    encoder = c.num_encoder_layers * (attention + ffn + 2 * norm) + norm
    decoder = c.num_decoder_layers * (2 * attention + ffn + 3 * norm) + norm
    return matrices * vocab * d + encoder + decoder


def trainable_count():
    return sum(int(np.prod(v.shape.as_list())) for v in tf.trainable_variables())


def ids_placeholder():
    return tf.placeholder(tf.int32, [None, None])


def test_registered_models():
    registered = specs()
    assert registered["transformer_base"].kind == "seq2seq"
    assert registered["transformer_big"].kind == "seq2seq"
    assert registered["transformer_lm"].kind == "language_model"
    big = registered["transformer_big"].config
    assert (big.hidden_size, big.filter_size, big.num_heads) == (1024, 4096, 16)
    assert (big.num_encoder_layers, big.num_decoder_layers) == (6, 6)


@pytest.mark.parametrize("name, count", [("transformer_base", 63_047_680),
                                         ("transformer_big", 214_175_744)])
def test_paper_model_parameter_counts(name, count):
    # The paper's shared 37,000-token BPE vocabulary (Table 3 reports ~65M and ~213M).
    spec = specs()[name]
    logits = spec.build((ids_placeholder(), ids_placeholder()), spec.config,
                        num_classes=37000, training=False)
    assert logits.shape.as_list() == [None, None, 37000]
    assert trainable_count() == expected_parameters(spec.config, 37000) == count
    assert transformer.parameter_count(spec.config, 37000) == count


@pytest.mark.parametrize("shared", [True, False])
@pytest.mark.parametrize("decoder_only", [True, False])
def test_parameter_count_formula(shared, decoder_only):
    config = dataclasses.replace(TINY, shared_embeddings=shared,
                                 num_encoder_layers=0 if decoder_only else 2,
                                 num_decoder_layers=3)
    if decoder_only:
        transformer.build_language_model(ids_placeholder(), config)
    else:
        transformer.build_seq2seq((ids_placeholder(), ids_placeholder()), config)
    assert trainable_count() == expected_parameters(config, config.vocab_size)


# -- a NumPy forward pass -----------------------------------------------------------------

def session_weights(sess):
    return {v.name[:-2]: value
            for v, value in zip(tf.trainable_variables(), sess.run(tf.trainable_variables()))}


def np_positions(length, d):
    pos = np.arange(length)[:, None]
    i = np.arange(d // 2)[None, :]
    angle = pos / 10000.0 ** (2 * i / d)
    return np.concatenate([np.sin(angle), np.cos(angle)], axis=1)


def np_layer_norm(x, w, scope, eps):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * w[scope + "/layer_norm/scale"] \
        + w[scope + "/layer_norm/bias"]


def np_attention(x, memory, w, scope, heads, causal):
    """One sequence: x (lq, d), memory (lk, d); no padding (the reference never pads)."""
    p = scope + "/multihead_attention/"
    q, k, v = (t @ w[p + n + "/kernel"] for t, n in ((x, "q"), (memory, "k"), (memory, "v")))
    out = np.zeros_like(q)
    dh = q.shape[-1] // heads
    for h in range(heads):
        cols = slice(h * dh, (h + 1) * dh)
        logits = q[:, cols] @ k[:, cols].T / np.sqrt(dh)
        if causal:
            logits = np.where(np.tril(np.ones_like(logits)) > 0, logits, -np.inf)
        weights = np.exp(logits - logits.max(-1, keepdims=True))
        out[:, cols] = (weights / weights.sum(-1, keepdims=True)) @ v[:, cols]
    return out @ w[p + "output/kernel"]


def np_ffn(x, w, scope):
    p = scope + "/dense_relu_dense/"
    h = np.maximum(x @ w[p + "filter/kernel"] + w[p + "filter/bias"], 0)
    return h @ w[p + "output/kernel"] + w[p + "output/bias"]


def np_embed(ids, w, c, which):
    table = w["transformer/embeddings/" + ("shared" if c.shared_embeddings else which)]
    return table[ids] * np.sqrt(c.hidden_size) + np_positions(len(ids), c.hidden_size)


def np_encode(source, w, c):
    """Unpadded source ids (ls,) -> memory (ls, d)."""
    x = np_embed(source, w, c, "source")
    eps = c.layer_norm_epsilon
    for i in range(c.num_encoder_layers):
        s = f"transformer/encoder/layer_{i}"
        a = s + "/self_attention"
        x = x + np_attention(np_layer_norm(x, w, a, eps), np_layer_norm(x, w, a, eps), w, a,
                             c.num_heads, causal=False)
        x = x + np_ffn(np_layer_norm(x, w, s + "/ffn", eps), w, s + "/ffn")
    return np_layer_norm(x, w, "transformer/encoder", eps)


def np_decode(decoder_in, memory, w, c):
    """Decoder input ids (lt,) -> logits (lt, vocab)."""
    x = np_embed(decoder_in, w, c, "target")
    eps = c.layer_norm_epsilon
    for i in range(c.num_decoder_layers):
        s = f"transformer/decoder/layer_{i}"
        h = np_layer_norm(x, w, s + "/self_attention", eps)
        x = x + np_attention(h, h, w, s + "/self_attention", c.num_heads, causal=True)
        if memory is not None:
            h = np_layer_norm(x, w, s + "/encdec_attention", eps)
            x = x + np_attention(h, memory, w, s + "/encdec_attention", c.num_heads,
                                 causal=False)
        x = x + np_ffn(np_layer_norm(x, w, s + "/ffn", eps), w, s + "/ffn")
    x = np_layer_norm(x, w, "transformer/decoder", eps)
    softmax = w["transformer/embeddings/" + ("shared" if c.shared_embeddings else "softmax")]
    return x @ softmax.T


def unpad(ids):
    return ids[ids != 0]


def np_seq2seq_logits(source, target, w, c):
    """Padded (b, ls), (b, lt) -> (b, lt, vocab), each example without its padding."""
    out = np.zeros(target.shape + (c.vocab_size,))
    for b in range(len(source)):
        memory = np_encode(unpad(source[b]), w, c)
        out[b] = np_decode(np.concatenate([[0], target[b, :-1]]), memory, w, c)
    return out


# -- the forward pass ---------------------------------------------------------------------

SOURCE = np.array([[5, 3, 7, 2, 1, 0, 0],
                   [4, 4, 6, 8, 2, 3, 1]], np.int32)
TARGET = np.array([[3, 7, 2, 5, 1],
                   [6, 8, 2, 1, 0]], np.int32)


def test_seq2seq_forward_matches_numpy_and_masks():
    source, target = ids_placeholder(), ids_placeholder()
    logits = transformer.build_seq2seq((source, target), TINY)
    with tf.Session() as sess:
        initialize(sess, seed=1)
        got = sess.run(logits, {source: SOURCE, target: TARGET})
        w = session_weights(sess)
        assert got.shape == (2, 5, TINY.vocab_size)
        # The NumPy pass drops the source padding, so agreement on the padded first
        # example also shows that the padding mask works.
        np.testing.assert_allclose(got, np_seq2seq_logits(SOURCE, TARGET, w, TINY),
                                   rtol=2e-4, atol=2e-4)

        # Causal mask: a later target token cannot change earlier logits. logits[:, t]
        # reads targets[:, :t], so changing targets[:, 3] may change only logits[:, 4:].
        changed = TARGET.copy()
        changed[:, 3] = 4
        again = sess.run(logits, {source: SOURCE, target: changed})
        np.testing.assert_allclose(again[:, :4], got[:, :4], rtol=1e-5, atol=1e-6)
        assert np.abs(again[:, 4] - got[:, 4]).max() > 1e-3


def test_language_model_matches_numpy():
    config = dataclasses.replace(TINY, num_encoder_layers=0)
    ids = ids_placeholder()
    logits = transformer.build_language_model(ids, config)
    tokens = np.array([[2, 5, 7, 3, 8, 4]], np.int32)
    with tf.Session() as sess:
        initialize(sess, seed=2)
        got = sess.run(logits, {ids: tokens})
        expected = np_decode(tokens[0], None, session_weights(sess), config)
    assert got.shape == (1, 6, config.vocab_size)
    # The NumPy decoder is causal by construction; so must the graph be to agree.
    np.testing.assert_allclose(got[0], expected, rtol=2e-4, atol=2e-4)


# -- training -----------------------------------------------------------------------------

def test_training_steps_reduce_loss_on_a_copy_task():
    rng = np.random.RandomState(0)
    source = rng.randint(2, TINY.vocab_size, size=(16, 6)).astype(np.int32)
    target = np.concatenate([source, np.full((16, 1), EOS, np.int32)], axis=1)
    features, labels = ids_placeholder(), ids_placeholder()
    config = dataclasses.replace(TINY, learning_rate=0.5)
    spec = transformer.model_fn(features, labels, "train", params=config)
    feed = {features: source, labels: target}
    with tf.Session() as sess:
        initialize(sess, seed=3)
        losses = [sess.run([spec.loss, spec.train_op], feed)[0] for _ in range(30)]
        assert sess.run(tf.train.get_global_step()) == 30
    assert np.all(np.isfinite(losses))
    assert np.mean(losses[-3:]) < 0.5 * losses[0], losses


def test_eval_mode_and_label_smoothed_loss():
    spec = transformer.model_fn(ids_placeholder(), ids_placeholder(), "eval", params=TINY)
    assert spec.train_op is None and spec.loss.shape.ndims == 0
    assert spec.predictions["logits"].shape.as_list() == [None, None, TINY.vocab_size]

    rng = np.random.RandomState(4)
    logits = rng.randn(2, 5, 7).astype(np.float32)
    targets = np.array([[3, 6, 2, 1, 0], [4, 1, 0, 0, 0]], np.int32)
    loss = transformer.smoothed_cross_entropy(tf.constant(logits), tf.constant(targets), 0.1)
    with tf.Session() as sess:
        got = sess.run(loss)
    v, eps = 7, 0.1
    soft = np.full(targets.shape + (v,), eps / (v - 1))
    np.put_along_axis(soft, targets[..., None], 1 - eps, axis=-1)
    shifted = logits - logits.max(-1, keepdims=True)
    log_p = shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))
    # KL(soft || p): the cross-entropy minus the smoothed distribution's own entropy,
    # averaged over the 6 non-padding targets.
    kl = (soft * (np.log(soft) - log_p)).sum(-1)
    np.testing.assert_allclose(got, kl[targets != 0].mean(), rtol=1e-5)


def test_unsmoothed_loss_and_its_gradient():
    # label_smoothing=0 (the LM's setting) takes the sparse cross-entropy path
    rng = np.random.RandomState(5)
    logits = rng.randn(2, 5, 7).astype(np.float32)
    targets = np.array([[3, 6, 2, 1, 0], [4, 1, 0, 0, 0]], np.int32)
    logits_t = tf.constant(logits)
    loss = transformer.smoothed_cross_entropy(logits_t, tf.constant(targets), 0.0)
    (grad,) = tf.gradients(loss, [logits_t])
    with tf.Session() as sess:
        got, got_grad = sess.run([loss, grad])
    shifted = logits - logits.max(-1, keepdims=True)
    log_p = shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))
    nll = -np.take_along_axis(log_p, targets[..., None], -1)[..., 0]
    keep = targets != 0
    np.testing.assert_allclose(got, nll[keep].mean(), rtol=1e-5)
    want = (np.exp(log_p) - np.eye(7)[targets]) * keep[..., None] / keep.sum()
    np.testing.assert_allclose(got_grad, want, rtol=1e-4, atol=1e-6)


# -- decoding -----------------------------------------------------------------------------

def np_log_softmax(x):
    x = x - x.max()
    return x - np.log(np.exp(x).sum())


def np_next_log_probs(source, prefix, w, c):
    """log P(next id | source, prefix), on the unpadded source; id 0 is excluded."""
    memory = np_encode(unpad(source), w, c)
    logits = np_decode(np.array([0] + list(prefix)), memory, w, c)[-1]
    return np.concatenate([[-np.inf], np_log_softmax(logits[1:])])  # never padding (0)


def np_greedy(source, w, c, length):
    ids, total = [], 0.0
    while len(ids) < length and (not ids or ids[-1] != EOS):
        logp = np_next_log_probs(source, ids, w, c)
        ids.append(int(np.argmax(logp)))
        total += logp[ids[-1]]
    return ids + [0] * (length - len(ids)), total


def penalty(n, alpha):
    return ((5.0 + n) / 6.0) ** alpha


def np_beam_search(source, w, c, k, alpha, length):
    """tensor2tensor's beam search, one example, in plain Python and run to the end."""
    alive = [(0.0, [])]             # (log-prob, ids)
    finished = []                   # (log-prob / penalty, ids)
    for step in range(length):
        candidates = []
        for logp, ids in alive:
            nxt = np_next_log_probs(source, ids, w, c)
            candidates += [(logp + nxt[t], ids + [t]) for t in range(c.vocab_size)]
        candidates = sorted(candidates, key=lambda x: -x[0])[:2 * k]
        finished += [(lp / penalty(step + 1, alpha), ids) for lp, ids in candidates
                     if ids[-1] == EOS]
        finished = sorted(finished, key=lambda x: -x[0])[:k]
        alive = [(lp, ids) for lp, ids in candidates if ids[-1] != EOS][:k]
    score, best = finished[0] if finished else (alive[0][0] / penalty(length, alpha),
                                                alive[0][1])
    return best + [0] * (length - len(best)), score


DECODE_SOURCE = np.array([[5, 3, 7, 2, 0, 0],
                          [4, 4, 6, 8, 2, 3],
                          [8, 2, 0, 0, 0, 0],
                          [3, 6, 5, 7, 4, 0]], np.int32)


ALPHAS = (0.6, 0.0)


@pytest.fixture(scope="module")
def decoded():
    """Greedy and beam search (one per alpha) on one model, run together: one session
    and one compile instead of three. Returns ({decoder: (ids, scores)}, weights)."""
    with tf.Graph().as_default():
        source = ids_placeholder()
        fetches = {"greedy": transformer.greedy_decode(source, TINY, decode_length=6)}
        for alpha in ALPHAS:
            fetches[alpha] = transformer.beam_search(source, TINY, beam_size=3, alpha=alpha,
                                                     decode_length=6)
        with tf.Session() as sess:
            # Kernels larger than at initialization make the output distributions depend
            # on the context, so that real choices (and EOS) occur.
            initialize(sess, seed=5, embedding_scale=1.0, kernel_scale=2.0)
            return sess.run(fetches, {source: DECODE_SOURCE}), session_weights(sess)


def test_greedy_decode_matches_numpy(decoded):
    (got_ids, got_lp), w = decoded[0]["greedy"], decoded[1]
    expected = [np_greedy(s, w, TINY, 6) for s in DECODE_SOURCE]
    np.testing.assert_array_equal(got_ids, [e[0] for e in expected])
    np.testing.assert_allclose(got_lp, [e[1] for e in expected], rtol=1e-4, atol=1e-4)
    # The case covers both an early EOS and a sequence that runs to the length limit.
    assert (got_ids[:, -1] == 0).any() and (got_ids[:, -1] != 0).any(), got_ids


@pytest.mark.parametrize("alpha", ALPHAS)
def test_beam_search_matches_numpy(decoded, alpha):
    (got_ids, got_scores), w = decoded[0][alpha], decoded[1]
    expected = [np_beam_search(s, w, TINY, 3, alpha, 6) for s in DECODE_SOURCE]
    np.testing.assert_array_equal(got_ids, [e[0] for e in expected])
    np.testing.assert_allclose(got_scores, [e[1] for e in expected], rtol=1e-4, atol=1e-4)
    # Beam search finds more probable sequences than greedy here, so the case shows more
    # than greedy behaviour.
    assert (got_ids != decoded[0]["greedy"][0]).any()


def test_infer_mode_decodes_with_beam_search():
    spec = transformer.model_fn({"inputs": ids_placeholder()}, None, "infer",
                                params={"config": TINY, "max_length": 5})
    assert spec.loss is None and spec.train_op is None
    assert spec.predictions["ids"].shape.as_list() == [None, 5]
    assert spec.predictions["ids"].dtype == tf.int32
