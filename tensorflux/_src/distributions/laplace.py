"""The Laplace distribution."""

from __future__ import annotations

import math

import numpy as np

from tensorflux._src.distributions import distribution
from tensorflux._src.distributions import util
from tensorflux._src.ops.array import array_ops
from tensorflux._src.ops.math import math_ops
from tensorflux._src.ops.random import random_ops
from tensorflux._src.ops.debug import check_ops
from tensorflux._src.ops.array import generator_ops as gen

__all__ = ["Laplace"]


class Laplace(distribution.BroadcastParameters):
    """Laplace(loc, scale): density exp(-|x - loc| / scale) / (2 scale); samples are
    loc - scale * sign(U) * log1p(-|U|), U uniform on (-1, 1)."""

    _param_names = ("loc", "scale")

    def __init__(self, loc, scale, validate_args=False, allow_nan_stats=True,
                 name="Laplace"):
        parameters = dict(locals())
        super().__init__((loc, scale), lambda loc, scale: [check_ops.assert_positive(scale)],
                         validate_args, allow_nan_stats, parameters, name)

    @property
    def loc(self):
        return self._loc

    @property
    def scale(self):
        return self._scale

    def _sample_n(self, n, seed=None):
        shape = array_ops.concat([[n], self.batch_shape_tensor()], 0)
        # Uniform on (-1, 1): the smallest float above -1 keeps log1p(-|u|) finite.
        np_dtype = self.dtype.as_numpy_dtype
        uniform_samples = random_ops.random_uniform(
            shape=shape, minval=np.nextafter(np_dtype(-1.0), np_dtype(0.0)), maxval=1.0,
            dtype=self.dtype, seed=seed)
        return (self.loc - self.scale * math_ops.sign(uniform_samples)
                * math_ops.log1p(-math_ops.abs(uniform_samples)))

    def _log_prob(self, x):
        return self._log_unnormalized_prob(x) - self._log_normalization()

    def _prob(self, x):
        return math_ops.exp(self._log_prob(x))

    def _log_cdf(self, x):
        return util.log_cdf_laplace(self._z(x))

    def _log_survival_function(self, x):
        return util.log_cdf_laplace(-self._z(x))

    def _cdf(self, x):
        z = self._z(x)
        return 0.5 - 0.5 * math_ops.sign(z) * math_ops.expm1(-math_ops.abs(z))

    def _log_unnormalized_prob(self, x):
        return -math_ops.abs(self._z(x))

    def _log_normalization(self):
        return math.log(2.0) + math_ops.log(self.scale)

    def _entropy(self):
        scale = self.scale + gen.zeros_like(self.loc)
        return math.log(2.0) + 1.0 + math_ops.log(scale)

    def _mean(self):
        return self.loc + gen.zeros_like(self.scale)

    def _stddev(self):
        return math.sqrt(2.0) * self.scale + gen.zeros_like(self.loc)

    def _median(self):
        return self._mean()

    def _mode(self):
        return self._mean()

    def _z(self, x):
        return (x - self.loc) / self.scale
