"""MatMul with its left operand transposed through oneDNN (ops/linalg/matmul_onednn.py):
which products get the switch, that a session forced to "onednn" calls the kernel and
matches NumPy (float64 products written in the tests), JAX's gradients through it, and
the autotuner choosing between the two lowerings of a weight gradient."""

import jax
import numpy as np
import pytest

import tensorflux as tf
from tensorflux._src.native import onednn
from tensorflux._src.ops import lowering_switches
from tensorflux._src.ops.linalg import matmul_onednn
from tensorflux._src.runtime.config import compiler_options_config

needs_onednn = pytest.mark.skipif(not onednn.available(),
                                  reason=f"oneDNN kernel unavailable: "
                                         f"{onednn.unavailable_reason()}")
SWITCH = lowering_switches.MATMUL_TRANSPOSED_A


def test_only_big_float32_products_with_a_transposed_get_the_switch():
    f32 = np.float32
    assert matmul_onednn.has_choice((512, 768), (512, 3072), f32, True, False)
    assert matmul_onednn.has_choice((512, 768), (3072, 512), f32, True, True)
    assert not matmul_onednn.has_choice((768, 512), (512, 3072), f32, False, False)
    assert not matmul_onednn.has_choice((512, 768), (512, 3072), np.float64, True, False)
    assert not matmul_onednn.has_choice((512, None), (512, 3072), f32, True, False)
    assert not matmul_onednn.has_choice((32, 10), (32, 20), f32, True, False)  # too small
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [512, 768])
        dy = tf.placeholder(tf.float32, [512, 3072])
        weight_grad = tf.matmul(x, dy, transpose_a=True)
        forward = tf.matmul(x, tf.placeholder(tf.float32, [768, 3072]))
        from tensorflux._src.compiler import options
        assert options._switches(weight_grad.op) == (SWITCH,)
        assert options._switches(forward.op) == ()


def _run(fetch_builder, feeds_values, mode):
    calls = []
    original = matmul_onednn.matmul

    def spy(*args, **kwargs):
        calls.append(args[0].shape)
        return original(*args, **kwargs)

    mp = pytest.MonkeyPatch()
    mp.setattr(matmul_onednn, "matmul", spy)
    try:
        with tf.Graph().as_default():
            fetches, feeds = fetch_builder()
            config = compiler_options_config({SWITCH: mode})
            with tf.Session(config=config) as sess:
                return sess.run(fetches, dict(zip(feeds, feeds_values))), calls
    finally:
        mp.undo()


@needs_onednn
@pytest.mark.parametrize("transpose_b", [False, True])
def test_forced_onednn_calls_the_kernel_and_matches_numpy(transpose_b):
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (384, 300)).astype(np.float32)     # stored transposed: 300 x 384
    b = rng.uniform(-1, 1, (500, 384) if transpose_b else (384, 500)).astype(np.float32)
    want = a.T.astype(np.float64) @ (b.T if transpose_b else b).astype(np.float64)

    def build():
        pa, pb = tf.placeholder(tf.float32, a.shape), tf.placeholder(tf.float32, b.shape)
        return tf.matmul(pa, pb, transpose_a=True, transpose_b=transpose_b), [pa, pb]

    for mode, expected_calls in (("onednn", 1), ("dot", 0)):
        got, calls = _run(build, [a, b], mode)
        assert len(calls) == expected_calls, mode
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-3)


@needs_onednn
def test_a_dense_layers_weight_gradient_through_onednn():
    """tf.gradients of a dense layer: dW = x^T @ dy is the transposed product."""
    rng = np.random.default_rng(1)
    x = rng.uniform(-1, 1, (256, 640)).astype(np.float32)
    w = rng.uniform(-1, 1, (640, 320)).astype(np.float32)
    v = rng.uniform(-1, 1, (256, 320)).astype(np.float32)

    def build():
        px, pw = tf.placeholder(tf.float32, x.shape), tf.placeholder(tf.float32, w.shape)
        loss = tf.reduce_sum(v * tf.matmul(px, pw))
        return tf.gradients(loss, pw)[0], [px, pw]

    got, calls = _run(build, [x, w], "onednn")
    assert calls == [(256, 640)]
    np.testing.assert_allclose(got, x.T.astype(np.float64) @ v, rtol=1e-4, atol=1e-3)


@needs_onednn
def test_jax_differentiates_the_call_as_the_product():
    rng = np.random.default_rng(2)
    a = rng.uniform(-1, 1, (200, 300)).astype(np.float32)
    b = rng.uniform(-1, 1, (200, 400)).astype(np.float32)
    v = rng.uniform(-1, 1, (300, 400)).astype(np.float32)

    def loss(a_, b_):
        return (v * matmul_onednn.matmul(a_, b_, True, False)).sum()

    assert onednn.MATMUL_TARGET in jax.jit(loss).lower(a, b).as_text()
    ga, gb = jax.grad(loss, argnums=(0, 1))(a, b)
    # loss = sum(v * a^T b): d/da = b v^T, d/db = a v
    np.testing.assert_allclose(ga, b.astype(np.float64) @ v.T, rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(gb, a.astype(np.float64) @ v, rtol=1e-4, atol=1e-3)


@needs_onednn
def test_products_without_a_fast_kernel_keep_xla():
    assert matmul_onednn.usable((300, 200), (300, 400), np.float32, True, False)
    assert not matmul_onednn.usable((300, 200), (300, 400), np.float64, True, False)
    assert not matmul_onednn.usable((0, 200), (0, 400), np.float32, True, False)
    ok, info = onednn.matmul_plan(0, 3, 5, 0, 0)  # an empty product: reference kernel only
    assert not ok or info.startswith("ref")


def test_a_weight_gradient_is_autotuned_between_the_lowerings():
    rng = np.random.default_rng(3)
    x = rng.uniform(-1, 1, (512, 512)).astype(np.float32)
    dy = rng.uniform(-1, 1, (512, 512)).astype(np.float32)
    with tf.Graph().as_default():
        px, pdy = tf.placeholder(tf.float32, x.shape), tf.placeholder(tf.float32, dy.shape)
        dw = tf.matmul(px, pdy, transpose_a=True)
        with tf.Session() as sess:
            for _ in range(12):
                got = sess.run(dw, {px: x, pdy: dy})
            (run,) = sess._runs.values()
            assert not run.executable.tuning
            chosen = run.executable.compiler_options[SWITCH]
    assert chosen in lowering_switches.alternatives(SWITCH)
    np.testing.assert_allclose(got, x.T.astype(np.float64) @ dy, rtol=1e-4, atol=1e-3)
