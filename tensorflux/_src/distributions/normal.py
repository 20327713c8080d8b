"""The Normal (Gaussian) distribution."""

from __future__ import annotations

import math

from tensorflux._src.distributions import distribution, kullback_leibler
from tensorflux._src.distributions import util
from tensorflux._src.framework import graph as _graph
from tensorflux._src.ops.array import array_ops
from tensorflux._src.ops.math import math_ops
from tensorflux._src.ops.random import random_ops
from tensorflux._src.ops.debug import check_ops
from tensorflux._src.ops.array import generator_ops as gen

__all__ = ["Normal"]


class Normal(distribution.BroadcastParameters):
    """N(loc, scale^2); samples are loc + scale * N(0, 1), so gradients reach both."""

    _param_names = ("loc", "scale")

    def __init__(self, loc, scale, validate_args=False, allow_nan_stats=True, name="Normal"):
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
        sampled = random_ops.random_normal(shape=shape, mean=0.0, stddev=1.0,
                                           dtype=self.loc.dtype, seed=seed)
        return sampled * self.scale + self.loc

    def _log_prob(self, x):
        return self._log_unnormalized_prob(x) - self._log_normalization()

    def _log_cdf(self, x):
        return util.log_ndtr(self._z(x))

    def _cdf(self, x):
        return util.ndtr(self._z(x))

    def _log_survival_function(self, x):
        return util.log_ndtr(-self._z(x))

    def _survival_function(self, x):
        return util.ndtr(-self._z(x))

    def _log_unnormalized_prob(self, x):
        return -0.5 * math_ops.square(self._z(x))

    def _log_normalization(self):
        return 0.5 * math.log(2.0 * math.pi) + math_ops.log(self.scale)

    def _entropy(self):
        scale = self.scale * gen.ones_like(self.loc)
        return 0.5 * math.log(2.0 * math.pi * math.e) + math_ops.log(scale)

    def _mean(self):
        return self.loc * gen.ones_like(self.scale)

    def _quantile(self, p):
        return self._inv_z(math_ops.ndtri(p))

    def _stddev(self):
        return self.scale * gen.ones_like(self.loc)

    def _mode(self):
        return self._mean()

    def _z(self, x):
        with _graph.name_scope("standardize", values=[x]):
            return (x - self.loc) / self.scale

    def _inv_z(self, z):
        with _graph.name_scope("reconstruct", values=[z]):
            return z * self.scale + self.loc


@kullback_leibler.RegisterKL(Normal, Normal)
def _kl_normal_normal(n_a, n_b, name=None):
    """KL(n_a || n_b) for two Normals, in closed form."""
    with _graph.name_scope(name, "kl_normal_normal", [n_a.loc, n_b.loc]):
        s_a_squared = math_ops.square(n_a.scale)
        s_b_squared = math_ops.square(n_b.scale)
        ratio = s_a_squared / s_b_squared
        return (math_ops.square(n_a.loc - n_b.loc) / (2.0 * s_b_squared)
                + 0.5 * (ratio - 1.0 - math_ops.log(ratio)))
