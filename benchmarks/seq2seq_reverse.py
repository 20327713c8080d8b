"""A tf.contrib.seq2seq model with attention learns to reverse token sequences.

The TF1 program: a GRU encoder (tf.nn.dynamic_rnn), a decoder of AttentionWrapper
(BahdanauAttention, normalized) over a GRU cell, trained with TrainingHelper +
BasicDecoder + dynamic_decode + sequence_loss and Adam; inference with
BeamSearchDecoder over the tiled encoder outputs (tile_batch), length penalty 0.5.
Sources are 3..MAX_LEN random tokens; the target is the reversed source, then EOS.

Prints, on held-out sequences: teacher-forced token accuracy, beam-search token
accuracy and exact-sequence accuracy of the best beam, plus training time (first step,
which compiles, separately) and beam-decoding time. Writes
benchmarks/results/seq2seq_reverse.json atomically.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import jax
import numpy as np

import tensorflux as tf

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import timing  # noqa: E402  (the benchmarks' shared JSON writer)

seq2seq = tf.contrib.seq2seq
GO, EOS = 1, 2  # 0 pads; tokens are 3..vocab-1


def batch(rng, n, vocab, max_len, min_len=3):
    lengths = rng.randint(min_len, max_len + 1, size=n)
    src = np.zeros((n, max_len), np.int32)
    dec_in = np.zeros((n, max_len + 1), np.int32)
    dec_out = np.zeros((n, max_len + 1), np.int32)
    for i, length in enumerate(lengths):
        tokens = rng.randint(3, vocab, size=length)
        src[i, :length] = tokens
        dec_in[i, 0], dec_in[i, 1:length + 1] = GO, tokens[::-1]
        dec_out[i, :length], dec_out[i, length] = tokens[::-1], EOS
    return src, lengths.astype(np.int32), dec_in, dec_out, (lengths + 1).astype(np.int32)


def build(args):
    p = {name: tf.placeholder(tf.int32, shape, name=name) for name, shape in
         [("src", [None, None]), ("src_len", [None]), ("dec_in", [None, None]),
          ("dec_out", [None, None]), ("dec_len", [None])]}
    n = tf.shape(p["src"])[0]
    embedding = tf.get_variable("embedding", [args.vocab, args.embedding])
    enc_out, enc_state = tf.nn.dynamic_rnn(
        tf.nn.rnn_cell.GRUCell(args.units), tf.nn.embedding_lookup(embedding, p["src"]),
        sequence_length=p["src_len"], dtype=tf.float32, scope="encoder")
    projection = tf.layers.Dense(args.vocab, name="output_projection")

    def attention_cell(memory, lengths):
        mechanism = seq2seq.BahdanauAttention(args.units, memory,
                                              memory_sequence_length=lengths, normalize=True)
        return seq2seq.AttentionWrapper(tf.nn.rnn_cell.GRUCell(args.units), mechanism,
                                        attention_layer_size=args.units)

    with tf.variable_scope("decode"):
        cell = attention_cell(enc_out, p["src_len"])
        initial = cell.zero_state(n, tf.float32).clone(cell_state=enc_state)
        helper = seq2seq.TrainingHelper(tf.nn.embedding_lookup(embedding, p["dec_in"]),
                                        p["dec_len"])
        outputs, _, _ = seq2seq.dynamic_decode(
            seq2seq.BasicDecoder(cell, helper, initial, output_layer=projection))
    logits = outputs.rnn_output
    steps = tf.shape(logits)[1]
    weights = tf.sequence_mask(p["dec_len"], steps, dtype=tf.float32)
    targets = p["dec_out"][:, :steps]
    loss = seq2seq.sequence_loss(logits, targets, weights)
    train = tf.train.AdamOptimizer(args.learning_rate).minimize(loss)
    hits = tf.cast(tf.equal(tf.argmax(logits, -1, output_type=tf.int32), targets), tf.float32)
    accuracy = tf.reduce_sum(hits * weights) / tf.reduce_sum(weights)

    with tf.variable_scope("decode", reuse=True):
        beam_cell = attention_cell(seq2seq.tile_batch(enc_out, args.beam),
                                   seq2seq.tile_batch(p["src_len"], args.beam))
        beam_initial = beam_cell.zero_state(n * args.beam, tf.float32).clone(
            cell_state=seq2seq.tile_batch(enc_state, args.beam))
        decoder = seq2seq.BeamSearchDecoder(
            beam_cell, embedding, tf.fill([n], GO), EOS, beam_initial, args.beam,
            output_layer=projection, length_penalty_weight=0.5)
        beams, _, _ = seq2seq.dynamic_decode(decoder, maximum_iterations=2 * args.max_len)
    return p, loss, train, accuracy, beams.predicted_ids[:, :, 0]


def beam_scores(best, dec_out, dec_len):
    """Token accuracy (positions of the target, EOS included) and exact sequences."""
    correct = total = exact = 0
    for i in range(len(dec_len)):
        want = dec_out[i, :dec_len[i]]
        got = np.full(len(want), -1, np.int32)
        k = min(len(want), best.shape[1])
        got[:k] = best[i, :k]
        correct += int(np.sum(got == want))
        total += len(want)
        exact += int(np.array_equal(got, want))
    return correct / total, exact / len(dec_len)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=250, help="training steps")
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--vocab", type=int, default=10)
    parser.add_argument("--max-len", type=int, default=6)
    parser.add_argument("--embedding", type=int, default=16)
    parser.add_argument("--units", type=int, default=32)
    parser.add_argument("--beam", type=int, default=3)
    parser.add_argument("--learning-rate", type=float, default=0.01)
    parser.add_argument("--eval", type=int, default=200, help="held-out sequences")
    args = parser.parse_args()

    tf.set_random_seed(7)
    rng = np.random.RandomState(0)
    graph_start = time.perf_counter()
    p, loss, train, accuracy, best_ids = build(args)
    graph_s = time.perf_counter() - graph_start
    order = ["src", "src_len", "dec_in", "dec_out", "dec_len"]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        start = time.perf_counter()
        first_loss = sess.run([train, loss], dict(zip(map(p.get, order),
                                                      batch(rng, args.batch, args.vocab,
                                                            args.max_len))))[1]
        first_s = time.perf_counter() - start
        start = time.perf_counter()
        for _ in range(args.steps - 1):
            feed = dict(zip(map(p.get, order), batch(rng, args.batch, args.vocab,
                                                    args.max_len)))
            _, last_loss = sess.run([train, loss], feed)
        rest_s = time.perf_counter() - start
        held_out = batch(rng, args.eval, args.vocab, args.max_len)
        feed = dict(zip(map(p.get, order), held_out))
        token_acc = float(sess.run(accuracy, feed))
        sess.run(best_ids, {p["src"]: held_out[0], p["src_len"]: held_out[1]})  # compiles
        start = time.perf_counter()
        best = sess.run(best_ids, {p["src"]: held_out[0], p["src_len"]: held_out[1]})
        beam_s = time.perf_counter() - start
    beam_token_acc, beam_exact = beam_scores(best, held_out[3], held_out[4])

    steady_ms = rest_s * 1e3 / max(args.steps - 1, 1)
    print(f"seq2seq reverse task (vocab {args.vocab}, length 3..{args.max_len}, GRU "
          f"{args.units}, Bahdanau attention, beam {args.beam}), {args.steps} Adam steps "
          f"of batch {args.batch}, on {jax.devices()[0].platform}")
    print(f"  loss                          {first_loss:.4f} -> {last_loss:.4f}")
    print(f"  teacher-forced token accuracy {token_acc:.4f}  ({args.eval} held-out sequences)")
    print(f"  beam-search token accuracy    {beam_token_acc:.4f}")
    print(f"  beam-search exact sequences   {beam_exact:.4f}")
    print(f"  graph construction            {graph_s:.2f} s")
    print(f"  training                      {first_s + rest_s:.2f} s (first step, compiling: "
          f"{first_s:.2f} s; then {steady_ms:.1f} ms/step)")
    print(f"  beam decoding                 {beam_s * 1e3:.1f} ms for {args.eval} sequences "
          f"(after compiling)")
    timing.write_json_atomically(
        os.path.join(os.path.dirname(os.path.abspath(__file__)), "results",
                     "seq2seq_reverse.json"),
        {"model": vars(args), "first_loss": float(first_loss), "last_loss": float(last_loss),
         "token_accuracy": token_acc, "beam_token_accuracy": beam_token_acc,
         "beam_exact_accuracy": beam_exact, "graph_s": graph_s,
         "train_first_step_s": first_s, "train_s": first_s + rest_s,
         "train_steady_ms_per_step": steady_ms, "beam_decode_ms": beam_s * 1e3,
         "device": jax.devices()[0].platform})


if __name__ == "__main__":
    main()
