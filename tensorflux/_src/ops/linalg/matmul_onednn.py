"""MatMul with its left operand transposed (a weight gradient, x^T @ dy) through oneDNN
(native/onednn.py): the "onednn" alternative of the
`tensorflux_matmul_transposed_a_lowering` switch (ops/lowering_switches.py).

XLA:CPU's dot kernels are slow on that form (the left operand contracted over its
rows): alone on the 2-core AVX-512 machine, 3072x512x768 7.2 -> 4.9 ms and a tied
50257-word embedding's gradient 134 -> 91 ms with oneDNN's brgemm, while products in
the plain form were as fast or faster in XLA. So only these MatMuls have the switch,
and only when big enough for a second compile of their cluster to be worth timing
(`has_choice`); the autotuner then measures the cluster both ways. A product oneDNN has
only a reference kernel for keeps XLA's dot (`usable`). Under JAX's own differentiation
each call differentiates as the product it replaces (`jax.custom_vjp`).
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from tensorflux._src.native import onednn

# Products under this many floating-point operations (~0.25 ms at XLA's speed) are not
# worth compiling their cluster twice to time.
MIN_FLOPS = 1e8


def _dims(a_shape, b_shape, transpose_a, transpose_b):
    """(m, k, n) of op(a) @ op(b), None when a dimension is unknown."""
    if len(a_shape) != 2 or len(b_shape) != 2 or None in (*a_shape, *b_shape):
        return None
    m, k = (a_shape[1], a_shape[0]) if transpose_a else tuple(a_shape)
    n = b_shape[0] if transpose_b else b_shape[1]
    return int(m), int(k), int(n)


def has_choice(a_shape, b_shape, dtype, transpose_a, transpose_b) -> bool:
    """Whether a MatMul gets the switch: float32, left operand transposed, static and
    big enough."""
    dims = _dims(a_shape, b_shape, transpose_a, transpose_b)
    return (bool(transpose_a) and dims is not None and jnp.dtype(dtype) == jnp.float32
            and 2 * np.prod(dims, dtype=np.float64) >= MIN_FLOPS)


@functools.cache
def _has_fast_kernel(m, k, n, transpose_a, transpose_b):
    ok, implementation = onednn.matmul_plan(m, k, n, transpose_a, transpose_b)
    return ok and not implementation.startswith("ref")


def usable(a_shape, b_shape, dtype, transpose_a, transpose_b) -> bool:
    """Whether this product runs through oneDNN when the switch says so."""
    dims = _dims(a_shape, b_shape, transpose_a, transpose_b)
    if (dims is None or 0 in dims or jnp.dtype(dtype) != jnp.float32
            or not onednn.available()):
        return False
    return _has_fast_kernel(*dims, bool(transpose_a), bool(transpose_b))


def _reference(transpose_a, transpose_b):
    return lambda a, b: jnp.matmul(a.T if transpose_a else a, b.T if transpose_b else b)


@functools.cache
def _call(m, n, transpose_a, transpose_b):
    ffi = jax.ffi.ffi_call(onednn.MATMUL_TARGET, jax.ShapeDtypeStruct((m, n), jnp.float32),
                           vmap_method="sequential")
    attrs = {"transpose_a": np.int64(transpose_a), "transpose_b": np.int64(transpose_b)}
    reference = _reference(transpose_a, transpose_b)

    @jax.custom_vjp
    def call(a, b):
        return ffi(a, b, **attrs)

    def call_fwd(a, b):
        return call(a, b), (a, b)

    def call_bwd(operands, g):
        return jax.vjp(reference, *operands)[1](g)

    call.defvjp(call_fwd, call_bwd)
    return call


def matmul(a, b, transpose_a, transpose_b):
    """op(a) @ op(b) through oneDNN (check `usable` first)."""
    m, _, n = _dims(a.shape, b.shape, transpose_a, transpose_b)
    return _call(m, n, bool(transpose_a), bool(transpose_b))(a, b)
