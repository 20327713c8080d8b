"""The Dirichlet and Dirichlet-multinomial distributions."""

from __future__ import annotations

import numpy as np

from tensorflux._src.distributions import distribution, kullback_leibler
from tensorflux._src.distributions import util
from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.ops.array import array_ops
from tensorflux._src.ops.math import math_ops, reduce_ops
from tensorflux._src.ops.random import random_ops
from tensorflux._src.ops.debug import check_ops
from tensorflux._src.ops.array import generator_ops as gen
from tensorflux._src.ops.array.gather_ops import one_hot
from tensorflux._src.ops.linalg.linalg_ops import matmul
from tensorflux._src.ops.linalg.diag_ops import matrix_set_diag
from tensorflux._src.ops.math.special import lbeta

__all__ = ["Dirichlet", "DirichletMultinomial"]


def _check_concentration(concentration, validate_args):
    """Positive, at least rank 1, at least 2 classes (checked when validate_args)."""
    if not validate_args:
        return concentration
    return util.with_dependencies([
        check_ops.assert_positive(concentration,
                                  message="Concentration parameter must be positive."),
        check_ops.assert_rank_at_least(concentration, 1,
                                       message="Concentration parameter must have >=1 "
                                               "dimensions."),
        check_ops.assert_less(1, array_ops.shape(concentration)[-1],
                              message="Concentration parameter must have event_size >= 2."),
    ], concentration)


def _one(dtype):
    return convert_to_tensor(np.ones([], dtype.as_numpy_dtype))


class _Concentrations(distribution.Distribution):
    """Dirichlet and DirichletMultinomial: a concentration vector per batch member (its
    last dimension is the event) and its total; the covariance from the mean and the
    variance's scale term."""

    def _set_concentration(self, concentration, validate_args):
        self._concentration = _check_concentration(
            convert_to_tensor(concentration, name="concentration"), validate_args)
        self._total_concentration = reduce_ops.reduce_sum(self._concentration, -1)

    @property
    def concentration(self):
        return self._concentration

    @property
    def total_concentration(self):
        return self._total_concentration

    def _batch_shape_tensor(self):
        return array_ops.shape(self.total_concentration)

    def _batch_shape(self):
        return self.total_concentration.shape

    def _event_shape_tensor(self):
        return array_ops.shape(self.concentration)[-1:]

    def _event_shape(self):
        return self.concentration.shape.with_rank_at_least(1)[-1:]

    def _covariance(self):
        x = self._variance_scale_term() * self._mean()
        return matrix_set_diag(
            -matmul(array_ops.expand_dims(x, -1), array_ops.expand_dims(x, -2)),
            self._variance())


class Dirichlet(_Concentrations):
    """Dirichlet(concentration) over the simplex of the last dimension; samples are
    normalized Gamma draws (reparameterized)."""

    def __init__(self, concentration, validate_args=False, allow_nan_stats=True,
                 name="Dirichlet"):
        parameters = dict(locals())
        with _graph.name_scope(name, values=[concentration]) as name:
            self._set_concentration(concentration, validate_args)
        super().__init__(dtype=self._concentration.dtype, validate_args=validate_args,
                         allow_nan_stats=allow_nan_stats,
                         reparameterization_type=distribution.FULLY_REPARAMETERIZED,
                         parameters=parameters,
                         graph_parents=[self._concentration, self._total_concentration],
                         name=name)

    def _sample_n(self, n, seed=None):
        gamma_sample = random_ops.random_gamma(shape=[n], alpha=self.concentration,
                                               dtype=self.dtype, seed=seed)
        return gamma_sample / reduce_ops.reduce_sum(gamma_sample, -1, keepdims=True)

    def _log_prob(self, x):
        return self._log_unnormalized_prob(x) - self._log_normalization()

    def _prob(self, x):
        return math_ops.exp(self._log_prob(x))

    def _log_unnormalized_prob(self, x):
        x = self._maybe_assert_valid_sample(x)
        return reduce_ops.reduce_sum(math_ops.xlogy(self.concentration - 1.0, x), -1)

    def _log_normalization(self):
        return lbeta(self.concentration)

    def _entropy(self):
        k = math_ops.cast(self.event_shape_tensor()[0], self.dtype)
        return (self._log_normalization()
                + ((self.total_concentration - k) * math_ops.digamma(self.total_concentration))
                - reduce_ops.reduce_sum((self.concentration - 1.0)
                                        * math_ops.digamma(self.concentration), axis=-1))

    def _mean(self):
        return self.concentration / array_ops.expand_dims(self.total_concentration, -1)

    def _variance(self):
        scale = self._variance_scale_term()
        x = scale * self._mean()
        return x * (scale - x)

    def _variance_scale_term(self):
        return math_ops.rsqrt(1.0 + array_ops.expand_dims(self.total_concentration, -1))

    def _mode(self):
        k = math_ops.cast(self.event_shape_tensor()[0], self.dtype)
        mode = (self.concentration - 1.0) / (
            array_ops.expand_dims(self.total_concentration, -1) - k)
        if self.allow_nan_stats:
            nan = gen.fill(array_ops.shape(mode),
                           np.array(np.nan, self.dtype.as_numpy_dtype), name="nan")
            return util.where(reduce_ops.reduce_all(self.concentration > 1.0, axis=-1,
                                                    keepdims=True), mode, nan)
        return util.with_dependencies([check_ops.assert_less(
            _one(self.dtype), self.concentration,
            message="Mode undefined when any concentration <= 1")], mode)

    def _maybe_assert_valid_sample(self, x):
        check_ops.assert_same_float_dtype(tensors=[x], dtype=self.dtype)
        return util.maybe_assert(self.validate_args, lambda: [
            check_ops.assert_positive(x, message="samples must be positive"),
            check_ops.assert_near(_one(self.dtype), reduce_ops.reduce_sum(x, -1),
                                  message="sample last-dimension must sum to `1`")], x)


@kullback_leibler.RegisterKL(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(d1, d2, name=None):
    """KL(d1 || d2) for two Dirichlets, in closed form."""
    with _graph.name_scope(name, "kl_dirichlet_dirichlet",
                           values=[d1.concentration, d2.concentration]):
        digamma_sum_d1 = math_ops.digamma(
            reduce_ops.reduce_sum(d1.concentration, axis=-1, keepdims=True))
        digamma_diff = math_ops.digamma(d1.concentration) - digamma_sum_d1
        concentration_diff = d1.concentration - d2.concentration
        return (reduce_ops.reduce_sum(concentration_diff * digamma_diff, axis=-1)
                - lbeta(d1.concentration) + lbeta(d2.concentration))


class DirichletMultinomial(_Concentrations):
    """Counts of total_count draws from a Categorical whose probabilities are a
    Dirichlet(concentration) draw."""

    def __init__(self, total_count, concentration, validate_args=False, allow_nan_stats=True,
                 name="DirichletMultinomial"):
        parameters = dict(locals())
        with _graph.name_scope(name, values=[total_count, concentration]) as name:
            self._total_count = convert_to_tensor(total_count, name="total_count")
            if validate_args:
                self._total_count = util.embed_check_nonnegative_integer_form(
                    self._total_count)
            self._set_concentration(concentration, validate_args)
        super().__init__(dtype=self._concentration.dtype, validate_args=validate_args,
                         allow_nan_stats=allow_nan_stats,
                         reparameterization_type=distribution.NOT_REPARAMETERIZED,
                         parameters=parameters,
                         graph_parents=[self._total_count, self._concentration], name=name)

    @property
    def total_count(self):
        return self._total_count

    def _sample_n(self, n, seed=None):
        # total_count is one number here, as in TF (its draws are one Multinomial op).
        n_draws = math_ops.cast(self.total_count, dtype=_dtypes.int32)
        k = self.event_shape_tensor()[0]
        unnormalized_logits = array_ops.reshape(
            math_ops.log(random_ops.random_gamma(shape=[n], alpha=self.concentration,
                                                 dtype=self.dtype, seed=seed)),
            array_ops.stack([-1, k]))
        draws = random_ops.multinomial(logits=unnormalized_logits, num_samples=n_draws,
                                       seed=util.gen_new_seed(seed, "dirichlet_multinomial"))
        x = reduce_ops.reduce_sum(one_hot(draws, depth=k), -2)
        final_shape = array_ops.concat([[n], self.batch_shape_tensor(), [k]], 0)
        return math_ops.cast(array_ops.reshape(x, final_shape), self.dtype)

    def _log_prob(self, counts):
        counts = self._maybe_assert_valid_sample(counts)
        ordered_prob = (lbeta(self.concentration + counts)
                        - lbeta(self.concentration))
        return ordered_prob + util.log_combinations(self.total_count, counts)

    def _prob(self, counts):
        return math_ops.exp(self._log_prob(counts))

    def _mean(self):
        return array_ops.expand_dims(self.total_count, -1) * (
            self.concentration / array_ops.expand_dims(self.total_concentration, -1))

    def _variance(self):
        scale = self._variance_scale_term()
        x = scale * self._mean()
        return x * (array_ops.expand_dims(self.total_count, -1) * scale - x)

    def _variance_scale_term(self):
        c0 = array_ops.expand_dims(self.total_concentration, -1)
        return math_ops.sqrt((1.0 + c0 / array_ops.expand_dims(self.total_count, -1))
                             / (1.0 + c0))

    def _maybe_assert_valid_sample(self, counts):
        return util.maybe_check_counts(
            self.validate_args, counts, self.total_count,
            "counts last-dimension must sum to `self.total_count`")
