"""Timing shared by the benchmarks that race tensorflux against the same step in JAX, and
the resident-memory counters and result writing the others share."""

from __future__ import annotations

import json
import os
import statistics
import tempfile
import time

import numpy as np


def race(runners, window, windows, warmup):
    """Per runner (name -> zero-argument step returning the loss): the first loss (the
    call compiles) and median/min/max ms per step over `windows` timed windows of
    `window` steps, the runners taking turns window by window so drift in the machine's
    speed hits all of them alike. Exits when the first losses disagree: the two sides
    must compute the same thing from the same weights."""
    first = {name: run() for name, run in runners.items()}
    values = list(first.values())
    if not np.allclose(values, values[0], rtol=1e-4):
        raise SystemExit(f"the implementations disagree: {first}")
    for run in runners.values():
        for _ in range(warmup):
            run()
    samples = timed_windows(runners, window, windows)
    rows = {name: {"median_ms": statistics.median(t) * 1e3, "min_ms": min(t) * 1e3,
                   "max_ms": max(t) * 1e3} for name, t in samples.items()}
    return first, rows


def timed_windows(runners, window, windows):
    """Per runner (name -> zero-argument step), the seconds per step of each of `windows`
    windows of `window` steps, the runners taking turns window by window."""
    samples = {name: [] for name in runners}
    for _ in range(windows):
        for name, run in runners.items():
            start = time.perf_counter()
            for _ in range(window):
                run()
            samples[name].append((time.perf_counter() - start) / window)
    return samples


def donating_runner(step, params, xs, ys):
    """A zero-argument step for `race` from a JAX `step(params, xs, ys) -> (loss,
    params)`: jitted with the parameters donated (updated in place, as tensorflux's
    variables are), the data moved to the device once."""
    import jax
    import jax.numpy as jnp
    step = jax.jit(step, donate_argnums=0)
    state = {"p": {k: jnp.asarray(v) for k, v in params.items()}}
    xs, ys = jnp.asarray(xs), jnp.asarray(ys)

    def run():
        loss, state["p"] = step(state["p"], xs, ys)
        return float(loss)

    return run


def print_rows(title, rows, ratio_target):
    print(title)
    print(f"{'impl':12s} {'median ms':>10s} {'min':>8s} {'max':>8s}")
    for name, row in rows.items():
        print(f"{name:12s} {row['median_ms']:10.2f} {row['min_ms']:8.2f} {row['max_ms']:8.2f}")
    ratio = rows["tensorflux"]["median_ms"] / rows["jax"]["median_ms"]
    print(f"tensorflux / JAX: {ratio:.3f} (target <= {ratio_target:.2f})")
    return ratio


def write_json_atomically(path, payload):
    """`payload` as JSON at `path`, never half-written (temporary file, then rename)."""
    directory = os.path.dirname(path)
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".result.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(payload, f, indent=2)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def rss_mb(field):
    """`field` of /proc/self/status in MB: "VmRSS" now, "VmHWM" the peak."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return float("nan")


def reset_peak_rss():
    """Resets the kernel's peak-RSS counter (VmHWM) to the current RSS, where allowed."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass
