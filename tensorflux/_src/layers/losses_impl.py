"""`tf.losses`: TF1's loss functions, their weighting and reduction, and the LOSSES
collection helpers.

Every loss computes per-element losses, then `compute_weighted_loss` multiplies them by
`weights` (a scalar or a tensor broadcastable as in `weights_util`) and reduces them:

    NONE                      the weighted losses, unreduced
    SUM                       sum(w * l)
    MEAN                      sum(w * l) / sum(w broadcast to l)
    SUM_OVER_BATCH_SIZE       sum(w * l) / number of elements of l
    SUM_BY_NONZERO_WEIGHTS    sum(w * l) / number of elements whose weight is non-zero
    (= SUM_OVER_NONZERO_WEIGHTS, the default)

Divisions are div_no_nan (0 / 0 = 0). As in TF1 the reduction runs in float32 and the
result is cast back to the losses' dtype; the result is added to `loss_collection`.
"""

from __future__ import annotations

from tensorflux._src.ops.array.array_ops import stop_gradient
from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.graph_keys import GraphKeys
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.layers import weights_util
from tensorflux._src.ops.array import array_ops, gather_ops, generator_ops
from tensorflux._src.ops.math import math_ops, reduce_ops
from tensorflux._src.ops.constant import constant
from tensorflux._src.ops.op_helpers import deprecated_argument_lookup

__all__ = ["Reduction", "compute_weighted_loss", "absolute_difference", "cosine_distance",
           "hinge_loss", "huber_loss", "log_loss", "mean_pairwise_squared_error",
           "mean_squared_error", "sigmoid_cross_entropy", "softmax_cross_entropy",
           "sparse_softmax_cross_entropy", "add_loss", "get_losses", "get_regularization_loss",
           "get_regularization_losses", "get_total_loss"]

_F32 = _dtypes.float32
LOSSES = GraphKeys.LOSSES


class Reduction:
    """How a loss is reduced (the values are TF1's strings)."""

    NONE = "none"
    SUM = "weighted_sum"
    SUM_OVER_BATCH_SIZE = "weighted_sum_over_batch_size"
    MEAN = "weighted_mean"
    SUM_BY_NONZERO_WEIGHTS = "weighted_sum_by_nonzero_weights"
    SUM_OVER_NONZERO_WEIGHTS = SUM_BY_NONZERO_WEIGHTS

    @classmethod
    def all(cls):
        return (cls.NONE, cls.SUM, cls.MEAN, cls.SUM_OVER_BATCH_SIZE,
                cls.SUM_OVER_NONZERO_WEIGHTS, cls.SUM_BY_NONZERO_WEIGHTS)

    @classmethod
    def validate(cls, key):
        if key not in cls.all():
            raise ValueError(f"Invalid Reduction Key {key}.")


# -- collection helpers ----------------------------------------------------------------------
def add_loss(loss, loss_collection=LOSSES):
    """Adds `loss` to `loss_collection` (nothing when the collection is None or empty)."""
    if loss_collection:
        _graph.add_to_collection(loss_collection, loss)


def get_losses(scope=None, loss_collection=LOSSES):
    return _graph.get_collection(loss_collection, scope)


def get_regularization_losses(scope=None):
    return _graph.get_collection(GraphKeys.REGULARIZATION_LOSSES, scope)


def get_regularization_loss(scope=None, name="total_regularization_loss"):
    """The sum of the regularization losses, or a constant 0.0 when there are none."""
    losses = get_regularization_losses(scope)
    if losses:
        return math_ops.add_n(losses, name=name)
    return constant(0.0)


def get_total_loss(add_regularization_losses=True, name="total_loss", scope=None):
    """The sum of the LOSSES collection (plus the regularization losses by default)."""
    losses = get_losses(scope=scope)
    if add_regularization_losses:
        losses += get_regularization_losses(scope=scope)
    return math_ops.add_n(losses, name=name)


# -- weighting and reduction -------------------------------------------------------------------
def _safe_mean(total_loss, num_present):
    return math_ops.div_no_nan(total_loss, num_present, name="value")


def _num_elements(losses):
    with _graph.name_scope(None, "num_elements", values=[losses]) as scope:
        return math_ops.cast(array_ops.size(losses, name=scope), dtype=losses.dtype)


def _num_present(losses, weights, per_batch=False):
    """How many elements of `losses` have a non-zero weight (per batch row if asked)."""
    if isinstance(weights, float) and weights != 0.0:
        return _num_elements(losses)
    with _graph.name_scope(None, "num_present", (losses, weights)) as scope:
        weights = math_ops.cast(weights, dtype=_F32)
        present = gather_ops.where(math_ops.equal(weights, 0.0),
                                   generator_ops.zeros_like(weights),
                                   generator_ops.ones_like(weights))
        present = weights_util.broadcast_weights(present, losses)
        if per_batch:
            axes = list(range(1, present.shape.ndims))
            return reduce_ops.reduce_sum(present, axis=axes, keepdims=True, name=scope)
        return reduce_ops.reduce_sum(present, name=scope)


def compute_weighted_loss(losses, weights=1.0, scope=None, loss_collection=LOSSES,
                          reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """Weights `losses` and reduces them by `reduction` (see the module doc)."""
    Reduction.validate(reduction)
    with _graph.name_scope(scope, "weighted_loss", (losses, weights)):
        losses = convert_to_tensor(losses)
        input_dtype = losses.dtype.base_dtype
        weights_t = convert_to_tensor(weights)
        weights_util.assert_broadcastable(weights_t, losses)
        losses = math_ops.cast(losses, dtype=_F32)
        weights_t = math_ops.cast(weights_t, dtype=_F32)
        weighted_losses = math_ops.multiply(losses, weights_t)
        if reduction == Reduction.NONE:
            loss = weighted_losses
        else:
            loss = reduce_ops.reduce_sum(weighted_losses)
            if reduction == Reduction.MEAN:
                loss = _safe_mean(loss, reduce_ops.reduce_sum(
                    generator_ops.ones_like(losses) * weights_t))
            elif reduction == Reduction.SUM_BY_NONZERO_WEIGHTS:
                loss = _safe_mean(loss, _num_present(
                    losses, weights if isinstance(weights, float) else weights_t))
            elif reduction == Reduction.SUM_OVER_BATCH_SIZE:
                loss = _safe_mean(loss, _num_elements(losses))
        loss = math_ops.cast(loss, input_dtype)
        add_loss(loss, loss_collection)
        return loss


def _check_not_none(**kwargs):
    for name, value in kwargs.items():
        if value is None:
            raise ValueError(f"{name} must not be None.")


def _as_float32_pair(labels, predictions):
    predictions = math_ops.cast(predictions, dtype=_F32)
    labels = math_ops.cast(labels, dtype=_F32)
    predictions.shape.assert_is_compatible_with(labels.shape)
    return labels, predictions


# -- regression losses --------------------------------------------------------------------------
def absolute_difference(labels, predictions, weights=1.0, scope=None, loss_collection=LOSSES,
                        reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """|predictions - labels|, weighted and reduced."""
    _check_not_none(labels=labels, predictions=predictions)
    with _graph.name_scope(scope, "absolute_difference",
                           (predictions, labels, weights)) as scope:
        labels, predictions = _as_float32_pair(labels, predictions)
        losses = math_ops.abs(math_ops.subtract(predictions, labels))
        return compute_weighted_loss(losses, weights, scope, loss_collection,
                                     reduction=reduction)


def mean_squared_error(labels, predictions, weights=1.0, scope=None, loss_collection=LOSSES,
                       reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """(predictions - labels) ** 2, weighted and reduced."""
    _check_not_none(labels=labels, predictions=predictions)
    with _graph.name_scope(scope, "mean_squared_error",
                           (predictions, labels, weights)) as scope:
        labels, predictions = _as_float32_pair(labels, predictions)
        losses = math_ops.squared_difference(predictions, labels)
        return compute_weighted_loss(losses, weights, scope, loss_collection,
                                     reduction=reduction)


def huber_loss(labels, predictions, weights=1.0, delta=1.0, scope=None,
               loss_collection=LOSSES, reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """0.5 * e ** 2 for |e| <= delta, else delta * (|e| - 0.5 * delta); e = pred - labels."""
    _check_not_none(labels=labels, predictions=predictions)
    with _graph.name_scope(scope, "huber_loss", (predictions, labels, weights)) as scope:
        labels, predictions = _as_float32_pair(labels, predictions)
        abs_error = math_ops.abs(math_ops.subtract(predictions, labels))
        quadratic = math_ops.minimum(abs_error, delta)
        # Written as 0.5 q^2 + delta * (|e| - q): the same value, and a gradient that
        # stays finite at |e| = delta.
        linear = math_ops.subtract(abs_error, quadratic)
        losses = math_ops.add(
            math_ops.multiply(convert_to_tensor(0.5, dtype=quadratic.dtype),
                              math_ops.multiply(quadratic, quadratic)),
            math_ops.multiply(delta, linear))
        return compute_weighted_loss(losses, weights, scope, loss_collection,
                                     reduction=reduction)


def cosine_distance(labels, predictions, axis=None, weights=1.0, scope=None,
                    loss_collection=LOSSES, reduction=Reduction.SUM_BY_NONZERO_WEIGHTS,
                    dim=None):
    """1 - sum(labels * predictions, axis): inputs are expected to be unit-normalized."""
    axis = deprecated_argument_lookup("axis", axis, "dim", dim)
    if axis is None:
        raise ValueError("You must specify 'axis'.")
    _check_not_none(labels=labels, predictions=predictions)
    with _graph.name_scope(scope, "cosine_distance_loss",
                           (predictions, labels, weights)) as scope:
        labels, predictions = _as_float32_pair(labels, predictions)
        radial_diffs = math_ops.multiply(predictions, labels)
        losses = 1 - reduce_ops.reduce_sum(radial_diffs, axis=(axis,), keepdims=True)
        return compute_weighted_loss(losses, weights, scope, loss_collection,
                                     reduction=reduction)


def mean_pairwise_squared_error(labels, predictions, weights=1.0, scope=None,
                                loss_collection=LOSSES):
    """Mean over pairs (i, j) within each batch row of ((p_i - p_j) - (l_i - l_j)) ** 2.

    Per row with n present elements and d = predictions - labels:
        2 * sum(d^2) / (n - 1) - 2 * sum(d)^2 / (n * (n - 1)),
    times the row's weight, summed over rows. `weights` is a scalar or has the rank of
    `labels` (e.g. [batch, 1]). No `reduction` argument, as in TF1."""
    _check_not_none(labels=labels, predictions=predictions)
    with _graph.name_scope(scope, "mean_pairwise_squared_error",
                           (predictions, labels, weights)):
        weights = math_ops.cast(weights, dtype=_F32)
        labels, predictions = _as_float32_pair(labels, predictions)
        weights_util.assert_broadcastable(weights, labels)
        diffs = math_ops.subtract(predictions, labels)
        axes = list(range(1, diffs.shape.ndims))
        sum_squares_per_batch = reduce_ops.reduce_sum(math_ops.square(diffs), axis=axes,
                                                      keepdims=True)
        num_present_per_batch = _num_present(diffs, weights, per_batch=True)
        term1 = 2.0 * math_ops.div_no_nan(
            sum_squares_per_batch, math_ops.maximum(num_present_per_batch - 1, 0),
            name="value")
        sum_diff = reduce_ops.reduce_sum(diffs, axis=axes, keepdims=True)
        term2 = 2.0 * math_ops.div_no_nan(
            math_ops.square(sum_diff),
            math_ops.maximum(math_ops.multiply(num_present_per_batch,
                                               num_present_per_batch - 1), 0),
            name="value")
        # term1 - term2: (batch, 1, ...), one loss per row.
        loss = reduce_ops.reduce_sum(math_ops.multiply(term1 - term2, weights))
        mean_loss = gather_ops.where(
            reduce_ops.reduce_sum(num_present_per_batch) > 0, loss,
            generator_ops.zeros_like(loss), name="value")
        add_loss(mean_loss, loss_collection)
        return mean_loss


# -- classification losses ---------------------------------------------------------------------
def hinge_loss(labels, logits, weights=1.0, scope=None, loss_collection=LOSSES,
               reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """max(0, 1 - y * logits) with labels in {0, 1} mapped to y in {-1, 1}."""
    _check_not_none(labels=labels, logits=logits)
    with _graph.name_scope(scope, "hinge_loss", (logits, labels, weights)) as scope:
        labels, logits = _as_float32_pair(labels, logits)
        all_ones = generator_ops.ones_like(labels)
        labels = math_ops.subtract(2 * labels, all_ones)
        import tensorflux.nn as nn
        losses = nn.relu(math_ops.subtract(all_ones, math_ops.multiply(labels, logits)))
        return compute_weighted_loss(losses, weights, scope, loss_collection,
                                     reduction=reduction)


def log_loss(labels, predictions, weights=1.0, epsilon=1e-7, scope=None,
             loss_collection=LOSSES, reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """-l * log(p + eps) - (1 - l) * log(1 - p + eps) for probabilities p."""
    _check_not_none(labels=labels, predictions=predictions)
    with _graph.name_scope(scope, "log_loss", (predictions, labels, weights)) as scope:
        labels, predictions = _as_float32_pair(labels, predictions)
        losses = -math_ops.multiply(labels, math_ops.log(predictions + epsilon)) \
            - math_ops.multiply(1 - labels, math_ops.log(1 - predictions + epsilon))
        return compute_weighted_loss(losses, weights, scope, loss_collection,
                                     reduction=reduction)


def sigmoid_cross_entropy(multi_class_labels, logits, weights=1.0, label_smoothing=0,
                          scope=None, loss_collection=LOSSES,
                          reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """Element-wise sigmoid cross-entropy; label_smoothing moves labels towards 1/2."""
    _check_not_none(multi_class_labels=multi_class_labels, logits=logits)
    import tensorflux.nn as nn
    with _graph.name_scope(scope, "sigmoid_cross_entropy_loss",
                           (logits, multi_class_labels, weights)) as scope:
        logits = convert_to_tensor(logits)
        multi_class_labels = math_ops.cast(multi_class_labels, logits.dtype.base_dtype)
        logits.shape.assert_is_compatible_with(multi_class_labels.shape)
        if label_smoothing > 0:
            multi_class_labels = (multi_class_labels * (1 - label_smoothing)
                                  + 0.5 * label_smoothing)
        losses = nn.sigmoid_cross_entropy_with_logits(labels=multi_class_labels,
                                                      logits=logits, name="xentropy")
        return compute_weighted_loss(losses, weights, scope, loss_collection,
                                     reduction=reduction)


def softmax_cross_entropy(onehot_labels, logits, weights=1.0, label_smoothing=0, scope=None,
                          loss_collection=LOSSES, reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """Softmax cross-entropy per example ([batch, classes] -> [batch]); label_smoothing
    gives labels * (1 - s) + s / classes. No gradient flows into the labels."""
    _check_not_none(onehot_labels=onehot_labels, logits=logits)
    import tensorflux.nn as nn
    with _graph.name_scope(scope, "softmax_cross_entropy_loss",
                           (logits, onehot_labels, weights)) as scope:
        logits = convert_to_tensor(logits)
        onehot_labels = math_ops.cast(onehot_labels, logits.dtype.base_dtype)
        logits.shape.assert_is_compatible_with(onehot_labels.shape)
        if label_smoothing > 0:
            num_classes = math_ops.cast(array_ops.shape(onehot_labels)[-1],
                                        logits.dtype.base_dtype)
            smooth_positives = 1.0 - label_smoothing
            smooth_negatives = label_smoothing / num_classes
            onehot_labels = onehot_labels * smooth_positives + smooth_negatives
        onehot_labels = stop_gradient(onehot_labels, name="labels_stop_gradient")
        losses = nn.softmax_cross_entropy_with_logits_v2(labels=onehot_labels, logits=logits,
                                                         name="xentropy")
        return compute_weighted_loss(losses, weights, scope, loss_collection,
                                     reduction=reduction)


def _remove_squeezable_dimensions(labels, predictions, weights=None, expected_rank_diff=0):
    labels, predictions = weights_util.remove_squeezable_dimensions(
        labels, predictions, expected_rank_diff=expected_rank_diff)
    if weights is not None:
        weights = convert_to_tensor(weights)
        labels_rank, weights_rank = labels.shape.ndims, weights.shape.ndims
        if labels_rank is not None and weights_rank is not None \
                and weights_rank - labels_rank == 1:
            weights = array_ops.squeeze(weights, [-1])
    return labels, predictions, weights


def sparse_softmax_cross_entropy(labels, logits, weights=1.0, scope=None,
                                 loss_collection=LOSSES,
                                 reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """Softmax cross-entropy of integer class ids ([batch] or [batch, 1]) and logits."""
    _check_not_none(labels=labels, logits=logits)
    import tensorflux.nn as nn
    with _graph.name_scope(scope, "sparse_softmax_cross_entropy_loss",
                           (logits, labels, weights)) as scope:
        # rank(logits) - rank(labels) == 1; a trailing size-1 labels axis is squeezed.
        labels, logits, weights = _remove_squeezable_dimensions(labels, logits, weights,
                                                                expected_rank_diff=1)
        losses = nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits,
                                                             name="xentropy")
        return compute_weighted_loss(losses, weights, scope, loss_collection,
                                     reduction=reduction)
