"""The models `tensorflux train --model NAME` builds, from tf.layers.

Each takes a batch of inputs, the number of classes and a `training` boolean tensor
(batch norm and dropout read it) and returns logits. "auto" picks the CNN for images
and the MLP for tables. The image classifiers of the model zoo (`tensorflux.models`,
e.g. resnet20) are accepted too.
"""

from __future__ import annotations

import tensorflux as tf
from tensorflux._src.cli.errors import UsageError


def lenet(inputs, num_classes, training):
    """Two conv blocks (the first batch-normalized), then a dropout-regularized MLP head."""
    if inputs.shape.ndims != 4:
        raise UsageError(f"--model lenet needs images, but the inputs have shape "
                         f"{inputs.shape}; use --model mlp for tables")
    h = tf.layers.conv2d(inputs, 32, 3, padding="same")
    h = tf.nn.relu(tf.layers.batch_normalization(h, training=training))
    h = tf.layers.max_pooling2d(h, 2, 2)
    h = tf.layers.conv2d(h, 64, 3, padding="same", activation=tf.nn.relu)
    h = tf.layers.max_pooling2d(h, 2, 2)
    h = tf.layers.dense(tf.layers.flatten(h), 128, activation=tf.nn.relu)
    h = tf.layers.dropout(h, rate=0.3, training=training)
    return tf.layers.dense(h, num_classes)


def mlp(inputs, num_classes, training):
    """Two hidden ReLU layers with dropout."""
    h = tf.layers.flatten(inputs) if inputs.shape.ndims > 2 else inputs
    for units in (128, 64):
        h = tf.layers.dense(h, units, activation=tf.nn.relu)
        h = tf.layers.dropout(h, rate=0.2, training=training)
    return tf.layers.dense(h, num_classes)


def linear(inputs, num_classes, training):
    """Multinomial logistic regression."""
    del training
    h = tf.layers.flatten(inputs) if inputs.shape.ndims > 2 else inputs
    return tf.layers.dense(h, num_classes)


MODELS = {"lenet": lenet, "mlp": mlp, "linear": linear}


def _zoo_classifiers() -> list:
    from tensorflux import models
    return [n for n in models.names() if models.get(n).kind == "image_classifier"]


def resolve(name: str, data_kind: str) -> str:
    if name == "auto":
        return "lenet" if data_kind == "image" else "mlp"
    if name in MODELS:
        return name
    zoo = _zoo_classifiers()
    if name not in zoo:
        raise UsageError(f"--model {name!r} is unknown; choose one of "
                         f"auto, {', '.join(MODELS)} or a zoo image classifier "
                         f"({', '.join(zoo)})")
    if data_kind != "image":
        raise UsageError(f"--model {name} needs images; use --model mlp for tables")
    return name


def build(name, inputs, num_classes, training):
    if name in MODELS:
        return MODELS[name](inputs, num_classes, training)
    from tensorflux import models
    return models.build(name, inputs, num_classes=num_classes, training=training)
