"""`sequence_loss`: weighted cross-entropy over a batch of sequences (TF1's loss.py)."""

from __future__ import annotations

from tensorflux._src.framework import graph as _graph
from tensorflux._src.ops.array import array_ops
from tensorflux._src.ops.math import math_ops
from tensorflux._src.ops.math.reduce_ops import count_nonzero, reduce_sum
from tensorflux._src.ops.nn.nn_ops import sparse_softmax_cross_entropy_with_logits

__all__ = ["sequence_loss"]


def sequence_loss(logits, targets, weights, average_across_timesteps=True,
                  average_across_batch=True, sum_over_timesteps=False, sum_over_batch=False,
                  softmax_loss_function=None, name=None):
    """Weighted cross-entropy of `logits` [batch, time, classes] against `targets`
    [batch, time]: averaged over the weights (or summed and divided by the number of
    non-zero weights) across timesteps and/or batch, as the flags say."""
    if len(logits.shape) != 3:
        raise ValueError("Logits must be a [batch_size x sequence_length x logits] tensor")
    if len(targets.shape) != 2:
        raise ValueError("Targets must be a [batch_size x sequence_length] tensor")
    if len(weights.shape) != 2:
        raise ValueError("Weights must be a [batch_size x sequence_length] tensor")
    if average_across_timesteps and sum_over_timesteps:
        raise ValueError("average_across_timesteps and sum_over_timesteps cannot be set to "
                         "True at same time.")
    if average_across_batch and sum_over_batch:
        raise ValueError("average_across_batch and sum_over_batch cannot be set to True at "
                         "same time.")
    with _graph.name_scope(name, "sequence_loss", [logits, targets, weights]):
        num_classes = array_ops.shape(logits)[2]
        logits_flat = array_ops.reshape(logits, [-1, num_classes])
        targets = array_ops.reshape(targets, [-1])
        if softmax_loss_function is None:
            crossent = sparse_softmax_cross_entropy_with_logits(labels=targets,
                                                                logits=logits_flat)
        else:
            crossent = softmax_loss_function(labels=targets, logits=logits_flat)
        crossent *= array_ops.reshape(weights, [-1])
        if average_across_timesteps and average_across_batch:
            return math_ops.div_no_nan(reduce_sum(crossent), reduce_sum(weights))
        if sum_over_timesteps and sum_over_batch:
            total_count = math_ops.cast(count_nonzero(weights), crossent.dtype)
            return math_ops.div_no_nan(reduce_sum(crossent), total_count)
        crossent = array_ops.reshape(crossent, array_ops.shape(logits)[0:2])
        if average_across_timesteps or average_across_batch:
            axis = [0] if average_across_batch else [1]
            return math_ops.div_no_nan(reduce_sum(crossent, axis=axis),
                                       reduce_sum(weights, axis=axis))
        if sum_over_timesteps or sum_over_batch:
            axis = [0] if sum_over_batch else [1]
            total_count = math_ops.cast(count_nonzero(weights, axis=axis), crossent.dtype)
            return math_ops.div_no_nan(reduce_sum(crossent, axis=axis), total_count)
        return crossent
