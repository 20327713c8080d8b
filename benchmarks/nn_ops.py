"""Forward and forward+backward time of core NN ops: tensorflux vs the same JAX code.

Ops (float32, NHWC): conv2d 3x3 64->64 on 128x32x32, depthwise conv 3x3 on the same,
max-pool 2x2/2, batch norm (training mode), softmax cross-entropy (1024 x 1000).
Inputs live on the device (tensorflux Variables, JAX device arrays) and each run
fetches a scalar, so both sides time the op, not host transfers; their samples
alternate (tensorflux, JAX, tensorflux, ...) and the ratio is the median of
neighbouring samples' ratios, so drift in machine speed cancels. For conv2d the
achieved GFLOP/s is printed next to the machine's nominal fp32 peak (from
/proc/cpuinfo: cores x GHz x FMA width). Prints a table; writes
benchmarks/results/nn_ops.json.
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


def _time_pair_ms(first, second, repeats, min_sample_ms=50.0):
    """Median ms per call of each function, and the median of their per-pair ratios.

    Samples alternate (a, b, a, b, ...) and each pair's ratio is taken from two
    neighbouring samples, so drift in machine speed (other processes, clock changes)
    cancels in the ratio instead of landing on whichever side it happened to hit. A
    sample runs enough calls to last `min_sample_ms`, so millisecond ops are not timed
    one scheduler tick at a time."""
    for _ in range(30):  # compile, and let the compiler-option autotuner settle (it
        # compares candidates one axis at a time, 10 calls per two-way axis)
        first()
        second()
    start = time.perf_counter()
    first()
    calls = max(1, int(min_sample_ms / 1e3 / max(time.perf_counter() - start, 1e-6)))
    samples = ([], [])
    for _ in range(repeats):
        for fn, out in zip((first, second), samples):
            start = time.perf_counter()
            for _ in range(calls):
                fn()
            out.append((time.perf_counter() - start) * 1e3 / calls)
    ratio = statistics.median(a / b for a, b in zip(*samples))
    return statistics.median(samples[0]), statistics.median(samples[1]), ratio


def nominal_peak_gflops():
    """cores x GHz x 2 FMA pipes x SIMD lanes x 2 flops (an upper bound, not a promise)."""
    with open("/proc/cpuinfo") as f:
        info = f.read()
    mhz = float(info.split("cpu MHz")[1].split(":")[1].split()[0])
    lanes = 16 if "avx512f" in info else (8 if "avx2" in info else 4)
    return os.cpu_count() * mhz / 1000 * 2 * lanes * 2


def cases(rng):
    x = rng.normal(size=(128, 32, 32, 64)).astype(np.float32)
    w = (rng.normal(size=(3, 3, 64, 64)) * 0.05).astype(np.float32)
    dw = (rng.normal(size=(3, 3, 64, 1)) * 0.1).astype(np.float32)
    logits = rng.normal(size=(1024, 1000)).astype(np.float32)
    labels = np.eye(1000, dtype=np.float32)[rng.integers(0, 1000, 1024)]
    scale, offset = np.ones(64, np.float32), np.zeros(64, np.float32)
    dn = ("NHWC", "HWIO", "NHWC")

    def jax_bn(x, scale, offset):
        mean = x.mean(axis=(0, 1, 2))
        var = x.var(axis=(0, 1, 2))
        return (x - mean) * jax.lax.rsqrt(var + 1e-3) * scale + offset

    def jax_pool(x):
        n, h, w_, c = x.shape
        return x.reshape(n, h // 2, 2, w_ // 2, 2, c).max(axis=(2, 4))

    return [
        ("conv2d 3x3 64->64", [x, w],
         lambda a, b: tf.nn.conv2d(a, b, [1, 1, 1, 1], "SAME"),
         lambda a, b: jax.lax.conv_general_dilated(a, b, (1, 1), "SAME", dimension_numbers=dn),
         2 * 128 * 32 * 32 * 64 * 64 * 9),
        ("depthwise conv 3x3", [x, dw],
         lambda a, b: tf.nn.depthwise_conv2d(a, b, [1, 1, 1, 1], "SAME"),
         lambda a, b: jax.lax.conv_general_dilated(
             a, b.reshape(3, 3, 1, 64), (1, 1), "SAME", dimension_numbers=dn,
             feature_group_count=64), None),
        ("max_pool 2x2/2", [x],
         lambda a: tf.nn.max_pool(a, [1, 2, 2, 1], [1, 2, 2, 1], "VALID"), jax_pool, None),
        ("batch_norm (training)", [x, scale, offset],
         lambda a, s, o: tf.nn.fused_batch_norm(a, s, o, epsilon=1e-3, is_training=True)[0],
         jax_bn, None),
        ("softmax xent 1024x1000", [labels, logits],
         lambda y, z: tf.nn.softmax_cross_entropy_with_logits_v2(labels=y, logits=z),
         lambda y, z: -jnp.sum(y * jax.nn.log_softmax(z), axis=-1), None),
    ]


def measure(name, arrays, tf_fn, jax_fn, repeats):
    # Gradients with respect to every input (for cross-entropy: the logits only).
    diff = [1] if name.startswith("softmax") else list(range(len(arrays)))
    with tf.Graph().as_default():
        vars_ = [tf.Variable(a) for a in arrays]
        out = tf_fn(*[v.value() for v in vars_])
        fwd = tf.reduce_sum(out)
        grads = tf.gradients(tf.reduce_sum(out * out), [vars_[i] for i in diff])
        bwd = tf.add_n([tf.reduce_sum(g) for g in grads])
        sess = tf.Session()
        sess.run(tf.global_variables_initializer())
        dev = [jax.device_put(a) for a in arrays]
        j_fwd = jax.jit(lambda *a: jnp.sum(jax_fn(*a)))

        def loss(*a):
            o = jax_fn(*a)
            return jnp.sum(o * o)

        j_bwd = jax.jit(lambda *a: sum(jnp.sum(g) for g in jax.grad(loss, tuple(diff))(*a)))
        tfx_fwd, jax_fwd, fwd_ratio = _time_pair_ms(lambda: sess.run(fwd),
                                                    lambda: np.asarray(j_fwd(*dev)), repeats)
        tfx_bwd, jax_bwd, bwd_ratio = _time_pair_ms(lambda: sess.run(bwd),
                                                    lambda: np.asarray(j_bwd(*dev)), repeats)
        sess.close()
    return {"op": name, "tensorflux_fwd_ms": tfx_fwd, "jax_fwd_ms": jax_fwd,
            "tensorflux_fwd_bwd_ms": tfx_bwd, "jax_fwd_bwd_ms": jax_bwd,
            "fwd_ratio": fwd_ratio, "fwd_bwd_ratio": bwd_ratio}


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--only", help="run only the ops whose name contains this text "
                                       "(the results file is then left as it is)")
    args = parser.parse_args()
    rows = []
    print(f"{'op':24s} {'fwd tfx':>9s} {'fwd jax':>9s} {'ratio':>6s} {'f+b tfx':>9s} "
          f"{'f+b jax':>9s} {'ratio':>6s}")
    for name, arrays, tf_fn, jax_fn, flops in cases(np.random.default_rng(0)):
        if args.only and args.only not in name:
            continue
        row = measure(name, arrays, tf_fn, jax_fn, args.repeats)
        if flops:
            row["conv_gflops_tensorflux"] = flops / row["tensorflux_fwd_ms"] / 1e6
        rows.append(row)
        print(f"{name:24s} {row['tensorflux_fwd_ms']:9.2f} {row['jax_fwd_ms']:9.2f} "
              f"{row['fwd_ratio']:6.3f} {row['tensorflux_fwd_bwd_ms']:9.2f} "
              f"{row['jax_fwd_bwd_ms']:9.2f} {row['fwd_bwd_ratio']:6.3f}")
    if args.only:
        return
    peak = nominal_peak_gflops()
    conv = rows[0]
    print(f"conv2d: {conv['conv_gflops_tensorflux']:.1f} GFLOP/s achieved, nominal fp32 peak "
          f"{peak:.1f} GFLOP/s ({100 * conv['conv_gflops_tensorflux'] / peak:.0f}%)")
    out_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, "nn_ops.json")
    with open(path + ".tmp", "w") as f:
        json.dump({"rows": rows, "nominal_peak_gflops": peak}, f, indent=2)
    os.replace(path + ".tmp", path)


if __name__ == "__main__":
    main()
