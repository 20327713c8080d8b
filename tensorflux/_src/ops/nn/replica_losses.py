"""`tf.nn.compute_average_loss` and `tf.nn.scale_regularization_loss`: TF's loss scaling
for synchronous replicas, composed from ordinary ops.

TF divides a replica's summed loss by the global batch size (per-replica batch size x
number of replicas) and a regularization loss by the number of replicas, so that the
replicas' summed gradients equal one device's. Here a step is always written for the
global batch: a graph built in tf.distribute's MirroredStrategy scope still sees the
whole batch (XLA's SPMD partitioner splits it, see distribute/mirrored_strategy.py), so
the replica count these formulas divide by is 1, exactly as for TF without a strategy.
"""

from __future__ import annotations

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.ops.array import array_ops
from tensorflux._src.ops.math import math_ops, reduce_ops

__all__ = ["compute_average_loss", "scale_regularization_loss"]

_NUM_REPLICAS = 1  # see the module docstring


def _scale_by_sample_weight(losses, sample_weight):
    """TF's losses_util.scale_losses_by_sample_weight: float32 product, with weights of
    rank +-1 squeezed or expanded to the losses' rank (static ranks)."""
    losses = math_ops.cast(losses, _dtypes.float32)
    sample_weight = math_ops.cast(sample_weight, _dtypes.float32)
    loss_rank, weight_rank = losses.shape.ndims, sample_weight.shape.ndims
    if weight_rank != 0 and loss_rank is not None and weight_rank is not None:
        if weight_rank - loss_rank == 1:
            sample_weight = array_ops.squeeze(sample_weight, [-1])
        elif loss_rank - weight_rank == 1:
            sample_weight = array_ops.expand_dims(sample_weight, -1)
    return math_ops.multiply(losses, sample_weight)


def compute_average_loss(per_example_loss, sample_weight=None, global_batch_size=None):
    """sum(per_example_loss * sample_weight) / global_batch_size, where the global batch
    size defaults to the first dimension of per_example_loss (times the replica count)."""
    per_example_loss = convert_to_tensor(per_example_loss)
    input_dtype = per_example_loss.dtype
    if per_example_loss.shape.ndims == 0:
        raise ValueError(f"Invalid value passed for `per_example_loss`. Expected a tensor "
                         f"with at least rank 1, received: {per_example_loss}")
    if sample_weight is not None:
        per_example_loss = _scale_by_sample_weight(per_example_loss, sample_weight)
    per_example_loss = math_ops.cast(per_example_loss, input_dtype)
    if global_batch_size is None:
        per_replica_batch_size = array_ops.shape(per_example_loss)[0]
        global_batch_size = per_replica_batch_size * _NUM_REPLICAS
        global_batch_size = math_ops.cast(global_batch_size, input_dtype)
    return reduce_ops.reduce_sum(per_example_loss) / global_batch_size


def scale_regularization_loss(regularization_loss):
    """sum(regularization_loss) / number of replicas (1 here, see the module docstring)."""
    return reduce_ops.reduce_sum(regularization_loss) / _NUM_REPLICAS
