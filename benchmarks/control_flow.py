"""An RNN training step through tf.scan: tensorflux vs the same model in JAX (lax.scan).

Model: h_t = tanh(x_t W + h_{t-1} U + b) over 100 steps (hidden 256, input 64,
batch 64), logits = h_T V (10 classes), softmax cross-entropy, plain SGD. Both sides
run in this process from the same initial weights and data; timed windows alternate
between them and the median window per step is reported, so machine noise hits both
alike. Also checks that both compute the same loss. Prints a table; writes
benchmarks/results/control_flow.json.
"""

from __future__ import annotations

import argparse
import os
import sys

import jax
import jax.numpy as jnp
import numpy as np

import tensorflux as tf

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import timing  # noqa: E402  (the benchmarks' shared timing)

STEPS, BATCH, INPUT, HIDDEN, CLASSES = 100, 64, 64, 256, 10
LEARNING_RATE = 0.01


def data():
    rng = np.random.default_rng(0)
    xs = rng.normal(size=(STEPS, BATCH, INPUT)).astype(np.float32)
    ys = np.eye(CLASSES, dtype=np.float32)[rng.integers(0, CLASSES, BATCH)]
    params = {
        "W": (rng.normal(size=(INPUT, HIDDEN)) / np.sqrt(INPUT)).astype(np.float32),
        "U": (rng.normal(size=(HIDDEN, HIDDEN)) / np.sqrt(HIDDEN)).astype(np.float32),
        "b": np.zeros(HIDDEN, np.float32),
        "V": (rng.normal(size=(HIDDEN, CLASSES)) / np.sqrt(HIDDEN)).astype(np.float32),
    }
    return xs, ys, params


def tensorflux_step(xs_value, ys_value, params):
    graph = tf.Graph()
    with graph.as_default():
        xs = tf.placeholder(tf.float32, [STEPS, BATCH, INPUT])
        ys = tf.placeholder(tf.float32, [BATCH, CLASSES])
        v = {k: tf.Variable(p, name=k) for k, p in params.items()}
        hs = tf.scan(lambda h, x: tf.tanh(tf.matmul(x, v["W"]) + tf.matmul(h, v["U"]) + v["b"]),
                     xs, initializer=tf.zeros([BATCH, HIDDEN]))
        logits = tf.matmul(hs[-1], v["V"])
        loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=ys,
                                                                         logits=logits))
        train = tf.train.GradientDescentOptimizer(LEARNING_RATE).minimize(loss)
        init = tf.global_variables_initializer()
    sess = tf.Session(graph=graph)
    sess.run(init)
    feed = {xs: xs_value, ys: ys_value}
    return lambda: sess.run([loss, train], feed)[0]


def jax_step(xs_value, ys_value, params):
    def loss_fn(p, xs, ys):
        def cell(h, x):
            h = jnp.tanh(x @ p["W"] + h @ p["U"] + p["b"])
            return h, None
        h, _ = jax.lax.scan(cell, jnp.zeros((BATCH, HIDDEN), jnp.float32), xs)
        logits = h @ p["V"]
        return jnp.mean(-jnp.sum(ys * jax.nn.log_softmax(logits), axis=-1))

    def step(p, xs, ys):
        loss, grads = jax.value_and_grad(loss_fn)(p, xs, ys)
        return loss, jax.tree_util.tree_map(lambda w, g: w - LEARNING_RATE * g, p, grads)

    return timing.donating_runner(step, params, xs_value, ys_value)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--window", type=int, default=5, help="steps per timed window")
    parser.add_argument("--windows", type=int, default=7, help="timed windows per side")
    args = parser.parse_args()
    xs, ys, params = data()
    runners = {"tensorflux": tensorflux_step(xs, ys, params), "jax": jax_step(xs, ys, params)}
    first, rows = timing.race(runners, args.window, args.windows, warmup=3)
    title = (f"RNN (tf.scan, {STEPS} steps, hidden {HIDDEN}, batch {BATCH}) training step, "
             f"first loss {first['tensorflux']:.5f}")
    ratio = timing.print_rows(title, rows, ratio_target=1.10)
    results = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")
    timing.write_json_atomically(os.path.join(results, "control_flow.json"),
                                 {"rows": rows, "time_ratio_vs_jax": ratio})


if __name__ == "__main__":
    main()
