"""`tf.nn.experimental.general_dropout` and `tf.nn.experimental.stateless_dropout`: TF's
dropout with the uniform sampler given (general) or a stateless one keyed by `seed`.

Both are TF's `_dropout`: x / (1 - rate) where uniform(noise_shape) >= rate, else 0. A
Python rate of 0 returns x itself. stateless_dropout samples with
tf.random.stateless_uniform (the random family's stateless ops), so the same seed gives
the same mask in every run and session.
"""

from __future__ import annotations

import numbers

import numpy as np

from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.operation import Tensor
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.ops.array import gather_ops
from tensorflux._src.ops.math import math_ops
from tensorflux._src.ops.nn.nn_ops import _noise_shape
from tensorflux._src.ops.random import stateless_random_ops

__all__ = ["general_dropout", "stateless_dropout"]


def _dropout(x, rate, noise_shape, uniform_sampler, name, default_name):
    with _graph.name_scope(name, default_name, [x]):
        is_number = isinstance(rate, numbers.Real) and not isinstance(rate, bool)
        if is_number and (rate < 0 or rate >= 1):
            raise ValueError(f"`rate` must be a scalar tensor or a float in the range [0, 1). "
                             f"Received: rate={rate}")
        x = convert_to_tensor(x, name="x")
        x_dtype = x.dtype.base_dtype
        if not x_dtype.is_floating:
            raise ValueError(f"`x.dtype` must be a floating point tensor as `x` will be "
                             f"scaled. Received: x_dtype={x_dtype!r}")
        if is_number and rate == 0:
            return x
        if not isinstance(rate, Tensor):
            if not is_number:
                raise ValueError(f"`rate` must be a scalar or scalar tensor. Received: "
                                 f"rate={rate}")
            scale = convert_to_tensor(1 / (1 - rate), dtype=x_dtype)
            ret = math_ops.multiply(x, scale)
        else:
            rate.shape.assert_has_rank(0)
            if rate.dtype.base_dtype != x_dtype:
                if not rate.dtype.is_floating:
                    raise ValueError(f"`x.dtype` doesn't match `rate.dtype`. Received: "
                                     f"x.dtype={x_dtype!r} and rate.dtype={rate.dtype!r}")
                rate = math_ops.cast(rate, x_dtype, name="rate")
            one = convert_to_tensor(np.ones([], x_dtype.as_numpy_dtype))
            ret = math_ops.realdiv(x, math_ops.subtract(one, rate))
        random_tensor = uniform_sampler(shape=_noise_shape(x, noise_shape), dtype=x_dtype)
        keep_mask = random_tensor >= rate
        zero = convert_to_tensor(np.zeros([], x_dtype.as_numpy_dtype))
        ret = gather_ops.where_v2(keep_mask, ret, zero)
        ret.set_shape(x.shape)
        return ret


def general_dropout(x, rate, uniform_sampler, noise_shape=None, name=None):
    """Dropout with `uniform_sampler(shape=, dtype=)` drawing the uniform [0, 1) noise."""
    return _dropout(x, rate, noise_shape, uniform_sampler, name, "general_dropout")


def stateless_dropout(x, rate, seed, rng_alg=None, noise_shape=None, name=None):
    """Dropout whose mask depends only on the shape-[2] integer `seed` (and rng_alg)."""
    # The random family's stateless sampler (tf.random.stateless_uniform).

    def sampler(shape, dtype):
        kwargs = {} if rng_alg is None else {"alg": rng_alg}
        return stateless_random_ops.stateless_random_uniform(shape=shape, seed=seed,
                                                            dtype=dtype, **kwargs)

    return _dropout(x, rate, noise_shape, sampler, name, "stateless_dropout")
