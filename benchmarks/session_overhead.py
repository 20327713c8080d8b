"""Session.run overhead on already-compiled graphs, against a bare jax.jit call.

Prints a table and writes JSON (benchmarks/results/session_overhead.json). Four
graphs: the README's tiny add of two constants (constant-folded, so no XLA call at
all), the same add fed through a placeholder (one XLA call), a 50-op elementwise
chain fed by a placeholder, and a reduction of a variable (an evaluation-style run that
reads variables and writes none). Each is compared with the same computation as a bare
`jax.jit` call returning numpy, measured in the same process.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

import jax
import jax.numpy as jnp
import numpy as np

import tensorflux as tf


def median_us(fn, repeats=7, number=2000):
    for _ in range(200):
        fn()
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        samples.append((time.perf_counter() - start) / number * 1e6)
    return statistics.median(samples)


def chain_tf(x):
    y = x
    for i in range(50):
        y = tf.sin(y) if i % 5 == 0 else (y * 1.0001 if i % 2 else y + 0.5)
    return y


def chain_jax(x):
    y = x
    for i in range(50):
        y = jnp.sin(y) if i % 5 == 0 else (y * np.float32(1.0001) if i % 2 else y + np.float32(0.5))
    return y


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--number", type=int, default=2000)
    args = parser.parse_args()

    rows = []
    with tf.Graph().as_default(), tf.Session() as sess:
        # 1. tiny constant graph: folded to a constant at plan time.
        tiny = tf.constant([1, 2, 3, 4]) + tf.constant([1, 2, 3, 4])
        sess.run(tiny)
        c = np.array([1, 2, 3, 4], np.int32)
        jit_tiny = jax.jit(lambda: jnp.asarray(c) + jnp.asarray(c))
        rows.append(("tiny add (constants)", median_us(lambda: sess.run(tiny), number=args.number),
                     median_us(lambda: np.asarray(jit_tiny()), number=args.number)))

        # 2. the same add fed by a placeholder: one XLA executable per call.
        p = tf.placeholder(tf.int32, [4])
        fed = p + tf.constant([1, 2, 3, 4])
        feed = {p: c}
        sess.run(fed, feed)
        jit_fed = jax.jit(lambda a: a + c)
        rows.append(("tiny add (placeholder)",
                     median_us(lambda: sess.run(fed, feed), number=args.number),
                     median_us(lambda: np.asarray(jit_fed(c)), number=args.number)))

        # 3. 50-op elementwise chain on a fed (256,) float32 vector.
        x = tf.placeholder(tf.float32, [None])
        y = chain_tf(x)
        xv = np.linspace(0, 1, 256, dtype=np.float32)
        sess.run(y, {x: xv})
        traces = sess.compile_stats.traces
        jit_chain = jax.jit(chain_jax)
        np.testing.assert_allclose(sess.run(y, {x: xv}), np.asarray(jit_chain(xv)), rtol=1e-5)
        rows.append(("50-op chain (placeholder)",
                     median_us(lambda: sess.run(y, {x: xv}), number=args.number),
                     median_us(lambda: np.asarray(jit_chain(xv)), number=args.number)))
        retraced = sess.compile_stats.traces - traces

        # 4. an evaluation-style run: reads a variable, writes none (the variable lives
        # on the device; the JAX side gets the same array already placed there).
        v = tf.Variable(xv)
        read = tf.reduce_sum(tf.nn.relu(v.value()))
        sess.run(v.initializer)
        sess.run(read)
        placed = jax.device_put(xv)
        jit_read = jax.jit(lambda a: jnp.sum(jax.nn.relu(a)))
        rows.append(("variable read (no feeds)",
                     median_us(lambda: sess.run(read), number=args.number),
                     median_us(lambda: np.asarray(jit_read(placed)), number=args.number)))

    print(f"{'graph':28s} {'tensorflux us':>14s} {'jax.jit us':>11s} {'ratio':>7s}")
    results = []
    for name, ours, ref in rows:
        print(f"{name:28s} {ours:14.2f} {ref:11.2f} {ours / ref:7.2f}")
        results.append({"graph": name, "tensorflux_us": ours, "jax_jit_us": ref,
                        "ratio": ours / ref})
    print(f"re-traces during timing: {retraced}")
    os.makedirs(os.path.join(os.path.dirname(__file__), "results"), exist_ok=True)
    out = os.path.join(os.path.dirname(__file__), "results", "session_overhead.json")
    with open(out + ".tmp", "w") as f:
        json.dump({"rows": results, "retraces": retraced, "jax": jax.__version__}, f, indent=2)
    os.replace(out + ".tmp", out)


if __name__ == "__main__":
    main()
