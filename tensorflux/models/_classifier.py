"""The end every image classifier's model_fn shares (loss, batch-norm-aware train op)."""

from __future__ import annotations

import tensorflux as tf

MODES = ("train", "eval", "infer")


def check_mode(mode):
    if mode not in MODES:
        raise ValueError(f"mode must be 'train', 'eval' or 'infer'; received mode={mode!r}")


def classifier_outputs(logits, labels, mode, make_optimizer):
    """{"logits", "predictions"}; outside "infer" also "loss" (sparse softmax
    cross-entropy plus the graph's regularization losses, i.e. the kernels' weight
    decay); in "train" also "train_op", a step of `make_optimizer()` that runs after
    the batch-norm updates (UPDATE_OPS), so the moving statistics move with training."""
    out = {"logits": logits, "predictions": tf.argmax(logits, axis=-1)}
    if mode == "infer":
        return out
    cross_entropy = tf.losses.sparse_softmax_cross_entropy(labels, logits)
    out["loss"] = tf.add(cross_entropy, tf.losses.get_regularization_loss(), name="loss")
    if mode == "train":
        optimizer = make_optimizer()
        with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS)):
            out["train_op"] = optimizer.minimize(
                out["loss"], global_step=tf.train.get_or_create_global_step())
    return out
