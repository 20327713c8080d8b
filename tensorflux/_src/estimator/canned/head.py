"""Heads: what turns logits into predictions, a loss, eval metrics and export outputs
(TF 1.15's canned/head.py v1 heads; keys, defaults and messages are TF's).

- binary (n_classes=2): sigmoid cross-entropy on logits [batch, 1]
- multi-class (n_classes>2): sparse softmax cross-entropy on logits [batch, n_classes]
- regression: squared error on logits [batch, label_dimension]

The training loss is `compute_weighted_loss(unreduced, weights, loss_reduction)` with
SUM as the v1 default, so a canned v1 estimator's `loss` is a per-batch sum; the
`average_loss` metric is the weighted mean per example."""

from __future__ import annotations

import collections

from tensorflux._src.estimator import export_output
from tensorflux._src.estimator.model_fn import EstimatorSpec, ModeKeys
from tensorflux._src.feature_column import dense_columns
from tensorflux._src.framework import (
    dtypes,
    graph_keys,
    sparse_tensor,
    tensor_conversion,
)
from tensorflux._src.framework import graph as graph_lib
from tensorflux._src.layers import losses_impl, metrics_impl
from tensorflux._src.ops import constant as constant_op
from tensorflux._src.ops.array import array_ops, generator_ops
from tensorflux._src.ops.control import control_ops
from tensorflux._src.ops.debug import check_ops
from tensorflux._src.ops.lookup import static_tables
from tensorflux._src.ops.math import math_ops, reduce_ops
from tensorflux._src.ops.nn import nn_loss_ops, nn_ops
from tensorflux._src.ops.strings import string_ops
from tensorflux._src.summary import summary_ops
from tensorflux._src.train import optimizer as optimizer_lib

# SignatureDef keys of the export outputs (TF's names).
DEFAULT_SERVING_KEY = "serving_default"
CLASSIFY_SERVING_KEY = "classification"
REGRESS_SERVING_KEY = "regression"
PREDICT_SERVING_KEY = "predict"

LossSpec = collections.namedtuple(
    "LossSpec", ["training_loss", "unreduced_loss", "weights", "processed_labels"])


class PredictionKeys:
    CLASSES = "classes"
    CLASS_IDS = "class_ids"
    ALL_CLASSES = "all_classes"
    ALL_CLASS_IDS = "all_class_ids"
    LOGISTIC = "logistic"
    LOGITS = "logits"
    PREDICTIONS = "predictions"
    PROBABILITIES = "probabilities"


class MetricKeys:
    LOSS = "loss"
    LOSS_MEAN = "average_loss"
    LOSS_REGULARIZATION = "regularization_loss"
    ACCURACY = "accuracy"
    PRECISION = "precision"
    RECALL = "recall"
    ACCURACY_BASELINE = "accuracy_baseline"
    AUC = "auc"
    AUC_PR = "auc_precision_recall"
    LABEL_MEAN = "label/mean"
    PREDICTION_MEAN = "prediction/mean"
    ACCURACY_AT_THRESHOLD = "accuracy/positive_threshold_%g"
    PRECISION_AT_THRESHOLD = "precision/positive_threshold_%g"
    RECALL_AT_THRESHOLD = "recall/positive_threshold_%g"


def _summary_key(head_name, key):
    return f"{key}/{head_name}" if head_name else key


def _check_reduction(loss_reduction):
    if (loss_reduction not in losses_impl.Reduction.all()
            or loss_reduction == losses_impl.Reduction.NONE):
        raise ValueError(f"Invalid loss_reduction: {loss_reduction}")


def _check_vocabulary(label_vocabulary, error=ValueError):
    if label_vocabulary is not None and not isinstance(label_vocabulary, (list, tuple)):
        raise error("label_vocabulary should be a list or a tuple. "
                    f"Given type: {type(label_vocabulary)}")


def _check_dense_labels(labels, logits, expected_labels_dimension):
    """Labels as a dense [batch, expected_labels_dimension] tensor; a rank-1 label of a
    one-dimensional head gains its last axis (TF's messages)."""
    if labels is None:
        raise ValueError(
            "You must provide a labels Tensor. Given: None. Suggested Fix: check the "
            "labels argument of the input_fn of your estimator's train and evaluate.")
    if isinstance(labels, sparse_tensor.SparseTensor):
        raise ValueError("SparseTensor labels are not supported. labels must be a Tensor "  # noqa: TRY004
                         f"of shape [D0, D1, ..., DN, {expected_labels_dimension}]. "
                         "Suggested Fix (1): Check the label feature in your data. "
                         "Suggested Fix (2): Use tf.sparse.to_dense() to convert it.")
    if isinstance(labels, dict):
        raise ValueError(f"labels must be a Tensor, got a dict with keys {sorted(labels)}; "  # noqa: TRY004
                         "a canned estimator takes a single labels Tensor.")
    labels = tensor_conversion.convert_to_tensor(labels)
    ndims = labels.shape.ndims
    if ndims == 1 and expected_labels_dimension == 1:
        labels = array_ops.expand_dims(labels, -1)
        ndims = 2
    if ndims is not None:
        if ndims < 2:
            raise ValueError(f"labels shape must be [D0, D1, ... DN, "
                             f"{expected_labels_dimension}]. Given shape: {labels.shape}")
        dim1 = labels.shape.as_list()[-1]
        if dim1 is not None and dim1 != expected_labels_dimension:
            raise ValueError(
                f"Mismatched label shape. Expected labels dimension="
                f"{expected_labels_dimension}.  Received {dim1}. Suggested Fix: If your "
                "classifier expects one-hot encoding label, check your n_classes "
                "argument to the estimator and/or the shape of your label. Otherwise, "
                "check the shape of your label.")
    return labels


def _weights(features, weight_column, logits):
    """Per-example weights [batch, 1] from `weight_column` (a name or a numeric column),
    or 1.0 when there is none."""
    if weight_column is None:
        return 1.0
    if isinstance(weight_column, str):
        weight_column = dense_columns.numeric_column(key=weight_column, shape=(1,))
    if not isinstance(weight_column, dense_columns.NumericColumn):
        raise TypeError("Weight column must be either a string or _NumericColumn. "
                        f"Given type: {type(weight_column)}.")
    if weight_column.key not in features:
        raise KeyError(f"weight_column {weight_column.key!r} is not in features; "
                       f"features have {sorted(features)}")
    weights = math_ops.cast(tensor_conversion.convert_to_tensor(features[weight_column.key]), dtypes.float32)
    if weights.shape.ndims == 1:
        weights = array_ops.expand_dims(weights, -1)
    return weights


def _assert_range(labels, n_classes, message=None):
    with graph_lib.name_scope("assert_range"):
        upper = check_ops.assert_less_equal(
            labels, math_ops.cast(n_classes - 1, labels.dtype),
            message=message or "Labels must <= n_classes - 1")
        lower = check_ops.assert_non_negative(labels, message=message or "Labels must >= 0")
        with graph_lib.control_dependencies([upper, lower]):
            return array_ops.identity(labels)


def _class_strings(n_classes, label_vocabulary):
    if label_vocabulary:
        return constant_op.constant(list(label_vocabulary), dtype=dtypes.string)
    return string_ops.as_string(math_ops.range(n_classes))


def _tile_per_example(row, logits):
    # (n,) -> (batch, n): the same row for every example of the batch.
    return array_ops.tile(array_ops.expand_dims(row, 0), [array_ops.shape(logits)[0], 1])


def _classification_output(scores, n_classes, label_vocabulary):
    classes = _tile_per_example(_class_strings(n_classes, label_vocabulary), scores)
    return export_output.ClassificationOutput(scores=scores, classes=classes)


def _class_predictions(logits, class_logits, n_classes, label_vocabulary):
    """class_ids (argmax, [batch, 1]), classes (strings), all_class_ids, all_classes."""
    pk = PredictionKeys
    class_ids = array_ops.expand_dims(reduce_ops.argmax(class_logits, axis=-1, name=pk.CLASS_IDS), -1)
    if label_vocabulary:
        table = static_tables.index_to_string_table_from_tensor(
            list(label_vocabulary), name="class_string_lookup")
        classes = table.lookup(class_ids)
    else:
        classes = string_ops.as_string(class_ids, name="str_classes")
    return {
        pk.CLASS_IDS: class_ids,
        pk.CLASSES: classes,
        pk.ALL_CLASS_IDS: _tile_per_example(math_ops.range(n_classes), logits),
        pk.ALL_CLASSES: _tile_per_example(_class_strings(n_classes, label_vocabulary),
                                          logits),
    }


def _vocab_ids(labels, label_vocabulary):
    if labels.dtype != dtypes.string:
        raise ValueError("Labels dtype should be string if there is a vocabulary. "
                         f"Instead got {labels.dtype}")
    table = static_tables.index_table_from_tensor(
        list(label_vocabulary), name="class_id_lookup")
    return table.lookup(labels)


class _Head:
    """The part shared by all heads: name scope, loss + regularization, the TRAIN op with
    UPDATE_OPS (batch norm) appended, and TF's `loss` / `average_loss` summaries."""

    def __init__(self, weight_column, loss_reduction, name):
        _check_reduction(loss_reduction)
        self._weight_column = weight_column
        self._loss_reduction = loss_reduction
        self._name = name

    @property
    def name(self):
        return self._name

    def create_estimator_spec(self, features, mode, logits, labels=None, optimizer=None,
                              train_op_fn=None, regularization_losses=None):
        with graph_lib.name_scope(self._name or "head"):
            logits = self._check_logits(logits)
            with graph_lib.name_scope("predictions"):
                predictions = self._predictions(logits)
            if mode == ModeKeys.PREDICT:
                return EstimatorSpec(mode, predictions=predictions,
                                     export_outputs=self._export_outputs(predictions))
            loss_spec = self.create_loss(features, mode, logits, labels)
            reg_loss = math_ops.add_n(list(regularization_losses)) if regularization_losses \
                else None
            loss = loss_spec.training_loss if reg_loss is None else math_ops.add_n(
                [loss_spec.training_loss, reg_loss])
            if mode == ModeKeys.EVAL:
                with graph_lib.name_scope("metrics"):
                    metrics = self._eval_metric_ops(predictions, loss_spec)
                    if reg_loss is not None:
                        metrics[_summary_key(self._name, MetricKeys.LOSS_REGULARIZATION)] = \
                            metrics_impl.mean(reg_loss, name=MetricKeys.LOSS_REGULARIZATION)
                return EstimatorSpec(mode, predictions=predictions, loss=loss,
                                     eval_metric_ops=metrics)
            if optimizer is not None:
                if train_op_fn is not None:
                    raise ValueError("train_op_fn and optimizer cannot both be set.")
                train_op = optimizer.minimize(loss, global_step=optimizer_lib.get_global_step())
            elif train_op_fn is not None:
                train_op = train_op_fn(loss)
            else:
                raise ValueError("train_op_fn and optimizer cannot both be None.")
            update_ops = graph_lib.get_collection(graph_keys.GraphKeys.UPDATE_OPS)
            if update_ops:
                train_op = control_ops.group(train_op, *update_ops)
            mean_loss = None
            if self._loss_reduction == losses_impl.Reduction.SUM:
                # Only under SUM, as TF: the per-example mean for comparison across batch
                # sizes.
                mean_loss = loss_spec.training_loss / reduce_ops.reduce_sum(
                    loss_spec.weights * generator_ops.ones_like(loss_spec.unreduced_loss))
        with graph_lib.name_scope(""):
            summary_ops.scalar(_summary_key(self._name, MetricKeys.LOSS), loss)
            if mean_loss is not None:
                summary_ops.scalar(_summary_key(self._name, MetricKeys.LOSS_MEAN), mean_loss)
            if reg_loss is not None:
                summary_ops.scalar(_summary_key(self._name, MetricKeys.LOSS_REGULARIZATION),
                                  reg_loss)
        return EstimatorSpec(mode, predictions=predictions, loss=loss, train_op=train_op)

    def _check_logits(self, logits):
        logits = math_ops.cast(tensor_conversion.convert_to_tensor(logits), dtypes.float32)
        shape = logits.shape
        if shape.ndims is not None and shape.ndims < 2:
            raise ValueError("logits shape must be [D0, D1, ... DN, logits_dimension], "
                             f"got {shape}.")
        if shape.ndims is not None and shape.as_list()[-1] not in (None,
                                                                   self.logits_dimension):
            raise ValueError("logits shape must be [D0, D1, ... DN, logits_dimension="
                             f"{self.logits_dimension}], got {shape}.")
        return logits

    def _finish_loss(self, features, logits, unreduced, labels):
        weights = _weights(features, self._weight_column, logits)
        training_loss = losses_impl.compute_weighted_loss(
            unreduced, weights=weights, reduction=self._loss_reduction)
        return LossSpec(training_loss, unreduced, weights, labels)

    def _mean(self, values, weights, name):
        values = math_ops.cast(values, dtypes.float32)
        if not isinstance(weights, float):
            weights = weights * generator_ops.ones_like(values)  # broadcast [batch,1] -> values
        else:
            weights = None
        return metrics_impl.mean(values, weights=weights, name=name)


class BinaryClassHead(_Head):
    """n_classes == 2: one logit per example; labels 0/1 (or two vocabulary strings)."""

    def __init__(self, weight_column=None, thresholds=None, label_vocabulary=None,
                 loss_reduction="weighted_sum", name=None):
        _check_vocabulary(label_vocabulary, TypeError)
        self._thresholds = tuple(thresholds) if thresholds else ()
        for t in self._thresholds:
            if t <= 0.0 or t >= 1.0:
                raise ValueError(f"thresholds not in (0, 1): {(self._thresholds,)}.")
        self._label_vocabulary = label_vocabulary
        super().__init__(weight_column, loss_reduction, name)

    logits_dimension = 1

    def _predictions(self, logits):
        pk = PredictionKeys
        logistic = math_ops.sigmoid(logits, name=pk.LOGISTIC)
        # (batch, 2): class 0 has logit 0, so softmax over it equals [1-p, p].
        two_class_logits = array_ops.concat([generator_ops.zeros_like(logits), logits], axis=-1,
                                     name="two_class_logits")
        out = {pk.LOGITS: logits, pk.LOGISTIC: logistic,
               pk.PROBABILITIES: nn_ops.softmax(two_class_logits, name=pk.PROBABILITIES)}
        out.update(_class_predictions(logits, two_class_logits, 2, self._label_vocabulary))
        return out

    def _export_outputs(self, predictions):
        classifier = _classification_output(predictions[PredictionKeys.PROBABILITIES], 2,
                                            self._label_vocabulary)
        return {DEFAULT_SERVING_KEY: classifier, CLASSIFY_SERVING_KEY: classifier,
                REGRESS_SERVING_KEY: export_output.RegressionOutput(
                    predictions[PredictionKeys.LOGISTIC]),
                PREDICT_SERVING_KEY: export_output.PredictOutput(predictions)}

    def create_loss(self, features, mode, logits, labels):
        labels = _check_dense_labels(labels, logits, 1)
        if self._label_vocabulary is not None:
            labels = _vocab_ids(labels, self._label_vocabulary)
        labels = _assert_range(math_ops.cast(labels, dtypes.float32), 2)
        unreduced = nn_loss_ops.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits)
        return self._finish_loss(features, logits, unreduced, labels)

    def _eval_metric_ops(self, predictions, loss_spec):
        k, pk = MetricKeys, PredictionKeys
        labels, weights = loss_spec.processed_labels, loss_spec.weights
        w = None if isinstance(weights, float) else weights
        class_ids = predictions[pk.CLASS_IDS]
        logistic = predictions[pk.LOGISTIC]
        label_mean = self._mean(labels, weights, k.LABEL_MEAN)
        with graph_lib.name_scope("accuracy_baseline"):
            # Always predicting the majority class: max(mean, 1 - mean).
            baseline = (math_ops.maximum(label_mean[0], 1.0 - label_mean[0], name="value"),
                        math_ops.maximum(label_mean[1], 1.0 - label_mean[1], name="update_op"))
        ops = {
            k.LOSS_MEAN: self._mean(loss_spec.unreduced_loss, weights, k.LOSS_MEAN),
            k.ACCURACY: metrics_impl.accuracy(labels, class_ids, weights=w, name=k.ACCURACY),
            k.PRECISION: metrics_impl.precision(labels, class_ids, weights=w,
                                              name=k.PRECISION),
            k.RECALL: metrics_impl.recall(labels, class_ids, weights=w, name=k.RECALL),
            k.PREDICTION_MEAN: self._mean(logistic, weights, k.PREDICTION_MEAN),
            k.LABEL_MEAN: label_mean,
            k.ACCURACY_BASELINE: baseline,
            k.AUC: metrics_impl.auc(labels, logistic, weights=w, name=k.AUC),
            k.AUC_PR: metrics_impl.auc(labels, logistic, weights=w, curve="PR",
                                     name=k.AUC_PR),
        }
        for t in self._thresholds:
            pred = math_ops.cast(math_ops.greater_equal(logistic, t), dtypes.float32)
            ops[k.ACCURACY_AT_THRESHOLD % t] = metrics_impl.accuracy(labels, pred, weights=w)
            ops[k.PRECISION_AT_THRESHOLD % t] = metrics_impl.precision(labels, pred,
                                                                     weights=w)
            ops[k.RECALL_AT_THRESHOLD % t] = metrics_impl.recall(labels, pred, weights=w)
        return {_summary_key(self._name, key): v for key, v in ops.items()}


class MultiClassHead(_Head):
    """n_classes > 2: one logit per class; integer labels in [0, n_classes) or strings of
    `label_vocabulary`."""

    def __init__(self, n_classes, weight_column=None, label_vocabulary=None,
                 loss_reduction="weighted_sum", name=None):
        if n_classes is None:
            raise ValueError("n_classes cannot be None")
        if isinstance(n_classes, int) and n_classes <= 2:
            raise ValueError(f"n_classes must be > 2: {n_classes}.")
        _check_vocabulary(label_vocabulary)
        self._n_classes = n_classes
        self._label_vocabulary = label_vocabulary
        super().__init__(weight_column, loss_reduction, name)

    @property
    def logits_dimension(self):
        return self._n_classes

    def _predictions(self, logits):
        pk = PredictionKeys
        out = {pk.LOGITS: logits,
               pk.PROBABILITIES: nn_ops.softmax(logits, name=pk.PROBABILITIES)}
        out.update(_class_predictions(logits, logits, self._n_classes,
                                      self._label_vocabulary))
        return out

    def _export_outputs(self, predictions):
        classifier = _classification_output(predictions[PredictionKeys.PROBABILITIES],
                                            self._n_classes, self._label_vocabulary)
        return {DEFAULT_SERVING_KEY: classifier, CLASSIFY_SERVING_KEY: classifier,
                PREDICT_SERVING_KEY: export_output.PredictOutput(predictions)}

    def create_loss(self, features, mode, logits, labels):
        labels = _check_dense_labels(labels, logits, 1)
        if self._label_vocabulary is None:
            if not labels.dtype.is_integer:
                raise ValueError(f"Labels dtype should be integer. Instead got "
                                 f"{labels.dtype}.")
            label_ids = labels
        else:
            label_ids = _vocab_ids(labels, self._label_vocabulary)
        label_ids = _assert_range(label_ids, self._n_classes)
        unreduced = array_ops.expand_dims(losses_impl.sparse_softmax_cross_entropy(
            labels=label_ids, logits=logits, reduction=losses_impl.Reduction.NONE), -1)
        return self._finish_loss(features, logits, unreduced, label_ids)

    def _eval_metric_ops(self, predictions, loss_spec):
        k = MetricKeys
        w = None if isinstance(loss_spec.weights, float) else loss_spec.weights
        ops = {
            k.LOSS_MEAN: self._mean(loss_spec.unreduced_loss, loss_spec.weights,
                                    k.LOSS_MEAN),
            k.ACCURACY: metrics_impl.accuracy(loss_spec.processed_labels,
                                            predictions[PredictionKeys.CLASS_IDS],
                                            weights=w, name=k.ACCURACY),
        }
        return {_summary_key(self._name, key): v for key, v in ops.items()}


class RegressionHead(_Head):
    """Squared error on `label_dimension` outputs per example."""

    def __init__(self, label_dimension=1, weight_column=None,
                 loss_reduction="weighted_sum", name=None):
        if label_dimension < 1:
            raise ValueError(f"Invalid label_dimension {label_dimension}.")
        self._label_dimension = label_dimension
        super().__init__(weight_column, loss_reduction, name)

    @property
    def logits_dimension(self):
        return self._label_dimension

    def _predictions(self, logits):
        return {PredictionKeys.PREDICTIONS: logits}

    def _export_outputs(self, predictions):
        regression = export_output.RegressionOutput(predictions[PredictionKeys.PREDICTIONS])
        return {DEFAULT_SERVING_KEY: regression, REGRESS_SERVING_KEY: regression,
                PREDICT_SERVING_KEY: export_output.PredictOutput(predictions)}

    def create_loss(self, features, mode, logits, labels):
        labels = math_ops.cast(_check_dense_labels(labels, logits, self._label_dimension),
                         dtypes.float32)
        unreduced = math_ops.square(logits - labels)
        return self._finish_loss(features, logits, unreduced, labels)

    def _eval_metric_ops(self, predictions, loss_spec):
        k = MetricKeys
        w = loss_spec.weights
        ops = {
            k.LOSS_MEAN: self._mean(loss_spec.unreduced_loss, w, k.LOSS_MEAN),
            k.PREDICTION_MEAN: self._mean(predictions[PredictionKeys.PREDICTIONS], w,
                                          k.PREDICTION_MEAN),
            k.LABEL_MEAN: self._mean(loss_spec.processed_labels, w, k.LABEL_MEAN),
        }
        return {_summary_key(self._name, key): v for key, v in ops.items()}


def binary_or_multi_class_head(n_classes, weight_column, label_vocabulary,
                               loss_reduction):
    """The head a v1 classifier uses: binary for n_classes == 2, else multi-class (whose
    check gives TF's 'n_classes must be > 2' for n_classes < 2)."""
    if n_classes == 2:
        return BinaryClassHead(weight_column=weight_column,
                               label_vocabulary=label_vocabulary,
                               loss_reduction=loss_reduction)
    return MultiClassHead(n_classes, weight_column=weight_column,
                          label_vocabulary=label_vocabulary, loss_reduction=loss_reduction)
