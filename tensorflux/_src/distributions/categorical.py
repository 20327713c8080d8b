"""The Categorical distribution over classes [0, event_size)."""

from __future__ import annotations

import numpy as np

from tensorflux._src.distributions import distribution, kullback_leibler
from tensorflux._src.distributions import util
from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.framework.tensor_shape import TensorShape
from tensorflux._src.ops.array import array_ops
from tensorflux._src.ops.math import math_ops, reduce_ops
from tensorflux._src.ops.nn import nn_ops
from tensorflux._src.ops.random import random_ops
from tensorflux._src.ops.array import generator_ops as gen
from tensorflux._src.ops.array.layout import sequence_mask

__all__ = ["Categorical"]


def _broadcast_cat_event_and_params(event, params, base_dtype):
    """The event and the parameters broadcast against each other's batch shape."""
    if event.dtype.is_integer:
        pass
    elif event.dtype.is_floating:
        event = math_ops.cast(event, dtype=_dtypes.int32)
    else:
        raise TypeError("`value` should have integer `dtype` or `self.dtype` ({})"
                        .format(base_dtype))
    known = (params.shape.ndims is not None and params.shape[:-1].is_fully_defined()
             and event.shape.is_fully_defined())
    if not known or params.shape[:-1] != event.shape:
        params = params * gen.ones_like(array_ops.expand_dims(event, -1), dtype=params.dtype)
        params_shape = array_ops.shape(params)[:-1]
        event = event * gen.ones(params_shape, dtype=event.dtype)
        if params.shape.ndims is not None:
            event.set_shape(TensorShape(params.shape[:-1]))
    return event, params


class Categorical(distribution.ScalarEvent):
    """A class index drawn with probabilities softmax(logits) (or the given probs)."""

    def __init__(self, logits=None, probs=None, dtype=_dtypes.int32, validate_args=False,
                 allow_nan_stats=True, name="Categorical"):
        parameters = dict(locals())
        with _graph.name_scope(name, values=[logits, probs]) as name:
            self._logits, self._probs = util.get_logits_and_probs(
                logits=logits, probs=probs, validate_args=validate_args,
                multidimensional=True, name=name)
            if validate_args:
                self._logits = util.embed_check_categorical_event_shape(self._logits)
            static = self._logits.shape.with_rank_at_least(1)
            logits_shape = array_ops.shape(self._logits, name="logits_shape")
            if static.ndims is not None:
                self._batch_rank = convert_to_tensor(np.int32(static.ndims - 1),
                                                     name="batch_rank")
            else:
                with _graph.name_scope("batch_rank"):
                    self._batch_rank = array_ops.rank(self._logits) - 1
            if static[-1].value is not None:
                self._event_size = convert_to_tensor(np.int32(static[-1].value),
                                                     name="event_size")
            else:
                with _graph.name_scope("event_size"):
                    self._event_size = array_ops.shape(self._logits)[-1]
            if static[:-1].is_fully_defined():
                self._batch_shape_val = convert_to_tensor(
                    np.array(static[:-1].as_list(), np.int32), name="batch_shape")
            else:
                with _graph.name_scope("batch_shape"):
                    self._batch_shape_val = logits_shape[:-1]
        super().__init__(dtype=_dtypes.as_dtype(dtype),
                         reparameterization_type=distribution.NOT_REPARAMETERIZED,
                         validate_args=validate_args, allow_nan_stats=allow_nan_stats,
                         parameters=parameters, graph_parents=[self._logits, self._probs],
                         name=name)

    @property
    def event_size(self):
        return self._event_size

    @property
    def logits(self):
        return self._logits

    @property
    def probs(self):
        return self._probs

    def _batch_shape_tensor(self):
        return array_ops.identity(self._batch_shape_val)

    def _batch_shape(self):
        return self.logits.shape[:-1]

    def _sample_n(self, n, seed=None):
        if self.logits.shape.ndims == 2:
            logits_2d = self.logits
        else:
            logits_2d = array_ops.reshape(self.logits, array_ops.stack([-1, self.event_size]))
        sample_dtype = _dtypes.int64 if self.dtype.size > 4 else _dtypes.int32
        draws = random_ops.multinomial(logits_2d, n, seed=seed, output_dtype=sample_dtype)
        draws = array_ops.reshape(array_ops.transpose(draws),
                                  array_ops.concat([[n], self.batch_shape_tensor()], 0))
        return math_ops.cast(draws, self.dtype)

    def _event_and(self, k, params):
        """Class indices k (checked when validate_args) and `params`, broadcast."""
        k = convert_to_tensor(k, name="k")
        if self.validate_args:
            k = util.embed_check_integer_casting_closed(k, target_dtype=_dtypes.int32)
        return _broadcast_cat_event_and_params(k, params, base_dtype=self.dtype.base_dtype)

    def _cdf(self, k):
        # TF 1.15 sums the probabilities of the classes below k (sequence_mask(k)).
        k, probs = self._event_and(k, self.probs)
        flat_probs = array_ops.reshape(probs, array_ops.stack([-1, self._event_size]))
        flat_k = array_ops.reshape(k, [-1])
        to_sum_over = util.where(sequence_mask(flat_k, self._event_size), flat_probs,
                                 gen.zeros_like(flat_probs))
        return array_ops.reshape(reduce_ops.reduce_sum(to_sum_over, axis=-1),
                                 array_ops.shape(k))

    def _log_prob(self, k):
        k, logits = self._event_and(k, self.logits)
        return -nn_ops.sparse_softmax_cross_entropy_with_logits(labels=k, logits=logits)

    def _entropy(self):
        return -reduce_ops.reduce_sum(nn_ops.log_softmax(self.logits) * self.probs, axis=-1)

    def _mode(self):
        ret = reduce_ops.argmax(self.logits, axis=self.logits.shape.ndims - 1
                                if self.logits.shape.ndims is not None else self._batch_rank)
        ret = math_ops.cast(ret, self.dtype)
        ret.set_shape(self.batch_shape)
        return ret


@kullback_leibler.RegisterKL(Categorical, Categorical)
def _kl_categorical_categorical(a, b, name=None):
    """KL(a || b) for two Categoricals over the same classes."""
    with _graph.name_scope(name, "kl_categorical_categorical", values=[a.logits, b.logits]):
        delta_log_probs1 = nn_ops.log_softmax(a.logits) - nn_ops.log_softmax(b.logits)
        return reduce_ops.reduce_sum(nn_ops.softmax(a.logits) * delta_log_probs1, axis=-1)
