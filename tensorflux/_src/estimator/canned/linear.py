"""LinearClassifier / LinearRegressor (TF 1.15 v1): `linear_model` over the feature
columns in variable scope 'linear', so the variables are
linear/linear_model/<column>/weights and linear/linear_model/bias_weights."""

import math

from tensorflux._src.estimator.canned import _common, optimizers
from tensorflux._src.estimator.estimator import Estimator
from tensorflux._src.feature_column import models as fc_models
from tensorflux._src.train import variable_scope as vs

# TF's historical default learning rate for a named optimizer.
_LEARNING_RATE = 0.2
_SUM = "weighted_sum"  # tf.losses.Reduction.SUM, the v1 canned default


def _default_optimizer(feature_columns):
    # Used only when optimizer=None: Ftrl at min(0.2, 1/sqrt(#columns)), as TF.
    from tensorflux._src.train.optimizers import FtrlOptimizer
    return FtrlOptimizer(learning_rate=min(_LEARNING_RATE,
                                           1.0 / math.sqrt(len(feature_columns))))


def linear_logits(features, feature_columns, units, sparse_combiner):
    return fc_models.linear_model(features, list(feature_columns), units=units,
                                          sparse_combiner=sparse_combiner)


def _linear_model_fn(features, labels, mode, head, feature_columns, optimizer,
                     partitioner, config, sparse_combiner="sum"):
    _common.check_features(features)
    optimizer = optimizers.get_optimizer_instance(
        optimizer or _default_optimizer(feature_columns), learning_rate=_LEARNING_RATE)
    with vs.variable_scope("linear", partitioner=_common.default_partitioner(
            partitioner, config)):
        logits = linear_logits(features, feature_columns, head.logits_dimension,
                               sparse_combiner)
    return head.create_estimator_spec(features=features, mode=mode, labels=labels,
                                      optimizer=optimizer, logits=logits)


def _check_combiner(sparse_combiner):
    if sparse_combiner not in ("mean", "sqrtn", "sum"):
        raise ValueError("sparse_combiner must be one of 'mean', 'sqrtn' or 'sum'; "
                         f"got {sparse_combiner!r}")


class LinearClassifier(Estimator):
    """Logistic (n_classes=2) or softmax (n_classes>2) regression on feature columns."""

    def __init__(self, feature_columns, model_dir=None, n_classes=2, weight_column=None,
                 label_vocabulary=None, optimizer="Ftrl", config=None, partitioner=None,
                 warm_start_from=None, loss_reduction=_SUM, sparse_combiner="sum"):
        feature_columns = _common.check_feature_columns(feature_columns)
        _check_combiner(sparse_combiner)
        head = _common.classifier_head(n_classes, weight_column, label_vocabulary,
                                       loss_reduction)

        def _model_fn(features, labels, mode, config):
            return _linear_model_fn(features, labels, mode, head, feature_columns,
                                    optimizer, partitioner, config, sparse_combiner)
        super().__init__(_model_fn, model_dir=model_dir, config=config,
                         warm_start_from=warm_start_from)


class LinearRegressor(Estimator):
    """Least squares on feature columns, `label_dimension` outputs per example."""

    def __init__(self, feature_columns, model_dir=None, label_dimension=1,
                 weight_column=None, optimizer="Ftrl", config=None, partitioner=None,
                 warm_start_from=None, loss_reduction=_SUM, sparse_combiner="sum"):
        feature_columns = _common.check_feature_columns(feature_columns)
        _check_combiner(sparse_combiner)
        head = _common.regression_head(label_dimension, weight_column, loss_reduction)

        def _model_fn(features, labels, mode, config):
            return _linear_model_fn(features, labels, mode, head, feature_columns,
                                    optimizer, partitioner, config, sparse_combiner)
        super().__init__(_model_fn, model_dir=model_dir, config=config,
                         warm_start_from=warm_start_from)
