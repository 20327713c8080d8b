"""BaselineClassifier / BaselineRegressor (TF 1.15 v1): ignore the features and learn
one bias per output (variable baseline/bias), i.e. the label prior / label mean."""

from tensorflux._src.estimator.canned import _common, optimizers
from tensorflux._src.estimator.estimator import Estimator
from tensorflux._src.framework import dtypes, sparse_tensor
from tensorflux._src.ops.array import array_ops, generator_ops
from tensorflux._src.ops.math import math_ops
from tensorflux._src.ops.state import init_ops
from tensorflux._src.train import variable_scope as vs

_LEARNING_RATE = 0.3  # TF's default for a named baseline optimizer
_SUM = "weighted_sum"


def _weight_key(weight_column):
    if weight_column is None or isinstance(weight_column, str):
        return weight_column
    return weight_column.key


def _baseline_model_fn(features, labels, mode, head, optimizer, weight_column, config):
    _common.check_features(features)
    if not features:
        raise ValueError("features should not be empty: the baseline takes its batch "
                         "size from the first feature.")
    optimizer = optimizers.get_optimizer_instance(optimizer, learning_rate=_LEARNING_RATE)
    wkey = _weight_key(weight_column)
    # The batch size comes from a feature that is not the weight column (TF skips the
    # weight so serving does not need it).
    keys = [k for k in sorted(features) if k != wkey] or sorted(features)
    feature = features[keys[0]]
    batch = (feature.dense_shape[0] if isinstance(feature, sparse_tensor.SparseTensor)
             else array_ops.shape(feature)[0])
    n = head.logits_dimension
    with vs.variable_scope("baseline"):
        bias = vs.get_variable("bias", shape=[n], initializer=init_ops.zeros_initializer())
        logits = bias * generator_ops.ones(array_ops.stack([math_ops.cast(batch, dtypes.int32), n]))
    return head.create_estimator_spec(features=features, mode=mode, labels=labels,
                                      optimizer=optimizer, logits=logits)


class BaselineClassifier(Estimator):
    """Predicts the training labels' class distribution, whatever the features."""

    def __init__(self, model_dir=None, n_classes=2, weight_column=None,
                 label_vocabulary=None, optimizer="Ftrl", config=None,
                 loss_reduction=_SUM):
        head = _common.classifier_head(n_classes, weight_column, label_vocabulary,
                                       loss_reduction)

        def _model_fn(features, labels, mode, config):
            return _baseline_model_fn(features, labels, mode, head, optimizer,
                                      weight_column, config)
        super().__init__(_model_fn, model_dir=model_dir, config=config)


class BaselineRegressor(Estimator):
    """Predicts the training labels' mean, whatever the features."""

    def __init__(self, model_dir=None, label_dimension=1, weight_column=None,
                 optimizer="Ftrl", config=None, loss_reduction=_SUM):
        head = _common.regression_head(label_dimension, weight_column, loss_reduction)

        def _model_fn(features, labels, mode, config):
            return _baseline_model_fn(features, labels, mode, head, optimizer,
                                      weight_column, config)
        super().__init__(_model_fn, model_dir=model_dir, config=config)
