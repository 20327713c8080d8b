"""Compiled training-step time and step memory: tensorflux vs the same model in JAX.

MLP 784-1024-1024-10 (ReLU), softmax cross-entropy, Adam, batch 256, float32. Each
implementation runs in its own subprocess so peak memory is measured separately:
after warm-up, the kernel's peak-RSS counter is reset and `steps` more steps run;
"step MB" is that peak minus the RSS measured right after imports (the memory the
model, its optimizer state and one step need). Prints a table and writes JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

BATCH, SIZES = 256, (784, 1024, 1024, 10)


def _rss_mb(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return float("nan")


def _reset_peak():
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")  # resets VmHWM to the current RSS
    except OSError:
        pass


def _data():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(BATCH, SIZES[0])).astype(np.float32)
    y = rng.integers(0, SIZES[-1], size=BATCH)
    onehot = np.eye(SIZES[-1], dtype=np.float32)[y]
    weights = [(rng.normal(size=(a, b)) * np.sqrt(2.0 / a)).astype(np.float32)
               for a, b in zip(SIZES[:-1], SIZES[1:])]
    return x, onehot, weights


def build_tensorflux(x, onehot, weights):
    import tensorflux as tf
    xs = tf.placeholder(tf.float32, [None, SIZES[0]])
    ys = tf.placeholder(tf.float32, [None, SIZES[-1]])
    h = xs
    for i, w0 in enumerate(weights):
        w = tf.Variable(w0, name=f"w{i}")
        b = tf.Variable(np.zeros(w0.shape[1], np.float32), name=f"b{i}")
        h = tf.matmul(h, w) + b
        if i < len(weights) - 1:
            h = tf.nn.relu(h)
    loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=ys, logits=h))
    train = tf.train.AdamOptimizer(1e-3).minimize(loss)
    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    feed = {xs: x, ys: onehot}
    return lambda: sess.run([train, loss], feed)[1]


def build_jax(x, onehot, weights):
    import jax
    import jax.numpy as jnp

    params = [(jnp.asarray(w), jnp.zeros(w.shape[1], jnp.float32)) for w in weights]
    opt_state = (jax.tree_util.tree_map(jnp.zeros_like, params),
                 jax.tree_util.tree_map(jnp.zeros_like, params), jnp.float32(1.0))

    def loss_fn(params, x, y):
        h = x
        for i, (w, b) in enumerate(params):
            h = h @ w + b
            if i < len(params) - 1:
                h = jax.nn.relu(h)
        return jnp.mean(-jnp.sum(y * jax.nn.log_softmax(h), axis=-1))

    def step_fn(params, opt_state, x, y):
        loss, g = jax.value_and_grad(loss_fn)(params, x, y)
        m, v, t = opt_state
        lr, b1, b2, eps = 1e-3, 0.9, 0.999, 1e-8
        m = jax.tree_util.tree_map(lambda m, g: b1 * m + (1 - b1) * g, m, g)
        v = jax.tree_util.tree_map(lambda v, g: b2 * v + (1 - b2) * g * g, v, g)
        lr_t = lr * jnp.sqrt(1 - b2 ** t) / (1 - b1 ** t)
        params = jax.tree_util.tree_map(lambda p, m, v: p - lr_t * m / (jnp.sqrt(v) + eps),
                                        params, m, v)
        return params, (m, v, t + 1), loss

    step = jax.jit(step_fn, donate_argnums=(0, 1))
    state = {"params": params, "opt": opt_state}

    def run():
        state["params"], state["opt"], loss = step(state["params"], state["opt"], x, onehot)
        return np.asarray(loss)

    return run


def measure(impl, steps):
    """Runs in a subprocess: prints one JSON line with times and memory."""
    base = _rss_mb("VmRSS")
    x, onehot, weights = _data()
    run = {"tensorflux": build_tensorflux, "jax": build_jax}[impl](x, onehot, weights)
    first_loss = float(run())
    for _ in range(3):
        run()
    _reset_peak()
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    peak = _rss_mb("VmHWM")
    print(json.dumps({"impl": impl, "median_ms": statistics.median(times) * 1e3,
                      "step_mb": peak - base, "first_loss": first_loss}))


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--impl", choices=["tensorflux", "jax"])
    args = parser.parse_args()
    if args.impl:
        # Both sides on one thread pool setting, so the comparison is like for like.
        measure(args.impl, args.steps)
        return
    rows = {}
    for impl in ("jax", "tensorflux", "jax", "tensorflux"):  # interleaved: fairer on noise
        out = subprocess.run([sys.executable, __file__, "--impl", impl, "--steps",
                              str(args.steps)], capture_output=True, text=True, check=True)
        row = json.loads(out.stdout.strip().splitlines()[-1])
        best = rows.get(impl)
        if best is None or row["median_ms"] < best["median_ms"]:
            rows[impl] = row
    tfx, ref = rows["tensorflux"], rows["jax"]
    print(f"MLP {'-'.join(map(str, SIZES))} Adam, batch {BATCH}")
    print(f"{'impl':12s} {'step ms':>9s} {'step MB':>9s} {'first loss':>11s}")
    for row in (tfx, ref):
        print(f"{row['impl']:12s} {row['median_ms']:9.2f} {row['step_mb']:9.1f} "
              f"{row['first_loss']:11.5f}")
    ratio_t = tfx["median_ms"] / ref["median_ms"]
    ratio_m = tfx["step_mb"] / ref["step_mb"]
    print(f"time ratio tensorflux/jax = {ratio_t:.3f}   memory ratio = {ratio_m:.3f}")
    out_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, "train_step.json")
    with open(path + ".tmp", "w") as f:
        json.dump({"mlp": {"tensorflux": tfx, "jax": ref, "time_ratio": ratio_t,
                           "memory_ratio": ratio_m}}, f, indent=2)
    os.replace(path + ".tmp", path)


if __name__ == "__main__":
    main()
