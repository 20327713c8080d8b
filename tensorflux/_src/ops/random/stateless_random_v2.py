"""Stateless random records keyed by (key, counter, alg) — TF's "V2" family that
`tf.random.Generator` samples with — plus seed splitting, stateless shuffles and
index_shuffle (a seeded permutation of [0, max_index] evaluated one index at a time).
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.framework.tensor_shape import TensorShape
from tensorflux._src.ops.array import array_ops
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.op_helpers import kernel_error, with_rank
from tensorflux._src.ops.random import stateless_kernels as kernels
from tensorflux._src.ops.registry import OpDef, register
from tensorflux._src.ops.shape_fns import static_shape_from_tensor

__all__ = ["random_index_shuffle"]

_FLOATS = (_dtypes.float16, _dtypes.bfloat16, _dtypes.float32, _dtypes.float64)
_INTS = (_dtypes.int32, _dtypes.int64)
_ALL_INTS = (_dtypes.int32, _dtypes.int64, _dtypes.uint32, _dtypes.uint64)


def _check_alg(alg):
    if isinstance(alg, np.ndarray) and int(alg) not in (1, 2, 3):
        raise kernel_error(f"Unsupported algorithm id: {int(alg)}")


# -- seed -> (key, counter) ----------------------------------------------------------------------
def _key_counter_shape(op):
    kernels.check_seed_shape(op.inputs[0])
    return [TensorShape([1]), TensorShape([2])]


register(OpDef(
    "StatelessRandomGetKeyCounter", inputs=("seed: Tseed",),
    outputs=("key: uint64", "counter: uint64"),
    attrs={"Tseed": _INTS}, type_defaults={"Tseed": _dtypes.int64},
    shape=_key_counter_shape,
    lower=kernels.key_counter_from_seed, not_differentiable=True,
))


def get_key_counter(seed):
    return apply_op("StatelessRandomGetKeyCounter", seed=seed)


def alg_tensor(alg):
    alg = kernels.convert_alg_to_int(alg)
    if isinstance(alg, int):
        return convert_to_tensor(np.int32(alg), name="alg")
    return alg


# -- the samplers ----------------------------------------------------------------------------
def _v2_shape(op):
    key = with_rank(op.inputs[1].shape, 1)
    if key[0].value is not None and key[0].value != 1:
        raise ValueError(f"Dimension must be 1 but is {key[0].value}")
    with_rank(op.inputs[2].shape, 1)
    with_rank(op.inputs[3].shape, 0)
    return static_shape_from_tensor(op.inputs[0])


def _check_key(key, alg):
    _check_alg(alg)
    if tuple(key.shape) != (1,):
        raise kernel_error(f"key must have shape [1], not [{','.join(map(str, key.shape))}]")


def _register_v2(op_type, sampler, dtypes, default):
    def lower(shape, key, counter, alg, dtype):
        _check_key(key, alg)
        return kernels.draw_v2(key, counter, alg, sampler=sampler,
                          dims=kernels.static_dims(shape, op_type), dtype=dtype)

    register(OpDef(
        op_type, inputs=("shape: Tshape", "key: uint64", "counter: uint64", "alg: int32"),
        outputs=("output: dtype",), attrs={"dtype": dtypes, "Tshape": _INTS},
        type_defaults={"dtype": default, "Tshape": _dtypes.int32},
        shape=_v2_shape, lower=lower, not_differentiable=True,
    ))


_register_v2("StatelessRandomUniformV2", kernels.sample_uniform, _FLOATS, _dtypes.float32)
_register_v2("StatelessRandomNormalV2", kernels.sample_normal, _FLOATS, _dtypes.float32)
_register_v2("StatelessTruncatedNormalV2", kernels.sample_truncated_normal, _FLOATS,
             _dtypes.float32)
_register_v2("StatelessRandomUniformFullIntV2", kernels.sample_full_int, _ALL_INTS,
             _dtypes.uint64)


def _uniform_int_v2_shape(op):
    with_rank(op.inputs[4].shape, 0)
    with_rank(op.inputs[5].shape, 0)
    return _v2_shape(op)


def _uniform_int_v2_lower(shape, key, counter, alg, minval, maxval):
    _check_key(key, alg)
    kernels.check_int_range(minval, maxval)
    return kernels.draw_v2(key, counter, alg, minval, maxval, sampler=kernels.sample_uniform_int,
                      dims=kernels.static_dims(shape, "StatelessRandomUniformIntV2"))


register(OpDef(
    "StatelessRandomUniformIntV2",
    inputs=("shape: Tshape", "key: uint64", "counter: uint64", "alg: int32", "minval: dtype",
            "maxval: dtype"),
    outputs=("output: dtype",), attrs={"dtype": _ALL_INTS, "Tshape": _INTS},
    type_defaults={"Tshape": _dtypes.int32},
    shape=_uniform_int_v2_shape, lower=_uniform_int_v2_lower, not_differentiable=True,
))


def _permute(k, dims, dtype, value):
    return jax.random.permutation(k, value, axis=0, independent=False)


def _shuffle_lower(value, key, counter, alg):
    if value.ndim == 0:
        return value
    _check_key(key, alg)
    return kernels.draw_v2(key, counter, alg, value, sampler=_permute, dims=())


def _shuffle_shape(op):
    with_rank(op.inputs[1].shape, 1)
    with_rank(op.inputs[2].shape, 1)
    with_rank(op.inputs[3].shape, 0)
    return op.inputs[0].shape


register(OpDef(
    "StatelessShuffle", inputs=("value: T", "key: uint64", "counter: uint64", "alg: int32"),
    outputs=("output: T",), attrs={"T": _dtypes.NUMBERS + (_dtypes.bool,)},
    shape=_shuffle_shape, lower=_shuffle_lower, not_differentiable=True,
))


# -- RandomIndexShuffle --------------------------------------------------------------------------
# A Feistel network on ceil(log2(max_index + 1)) bits (rounded up to even), its round
# function a 64-bit mix of the right half with a round key from the seed; values that
# land beyond max_index are encrypted again (cycle walking), so every seed gives a
# bijection of [0, max_index]. TF's kernel is built the same way with its own round
# function, so the permutations differ from TF's.
_GOLDEN = 0x9E3779B97F4A7C15
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)


def _mix(z):
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    return z ^ (z >> np.uint64(31))


def _index_shuffle_lower(index, seed, max_index, rounds, dtype):
    if seed.shape[-1] != 3:
        raise kernel_error(f"seed must have shape [3] or [n, 3], not "
                           f"[{','.join(map(str, seed.shape))}]")
    if isinstance(max_index, np.ndarray) and np.any(max_index.astype(np.float64) < 0):
        raise kernel_error("max_index must be non-negative")
    return _index_shuffle(index, seed, max_index, rounds=rounds, dtype=dtype)


@functools.partial(jax.jit, static_argnames=("rounds", "dtype"))
def _index_shuffle(index, seed, max_index, rounds, dtype):
    idx = kernels.as_uint64(index)
    top = kernels.as_uint64(max_index)
    s = kernels.as_uint64(seed)
    seed0, seed1, seed2 = s[..., 0], s[..., 1], s[..., 2]
    idx, top, seed0, seed1, seed2 = jnp.broadcast_arrays(idx, top, seed0, seed1, seed2)
    bits = (64 - jax.lax.clz(top)).astype(jnp.uint64)
    bits = jnp.maximum(bits + (bits & np.uint64(1)), np.uint64(2))
    half = bits >> np.uint64(1)
    mask = (np.uint64(1) << half) - np.uint64(1)
    round_keys = [_mix(seed0 + _mix(seed1 ^ _mix(seed2 + np.uint64(r * _GOLDEN % 2 ** 64))))
                  for r in range(rounds)]

    def encrypt(x):
        left, right = (x >> half) & mask, x & mask
        for k in round_keys:
            left, right = right, left ^ (_mix(right ^ k) & mask)
        return (left << half) | right

    y = encrypt(idx)
    y = jax.lax.while_loop(lambda y: jnp.any(y > top),
                           lambda y: jnp.where(y > top, encrypt(y), y), y)
    return y.astype(dtype.as_numpy_dtype)


def _index_shuffle_shape(op):
    index, seed, max_index = (t.shape for t in op.inputs)
    for s, most in ((index, 1), (seed, 2), (max_index, 1)):
        if s.ndims is not None and s.ndims > most:
            raise ValueError(f"Shape must be at most rank {most} but is rank {s.ndims}")
    if seed.ndims is not None and seed[-1].value not in (None, 3):
        raise ValueError(f"Dimension must be 3 but is {seed[-1].value}")
    batch = [s[0] for s, batched in ((index, 1), (seed, 2), (max_index, 1))
             if s.ndims == batched]
    if any(s.ndims is None for s in (index, seed, max_index)):
        return TensorShape(None)
    if not batch:
        return TensorShape([])
    dim = batch[0]
    for d in batch[1:]:
        dim = dim.merge_with(d)
    return TensorShape([dim])


register(OpDef(
    "RandomIndexShuffle", inputs=("index: dtype", "seed: Tseed", "max_index: dtype"),
    outputs=("output: dtype",),
    attrs={"rounds": 4, "dtype": _ALL_INTS, "Tseed": _ALL_INTS},
    shape=_index_shuffle_shape, lower=_index_shuffle_lower, not_differentiable=True,
))


def random_index_shuffle(index, seed, max_index, rounds=4, name=None):
    """The position of `index` in a seeded permutation of [0, max_index]; `seed` is
    shape [3] (or [n, 3] for a batch)."""
    return apply_op("RandomIndexShuffle", name=name, index=index, seed=seed,
                    max_index=max_index, rounds=int(rounds))


# -- public functions ----------------------------------------------------------------------------
def index_shuffle(index, seed, max_index):
    """The position of `index` in the permutation of [0, max_index] that `seed` (shape [2]
    or [n, 2]) selects."""
    seed = convert_to_tensor(seed)
    ndims = seed.shape.ndims
    # The raw op takes [3] (or [n, 3]) seeds: one arbitrary word goes in front of each.
    # (TF's code pads the first dimension, which breaks the documented [n, 2] seeds.)
    paddings = ([] if ndims is None else [[0, 0]] * (ndims - 1)) + [[1, 0]]
    seed = array_ops.pad(seed, paddings, constant_values=498247692)
    return random_index_shuffle(index, seed=seed, max_index=max_index)


def stateless_shuffle(value, seed, alg="auto_select", name=None):
    """`value` with its first dimension permuted as `seed` selects."""
    with _graph.name_scope(name, "stateless_shuffle", [value, seed]) as scope:
        key, counter = get_key_counter(seed)
        return apply_op("StatelessShuffle", name=scope, value=value, key=key, counter=counter,
                        alg=alg_tensor(alg))

