"""Convolutional training steps on CPU: tensorflux's convolution lowerings before and
after the autotuned ones, against PyTorch, TensorFlow and JAX, in one process.

For each model (the `tensorflux bench` zoo classifiers with peers: resnet50,
mobilenet_v2; forward, softmax cross-entropy, Momentum, batch-norm updates, float32) it
builds:

  tensorflux-xla   the convolutions as XLA's own ops (Conv2D as XLA convolution,
                   depthwise as XLA's grouped convolution), library dot fusion still
                   autotuned: what tensorflux did before the lowering switches
                   (compiler_options_config forces both switches)
  tensorflux       the default: every switch autotuned (ops/nn/conv_lowering.py)
  jax, torch, tf   benchmarks/peers (the same step written directly in each framework)

Each warms up (tensorflux until its autotuner has chosen), then the implementations
take turns, one window of `--steps` steps each, `--windows` times, so load from other
processes hits all of them alike. Reported: the median step time per implementation
and, per tensorflux variant, the median over windows of (its step time / the faster of
PyTorch and TensorFlow in the same round). PyTorch and TensorFlow may live in other
virtual environments: `--site DIR` appends their site-packages to sys.path (after
this interpreter's own, so NumPy and JAX stay ours). Prints a table and writes
benchmarks/results/conv_cpu.json.

    PYTHONPATH=. python benchmarks/conv_cpu.py \\
        --site /work/torchvenv/lib/python3.11/site-packages \\
        --site /work/tfvenv/lib/python3.11/site-packages
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from timing import timed_windows  # noqa: E402


def _tensorflux_steps(model, batch, size, num_classes):
    from tensorflux._src.cli import bench_step
    from tensorflux._src.ops.nn import conv_lowering
    from tensorflux._src.runtime.config import compiler_options_config
    xla = compiler_options_config({conv_lowering.CONV2D: "conv",
                                   conv_lowering.DEPTHWISE: "grouped_conv"})
    steps = {}
    for name, config in (("tensorflux-xla", xla), ("tensorflux", None)):
        step = bench_step.TrainStep(model, batch, size, num_classes, "float32",
                                    config=config)
        steps[name] = step
    return steps


def _warm(run, tuning=None, warmup=3):
    started = time.perf_counter()
    run()
    first = time.perf_counter() - started
    for _ in range(warmup):
        run()
    for _ in range(100 if tuning else 0):
        if not tuning():
            break
        run()
    return first


def _chosen(step):
    options = [e.compiler_options for e in step.session._executables.values()
               if e.clusters]
    return max(options, key=len) if options else {}


def bench_model(model, batch, size, steps, windows, peers):
    from tensorflux._src.cli import bench_job
    num_classes = 1000
    runs, first, chosen, closers = {}, {}, {}, []
    for name, step in _tensorflux_steps(model, batch, size, num_classes).items():
        first[name] = _warm(step.run, step.tuning)
        runs[name] = step.run
        chosen[name] = _chosen(step)
        closers.append(step.close)
        print(f"  {model} {name}: compiled+tuned, options {chosen[name]}", flush=True)
    for key in peers:
        peer = bench_job.load_peer(key + "_models")
        reason = peer.unavailable()
        if reason is not None:
            print(f"  {peer.NAME}: {reason}; skipped", flush=True)
            continue
        run = peer.image_classifier_step(model, batch, size, num_classes, "float32")
        first[peer.KEY] = _warm(run)
        runs[peer.KEY] = run
        print(f"  {model} {peer.KEY}: warmed", flush=True)
    times = timed_windows(runs, steps, windows)
    for close in closers:
        close()
    gc.collect()
    result = {"model": model, "batch_size": batch, "image_size": size,
              "first_step_seconds": first, "compiler_options": chosen,
              "window_step_seconds": times,
              "median_step_seconds": {n: statistics.median(t) for n, t in times.items()}}
    best_peer = [n for n in ("torch", "tf") if n in times]
    if best_peer:
        for name in ("tensorflux-xla", "tensorflux"):
            ratios = [times[name][w] / min(times[p][w] for p in best_peer)
                      for w in range(windows)]
            result[f"{name}_ratio_vs_fastest_peer"] = statistics.median(ratios)
            result[f"{name}_window_ratios"] = ratios
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", default="resnet50,mobilenet_v2")
    parser.add_argument("--image-size", type=int, default=64)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--steps", type=int, default=5, help="steps per window")
    parser.add_argument("--windows", type=int, default=5)
    parser.add_argument("--peers", default="jax,torch,tf")
    parser.add_argument("--site", action="append", default=[],
                        help="a site-packages directory to append to sys.path")
    parser.add_argument("--output", default=os.path.join(os.path.dirname(__file__),
                                                         "results", "conv_cpu.json"))
    args = parser.parse_args()
    sys.path.extend(args.site)
    load = os.getloadavg()
    results = {"loadavg_at_start": load, "runs": []}
    print(f"load average at start: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} "
          f"({os.cpu_count()} CPUs)")
    peers = [p for p in args.peers.split(",") if p]
    for model in args.models.split(","):
        results["runs"].append(bench_model(model, args.batch_size, args.image_size,
                                           args.steps, args.windows, peers))
    results["loadavg_at_end"] = os.getloadavg()
    print(f"\n{'model':14s} {'impl':16s} {'step ms':>9s}  windows (ms)")
    for r in results["runs"]:
        for name, t in r["window_step_seconds"].items():
            print(f"{r['model']:14s} {name:16s} {1e3 * statistics.median(t):9.1f}  "
                  + " ".join(f"{1e3 * x:.0f}" for x in t))
        for name in ("tensorflux-xla", "tensorflux"):
            key = f"{name}_ratio_vs_fastest_peer"
            if key in r:
                print(f"{r['model']:14s} {name:16s} step time / fastest of PyTorch and "
                      f"TensorFlow: {r[key]:.2f}x (per window: "
                      + ", ".join(f"{x:.2f}" for x in r[f"{name}_window_ratios"]) + ")")
    print(f"load average at end: {' '.join(f'{x:.2f}' for x in results['loadavg_at_end'])}")
    os.makedirs(os.path.dirname(args.output), exist_ok=True)
    with open(args.output, "w") as f:
        json.dump(results, f, indent=1, default=str)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
