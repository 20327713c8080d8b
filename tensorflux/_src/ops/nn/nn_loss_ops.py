"""`tf.nn` losses built elementwise: logistic (sigmoid) cross-entropy, its weighted form,
the log-Poisson loss, and L2Loss. Softmax cross-entropies live in nn_ops.py."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.framework.tensor_shape import TensorShape
from tensorflux._src.ops.array.gather_ops import where as _where
from tensorflux._src.ops.array.generator_ops import ones_like, zeros_like
from tensorflux._src.ops.math import math_ops
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.registry import OpDef, register

__all__ = ["sigmoid_cross_entropy_with_logits", "weighted_cross_entropy_with_logits",
           "log_poisson_loss", "l2_loss"]


# -- logistic losses -------------------------------------------------------------------------
def _ensure_xent_args(name, sentinel, labels, logits):
    if sentinel is not None:
        raise ValueError(f"Only call `{name}` with named arguments (labels=..., logits=..., "
                         f"...)")
    if labels is None or logits is None:
        raise ValueError("Both labels and logits must be provided.")


def _same_shape_or_raise(labels, logits):
    if not labels.shape.is_compatible_with(logits.shape):
        raise ValueError(f"logits and labels must have the same shape ({logits.shape} vs "
                         f"{labels.shape})")


def sigmoid_cross_entropy_with_logits(_sentinel=None, labels=None, logits=None, name=None):
    """max(x, 0) - x * z + log(1 + exp(-|x|)) for logits x and labels z (elementwise)."""
    _ensure_xent_args("sigmoid_cross_entropy_with_logits", _sentinel, labels, logits)
    with _graph.name_scope(name, "logistic_loss", [logits, labels]) as scope:
        logits = convert_to_tensor(logits, name="logits")
        labels = convert_to_tensor(labels, name="labels")
        _same_shape_or_raise(labels, logits)
        # Selects rather than max/abs, so the gradient at 0 is defined (as TF builds it).
        zeros = zeros_like(logits)
        cond = logits >= zeros
        relu_logits = _where(cond, logits, zeros)
        neg_abs_logits = _where(cond, -logits, logits)
        return math_ops.add(relu_logits - logits * labels,
                            math_ops.log1p(math_ops.exp(neg_abs_logits)), name=scope)


def weighted_cross_entropy_with_logits(labels=None, logits=None, pos_weight=None, name=None,
                                       targets=None):
    """Sigmoid cross-entropy with the positive term weighted by `pos_weight`:
    (1 - z) * x + (1 + (q - 1) * z) * (log(1 + exp(-|x|)) + max(-x, 0))."""
    if targets is not None:
        if labels is not None:
            raise ValueError("Cannot specify both 'targets' and 'labels'")
        labels = targets
    with _graph.name_scope(name, "logistic_loss", [logits, labels]) as scope:
        logits = convert_to_tensor(logits, name="logits")
        labels = convert_to_tensor(labels, name="labels")
        _same_shape_or_raise(labels, logits)
        log_weight = 1 + (pos_weight - 1) * labels
        return math_ops.add(
            (1 - labels) * logits,
            log_weight * (math_ops.log1p(math_ops.exp(-math_ops.abs(logits)))
                          + apply_op("Relu", features=-logits)),
            name=scope)


def log_poisson_loss(targets, log_input, compute_full_loss=False, name=None):
    """exp(c) - z * c for c = log_input and targets z, plus Stirling's approximation of
    log(z!) (for z > 1) when compute_full_loss."""
    with _graph.name_scope(name, "log_poisson_loss", [log_input, targets]):
        log_input = convert_to_tensor(log_input, name="log_input")
        targets = convert_to_tensor(targets, name="targets")
        if not targets.shape.is_compatible_with(log_input.shape):
            raise ValueError(f"log_input and targets must have the same shape "
                             f"({log_input.shape} vs {targets.shape})")
        result = math_ops.exp(log_input) - log_input * targets
        if not compute_full_loss:
            return result
        point_five = convert_to_tensor(0.5, dtype=targets.dtype.base_dtype)
        two_pi = convert_to_tensor(2 * np.pi, dtype=targets.dtype.base_dtype)
        stirling = (targets * math_ops.log(targets)) - targets + (
            point_five * math_ops.log(two_pi * targets))
        zeros, ones = zeros_like(targets), ones_like(targets)
        cond = math_ops.logical_and(targets >= zeros, targets <= ones)
        return result + _where(cond, zeros, stirling)


# -- L2Loss ----------------------------------------------------------------------------------
register(OpDef(
    "L2Loss", inputs=("t: T",), outputs=("output: T",), attrs={"T": _dtypes.FLOATS},
    shape=lambda op: TensorShape([]),
    lower=lambda t: (jnp.sum(jnp.square(t.astype(jnp.float32) if t.dtype == jnp.float16
                                        else t)) / 2).astype(t.dtype),
    grad=lambda op, grad: [op.inputs[0] * grad],
))


def l2_loss(t, name=None):
    """sum(t ** 2) / 2, a scalar."""
    return apply_op("L2Loss", name=name, t=t)
