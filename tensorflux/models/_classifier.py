"""The end every image classifier's model_fn shares: an `EstimatorSpec`, as the
reference TF/TPU model_fns returned, so the zoo runs under `tf.estimator.Estimator`."""

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


def classifier_spec(logits, labels, mode, make_optimizer, loss=None, scope=None):
    """A `tf.estimator.EstimatorSpec` for a classifier's `logits`.

    predictions: "classes" (argmax), "probabilities" (softmax) and "logits", in every
    mode. Outside "infer": `loss` (default: sparse softmax cross-entropy plus the graph's
    regularization losses, i.e. the kernels' weight decay) and the eval metrics
    "accuracy" and, with 5 or more classes, "top_5_accuracy". In "train": a step of
    `make_optimizer()` that runs after the batch-norm updates (UPDATE_OPS) of `scope`
    (all when None) and updates its trainable variables, so the moving statistics move
    with training."""
    classes = tf.argmax(logits, axis=-1)
    predictions = {"classes": classes, "probabilities": tf.nn.softmax(logits),
                   "logits": logits}
    if mode == "infer":
        return tf.estimator.EstimatorSpec(mode, predictions=predictions)
    if loss is None:
        cross_entropy = tf.losses.sparse_softmax_cross_entropy(labels, logits)
        loss = tf.add(cross_entropy, tf.losses.get_regularization_loss(), name="loss")
    metrics = {"accuracy": tf.metrics.accuracy(labels, classes)}
    if logits.shape.as_list()[-1] >= 5:
        metrics["top_5_accuracy"] = tf.metrics.mean(tf.nn.in_top_k(
            tf.cast(logits, tf.float32), tf.cast(labels, tf.int32), 5))
    train_op = None
    if mode == "train":
        optimizer = make_optimizer()
        # Created outside the dependency block below: its initializer must not wait for
        # a training batch.
        global_step = tf.train.get_or_create_global_step()
        with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS, scope)):
            train_op = optimizer.minimize(loss, global_step=global_step,
                                          var_list=tf.trainable_variables(scope))
    return tf.estimator.EstimatorSpec(mode, predictions=predictions, loss=loss,
                                      train_op=train_op, eval_metric_ops=metrics)
