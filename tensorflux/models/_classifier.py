"""The end every image classifier's model_fn shares: an `EstimatorSpec`, as the
reference TF/TPU model_fns returned, so the zoo runs under `tf.estimator.Estimator`;
under TPUEstimator (which puts "use_tpu" in params) a `TPUEstimatorSpec` with
`eval_metrics` and, on the shards, a `CrossShardOptimizer`, as the reference
resnet_main did."""

from __future__ import annotations

import tensorflux as tf

MODES = ("train", "eval", "infer")   # tf.estimator.ModeKeys' values


def check_mode(mode):
    if mode not in MODES:
        raise ValueError(f"mode must be 'train', 'eval' or 'infer' (tf.estimator.ModeKeys); "
                         f"received mode={mode!r}")


def check_labels(labels, mode, model):
    if labels is None and mode != "infer":
        raise ValueError(f"{model} model_fn: mode {mode!r} needs labels (int class ids of "
                         f"shape [batch]); received labels=None. Only 'infer' runs without.")


# What TPUEstimator adds to params; not model settings.
TPU_PARAMS = ("batch_size", "use_tpu", "context")


def model_params(params):
    """params without TPUEstimator's keys."""
    return {k: v for k, v in (params or {}).items() if k not in TPU_PARAMS}


def _metric_fn(labels, logits):
    classes = tf.argmax(logits, axis=-1)
    metrics = {"accuracy": tf.metrics.accuracy(labels, classes)}
    if logits.shape.as_list()[-1] >= 5:
        metrics["top_5_accuracy"] = tf.metrics.mean(tf.nn.in_top_k(
            tf.cast(logits, tf.float32), tf.cast(labels, tf.int32), 5))
    return metrics


def classifier_spec(logits, labels, mode, make_optimizer, loss=None, params=None,
                    var_list=None, update_ops=None):
    """A `tf.estimator.EstimatorSpec` for a classifier's `logits`.

    predictions: "classes" (argmax), "probabilities" (softmax) and "logits", in every
    mode. Outside "infer": `loss` (default: sparse softmax cross-entropy plus the graph's
    regularization losses, i.e. the kernels' weight decay) and the eval metrics
    "accuracy" and, with 5 or more classes, "top_5_accuracy". In "train": a step of
    `make_optimizer()` that runs after `update_ops` (default: the graph's UPDATE_OPS,
    i.e. the batch-norm updates, so the moving statistics move with training) and
    updates `var_list` (default: every trainable variable). With "use_tpu" in `params` (TPUEstimator): a TPUEstimatorSpec whose
    eval_metrics are (metric_fn, [labels, logits]); params["use_tpu"] True wraps the
    optimizer in tf.contrib.tpu.CrossShardOptimizer."""
    tpu = params is not None and "use_tpu" in params
    predictions = {"classes": tf.argmax(logits, axis=-1),
                   "probabilities": tf.nn.softmax(logits), "logits": logits}
    if mode == "infer":
        if tpu:
            return tf.contrib.tpu.TPUEstimatorSpec(mode, predictions=predictions)
        return tf.estimator.EstimatorSpec(mode, predictions=predictions)
    if loss is None:
        cross_entropy = tf.losses.sparse_softmax_cross_entropy(labels, logits)
        loss = tf.add(cross_entropy, tf.losses.get_regularization_loss(), name="loss")
    train_op = None
    if mode == "train":
        optimizer = make_optimizer()
        if tpu and params["use_tpu"]:
            optimizer = tf.contrib.tpu.CrossShardOptimizer(optimizer)
        # Created outside the dependency block below: its initializer must not wait for
        # a training batch.
        global_step = tf.train.get_or_create_global_step()
        if update_ops is None:
            update_ops = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
        with tf.control_dependencies(update_ops):
            train_op = optimizer.minimize(loss, global_step=global_step, var_list=var_list)
    if tpu:
        return tf.contrib.tpu.TPUEstimatorSpec(mode, loss=loss, train_op=train_op,
                                               eval_metrics=(_metric_fn, [labels, logits]))
    return tf.estimator.EstimatorSpec(mode, predictions=predictions, loss=loss,
                                      train_op=train_op,
                                      eval_metric_ops=_metric_fn(labels, logits))
