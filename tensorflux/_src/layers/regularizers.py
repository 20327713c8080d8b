"""Weight regularizers with `tf.contrib.layers` semantics.

A regularizer maps a weight tensor to a scalar loss (or None):
    l1: scale * sum(|w|)      l2: scale * sum(w ** 2) / 2  (tf.nn.l2_loss)
Their ops are named `l1_regularizer` / `l2_regularizer` in the current name scope, so a
layer's kernel loss is `dense/kernel/Regularizer/l2_regularizer:0`.
"""

from __future__ import annotations

import logging
import numbers

from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.graph_keys import GraphKeys
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.ops.math import math_ops, reduce_ops
from tensorflux._src.ops.constant import constant

__all__ = ["l1_regularizer", "l2_regularizer", "l1_l2_regularizer", "sum_regularizer",
           "apply_regularization"]


def _check_scale(scale, what="scale"):
    """TF's checks: no ints, no negatives; returns True when the scale disables it."""
    if isinstance(scale, numbers.Integral):
        raise ValueError(f"{what} cannot be an integer: {scale}")
    if isinstance(scale, numbers.Real):
        if scale < 0.0:
            raise ValueError(f"Setting a scale less than 0 on a regularizer: {scale:g}")
        if scale == 0.0:
            logging.info("Scale of 0 disables regularizer.")
            return True
    return False


def l1_regularizer(scale, scope=None):
    """Returns `w -> scale * sum(|w|)`."""
    if _check_scale(scale):
        return lambda _: None

    def l1(weights, name=None):
        with _graph.name_scope(scope, "l1_regularizer", [weights]) as name:
            my_scale = convert_to_tensor(scale, dtype=weights.dtype.base_dtype, name="scale")
            return math_ops.multiply(my_scale, reduce_ops.reduce_sum(math_ops.abs(weights)),
                                     name=name)
    return l1


def l2_regularizer(scale, scope=None):
    """Returns `w -> scale * sum(w ** 2) / 2`."""
    if _check_scale(scale):
        return lambda _: None

    def l2(weights):
        import tensorflux.nn as nn
        with _graph.name_scope(scope, "l2_regularizer", [weights]) as name:
            my_scale = convert_to_tensor(scale, dtype=weights.dtype.base_dtype, name="scale")
            return math_ops.multiply(my_scale, nn.l2_loss(weights), name=name)
    return l2


def l1_l2_regularizer(scale_l1=1.0, scale_l2=1.0, scope=None):
    """Returns `w -> l1(w) + l2(w)` (or just one of them when the other scale is 0)."""
    if isinstance(scale_l1, numbers.Integral):
        raise ValueError(f"scale_l1 cannot be an integer: {scale_l1}")
    if isinstance(scale_l2, numbers.Integral):
        raise ValueError(f"scale_l2 cannot be an integer: {scale_l2}")
    scope = scope or "l1_l2_regularizer"
    if scale_l1 == 0.0:
        return l2_regularizer(scale_l2, scope)
    if scale_l2 == 0.0:
        return l1_regularizer(scale_l1, scope)
    return sum_regularizer([l1_regularizer(scale_l1), l2_regularizer(scale_l2)], scope=scope)


def sum_regularizer(regularizer_list, scope=None):
    """Returns `w -> sum of the regularizers' losses` (None if none applies)."""
    regularizer_list = [reg for reg in regularizer_list if reg is not None]
    if not regularizer_list:
        return None

    def sum_reg(weights):
        with _graph.name_scope(scope, "sum_regularizer", [weights]) as name:
            tensors = [t for t in (reg(weights) for reg in regularizer_list) if t is not None]
            return math_ops.add_n(tensors, name=name) if tensors else None
    return sum_reg


def apply_regularization(regularizer, weights_list=None):
    """Sums `regularizer` over `weights_list` (default: the WEIGHTS collection) and adds
    the sum to REGULARIZATION_LOSSES."""
    if not weights_list:
        weights_list = _graph.get_collection(GraphKeys.WEIGHTS)
    if not weights_list:
        raise ValueError("No weights to regularize.")
    with _graph.name_scope("get_regularization_penalty", values=weights_list) as scope:
        penalties = [regularizer(w) for w in weights_list]
        penalties = [p if p is not None else constant(0.0) for p in penalties]
        for p in penalties:
            if p.shape.ndims != 0:
                raise ValueError(f"regularizer must return a scalar Tensor instead of a Tensor "
                                 f"with rank {p.shape.ndims}.")
        summed = math_ops.add_n(penalties, name=scope)
        _graph.add_to_collection(GraphKeys.REGULARIZATION_LOSSES, summed)
        return summed
