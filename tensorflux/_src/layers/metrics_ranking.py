"""The rest of `tf.metrics` (TF1's formulas): `average_precision_at_k` (and its
deprecated name `sparse_average_precision_at_k`), `sensitivity_at_specificity`,
`specificity_at_sensitivity`.

Average precision at k of one row, with labels L (dense ids; every entry is a label) and
the top-k predicted ids p_1..p_k:  sum_i [p_i in L] * precision@i / min(|labels|, k),
where |labels| is the row's number of label entries. The metric streams the sum of the
rows' (weighted) values in `average_precision_at_<k>/total` and the number of rows (or
the weights' sum) in `.../max`; value = total / max (0 when max is 0).
"""

from __future__ import annotations

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.layers import weights_util
from tensorflux._src.layers.metrics_classes import _at_k_name, _maybe_expand_labels
from tensorflux._src.layers.metrics_impl import (
    _add_update, _aggregate, _confusion_matrix_at_thresholds, metric_variable,
)
from tensorflux._src.ops.array import array_ops, generator_ops, sort_ops
from tensorflux._src.ops.math import math_ops, reduce_ops
from tensorflux._src.ops.state import state_ops
from tensorflux._src.train.variable_scope import variable_scope

__all__ = ["average_precision_at_k", "sparse_average_precision_at_k",
           "sensitivity_at_specificity", "specificity_at_sensitivity"]

_F64, _I64 = _dtypes.float64, _dtypes.int64


def _average_precision_per_row(labels, predictions_idx):
    """[D1, ..., DN] average precisions of the top-k ids (see the module docstring)."""
    with _graph.name_scope(None, "average_precision", (predictions_idx, labels)) as scope:
        predictions_idx = math_ops.cast(predictions_idx, _I64, name="predictions_idx")
        if predictions_idx.shape.ndims == 0:
            raise ValueError("The rank of predictions_idx must be at least 1.")
        k = predictions_idx.shape.as_list()[-1]
        if k is None:
            raise ValueError("The last dimension of predictions_idx must be set.")
        labels = math_ops.cast(_maybe_expand_labels(labels, predictions_idx), _I64)
        # relevant[..., i]: the i-th predicted id is one of the row's labels.
        relevant = reduce_ops.reduce_any(
            math_ops.equal(array_ops.expand_dims(predictions_idx, -1),
                           array_ops.expand_dims(labels, -2)), -1)
        relevant = math_ops.cast(relevant, _dtypes.int32, name="relevant_per_k")
        tp_per_k = reduce_ops.cumsum(relevant, axis=-1, name="tp_per_k")
        retrieved_per_k = reduce_ops.cumsum(generator_ops.ones_like(relevant), axis=-1,
                                          name="retrieved_per_k")
        precision_per_k = math_ops.div(math_ops.cast(tp_per_k, _F64),
                                       math_ops.cast(retrieved_per_k, _F64),
                                       name="precision_per_k")
        relevant_precision = math_ops.multiply(precision_per_k, math_ops.cast(relevant, _F64),
                                               name="relevant_precision_per_k")
        precision_sum = reduce_ops.reduce_sum(relevant_precision, axis=-1,
                                              name="precision_sum")
        with _graph.name_scope(None, "num_relevant", (labels,)):
            labels_shape = array_ops.shape(labels)
            num_relevant = generator_ops.fill(labels_shape[:-1],
                                          math_ops.minimum(labels_shape[-1], k))
        return math_ops.div(precision_sum, math_ops.cast(num_relevant, _F64), name=scope)


def _streaming_average_precision_at_top_k(labels, predictions_idx, weights=None,
                                          metrics_collections=None, updates_collections=None,
                                          name=None):
    with _graph.name_scope(name, "average_precision_at_top_k",
                           (predictions_idx, labels, weights)) as scope:
        average_precision = _average_precision_per_row(labels, predictions_idx)
        if weights is not None:
            weights = weights_util.broadcast_weights(math_ops.cast(convert_to_tensor(weights),
                                                                   _F64), average_precision)
            average_precision = math_ops.multiply(average_precision, weights)
        with _graph.name_scope(None, "max", (average_precision,)) as max_scope:
            max_var = metric_variable([], _F64, name=max_scope)
            if weights is None:
                batch_max = math_ops.cast(array_ops.size(average_precision, name="batch_max"),
                                          _F64)
            else:
                batch_max = reduce_ops.reduce_sum(weights, name="batch_max")
            max_update = state_ops.assign_add(max_var, batch_max, name="update")
        with _graph.name_scope(None, "total", (average_precision,)) as total_scope:
            total_var = metric_variable([], _F64, name=total_scope)
            batch_total = reduce_ops.reduce_sum(average_precision, name="batch_total")
            total_update = state_ops.assign_add(total_var, batch_total, name="update")
        value = _aggregate(metrics_collections,
                           lambda _, t, m: math_ops.div_no_nan(t, m, name="mean"),
                           total_var, max_var)
        update = math_ops.div_no_nan(total_update, max_update, name=scope)
        _add_update(updates_collections, update)
        return value, update


def average_precision_at_k(labels, predictions, k, weights=None, metrics_collections=None,
                           updates_collections=None, name=None):
    """Streaming mean average precision of the top-k classes of `predictions`
    ([D1, ..., DN, num_classes]) for integer `labels` ([D1, ..., DN] or
    [D1, ..., DN, num_labels])."""
    if k < 1:
        raise ValueError(f"Invalid k={k}.")
    with _graph.name_scope(name, _at_k_name("average_precision", k),
                           (predictions, labels, weights)) as scope:
        _, predictions_idx = sort_ops.top_k(predictions, k)
        return _streaming_average_precision_at_top_k(
            labels=labels, predictions_idx=predictions_idx, weights=weights,
            metrics_collections=metrics_collections, updates_collections=updates_collections,
            name=scope)


sparse_average_precision_at_k = average_precision_at_k  # TF1's deprecated name


_KEPSILON = 1e-7  # as TF: keeps 0 / 0 finite and puts the end thresholds just outside [0, 1]


def _thresholds(num_thresholds):
    inner = [(i + 1) * 1.0 / (num_thresholds - 1) for i in range(num_thresholds - 2)]
    return [0.0 - _KEPSILON] + inner + [1.0 + _KEPSILON]


def sensitivity_at_specificity(labels, predictions, specificity, weights=None,
                               num_thresholds=200, metrics_collections=None,
                               updates_collections=None, name=None):
    """tp / (tp + fn) at the threshold whose specificity tn / (tn + fp) is closest to
    `specificity` (the first such threshold), over `num_thresholds` thresholds."""
    if specificity < 0 or specificity > 1:
        raise ValueError("`specificity` must be in the range [0, 1].")
    with variable_scope(name, "sensitivity_at_specificity", (predictions, labels, weights)):
        values, update_ops = _confusion_matrix_at_thresholds(
            labels, predictions, _thresholds(num_thresholds), weights)

        def compute(tp, tn, fp, fn, op_name):
            specificities = math_ops.div(tn, tn + fp + _KEPSILON)
            index = math_ops.cast(reduce_ops.argmin(
                math_ops.abs(specificities - specificity), 0), _dtypes.int32)
            return math_ops.div(tp[index], tp[index] + fn[index] + _KEPSILON, op_name)

        value = _aggregate(metrics_collections,
                           lambda _, v: compute(v["tp"], v["tn"], v["fp"], v["fn"], "value"),
                           values)
        update_op = compute(update_ops["tp"], update_ops["tn"], update_ops["fp"],
                            update_ops["fn"], "update_op")
        _add_update(updates_collections, update_op)
        return value, update_op


def specificity_at_sensitivity(labels, predictions, sensitivity, weights=None,
                               num_thresholds=200, metrics_collections=None,
                               updates_collections=None, name=None):
    """tn / (tn + fp) at the threshold whose sensitivity tp / (tp + fn) is closest to
    `sensitivity` (the last such threshold, as TF1), over `num_thresholds` thresholds."""
    if sensitivity < 0 or sensitivity > 1:
        raise ValueError("`sensitivity` must be in the range [0, 1].")
    with variable_scope(name, "specificity_at_sensitivity", (predictions, labels, weights)):
        values, update_ops = _confusion_matrix_at_thresholds(
            labels, predictions, _thresholds(num_thresholds), weights)

        def compute(tp, tn, fp, fn, op_name):
            sensitivities = math_ops.div(tp, tp + fn + _KEPSILON)
            distance = math_ops.abs(sensitivities - sensitivity)
            at_min = math_ops.cast(math_ops.equal(distance, reduce_ops.reduce_min(distance)),
                                   _I64)
            # argmax of the running count of ties: the last index among them.
            index = math_ops.cast(reduce_ops.argmax(reduce_ops.cumsum(at_min), 0), _dtypes.int32)
            return math_ops.div(tn[index], tn[index] + fp[index] + _KEPSILON, op_name)

        value = _aggregate(metrics_collections,
                           lambda _, v: compute(v["tp"], v["tn"], v["fp"], v["fn"], "value"),
                           values)
        update_op = compute(update_ops["tp"], update_ops["tn"], update_ops["fp"],
                            update_ops["fn"], "update_op")
        _add_update(updates_collections, update_op)
        return value, update_op
