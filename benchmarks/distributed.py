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
    for _ in range(12):  # compile, and let the compiler-option autotuner settle
        run()
    rates = []
    for _ in range(windows):
        start = time.perf_counter()
        for _ in range(steps):
            loss = run()
        rates.append(steps * train_step.CNN_BATCH / (time.perf_counter() - start))
    print(json.dumps({"replicas": replicas, "images_per_sec": statistics.median(rates),
                      "first_loss": first_loss, "last_loss": float(loss)}))


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
    args = parser.parse_args()
    if args.replicas:
        measure(args.replicas, args.steps, args.windows)
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
    os.makedirs(os.path.join(os.path.dirname(os.path.abspath(__file__)), "results"),
                exist_ok=True)
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results",
                        "distributed.json")
    with open(path + ".tmp", "w") as f:
        json.dump({"model": "cnn", "batch": train_step.CNN_BATCH, "cores": os.cpu_count(),
                   "rows": rows}, f, indent=2)
    os.replace(path + ".tmp", path)


if __name__ == "__main__":
    main()
