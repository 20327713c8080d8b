"""Synchronous data parallelism on one host: images/sec of the small CNN's training step
(benchmarks/train_step.py's tf1_cnn: three conv layers, Momentum, global batch 128,
32x32x3) on 1, 2 and 4 devices.

Each device count runs in its own subprocess with
XLA_FLAGS=--xla_force_host_platform_device_count=N (JAX fixes its devices at start).
N=1 is the plain single-device program; N>1 builds the same program inside
`tf.distribute.MirroredStrategy(num_replicas=N).scope()`, so each device gets 128/N
images and XLA all-reduces the gradients. The reference is the 1-device run of the
same session: efficiency = throughput_N / (N * throughput_1), 1.0 being linear scaling.
On a CPU machine forced "devices" share the same cores, so this measures the SPMD
overhead more than a speedup (see the table's note); on N GPUs the same program
splits the batch over N accelerators. Prints a table and writes JSON
to benchmarks/results/distributed.json.

A second, short table is model parallelism: an MLP (784-1024-1024-10, batch 256,
Momentum, colocate_gradients_with_ops) with layer 1 under tf.device('/cpu:0') and the
rest under tf.device('/cpu:1'), against the same program with every layer on /cpu:0,
both in one 2-device subprocess. The split run is three clusters per step (layer 1
forward; layers 2-3 forward, backward and updates; layer 1 backward and updates) with
activations and gradients copied between devices: on forced host devices that share
the cores, expect a ratio at or below 1.0; the split only pays when the devices are
separate accelerators (or a model too big for one).

Last, parameter-server training on Ray (benchmarks/ps_bench.py, skipped with --no-ps):
steps/sec and parameter bytes/sec moved for 1, 2 and 4 workers on a 4 MB and a 40 MB
model, and the synchronous step time with and without one slow worker when one backup
worker is used.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import train_step  # noqa: E402  (the model and its data)


def measure(replicas, steps, windows):
    """Runs in a subprocess with `replicas` forced devices: prints one JSON line."""
    import contextlib

    import tensorflux as tf
    strategy = tf.distribute.MirroredStrategy(num_replicas=replicas) if replicas > 1 else None
    with strategy.scope() if strategy else contextlib.nullcontext():
        run = train_step.tf1_cnn(tf, *train_step.cnn_data())
    first_loss = float(run())
    for _ in range(30):  # compile, and let the compiler-option autotuner settle (10 calls
        # per two-way choice it compares)
        run()
    rates = []
    for _ in range(windows):
        start = time.perf_counter()
        for _ in range(steps):
            loss = run()
        rates.append(steps * train_step.CNN_BATCH / (time.perf_counter() - start))
    print(json.dumps({"replicas": replicas, "images_per_sec": statistics.median(rates),
                      "first_loss": first_loss, "last_loss": float(loss)}))


def measure_model_parallel(steps, windows):
    """Runs in a subprocess with 2 forced devices: prints one JSON line."""
    import numpy as np

    import tensorflux as tf
    from tensorflux._src.runtime.config import run_plan

    def steps_per_sec(first, second):
        graph = tf.Graph()
        with graph.as_default():
            x = tf.placeholder(tf.float32, [None, 784])
            y = tf.placeholder(tf.float32, [None, 10])
            init = tf.glorot_uniform_initializer(seed=0)
            with tf.device(first):
                h = tf.layers.dense(x, 1024, tf.nn.relu, kernel_initializer=init)
            with tf.device(second):
                h = tf.layers.dense(h, 1024, tf.nn.relu, kernel_initializer=init)
                logits = tf.layers.dense(h, 10, kernel_initializer=init)
                loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(
                    labels=y, logits=logits))
            train_op = tf.train.MomentumOptimizer(0.01, 0.9).minimize(
                loss, colocate_gradients_with_ops=True)
            start_op = tf.global_variables_initializer()
        rng = np.random.default_rng(0)
        feeds = {x: rng.normal(size=(256, 784)).astype(np.float32),
                 y: np.eye(10, dtype=np.float32)[rng.integers(0, 10, 256)]}
        with tf.Session(graph=graph) as sess:
            sess.run(start_op)
            meta = tf.RunMetadata()
            sess.run(train_op, feeds, run_metadata=meta)
            for _ in range(5):
                sess.run(train_op, feeds)
            rates = []
            for _ in range(windows):
                start = time.perf_counter()
                for _ in range(steps):  # fetching the loss waits for the step to finish
                    sess.run([train_op, loss], feeds)
                rates.append(steps / (time.perf_counter() - start))
            final = float(sess.run(loss, feeds))
        return statistics.median(rates), len(run_plan(meta)), final

    one, one_clusters, one_loss = steps_per_sec("/cpu:0", "/cpu:0")
    two, two_clusters, two_loss = steps_per_sec("/cpu:0", "/cpu:1")
    print(json.dumps({"one_device_steps_per_sec": one, "two_devices_steps_per_sec": two,
                      "ratio": two / one, "clusters": [one_clusters, two_clusters],
                      "loss_diff": abs(one_loss - two_loss)}))


def run_model_parallel(steps, windows):
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=2",
               JAX_PLATFORMS="cpu")
    out = subprocess.run([sys.executable, os.path.abspath(__file__), "--model-parallel",
                          "--steps", str(steps), "--windows", str(windows)],
                         capture_output=True, text=True, env=env)
    if out.returncode != 0:
        raise RuntimeError(f"model parallel run failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def run_all(counts, steps, windows):
    rows = []
    for n in counts:
        env = dict(os.environ, XLA_FLAGS=f"--xla_force_host_platform_device_count={n}",
                   JAX_PLATFORMS="cpu")
        out = subprocess.run([sys.executable, os.path.abspath(__file__), "--replicas", str(n),
                              "--steps", str(steps), "--windows", str(windows)],
                             capture_output=True, text=True, env=env)
        if out.returncode != 0:
            raise RuntimeError(f"{n} replicas failed:\n{out.stderr[-3000:]}")
        rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
    base = rows[0]["images_per_sec"]
    for row in rows:
        row["speedup"] = row["images_per_sec"] / base
        row["efficiency"] = row["images_per_sec"] / (row["replicas"] * base)
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--counts", default="1,2,4", help="device counts (first = reference)")
    parser.add_argument("--steps", type=int, default=10, help="steps per timed window")
    parser.add_argument("--windows", type=int, default=3)
    parser.add_argument("--replicas", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--model-parallel", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--no-ps", action="store_true",
                        help="skip the parameter-server tables (they need Ray)")
    args = parser.parse_args()
    if args.replicas:
        measure(args.replicas, args.steps, args.windows)
        return
    if args.model_parallel:
        measure_model_parallel(args.steps, args.windows)
        return
    rows = run_all([int(c) for c in args.counts.split(",")], args.steps, args.windows)
    print(f"small CNN training step, global batch {train_step.CNN_BATCH}, "
          f"{os.cpu_count()} CPU cores")
    print(f"{'devices':>7} {'images/sec':>11} {'speedup':>8} {'efficiency':>11} "
          f"{'loss (1st step)':>16}")
    for row in rows:
        print(f"{row['replicas']:>7} {row['images_per_sec']:>11.1f} {row['speedup']:>8.2f} "
              f"{row['efficiency']:>11.2f} {row['first_loss']:>16.6f}")
    print("efficiency = throughput_N / (N * throughput_1). Forced host devices share the "
          "machine's cores, which one device already uses in full (XLA:CPU runs an op on "
          "several threads): the ideal here is speedup 1.0 (efficiency 1/N); the shortfall "
          "is the cost of splitting the step and all-reducing the gradients.")
    mp = run_model_parallel(args.steps, args.windows)
    print("\nmodel parallel MLP 784-1024-1024-10, batch 256: layer 1 on cpu:0, the rest "
          "on cpu:1 (2 forced devices)")
    print(f"{'placement':>12} {'clusters':>9} {'steps/sec':>10} {'ratio':>6}")
    print(f"{'1 device':>12} {mp['clusters'][0]:>9} {mp['one_device_steps_per_sec']:>10.1f} "
          f"{1.0:>6.2f}")
    print(f"{'2 devices':>12} {mp['clusters'][1]:>9} {mp['two_devices_steps_per_sec']:>10.1f} "
          f"{mp['ratio']:>6.2f}")
    print("The layers depend on each other, so the devices take turns (no pipelining "
          "within one step), and forced host devices share the same cores: the split "
          "adds dispatches and copies and cannot be faster here; loss difference "
          f"{mp['loss_diff']:.1e}.")
    os.makedirs(os.path.join(os.path.dirname(os.path.abspath(__file__)), "results"),
                exist_ok=True)
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results",
                        "distributed.json")
    with open(path + ".tmp", "w") as f:
        json.dump({"model": "cnn", "batch": train_step.CNN_BATCH, "cores": os.cpu_count(),
                   "rows": rows, "model_parallel": mp}, f, indent=2)
    os.replace(path + ".tmp", path)
    if not args.no_ps:
        print()
        import ps_bench  # parameter servers on Ray; writes benchmarks/results/ps.json
        ps_bench.run()


if __name__ == "__main__":
    main()
