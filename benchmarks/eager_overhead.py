"""Eager execution overhead: per-op dispatch on small ops vs JAX op-by-op (and PyTorch
eager when installed), and a defun'd MLP training step vs the graph-mode Session step.

    python benchmarks/eager_overhead.py [--json out.json]

Each eager measurement runs in this process after tf.enable_eager_execution(); the
graph-mode step is built inside `with tf.Graph().as_default()`. Prints a table of
microseconds and ratios; never asserts."""

import argparse
import json
import time

import jax
import jax.numpy as jnp
import numpy as np

import tensorflux as tf


def per_call(fn, n):
    fn()
    t = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - t) / n


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--json")
    parser.add_argument("--n", type=int, default=2000)
    args = parser.parse_args()
    tf.enable_eager_execution()
    rows = {}
    a_np = np.ones((4, 4), np.float32)
    a = tf.constant(a_np)
    ja = jnp.asarray(a_np)
    jadd = jax.jit(jnp.add)
    # Every column waits for its result (JAX dispatches asynchronously): ours by
    # blocking on the EagerTensor's device buffer.
    rows["add 4x4"] = (per_call(lambda: tf.add(a, a)._value.block_until_ready(), args.n),
                       per_call(lambda: jnp.add(ja, ja).block_until_ready(), args.n),
                       per_call(lambda: jadd(ja, ja).block_until_ready(), args.n))
    rows["matmul 4x4"] = (per_call(lambda: tf.matmul(a, a)._value.block_until_ready(),
                                   args.n),
                          per_call(lambda: jnp.matmul(ja, ja).block_until_ready(), args.n),
                          None)
    rows["relu 4x4"] = (per_call(lambda: tf.nn.relu(a)._value.block_until_ready(), args.n),
                        per_call(lambda: jax.nn.relu(ja).block_until_ready(), args.n), None)
    try:
        import torch
        ta = torch.ones(4, 4)
        torch_rows = {"add 4x4": per_call(lambda: torch.add(ta, ta), args.n),
                      "matmul 4x4": per_call(lambda: torch.matmul(ta, ta), args.n),
                      "relu 4x4": per_call(lambda: torch.relu(ta), args.n)}
    except ImportError:
        torch_rows = {}
    print(f"{'op':<12}{'tensorflux eager us':>22}{'jax op-by-op us':>18}{'jax jit us':>12}"
          f"{'torch us':>10}")
    for name, (ours, jx, jit) in rows.items():
        torch_us = torch_rows.get(name)
        print(f"{name:<12}{ours * 1e6:>22.1f}{jx * 1e6:>18.1f}"
              f"{(jit or float('nan')) * 1e6:>12.1f}"
              f"{(torch_us or float('nan')) * 1e6:>10.1f}")
    if not torch_rows:
        print("(PyTorch is not installed: no torch column)")

    # -- an MLP training step: defun'd eager step vs graph-mode Session step ----------
    rng = np.random.RandomState(0)
    x = rng.rand(128, 784).astype(np.float32)
    y = rng.randint(0, 10, 128).astype(np.int64)

    def make_model():
        return tf.layers.Dense(256, activation=tf.nn.relu), tf.layers.Dense(10)

    def loss_of(layers, xb, yb):
        return tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
            logits=layers[1](layers[0](xb)), labels=yb))

    layers = make_model()
    opt = tf.train.AdamOptimizer(1e-3)

    def eager_step(xb, yb):
        with tf.GradientTape() as tape:
            loss = loss_of(layers, xb, yb)
        variables = layers[0].trainable_weights + layers[1].trainable_weights
        opt.apply_gradients(zip(tape.gradient(loss, variables), variables))
        return loss

    defun_step = tf.contrib.eager.defun(eager_step)
    xt, yt = tf.constant(x), tf.constant(y)
    steps = 200
    eager_ms = per_call(lambda: eager_step(xt, yt), 30) * 1e3
    defun_ms = per_call(lambda: defun_step(xt, yt), steps) * 1e3
    with tf.Graph().as_default():
        xp = tf.placeholder(tf.float32, [128, 784])
        yp = tf.placeholder(tf.int64, [128])
        glayers = make_model()
        train = tf.train.AdamOptimizer(1e-3).minimize(loss_of(glayers, xp, yp))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            graph_ms = per_call(lambda: sess.run(train, {xp: x, yp: y}), steps) * 1e3
    print(f"\nMLP 784-256-10 Adam step, batch 128 (ms): eager {eager_ms:.2f}, "
          f"defun {defun_ms:.2f}, graph Session {graph_ms:.2f}; defun/graph "
          f"{defun_ms / graph_ms:.2f}x")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"ops_us": {k: [v * 1e6 if v else None for v in vals]
                                  for k, vals in rows.items()},
                       "torch_us": {k: v * 1e6 for k, v in torch_rows.items()},
                       "mlp_ms": {"eager": eager_ms, "defun": defun_ms, "graph": graph_ms}},
                      f, indent=1)


if __name__ == "__main__":
    main()
