"""`tf.metrics`: streaming metrics as (value, update_op) pairs.

Each metric keeps running sums in local variables (collections LOCAL_VARIABLES and
METRIC_VARIABLES, named after the metric's scope: `accuracy/total:0`,
`accuracy/count:0`). Initialize them with `tf.local_variables_initializer()`, run
`update_op` once per batch, then read `value`. The update op's result is the metric
after that batch (for `mean_iou`, the updated confusion matrix, as in TF1).
"""

from __future__ import annotations

import logging

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.graph_keys import GraphKeys
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.layers import weights_util
from tensorflux._src.ops.array import array_ops, gather_ops, generator_ops
from tensorflux._src.ops.math import math_ops, reduce_ops
from tensorflux._src.ops.state import state_ops
from tensorflux._src.ops.constant import constant
from tensorflux._src.train.variable_scope import variable_scope
from tensorflux._src.train.variables import Variable

__all__ = ["metric_variable", "mean", "mean_tensor", "mean_relative_error",
           "mean_cosine_distance", "percentage_below", "mean_per_class_accuracy",
           "accuracy", "mean_absolute_error", "mean_squared_error",
           "root_mean_squared_error", "true_positives", "false_positives", "true_negatives",
           "false_negatives", "precision", "recall", "auc", "true_positives_at_thresholds",
           "false_positives_at_thresholds", "true_negatives_at_thresholds",
           "false_negatives_at_thresholds", "precision_at_thresholds",
           "recall_at_thresholds"]

_F32 = _dtypes.float32


def metric_variable(shape, dtype, validate_shape=True, name=None):
    """A zero-initialized, non-trainable local variable in METRIC_VARIABLES."""
    return Variable(lambda: generator_ops.zeros(shape, dtype), trainable=False,
                    collections=[GraphKeys.LOCAL_VARIABLES, GraphKeys.METRIC_VARIABLES],
                    validate_shape=validate_shape, name=name)


def _aggregate(metrics_collections, fn, *args):
    """The metric's value from its variables, added to `metrics_collections`."""
    value = fn(None, *args)
    if metrics_collections:
        _graph.add_to_collections(metrics_collections, value)
    return value


def _add_update(updates_collections, update_op):
    if updates_collections:
        _graph.add_to_collections(updates_collections, update_op)


def _remove_squeezable_dimensions(predictions, labels, weights):
    """Squeezes a size-1 last axis so predictions/labels/weights line up (static ranks)."""
    predictions = convert_to_tensor(predictions)
    if labels is not None:
        labels, predictions = weights_util.remove_squeezable_dimensions(labels, predictions)
        predictions.shape.assert_is_compatible_with(labels.shape)
    if weights is None:
        return predictions, labels, None
    weights = convert_to_tensor(weights)
    weights_rank, predictions_rank = weights.shape.ndims, predictions.shape.ndims
    if weights_rank == 0 or weights_rank is None or predictions_rank is None:
        return predictions, labels, weights
    if weights_rank - predictions_rank == 1:
        weights = array_ops.squeeze(weights, [-1])
    elif predictions_rank - weights_rank == 1:
        weights = array_ops.expand_dims(weights, -1)
    return predictions, labels, weights


# -- means ------------------------------------------------------------------------------------
def _streaming_mean(total, count, added, values, num_values, metrics_collections,
                    updates_collections):
    """(total / count, update_op) after adding `added` to total and num_values to count."""
    update_total_op = state_ops.assign_add(total, added)
    with _graph.control_dependencies([values]):
        update_count_op = state_ops.assign_add(count, num_values)

    def compute_mean(_, t, c):
        return math_ops.div_no_nan(t, math_ops.maximum(c, 0.0), name="value")

    mean_t = _aggregate(metrics_collections, compute_mean, total, count)
    update_op = math_ops.div_no_nan(update_total_op, math_ops.maximum(update_count_op, 0.0),
                                    name="update_op")
    _add_update(updates_collections, update_op)
    return mean_t, update_op


def mean(values, weights=None, metrics_collections=None, updates_collections=None,
         name=None):
    """The (weighted) mean of all values seen: total / count."""
    with variable_scope(name, "mean", (values, weights)):
        values = math_ops.cast(values, _F32)
        total = metric_variable([], _F32, name="total")
        count = metric_variable([], _F32, name="count")
        if weights is None:
            num_values = math_ops.cast(array_ops.size(values), _F32)
        else:
            values, _, weights = _remove_squeezable_dimensions(values, None, weights)
            weights = weights_util.broadcast_weights(math_ops.cast(weights, _F32), values)
            values = math_ops.multiply(values, weights)
            num_values = reduce_ops.reduce_sum(weights)
        return _streaming_mean(total, count, reduce_ops.reduce_sum(values), values, num_values,
                               metrics_collections, updates_collections)


def accuracy(labels, predictions, weights=None, metrics_collections=None,
             updates_collections=None, name=None):
    """How often predictions equal labels (the mean of `predictions == labels`)."""
    predictions, labels, weights = _remove_squeezable_dimensions(predictions, labels, weights)
    predictions.shape.assert_is_compatible_with(labels.shape)
    if labels.dtype.base_dtype != predictions.dtype.base_dtype:
        predictions = math_ops.cast(predictions, labels.dtype.base_dtype)
    is_correct = math_ops.cast(math_ops.equal(predictions, labels), _F32)
    return mean(is_correct, weights, metrics_collections, updates_collections,
                name or "accuracy")


def mean_absolute_error(labels, predictions, weights=None, metrics_collections=None,
                        updates_collections=None, name=None):
    predictions, labels, weights = _remove_squeezable_dimensions(predictions, labels, weights)
    absolute_errors = math_ops.abs(predictions - labels)
    return mean(absolute_errors, weights, metrics_collections, updates_collections,
                name or "mean_absolute_error")


def mean_squared_error(labels, predictions, weights=None, metrics_collections=None,
                       updates_collections=None, name=None):
    predictions, labels, weights = _remove_squeezable_dimensions(predictions, labels, weights)
    squared_error = math_ops.squared_difference(labels, predictions)
    return mean(squared_error, weights, metrics_collections, updates_collections,
                name or "mean_squared_error")


def root_mean_squared_error(labels, predictions, weights=None, metrics_collections=None,
                            updates_collections=None, name=None):
    """sqrt of the streaming mean squared error (its variables: `<name>/total`, `count`)."""
    predictions, labels, weights = _remove_squeezable_dimensions(predictions, labels, weights)
    mse, update_mse_op = mean_squared_error(labels, predictions, weights, None, None,
                                            name or "root_mean_squared_error")
    rmse = _aggregate(metrics_collections, lambda _, m: math_ops.sqrt(m), mse)
    update_rmse_op = math_ops.sqrt(update_mse_op)
    _add_update(updates_collections, update_rmse_op)
    return rmse, update_rmse_op


def mean_tensor(values, weights=None, metrics_collections=None, updates_collections=None,
                name=None):
    """Element-wise streaming mean: variables `total_tensor` and `count_tensor` have the
    shape of `values`."""
    with variable_scope(name, "mean", (values, weights)):
        values = math_ops.cast(values, _F32)
        total = metric_variable(values.shape, _F32, name="total_tensor")
        count = metric_variable(values.shape, _F32, name="count_tensor")
        num_values = generator_ops.ones_like(values)
        if weights is not None:
            values, _, weights = _remove_squeezable_dimensions(values, None, weights)
            weights = weights_util.broadcast_weights(math_ops.cast(weights, _F32), values)
            values = math_ops.multiply(values, weights)
            num_values = math_ops.multiply(num_values, weights)
        return _streaming_mean(total, count, values, values, num_values, metrics_collections,
                               updates_collections)


def mean_relative_error(labels, predictions, normalizer, weights=None,
                        metrics_collections=None, updates_collections=None, name=None):
    """Mean of |labels - predictions| / normalizer (0 where the normalizer is 0)."""
    predictions, labels, weights = _remove_squeezable_dimensions(predictions, labels, weights)
    normalizer, predictions = weights_util.remove_squeezable_dimensions(normalizer,
                                                                        predictions)
    predictions.shape.assert_is_compatible_with(normalizer.shape)
    relative_errors = gather_ops.where(
        math_ops.equal(normalizer, 0.0), generator_ops.zeros_like(labels),
        math_ops.div(math_ops.abs(labels - predictions), normalizer))
    return mean(relative_errors, weights, metrics_collections, updates_collections,
                name or "mean_relative_error")


def mean_cosine_distance(labels, predictions, dim, weights=None, metrics_collections=None,
                         updates_collections=None, name=None):
    """1 - the streaming mean of sum(labels * predictions, dim) (unit-normalized inputs)."""
    predictions, labels, weights = _remove_squeezable_dimensions(predictions, labels, weights)
    radial_diffs = reduce_ops.reduce_sum(math_ops.multiply(predictions, labels), axis=[dim],
                                         keepdims=True)
    mean_distance, update_op = mean(radial_diffs, weights, None, None,
                                    name or "mean_cosine_distance")
    mean_distance = math_ops.subtract(1.0, mean_distance)
    update_op = math_ops.subtract(1.0, update_op)
    if metrics_collections:
        _graph.add_to_collections(metrics_collections, mean_distance)
    _add_update(updates_collections, update_op)
    return mean_distance, update_op


def percentage_below(values, threshold, weights=None, metrics_collections=None,
                     updates_collections=None, name=None):
    """The (weighted) fraction of values below `threshold`."""
    is_below = math_ops.cast(math_ops.less(values, threshold), _F32)
    return mean(is_below, weights, metrics_collections, updates_collections,
                name or "percentage_below_threshold")


def mean_per_class_accuracy(labels, predictions, num_classes, weights=None,
                            metrics_collections=None, updates_collections=None, name=None):
    """Mean over classes of (correct predictions of the class) / (examples of the class).

    As in TF1, `<scope>/total` counts each class's examples and `<scope>/count` its
    correct predictions; the update op returns the per-class accuracies."""
    with variable_scope(name, "mean_accuracy", (predictions, labels, weights)):
        labels = math_ops.cast(labels, _dtypes.int64)
        predictions = convert_to_tensor(predictions)
        if labels.shape.ndims > 1:
            labels = array_ops.reshape(labels, [-1])
        if predictions.shape.ndims > 1:
            predictions = array_ops.reshape(predictions, [-1])
        predictions.shape.assert_is_compatible_with(labels.shape)
        total = metric_variable([num_classes], _F32, name="total")
        count = metric_variable([num_classes], _F32, name="count")
        ones = generator_ops.ones_like(labels, dtype=_F32)
        if labels.dtype.base_dtype != predictions.dtype.base_dtype:
            predictions = math_ops.cast(predictions, labels.dtype.base_dtype)
        is_correct = math_ops.cast(math_ops.equal(predictions, labels), _F32)
        if weights is not None:
            weights = convert_to_tensor(weights)
            if weights.shape.ndims > 1:
                weights = array_ops.reshape(weights, [-1])
            weights = math_ops.cast(weights, _F32)
            is_correct *= weights
            ones *= weights
        update_total_op = state_ops.scatter_add(total, labels, ones)
        update_count_op = state_ops.scatter_add(count, labels, is_correct)

        def compute(_, c, t):
            per_class = math_ops.div_no_nan(c, math_ops.maximum(t, 0.0))
            return reduce_ops.reduce_mean(per_class, name="mean_accuracy")

        value = _aggregate(metrics_collections, compute, count, total)
        update_op = math_ops.div_no_nan(update_count_op, math_ops.maximum(update_total_op, 0.0),
                                        name="update_op")
        _add_update(updates_collections, update_op)
        return value, update_op


# -- counts of a condition ----------------------------------------------------------------------
def _count_condition(values, weights=None, metrics_collections=None, updates_collections=None):
    """Streaming (weighted) count of True values in `<scope>/count`."""
    count = metric_variable([], _F32, name="count")
    values = math_ops.cast(values, _F32)
    if weights is not None:
        weights = convert_to_tensor(weights)
        wr, vr = weights.shape.ndims, values.shape.ndims
        if wr is not None and vr is not None and wr not in (0, vr):
            raise ValueError(f"Tensor {weights.name} must have rank in (0, {vr}). Received "
                             f"rank {wr}, shape {weights.shape}")
        values = math_ops.multiply(values, math_ops.cast(weights, _F32))
    value_tensor = _aggregate(metrics_collections, lambda _, v: array_ops.identity(v), count)
    update_op = state_ops.assign_add(count, reduce_ops.reduce_sum(values))
    _add_update(updates_collections, update_op)
    return value_tensor, update_op


def _bool_inputs(labels, predictions, weights):
    return _remove_squeezable_dimensions(math_ops.cast(predictions, _dtypes.bool),
                                         math_ops.cast(labels, _dtypes.bool), weights)


def _condition_metric(default_name, label_value, prediction_value):
    def metric(labels, predictions, weights=None, metrics_collections=None,
               updates_collections=None, name=None):
        with variable_scope(name, default_name, (predictions, labels, weights)):
            predictions, labels, weights = _bool_inputs(labels, predictions, weights)
            is_condition = math_ops.logical_and(math_ops.equal(labels, label_value),
                                                math_ops.equal(predictions, prediction_value))
            return _count_condition(is_condition, weights, metrics_collections,
                                    updates_collections)
    metric.__name__ = default_name
    metric.__doc__ = (f"Streaming weighted count of {default_name.replace('_', ' ')} "
                      f"(labels and predictions are cast to bool).")
    return metric


true_positives = _condition_metric("true_positives", True, True)
false_positives = _condition_metric("false_positives", False, True)
true_negatives = _condition_metric("true_negatives", False, False)
false_negatives = _condition_metric("false_negatives", True, False)


def _ratio_metric(default_name, other_count):
    """precision = tp / (tp + fp), recall = tp / (tp + fn); 0 when the sum is 0."""
    def metric(labels, predictions, weights=None, metrics_collections=None,
               updates_collections=None, name=None):
        with variable_scope(name, default_name, (predictions, labels, weights)):
            predictions, labels, weights = _bool_inputs(labels, predictions, weights)
            tp, tp_update = true_positives(labels, predictions, weights)
            other, other_update = other_count(labels, predictions, weights)

            def compute(t, o, op_name):
                return gather_ops.where(math_ops.greater(t + o, 0), math_ops.div(t, t + o),
                                        constant(0.0), name=op_name)

            value = _aggregate(metrics_collections, lambda _, t, o: compute(t, o, "value"),
                               tp, other)
            update_op = compute(tp_update, other_update, "update_op")
            _add_update(updates_collections, update_op)
            return value, update_op
    metric.__name__ = default_name
    return metric


precision = _ratio_metric("precision", false_positives)
recall = _ratio_metric("recall", false_negatives)


# -- metrics over thresholds ---------------------------------------------------------------------
def _confusion_matrix_at_thresholds(labels, predictions, thresholds, weights=None,
                                    includes=("tp", "fn", "tn", "fp")):
    """Streaming tp/fn/tn/fp counts, one per threshold: an example is predicted positive
    at threshold t when prediction > t. Variables `true_positives`, `false_negatives`,
    `true_negatives`, `false_positives` (shape [num_thresholds]), created in that order."""
    predictions, labels, weights = _remove_squeezable_dimensions(
        math_ops.cast(predictions, _F32), math_ops.cast(labels, _dtypes.bool), weights)
    num_thresholds = len(thresholds)
    predictions_2d = array_ops.reshape(predictions, [1, -1])          # (1, N)
    labels_2d = array_ops.reshape(labels, [1, -1])                    # (1, N)
    thresh = array_ops.reshape(constant(thresholds, dtype=_F32), [-1, 1])  # (T, 1)
    pred_is_pos = math_ops.greater(predictions_2d, thresh)           # (T, N)
    pred_is_neg = math_ops.logical_not(pred_is_pos)
    label_is_pos = labels_2d                                          # broadcasts
    label_is_neg = math_ops.logical_not(labels_2d)
    weights_2d = None
    if weights is not None:
        weights = weights_util.broadcast_weights(math_ops.cast(weights, _F32), predictions)
        weights_2d = array_ops.reshape(weights, [1, -1])

    conditions = {"tp": ("true_positives", label_is_pos, pred_is_pos),
                  "fn": ("false_negatives", label_is_pos, pred_is_neg),
                  "tn": ("true_negatives", label_is_neg, pred_is_neg),
                  "fp": ("false_positives", label_is_neg, pred_is_pos)}
    values, update_ops = {}, {}
    for key in ("tp", "fn", "tn", "fp"):
        if key not in includes:
            continue
        var_name, label_cond, pred_cond = conditions[key]
        var = metric_variable([num_thresholds], _F32, name=var_name)
        hits = math_ops.cast(math_ops.logical_and(label_cond, pred_cond), _F32)
        if weights_2d is not None:
            hits = hits * weights_2d
        update_ops[key] = state_ops.assign_add(var, reduce_ops.reduce_sum(hits, 1))
        values[key] = var
    return values, update_ops


def _at_thresholds_count(key, default_name):
    def metric(labels, predictions, thresholds, weights=None, metrics_collections=None,
               updates_collections=None, name=None):
        with variable_scope(name, default_name, (predictions, labels, weights)):
            values, update_ops = _confusion_matrix_at_thresholds(
                labels, predictions, thresholds, weights=weights, includes=(key,))
            value = _aggregate(metrics_collections, lambda _, v: array_ops.identity(v),
                               values[key])
            _add_update(updates_collections, update_ops[key])
            return value, update_ops[key]
    metric.__name__ = default_name + "_at_thresholds"
    return metric


true_positives_at_thresholds = _at_thresholds_count("tp", "true_positives")
false_positives_at_thresholds = _at_thresholds_count("fp", "false_positives")
true_negatives_at_thresholds = _at_thresholds_count("tn", "true_negatives")
false_negatives_at_thresholds = _at_thresholds_count("fn", "false_negatives")


def _ratio_at_thresholds(default_name, other, prefix):
    def metric(labels, predictions, thresholds, weights=None, metrics_collections=None,
               updates_collections=None, name=None):
        with variable_scope(name, default_name, (predictions, labels, weights)):
            values, update_ops = _confusion_matrix_at_thresholds(
                labels, predictions, thresholds, weights, includes=("tp", other))
            epsilon = 1e-7  # avoids 0 / 0

            def compute(tp, o, suffix):
                return math_ops.div(tp, epsilon + tp + o, name=prefix + suffix)

            value = _aggregate(metrics_collections,
                               lambda _, v: compute(v["tp"], v[other], "value"), values)
            update_op = compute(update_ops["tp"], update_ops[other], "update_op")
            _add_update(updates_collections, update_op)
            return value, update_op
    metric.__name__ = default_name
    return metric


precision_at_thresholds = _ratio_at_thresholds("precision_at_thresholds", "fp", "precision_")
recall_at_thresholds = _ratio_at_thresholds("recall_at_thresholds", "fn", "recall_")


def auc(labels, predictions, weights=None, num_thresholds=200, metrics_collections=None,
        updates_collections=None, curve="ROC", name=None, summation_method="trapezoidal",
        thresholds=None):
    """Area under the ROC or PR curve, from confusion counts at `num_thresholds`
    thresholds: -1e-7, i / (num_thresholds - 1) for i in 1..num_thresholds-2, 1 + 1e-7
    (or the sorted `thresholds` given, with the same two end points)."""
    with variable_scope(name, "auc", (labels, predictions, weights)):
        if curve not in ("ROC", "PR"):
            raise ValueError(f"curve must be either ROC or PR, {curve} unknown")
        kepsilon = 1e-7  # end points just outside [0, 1]
        if thresholds is not None:
            thresholds = sorted(thresholds)
            num_thresholds = len(thresholds) + 2
        else:
            thresholds = [(i + 1) * 1.0 / (num_thresholds - 1)
                          for i in range(num_thresholds - 2)]
        thresholds = [0.0 - kepsilon] + list(thresholds) + [1.0 + kepsilon]
        values, update_ops = _confusion_matrix_at_thresholds(labels, predictions, thresholds,
                                                             weights)
        epsilon = 1.0e-6  # keeps the rates finite with no positives or no negatives
        n = num_thresholds

        def interpolate_pr_auc(tp, fp, fn):
            # Integrates precision over recall assuming precision is linear in tp+fp
            # between thresholds (Davis & Goadrich, 2006).
            dtp = tp[:n - 1] - tp[1:]
            p = tp + fp
            prec_slope = math_ops.div_no_nan(dtp, math_ops.maximum(p[:n - 1] - p[1:], 0.0),
                                             name="prec_slope")
            intercept = tp[1:] - math_ops.multiply(prec_slope, p[1:])
            safe_p_ratio = gather_ops.where(
                math_ops.logical_and(p[:n - 1] > 0, p[1:] > 0),
                math_ops.div_no_nan(p[:n - 1], math_ops.maximum(p[1:], 0.0),
                                    name="recall_relative_ratio"),
                generator_ops.ones_like(p[1:]))
            return reduce_ops.reduce_sum(
                math_ops.div_no_nan(prec_slope * (dtp + intercept * math_ops.log(safe_p_ratio)),
                                    math_ops.maximum(tp[1:] + fn[1:], 0.0),
                                    name="pr_auc_increment"),
                name="interpolate_pr_auc")

        def compute_auc(tp, fn, tn, fp, op_name):
            if curve == "PR":
                if summation_method == "trapezoidal":
                    logging.warning("Trapezoidal rule is known to produce incorrect PR-AUCs; "
                                    "please switch to \"careful_interpolation\" instead.")
                elif summation_method == "careful_interpolation":
                    return interpolate_pr_auc(tp, fp, fn)
            rec = math_ops.div(tp + epsilon, tp + fn + epsilon)
            if curve == "ROC":
                x, y = math_ops.div(fp, fp + tn + epsilon), rec
            else:
                x, y = rec, math_ops.div(tp + epsilon, tp + fp + epsilon)
            dx = x[:n - 1] - x[1:]
            if summation_method in ("trapezoidal", "careful_interpolation"):
                heights = (y[:n - 1] + y[1:]) / 2.0
            elif summation_method == "minoring":
                heights = math_ops.minimum(y[:n - 1], y[1:])
            elif summation_method == "majoring":
                heights = math_ops.maximum(y[:n - 1], y[1:])
            else:
                raise ValueError(f"Invalid summation_method: {summation_method}")
            return reduce_ops.reduce_sum(math_ops.multiply(dx, heights), name=op_name)

        value = _aggregate(metrics_collections,
                           lambda _, v: compute_auc(v["tp"], v["fn"], v["tn"], v["fp"],
                                                    "value"), values)
        update_op = compute_auc(update_ops["tp"], update_ops["fn"], update_ops["tn"],
                                update_ops["fp"], "update_op")
        _add_update(updates_collections, update_op)
        return value, update_op
