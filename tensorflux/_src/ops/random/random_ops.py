"""Random tensors: one PRNG key per op per run, TF1 seed semantics (see random_seed.py).

The distributions' parameters are applied with ordinary ops, as TF1 builds them:
`random_normal` is RandomStandardNormal * stddev + mean.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework import random_seed
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.framework.tensor_shape import TensorShape
from tensorflux._src.ops.array import array_ops, slicing_ops
from tensorflux._src.ops.array.generator_ops import ones, zeros_like
from tensorflux._src.ops.math import math_ops, reduce_ops
from tensorflux._src.ops.math.math_ops import range as tf_range
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.op_helpers import kernel_error, scalar_input_dim, static_input, with_rank
from tensorflux._src.ops.registry import OpDef, register
from tensorflux._src.ops.shape_fns import (broadcast_binary, static_shape_from_tensor,
                                           static_value, unchanged)

__all__ = ["random_normal", "random_uniform", "truncated_normal", "set_random_seed",
           "random_shuffle", "multinomial", "random_gamma", "random_poisson", "random_crop"]
# tf.random.categorical (defined below) lives only in the tf.random namespace in TF1.

set_random_seed = random_seed.set_random_seed


def _shape_from_input(op):
    return static_shape_from_tensor(op.inputs[0])


def _static_dims(shape):
    if not isinstance(shape, np.ndarray):
        raise ValueError("the shape of a random tensor must be known when the run is "
                         "compiled (it may depend on fed shapes, not on fed values)")
    return tuple(int(d) for d in shape)


def _random(op_type, sample, dtypes, extra_inputs=()):
    register(OpDef(
        op_type,
        inputs=("shape: T",) + extra_inputs, outputs=("output: dtype",),
        attrs={"T": _dtypes.INDEX, "dtype": dtypes, "seed": 0, "seed2": 0},
        shape=_shape_from_input, lower=sample, random=True, not_differentiable=True,
    ))


_random("RandomStandardNormal",
        lambda key, shape, dtype: jax.random.normal(key, _static_dims(shape),
                                                    dtype.as_numpy_dtype), _dtypes.FLOATS)
_random("RandomUniform",
        lambda key, shape, dtype: jax.random.uniform(key, _static_dims(shape),
                                                     dtype.as_numpy_dtype), _dtypes.FLOATS)
# TF re-draws values more than two standard deviations from the mean.
_random("TruncatedNormal",
        lambda key, shape, dtype: jax.random.truncated_normal(
            key, -2.0, 2.0, _static_dims(shape), dtype.as_numpy_dtype), _dtypes.FLOATS)
register(OpDef(
    "RandomUniformInt",
    inputs=("shape: T", "minval: Tout", "maxval: Tout"), outputs=("output: Tout",),
    attrs={"T": _dtypes.INDEX, "Tout": _dtypes.INDEX, "seed": 0, "seed2": 0},
    shape=_shape_from_input,
    lower=lambda key, shape, minval, maxval: jax.random.randint(
        key, _static_dims(shape), minval, maxval, dtype=minval.dtype),
    random=True, not_differentiable=True,
))


def _shape_tensor(shape):
    if isinstance(shape, (list, tuple)) and not shape:
        return convert_to_tensor(np.zeros([0], np.int32), name="shape")
    return convert_to_tensor(shape, name="shape")


def _seed_attrs(seed):
    seed1, seed2 = random_seed.get_seed(seed)
    return {"seed": seed1 or 0, "seed2": seed2 or 0}


def _scaled_normal(op_type, default_name, shape, mean, stddev, dtype, seed, name):
    """`op_type` sample * stddev + mean, built as TF1 builds it."""
    dtype = _dtypes.as_dtype(dtype)
    with _graph.name_scope(name, default_name, [shape, mean, stddev]) as scope:
        shape_t = _shape_tensor(shape)
        mean_t = convert_to_tensor(mean, dtype=dtype, name="mean")
        stddev_t = convert_to_tensor(stddev, dtype=dtype, name="stddev")
        rnd = apply_op(op_type, shape=shape_t, dtype=dtype, **_seed_attrs(seed))
        return math_ops.add(rnd * stddev_t, mean_t, name=scope)


def random_normal(shape, mean=0.0, stddev=1.0, dtype=_dtypes.float32, seed=None, name=None):
    """Samples from N(mean, stddev^2)."""
    return _scaled_normal("RandomStandardNormal", "random_normal", shape, mean, stddev, dtype,
                          seed, name)


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=_dtypes.float32, seed=None,
                     name=None):
    """Samples from N(mean, stddev^2), re-drawing values beyond two stddevs."""
    return _scaled_normal("TruncatedNormal", "truncated_normal", shape, mean, stddev, dtype,
                          seed, name)


def random_uniform(shape, minval=0, maxval=None, dtype=_dtypes.float32, seed=None,
                   name=None):
    """Samples uniformly from [minval, maxval); integer dtypes need an explicit maxval."""
    dtype = _dtypes.as_dtype(dtype)
    if dtype not in _dtypes.FLOATS + _dtypes.INDEX:
        raise ValueError(f"Invalid dtype {dtype!r} for random_uniform: expected a float type, "
                         f"int32 or int64")
    if maxval is None:
        if dtype.is_integer:
            raise ValueError(f"Must specify maxval for integer dtype {dtype!r}")
        maxval = 1
    with _graph.name_scope(name, "random_uniform", [shape, minval, maxval]) as scope:
        shape_t = _shape_tensor(shape)
        minval_t = convert_to_tensor(minval, dtype=dtype, name="min")
        maxval_t = convert_to_tensor(maxval, dtype=dtype, name="max")
        if dtype.is_integer:
            return apply_op("RandomUniformInt", name=scope, shape=shape_t, minval=minval_t,
                            maxval=maxval_t, **_seed_attrs(seed))
        rnd = apply_op("RandomUniform", shape=shape_t, dtype=dtype, **_seed_attrs(seed))
        return math_ops.add(rnd * (maxval_t - minval_t), minval_t, name=scope)


# -- RandomShuffle ---------------------------------------------------------------------------
register(OpDef(
    "RandomShuffle", inputs=("value: T",), outputs=("output: T",),
    attrs={"T": _dtypes.ALL, "seed": 0, "seed2": 0}, shape=unchanged,
    lower=lambda key, value: value if value.ndim == 0 else jax.random.permutation(
        key, value, axis=0, independent=False),
    random=True, not_differentiable=True, strings_by_rank=True,  # file names, say
))


def random_shuffle(value, seed=None, name=None):
    """`value` with its first dimension randomly permuted."""
    return apply_op("RandomShuffle", name=name, value=value, **_seed_attrs(seed))


# -- Multinomial (tf.multinomial, tf.random.categorical) --------------------------------------
def multinomial_shape(op):
    """[batch, num_samples] (Multinomial; StatelessMultinomial after its seed check)."""
    logits = with_rank(op.inputs[0].shape, 2)
    return TensorShape([logits[0], scalar_input_dim(op, 1)])


def _multinomial_lower(key, logits, num_samples, output_dtype):
    n = int(static_input(num_samples, "Multinomial", "num_samples"))
    if n < 0:
        raise kernel_error(f"num_samples should be nonnegative, got {n}")
    batch, num_classes = logits.shape
    if num_classes <= 0:
        raise kernel_error(f"num_classes should be positive, got {num_classes}")
    if not jnp.issubdtype(logits.dtype, jnp.floating) or logits.dtype == jnp.float16:
        logits = logits.astype(jnp.float32)
    samples = jax.random.categorical(key, logits, axis=-1, shape=(n, batch))  # (n, batch)
    return samples.T.astype(output_dtype.as_numpy_dtype)


register(OpDef(
    "Multinomial", inputs=("logits: T", "num_samples: int32"), outputs=("output: output_dtype",),
    attrs={"T": _dtypes.REAL, "output_dtype": _dtypes.INDEX, "seed": 0, "seed2": 0},
    type_defaults={"output_dtype": _dtypes.int64}, shape=multinomial_shape,
    lower=_multinomial_lower, random=True, not_differentiable=True,
))


def _categorical(logits, num_samples, dtype, seed):
    logits = convert_to_tensor(logits, name="logits")
    extra = {} if dtype is None else {"output_dtype": _dtypes.as_dtype(dtype)}
    return apply_op("Multinomial", logits=logits, num_samples=num_samples, **extra,
                    **_seed_attrs(seed))


def multinomial(logits, num_samples, seed=None, name=None, output_dtype=None):
    """num_samples class indices per row of logits [batch, num_classes] (unnormalized log
    probabilities): shape [batch, num_samples], int64 unless output_dtype says int32."""
    with _graph.name_scope(name, "multinomial", [logits]):
        return _categorical(logits, num_samples, output_dtype, seed)


def categorical(logits, num_samples, dtype=None, seed=None, name=None):
    """tf.random.categorical: multinomial with TF 2's argument names."""
    with _graph.name_scope(name, "categorical", [logits]):
        return _categorical(logits, num_samples, dtype, seed)


# -- RandomGamma -----------------------------------------------------------------------------
# TF types `shape` by the attr S (int32 or int64). registry._parse_arg reads "S" in a
# signature as NumPy's bytes dtype code, so shape is int32 here (what tf.random_gamma and
# tf.random_poisson pass) and S stays an attr.
def _shape_then_param(op):
    # TF1: the output is `shape` followed by the parameter's own shape.
    return static_shape_from_tensor(op.inputs[0]).concatenate(op.inputs[1].shape)


def _random_gamma_lower(key, shape, alpha):
    dims = _static_dims(shape) + alpha.shape
    compute = jnp.float32 if alpha.dtype == jnp.float16 else alpha.dtype
    a = jnp.broadcast_to(alpha.astype(compute), dims)
    return jax.random.gamma(key, a, dims, compute).astype(alpha.dtype)


def _random_gamma_grad(op, grad):
    # Implicit reparameterization: d sample / d alpha from the gamma CDF (TF's
    # _RandomGammaGrad), summed over the sample dimensions.
    shape, alpha = op.inputs
    sample = op.outputs[0]
    num_sample_dims = array_ops.shape(shape)[0]
    alpha_b = array_ops.reshape(alpha, array_ops.concat(
        [ones(array_ops.reshape(num_sample_dims, [1]), _dtypes.int32),
         array_ops.shape(alpha)], 0))
    partial_a = apply_op("RandomGammaGrad", alpha=alpha_b, sample=sample)
    return [None, reduce_ops.reduce_sum(grad * partial_a, axis=tf_range(num_sample_dims))]


register(OpDef(
    "RandomGamma", inputs=("shape: int32", "alpha: T"), outputs=("output: T",),
    attrs={"S": _dtypes.INDEX, "T": (_dtypes.float16, _dtypes.float32, _dtypes.float64),
           "seed": 0, "seed2": 0},
    type_defaults={"S": _dtypes.int32}, shape=_shape_then_param, lower=_random_gamma_lower,
    random=True, grad=_random_gamma_grad,
))
# TF has no gradient for RandomGammaGrad itself (tf.gradients raises LookupError).
register(OpDef(
    "RandomGammaGrad", inputs=("alpha: T", "sample: T"), outputs=("output: T",),
    attrs={"T": (_dtypes.float32, _dtypes.float64)}, shape=broadcast_binary,
    lower=lambda alpha, sample: jax.lax.random_gamma_grad(*jnp.broadcast_arrays(alpha, sample)),
))


def random_gamma(shape, alpha, beta=None, dtype=_dtypes.float32, seed=None, name=None):
    """Gamma(alpha, rate beta) samples of shape `shape + broadcast(alpha, beta).shape`,
    at least the dtype's smallest positive normal number; differentiable in alpha and beta."""
    dtype = _dtypes.as_dtype(dtype)
    with _graph.name_scope(name, "random_gamma", [shape, alpha, beta]):
        shape_t = convert_to_tensor(_shape_list(shape), name="shape", dtype=_dtypes.int32)
        alpha = convert_to_tensor(alpha, name="alpha", dtype=dtype)
        beta = convert_to_tensor(beta if beta is not None else 1, name="beta", dtype=dtype)
        alpha_broadcast = alpha + zeros_like(beta)
        sample = apply_op("RandomGamma", shape=shape_t, alpha=alpha_broadcast,
                          **_seed_attrs(seed))
        tiny = convert_to_tensor(np.finfo(dtype.as_numpy_dtype).tiny, dtype=dtype)
        return math_ops.maximum(tiny, sample / beta)


def _shape_list(shape):
    if isinstance(shape, (list, tuple)) and not shape:
        return np.zeros([0], np.int32)
    return shape


# -- RandomPoissonV2 ---------------------------------------------------------------------------
_POISSON_TYPES = (_dtypes.float16, _dtypes.float32, _dtypes.float64, _dtypes.int32,
                  _dtypes.int64)


def _random_poisson_lower(key, shape, rate, dtype):
    dims = _static_dims(shape) + rate.shape
    lam = jnp.broadcast_to(rate.astype(jnp.float64), dims)
    return jax.random.poisson(key, lam, dims, jnp.int64).astype(dtype.as_numpy_dtype)


register(OpDef(
    "RandomPoissonV2", inputs=("shape: int32", "rate: R"), outputs=("output: dtype",),
    attrs={"S": _dtypes.INDEX, "R": _POISSON_TYPES, "dtype": _POISSON_TYPES, "seed": 0,
           "seed2": 0},
    type_defaults={"S": _dtypes.int32, "R": _dtypes.float64, "dtype": _dtypes.int64},
    shape=_shape_then_param,
    lower=_random_poisson_lower, random=True, not_differentiable=True,
))


def random_poisson(lam, shape, dtype=_dtypes.float32, seed=None, name=None):
    """Poisson(lam) samples of shape `shape + lam.shape`, as `dtype`."""
    with _graph.name_scope(name, "random_poisson", [lam, shape]):
        shape_t = convert_to_tensor(_shape_list(shape), name="shape", dtype=_dtypes.int32)
        return apply_op("RandomPoissonV2", shape=shape_t, rate=lam,
                        dtype=_dtypes.as_dtype(dtype), **_seed_attrs(seed))


# -- random_crop ---------------------------------------------------------------------------------
def random_crop(value, size, seed=None, name=None):
    """A random window of shape `size` from `value` (every offset equally likely)."""
    with _graph.name_scope(name, "random_crop", [value, size]) as scope:
        value = convert_to_tensor(value, name="value")
        size = convert_to_tensor(_shape_list(size), dtype=_dtypes.int32, name="size")
        shape = array_ops.shape(value)
        # TF asserts at run time; shapes are static when a run is compiled, so check here
        # whenever both are known.
        want = static_value(size)
        if want is not None and value.shape.is_fully_defined():
            have = np.array(value.shape.as_list())
            if have.shape != want.shape or np.any(have < want):
                raise ValueError(f"Need value.shape >= size, got {have.tolist()} "
                                 f"{want.tolist()}")
        limit = shape - size + 1
        offset = random_uniform(array_ops.shape(shape), dtype=size.dtype,
                                maxval=size.dtype.max, seed=seed) % limit
        return slicing_ops.slice(value, offset, size, name=scope)
