"""CrossShardOptimizer: TF 1.15's optimizer wrapper that combines the shards' gradients.

In TF each shard computes gradients of its own loss on its slice of the batch and the
wrapper all-reduces them (MEAN: scales each shard's loss by 1/num_shards, then sums).
Under tensorflux's SPMD replicas the model step is one program over the *global* batch
and XLA inserts the all-reduce, so for a loss that is a per-example mean the gradient
is already the MEAN of the shards' gradients: MEAN changes nothing, SUM multiplies by
num_shards (the sum of N equal-weight shard means). A loss that is a per-batch *sum*
gets the sum over all shards either way (TF's MEAN would divide it by num_shards).
"""

from __future__ import annotations

import logging

from tensorflux._src.estimator.tpu import shard_context
from tensorflux._src.layers.losses_impl import Reduction
from tensorflux._src.train.optimizer import Optimizer

logger = logging.getLogger("tensorflux.estimator")


class CrossShardOptimizer(Optimizer):
    """`CrossShardOptimizer(opt, reduction=losses.Reduction.MEAN,
    name='CrossShardOptimizer', group_assignment=None)` (see the module docstring)."""

    def __init__(self, opt, reduction=Reduction.MEAN, name="CrossShardOptimizer",
                 group_assignment=None):
        if reduction not in (Reduction.SUM, Reduction.MEAN):
            raise ValueError(f"Unsupported reduction: {reduction}.")
        if not isinstance(opt, Optimizer):
            raise TypeError(f"CrossShardOptimizer wraps a tf.train.Optimizer, given: "
                            f"{opt!r}")
        if group_assignment is not None:
            raise NotImplementedError(
                "CrossShardOptimizer(group_assignment=...) is not supported: the SPMD "
                "step all-reduces over every replica.")
        super().__init__(False, name)
        self._opt = opt
        self._reduction = reduction
        self._group_assignment = group_assignment

    def compute_gradients(self, loss, var_list=None, **kwargs):
        num_shards = shard_context.number_of_shards()
        if num_shards is None:
            logger.warning("CrossShardOptimizer should be used within a tpu_shard_context, "
                           "but got unset number_of_shards. Assuming 1.")
            num_shards = 1
        grads_and_vars = self._opt.compute_gradients(loss, var_list=var_list, **kwargs)
        if self._reduction == Reduction.MEAN or num_shards == 1:
            return grads_and_vars
        from tensorflux._src.ops.math.math_ops import multiply
        return [(None if g is None else multiply(g, float(num_shards)), v)
                for g, v in grads_and_vars]

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        return self._opt.apply_gradients(grads_and_vars, global_step, name)

    def get_slot(self, *args, **kwargs):
        return self._opt.get_slot(*args, **kwargs)

    def get_slot_names(self, *args, **kwargs):
        return self._opt.get_slot_names(*args, **kwargs)

    def variables(self):
        return self._opt.variables()
