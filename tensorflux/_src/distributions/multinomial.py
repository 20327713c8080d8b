"""The Multinomial distribution."""

from __future__ import annotations

from tensorflux._src.distributions import distribution
from tensorflux._src.distributions import util
from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.ops.array import array_ops
from tensorflux._src.ops.math import math_ops
from tensorflux._src.ops.nn import nn_ops
from tensorflux._src.ops.random import random_ops
from tensorflux._src.ops.math import reduce_ops
from tensorflux._src.ops.array import generator_ops as gen
from tensorflux._src.ops.array.gather_ops import one_hot
from tensorflux._src.ops.linalg.linalg_ops import matmul
from tensorflux._src.ops.array.layout import sequence_mask
from tensorflux._src.ops.linalg.diag_ops import matrix_set_diag

__all__ = ["Multinomial"]


class Multinomial(distribution.Distribution):
    """Counts of total_count draws from a Categorical(logits or probs) over the last
    dimension."""

    def __init__(self, total_count, logits=None, probs=None, validate_args=False,
                 allow_nan_stats=True, name="Multinomial"):
        parameters = dict(locals())
        with _graph.name_scope(name, values=[total_count, logits, probs]) as name:
            self._total_count = convert_to_tensor(total_count, name="total_count")
            if validate_args:
                self._total_count = util.embed_check_nonnegative_integer_form(
                    self._total_count)
            self._logits, self._probs = util.get_logits_and_probs(
                logits=logits, probs=probs, multidimensional=True,
                validate_args=validate_args, name=name)
            self._mean_val = array_ops.expand_dims(self._total_count, -1) * self._probs
        super().__init__(dtype=self._probs.dtype,
                         reparameterization_type=distribution.NOT_REPARAMETERIZED,
                         validate_args=validate_args, allow_nan_stats=allow_nan_stats,
                         parameters=parameters,
                         graph_parents=[self._total_count, self._logits, self._probs],
                         name=name)

    @property
    def total_count(self):
        return self._total_count

    @property
    def logits(self):
        return self._logits

    @property
    def probs(self):
        return self._probs

    def _batch_shape_tensor(self):
        return array_ops.shape(self._mean_val)[:-1]

    def _batch_shape(self):
        return self._mean_val.shape.with_rank_at_least(1)[:-1]

    def _event_shape_tensor(self):
        return array_ops.shape(self._mean_val)[-1:]

    def _event_shape(self):
        return self._mean_val.shape.with_rank_at_least(1)[-1:]

    def _sample_n(self, n, seed=None):
        # TF draws total_count classes per batch member inside a map_fn. XLA needs static
        # shapes, so every member draws max(total_count) classes (one Multinomial op, the
        # count known when the run is compiled) and only its first total_count count.
        k = self.event_shape_tensor()[0]
        n_draws = gen.ones_like(self.logits[..., 0], dtype=_dtypes.int32) * math_ops.cast(
            self.total_count, _dtypes.int32)
        logits = array_ops.expand_dims(gen.ones_like(n_draws, dtype=self.logits.dtype),
                                       -1) * self.logits
        flat_logits = array_ops.reshape(logits, array_ops.stack([-1, k]))  # [B, k]
        flat_ndraws = array_ops.reshape(n_draws, [-1])  # [B]
        max_draws = reduce_ops.reduce_max(flat_ndraws)
        x = random_ops.multinomial(flat_logits, n * max_draws, seed=seed)  # [B, n * max]
        x = array_ops.reshape(x, array_ops.stack([-1, n, max_draws]))  # [B, n, max]
        keep = sequence_mask(flat_ndraws, max_draws)  # [B, max]
        keep = math_ops.cast(array_ops.expand_dims(keep, 1), self.dtype)  # [B, 1, max]
        counts = reduce_ops.reduce_sum(one_hot(x, depth=k, dtype=self.dtype)
                                       * array_ops.expand_dims(keep, -1), axis=-2)
        x = array_ops.transpose(counts, perm=[1, 0, 2])  # [n, B, k]
        final_shape = array_ops.concat([[n], self.batch_shape_tensor(), [k]], 0)
        return array_ops.reshape(x, final_shape)

    def _log_prob(self, counts):
        return self._log_unnormalized_prob(counts) - self._log_normalization(counts)

    def _log_unnormalized_prob(self, counts):
        counts = self._maybe_assert_valid_sample(counts)
        return reduce_ops.reduce_sum(counts * nn_ops.log_softmax(self.logits), -1)

    def _log_normalization(self, counts):
        counts = self._maybe_assert_valid_sample(counts)
        return -util.log_combinations(self.total_count, counts)

    def _mean(self):
        return array_ops.identity(self._mean_val)

    def _covariance(self):
        p = self.probs * array_ops.expand_dims(gen.ones_like(self.total_count), -1)
        return matrix_set_diag(
            -matmul(array_ops.expand_dims(self._mean_val, -1), array_ops.expand_dims(p, -2)),
            self._variance())

    def _variance(self):
        p = self.probs * array_ops.expand_dims(gen.ones_like(self.total_count), -1)
        return self._mean_val - self._mean_val * p

    def _maybe_assert_valid_sample(self, counts):
        return util.maybe_check_counts(self.validate_args, counts, self.total_count,
                                       "counts must sum to `self.total_count`")
