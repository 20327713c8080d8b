"""The fusion barrier (native/fusion_barrier.py): the identity, computed into its own
buffer on XLA:CPU, and AddN's use of it for sums with several consumers."""

from __future__ import annotations

import threading

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import tensorflux as tf
from tensorflux._src.compiler import effects, region_analysis
from tensorflux._src.native import build, fusion_barrier
from tensorflux._src.ops.math import math_ops

needs_barrier = pytest.mark.skipif(not fusion_barrier.available(),
                                   reason=f"{fusion_barrier.unavailable_reason()}")


def _compiled_text(f, *args):
    return jax.jit(f).lower(*args).compile().as_text()


@needs_barrier
def test_values_gradients_and_batches_pass_through_unchanged():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(64, 33)).astype(np.float32)
    y = jax.jit(lambda v: fusion_barrier.materialize(v * 2.0) + 1.0)(x)
    np.testing.assert_array_equal(np.asarray(y), x * 2.0 + 1.0)
    grad = jax.jit(jax.grad(lambda v: jnp.sum(fusion_barrier.materialize(v * v) * 3.0)))(x)
    np.testing.assert_allclose(np.asarray(grad), 6.0 * x, rtol=1e-6)
    batched = jax.jit(jax.vmap(lambda v: fusion_barrier.materialize(v + 1.0)))(x)
    np.testing.assert_array_equal(np.asarray(batched), x + 1.0)
    ints = jax.jit(lambda v: fusion_barrier.materialize(v * 3))(np.arange(10, dtype=np.int32))
    np.testing.assert_array_equal(np.asarray(ints), np.arange(10) * 3)


def test_concrete_and_empty_values_are_returned_as_they_are():
    x = np.ones((2, 3), np.float32)
    assert fusion_barrier.materialize(x) is x
    empty = jax.jit(lambda v: fusion_barrier.materialize(v * 2.0))(np.ones((0, 4), np.float32))
    assert empty.shape == (0, 4)


@needs_barrier
def test_the_compiled_program_keeps_the_barrier():
    """XLA:CPU drops jax.lax.optimization_barrier before fusing; this call must stay."""
    x = np.ones((256, 256), np.float32)

    def shared_sum(v):
        s = fusion_barrier.materialize(v + v * 2.0)
        return jnp.sum(s * v, axis=1), jnp.max(s, axis=0)

    assert f'custom_call_target="{fusion_barrier.TARGET}"' in _compiled_text(shared_sum, x)


@needs_barrier
def test_a_program_with_barriers_keeps_region_analysis():
    """No conditional in its trace: a platform choice made with `lax.platform_dependent`
    would have compiled the whole program without region analysis (714 copies of the
    Transformer's variables per step)."""
    jaxpr = jax.make_jaxpr(lambda v: fusion_barrier.materialize(v * 2.0))(np.ones(8))
    assert "tensorflux_fusion_barrier" in str(jaxpr)
    assert not region_analysis.has_regions(jaxpr)


def _add_n_with_consumers(count, shape):
    graph = tf.Graph()
    with graph.as_default():
        xs = [tf.placeholder(tf.float32, shape) for _ in range(3)]
        total = tf.add_n(xs)
        for i in range(count):
            _ = total * float(i + 2)
    return total.op


@needs_barrier
@pytest.mark.parametrize("consumers, shape, barrier", [
    (2, [256, 256], True),    # shared and big: computed once
    (1, [256, 256], False),   # one consumer: XLA fusing it there duplicates nothing
    (3, [16, 16], False),     # small: cheaper to recompute than another kernel
])
def test_add_n_puts_a_shared_big_sum_behind_the_barrier(consumers, shape, barrier):
    op = _add_n_with_consumers(consumers, shape)
    x = np.full(shape, 1.5, np.float32)

    def lowered(a, b, c):
        effects.set_current_op(op)
        try:
            return math_ops._add_n_lower(a, b, c)
        finally:
            effects.set_current_op(None)

    text = _compiled_text(lowered, x, x, x)
    assert (f'custom_call_target="{fusion_barrier.TARGET}"' in text) == barrier
    np.testing.assert_array_equal(np.asarray(jax.jit(lowered)(x, x, x)), 3 * x)


def test_add_n_in_a_session_matches_numpy_with_several_consumers():
    rng = np.random.default_rng(1)
    values = [rng.normal(size=(300, 300)).astype(np.float32) for _ in range(3)]
    xs = [tf.placeholder(tf.float32, [300, 300]) for _ in range(3)]
    total = tf.add_n(xs)
    doubled, shifted = total * 2.0, total + 1.0
    with tf.Session() as sess:
        got = sess.run([doubled, shifted], dict(zip(xs, values)))
    expected = values[0] + values[1] + values[2]
    np.testing.assert_allclose(got[0], expected * 2.0, rtol=1e-6)
    np.testing.assert_allclose(got[1], expected + 1.0, rtol=1e-6)


def test_turned_off_or_unbuildable_it_says_why(monkeypatch):
    monkeypatch.setenv("TENSORFLUX_FUSION_BARRIER", "0")
    lib, reason = fusion_barrier._load()
    assert lib is None and "TENSORFLUX_FUSION_BARRIER" in reason
    monkeypatch.setenv("TENSORFLUX_FUSION_BARRIER", "1")
    monkeypatch.setattr(build, "build", lambda *a, **k: (None, "no C++ compiler (c++ or $CXX)"))
    lib, reason = fusion_barrier._load()
    assert lib is None and reason == "no C++ compiler (c++ or $CXX)"


def test_a_kernel_is_loaded_once_whichever_thread_asks_first():
    calls = []

    def load():
        calls.append(1)
        return "lib", None

    once = build.Once(load)
    threads = [threading.Thread(target=once.library) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert once.library() == "lib" and once.reason() is None and len(calls) == 1


def test_a_failed_build_says_why_and_leaves_no_partial_library(tmp_path, monkeypatch):
    monkeypatch.setenv("TENSORFLUX_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("TENSORFLUX_COMPILATION_CACHE", "1")
    monkeypatch.setenv("CXX", "false")  # a "compiler" that always fails
    path, reason = build.build("fusion_barrier", fusion_barrier.SOURCE, "the fusion barrier")
    assert path is None and reason.startswith(f"building {fusion_barrier.SOURCE} failed")
    assert not [p for p in tmp_path.rglob("*.so")]
