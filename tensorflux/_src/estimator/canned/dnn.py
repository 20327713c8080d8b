"""DNNClassifier / DNNRegressor (TF 1.15 v1): input_layer over the feature columns, then
fully connected layers, in variable scope 'dnn' with TF's names:
dnn/input_from_feature_columns/input_layer/..., dnn/hiddenlayer_<i>/{kernel,bias},
dnn/hiddenlayer_<i>/batchnorm_<i>/{gamma,beta,moving_mean,moving_variance},
dnn/logits/{kernel,bias}."""

from tensorflux._src.estimator.canned import _common, optimizers
from tensorflux._src.estimator.estimator import Estimator
from tensorflux._src.estimator.model_fn import ModeKeys
from tensorflux._src.feature_column import models as fc_models
from tensorflux._src.layers import core as core_layers
from tensorflux._src.layers import normalization
from tensorflux._src.ops.linalg import linalg_ops
from tensorflux._src.ops.nn import nn_ops
from tensorflux._src.ops.state import init_ops
from tensorflux._src.summary import summary_ops
from tensorflux._src.train import variable_scope as vs

_LEARNING_RATE = 0.05  # TF's default for a named DNN optimizer
_SUM = "weighted_sum"


def _dense(net, units, activation):
    # Glorot-uniform kernel and zero bias, TF's dense layer defaults; created with
    # get_variable in the caller's scope so the names are exactly <scope>/kernel, /bias.
    n_in = net.shape.as_list()[-1]
    kernel = vs.get_variable("kernel", [n_in, units],
                             initializer=init_ops.glorot_uniform_initializer())
    bias = vs.get_variable("bias", [units], initializer=init_ops.zeros_initializer())
    out = nn_ops.bias_add(linalg_ops.matmul(net, kernel), bias)
    return activation(out) if activation is not None else out


def _layer_summary(value, tag):
    summary_ops.scalar(f"{tag}/fraction_of_zero_values", nn_ops.zero_fraction(value))
    summary_ops.histogram(f"{tag}/activation", value)


def dnn_logits(features, mode, units, hidden_units, feature_columns, activation_fn,
               dropout, input_layer_partitioner, batch_norm):
    """[batch, units] logits of the DNN tower (call inside the 'dnn' variable scope)."""
    training = mode == ModeKeys.TRAIN
    with vs.variable_scope("input_from_feature_columns",
                           partitioner=input_layer_partitioner):
        net = fc_models.input_layer(features, list(feature_columns))
    for i, n in enumerate(hidden_units):
        with vs.variable_scope(f"hiddenlayer_{i}") as scope:
            net = _dense(net, n, activation_fn)
            if dropout is not None and training:
                net = core_layers.dropout(net, rate=dropout, training=True)
            if batch_norm:
                # TF's canned DNN uses momentum 0.999; moving stats update in TRAIN only.
                net = normalization.batch_normalization(net, momentum=0.999, training=training,
                                                    name=f"batchnorm_{i}")
        _layer_summary(net, scope.name)
    with vs.variable_scope("logits") as scope:
        logits = _dense(net, units, None)
    _layer_summary(logits, scope.name)
    return logits


def _check_hidden_units(hidden_units):
    if not hidden_units or any(int(u) <= 0 for u in hidden_units):
        raise ValueError("hidden_units must be a non-empty list of positive layer sizes; "
                         f"got {hidden_units!r}")
    return [int(u) for u in hidden_units]


def _check_dropout(dropout):
    if dropout is not None and not 0.0 <= dropout < 1.0:
        raise ValueError(f"dropout must be None or in [0, 1); got {dropout!r}")


def _dnn_model_fn(features, labels, mode, head, hidden_units, feature_columns,
                  optimizer="Adagrad", activation_fn=None, dropout=None,
                  input_layer_partitioner=None, config=None, batch_norm=False):
    _common.check_features(features)
    optimizer = optimizers.get_optimizer_instance(optimizer, learning_rate=_LEARNING_RATE)
    partitioner = _common.default_partitioner(None, config, min_slice_size=256 << 10)
    with vs.variable_scope("dnn", partitioner=partitioner):
        input_layer_partitioner = _common.default_partitioner(input_layer_partitioner,
                                                              config)
        logits = dnn_logits(features, mode, head.logits_dimension, hidden_units,
                            feature_columns, activation_fn or nn_ops.relu, dropout,
                            input_layer_partitioner, batch_norm)
    return head.create_estimator_spec(features=features, mode=mode, labels=labels,
                                      optimizer=optimizer, logits=logits)


class _DNNBase(Estimator):
    def __init__(self, head, hidden_units, feature_columns, model_dir, optimizer,
                 activation_fn, dropout, input_layer_partitioner, config, warm_start_from,
                 batch_norm):
        hidden_units = _check_hidden_units(hidden_units)
        feature_columns = _common.check_feature_columns(feature_columns)
        _check_dropout(dropout)

        def _model_fn(features, labels, mode, config):
            return _dnn_model_fn(features, labels, mode, head, hidden_units,
                                 feature_columns, optimizer, activation_fn, dropout,
                                 input_layer_partitioner, config, batch_norm)
        super().__init__(_model_fn, model_dir=model_dir, config=config,
                         warm_start_from=warm_start_from)


class DNNClassifier(_DNNBase):
    """A feed-forward network classifier (binary or multi-class by n_classes)."""

    def __init__(self, hidden_units, feature_columns, model_dir=None, n_classes=2,
                 weight_column=None, label_vocabulary=None, optimizer="Adagrad",
                 activation_fn=None, dropout=None, input_layer_partitioner=None,
                 config=None, warm_start_from=None, loss_reduction=_SUM,
                 batch_norm=False):
        head = _common.classifier_head(n_classes, weight_column, label_vocabulary,
                                       loss_reduction)
        super().__init__(head, hidden_units, feature_columns, model_dir, optimizer,
                         activation_fn, dropout, input_layer_partitioner, config,
                         warm_start_from, batch_norm)


class DNNRegressor(_DNNBase):
    """A feed-forward network regressor (`label_dimension` outputs)."""

    def __init__(self, hidden_units, feature_columns, model_dir=None, label_dimension=1,
                 weight_column=None, optimizer="Adagrad", activation_fn=None, dropout=None,
                 input_layer_partitioner=None, config=None, warm_start_from=None,
                 loss_reduction=_SUM, batch_norm=False):
        head = _common.regression_head(label_dimension, weight_column, loss_reduction)
        super().__init__(head, hidden_units, feature_columns, model_dir, optimizer,
                         activation_fn, dropout, input_layer_partitioner, config,
                         warm_start_from, batch_norm)
