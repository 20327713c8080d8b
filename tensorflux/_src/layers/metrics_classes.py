"""Class-id metrics: `mean_iou` and the top-k metrics `recall_at_k` / `precision_at_k`.

Top-k metrics take integer labels of shape [batch] or [batch, num_labels] (dense; every
entry is a label, repeats count once) and predictions [batch, num_classes]. Per row,
with P = the k predicted ids and L = the label set:
    tp = |P & L|,  fp = |P - L|,  fn = |L - P|
(with `class_id`, both sets keep only that id). Counts stream in float64 variables
`<metric>_at_<k>/true_positive_at_<k>:0` etc., as TF1 names them.
"""

from __future__ import annotations

import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.layers import weights_util
from tensorflux._src.layers.metrics_impl import _add_update, _aggregate, metric_variable
from tensorflux._src.ops.array import array_ops, gather_ops, generator_ops, sort_ops
from tensorflux._src.ops.math import math_ops, reduce_ops
from tensorflux._src.ops.linalg import linalg_ops
from tensorflux._src.ops.state import state_ops
from tensorflux._src.train.variable_scope import variable_scope

__all__ = ["mean_iou", "recall_at_k", "precision_at_k", "recall_at_top_k",
           "precision_at_top_k", "sparse_recall_at_k", "sparse_precision_at_k"]

_F32, _F64, _I64 = _dtypes.float32, _dtypes.float64, _dtypes.int64


# -- mean IoU -------------------------------------------------------------------------------
def _streaming_confusion_matrix(labels, predictions, num_classes, weights=None):
    """Adds this batch's confusion matrix (rows: labels, columns: predictions) to the
    float64 variable `total_confusion_matrix`. Ids outside [0, num_classes) add nothing."""
    total_cm = metric_variable([num_classes, num_classes], _F64,
                               name="total_confusion_matrix")
    predictions = array_ops.reshape(math_ops.cast(predictions, _I64), [-1])
    labels = array_ops.reshape(math_ops.cast(labels, _I64), [-1])
    label_hot = gather_ops.one_hot(labels, num_classes, dtype=_F64)      # (N, C)
    pred_hot = gather_ops.one_hot(predictions, num_classes, dtype=_F64)  # (N, C)
    if weights is not None:
        weights = array_ops.reshape(math_ops.cast(weights, _F64), [-1])
        weights = weights_util.broadcast_weights(weights, math_ops.cast(labels, _F64))
        label_hot = label_hot * array_ops.expand_dims(weights, -1)
    current_cm = linalg_ops.matmul(label_hot, pred_hot, transpose_a=True)
    return total_cm, state_ops.assign_add(total_cm, current_cm)


def mean_iou(labels, predictions, num_classes, weights=None, metrics_collections=None,
             updates_collections=None, name=None):
    """Mean over classes of tp / (tp + fp + fn), over the classes that occur in labels
    or predictions. The update op returns the updated confusion matrix (TF1)."""
    with variable_scope(name, "mean_iou", (predictions, labels, weights)):
        predictions, labels = convert_to_tensor(predictions), convert_to_tensor(labels)
        predictions.shape.assert_is_compatible_with(labels.shape)
        total_cm, update_op = _streaming_confusion_matrix(labels, predictions, num_classes,
                                                          weights)

        def compute_mean_iou(_, cm):
            sum_over_row = math_ops.cast(reduce_ops.reduce_sum(cm, 0), _F32)
            sum_over_col = math_ops.cast(reduce_ops.reduce_sum(cm, 1), _F32)
            cm_diag = math_ops.cast(array_ops.diag_part(cm), _F32)
            denominator = sum_over_row + sum_over_col - cm_diag
            # Only classes that appear count; an empty class has denominator 0.
            num_valid = reduce_ops.reduce_sum(
                math_ops.cast(math_ops.not_equal(denominator, 0), _F32))
            denominator = gather_ops.where(math_ops.greater(denominator, 0), denominator,
                                           generator_ops.ones_like(denominator))
            iou = math_ops.div(cm_diag, denominator)
            return gather_ops.where(math_ops.greater(num_valid, 0),
                                    reduce_ops.reduce_sum(iou, name="mean_iou") / num_valid,
                                    0.0)

        value = _aggregate(metrics_collections, compute_mean_iou, total_cm)
        _add_update(updates_collections, update_op)
        return value, update_op


# -- top-k --------------------------------------------------------------------------------------
def _at_k_name(name, k=None, class_id=None):
    name = f"{name}_at_{k}" if k is not None else f"{name}_at_k"
    return f"{name}_class{class_id}" if class_id is not None else name


def _maybe_expand_labels(labels, predictions):
    """[batch] labels become [batch, 1] to match [batch, k] predicted ids."""
    with _graph.name_scope(None, "expand_labels", (labels, predictions)) as scope:
        labels = convert_to_tensor(labels)
        lr, pr = labels.shape.ndims, predictions.shape.ndims
        if lr is None or pr is None:
            raise ValueError("recall/precision at k need labels and predictions of known rank")
        if pr == lr:
            return labels
        if pr == lr + 1:
            return array_ops.expand_dims(labels, -1, name=scope)
        raise ValueError(f"Unexpected labels shape {labels.shape} for predictions shape "
                         f"{predictions.shape}.")


def _set_counts(labels, predictions_idx, class_id):
    """Per-row (tp, fp, fn) as float64 [batch] tensors (see the module doc)."""
    labels = array_ops.expand_dims(labels, -1)                  # (B, L, 1)
    preds = array_ops.expand_dims(predictions_idx, -2)          # (B, 1, K)
    if class_id is not None:
        in_labels = reduce_ops.reduce_any(math_ops.equal(labels, class_id), [1, 2])
        in_preds = reduce_ops.reduce_any(math_ops.equal(preds, class_id), [1, 2])
        tp = math_ops.logical_and(in_labels, in_preds)
        fp = math_ops.logical_and(in_preds, math_ops.logical_not(in_labels))
        fn = math_ops.logical_and(in_labels, math_ops.logical_not(in_preds))
        return tuple(math_ops.cast(c, _F64) for c in (tp, fp, fn))
    same = math_ops.equal(labels, preds)                        # (B, L, K)
    pred_hit = reduce_ops.reduce_any(same, 1)                   # (B, K): id is a label
    label_hit = reduce_ops.reduce_any(same, 2)                  # (B, L): label predicted
    # A repeated label counts once: keep only its first occurrence in the row.
    num_labels = labels.shape[1].value
    if num_labels is None:
        raise ValueError("recall/precision at k need the number of labels per row to be "
                         "known when the graph is built")
    lab = array_ops.squeeze(labels, [-1])                        # (B, L)
    repeats = math_ops.equal(array_ops.expand_dims(lab, 2), array_ops.expand_dims(lab, 1))
    earlier = np.tril(np.ones((num_labels, num_labels), bool), -1)  # [l, l'] = l' < l
    first = math_ops.logical_not(reduce_ops.reduce_any(
        math_ops.logical_and(repeats, earlier), 2))              # (B, L)
    count = lambda b: reduce_ops.reduce_sum(math_ops.cast(b, _F64), 1)  # noqa: E731
    tp = count(pred_hit)
    fp = count(math_ops.logical_not(pred_hit))
    fn = count(math_ops.logical_and(first, math_ops.logical_not(label_hit)))
    return tp, fp, fn


def _streaming_count(name_prefix, k, class_id, counts, weights):
    """Adds the weighted batch total to the float64 variable named after the scope."""
    with _graph.name_scope(None, _at_k_name(name_prefix, k, class_id=class_id)) as scope:
        if weights is not None:
            weights = math_ops.cast(convert_to_tensor(weights), _F64)
            weights_util.assert_broadcastable(weights, counts)
            counts = math_ops.multiply(counts, weights)
        batch_total = reduce_ops.reduce_sum(counts)
        var = metric_variable([], _F64, name=scope)
        return var, state_ops.assign_add(var, batch_total, name="update")


def _top_k_ratio(kind, other_prefix, labels, predictions_idx, k, class_id, weights,
                 metrics_collections, updates_collections, name):
    """recall = tp / (tp + fn), precision = tp / (tp + fp) over all rows seen."""
    with _graph.name_scope(name, _at_k_name(kind, k, class_id=class_id),
                           (predictions_idx, labels, weights)) as scope:
        predictions_idx = math_ops.cast(predictions_idx, _I64)
        labels = math_ops.cast(_maybe_expand_labels(labels, predictions_idx), _I64)
        if k is None:
            k = predictions_idx.shape[-1].value
        tp, fp, fn = _set_counts(labels, predictions_idx, class_id)
        other = fn if other_prefix == "false_negative" else fp
        tp_var, tp_update = _streaming_count("true_positive", k, class_id, tp, weights)
        o_var, o_update = _streaming_count(other_prefix, k, class_id, other, weights)
        value = _aggregate(metrics_collections,
                           lambda _, t, o: math_ops.div(t, math_ops.add(t, o), name=scope),
                           tp_var, o_var)
        update = math_ops.div(tp_update, math_ops.add(tp_update, o_update), name="update")
        _add_update(updates_collections, update)
        return value, update


def recall_at_top_k(labels, predictions_idx, k=None, class_id=None, weights=None,
                    metrics_collections=None, updates_collections=None, name=None):
    """Streaming recall of the predicted ids `predictions_idx` ([batch, k])."""
    return _top_k_ratio("recall", "false_negative", labels, predictions_idx, k, class_id,
                        weights, metrics_collections, updates_collections, name)


def precision_at_top_k(labels, predictions_idx, k=None, class_id=None, weights=None,
                       metrics_collections=None, updates_collections=None, name=None):
    """Streaming precision of the predicted ids `predictions_idx` ([batch, k])."""
    return _top_k_ratio("precision", "false_positive", labels, predictions_idx, k, class_id,
                        weights, metrics_collections, updates_collections, name)


def recall_at_k(labels, predictions, k, class_id=None, weights=None,
                metrics_collections=None, updates_collections=None, name=None):
    """Streaming recall of the top-k classes of `predictions` ([batch, num_classes])."""
    with _graph.name_scope(name, _at_k_name("recall", k, class_id=class_id),
                           (predictions, labels, weights)) as scope:
        _, top_k_idx = sort_ops.top_k(predictions, k)
        return recall_at_top_k(labels, top_k_idx, k=k, class_id=class_id, weights=weights,
                               metrics_collections=metrics_collections,
                               updates_collections=updates_collections, name=scope)


def precision_at_k(labels, predictions, k, class_id=None, weights=None,
                   metrics_collections=None, updates_collections=None, name=None):
    """Streaming precision of the top-k classes of `predictions` ([batch, num_classes])."""
    with _graph.name_scope(name, _at_k_name("precision", k, class_id=class_id),
                           (predictions, labels, weights)) as scope:
        _, top_k_idx = sort_ops.top_k(predictions, k)
        return precision_at_top_k(labels, top_k_idx, k=k, class_id=class_id,
                                  weights=weights, metrics_collections=metrics_collections,
                                  updates_collections=updates_collections, name=scope)


sparse_recall_at_k = recall_at_k          # TF1's deprecated names
sparse_precision_at_k = precision_at_k
