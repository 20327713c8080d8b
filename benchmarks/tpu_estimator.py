"""TPUEstimator steps/sec with iterations_per_loop 1 vs 50 (CPU, one shard): the loop
runs 50 training steps per Session.run, so the per-step host overhead (Session.run,
hooks, input pipeline round trip, executable dispatch) is paid once per 50 steps.

Reference in the same run: the same SGD step of softmax regression written directly in
NumPy (a ratio, not an absolute time). Prints a table and writes JSON.

    python benchmarks/tpu_estimator.py [--steps 1000] [--out tpu_estimator.json]
"""

import argparse
import json
import logging
import tempfile
import time

import numpy as np

import tensorflux as tf

D, K, BATCH, LR = 32, 10, 64, 0.1


def make_data(n):
    rng = np.random.RandomState(0)
    x = rng.randn(n, D).astype(np.float32)
    return x, rng.randint(0, K, n).astype(np.int32)


def model_fn(features, labels, mode, params):
    logits = tf.layers.dense(features, K)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=labels, logits=logits))
    opt = tf.contrib.tpu.CrossShardOptimizer(tf.train.GradientDescentOptimizer(LR))
    return tf.contrib.tpu.TPUEstimatorSpec(
        mode, loss=loss, train_op=opt.minimize(loss, global_step=tf.train.get_global_step()))


def time_estimator(x, y, steps, iterations_per_loop):
    def input_fn(params):
        # Pre-batched elements, so the per-example tf.data cost (which is Python here)
        # does not hide the per-step Session.run overhead the loop removes.
        b = params["batch_size"]
        return tf.data.Dataset.from_tensor_slices(
            (x.reshape(-1, b, D), y.reshape(-1, b))).repeat()
    config = tf.contrib.tpu.RunConfig(
        model_dir=tempfile.mkdtemp(), save_checkpoints_steps=None, save_checkpoints_secs=None,
        save_summary_steps=0, log_step_count_steps=None,
        tpu_config=tf.contrib.tpu.TPUConfig(iterations_per_loop=iterations_per_loop,
                                            num_shards=1))
    est = tf.contrib.tpu.TPUEstimator(model_fn, config=config, train_batch_size=BATCH)
    est.train(input_fn, max_steps=iterations_per_loop)  # compile, start-up
    start = time.perf_counter()
    est.train(input_fn, steps=steps)
    return steps / (time.perf_counter() - start)


def time_numpy(x, y, steps):
    w, b = np.zeros((D, K), np.float32), np.zeros(K, np.float32)
    start = time.perf_counter()
    for i in range(steps):
        j = (i * BATCH) % (len(x) - BATCH)
        xb, yb = x[j:j + BATCH], y[j:j + BATCH]
        logits = xb @ w + b
        p = np.exp(logits - logits.max(1, keepdims=True))
        p /= p.sum(1, keepdims=True)
        g = p
        g[np.arange(BATCH), yb] -= 1
        g /= BATCH
        w -= LR * xb.T @ g
        b -= LR * g.sum(0)
    return steps / (time.perf_counter() - start)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--out", default="tpu_estimator.json")
    args = parser.parse_args()
    logging.disable(logging.WARNING)
    x, y = make_data(BATCH * 100)
    rows = {"numpy_step": time_numpy(x, y, args.steps)}
    for ipl in (1, 50):
        rows[f"iterations_per_loop={ipl}"] = time_estimator(x, y, args.steps, ipl)
    print(f"{'run':28s} {'steps/sec':>12s} {'vs numpy':>9s}")
    for name, rate in rows.items():
        print(f"{name:28s} {rate:12.1f} {rate / rows['numpy_step']:9.3f}")
    speedup = rows["iterations_per_loop=50"] / rows["iterations_per_loop=1"]
    print(f"iterations_per_loop 50 vs 1: {speedup:.1f}x steps/sec")
    with open(args.out, "w") as f:
        json.dump({"steps": args.steps, "steps_per_sec": rows, "speedup_50_vs_1": speedup}, f,
                  indent=2)


if __name__ == "__main__":
    main()
