"""Student's t distribution."""

from __future__ import annotations

import math

import numpy as np

from tensorflux._src.distributions import distribution
from tensorflux._src.distributions import util
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.ops.array import array_ops
from tensorflux._src.ops.math import math_ops
from tensorflux._src.ops.random import random_ops
from tensorflux._src.ops.debug import check_ops
from tensorflux._src.ops.array import generator_ops as gen
from tensorflux._src.ops.math.special import betainc, lbeta

__all__ = ["StudentT"]


class StudentT(distribution.BroadcastParameters):
    """Student's t with df degrees of freedom, location loc and scale scale; samples are
    N(0, 1) * rsqrt(Gamma(df / 2, rate 1/2) / df) * scale + loc (reparameterized)."""

    _param_names = ("df", "loc", "scale")

    def __init__(self, df, loc, scale, validate_args=False, allow_nan_stats=True,
                 name="StudentT"):
        parameters = dict(locals())
        super().__init__((df, loc, scale),
                         lambda df, loc, scale: [check_ops.assert_positive(df)],
                         validate_args, allow_nan_stats, parameters, name)

    @property
    def df(self):
        return self._df

    @property
    def loc(self):
        return self._loc

    @property
    def scale(self):
        return self._scale

    def _sample_n(self, n, seed=None):
        shape = array_ops.concat([[n], self.batch_shape_tensor()], 0)
        normal_sample = random_ops.random_normal(shape, dtype=self.dtype, seed=seed)
        df = self.df * gen.ones(self.batch_shape_tensor(), dtype=self.dtype)
        gamma_sample = random_ops.random_gamma([n], 0.5 * df, beta=0.5, dtype=self.dtype,
                                               seed=util.gen_new_seed(seed, "student_t"))
        samples = normal_sample * math_ops.rsqrt(gamma_sample / df)
        return samples * self.scale + self.loc  # not |scale|, as TF

    def _log_prob(self, x):
        return self._log_unnormalized_prob(x) - self._log_normalization()

    def _log_unnormalized_prob(self, x):
        y = (x - self.loc) / self.scale
        return -0.5 * (self.df + 1.0) * math_ops.log1p(math_ops.square(y) / self.df)

    def _log_normalization(self):
        return (math_ops.log(math_ops.abs(self.scale)) + 0.5 * math_ops.log(self.df)
                + 0.5 * math.log(math.pi) + math_ops.lgamma(0.5 * self.df)
                - math_ops.lgamma(0.5 * (self.df + 1.0)))

    def _prob(self, x):
        return math_ops.exp(self._log_prob(x))

    def _cdf(self, x):
        # P[X <= x] from the regularized incomplete beta function of df / (df + y^2).
        y = (x - self.loc) / self.scale
        x_t = self.df / (math_ops.square(y) + self.df)
        neg_cdf = 0.5 * betainc(0.5 * self.df, 0.5 * gen.ones_like(self.df), x_t)
        return util.where(y < 0.0, neg_cdf, 1.0 - neg_cdf)

    def _entropy(self):
        v = array_ops.expand_dims(gen.ones(self.batch_shape_tensor(), dtype=self.dtype), -1)
        u = v * array_ops.expand_dims(self.df, -1)
        beta_arg = array_ops.concat([u, v], -1) / 2.0
        return (math_ops.log(math_ops.abs(self.scale)) + 0.5 * math_ops.log(self.df)
                + lbeta(beta_arg) + 0.5 * (self.df + 1.0)
                * (math_ops.digamma(0.5 * (self.df + 1.0)) - math_ops.digamma(0.5 * self.df)))

    def _mean(self):
        mean = self.loc * gen.ones(self.batch_shape_tensor(), dtype=self.dtype)
        if self.allow_nan_stats:
            nan = np.array(np.nan, dtype=self.dtype.as_numpy_dtype)
            return util.where(math_ops.greater(self.df * gen.ones_like(mean), 1.0), mean,
                              gen.fill(array_ops.shape(mean), nan, name="nan"))
        return util.with_dependencies([check_ops.assert_less(
            convert_to_tensor(np.ones([], self.dtype.as_numpy_dtype)), self.df,
            message="mean not defined for components of df <= 1")], mean)

    def _variance(self):
        # Where df <= 2 the denominator is never used (replaced by 1 to keep it finite).
        df = self.df * gen.ones(self.batch_shape_tensor(), dtype=self.dtype)
        denom = util.where(math_ops.greater(df, 2.0), df - 2.0, gen.ones_like(df))
        var = (gen.ones(self.batch_shape_tensor(), dtype=self.dtype)
               * math_ops.square(self.scale) * df / denom)
        inf = np.array(np.inf, dtype=self.dtype.as_numpy_dtype)
        result_where_defined = util.where(df > 2.0, var,
                                          gen.fill(self.batch_shape_tensor(), inf, name="inf"))
        if self.allow_nan_stats:
            nan = np.array(np.nan, dtype=self.dtype.as_numpy_dtype)
            return util.where(math_ops.greater(df, 1.0), result_where_defined,
                              gen.fill(self.batch_shape_tensor(), nan, name="nan"))
        return util.with_dependencies([check_ops.assert_less(
            convert_to_tensor(np.ones([], self.dtype.as_numpy_dtype)), df,
            message="variance not defined for components of df <= 1")],
            result_where_defined)

    def _mode(self):
        return array_ops.identity(self.loc)
