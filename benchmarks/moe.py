"""A mixture-of-experts Transformer LM against the dense one at equal compute per token.

The task is synthetic and needs memory: a "document" opens with one of `--topics` topic
tokens, and each next token follows that topic's own random transition table (with
probability 1 - --noise; otherwise a uniformly random token). Predicting well means
storing topics x vocabulary transitions, which feed-forward parameters hold; attention
only has to carry the topic forward. The loss floor (the noise's entropy) is printed.

Both models are the zoo's decoder-only Transformer (`tensorflux.models.transformer`,
trained by its own `model_fn`: Adam with the rsqrt warm-up schedule); they differ only in
the feed-forward sublayers: dense with `--filter` inner units, or `--experts` experts of
`--filter / k` units each with k = 2 chosen per token (noisy top-k gating, capacity factor
2, tensorflux.layers.moe). The expert matmuls cost a token the same FLOPs as the dense
sublayer; the gating adds d x E per token and the dense dispatch einsums add more (they
are counted in the measured step time, reported beside the losses). Same data order,
same steps, same seeds.

    python benchmarks/moe.py              # writes benchmarks/results/moe.json and moe.png
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import tensorflux as tf  # noqa: E402
from tensorflux.models import transformer  # noqa: E402

RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")


def make_task(vocab, topics, noise, seed):
    """Transition tables (topics, vocab) over the ordinary tokens [2 + topics, vocab)."""
    rng = np.random.default_rng(seed)
    first = 2 + topics          # ids 0 (padding), 1 (EOS) and the topic markers are reserved
    tables = rng.integers(first, vocab, size=(topics, vocab))
    return {"vocab": vocab, "topics": topics, "noise": noise, "first": first,
            "tables": tables}


def sample(task, batch, length, rng):
    """(batch, length) ids: a topic marker, then tokens following its table."""
    ids = np.zeros((batch, length), np.int32)
    topic = rng.integers(0, task["topics"], size=batch)
    ids[:, 0] = 2 + topic
    ids[:, 1] = rng.integers(task["first"], task["vocab"], size=batch)
    for t in range(2, length):
        follow = task["tables"][topic, ids[:, t - 1]]
        random = rng.integers(task["first"], task["vocab"], size=batch)
        ids[:, t] = np.where(rng.random(batch) < task["noise"], random, follow)
    return ids


def loss_floor(task):
    """Mean next-token entropy (nats) of the generator over positions 2.. (position 1
    after the marker is uniform)."""
    n = task["vocab"] - task["first"]
    p_follow = 1 - task["noise"] + task["noise"] / n
    p_other = task["noise"] / n
    return -(p_follow * math.log(p_follow) + (n - 1) * p_other * math.log(p_other))


def config_for(args, moe):
    base = transformer.TransformerConfig(
        vocab_size=args.vocab, hidden_size=args.hidden, filter_size=args.filter,
        num_heads=4, num_encoder_layers=0, num_decoder_layers=args.layers, dropout=0.0,
        label_smoothing=0.0, max_length=args.length, learning_rate=args.lr_scale,
        warmup_steps=args.warmup)
    if not moe:
        return base
    return dataclasses.replace(base, num_experts=args.experts, experts_per_token=2,
                               expert_filter_size=args.filter // 2, capacity_factor=2.0,
                               moe_group_size=args.group_size)


def run(args, config, task, label):
    """Trains `config`; returns the curve records."""
    graph = tf.Graph()
    with graph.as_default():
        tf.set_random_seed(args.seed)
        ids = tf.placeholder(tf.int32, [args.batch, args.length], name="ids")
        labels = tf.pad(ids, [[0, 0], [0, 1]])[:, 1:]
        spec = transformer.model_fn(ids, labels, "train", config)
        # The language-model loss alone (the model_fn's loss adds the MoE's aux losses).
        # Position 0 predicts the uniform first token and the last has no next token.
        logits = spec.predictions["logits"][:, 1:-1]
        ce = transformer.smoothed_cross_entropy(logits, ids[:, 2:], 0.0)
        eval_spec = transformer.model_fn(ids, labels, "eval", config)
        eval_ce = transformer.smoothed_cross_entropy(
            eval_spec.predictions["logits"][:, 1:-1], ids[:, 2:], 0.0)
        params = sum(int(np.prod(v.shape.as_list())) for v in tf.trainable_variables())
        init = tf.global_variables_initializer()
    data_rng = np.random.default_rng(args.seed)
    eval_batches = [sample(task, args.batch, args.length, np.random.default_rng(10_000 + i))
                    for i in range(4)]
    records, window, times = [], [], []
    with tf.Session(graph=graph) as sess:
        sess.run(init)
        for step in range(1, args.steps + 1):
            batch = sample(task, args.batch, args.length, data_rng)
            started = time.perf_counter()
            _, loss = sess.run([spec.train_op, ce], {ids: batch})
            if step > 5:  # after compilation
                times.append(time.perf_counter() - started)
            window.append(float(loss))
            if step % args.eval_every == 0 or step == args.steps:
                held_out = float(np.mean([sess.run(eval_ce, {ids: b}) for b in eval_batches]))
                records.append({"step": step, "train_loss": float(np.mean(window)),
                                "eval_loss": held_out})
                window = []
                print(f"{label:>6} step {step:5d}  train {records[-1]['train_loss']:.4f}  "
                      f"eval {held_out:.4f}", flush=True)
    return {"params": params, "ms_per_step": 1e3 * float(np.median(times)),
            "curve": records}


def ffn_flops_per_token(config):
    """Multiply-adds of one feed-forward sublayer for one token, times 2 (FLOPs)."""
    d = config.hidden_size
    if not config.num_experts:
        return 2 * 2 * d * config.filter_size
    h = config.expert_filter_size
    return 2 * (config.experts_per_token * 2 * d * h + d * config.num_experts * 2)


def plot(results, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for name, style in (("dense", "C0"), ("moe", "C1")):
        curve = results[name]["curve"]
        steps = [r["step"] for r in curve]
        ax.plot(steps, [r["train_loss"] for r in curve], color=style, alpha=0.4,
                label=f"{name} train")
        ax.plot(steps, [r["eval_loss"] for r in curve], color=style,
                label=f"{name} held-out ({results[name]['params']:,} params)")
    ax.axhline(results["loss_floor"], color="gray", linestyle=":", label="loss floor")
    ax.set_xlabel("step")
    ax.set_ylabel("next-token cross-entropy (nats)")
    ax.set_title("Dense vs mixture-of-experts Transformer LM, equal FLOPs per token")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1500)
    parser.add_argument("--eval-every", type=int, default=100)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--length", type=int, default=32)
    parser.add_argument("--vocab", type=int, default=128)
    parser.add_argument("--topics", type=int, default=32)
    parser.add_argument("--noise", type=float, default=0.1)
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--filter", type=int, default=128)
    parser.add_argument("--experts", type=int, default=16)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--group-size", type=int, default=128,
                        help="tokens per capacity group (the dispatch einsums grow with it)")
    parser.add_argument("--lr-scale", type=float, default=1.0)
    parser.add_argument("--warmup", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=os.path.join(RESULTS, "moe"))
    args = parser.parse_args()

    task = make_task(args.vocab, args.topics, args.noise, args.seed)
    results = {"args": vars(args), "loss_floor": loss_floor(task)}
    for name, moe in (("dense", False), ("moe", True)):
        config = config_for(args, moe)
        results[name] = run(args, config, task, name)
        results[name]["ffn_flops_per_token"] = ffn_flops_per_token(config)
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out + ".json", "w") as f:
        json.dump(results, f, indent=2)
    plot(results, args.out + ".png")

    print(f"\nloss floor {results['loss_floor']:.4f} nats")
    print(f"{'model':>6} {'params':>10} {'FFN FLOPs/token':>16} {'ms/step':>8} "
          f"{'final train':>12} {'final held-out':>15}")
    for name in ("dense", "moe"):
        r = results[name]
        print(f"{name:>6} {r['params']:>10,} {r['ffn_flops_per_token']:>16,} "
              f"{r['ms_per_step']:>8.1f} {r['curve'][-1]['train_loss']:>12.4f} "
              f"{r['curve'][-1]['eval_loss']:>15.4f}")
    print(f"wrote {args.out}.json and {args.out}.png")


if __name__ == "__main__":
    main()
