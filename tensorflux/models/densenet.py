"""DenseNet-BC (Huang et al. 2017, arXiv:1608.06993): every layer of a dense block sees
the concatenation of all earlier feature maps in that block.

    stem        7x7/2 conv (2k filters) -> BN -> ReLU -> 3x3/2 max pool
    dense block n layers of  BN -> ReLU -> 1x1 conv (4k, the "B"ottleneck)
                             -> BN -> ReLU -> 3x3 conv (k), concatenated to the input
    transition  BN -> ReLU -> 1x1 conv (channels * compression, the "C") -> 2x2/2 avg pool
    head        BN -> ReLU -> global average pool -> dense logits

k is the growth rate (32). DenseNet-121/169/201 differ only in the layers per block:
(6, 12, 24, 16), (6, 12, 32, 32), (6, 12, 48, 32). Convolutions have no bias (the
following batch norm's beta plays that role); only the classifier does. At 224x224x3
with 1000 classes DenseNet-121 has 7,978,856 trainable parameters, 169 has 14,149,480
and 201 has 20,013,928, the published counts.

    import tensorflux as tf
    from tensorflux.models import densenet

    images = tf.placeholder(tf.float32, [None, 224, 224, 3])
    logits = densenet.densenet(images, densenet.DenseNetConfig(), num_classes=1000)
"""

from __future__ import annotations

import dataclasses

import tensorflux as tf
from tensorflux.models._classifier import check_labels, check_mode, classifier_spec
from tensorflux.models.registry import ModelSpec, register, specs
from tensorflux.regularizers import l2_regularizer

__all__ = ["DenseNetConfig", "densenet", "model_fn"]


@dataclasses.dataclass(frozen=True)
class DenseNetConfig:
    blocks: tuple = (6, 12, 24, 16)     # layers per dense block (DenseNet-121)
    growth_rate: int = 32               # k: channels each layer adds
    bottleneck_width: int = 4           # the 1x1 bottleneck conv has 4k filters
    compression: float = 0.5            # theta: transitions keep this share of channels
    stem_filters: int = 64              # 2k
    dropout_rate: float = 0.0           # after each conv inside a dense layer (paper: 0.2
                                        # only without data augmentation)
    batch_norm_momentum: float = 0.99
    batch_norm_epsilon: float = 1.001e-5
    weight_decay: float = 1e-4          # L2 on conv/dense kernels, as the paper trains
    scope: str = "densenet121"


def _kernel_init():
    # He initialization (the paper's choice): every conv follows a ReLU.
    return tf.variance_scaling_initializer(scale=2.0)


def _bn_relu_conv(x, filters, kernel_size, config, training, name):
    """The pre-activation unit every DenseNet conv sits in: BN -> ReLU -> conv."""
    with tf.variable_scope(name):
        x = tf.layers.batch_normalization(x, momentum=config.batch_norm_momentum,
                                          epsilon=config.batch_norm_epsilon,
                                          training=training, name="BatchNorm")
        x = tf.nn.relu(x)
        regularizer = l2_regularizer(config.weight_decay) if config.weight_decay else None
        x = tf.layers.conv2d(x, filters, kernel_size, padding="same", use_bias=False,
                             kernel_initializer=_kernel_init(),
                             kernel_regularizer=regularizer, name="Conv")
        if config.dropout_rate:
            x = tf.layers.dropout(x, rate=config.dropout_rate, training=training)
        return x


def _dense_layer(x, config, training, name):
    """One bottleneck layer; returns its input with k new channels appended.
    (N, H, W, C) -> (N, H, W, C + k)."""
    with tf.variable_scope(name):
        y = _bn_relu_conv(x, config.bottleneck_width * config.growth_rate, 1, config,
                          training, "x1")
        y = _bn_relu_conv(y, config.growth_rate, 3, config, training, "x2")
        return tf.concat([x, y], axis=3)


def _dense_block(x, layers, config, training, name):
    with tf.variable_scope(name):
        for i in range(1, layers + 1):
            x = _dense_layer(x, config, training, f"conv_block{i}")
        return x


def _transition(x, config, training, name):
    """Compresses channels and halves the resolution. (N, H, W, C) -> (N, H/2, W/2, C*theta)."""
    with tf.variable_scope(name):
        filters = int(x.shape[-1].value * config.compression)
        x = _bn_relu_conv(x, filters, 1, config, training, "blk")
        return tf.layers.average_pooling2d(x, 2, 2, name="AvgPool")


def _stem(x, config, training):
    with tf.variable_scope("conv1"):
        regularizer = l2_regularizer(config.weight_decay) if config.weight_decay else None
        x = tf.layers.conv2d(x, config.stem_filters, 7, strides=2, padding="same",
                             use_bias=False, kernel_initializer=_kernel_init(),
                             kernel_regularizer=regularizer, name="Conv")
        x = tf.layers.batch_normalization(x, momentum=config.batch_norm_momentum,
                                          epsilon=config.batch_norm_epsilon,
                                          training=training, name="BatchNorm")
        x = tf.nn.relu(x)
    return tf.layers.max_pooling2d(x, 3, 2, padding="same", name="pool1")  # (N, H/4, W/4, 2k)


def densenet(inputs, config=DenseNetConfig(), *, num_classes=1000, training=False):
    """DenseNet-BC on NHWC `inputs`; returns logits (N, num_classes)."""
    with tf.variable_scope(config.scope):
        x = _stem(inputs, config, training)
        for b, layers in enumerate(config.blocks, start=1):
            x = _dense_block(x, layers, config, training, f"dense_block{b}")
            if b < len(config.blocks):      # no transition after the last block
                x = _transition(x, config, training, f"transition_block{b}")
        with tf.variable_scope("final_block"):
            x = tf.layers.batch_normalization(x, momentum=config.batch_norm_momentum,
                                              epsilon=config.batch_norm_epsilon,
                                              training=training, name="BatchNorm")
            x = tf.nn.relu(x)
        x = tf.reduce_mean(x, axis=[1, 2], name="global_pool")      # (N, C)
        regularizer = l2_regularizer(config.weight_decay) if config.weight_decay else None
        return tf.layers.dense(x, num_classes, kernel_regularizer=regularizer, name="logits")


def model_fn(features, labels, mode, params):
    """Estimator-style model function.

    features: NHWC float images; labels: int class ids (N,) (unused for "infer");
    mode: "train", "eval" or "infer"; params: dict with optional keys
      model ("densenet121" | "densenet169" | "densenet201"), config (a DenseNetConfig
      replacing the model's), num_classes (1000), learning_rate (0.1), momentum (0.9).
    Returns a tf.estimator.EstimatorSpec: predictions "classes", "probabilities" and
    "logits"; outside "infer" the loss (softmax cross-entropy + the kernels' L2 weight
    decay) and eval metrics "accuracy" / "top_5_accuracy"; for "train" a train_op
    (Nesterov momentum SGD, as the paper trains) that runs after the batch-norm updates.
    """
    check_mode(mode)
    check_labels(labels, mode, "densenet")
    spec = specs()[params.get("model", "densenet121")]
    training = mode == "train"
    logits = densenet(features, params.get("config", spec.config),
                      num_classes=params.get("num_classes", spec.num_classes),
                      training=training)
    return classifier_spec(
        logits, labels, mode, params=params,
        make_optimizer=lambda: tf.train.MomentumOptimizer(
            params.get("learning_rate", 0.1), params.get("momentum", 0.9),
            use_nesterov=True))


def _register(name, blocks):
    register(ModelSpec(name=name, family="densenet", kind="image_classifier",
                       config=DenseNetConfig(blocks=blocks, scope=name), build=densenet,
                       input_shape=(224, 224, 3), num_classes=1000))


_register("densenet121", (6, 12, 24, 16))
_register("densenet169", (6, 12, 32, 32))
_register("densenet201", (6, 12, 48, 32))
