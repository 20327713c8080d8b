"""DNNLinearCombinedClassifier / Regressor (TF 1.15 v1, "wide & deep"): the logits of a
linear model (scope 'linear') and a DNN (scope 'dnn') added; each part is trained by its
own optimizer on its own variables, then the global step advances once."""

import math

from tensorflux._src.estimator.canned import _common, optimizers
from tensorflux._src.estimator.canned.dnn import (
    _check_dropout,
    _check_hidden_units,
    dnn_logits,
)
from tensorflux._src.estimator.canned.linear import linear_logits
from tensorflux._src.estimator.estimator import Estimator
from tensorflux._src.framework import graph as graph_lib
from tensorflux._src.framework import graph_keys
from tensorflux._src.ops.control import control_ops
from tensorflux._src.ops.nn import nn_ops
from tensorflux._src.ops.state import state_ops
from tensorflux._src.train import optimizer as optimizer_lib
from tensorflux._src.train import variable_scope as vs

# TF's defaults: named optimizers get these learning rates (linear capped by
# 1/sqrt(#linear columns)).
_DNN_LEARNING_RATE = 0.001
_LINEAR_LEARNING_RATE = 0.005
_SUM = "weighted_sum"


def _linear_learning_rate(num_linear_feature_columns):
    return min(_LINEAR_LEARNING_RATE, 1.0 / math.sqrt(num_linear_feature_columns))


def _dnn_linear_combined_model_fn(features, labels, mode, head, linear_feature_columns,
                                  linear_optimizer, dnn_feature_columns, dnn_optimizer,
                                  dnn_hidden_units, dnn_activation_fn, dnn_dropout,
                                  input_layer_partitioner, config, batch_norm,
                                  linear_sparse_combiner):
    _common.check_features(features)
    dnn_logit = linear_logit = None
    if dnn_feature_columns:
        dnn_opt = optimizers.get_optimizer_instance(dnn_optimizer,
                                                    learning_rate=_DNN_LEARNING_RATE)
        with vs.variable_scope("dnn", partitioner=_common.default_partitioner(
                None, config, min_slice_size=256 << 10)):
            dnn_logit = dnn_logits(
                features, mode, head.logits_dimension, dnn_hidden_units,
                dnn_feature_columns, dnn_activation_fn or nn_ops.relu, dnn_dropout,
                _common.default_partitioner(input_layer_partitioner, config), batch_norm)
    if linear_feature_columns:
        linear_opt = optimizers.get_optimizer_instance(
            linear_optimizer,
            learning_rate=_linear_learning_rate(len(linear_feature_columns)))
        with vs.variable_scope("linear", partitioner=_common.default_partitioner(
                None, config, min_slice_size=256 << 10)):
            linear_logit = linear_logits(features, linear_feature_columns,
                                         head.logits_dimension, linear_sparse_combiner)
    if dnn_logit is not None and linear_logit is not None:
        logits = dnn_logit + linear_logit
    else:
        logits = dnn_logit if dnn_logit is not None else linear_logit

    def _train_op_fn(loss):
        train_ops = []
        if dnn_logit is not None:
            train_ops.append(dnn_opt.minimize(loss, var_list=graph_lib.get_collection(
                graph_keys.GraphKeys.TRAINABLE_VARIABLES, scope="dnn")))
        if linear_logit is not None:
            train_ops.append(linear_opt.minimize(loss, var_list=graph_lib.get_collection(
                graph_keys.GraphKeys.TRAINABLE_VARIABLES, scope="linear")))
        with graph_lib.control_dependencies([control_ops.group(*train_ops)]):
            return state_ops.assign_add(optimizer_lib.get_global_step(), 1).op

    return head.create_estimator_spec(features=features, mode=mode, labels=labels,
                                      train_op_fn=_train_op_fn, logits=logits)


class _DNNLinearCombinedBase(Estimator):
    def __init__(self, head, model_dir, linear_feature_columns, linear_optimizer,
                 dnn_feature_columns, dnn_optimizer, dnn_hidden_units, dnn_activation_fn,
                 dnn_dropout, input_layer_partitioner, config, warm_start_from,
                 batch_norm, linear_sparse_combiner):
        linear_feature_columns = tuple(linear_feature_columns or ())
        dnn_feature_columns = tuple(dnn_feature_columns or ())
        if not linear_feature_columns and not dnn_feature_columns:
            raise ValueError("Either linear_feature_columns or dnn_feature_columns "
                             "must be defined.")
        if linear_feature_columns:
            linear_feature_columns = _common.check_feature_columns(
                linear_feature_columns, "linear_feature_columns")
        if dnn_feature_columns:
            if not dnn_hidden_units:
                raise ValueError("dnn_hidden_units must be defined when "
                                 "dnn_feature_columns is specified.")
            dnn_hidden_units = _check_hidden_units(dnn_hidden_units)
            dnn_feature_columns = _common.check_feature_columns(dnn_feature_columns,
                                                                "dnn_feature_columns")
        _check_dropout(dnn_dropout)

        def _model_fn(features, labels, mode, config):
            return _dnn_linear_combined_model_fn(
                features, labels, mode, head, linear_feature_columns, linear_optimizer,
                dnn_feature_columns, dnn_optimizer, dnn_hidden_units, dnn_activation_fn,
                dnn_dropout, input_layer_partitioner, config, batch_norm,
                linear_sparse_combiner)
        super().__init__(_model_fn, model_dir=model_dir, config=config,
                         warm_start_from=warm_start_from)


class DNNLinearCombinedClassifier(_DNNLinearCombinedBase):
    """Wide & deep classifier (binary or multi-class by n_classes)."""

    def __init__(self, model_dir=None, linear_feature_columns=None,
                 linear_optimizer="Ftrl", dnn_feature_columns=None, dnn_optimizer="Adagrad",
                 dnn_hidden_units=None, dnn_activation_fn=None, dnn_dropout=None,
                 n_classes=2, weight_column=None, label_vocabulary=None,
                 input_layer_partitioner=None, config=None, warm_start_from=None,
                 loss_reduction=_SUM, batch_norm=False, linear_sparse_combiner="sum"):
        head = _common.classifier_head(n_classes, weight_column, label_vocabulary,
                                       loss_reduction)
        super().__init__(head, model_dir, linear_feature_columns, linear_optimizer,
                         dnn_feature_columns, dnn_optimizer, dnn_hidden_units,
                         dnn_activation_fn, dnn_dropout, input_layer_partitioner, config,
                         warm_start_from, batch_norm, linear_sparse_combiner)


class DNNLinearCombinedRegressor(_DNNLinearCombinedBase):
    """Wide & deep regressor (`label_dimension` outputs)."""

    def __init__(self, model_dir=None, linear_feature_columns=None,
                 linear_optimizer="Ftrl", dnn_feature_columns=None, dnn_optimizer="Adagrad",
                 dnn_hidden_units=None, dnn_activation_fn=None, dnn_dropout=None,
                 label_dimension=1, weight_column=None, input_layer_partitioner=None,
                 config=None, warm_start_from=None, loss_reduction=_SUM, batch_norm=False,
                 linear_sparse_combiner="sum"):
        head = _common.regression_head(label_dimension, weight_column, loss_reduction)
        super().__init__(head, model_dir, linear_feature_columns, linear_optimizer,
                         dnn_feature_columns, dnn_optimizer, dnn_hidden_units,
                         dnn_activation_fn, dnn_dropout, input_layer_partitioner, config,
                         warm_start_from, batch_norm, linear_sparse_combiner)
