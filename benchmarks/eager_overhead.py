"""Eager execution overhead: per-op dispatch on small ops vs JAX op-by-op (and PyTorch
eager when installed), and a defun'd MLP training step vs the graph-mode Session step.

    python benchmarks/eager_overhead.py [--json out.json] [--torch-python PATH]

The PyTorch column comes from benchmarks/peers/torch_eager.py, run in a subprocess by
the interpreter given as --torch-python (a venv with torch), or in this process when
torch is importable here.

Each eager measurement runs in this process after tf.enable_eager_execution(); the
graph-mode step is built inside `with tf.Graph().as_default()`. Prints a table of
microseconds and ratios; never asserts."""

import argparse
import json
import pathlib
import subprocess
import sys
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


def torch_timings(torch_python, n):
    """PyTorch's timings from peers/torch_eager.py ({} when torch is not available)."""
    script = pathlib.Path(__file__).resolve().parent / "peers" / "torch_eager.py"
    if torch_python is None:
        try:
            import torch  # noqa: F401
        except ImportError:
            return {}
        torch_python = sys.executable
    proc = subprocess.run([torch_python, str(script), "--n", str(n)], capture_output=True,
                          text=True, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--json")
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--torch-python", help="an interpreter that can import torch")
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
    torch_result = torch_timings(args.torch_python, args.n)
    torch_rows = torch_result.get("ops_us", {})
    print(f"{'op':<12}{'tensorflux eager us':>22}{'jax op-by-op us':>18}{'jax jit us':>12}"
          f"{'torch us':>10}")
    for name, (ours, jx, jit) in rows.items():
        torch_us = torch_rows.get(name, float("nan")) / 1e6
        print(f"{name:<12}{ours * 1e6:>22.1f}{jx * 1e6:>18.1f}"
              f"{(jit or float('nan')) * 1e6:>12.1f}"
              f"{torch_us * 1e6:>10.1f}")
    if not torch_rows:
        print("(PyTorch not available: pass --torch-python PATH for the torch column)")
    else:
        print(f"(torch {torch_result['torch_version']}, {torch_result['threads']} threads)")

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
          f"{defun_ms / graph_ms:.2f}x"
          + (f"; PyTorch eager {torch_result['mlp_ms']:.2f}" if torch_result else ""))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"ops_us": {k: [v * 1e6 if v else None for v in vals]
                                  for k, vals in rows.items()},
                       "torch": torch_result,
                       "mlp_ms": {"eager": eager_ms, "defun": defun_ms, "graph": graph_ms}},
                      f, indent=1)


if __name__ == "__main__":
    main()
