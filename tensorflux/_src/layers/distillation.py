"""Knowledge distillation (Hinton, Vinyals and Dean 2015, "Distilling the Knowledge in a
Neural Network"): a tensorflux extension in tf.losses' style (TF 1.15 had no
distillation loss).

Per example, with p_T = softmax(teacher_logits / T) and q_T = softmax(logits / T):

    loss = (1 - soft_weight) * CE(labels, softmax(logits))
           + soft_weight * T^2 * KL(p_T || q_T)

The soft term is the KL divergence, i.e. Hinton's cross-entropy with the soft targets
minus the targets' own entropy: the gradients are the paper's, and a student that matches
its teacher scores 0. The T^2 factor keeps the soft gradients' size independent of T (they
scale as 1/T^2), as the paper prescribes. No gradient flows into the teacher's logits.
Per-example losses are then weighted and reduced as every tf.losses loss.
"""

from __future__ import annotations

from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.layers.losses_impl import LOSSES, Reduction, compute_weighted_loss
from tensorflux._src.ops.array.array_ops import stop_gradient
from tensorflux._src.ops.math import math_ops, reduce_ops
from tensorflux._src.ops.nn import nn_ops

__all__ = ["distillation_loss", "soft_targets"]


def _check_temperature(temperature):
    if not isinstance(temperature, (int, float)) or not temperature > 0:
        raise ValueError(f"temperature must be a positive number. Received: "
                         f"temperature={temperature!r}")


def soft_targets(teacher_logits, temperature=1.0, name=None):
    """softmax(teacher_logits / T) over the last axis, with no gradient to the teacher."""
    _check_temperature(temperature)
    with _graph.name_scope(name, "soft_targets", [teacher_logits]):
        teacher_logits = stop_gradient(convert_to_tensor(teacher_logits, name="teacher_logits"))
        return nn_ops.softmax(teacher_logits / float(temperature))


def distillation_loss(labels, logits, teacher_logits, temperature=1.0, soft_weight=0.5,
                      weights=1.0, scope=None, loss_collection=LOSSES,
                      reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """The student's loss: hard-label cross-entropy and the T^2-scaled soft term (above).

    labels: int class ids (batch,), or None with soft_weight=1 (soft targets only).
    logits, teacher_logits: (batch, classes). temperature: T > 0. soft_weight: in [0, 1].
    `weights` and `reduction` as in tf.losses; the result joins `loss_collection`.
    """
    _check_temperature(temperature)
    if not 0.0 <= soft_weight <= 1.0:
        raise ValueError(f"soft_weight must be in [0, 1]. Received: soft_weight={soft_weight!r}")
    if labels is None and soft_weight != 1.0:
        raise ValueError(f"labels are required unless soft_weight=1 (soft targets only). "
                         f"Received: labels=None, soft_weight={soft_weight!r}")
    if logits is None or teacher_logits is None:
        raise ValueError("logits and teacher_logits must not be None. Received: "
                         f"logits={logits!r}, teacher_logits={teacher_logits!r}")
    with _graph.name_scope(scope, "distillation_loss",
                           (logits, teacher_logits, labels, weights)) as loss_scope:
        logits = convert_to_tensor(logits, name="logits")
        teacher_logits = convert_to_tensor(teacher_logits, name="teacher_logits")
        if not logits.shape.is_compatible_with(teacher_logits.shape):
            raise ValueError(f"logits and teacher_logits must have the same shape. Received: "
                             f"logits.shape={logits.shape}, "
                             f"teacher_logits.shape={teacher_logits.shape}")
        t = float(temperature)
        targets = soft_targets(teacher_logits, t)
        log_targets = nn_ops.log_softmax(stop_gradient(teacher_logits) / t)
        kl = reduce_ops.reduce_sum(
            targets * (log_targets - nn_ops.log_softmax(logits / t)), -1)
        losses = (soft_weight * t * t) * kl
        if soft_weight != 1.0:
            hard = nn_ops.sparse_softmax_cross_entropy_with_logits(
                labels=math_ops.cast(labels, "int64"), logits=logits)
            losses = losses + (1.0 - soft_weight) * hard
        return compute_weighted_loss(losses, weights, loss_scope, loss_collection,
                                     reduction=reduction)
