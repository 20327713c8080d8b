"""The Uniform distribution."""

from __future__ import annotations

import math

from tensorflux._src.distributions import distribution
from tensorflux._src.distributions import util
from tensorflux._src.ops.array import array_ops
from tensorflux._src.ops.math import math_ops
from tensorflux._src.ops.random import random_ops
from tensorflux._src.ops.debug import check_ops
from tensorflux._src.ops.array import generator_ops as gen

__all__ = ["Uniform"]


class Uniform(distribution.BroadcastParameters):
    """Uniform on [low, high); samples are low + (high - low) * U[0, 1)."""

    _param_names = ("low", "high")

    def __init__(self, low=0.0, high=1.0, validate_args=False, allow_nan_stats=True,
                 name="Uniform"):
        parameters = dict(locals())
        super().__init__((low, high), lambda low, high: [check_ops.assert_less(
            low, high, message="uniform not defined when low >= high.")],
            validate_args, allow_nan_stats, parameters, name)

    @property
    def low(self):
        return self._low

    @property
    def high(self):
        return self._high

    def range(self, name="range"):
        """high - low."""
        with self._name_scope(name):
            return self.high - self.low

    def _sample_n(self, n, seed=None):
        shape = array_ops.concat([[n], self.batch_shape_tensor()], 0)
        samples = random_ops.random_uniform(shape=shape, dtype=self.dtype, seed=seed)
        return self.low + self.range() * samples

    def _prob(self, x):
        broadcasted_x = x * gen.ones(self.batch_shape_tensor(), dtype=x.dtype)
        inside = util.where(math_ops.logical_or(broadcasted_x < self.low,
                                                broadcasted_x >= self.high),
                            gen.zeros_like(broadcasted_x),
                            gen.ones_like(broadcasted_x) / self.range())
        return util.where(math_ops.is_nan(broadcasted_x), broadcasted_x, inside)

    def _log_prob(self, x):
        return math_ops.log(self._prob(x))

    def _cdf(self, x):
        broadcasted_x = x * gen.ones(self.batch_shape_tensor(), dtype=x.dtype)
        zeros, ones = gen.zeros_like(broadcasted_x), gen.ones_like(broadcasted_x)
        result_if_not_big = util.where(broadcasted_x < self.low, zeros,
                                       (broadcasted_x - self.low) / self.range())
        return util.where(broadcasted_x >= self.high, ones, result_if_not_big)

    def _entropy(self):
        return math_ops.log(self.range())

    def _mean(self):
        return (self.low + self.high) / 2.0

    def _variance(self):
        return math_ops.square(self.range()) / 12.0

    def _stddev(self):
        return self.range() / math.sqrt(12.0)
