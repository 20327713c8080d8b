"""The Uniform distribution."""

from __future__ import annotations

import math

import numpy as np

from tensorflux._src.distributions import distribution
from tensorflux._src.distributions import util
from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.framework.tensor_shape import TensorShape
from tensorflux._src.ops.array import array_ops
from tensorflux._src.ops.math import math_ops
from tensorflux._src.ops.random import random_ops
from tensorflux._src.ops.debug import check_ops
from tensorflux._src.ops.array import generator_ops as gen

__all__ = ["Uniform"]


def _scalar_event():
    return convert_to_tensor(np.zeros([0], np.int32))


class Uniform(distribution.Distribution):
    """Uniform on [low, high); samples are low + (high - low) * U[0, 1)."""

    def __init__(self, low=0.0, high=1.0, validate_args=False, allow_nan_stats=True,
                 name="Uniform"):
        parameters = dict(locals())
        with _graph.name_scope(name, values=[low, high]) as name:
            with _graph.control_dependencies([check_ops.assert_less(
                    low, high, message="uniform not defined when low >= high.")]
                    if validate_args else []):
                self._low = array_ops.identity(low, name="low")
                self._high = array_ops.identity(high, name="high")
                check_ops.assert_same_float_dtype([self._low, self._high])
        super().__init__(dtype=self._low.dtype,
                         reparameterization_type=distribution.FULLY_REPARAMETERIZED,
                         validate_args=validate_args, allow_nan_stats=allow_nan_stats,
                         parameters=parameters, graph_parents=[self._low, self._high],
                         name=name)

    @staticmethod
    def _param_shapes(sample_shape):
        shape = convert_to_tensor(sample_shape, dtype=_dtypes.int32)
        return {"low": shape, "high": shape}

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

    def _batch_shape_tensor(self):
        return util.dynamic_broadcast(self.low, self.high)

    def _batch_shape(self):
        return util.static_broadcast(self.low.shape, self.high.shape)

    def _event_shape_tensor(self):
        return _scalar_event()

    def _event_shape(self):
        return TensorShape([])

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
