"""The Bernoulli distribution."""

from __future__ import annotations

from tensorflux._src.distributions import distribution, kullback_leibler
from tensorflux._src.distributions import util
from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.ops.array import array_ops
from tensorflux._src.ops.math import math_ops
from tensorflux._src.ops.nn import nn_ops
from tensorflux._src.ops.random import random_ops
from tensorflux._src.ops.array import generator_ops as gen
from tensorflux._src.ops.nn.nn_loss_ops import sigmoid_cross_entropy_with_logits

__all__ = ["Bernoulli"]


class Bernoulli(distribution.ScalarEvent):
    """Bernoulli(probs): 1 with probability probs (given as probs or logits), else 0."""

    def __init__(self, logits=None, probs=None, dtype=_dtypes.int32, validate_args=False,
                 allow_nan_stats=True, name="Bernoulli"):
        parameters = dict(locals())
        with _graph.name_scope(name) as name:
            self._logits, self._probs = util.get_logits_and_probs(
                logits=logits, probs=probs, validate_args=validate_args, name=name)
        super().__init__(dtype=_dtypes.as_dtype(dtype),
                         reparameterization_type=distribution.NOT_REPARAMETERIZED,
                         validate_args=validate_args, allow_nan_stats=allow_nan_stats,
                         parameters=parameters, graph_parents=[self._logits, self._probs],
                         name=name)

    @staticmethod
    def _param_shapes(sample_shape):
        return {"logits": convert_to_tensor(sample_shape, dtype=_dtypes.int32)}

    @property
    def logits(self):
        return self._logits

    @property
    def probs(self):
        return self._probs

    def _batch_shape_tensor(self):
        return array_ops.shape(self._logits)

    def _batch_shape(self):
        return self._logits.shape

    def _sample_n(self, n, seed=None):
        new_shape = array_ops.concat([[n], self.batch_shape_tensor()], 0)
        uniform = random_ops.random_uniform(new_shape, seed=seed, dtype=self.probs.dtype)
        return math_ops.cast(math_ops.less(uniform, self.probs), self.dtype)

    def _log_prob(self, event):
        if self.validate_args:
            event = util.embed_check_integer_casting_closed(event, target_dtype=_dtypes.bool)
        event = math_ops.cast(event, self.logits.dtype)
        logits = self.logits
        if not (event.shape.is_fully_defined() and logits.shape.is_fully_defined()
                and event.shape == logits.shape):
            logits = gen.ones_like(event) * logits
            event = gen.ones_like(logits) * event
        return -sigmoid_cross_entropy_with_logits(labels=event, logits=logits)

    def _entropy(self):
        return (-self.logits * (math_ops.sigmoid(self.logits) - 1)
                + nn_ops.softplus(-self.logits))

    def _mean(self):
        return array_ops.identity(self.probs)

    def _variance(self):
        return self._mean() * (1.0 - self.probs)

    def _mode(self):
        return math_ops.cast(self.probs > 0.5, self.dtype)


@kullback_leibler.RegisterKL(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(a, b, name=None):
    """KL(a || b) for two Bernoullis, from their logits."""
    with _graph.name_scope(name, "kl_bernoulli_bernoulli", values=[a.logits, b.logits]):
        delta_probs0 = nn_ops.softplus(-b.logits) - nn_ops.softplus(-a.logits)
        delta_probs1 = nn_ops.softplus(b.logits) - nn_ops.softplus(a.logits)
        return (math_ops.sigmoid(a.logits) * delta_probs0
                + math_ops.sigmoid(-a.logits) * delta_probs1)
