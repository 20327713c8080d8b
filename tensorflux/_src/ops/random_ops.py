"""Random tensors: one PRNG key per op per run, TF1 seed semantics (see random_seed.py).

The distributions' parameters are applied with ordinary ops, as TF1 builds them:
`random_normal` is RandomStandardNormal * stddev + mean.
"""

from __future__ import annotations

import jax
import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework import random_seed
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.ops import math_ops
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.registry import OpDef, register
from tensorflux._src.ops.shape_fns import static_shape_from_tensor

__all__ = ["random_normal", "random_uniform", "truncated_normal", "set_random_seed"]

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
