"""The Gamma and Exponential distributions."""

from __future__ import annotations

import numpy as np

from tensorflux._src.distributions import distribution, kullback_leibler
from tensorflux._src.distributions import util
from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.ops.array import array_ops
from tensorflux._src.ops.math import math_ops
from tensorflux._src.ops.random import random_ops
from tensorflux._src.ops.debug import check_ops
from tensorflux._src.ops.array import generator_ops as gen
from tensorflux._src.ops.math.special import igamma

__all__ = ["Gamma", "Exponential"]


class Gamma(distribution.BroadcastParameters):
    """Gamma(concentration, rate); samples are differentiable in both (implicit
    reparameterization of tf.random_gamma)."""

    _param_names = ("concentration", "rate")

    def __init__(self, concentration, rate, validate_args=False, allow_nan_stats=True,
                 name="Gamma"):
        parameters = dict(locals())
        super().__init__((concentration, rate), lambda concentration, rate: [
            check_ops.assert_positive(concentration), check_ops.assert_positive(rate)],
            validate_args, allow_nan_stats, parameters, name)

    @property
    def concentration(self):
        return self._concentration

    @property
    def rate(self):
        return self._rate

    def _sample_n(self, n, seed=None):
        return random_ops.random_gamma(shape=[n], alpha=self.concentration, beta=self.rate,
                                       dtype=self.dtype, seed=seed)

    def _log_prob(self, x):
        return self._log_unnormalized_prob(x) - self._log_normalization()

    def _cdf(self, x):
        x = self._maybe_assert_valid_sample(x)
        # igamma(a, x) is the regularized lower incomplete gamma function.
        return igamma(self.concentration, self.rate * x)

    def _log_unnormalized_prob(self, x):
        x = self._maybe_assert_valid_sample(x)
        return math_ops.xlogy(self.concentration - 1.0, x) - self.rate * x

    def _log_normalization(self):
        return (math_ops.lgamma(self.concentration)
                - self.concentration * math_ops.log(self.rate))

    def _entropy(self):
        return (self.concentration - math_ops.log(self.rate)
                + math_ops.lgamma(self.concentration)
                + ((1.0 - self.concentration) * math_ops.digamma(self.concentration)))

    def _mean(self):
        return self.concentration / self.rate

    def _variance(self):
        return self.concentration / math_ops.square(self.rate)

    def _stddev(self):
        return math_ops.sqrt(self.concentration) / self.rate

    def _mode(self):
        mode = (self.concentration - 1.0) / self.rate
        if self.allow_nan_stats:
            nan = gen.fill(self.batch_shape_tensor(),
                           np.array(np.nan, self.dtype.as_numpy_dtype), name="nan")
            return util.where(self.concentration > 1.0, mode, nan)
        return util.with_dependencies([check_ops.assert_less(
            convert_to_tensor(np.ones([], self.dtype.as_numpy_dtype)), self.concentration,
            message="mode not defined when any concentration <= 1")], mode)

    def _maybe_assert_valid_sample(self, x):
        check_ops.assert_same_float_dtype(tensors=[x], dtype=self.dtype)
        return util.maybe_assert(self.validate_args,
                                 lambda: [check_ops.assert_positive(x)], x)


class Exponential(Gamma):
    """Exponential(rate): Gamma(1, rate), sampled as -log(U) / rate. As in TF 1.15,
    statistics come from Gamma (so mode() is NaN: Gamma's mode needs concentration > 1)."""

    def __init__(self, rate, validate_args=False, allow_nan_stats=True, name="Exponential"):
        parameters = dict(locals())
        with _graph.name_scope(name, values=[rate]) as name:
            self._rate = convert_to_tensor(rate, name="rate")
        super().__init__(concentration=gen.ones([], dtype=self._rate.dtype), rate=self._rate,
                         allow_nan_stats=allow_nan_stats, validate_args=validate_args,
                         name=name)
        self._parameters = parameters
        self._graph_parents += [self._rate]

    @staticmethod
    def _param_shapes(sample_shape):
        return {"rate": convert_to_tensor(sample_shape, dtype=_dtypes.int32)}

    @property
    def rate(self):
        return self._rate

    def _log_survival_function(self, value):
        return self._log_prob(value) - math_ops.log(self._rate)

    def _sample_n(self, n, seed=None):
        shape = array_ops.concat([[n], array_ops.shape(self._rate)], 0)
        # Uniform on [tiny, 1): the log is finite.
        sampled = random_ops.random_uniform(
            shape, minval=np.finfo(self.dtype.as_numpy_dtype).tiny, maxval=1.0, seed=seed,
            dtype=self.dtype)
        return -math_ops.log(sampled) / self._rate


@kullback_leibler.RegisterKL(Gamma, Gamma)
def _kl_gamma_gamma(g0, g1, name=None):
    """KL(g0 || g1) for two Gammas (also Exponentials), in closed form."""
    with _graph.name_scope(name, "kl_gamma_gamma",
                           values=[g0.concentration, g0.rate, g1.concentration, g1.rate]):
        return (((g0.concentration - g1.concentration) * math_ops.digamma(g0.concentration))
                + math_ops.lgamma(g1.concentration) - math_ops.lgamma(g0.concentration)
                + g1.concentration * math_ops.log(g0.rate)
                - g1.concentration * math_ops.log(g1.rate)
                + g0.concentration * (g1.rate / g0.rate - 1.0))
