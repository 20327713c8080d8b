"""A TF1-style seq2seq model with attention learns to reverse short token sequences, then
decodes them with beam search: TrainingHelper + BasicDecoder + AttentionWrapper over a
GRU encoder for training, BeamSearchDecoder over the tiled encoder for inference, all
through dynamic_decode (one compiled loop each)."""

import numpy as np
import pytest

import tensorflux as tf

seq2seq = tf.contrib.seq2seq

VOCAB, EMB, UNITS, BATCH, BEAM = 10, 16, 32, 32, 3
GO, EOS = 1, 2  # 0 pads; tokens are 3..VOCAB-1


def _batch(rng, n, low=3, high=6):
    """Sources of random length in [low, high]; targets are the reversed source + EOS."""
    lengths = rng.randint(low, high + 1, size=n)
    src = np.zeros((n, high), np.int32)
    dec_in = np.zeros((n, high + 1), np.int32)
    dec_out = np.zeros((n, high + 1), np.int32)
    for i, length in enumerate(lengths):
        tokens = rng.randint(3, VOCAB, size=length)
        src[i, :length] = tokens
        dec_in[i, 0], dec_in[i, 1:length + 1] = GO, tokens[::-1]
        dec_out[i, :length], dec_out[i, length] = tokens[::-1], EOS
    return src, lengths.astype(np.int32), dec_in, dec_out, (lengths + 1).astype(np.int32)


# ~16 s on an idle 2-core machine (mostly XLA compiling the training step, the variable
# initializer and the beam search), well over 20 s under load: slow. The default-run
# checks of the same pieces are the NumPy-reference tests in test_seq2seq.py (attention
# steps, TrainingHelper decoding, beam search, sequence_loss); the numbers come from
# benchmarks/seq2seq_reverse.py.
@pytest.mark.slow
def test_attention_seq2seq_learns_to_reverse_and_beam_decodes():
    tf.set_random_seed(7)
    rng = np.random.RandomState(0)
    src = tf.placeholder(tf.int32, [None, None])
    src_len = tf.placeholder(tf.int32, [None])
    dec_in = tf.placeholder(tf.int32, [None, None])
    dec_out = tf.placeholder(tf.int32, [None, None])
    dec_len = tf.placeholder(tf.int32, [None])
    batch = tf.shape(src)[0]
    embedding = tf.get_variable("embedding", [VOCAB, EMB])
    enc_out, enc_state = tf.nn.dynamic_rnn(
        tf.nn.rnn_cell.GRUCell(UNITS), tf.nn.embedding_lookup(embedding, src),
        sequence_length=src_len, dtype=tf.float32, scope="encoder")
    projection = tf.layers.Dense(VOCAB, name="output_projection")

    def attention_cell(memory, lengths):
        mechanism = seq2seq.BahdanauAttention(UNITS, memory, memory_sequence_length=lengths,
                                              normalize=True)
        return seq2seq.AttentionWrapper(tf.nn.rnn_cell.GRUCell(UNITS), mechanism,
                                        attention_layer_size=UNITS)

    with tf.variable_scope("decode"):
        cell = attention_cell(enc_out, src_len)
        initial = cell.zero_state(batch, tf.float32).clone(cell_state=enc_state)
        helper = seq2seq.TrainingHelper(tf.nn.embedding_lookup(embedding, dec_in), dec_len)
        outputs, _, lengths = seq2seq.dynamic_decode(
            seq2seq.BasicDecoder(cell, helper, initial, output_layer=projection))
    logits = outputs.rnn_output
    steps = tf.shape(logits)[1]
    weights = tf.sequence_mask(dec_len, steps, dtype=tf.float32)
    targets = dec_out[:, :steps]
    loss = seq2seq.sequence_loss(logits, targets, weights)
    train = tf.train.AdamOptimizer(0.01).minimize(loss)
    hits = tf.cast(tf.equal(tf.argmax(logits, -1, output_type=tf.int32), targets), tf.float32)
    accuracy = tf.reduce_sum(hits * weights) / tf.reduce_sum(weights)

    with tf.variable_scope("decode", reuse=True):
        beam_cell = attention_cell(seq2seq.tile_batch(enc_out, BEAM),
                                   seq2seq.tile_batch(src_len, BEAM))
        beam_initial = beam_cell.zero_state(batch * BEAM, tf.float32).clone(
            cell_state=seq2seq.tile_batch(enc_state, BEAM))
        beam_decoder = seq2seq.BeamSearchDecoder(
            beam_cell, embedding, tf.fill([batch], GO), EOS, beam_initial, BEAM,
            output_layer=projection, length_penalty_weight=0.5)
        beams, beam_state, _ = seq2seq.dynamic_decode(beam_decoder, maximum_iterations=12)

    names = {v.op.name for v in tf.trainable_variables()}
    assert {"decode/memory_layer/kernel", "decode/decoder/output_projection/kernel",
            "decode/decoder/attention_wrapper/attention_layer/kernel",
            "decode/decoder/attention_wrapper/bahdanau_attention/query_layer/kernel",
            "decode/decoder/attention_wrapper/bahdanau_attention/attention_v",
            "decode/decoder/attention_wrapper/bahdanau_attention/attention_g",
            "decode/decoder/attention_wrapper/bahdanau_attention/attention_b",
            "decode/decoder/attention_wrapper/gru_cell/gates/kernel"} <= names
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(250):
            s, sl, di, do, dl = _batch(rng, BATCH)
            sess.run(train, {src: s, src_len: sl, dec_in: di, dec_out: do, dec_len: dl})
        s, sl, di, do, dl = _batch(rng, 100)
        acc, decoded_lengths = sess.run([accuracy, lengths],
                                        {src: s, src_len: sl, dec_in: di, dec_out: do,
                                         dec_len: dl})
        predicted, final_lengths = sess.run([beams.predicted_ids, beam_state.lengths],
                                            {src: s, src_len: sl})
    assert acc >= 0.95, acc
    np.testing.assert_array_equal(decoded_lengths, dl)
    best = predicted[:, :, 0]  # beams come best first
    correct = total = exact = 0
    for i in range(len(s)):
        want = do[i, :dl[i]]
        got = best[i, :dl[i]] if best.shape[1] >= dl[i] else np.pad(best[i], (0, dl[i]))
        correct += int(np.sum(got[:len(want)] == want))
        total += len(want)
        exact += int(np.array_equal(got[:len(want)], want))
    assert correct / total >= 0.95, correct / total
    assert exact / len(s) >= 0.9, exact / len(s)
    # The best beam ends with EOS after the reversed source: length = source length + 1.
    assert np.mean(final_lengths[:, 0] == dl) >= 0.9
