"""tf.contrib.seq2seq against NumPy: sequence_loss, tile_batch, hardmax, attention
mechanisms and AttentionWrapper steps, dynamic_decode with TF1's options, the helpers,
beam search scoring and a full beam search, with TF1's variable names and errors."""

import numpy as np
import pytest

import tensorflux as tf

seq2seq = tf.contrib.seq2seq


def np_softmax(x, axis=-1):
    e = np.exp(x - x.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)


def np_log_softmax(x):
    return np.log(np_softmax(x))


def _values(sess, scope_vars):
    return {v.name: sess.run(v) for v in scope_vars}


# -- sequence_loss, tile_batch, hardmax ----------------------------------------------------

def test_sequence_loss_reductions_match_numpy():
    rng = np.random.RandomState(0)
    logits = rng.randn(2, 3, 4).astype(np.float32)
    targets = rng.randint(0, 4, (2, 3)).astype(np.int32)
    weights = np.array([[1, 1, 0], [1, 0.5, 0]], np.float32)
    xent = -np.take_along_axis(np_log_softmax(logits.astype(np.float64)),
                               targets[..., None], 2)[..., 0] * weights
    count = lambda axis=None: np.count_nonzero(weights, axis=axis)

    def div0(a, b):  # TF's div_no_nan: 0 where the denominator is 0
        return np.where(b == 0, 0.0, a / np.where(b == 0, 1, b))

    want = {
        (True, True, False, False): div0(xent.sum(), weights.sum()),
        (False, False, True, True): div0(xent.sum(), count()),
        (True, False, False, False): div0(xent.sum(1), weights.sum(1)),
        (False, True, False, False): div0(xent.sum(0), weights.sum(0)),
        (False, False, True, False): div0(xent.sum(1), count(1)),
        (False, False, False, True): div0(xent.sum(0), count(0)),
        (False, False, False, False): xent,
    }
    losses = {flags: seq2seq.sequence_loss(
        tf.constant(logits), tf.constant(targets), tf.constant(weights),
        average_across_timesteps=flags[0], average_across_batch=flags[1],
        sum_over_timesteps=flags[2], sum_over_batch=flags[3]) for flags in want}
    assert losses[(True, True, False, False)].op.name == "sequence_loss/div_no_nan"
    with tf.Session() as sess:
        got = sess.run(losses)
    for flags, value in want.items():
        np.testing.assert_allclose(got[flags], value, rtol=1e-5, err_msg=str(flags))
    with pytest.raises(ValueError, match="Logits must be a"):
        seq2seq.sequence_loss(tf.zeros([2, 3]), tf.zeros([2, 3], tf.int32), tf.zeros([2, 3]))
    with pytest.raises(ValueError, match="average_across_timesteps and sum_over_timesteps "
                                         "cannot be set to True at same time"):
        seq2seq.sequence_loss(tf.zeros([2, 3, 4]), tf.zeros([2, 3], tf.int32),
                              tf.zeros([2, 3]), sum_over_timesteps=True)


def test_tile_batch_and_hardmax():
    x = tf.placeholder(tf.float32, [None, 2])
    tiled = seq2seq.tile_batch((x, tf.constant([[1], [2]])), 3)
    assert tiled[0].shape.as_list() == [None, 2] and tiled[1].shape.as_list() == [6, 1]
    logits = np.array([[0.1, 2.0, -1.0], [3.0, 0.0, 2.9]], np.float32)
    with tf.Session() as sess:
        a, b, h = sess.run(tiled + (seq2seq.hardmax(logits),), {x: [[1, 2], [3, 4]]})
    np.testing.assert_array_equal(a, np.repeat([[1, 2], [3, 4]], 3, axis=0))
    np.testing.assert_array_equal(b[:, 0], [1, 1, 1, 2, 2, 2])
    np.testing.assert_array_equal(h, [[0, 1, 0], [1, 0, 0]])
    with pytest.raises(ValueError, match="t must have statically known rank"):
        seq2seq.tile_batch(tf.constant(1.0), 2)


# -- attention ------------------------------------------------------------------------------

def _np_attention_step(kind, v, x, h, prev_att, memory, lengths, normalize_or_scale):
    """One AttentionWrapper step over BasicRNNCell, in NumPy; v: variable values."""
    mask = (np.arange(memory.shape[1])[None] < lengths[:, None]).astype(np.float64)
    values = memory * mask[..., None]
    keys = values @ v["memory_layer/kernel:0"]
    cell_in = np.concatenate([x, prev_att], 1)
    h = np.tanh(np.concatenate([cell_in, h], 1) @ v["cell/kernel"] + v["cell/bias"])
    if kind == "bahdanau":
        q = h @ v["query"]
        att_v = v["attention_v"]
        if normalize_or_scale:
            att_v = v["attention_g"] * att_v / np.sqrt(np.sum(att_v ** 2))
            score = np.sum(att_v * np.tanh(keys + q[:, None] + v["attention_b"]), 2)
        else:
            score = np.sum(att_v * np.tanh(keys + q[:, None]), 2)
    else:
        score = np.einsum("bu,btu->bt", h, keys)
        if normalize_or_scale:
            score = v["attention_g"] * score
    score = np.where(mask > 0, score, -np.inf)
    alignments = np_softmax(score)
    context = np.einsum("bt,btd->bd", alignments, values)
    attention = np.concatenate([h, context], 1) @ v["attention_layer"]
    return h, attention, alignments


@pytest.mark.parametrize("kind,flag", [("bahdanau", True), ("bahdanau", False),
                                       ("luong", True)])
def test_attention_wrapper_step_matches_numpy(kind, flag):
    batch, time, depth, units, att = 2, 4, 3, 5, 6
    rng = np.random.RandomState(1)
    memory = rng.randn(batch, time, depth)
    lengths = np.array([4, 2], np.int32)
    xs = rng.randn(3, batch, 2)
    with tf.variable_scope("model"):
        if kind == "bahdanau":
            mech = seq2seq.BahdanauAttention(units, memory, memory_sequence_length=lengths,
                                             normalize=flag, dtype=tf.float64)
        else:
            mech = seq2seq.LuongAttention(units, memory, memory_sequence_length=lengths,
                                          scale=flag, dtype=tf.float64)
        cell = seq2seq.AttentionWrapper(tf.nn.rnn_cell.BasicRNNCell(units, dtype=tf.float64),
                                        mech, attention_layer_size=att, alignment_history=True)
        state = cell.zero_state(batch, tf.float64)
        outs = []
        for t in range(3):
            out, state = cell(tf.constant(xs[t]), state)
            outs.append(out)
    history = state.alignment_history.stack()
    names = sorted(v.name for v in tf.trainable_variables())
    inner = "model/attention_wrapper/"
    expected = {inner + "basic_rnn_cell/kernel:0", inner + "basic_rnn_cell/bias:0",
                inner + "attention_layer/kernel:0", "model/memory_layer/kernel:0"}
    if kind == "bahdanau":
        expected |= {inner + "bahdanau_attention/query_layer/kernel:0",
                     inner + "bahdanau_attention/attention_v:0"}
        if flag:
            expected |= {inner + "bahdanau_attention/attention_g:0",
                         inner + "bahdanau_attention/attention_b:0"}
    else:
        expected |= {inner + "luong_attention/attention_g:0"}
    assert set(names) == expected
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        raw = {v.name: sess.run(v) for v in tf.trainable_variables()}
        got_outs, got_cell, got_time, got_history = sess.run(
            [outs, state.cell_state, state.time, history])
    sub = kind + "_attention/"
    v = {"memory_layer/kernel:0": raw["model/memory_layer/kernel:0"],
         "cell/kernel": raw[inner + "basic_rnn_cell/kernel:0"],
         "cell/bias": raw[inner + "basic_rnn_cell/bias:0"],
         "attention_layer": raw[inner + "attention_layer/kernel:0"]}
    for key in ("attention_v", "attention_g", "attention_b"):
        if inner + sub + key + ":0" in raw:
            v[key] = raw[inner + sub + key + ":0"]
    if kind == "bahdanau":
        v["query"] = raw[inner + sub + "query_layer/kernel:0"]
    h, att_prev, aligns = np.zeros((batch, units)), np.zeros((batch, att)), []
    for t in range(3):
        h, att_prev, alignment = _np_attention_step(kind, v, xs[t], h, att_prev, memory,
                                                    lengths, flag)
        aligns.append(alignment)
        np.testing.assert_allclose(got_outs[t], att_prev, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(got_cell, h, rtol=1e-10)
    np.testing.assert_allclose(got_history, np.array(aligns), rtol=1e-10, atol=1e-14)
    assert got_time == 3


def _np_monotonic(p, previous):
    """TF's recurrence: q[i] = (1 - p[i-1]) q[i-1] + previous[i]; attention = p q."""
    q = np.zeros_like(p)
    for i in range(p.shape[1]):
        q[:, i] = (q[:, i - 1] * (1 - p[:, i - 1]) if i else 0) + previous[:, i]
    return p * q


def test_monotonic_attention_mechanisms_match_numpy():
    batch, time, depth, units = 2, 4, 3, 5
    rng = np.random.RandomState(3)
    memory = rng.randn(batch, time, depth)
    lengths = np.array([4, 3], np.int32)
    query = rng.randn(batch, units)
    previous = np.array([[0.1, 0.6, 0.3, 0.0], [0.5, 0.5, 0.0, 0.0]])
    with tf.variable_scope("mono"):
        bahdanau = seq2seq.BahdanauMonotonicAttention(
            units, memory.astype(np.float32), memory_sequence_length=lengths,
            score_bias_init=-0.5, mode="recursive")
        luong = seq2seq.LuongMonotonicAttention(
            units, memory.astype(np.float32), memory_sequence_length=lengths, scale=True,
            score_bias_init=0.25, mode="parallel")
        q32, prev32 = tf.constant(query, tf.float32), tf.constant(previous, tf.float32)
        b_align, b_state = bahdanau(q32, prev32)
        l_align, _ = luong(q32, prev32)
        initial = luong.initial_alignments(batch, tf.float32)
    assert b_state is b_align
    names = {v.op.name for v in tf.global_variables()}
    assert names == {"mono/memory_layer/kernel", "mono/memory_layer_1/kernel",
                     "mono/bahdanau_monotonic_attention/query_layer/kernel",
                     "mono/bahdanau_monotonic_attention/attention_v",
                     "mono/bahdanau_monotonic_attention/attention_score_bias",
                     "mono/luong_monotonic_attention/attention_g",
                     "mono/luong_monotonic_attention/attention_score_bias"}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        v = {n: sess.run(tf.get_default_graph().get_tensor_by_name(n + ":0")) for n in names}
        got_b, got_l, got_init = sess.run([b_align, l_align, initial])
    mask = np.arange(time)[None] < lengths[:, None]
    values = memory * mask[..., None]
    assert v["mono/bahdanau_monotonic_attention/attention_score_bias"] == -0.5
    keys = values @ v["mono/memory_layer/kernel"]
    q = query @ v["mono/bahdanau_monotonic_attention/query_layer/kernel"]
    score = np.sum(v["mono/bahdanau_monotonic_attention/attention_v"]
                   * np.tanh(keys + q[:, None]), 2) - 0.5
    p = np.where(mask, 1 / (1 + np.exp(-score)), 0.0)  # masked scores are -inf
    np.testing.assert_allclose(got_b, _np_monotonic(p, previous), rtol=1e-5, atol=1e-7)
    keys = values @ v["mono/memory_layer_1/kernel"]
    score = v["mono/luong_monotonic_attention/attention_g"] * np.einsum(
        "bu,btu->bt", query, keys) + 0.25
    p = np.where(mask, 1 / (1 + np.exp(-score)), 0.0)
    np.testing.assert_allclose(got_l, _np_monotonic(p, previous), rtol=1e-5, atol=1e-7)
    np.testing.assert_array_equal(got_init, [[1, 0, 0, 0], [1, 0, 0, 0]])
    # As in TF 1.15: the score bias is made from a Python float (float32), so other
    # dtypes fail in get_variable.
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="Initializer type '<dtype: 'float32'>' and "
                                             "explicit dtype '<dtype: 'float64'>' don't"):
            seq2seq.LuongMonotonicAttention(units, memory, dtype=tf.float64)(
                tf.constant(query), tf.constant(previous))


def test_attention_errors_and_state_clone():
    memory = tf.zeros([2, 3, 4])
    mech = seq2seq.LuongAttention(5, memory)
    with pytest.raises(ValueError, match="Incompatible or unknown inner dimensions between "
                                         "query and keys"):
        mech(tf.zeros([2, 4]), None)
    cell = tf.nn.rnn_cell.BasicRNNCell(5)
    with pytest.raises(TypeError, match="attention_mechanism must be an AttentionMechanism"):
        seq2seq.AttentionWrapper(cell, object())
    with pytest.raises(ValueError, match="Only one of attention_layer_size and "
                                         "attention_layer should be set"):
        seq2seq.AttentionWrapper(cell, mech, attention_layer_size=3,
                                 attention_layer=tf.layers.Dense(3))
    wrapper = seq2seq.AttentionWrapper(cell, mech)
    state = wrapper.zero_state(2, tf.float32)
    assert isinstance(state, seq2seq.AttentionWrapperState) and wrapper.output_size == 4
    with pytest.raises(ValueError, match="expected to be same as the one to clone"):
        state.clone(cell_state=tf.zeros([2, 7]))
    with pytest.raises(TypeError, match="Expected state to be instance of "
                                        "AttentionWrapperState"):
        wrapper(tf.zeros([2, 1]), tf.zeros([2, 5]))


# -- dynamic_decode and helpers ------------------------------------------------------------

def _np_rnn_decode(inputs, lengths, kernel, bias, proj_k, proj_b, impute):
    """BasicRNNCell + dense projection over batch-major inputs, as dynamic_decode with a
    TrainingHelper runs it (the loop stops when every sequence finished)."""
    batch = inputs.shape[0]
    h = np.zeros((batch, bias.shape[0]))
    logits, states = [], []
    for t in range(int(lengths.max())):
        new = np.tanh(np.concatenate([inputs[:, t], h], 1) @ kernel + bias)
        out = new @ proj_k + proj_b
        done = (t >= lengths)[:, None]
        if impute:
            out, new = np.where(done, 0.0, out), np.where(done, h, new)
        logits.append(out)
        h = new
    return np.stack(logits, 1), h


def test_dynamic_decode_training_helper_matches_numpy():
    batch, depth, units, vocab = 3, 2, 4, 5
    rng = np.random.RandomState(2)
    inputs = tf.placeholder(tf.float64, [batch, None, depth])
    lengths = tf.placeholder(tf.int32, [batch])
    cell = tf.nn.rnn_cell.BasicRNNCell(units, dtype=tf.float64)
    proj = tf.layers.Dense(vocab, name="proj", dtype=tf.float64)
    init = cell.zero_state(batch, tf.float64)
    results = {}
    for impute in (False, True):
        helper = seq2seq.TrainingHelper(inputs, lengths)
        decoder = seq2seq.BasicDecoder(cell, helper, init, output_layer=proj)
        results[impute] = seq2seq.dynamic_decode(decoder, impute_finished=impute,
                                                 scope="decoder")
        tf.get_variable_scope().reuse_variables()
    helper = seq2seq.TrainingHelper(tf.transpose(inputs, [1, 0, 2]), lengths, time_major=True)
    capped = seq2seq.dynamic_decode(seq2seq.BasicDecoder(cell, helper, init, proj),
                                    output_time_major=True, maximum_iterations=2,
                                    scope="decoder")
    outputs, state, seq_lens = results[True]
    assert isinstance(outputs, seq2seq.BasicDecoderOutput)
    assert outputs.rnn_output.shape.as_list() == [batch, None, vocab]
    assert sorted(v.name for v in tf.trainable_variables()) == [
        "decoder/basic_rnn_cell/bias:0", "decoder/basic_rnn_cell/kernel:0",
        "decoder/proj/bias:0", "decoder/proj/kernel:0"]
    xv = rng.randn(batch, 4, depth)
    lv = np.array([4, 2, 3], np.int32)
    feed = {inputs: xv, lengths: lv}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        kernel, bias, pk, pb = [sess.run(tf.get_variable(n, dtype=tf.float64)) for n in (
            "decoder/basic_rnn_cell/kernel", "decoder/basic_rnn_cell/bias",
            "decoder/proj/kernel", "decoder/proj/bias")]
        got = sess.run({k: v for k, v in results.items()}, feed)
        got_capped = sess.run(capped, feed)
    for impute in (False, True):
        out, st, sl = got[impute]
        want_logits, want_state = _np_rnn_decode(xv, lv, kernel, bias, pk, pb, impute)
        np.testing.assert_allclose(out.rnn_output, want_logits, rtol=1e-10, atol=1e-12)
        np.testing.assert_array_equal(out.sample_id, want_logits.argmax(-1))
        np.testing.assert_array_equal(sl, lv)
        if impute:
            np.testing.assert_allclose(st, want_state, rtol=1e-10)
    out, _, sl = got_capped
    want_logits, _ = _np_rnn_decode(xv, np.minimum(lv, 2), kernel, bias, pk, pb, False)
    np.testing.assert_allclose(out.rnn_output, want_logits.transpose(1, 0, 2), rtol=1e-10)
    np.testing.assert_array_equal(sl, [2, 2, 2])


def test_greedy_sample_and_scheduled_helpers():
    """A decoder whose logits favour (previous id + 1) mod vocab: greedy decoding counts
    up to end_token; sampling at a low temperature does the same; scheduled sampling at
    probability 0 only reads the inputs."""
    vocab, batch = 6, 2
    emb = np.eye(vocab)
    succ = np.roll(np.eye(vocab), 1, axis=1) * 20.0  # logits = onehot(prev) @ succ

    class Lookup(tf.nn.rnn_cell.RNNCell):
        output_size, state_size = vocab, 1

        def call(self, inputs, state):
            return tf.matmul(inputs, tf.constant(succ, tf.float64)), state

    cell = Lookup(dtype=tf.float64)
    init = tf.zeros([batch, 1], tf.float64)
    start = tf.constant([0, 2])
    greedy = seq2seq.dynamic_decode(seq2seq.BasicDecoder(
        cell, seq2seq.GreedyEmbeddingHelper(tf.constant(emb), start, 4), init))
    sample = seq2seq.dynamic_decode(seq2seq.BasicDecoder(
        cell, seq2seq.SampleEmbeddingHelper(tf.constant(emb), start, 4,
                                            softmax_temperature=0.05, seed=3), init))
    inputs = tf.constant(emb[[[1, 2, 3], [3, 4, 5]]])
    scheduled = seq2seq.dynamic_decode(seq2seq.BasicDecoder(
        cell, seq2seq.ScheduledEmbeddingTrainingHelper(inputs, [3, 3], tf.constant(emb), 0.0),
        init))
    with tf.Session() as sess:
        g, s, sch = sess.run([greedy, sample, scheduled])
    # Without impute_finished a finished entry keeps stepping (its length stays 2).
    np.testing.assert_array_equal(g[0].sample_id, [[1, 2, 3, 4], [3, 4, 5, 0]])
    np.testing.assert_array_equal(g[2], [4, 2])
    np.testing.assert_array_equal(s[0].sample_id, g[0].sample_id)
    np.testing.assert_array_equal(sch[0].sample_id, -np.ones((2, 3)))
    np.testing.assert_allclose(sch[0].rnn_output, np.stack(
        [emb[[[1, 2, 3], [3, 4, 5]]][:, t] @ succ for t in range(3)], 1))


def test_decoder_argument_errors():
    with pytest.raises(TypeError, match="Expected decoder to be type Decoder"):
        seq2seq.dynamic_decode(object())
    with pytest.raises(ValueError, match="start_tokens must be a vector"):
        seq2seq.GreedyEmbeddingHelper(tf.zeros([3, 2]), 0, 1)
    with pytest.raises(ValueError, match="Expected sequence_length to be a vector"):
        seq2seq.TrainingHelper(tf.zeros([2, 3, 1]), 3)
    with pytest.raises(TypeError, match="helper must be a Helper"):
        seq2seq.BasicDecoder(tf.nn.rnn_cell.BasicRNNCell(2), object(), None)


# -- beam search ----------------------------------------------------------------------------

def test_beam_scores_penalties_and_masking_match_numpy():
    from tensorflux._src.seq2seq import beam_search_decoder as bsd
    rng = np.random.RandomState(4)
    log_probs = rng.randn(2, 3, 4).astype(np.float32)
    lengths = rng.randint(1, 6, (2, 3, 4)).astype(np.int64)
    finished = np.array([[True, False, True], [False, False, True]])
    attention = rng.uniform(0, 2, (2, 3, 5)).astype(np.float32)
    attention[0, 0, 4] = 0.0
    scores = bsd._get_scores(tf.constant(log_probs), tf.constant(lengths), 0.6, 0.3,
                             tf.constant(finished), tf.constant(attention))
    masked = bsd._mask_probs(tf.constant(log_probs), 2, tf.constant(finished))
    with tf.Session() as sess:
        got_scores, got_masked = sess.run([scores, masked])
    penalty = ((5.0 + lengths) / 6.0) ** 0.6
    acc = np.where(attention == 0, 1.0, attention)
    coverage = np.sum(np.log(np.minimum(acc, 1.0)), 2) * finished
    np.testing.assert_allclose(got_scores, log_probs / penalty + 0.3 * coverage[..., None],
                               rtol=1e-5)
    row = np.full(4, np.finfo(np.float32).min)
    row[2] = 0.0
    np.testing.assert_array_equal(got_masked, np.where(finished[..., None], row, log_probs))


def _np_beam_search(step_logits_fn, batch, beam, end, max_steps, alpha):
    """TF1's beam search step by step in NumPy (one batch entry at a time)."""
    results = []
    for b in range(batch):
        log_probs = np.array([0.0] + [-np.inf] * (beam - 1))
        finished = np.zeros(beam, bool)
        lengths = np.zeros(beam, np.int64)
        prev = np.zeros(beam, np.int64)  # the token each beam last emitted (0 = start)
        steps = []
        for _ in range(max_steps):
            logits = step_logits_fn(prev)
            vocab = logits.shape[1]
            step_lp = np_log_softmax(logits)
            row = np.full(vocab, np.finfo(np.float64).min)
            row[end] = 0.0
            step_lp = np.where(finished[:, None], row, step_lp)
            total = log_probs[:, None] + step_lp
            add = np.where(np.arange(vocab)[None] == end, 0, 1) * (~finished)[:, None]
            new_len = lengths[:, None] + add
            scores = total / (((5.0 + new_len) / 6.0) ** alpha)
            flat = scores.reshape(-1)
            order = np.argsort(-flat, kind="stable")[:beam]
            parent, word = order // vocab, order % vocab
            log_probs = total.reshape(-1)[order]
            was_finished = finished[parent]
            finished = was_finished | (word == end)
            lengths = lengths[parent] + (~was_finished)
            prev = word
            steps.append((word, parent, flat[order]))
            if finished.all():
                break
        words = np.array([s[0] for s in steps])
        parents = np.array([s[1] for s in steps])
        seq = np.zeros_like(words)
        beam_idx = np.arange(beam)
        for t in range(len(steps) - 1, -1, -1):
            seq[t] = words[t, beam_idx]
            beam_idx = parents[t, beam_idx]
        results.append((seq, lengths, steps[-1][2]))
    return results


def test_beam_search_decoder_matches_numpy():
    vocab, beam, batch, end = 5, 3, 2, 4
    rng = np.random.RandomState(5)
    table = rng.randn(vocab, vocab) * 2.0  # logits depend only on the previous token

    class Table(tf.nn.rnn_cell.RNNCell):
        output_size, state_size = vocab, 1

        def call(self, inputs, state):
            return tf.matmul(inputs, tf.constant(table, tf.float64)), state + 1.0

    init = seq2seq.tile_batch(tf.zeros([batch, 1], tf.float64), beam)
    decoder = seq2seq.BeamSearchDecoder(Table(dtype=tf.float64), tf.constant(np.eye(vocab)),
                                        tf.zeros([batch], tf.int32), end, init, beam,
                                        length_penalty_weight=0.7)
    out, state, lens = seq2seq.dynamic_decode(decoder, maximum_iterations=6)
    assert isinstance(out, seq2seq.FinalBeamSearchDecoderOutput)
    assert isinstance(state, seq2seq.BeamSearchDecoderState)
    assert out.predicted_ids.shape.as_list() == [batch, None, beam]
    with tf.Session() as sess:
        got, got_state = sess.run([out, state])
    want = _np_beam_search(lambda prev: table[prev], batch, beam, end, 6, 0.7)
    for b, (seq, lengths, scores) in enumerate(want):
        steps = seq.shape[0]
        predicted = got.predicted_ids[b, :steps]
        for w in range(beam):  # TF's gather_tree: end_token after a beam's first end
            hits = np.flatnonzero(seq[:, w] == end)
            if hits.size:
                seq[hits[0] + 1:, w] = end
        np.testing.assert_array_equal(predicted, seq)
        np.testing.assert_array_equal(got_state.lengths[b], lengths)
        # TF computes the length penalty in float32, whatever the logits' dtype.
        np.testing.assert_allclose(got.beam_search_decoder_output.scores[b, steps - 1], scores,
                                   rtol=1e-6)
    assert got_state.cell_state.shape == (batch, beam, 1)


def test_gather_tree_rejects_invalid_parents():
    ids = np.zeros((3, 1, 2), np.int32)
    parents = np.array([[[0, 0]], [[0, 7]], [[0, 1]]], np.int32)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"Saw invalid parent id 7 at \(batch, time, beam\) == "
                                 r"\(0, 0, 1\)"):
            sess.run(seq2seq.gather_tree(ids, parents, [3], 5))
