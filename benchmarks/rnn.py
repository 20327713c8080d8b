"""An LSTM training step through tf.nn.dynamic_rnn: tensorflux vs the same model in JAX.

Model: BasicLSTMCell(256) over 100 steps of 128 features (batch 64, batch-major input),
logits = (output at the last step) V with 10 classes, softmax cross-entropy, plain SGD.
The JAX side is the straightforward equivalent: transpose to time-major, `lax.scan`
of TF1's cell equations (concat [x, h], one matmul, gates i, j, f, o, forget bias 1),
`jax.value_and_grad`, jitted with the parameters donated. Both start from the same
weights and data in this process; timed windows alternate between them and the median
window per step is reported, so machine noise hits both alike. Checks that both compute
the same first loss. Prints a table; writes benchmarks/results/rnn.json atomically.
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

STEPS, BATCH, INPUT, HIDDEN, CLASSES = 100, 64, 128, 256, 10
LEARNING_RATE = 0.01
FORGET_BIAS = 1.0


def data():
    rng = np.random.default_rng(0)
    xs = rng.normal(size=(BATCH, STEPS, INPUT)).astype(np.float32)
    ys = rng.integers(0, CLASSES, BATCH).astype(np.int32)
    params = {
        "kernel": (rng.normal(size=(INPUT + HIDDEN, 4 * HIDDEN))
                   / np.sqrt(INPUT + HIDDEN)).astype(np.float32),
        "bias": np.zeros(4 * HIDDEN, np.float32),
        "V": (rng.normal(size=(HIDDEN, CLASSES)) / np.sqrt(HIDDEN)).astype(np.float32),
    }
    return xs, ys, params


def tensorflux_step(xs_value, ys_value, params):
    graph = tf.Graph()
    with graph.as_default():
        xs = tf.placeholder(tf.float32, [BATCH, STEPS, INPUT])
        ys = tf.placeholder(tf.int32, [BATCH])
        cell = tf.nn.rnn_cell.BasicLSTMCell(HIDDEN, forget_bias=FORGET_BIAS)
        outputs, _ = tf.nn.dynamic_rnn(cell, xs, dtype=tf.float32)
        v = tf.Variable(params["V"], name="V")
        logits = tf.matmul(outputs[:, -1], v)
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=ys,
                                                                             logits=logits))
        train = tf.train.GradientDescentOptimizer(LEARNING_RATE).minimize(loss)
        init = tf.global_variables_initializer()
    sess = tf.Session(graph=graph)
    sess.run(init)
    kernel, bias = cell.weights
    kernel.load(params["kernel"], sess)
    bias.load(params["bias"], sess)
    feed = {xs: xs_value, ys: ys_value}
    return lambda: sess.run([loss, train], feed)[0]


def jax_step(xs_value, ys_value, params):
    def loss_fn(p, xs, ys):
        def cell(carry, x):
            c, h = carry
            gates = jnp.concatenate([x, h], 1) @ p["kernel"] + p["bias"]
            i, j, f, o = jnp.split(gates, 4, axis=1)
            c = c * jax.nn.sigmoid(f + FORGET_BIAS) + jax.nn.sigmoid(i) * jnp.tanh(j)
            h = jnp.tanh(c) * jax.nn.sigmoid(o)
            return (c, h), h

        zeros = jnp.zeros((BATCH, HIDDEN), jnp.float32)
        _, hs = jax.lax.scan(cell, (zeros, zeros), jnp.transpose(xs, (1, 0, 2)))
        logits = hs[-1] @ p["V"]
        picked = jnp.take_along_axis(jax.nn.log_softmax(logits), ys[:, None], axis=1)
        return -jnp.mean(picked)

    def step(p, xs, ys):
        loss, grads = jax.value_and_grad(loss_fn)(p, xs, ys)
        return loss, jax.tree_util.tree_map(lambda w, g: w - LEARNING_RATE * g, p, grads)

    return timing.donating_runner(step, params, xs_value, ys_value)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--window", type=int, default=3, help="steps per timed window")
    parser.add_argument("--windows", type=int, default=9, help="timed windows per side")
    args = parser.parse_args()
    xs, ys, params = data()
    runners = {"tensorflux": tensorflux_step(xs, ys, params), "jax": jax_step(xs, ys, params)}
    first, rows = timing.race(runners, args.window, args.windows, warmup=2)
    title = (f"LSTM dynamic_rnn ({STEPS} steps, input {INPUT}, hidden {HIDDEN}, "
             f"batch {BATCH}) SGD training step, first loss {first['tensorflux']:.5f}")
    ratio = timing.print_rows(title, rows, ratio_target=1.10)
    timing.write_json_atomically(
        os.path.join(os.path.dirname(os.path.abspath(__file__)), "results", "rnn.json"),
        {"model": {"steps": STEPS, "batch": BATCH, "input": INPUT, "hidden": HIDDEN,
                   "classes": CLASSES, "optimizer": "sgd"},
         "rows": rows, "time_ratio_vs_jax": ratio, "device": jax.devices()[0].platform})


if __name__ == "__main__":
    main()
