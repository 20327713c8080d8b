"""First-step time of a zoo model in fresh processes, with the compilation cache cold
(an empty directory) and then warm (a second process, same directory).

    python -m tensorflux._src.cli.first_step --model resnet50 --batch-size 16 --image-size 64
    (run_child starts it through `python -c`, so that importing tensorflux is timed too)

as a child: builds the training graph, runs the initializers and one step, and prints one
JSON line of times. `cold_warm(...)` runs two such children (what `tensorflux bench
--cold-warm` and benchmarks/compile_cache.py report). Fresh processes are the point:
in one process JAX's in-memory caches would hide what the disk cache saves.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

_CHILD = ("import time; started = time.perf_counter(); "  # before tensorflux is imported
          "from tensorflux._src.cli import first_step; first_step.main(started=started)")


def _child(started, model, batch_size, image_size, precision, num_classes, steps):
    from jax import monitoring
    counts, seconds = {}, {}
    monitoring.register_event_listener(
        lambda name, **kw: counts.__setitem__(name, counts.get(name, 0) + 1))
    monitoring.register_event_duration_secs_listener(
        lambda name, secs, **kw: seconds.__setitem__(name, seconds.get(name, 0.0) + secs))
    from tensorflux._src.cli import bench_step
    imported = time.perf_counter()
    step = bench_step.TrainStep(model, batch_size, image_size, num_classes, precision)
    initialized = time.perf_counter()
    step.run()
    stepped = time.perf_counter()
    step.run()
    second = time.perf_counter()
    for _ in range(steps - 2):  # a process that lives on lets the autotuner settle
        step.run()
    for _ in range(bench_step.MAX_TUNING_STEPS):  # ... and store its choice
        if not step.tuning():
            break
        step.run()
    from tensorflux._src.compiler import persistent
    stored = sum(1 for e in step.session._executables.values() for c in e.clusters
                 if isinstance(c.jitted, persistent.Persistent) and c.jitted.loaded)
    step.close()
    return {"import_seconds": imported - started,
            "graph_seconds": initialized - imported - step.init_seconds,
            "init_seconds": step.init_seconds,
            "first_step_seconds": stepped - initialized,
            "second_step_seconds": second - stepped,
            "process_to_first_step_seconds": stepped - started,
            "cache_hits": counts.get("/jax/compilation_cache/cache_hits", 0),
            "stored_loads": stored,
            "trace_seconds": seconds.get("/jax/core/compile/jaxpr_trace_duration", 0.0),
            "lower_seconds": seconds.get(
                "/jax/core/compile/jaxpr_to_mlir_module_duration", 0.0),
            "compile_or_load_seconds": seconds.get(
                "/jax/core/compile/backend_compile_duration", 0.0)}


def run_child(model, batch_size, image_size, precision="float32", num_classes=10,
              cache_dir=None, steps=12, timeout=1800):
    """One fresh process's times (a dict); `cache_dir` None turns the cache off."""
    env = dict(os.environ)
    if cache_dir is None:
        env["TENSORFLUX_COMPILATION_CACHE"] = "0"
    else:
        env.pop("TENSORFLUX_COMPILATION_CACHE", None)
        env["TENSORFLUX_CACHE_DIR"] = cache_dir
    # The child imports the same tensorflux as this process.
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))))
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    cmd = [sys.executable, "-c", _CHILD, "--model", model,
           "--batch-size", str(batch_size), "--image-size", str(image_size),
           "--precision", precision, "--num-classes", str(num_classes),
           "--steps", str(steps)]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout,
                          check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"first-step child failed: {proc.stderr.strip()[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def cold_warm(model, batch_size, image_size, precision="float32", num_classes=10, steps=12):
    """{"cold": times, "warm": times}: two fresh processes sharing a new, empty cache.

    Each runs `steps` steps (at least 2): 12, as `tensorflux bench`'s warm-up, lets the
    compiler-option autotuner settle and store its choice, as a real run would."""
    with tempfile.TemporaryDirectory(prefix="tensorflux-cache-") as cache_dir:
        cold = run_child(model, batch_size, image_size, precision, num_classes, cache_dir,
                         steps)
        warm = run_child(model, batch_size, image_size, precision, num_classes, cache_dir,
                         steps)
    return {"cold": cold, "warm": warm}


def main(argv=None, started=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--image-size", type=int, default=64)
    parser.add_argument("--precision", default="float32")
    parser.add_argument("--num-classes", type=int, default=10)
    parser.add_argument("--steps", type=int, default=2)
    args = parser.parse_args(argv)
    started = time.perf_counter() if started is None else started
    print(json.dumps(_child(started, args.model, args.batch_size, args.image_size, args.precision,
                            args.num_classes, max(args.steps, 2))))


if __name__ == "__main__":
    main()
