"""Stateless random numbers (`tf.random.stateless_*`): the numbers are a function of a
shape-[2] integer `seed` tensor alone, so the same seed gives the same numbers in every
run, Session and process.

TF's kernels turn a seed into a counter-based generator's (key, counter) pair; the
"V2" records (`stateless_random_v2.py`) take that pair plus an algorithm id directly,
and `tf.random.Generator` samples through them. Here the pair selects a JAX threefry
key (`jax_key`: every 32-bit word of key, counter and algorithm folded in), so the
draws follow TF's distributions without being TF's Philox bits. V1 records use exactly
the key a V2 record gets from `StatelessRandomGetKeyCounter(seed)`, as in TF.

These records are pure functions of their inputs (not `random=True`): they fold,
merge under CSE and cache like any other op.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.ops.array import array_ops
from tensorflux._src.ops.array.generator_ops import zeros_like
from tensorflux._src.ops.math import math_ops
from tensorflux._src.ops.math.grad_helpers import unbroadcast
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.op_helpers import kernel_error, shape_arg, static_input, with_rank
from tensorflux._src.ops.random import random_ops  # also registers RandomGammaGrad
from tensorflux._src.ops.random import stateless_random_v2 as v2
from tensorflux._src.ops.random.stateless_kernels import (Algorithm, _compute_type,
                                                          check_int_range, check_seed_shape,
                                                          convert_alg_to_int, draw,
                                                          sample_full_int, sample_normal,
                                                          sample_truncated_normal, sample_uniform,
                                                          sample_uniform_int, static_dims)
from tensorflux._src.ops.registry import OpDef, register
from tensorflux._src.ops.shape_fns import static_shape_from_tensor

__all__ = ["stateless_random_uniform", "stateless_random_normal",
           "stateless_truncated_normal", "stateless_multinomial", "stateless_categorical",
           "stateless_random_binomial", "stateless_random_gamma", "stateless_random_poisson",
           "stateless_parameterized_truncated_normal"]

_FLOATS = (_dtypes.float16, _dtypes.bfloat16, _dtypes.float32, _dtypes.float64)
_INTS = (_dtypes.int32, _dtypes.int64)
_SEEDS = (_dtypes.int32, _dtypes.int64)


def _sample_multinomial(k, dims, dtype, logits):
    compute = logits.dtype if logits.dtype in (np.float32, np.float64) else np.float32
    samples = jax.random.categorical(k, logits.astype(compute), axis=-1,
                                     shape=(dims[0], logits.shape[0]))
    return samples.T.astype(dtype.as_numpy_dtype)


def broadcast_params(dims, *params):
    """Each parameter broadcast to `dims`; TF's message when they do not fit its end."""
    try:
        full = np.broadcast_shapes(dims, *(p.shape for p in params))
    except ValueError:
        full = None
    if full != tuple(dims):
        raise kernel_error("Shape passed in must end with broadcasted shape.")
    return [jnp.broadcast_to(p, dims) for p in params]


def _sample_binomial(k, dims, dtype, counts, probs):
    n, p = broadcast_params(dims, counts, probs)
    draws = jax.random.binomial(k, n.astype(jnp.float64), p.astype(jnp.float64), dims,
                                jnp.float64)
    return draws.astype(dtype.as_numpy_dtype)


def _sample_gamma(k, dims, dtype, alpha):
    (a,) = broadcast_params(dims, alpha)
    compute = _compute_type(alpha.dtype)
    return jax.random.gamma(k, a.astype(compute), dims, compute).astype(alpha.dtype)


def _sample_poisson(k, dims, dtype, lam):
    (rate,) = broadcast_params(dims, lam)
    draws = jax.random.poisson(k, rate.astype(jnp.float64), dims, jnp.int64)
    return draws.astype(dtype.as_numpy_dtype)


def _sample_parameterized_tn(k, dims, dtype, means, stddevs, minvals, maxvals):
    mean, std, lo, hi = (p.astype(jnp.float64) for p in broadcast_params(
        dims, means, stddevs, minvals, maxvals))
    # Inverse-CDF sampling of the standardized bounds in float64 (TF's kernel uses
    # rejection samplers; the distribution is the same).
    z = jax.random.truncated_normal(k, (lo - mean) / std, (hi - mean) / std, dims, jnp.float64)
    return jnp.clip(z * std + mean, lo, hi).astype(means.dtype)


# -- V1 records: shape, seed -> numbers ----------------------------------------------------------
def _stateless_shape(op):
    check_seed_shape(op.inputs[1])
    return static_shape_from_tensor(op.inputs[0])


def _register_float(op_type, sampler):
    def lower(shape, seed, dtype):
        return draw(seed, sampler=sampler, dims=static_dims(shape, op_type), dtype=dtype)

    register(OpDef(
        op_type, inputs=("shape: T", "seed: Tseed"), outputs=("output: dtype",),
        attrs={"dtype": _FLOATS, "T": _INTS, "Tseed": _SEEDS},
        type_defaults={"dtype": _dtypes.float32, "T": _dtypes.int32, "Tseed": _dtypes.int64},
        shape=_stateless_shape, lower=lower, not_differentiable=True,
    ))


_register_float("StatelessRandomUniform", sample_uniform)
_register_float("StatelessRandomNormal", sample_normal)
_register_float("StatelessTruncatedNormal", sample_truncated_normal)


def _uniform_int_shape(op):
    with_rank(op.inputs[2].shape, 0)
    with_rank(op.inputs[3].shape, 0)
    return _stateless_shape(op)


def _uniform_int_lower(shape, seed, minval, maxval):
    check_int_range(minval, maxval)
    return draw(seed, minval, maxval, sampler=sample_uniform_int,
                dims=static_dims(shape, "StatelessRandomUniformInt"))


register(OpDef(
    "StatelessRandomUniformInt",
    inputs=("shape: T", "seed: Tseed", "minval: dtype", "maxval: dtype"),
    outputs=("output: dtype",),
    attrs={"dtype": _INTS, "T": _INTS, "Tseed": _SEEDS},
    type_defaults={"Tseed": _dtypes.int64},
    shape=_uniform_int_shape, lower=_uniform_int_lower, not_differentiable=True,
))

_FULL_INTS = (_dtypes.int32, _dtypes.int64, _dtypes.uint32, _dtypes.uint64)
register(OpDef(
    "StatelessRandomUniformFullInt",
    inputs=("shape: T", "seed: Tseed"), outputs=("output: dtype",),
    attrs={"dtype": _FULL_INTS, "T": _INTS, "Tseed": _FULL_INTS},
    type_defaults={"dtype": _dtypes.uint64, "T": _dtypes.int32, "Tseed": _dtypes.int64},
    shape=_stateless_shape,
    lower=lambda shape, seed, dtype: draw(
        seed, sampler=sample_full_int, dims=static_dims(shape, "StatelessRandomUniformFullInt"),
        dtype=dtype),
    not_differentiable=True,
))


# -- StatelessMultinomial ----------------------------------------------------------------------
def _multinomial_shape(op):
    check_seed_shape(op.inputs[2])
    return random_ops.multinomial_shape(op)


def _multinomial_lower(logits, num_samples, seed, output_dtype):
    n = int(static_input(num_samples, "StatelessMultinomial", "num_samples"))
    if n < 0:
        raise kernel_error(f"num_samples should be nonnegative, got {n}")
    if logits.shape[1] <= 0:
        raise kernel_error(f"num_classes should be positive, got {logits.shape[1]}")
    return draw(seed, logits, sampler=_sample_multinomial, dims=(n,), dtype=output_dtype)


register(OpDef(
    "StatelessMultinomial",
    inputs=("logits: T", "num_samples: int32", "seed: Tseed"),
    outputs=("output: output_dtype",),
    attrs={"T": _dtypes.REAL, "Tseed": _SEEDS, "output_dtype": _INTS},
    type_defaults={"Tseed": _dtypes.int64, "output_dtype": _dtypes.int64},
    shape=_multinomial_shape, lower=_multinomial_lower, not_differentiable=True,
))


# -- distributions with parameters: broadcast to the trailing dimensions of `shape` ------------
def _params_shape(first_param):
    def shape_fn(op):
        out = _stateless_shape(op)
        params = [t.shape for t in op.inputs[first_param:]]
        if out.is_fully_defined() and all(p.is_fully_defined() for p in params):
            try:
                full = np.broadcast_shapes(tuple(out.as_list()),
                                           *(tuple(p.as_list()) for p in params))
            except ValueError:
                full = None
            if full != tuple(out.as_list()):
                raise ValueError("Shape passed in must end with broadcasted shape.")
        return out
    return shape_fn


def _params_lower(op_type, sampler):
    def lower(shape, seed, *params, dtype=None):
        return draw(seed, *params, sampler=sampler, dims=static_dims(shape, op_type),
                    dtype=dtype)
    return lower


_BINOMIAL_TYPES = (_dtypes.float16, _dtypes.float32, _dtypes.float64, _dtypes.int32,
                   _dtypes.int64)
register(OpDef(
    "StatelessRandomBinomial",
    inputs=("shape: S", "seed: Tseed", "counts: T", "probs: T"), outputs=("output: dtype",),
    attrs={"S": _INTS, "Tseed": _SEEDS, "T": _BINOMIAL_TYPES, "dtype": _BINOMIAL_TYPES},
    type_defaults={"Tseed": _dtypes.int64, "T": _dtypes.float64, "dtype": _dtypes.int64},
    shape=_params_shape(2), lower=_params_lower("StatelessRandomBinomial", _sample_binomial),
    not_differentiable=True,
))


def _gamma_grad(op, grad):
    # Implicit reparameterization (TF's _StatelessRandomGammaV2Grad): d sample / d alpha
    # from the gamma CDF, summed over the dimensions alpha was broadcast along.
    alpha, sample = op.inputs[2], op.outputs[0]
    partial_a = apply_op("RandomGammaGrad", alpha=alpha + zeros_like(sample), sample=sample)
    return [None, None, unbroadcast(grad * partial_a, alpha)]


register(OpDef(
    "StatelessRandomGammaV2",
    inputs=("shape: T", "seed: Tseed", "alpha: dtype"), outputs=("output: dtype",),
    attrs={"dtype": (_dtypes.float16, _dtypes.float32, _dtypes.float64), "T": _INTS,
           "Tseed": _SEEDS},
    type_defaults={"Tseed": _dtypes.int64},
    shape=_params_shape(2), lower=_params_lower("StatelessRandomGammaV2", _sample_gamma),
    grad=_gamma_grad,
))

_POISSON_TYPES = (_dtypes.float16, _dtypes.float32, _dtypes.float64, _dtypes.int32,
                  _dtypes.int64)
register(OpDef(
    "StatelessRandomPoisson",
    inputs=("shape: T", "seed: Tseed", "lam: Rtype"), outputs=("output: dtype",),
    attrs={"Rtype": _POISSON_TYPES, "dtype": _POISSON_TYPES, "T": _INTS, "Tseed": _SEEDS},
    type_defaults={"Tseed": _dtypes.int64},
    shape=_params_shape(2), lower=_params_lower("StatelessRandomPoisson", _sample_poisson),
    not_differentiable=True,
))
register(OpDef(
    "StatelessParameterizedTruncatedNormal",
    inputs=("shape: S", "seed: Tseed", "means: dtype", "stddevs: dtype", "minvals: dtype",
            "maxvals: dtype"),
    outputs=("output: dtype",),
    attrs={"S": _INTS, "Tseed": _SEEDS,
           "dtype": (_dtypes.float16, _dtypes.float32, _dtypes.float64)},
    type_defaults={"Tseed": _dtypes.int64},
    shape=_params_shape(2),
    lower=_params_lower("StatelessParameterizedTruncatedNormal", _sample_parameterized_tn),
    not_differentiable=True,
))


# -- public functions ----------------------------------------------------------------------------
def shape_tensor(shape):
    """TF's tensor_util.shape_tensor: an int32 tensor, int64 only when needed."""
    if isinstance(shape, (list, tuple)) and not shape:
        return convert_to_tensor(np.zeros([0], np.int32), name="shape")
    if hasattr(shape, "op") and hasattr(shape, "dtype"):
        return shape
    return convert_to_tensor(shape_arg(shape), name="shape")


def _v2(alg):
    """Whether `alg` needs the key/counter records (V1 records are Philox/auto-select)."""
    alg = convert_alg_to_int(alg)
    if isinstance(alg, int):
        if alg not in (1, 2, 3):
            raise ValueError(f"Argument `alg` got unsupported value {alg}. Supported values "
                             f"are 1 for the Philox algorithm, 2 for the ThreeFry algorithm, "
                             f"and 3 for auto-selection.")
        return alg == Algorithm.THREEFRY.value
    return True


def _v2_call(op_type, shape, seed, alg, name=None, **kwargs):
    key, counter = v2.get_key_counter(seed)
    return apply_op(op_type, name=name, shape=shape, key=key, counter=counter,
                    alg=v2.alg_tensor(alg), **kwargs)


_UNIFORM_TYPES = _FLOATS + (_dtypes.int32, _dtypes.int64, _dtypes.uint32, _dtypes.uint64)


def stateless_random_uniform(shape, seed, minval=0, maxval=None, dtype=_dtypes.float32,
                             name=None, alg="auto_select"):
    """Deterministic uniform numbers in [minval, maxval) for a shape-[2] seed; integer
    dtypes need both bounds, or neither for the full range."""
    dtype = _dtypes.as_dtype(dtype)
    if dtype not in _UNIFORM_TYPES:
        raise ValueError(f"Argument `dtype` got invalid value {dtype}. Accepted dtypes are "
                         f"{_UNIFORM_TYPES}.")
    if dtype.is_integer:
        if (minval is None) != (maxval is None):
            raise ValueError(f"For integer `dtype` argument {dtype}, argument `minval` and "
                             f"`maxval` must be both None or not None. Got `minval`={minval} "
                             f"and `maxval`={maxval}.")
        if minval is not None and dtype in (_dtypes.uint32, _dtypes.uint64):
            raise ValueError(f"Argument `dtype` got invalid value {dtype} when argument "
                             f"`minval` is not None. Please don't use unsigned integers in "
                             f"this case.")
    elif maxval is None:
        maxval = 1
    use_v2 = _v2(alg)
    with _graph.name_scope(name, "stateless_random_uniform",
                           [shape, seed, minval, maxval]) as scope:
        shape = shape_tensor(shape)
        if dtype.is_integer and minval is None:
            if use_v2:
                return _v2_call("StatelessRandomUniformFullIntV2", shape, seed, alg,
                                name=scope, dtype=dtype)
            return apply_op("StatelessRandomUniformFullInt", name=scope, shape=shape,
                            seed=seed, dtype=dtype)
        minval = convert_to_tensor(minval, dtype=dtype, name="min")
        maxval = convert_to_tensor(maxval, dtype=dtype, name="max")
        if dtype.is_integer:
            if use_v2:
                return _v2_call("StatelessRandomUniformIntV2", shape, seed, alg, name=scope,
                                minval=minval, maxval=maxval)
            return apply_op("StatelessRandomUniformInt", name=scope, shape=shape, seed=seed,
                            minval=minval, maxval=maxval)
        if use_v2:
            rnd = _v2_call("StatelessRandomUniformV2", shape, seed, alg, dtype=dtype)
        else:
            rnd = apply_op("StatelessRandomUniform", shape=shape, seed=seed, dtype=dtype)
        return math_ops.add(rnd * (maxval - minval), minval, name=scope)


def _scaled(op_type, default_name, shape, seed, mean, stddev, dtype, name, alg):
    use_v2 = _v2(alg)
    dtype = _dtypes.as_dtype(dtype)
    with _graph.name_scope(name, default_name, [shape, seed, mean, stddev]) as scope:
        shape = shape_tensor(shape)
        mean = convert_to_tensor(mean, dtype=dtype, name="mean")
        stddev = convert_to_tensor(stddev, dtype=dtype, name="stddev")
        if use_v2:
            rnd = _v2_call(op_type + "V2", shape, seed, alg, dtype=dtype)
        else:
            rnd = apply_op(op_type, shape=shape, seed=seed, dtype=dtype)
        return math_ops.add(rnd * stddev, mean, name=scope)


def stateless_random_normal(shape, seed, mean=0.0, stddev=1.0, dtype=_dtypes.float32,
                            name=None, alg="auto_select"):
    """Deterministic N(mean, stddev^2) numbers for a shape-[2] seed."""
    return _scaled("StatelessRandomNormal", "stateless_random_normal", shape, seed, mean,
                   stddev, dtype, name, alg)


def stateless_truncated_normal(shape, seed, mean=0.0, stddev=1.0, dtype=_dtypes.float32,
                               name=None, alg="auto_select"):
    """Deterministic normal numbers re-drawn beyond two standard deviations."""
    return _scaled("StatelessTruncatedNormal", "stateless_truncated_normal", shape, seed,
                   mean, stddev, dtype, name, alg)


def _multinomial(logits, num_samples, seed, dtype):
    logits = convert_to_tensor(logits, name="logits")
    return apply_op("StatelessMultinomial", logits=logits, num_samples=num_samples, seed=seed,
                    output_dtype=_dtypes.as_dtype(dtype))


def stateless_multinomial(logits, num_samples, seed, output_dtype=_dtypes.int64, name=None):
    """Deterministic class indices [batch, num_samples] from logits [batch, classes]."""
    with _graph.name_scope(name, "stateless_multinomial", [logits, seed]):
        return _multinomial(logits, num_samples, seed, output_dtype)


def stateless_categorical(logits, num_samples, seed, dtype=_dtypes.int64, name=None):
    """stateless_multinomial with TF 2's argument names."""
    with _graph.name_scope(name, "stateless_categorical", [logits, seed]):
        return _multinomial(logits, num_samples, seed, dtype)


def stateless_random_binomial(shape, seed, counts, probs, output_dtype=_dtypes.int32,
                              name=None):
    """Deterministic Binomial(counts, probs) draws; the parameters broadcast to the
    trailing dimensions of `shape`."""
    with _graph.name_scope(name, "stateless_random_binomial",
                           [shape, seed, counts, probs]) as scope:
        shape = shape_tensor(shape)
        probs = convert_to_tensor(probs, name="probs", preferred_dtype=_dtypes.float32)
        counts = convert_to_tensor(counts, name="counts", preferred_dtype=probs.dtype)
        return apply_op("StatelessRandomBinomial", name=scope, shape=shape, seed=seed,
                        counts=counts, probs=probs, dtype=_dtypes.as_dtype(output_dtype))


def stateless_random_gamma(shape, seed, alpha, beta=None, dtype=_dtypes.float32, name=None):
    """Deterministic Gamma(alpha, rate beta) draws of shape `shape` (alpha and beta fill its
    trailing dimensions); differentiable in alpha and beta."""
    with _graph.name_scope(name, "stateless_random_gamma", [shape, seed, alpha, beta]) as scope:
        shape = shape_tensor(shape)
        alpha = convert_to_tensor(alpha, dtype=dtype, name="alpha")
        beta = convert_to_tensor(beta if beta is not None else 1, name="beta", dtype=dtype)
        alpha_broadcast = alpha + zeros_like(beta)
        sample = apply_op("StatelessRandomGammaV2", shape=shape, seed=seed,
                          alpha=alpha_broadcast)
        tiny = convert_to_tensor(np.finfo(alpha.dtype.as_numpy_dtype).tiny, dtype=alpha.dtype)
        return math_ops.maximum(tiny, sample / beta, name=scope)


def stateless_random_poisson(shape, seed, lam, dtype=_dtypes.int32, name=None):
    """Deterministic Poisson(lam) draws; lam fills the trailing dimensions of `shape`."""
    with _graph.name_scope(name, "stateless_random_poisson", [shape, seed, lam]) as scope:
        shape = shape_tensor(shape)
        return apply_op("StatelessRandomPoisson", name=scope, shape=shape, seed=seed, lam=lam,
                        dtype=_dtypes.as_dtype(dtype))


def stateless_parameterized_truncated_normal(shape, seed, means=0.0, stddevs=1.0,
                                             minvals=-2.0, maxvals=2.0, name=None):
    """Deterministic normal draws truncated to [minvals, maxvals], parameters broadcast
    to the trailing dimensions of `shape`."""
    with _graph.name_scope(name, "stateless_parameterized_truncated_normal",
                           [shape, means, stddevs, minvals, maxvals]) as scope:
        shape = shape_tensor(shape)
        means = convert_to_tensor(means, name="means")
        return apply_op("StatelessParameterizedTruncatedNormal", name=scope, shape=shape,
                        seed=seed, means=means, stddevs=stddevs, minvals=minvals,
                        maxvals=maxvals)


# -- seed utilities (tf.random.experimental.stateless_split / stateless_fold_in) --------------
def split(seed, num=2, alg="auto_select"):
    """`num` new seeds [num, 2] from a seed, each the start of an independent stream."""
    seed = convert_to_tensor(seed)
    return stateless_random_uniform(shape=[num, 2], seed=seed, dtype=seed.dtype,
                                       minval=None, maxval=None, alg=alg)


def fold_in(seed, data, alg="auto_select"):
    """A new seed [hash(seed), data] that mixes an integer `data` into `seed`."""
    data = convert_to_tensor(data)
    seed1 = stateless_random_uniform(shape=[], seed=seed, dtype=data.dtype, minval=None,
                                        maxval=None, alg=alg)
    return array_ops.stack([seed1, data])
