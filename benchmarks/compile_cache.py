"""First-step time with the persistent compilation cache cold and warm, in fresh processes.

For each model (resnet50 and the small CIFAR ResNet-20 by default, 64x64 images, batch
16, float32): a process with an empty cache directory builds the training graph, runs
the initializers and 12 steps (so the compiler-option autotuner settles and stores its
choice, as any real run does); then a second process does the same with that directory.
Also a process with the cache off, as the baseline. Prints a table and writes
benchmarks/results/compile_cache.json.

    python benchmarks/compile_cache.py [--models resnet50,resnet20] [--batch-size 16]
        [--image-size 64] [--steps 12]

Columns: init = running the initializers (one compiled cluster), first = the first
training step, second = the second step (on CPU the autotuner's other candidate runs
then, so it may compile or load too), start->first = process start (import included)
to the end of the first step; trace/lower = JAX tracing the graph function and lowering
it to HLO, summed over the process; hits = executables read from JAX's cache (keyed by
the HLO, so found only after tracing and lowering); stored = clusters whose executable
was read by their graph instead (compiler/persistent.py: no trace, no lowering). Times
on a shared machine are noisy: rerun before comparing.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.dirname(HERE)]  # timing.py; this checkout's tensorflux

from timing import write_json_atomically

from tensorflux._src.cli import first_step

COLUMNS = (("init", "init_seconds"), ("first", "first_step_seconds"),
           ("second", "second_step_seconds"),
           ("start->first", "process_to_first_step_seconds"),
           ("trace", "trace_seconds"), ("lower", "lower_seconds"), ("hits", "cache_hits"),
           ("stored", "stored_loads"))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="resnet50,resnet20")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--image-size", type=int, default=64)
    parser.add_argument("--steps", type=int, default=12)
    parser.add_argument("--output", default=os.path.join(HERE, "results",
                                                          "compile_cache.json"))
    args = parser.parse_args()

    results = {"batch_size": args.batch_size, "image_size": args.image_size,
               "steps": args.steps, "models": {}}
    header = f"{'model':10s} {'run':8s}" + "".join(f"{name:>13s}" for name, _ in COLUMNS)
    print(header)
    for model in args.models.split(","):
        runs = {"off": first_step.run_child(model, args.batch_size, args.image_size,
                                            steps=args.steps)}
        with tempfile.TemporaryDirectory(prefix="tensorflux-cache-") as cache_dir:
            for kind in ("cold", "warm"):
                runs[kind] = first_step.run_child(model, args.batch_size, args.image_size,
                                                  cache_dir=cache_dir, steps=args.steps)
        results["models"][model] = runs
        for kind, times in runs.items():
            cells = "".join(f"{times[key]:13d}" if isinstance(times[key], int)
                            else f"{times[key]:13.2f}" for _, key in COLUMNS)
            print(f"{model:10s} {kind:8s}{cells}", flush=True)
    write_json_atomically(args.output, results)
    print(f"Results: {args.output}")


if __name__ == "__main__":
    main()
