"""What the stateless random records compute, shared by the V1 records (seed ->
numbers, stateless_random_ops.py) and the V2 records ((key, counter, alg) -> numbers,
stateless_random_v2.py): TF's algorithm ids, the JAX key standing for a (key, counter,
alg) triple, and the samplers `(JAX key, dims, dtype, *params) -> numbers`.

Below both record modules, so the V1 wrappers (which pick V1 or V2 records by `alg`)
can sit above the V2 records.
"""

from __future__ import annotations

import enum
import functools

import jax
import jax.numpy as jnp
import numpy as np

from tensorflux._src.ops.op_helpers import dims_str, kernel_error, static_input, with_rank

_KEY_SALT = 0x5EED5EED  # keeps stateless streams apart from the stateful ops' keys


class Algorithm(enum.Enum):
    """TF's RNG algorithm ids (framework/rng_alg.h)."""
    PHILOX = 1
    THREEFRY = 2
    AUTO_SELECT = 3


def convert_alg_to_int(alg):
    """An algorithm given as int, Algorithm, Tensor or name, as TF's integer id."""
    if isinstance(alg, bool):
        raise TypeError(f"Can't convert argument `alg` (of value {alg} and type {type(alg)}) "
                        f"to int.")
    if isinstance(alg, (int, np.integer)):
        return int(alg)
    if isinstance(alg, Algorithm):
        return alg.value
    if hasattr(alg, "op") and hasattr(alg, "dtype"):  # a Tensor
        return alg
    if isinstance(alg, str):
        if alg == "philox":
            return Algorithm.PHILOX.value
        if alg in ("threefry", "three-fry", "three_fry"):
            return Algorithm.THREEFRY.value
        if alg in ("autoselect", "auto-select", "auto_select"):
            return Algorithm.AUTO_SELECT.value
        raise ValueError(f"Argument `alg` got unsupported string value {alg}. Supported "
                         f"string values are 'philox' for the Philox algorithm, 'threefry' "
                         f"for the ThreeFry algorithm, and 'auto_select' for auto-selection.")
    raise TypeError(f"Can't convert argument `alg` (of value {alg} and type {type(alg)}) "
                    f"to int.")


# -- keys ----------------------------------------------------------------------------------------
def as_uint64(x):
    """Integer words as uint64 (signed values wrap, as TF's bitcasts do)."""
    x = jnp.asarray(x)
    if jnp.issubdtype(x.dtype, jnp.signedinteger):
        x = x.astype(jnp.int64)
    return x.astype(jnp.uint64)


def jax_key(key, counter, alg=Algorithm.PHILOX.value):
    """The JAX key that stands for TF's (key, counter, algorithm): a hash of all three,
    so neighbouring counters give independent streams. AUTO_SELECT is Philox, as on
    TF's CPU."""
    k = jax.random.key(_KEY_SALT)
    words = jnp.concatenate([as_uint64(key).reshape(-1), as_uint64(counter).reshape(-1)])
    for i in range(words.shape[0]):
        k = jax.random.fold_in(k, (words[i] & 0xFFFFFFFF).astype(jnp.uint32))
        k = jax.random.fold_in(k, (words[i] >> 32).astype(jnp.uint32))
    alg = jnp.asarray(alg, jnp.int32)
    alg = jnp.where(alg == Algorithm.AUTO_SELECT.value, Algorithm.PHILOX.value, alg)
    return jax.random.fold_in(k, alg.astype(jnp.uint32))


def key_counter_from_seed(seed):
    """TF's StatelessRandomGetKeyCounter: key uint64[1], counter uint64[2]."""
    if tuple(seed.shape) != (2,):
        raise kernel_error(f"seed must have shape [2], not {dims_str(seed.shape)}")
    s = as_uint64(seed)
    return s[:1], jnp.concatenate([s[1:], jnp.zeros([1], jnp.uint64)])


def seed_key(seed):
    return jax_key(*key_counter_from_seed(seed))


# -- samplers: (JAX key, dims, dtype, *params) -> numbers -----------------------------
def static_dims(shape, op_type):
    dims = tuple(int(d) for d in static_input(shape, op_type, "shape").reshape(-1))
    for d in dims:
        if d < 0:
            raise kernel_error(f"Dimension {d} must be >= 0")
    return dims


def _compute_type(dtype):
    return np.float32 if dtype in (np.float16, jnp.bfloat16) else dtype


def sample_uniform(k, dims, dtype):
    dtype = dtype.as_numpy_dtype
    return jax.random.uniform(k, dims, _compute_type(dtype)).astype(dtype)


def sample_normal(k, dims, dtype):
    dtype = dtype.as_numpy_dtype
    return jax.random.normal(k, dims, _compute_type(dtype)).astype(dtype)


def sample_truncated_normal(k, dims, dtype):
    # TF re-draws values more than two standard deviations from the mean.
    dtype = dtype.as_numpy_dtype
    return jax.random.truncated_normal(k, -2.0, 2.0, dims, _compute_type(dtype)).astype(dtype)


def sample_uniform_int(k, dims, dtype, minval, maxval):
    # jax.random.randint spreads [minval, maxval) evenly even when maxval - minval does
    # not divide the word range (TF's kernel has a tiny modulo bias there).
    return jax.random.randint(k, dims, minval, maxval, dtype=minval.dtype)


def check_int_range(minval, maxval):
    """TF's kernel requires minval < maxval (checked at run time)."""
    if isinstance(minval, np.ndarray) and isinstance(maxval, np.ndarray):
        if not minval < maxval:
            raise kernel_error(f"Need minval < maxval: {minval} >= {maxval}")
        return
    from tensorflux._src.compiler import effects
    effects.check(minval < maxval, lambda lo, hi: f"Need minval < maxval: {lo} >= {hi}",
                  data=(minval, maxval))


def sample_full_int(k, dims, dtype):
    dtype = np.dtype(dtype.as_numpy_dtype)
    bits = jax.random.bits(k, dims, jnp.uint64 if dtype.itemsize == 8 else jnp.uint32)
    return jax.lax.bitcast_convert_type(bits, dtype)


# Whole draws are jitted per (sampler, shape, dtype): a draw folded on constant inputs is
# then one small XLA program, compiled once per process, not one per JAX primitive.
@functools.partial(jax.jit, static_argnames=("sampler", "dims", "dtype"))
def draw(seed, *params, sampler, dims, dtype=None):
    """`sampler`'s numbers for a V1 record's seed."""
    return sampler(seed_key(seed), dims, dtype, *params)


@functools.partial(jax.jit, static_argnames=("sampler", "dims", "dtype"))
def draw_v2(key, counter, alg, *params, sampler, dims, dtype=None):
    """`sampler`'s numbers for a V2 record's (key, counter, alg)."""
    return sampler(jax_key(key, counter, alg), dims, dtype, *params)


def check_seed_shape(seed_tensor):
    seed = with_rank(seed_tensor.shape, 1)
    if seed[0].value is not None and seed[0].value != 2:
        raise ValueError(f"Dimension must be 2 but is {seed[0].value}")
