"""A convolution layer's two gradients through oneDNN: as two FFI calls (dx, dw; XLA
may run them at once, each on every thread) against the one paired call that runs them
side by side, one thread each (ops/nn/conv_onednn.py `backprop_pair`).

At the small CNN's layers of benchmarks/train_step.py (batch 128, 3x3, SAME): 32->64
at 16x16 and 64->128 at 8x8. Both forms of a layer take turns, one window of `--steps`
calls each, `--windows` times (timing.timed_windows), and must agree. The pair runs
side by side only where OpenMP has two threads (`onednn.pairs()`, printed); elsewhere
it runs the two in turn. Prints a table and writes benchmarks/results/conv_pair.json.

    python benchmarks/conv_pair.py [--windows 9 --steps 10]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from timing import timed_windows  # after the path insert above

LAYERS = ((16, 32, 64), (8, 64, 128))  # (height = width, in channels, out channels)
BATCH = 128


def _layer(size, c_in, c_out, seed):
    """(name, {form: zero-argument run}, (dx, dw) of each form) for one layer."""
    import jax

    from tensorflux._src.ops.nn import conv_defs, conv_onednn

    rng = np.random.default_rng(seed)
    x = rng.standard_normal((BATCH, size, size, c_in), np.float32)
    w = rng.standard_normal((3, 3, c_in, c_out), np.float32)
    dy = rng.standard_normal((BATCH, size, size, c_out), np.float32)
    window, out = conv_defs._shifted_window(x.shape, w.shape, [1, 1, 1, 1], "SAME", (),
                                            "NHWC", [1, 1, 1, 1])
    kwargs = dict(out=out, data_format="NHWC", **window)
    two_calls = jax.jit(lambda x, w, dy: (
        conv_onednn.backprop_input(x.shape, w, dy, **kwargs),
        conv_onednn.backprop_filter(x, w.shape, dy, **kwargs)))
    paired = jax.jit(lambda x, w, dy: conv_onednn.backprop_pair(x, w, dy, **kwargs))
    x, w, dy = (jax.device_put(v) for v in (x, w, dy))
    forms = {"two calls": two_calls, "paired": paired}
    results = {name: [np.asarray(v) for v in f(x, w, dy)] for name, f in forms.items()}
    runs = {name: (lambda f=f: jax.block_until_ready(f(x, w, dy))) for name, f in forms.items()}
    return f"{c_in}->{c_out} at {size}x{size}", runs, results


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--windows", type=int, default=9)
    parser.add_argument("--steps", type=int, default=10)
    args = parser.parse_args()
    from tensorflux._src.native import onednn

    if not onednn.available():
        raise SystemExit(f"oneDNN's kernel is unavailable: {onednn.unavailable_reason()}")
    print(f"side by side (OpenMP has two threads): {onednn.pairs()}")
    report = {"side_by_side": onednn.pairs(), "layers": {}}
    for seed, (size, c_in, c_out) in enumerate(LAYERS):
        name, runs, results = _layer(size, c_in, c_out, seed)
        for a, b in zip(*results.values()):
            np.testing.assert_allclose(a, b, rtol=1e-3, atol=1e-2)
        for run in runs.values():  # warm up
            for _ in range(3):
                run()
        samples = timed_windows(runs, args.steps, args.windows)
        ms = {form: statistics.median(t) * 1e3 for form, t in samples.items()}
        ratios = [p / t for p, t in zip(samples["paired"], samples["two calls"])]
        report["layers"][name] = {"median_ms": ms, "paired_over_two_calls": ratios}
        print(f"{name:16s} two calls {ms['two calls']:6.2f} ms   paired {ms['paired']:6.2f} ms"
              f"   paired/two per window: median {statistics.median(ratios):.3f}, "
              f"faster in {sum(r < 1 for r in ratios)} of {len(ratios)}")
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results",
                       "conv_pair.json")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w") as f:
        json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
