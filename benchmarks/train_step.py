"""Compiled training-step time and step memory: tensorflux vs the same model in JAX.

Models:
  mlp  784-1024-1024-10 (ReLU), softmax cross-entropy, Adam, batch 256, float32
  cnn  three 3x3 conv+ReLU (32/64/128 channels), 2x2 max-pool after the first two,
       global average pool, dense 10, softmax cross-entropy, Momentum, batch 128,
       32x32x3 input, float32

Each implementation runs in its own subprocess so peak memory is measured separately:
after warm-up, the kernel's peak-RSS counter is reset and `steps` more steps run.
"step MB" is that peak minus the RSS measured right after imports (model, optimizer
state, compiled program and whatever the process kept from building them);
"transient MB" is that peak minus the RSS just before the timed steps (what one step
allocates on top of the steady state: with in-place updates, no copy of the
parameters). A TF1 column
(TensorFlow's compat.v1 graph mode, with oneDNN) is added when `tensorflow` is
importable, or from another interpreter given by --tf-python (TensorFlow may want
other versions of shared packages, so a separate virtual environment is simplest); a
PyTorch column (eager, NCHW, the same initial weights) likewise with torch or
--torch-python. Implementations alternate in `--rounds` rounds; the table shows each
one's best round, and each ratio is also given per round (the two ran in the same
round), so a lead smaller than the machine's noise shows as such. Prints a table and
writes JSON to benchmarks/results/train_step.json.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from timing import reset_peak_rss, rss_mb  # noqa: E402  (the benchmarks' shared helpers)

MLP_BATCH, MLP_SIZES = 256, (784, 1024, 1024, 10)
CNN_BATCH, CNN_CHANNELS = 128, (32, 64, 128)


# -- data and initial weights, shared by every implementation --------------------------------
def mlp_data():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(MLP_BATCH, MLP_SIZES[0])).astype(np.float32)
    onehot = np.eye(MLP_SIZES[-1], dtype=np.float32)[rng.integers(0, 10, MLP_BATCH)]
    weights = [(rng.normal(size=(a, b)) * np.sqrt(2.0 / a)).astype(np.float32)
               for a, b in zip(MLP_SIZES[:-1], MLP_SIZES[1:])]
    return x, onehot, weights


def cnn_data():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(CNN_BATCH, 32, 32, 3)).astype(np.float32)
    onehot = np.eye(10, dtype=np.float32)[rng.integers(0, 10, CNN_BATCH)]
    kernels, c_in = [], 3
    for c_out in CNN_CHANNELS:
        kernels.append((rng.normal(size=(3, 3, c_in, c_out)) * np.sqrt(2.0 / (9 * c_in)))
                       .astype(np.float32))
        c_in = c_out
    dense = (rng.normal(size=(c_in, 10)) * np.sqrt(1.0 / c_in)).astype(np.float32)
    return x, onehot, kernels, dense


# -- the TF1 program: runs on tensorflux, or on TensorFlow's compat.v1 ------------------------
def tf1_mlp(tf, x, onehot, weights):
    xs = tf.placeholder(tf.float32, [None, MLP_SIZES[0]])
    ys = tf.placeholder(tf.float32, [None, MLP_SIZES[-1]])
    h = xs
    for i, w0 in enumerate(weights):
        w = tf.Variable(w0, name=f"w{i}")
        b = tf.Variable(np.zeros(w0.shape[1], np.float32), name=f"b{i}")
        h = tf.matmul(h, w) + b
        if i < len(weights) - 1:
            h = tf.nn.relu(h)
    loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=ys, logits=h))
    train = tf.train.AdamOptimizer(1e-3).minimize(loss)
    return _tf1_runner(tf, train, loss, {xs: x, ys: onehot})


def tf1_cnn(tf, x, onehot, kernels, dense):
    xs = tf.placeholder(tf.float32, [None, 32, 32, 3])
    ys = tf.placeholder(tf.float32, [None, 10])
    h = xs
    for i, k in enumerate(kernels):
        w = tf.Variable(k, name=f"conv{i}")
        b = tf.Variable(np.zeros(k.shape[-1], np.float32), name=f"conv{i}_b")
        h = tf.nn.relu(tf.nn.conv2d(h, w, strides=[1, 1, 1, 1], padding="SAME") + b)
        if i < 2:
            h = tf.nn.max_pool(h, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="VALID")
    h = tf.reduce_mean(h, axis=[1, 2])
    logits = tf.matmul(h, tf.Variable(dense, name="dense")) + tf.Variable(
        np.zeros(10, np.float32), name="dense_b")
    loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=ys, logits=logits))
    train = tf.train.MomentumOptimizer(0.01, 0.9).minimize(loss)
    return _tf1_runner(tf, train, loss, {xs: x, ys: onehot})


def _tf1_runner(tf, train, loss, feed):
    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    return lambda: sess.run([train, loss], feed)[1]


# -- the same models written directly in JAX ---------------------------------------------------
def jax_mlp(x, onehot, weights):
    import jax
    import jax.numpy as jnp
    params = [(jnp.asarray(w), jnp.zeros(w.shape[1], jnp.float32)) for w in weights]

    def loss_fn(params, x, y):
        h = x
        for i, (w, b) in enumerate(params):
            h = h @ w + b
            if i < len(params) - 1:
                h = jax.nn.relu(h)
        return jnp.mean(-jnp.sum(y * jax.nn.log_softmax(h), axis=-1))

    def step(params, state, x, y):
        loss, g = jax.value_and_grad(loss_fn)(params, x, y)
        m, v, t = state
        lr, b1, b2, eps = 1e-3, 0.9, 0.999, 1e-8
        m = jax.tree_util.tree_map(lambda m, g: b1 * m + (1 - b1) * g, m, g)
        v = jax.tree_util.tree_map(lambda v, g: b2 * v + (1 - b2) * g * g, v, g)
        lr_t = lr * jnp.sqrt(1 - b2 ** t) / (1 - b1 ** t)
        params = jax.tree_util.tree_map(lambda p, m, v: p - lr_t * m / (jnp.sqrt(v) + eps),
                                        params, m, v)
        return params, (m, v, t + 1), loss

    m = jax.tree_util.tree_map(jnp.zeros_like, params)
    v = jax.tree_util.tree_map(jnp.zeros_like, params)  # distinct buffers: both are donated
    return _jax_runner(step, params, (m, v, jnp.float32(1.0)), x, onehot)


def jax_cnn(x, onehot, kernels, dense):
    import jax
    import jax.numpy as jnp
    params = ([(jnp.asarray(k), jnp.zeros(k.shape[-1], jnp.float32)) for k in kernels],
              (jnp.asarray(dense), jnp.zeros(10, jnp.float32)))

    def loss_fn(params, x, y):
        convs, (dw, db) = params
        h = x
        for i, (k, b) in enumerate(convs):
            h = jax.lax.conv_general_dilated(h, k, (1, 1), "SAME",
                                             dimension_numbers=("NHWC", "HWIO", "NHWC"))
            h = jax.nn.relu(h + b)
            if i < 2:
                n, hh, ww, c = h.shape
                h = h.reshape(n, hh // 2, 2, ww // 2, 2, c).max(axis=(2, 4))
        logits = h.mean(axis=(1, 2)) @ dw + db
        return jnp.mean(-jnp.sum(y * jax.nn.log_softmax(logits), axis=-1))

    def step(params, velocity, x, y):
        loss, g = jax.value_and_grad(loss_fn)(params, x, y)
        velocity = jax.tree_util.tree_map(lambda v, g: 0.9 * v + g, velocity, g)
        params = jax.tree_util.tree_map(lambda p, v: p - 0.01 * v, params, velocity)
        return params, velocity, loss

    return _jax_runner(step, params, jax.tree_util.tree_map(jnp.zeros_like, params), x, onehot)


def _jax_runner(step, params, state, x, y):
    import jax
    step = jax.jit(step, donate_argnums=(0, 1))
    box = {"params": params, "state": state}

    def run():
        box["params"], box["state"], loss = step(box["params"], box["state"], x, y)
        return np.asarray(loss)

    return run


# -- the same models in PyTorch (eager, NCHW), from the same initial weights --------------------
def torch_mlp(x, onehot, weights):
    import torch
    layers = [torch.nn.Linear(a.shape[0], a.shape[1]) for a in weights]
    with torch.no_grad():
        for layer, w in zip(layers, weights):
            layer.weight.copy_(torch.from_numpy(w.T))
            layer.bias.zero_()
    net = torch.nn.Sequential(*[m for layer in layers for m in (layer, torch.nn.ReLU())][:-1])
    opt = torch.optim.Adam(net.parameters(), lr=1e-3, betas=(0.9, 0.999), eps=1e-8)
    return _torch_runner(net, opt, torch.from_numpy(x), torch.from_numpy(onehot))


def torch_cnn(x, onehot, kernels, dense):
    import torch
    convs = []
    for k in kernels:  # HWIO -> OIHW
        conv = torch.nn.Conv2d(k.shape[2], k.shape[3], 3, padding=1)
        with torch.no_grad():
            conv.weight.copy_(torch.from_numpy(np.ascontiguousarray(k.transpose(3, 2, 0, 1))))
            conv.bias.zero_()
        convs.append(conv)
    head = torch.nn.Linear(dense.shape[0], dense.shape[1])
    with torch.no_grad():
        head.weight.copy_(torch.from_numpy(dense.T))
        head.bias.zero_()
    pool = torch.nn.MaxPool2d(2)
    net = torch.nn.Sequential(convs[0], torch.nn.ReLU(), pool, convs[1], torch.nn.ReLU(), pool,
                              convs[2], torch.nn.ReLU(), torch.nn.AdaptiveAvgPool2d(1),
                              torch.nn.Flatten(), head)
    # TF's MomentumOptimizer: accum = 0.9 * accum + g; var -= 0.01 * accum (torch's form)
    opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    images = torch.from_numpy(np.ascontiguousarray(x.transpose(0, 3, 1, 2)))
    return _torch_runner(net, opt, images, torch.from_numpy(onehot))


def _torch_runner(net, opt, x, y):
    import torch

    def run():
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.cross_entropy(net(x), y)  # y: one-hot probabilities
        loss.backward()
        opt.step()
        return loss.detach().numpy()

    return run


# -- measurement --------------------------------------------------------------------------------
def build(model, impl):
    data = mlp_data() if model == "mlp" else cnn_data()
    if impl == "jax":
        return (jax_mlp if model == "mlp" else jax_cnn)(*data)
    if impl == "torch":
        return (torch_mlp if model == "mlp" else torch_cnn)(*data)
    if impl == "tensorflux":
        import tensorflux as tf
    else:
        import tensorflow.compat.v1 as tf
        tf.disable_eager_execution()
    return (tf1_mlp if model == "mlp" else tf1_cnn)(tf, *data)


def measure(model, impl, steps):
    """Runs in a subprocess: prints one JSON line with times and memory."""
    if impl == "tf1":
        import tensorflow  # noqa: F401  (import before the baseline, like the others)
    elif impl == "torch":
        import torch  # noqa: F401
    else:
        import jax  # noqa: F401
    base = rss_mb("VmRSS")
    run = build(model, impl)
    first_loss = float(run())
    for _ in range(29):  # compile, and let tensorflux's compiler-option autotuner settle
        run()  # (5 calls per candidate: up to 3 conv lowerings, then library fusion)
    reset_peak_rss()
    steady = rss_mb("VmRSS")
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    peak = rss_mb("VmHWM")
    print(json.dumps({"impl": impl, "median_ms": statistics.median(times) * 1e3,
                      "step_mb": peak - base, "transient_mb": peak - steady,
                      "first_loss": first_loss}))


def compare(model, steps, rounds, tf_python, torch_python=None):
    impls = (["jax", "tensorflux"] + (["tf1"] if tf_python else [])
             + (["torch"] if torch_python else []))
    pythons = {"tf1": tf_python, "torch": torch_python}
    best, per_round = {}, {impl: [] for impl in impls}
    for _ in range(rounds):  # interleaved rounds, best of each: fairer on a noisy machine
        for impl in impls:
            python = pythons.get(impl) or sys.executable
            out = subprocess.run([python, os.path.abspath(__file__), "--model", model,
                                  "--impl", impl, "--steps", str(steps)],
                                 capture_output=True, text=True)
            if out.returncode != 0:
                raise RuntimeError(f"{model}/{impl} failed:\n{out.stderr[-3000:]}")
            row = json.loads(out.stdout.strip().splitlines()[-1])
            per_round[impl].append(row["median_ms"])
            if impl not in best or row["median_ms"] < best[impl]["median_ms"]:
                best[impl] = row
    return best, per_round


def _ratio_line(peer, ratio, tfx_rounds, peer_rounds):
    """The best-of-rounds time ratio, and each round's: the two ran minutes apart in the
    same round, so the per-round ratios show how much of a lead is the machine's noise."""
    paired = [a / b for a, b in zip(tfx_rounds, peer_rounds)]
    ahead = sum(r < 1 for r in paired)
    return (f"     tensorflux/{peer}: time {ratio:.3f}; per round "
            f"{' '.join(f'{r:.3f}' for r in paired)} (median {statistics.median(paired):.3f}, "
            f"tensorflux faster in {ahead} of {len(paired)})")


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", choices=["mlp", "cnn", "all"], default="all")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--tf-python", default=os.environ.get("TENSORFLOW_PYTHON"),
                        help="a Python interpreter with tensorflow installed, for the TF1 "
                             "column (default: this one, if it has tensorflow)")
    parser.add_argument("--torch-python", default=os.environ.get("TORCH_PYTHON"),
                        help="a Python interpreter with torch installed, for the PyTorch "
                             "column (default: this one, if it has torch)")
    parser.add_argument("--impl", choices=["tensorflux", "jax", "tf1", "torch"],
                        help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.tf_python is None and importlib.util.find_spec("tensorflow") is not None:
        args.tf_python = sys.executable
    if args.torch_python is None and importlib.util.find_spec("torch") is not None:
        args.torch_python = sys.executable
    if args.impl:
        measure(args.model, args.impl, args.steps)
        return
    models = ["mlp", "cnn"] if args.model == "all" else [args.model]
    results = {}
    for model in models:
        rows, per_round = compare(model, args.steps, args.rounds, args.tf_python,
                                  args.torch_python)
        tfx, ref = rows["tensorflux"], rows["jax"]
        print(f"\n{model}: {'impl':11s} {'step ms':>9s} {'step MB':>9s} {'transient MB':>13s} "
              f"{'first loss':>11s}")
        for row in rows.values():
            print(f"{'':5s}{row['impl']:11s} {row['median_ms']:9.2f} {row['step_mb']:9.1f} "
                  f"{row['transient_mb']:13.1f} {row['first_loss']:11.5f}")
        summary = {"rows": rows, "rounds_ms": per_round,
                   "memory_ratio_vs_jax": tfx["step_mb"] / ref["step_mb"]}
        for peer in ("jax", "tf1", "torch"):
            if peer not in rows:
                package = {"tf1": "tensorflow"}.get(peer, peer)
                print(f"     ({package} not installed: no {peer} column)")
                continue
            ratio = summary[f"time_ratio_vs_{peer}"] = tfx["median_ms"] / rows[peer]["median_ms"]
            print(_ratio_line(peer, ratio, per_round["tensorflux"], per_round[peer]))
        print(f"     tensorflux/jax: memory {summary['memory_ratio_vs_jax']:.3f}")
        results[model] = summary
    out_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, "train_step.json")
    with open(path + ".tmp", "w") as f:
        json.dump(results, f, indent=2)
    os.replace(path + ".tmp", path)


if __name__ == "__main__":
    main()
