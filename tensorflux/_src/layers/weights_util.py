"""Weights and shape helpers shared by `tf.losses` and `tf.metrics` (TF1's
weights_broadcast_ops and remove_squeezable_dimensions).

Losses and metrics allow limited weight broadcasting: weights are a scalar, or have the
rank of the values with every dimension either 1 or equal to the values' dimension.
Shapes known when the graph is built are checked then; TF1's run-time assert for
unknown shapes is not built (there is no Assert op yet).
"""

from __future__ import annotations

from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.ops.array import array_ops, generator_ops
from tensorflux._src.ops.math import math_ops

_PREFIX = "weights can not be broadcast to values."


def assert_broadcastable(weights, values):
    """Raises TF1's ValueError when `weights` statically cannot broadcast to `values`."""
    weights_shape, values_shape = weights.shape, values.shape
    if weights_shape.ndims is None or values_shape.ndims is None or weights_shape.ndims == 0:
        return
    if weights_shape.ndims != values_shape.ndims:
        raise ValueError(f"{_PREFIX} values.rank={values_shape.ndims}. "
                         f"weights.rank={weights_shape.ndims}. values.shape={values_shape}. "
                         f"weights.shape={weights_shape}.")
    if weights_shape.is_fully_defined() and values_shape.is_fully_defined():
        w, v = weights_shape.as_list(), values_shape.as_list()
        for i, (wd, vd) in enumerate(zip(w, v)):
            if wd not in (1, vd):
                raise ValueError(f"{_PREFIX} Mismatch at dim {i}. values.shape={v} "
                                 f"weights.shape={w}.")


def broadcast_weights(weights, values):
    """`weights` broadcast to the shape of `values` (checked as above)."""
    with _graph.name_scope(None, "broadcast_weights", (weights, values)) as scope:
        values = convert_to_tensor(values, name="values")
        weights = convert_to_tensor(weights, dtype=values.dtype.base_dtype, name="weights")
        if (weights.shape.is_fully_defined() and values.shape.is_fully_defined()
                and weights.shape.is_compatible_with(values.shape)):
            return weights
        assert_broadcastable(weights, values)
        return math_ops.multiply(weights, generator_ops.ones_like(values), name=scope)


def remove_squeezable_dimensions(labels, predictions, expected_rank_diff=0, name=None):
    """Squeezes a trailing size-1 axis off labels or predictions when their ranks differ
    by one more (or less) than expected (static ranks only)."""
    with _graph.name_scope(name, "remove_squeezable_dimensions", [labels, predictions]):
        predictions = convert_to_tensor(predictions)
        labels = convert_to_tensor(labels)
        p_shape, l_shape = predictions.shape, labels.shape
        if p_shape.ndims is not None and l_shape.ndims is not None:
            rank_diff = p_shape.ndims - l_shape.ndims
            if rank_diff == expected_rank_diff + 1 and p_shape[-1].is_compatible_with(1):
                predictions = array_ops.squeeze(predictions, [-1])
            elif rank_diff == expected_rank_diff - 1 and l_shape[-1].is_compatible_with(1):
                labels = array_ops.squeeze(labels, [-1])
        return labels, predictions
