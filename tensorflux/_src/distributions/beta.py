"""The Beta distribution."""

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
from tensorflux._src.ops.math.special import betainc

__all__ = ["Beta"]


class Beta(distribution.ScalarEvent):
    """Beta(concentration1, concentration0) on (0, 1), sampled as G1 / (G1 + G0) from two
    Gamma draws (so gradients reach both concentrations)."""

    def __init__(self, concentration1=None, concentration0=None, validate_args=False,
                 allow_nan_stats=True, name="Beta"):
        parameters = dict(locals())
        with _graph.name_scope(name, values=[concentration1, concentration0]) as name:
            self._concentration1 = self._maybe_assert_valid_concentration(
                convert_to_tensor(concentration1, name="concentration1"), validate_args)
            self._concentration0 = self._maybe_assert_valid_concentration(
                convert_to_tensor(concentration0, name="concentration0"), validate_args)
            check_ops.assert_same_float_dtype([self._concentration1, self._concentration0])
            self._total_concentration = self._concentration1 + self._concentration0
        super().__init__(dtype=self._total_concentration.dtype, validate_args=validate_args,
                         allow_nan_stats=allow_nan_stats,
                         reparameterization_type=distribution.FULLY_REPARAMETERIZED,
                         parameters=parameters,
                         graph_parents=[self._concentration1, self._concentration0,
                                        self._total_concentration], name=name)

    @staticmethod
    def _param_shapes(sample_shape):
        shape = convert_to_tensor(sample_shape, dtype=_dtypes.int32)
        return {"concentration1": shape, "concentration0": shape}

    @property
    def concentration1(self):
        return self._concentration1

    @property
    def concentration0(self):
        return self._concentration0

    @property
    def total_concentration(self):
        return self._total_concentration

    def _batch_shape_tensor(self):
        return array_ops.shape(self.total_concentration)

    def _batch_shape(self):
        return self.total_concentration.shape

    def _sample_n(self, n, seed=None):
        # One Gamma op draws both gammas (TF uses two with related seeds): the same
        # distribution, half the sampler code to compile.
        expanded_c1 = gen.ones_like(self.total_concentration) * self.concentration1
        expanded_c0 = gen.ones_like(self.total_concentration) * self.concentration0
        gammas = random_ops.random_gamma(shape=[n],
                                         alpha=array_ops.stack([expanded_c1, expanded_c0], -1),
                                         dtype=self.dtype, seed=seed)
        gamma1, gamma2 = array_ops.unstack(gammas, num=2, axis=-1)
        return gamma1 / (gamma1 + gamma2)

    def _log_prob(self, x):
        return self._log_unnormalized_prob(x) - self._log_normalization()

    def _prob(self, x):
        return math_ops.exp(self._log_prob(x))

    def _log_cdf(self, x):
        return math_ops.log(self._cdf(x))

    def _cdf(self, x):
        return betainc(self.concentration1, self.concentration0, x)

    def _log_unnormalized_prob(self, x):
        x = self._maybe_assert_valid_sample(x)
        return (math_ops.xlogy(self.concentration1 - 1.0, x)
                + (self.concentration0 - 1.0) * math_ops.log1p(-x))

    def _log_normalization(self):
        return (math_ops.lgamma(self.concentration1) + math_ops.lgamma(self.concentration0)
                - math_ops.lgamma(self.total_concentration))

    def _entropy(self):
        return (self._log_normalization()
                - (self.concentration1 - 1.0) * math_ops.digamma(self.concentration1)
                - (self.concentration0 - 1.0) * math_ops.digamma(self.concentration0)
                + (self.total_concentration - 2.0)
                * math_ops.digamma(self.total_concentration))

    def _mean(self):
        return self._concentration1 / self._total_concentration

    def _variance(self):
        mean = self._mean()
        return mean * (1.0 - mean) / (1.0 + self.total_concentration)

    def _mode(self):
        mode = (self.concentration1 - 1.0) / (self.total_concentration - 2.0)
        if self.allow_nan_stats:
            nan = gen.fill(self.batch_shape_tensor(),
                           np.array(np.nan, self.dtype.as_numpy_dtype), name="nan")
            is_defined = math_ops.logical_and(self.concentration1 > 1.0,
                                              self.concentration0 > 1.0)
            return util.where(is_defined, mode, nan)
        one = convert_to_tensor(np.ones([], self.dtype.as_numpy_dtype))
        return util.with_dependencies([
            check_ops.assert_less(one, self.concentration1,
                                  message="Mode undefined for concentration1 <= 1."),
            check_ops.assert_less(one, self.concentration0,
                                  message="Mode undefined for concentration0 <= 1.")], mode)

    def _maybe_assert_valid_concentration(self, concentration, validate_args):
        return util.maybe_assert(validate_args, lambda: [check_ops.assert_positive(
            concentration, message="Concentration parameter must be positive.")],
            concentration)

    def _maybe_assert_valid_sample(self, x):
        return util.maybe_assert(self.validate_args, lambda: [
            check_ops.assert_positive(x, message="sample must be positive"),
            check_ops.assert_less(x, convert_to_tensor(np.ones([], x.dtype.as_numpy_dtype)),
                                  message="sample must be less than `1`.")], x)


@kullback_leibler.RegisterKL(Beta, Beta)
def _kl_beta_beta(d1, d2, name=None):
    """KL(d1 || d2) for two Betas, in closed form."""
    with _graph.name_scope(name, "kl_beta_beta", values=[
            d1.concentration1, d1.concentration0, d1.total_concentration,
            d2.concentration1, d2.concentration0, d2.total_concentration]):
        return ((d2._log_normalization() - d1._log_normalization())
                - math_ops.digamma(d1.concentration1)
                * (d2.concentration1 - d1.concentration1)
                - math_ops.digamma(d1.concentration0)
                * (d2.concentration0 - d1.concentration0)
                + math_ops.digamma(d1.total_concentration)
                * (d2.total_concentration - d1.total_concentration))
