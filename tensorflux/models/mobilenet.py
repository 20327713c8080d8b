"""MobileNet v1 and v2: image classifiers built from depthwise-separable convolutions.

    v1  (Howard et al. 2017, arXiv:1704.04861): a 3x3 stem, then 13 depthwise-separable
        layers (3x3 depthwise -> BN -> ReLU, 1x1 pointwise -> BN -> ReLU); the width
        multiplier `depth_multiplier` (the paper's alpha) thins every layer.
    v2  (Sandler et al. 2018, arXiv:1801.04381): inverted residual blocks (1x1 expand
        by `t` -> ReLU6, 3x3 depthwise -> ReLU6, 1x1 linear projection), with a residual
        add when the block keeps its shape; widths are rounded to multiples of 8.

    import tensorflux as tf
    from tensorflux.models import mobilenet

    images = tf.placeholder(tf.float32, [None, 224, 224, 3])
    logits = mobilenet.mobilenet_v2(images, mobilenet.MobileNetV2Config(), num_classes=1000)

Convolutions have no bias (batch norm's beta plays that role); only the classifier
does. Trainable parameters at 224x224x3 with 1000 classes match the published
counts: v1 (1.0) 4,231,976, v2 (1.0) 3,504,872. Variable names follow the Keras
reference layers (`conv_dw_1/depthwise_kernel`, `block_3_expand_BN/gamma`, ...) under
the model's scope (`MobilenetV1/`, `MobilenetV2/`).
"""

from __future__ import annotations

import dataclasses

import tensorflux as tf
from tensorflux.models._classifier import check_labels, check_mode, classifier_spec
from tensorflux.models.registry import ModelSpec, register, specs
from tensorflux.regularizers import l2_regularizer

__all__ = ["MobileNetV1Config", "MobileNetV2Config", "make_divisible", "mobilenet_v1",
           "mobilenet_v2", "model_fn"]


# ----------------------------------------------------------------------------- configs

@dataclasses.dataclass(frozen=True)
class MobileNetV1Config:
    depth_multiplier: float = 1.0       # alpha: scales every layer's width
    min_depth: int = 8                  # no layer gets thinner than this
    stem_filters: int = 32
    # (stride, pointwise filters) of each depthwise-separable layer: Table 1 of the paper.
    layers: tuple = ((1, 64), (2, 128), (1, 128), (2, 256), (1, 256), (2, 512),
                     (1, 512), (1, 512), (1, 512), (1, 512), (1, 512),
                     (2, 1024), (1, 1024))
    dropout_rate: float = 1e-3          # before the classifier, as the reference does
    batch_norm_momentum: float = 0.997
    batch_norm_epsilon: float = 1e-3
    weight_decay: float = 4e-5          # L2 on conv/dense kernels (not depthwise ones)


@dataclasses.dataclass(frozen=True)
class MobileNetV2Config:
    depth_multiplier: float = 1.0       # alpha: scales widths, rounded to `round_to`
    round_to: int = 8
    stem_filters: int = 32
    # (expansion t, output channels c, repeats n, first stride s): Table 2 of the paper.
    # Every stage but the first expands by 6.
    blocks: tuple = ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
                     (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1))
    last_filters: int = 1280            # the final 1x1 conv; alpha > 1 widens it only
    dropout_rate: float = 0.0
    batch_norm_momentum: float = 0.999
    batch_norm_epsilon: float = 1e-3
    weight_decay: float = 4e-5


# ----------------------------------------------------------------------------- shared layers

def make_divisible(value, divisor=8, min_value=None):
    """`value` rounded to the nearest multiple of `divisor` (at least `min_value`),
    never more than 10% below `value`: the reference implementation's channel rule."""
    min_value = divisor if min_value is None else min_value
    rounded = max(min_value, int(value + divisor / 2) // divisor * divisor)
    if rounded < 0.9 * value:
        rounded += divisor
    return rounded


def _kernel_init():
    # He initialization: every conv is followed by batch norm and a ReLU-like activation.
    return tf.variance_scaling_initializer(scale=2.0)


def _l2(weight_decay):
    # Regularizers add to REGULARIZATION_LOSSES; `model_fn` sums them into the loss.
    return l2_regularizer(weight_decay) if weight_decay else None


def _conv(x, filters, kernel_size, strides, name, config):
    return tf.layers.conv2d(x, filters, kernel_size, strides=strides, padding="same",
                            use_bias=False, kernel_initializer=_kernel_init(),
                            kernel_regularizer=_l2(config.weight_decay), name=name)


def _depthwise_conv(x, strides, name):
    """3x3 depthwise conv, one filter per input channel; no bias, no weight decay (the
    reference leaves depthwise kernels unregularized: they hold few parameters)."""
    channels = x.shape[-1].value
    with tf.variable_scope(name):
        kernel = tf.get_variable("depthwise_kernel", [3, 3, channels, 1],
                                 initializer=_kernel_init())
        return tf.nn.depthwise_conv2d(x, kernel, [1, strides, strides, 1], "SAME")


def _batch_norm(x, name, config, training):
    return tf.layers.batch_normalization(x, momentum=config.batch_norm_momentum,
                                         epsilon=config.batch_norm_epsilon,
                                         training=training, name=name)


def _classifier(x, num_classes, config, training):
    """Global average pool -> dropout -> dense logits.  (N, H, W, C) -> (N, classes)."""
    x = tf.reduce_mean(x, axis=[1, 2], name="global_pool")
    if config.dropout_rate:
        x = tf.layers.dropout(x, rate=config.dropout_rate, training=training)
    return tf.layers.dense(x, num_classes, kernel_initializer=tf.glorot_uniform_initializer(),
                           kernel_regularizer=_l2(config.weight_decay), name="Logits")


# ----------------------------------------------------------------------------- v1

def _v1_width(filters, config):
    return max(int(filters * config.depth_multiplier), config.min_depth)


def _separable_block(x, filters, strides, index, config, training):
    """Depthwise 3x3 -> BN -> ReLU, then pointwise 1x1 -> BN -> ReLU."""
    x = _depthwise_conv(x, strides, f"conv_dw_{index}")
    x = tf.nn.relu(_batch_norm(x, f"conv_dw_{index}_bn", config, training))
    x = _conv(x, filters, 1, 1, f"conv_pw_{index}", config)
    return tf.nn.relu(_batch_norm(x, f"conv_pw_{index}_bn", config, training))


def mobilenet_v1(inputs, config=MobileNetV1Config(), *, num_classes=1000, training=False):
    """MobileNet v1 on NHWC `inputs`; returns logits (N, num_classes)."""
    with tf.variable_scope("MobilenetV1"):
        x = _conv(inputs, _v1_width(config.stem_filters, config), 3, 2, "conv1", config)
        x = tf.nn.relu(_batch_norm(x, "conv1_bn", config, training))   # (N, H/2, W/2, 32a)
        for index, (strides, filters) in enumerate(config.layers, start=1):
            x = _separable_block(x, _v1_width(filters, config), strides, index, config,
                                 training)
        return _classifier(x, num_classes, config, training)          # from (N, H/32, W/32, 1024a)


# ----------------------------------------------------------------------------- v2

def _inverted_residual(x, expansion, filters, strides, index, config, training):
    """1x1 expand -> ReLU6, 3x3 depthwise -> ReLU6, 1x1 project (linear: a ReLU on the
    narrow bottleneck would destroy information, the paper's argument), plus the input
    when the shape is kept."""
    in_channels = x.shape[-1].value
    prefix = f"block_{index}_" if index else "expanded_conv_"
    shortcut = x
    if expansion != 1:
        x = _conv(x, expansion * in_channels, 1, 1, prefix + "expand", config)
        x = tf.nn.relu6(_batch_norm(x, prefix + "expand_BN", config, training))
    x = _depthwise_conv(x, strides, prefix + "depthwise")
    x = tf.nn.relu6(_batch_norm(x, prefix + "depthwise_BN", config, training))
    x = _conv(x, filters, 1, 1, prefix + "project", config)
    x = _batch_norm(x, prefix + "project_BN", config, training)
    if strides == 1 and in_channels == filters:
        x = tf.add(shortcut, x, name=prefix + "add")
    return x


def _v2_last_filters(config):
    # The paper keeps the last conv at full width for alpha < 1 (it matters for accuracy).
    if config.depth_multiplier > 1.0:
        return make_divisible(config.last_filters * config.depth_multiplier, config.round_to)
    return config.last_filters


def mobilenet_v2(inputs, config=MobileNetV2Config(), *, num_classes=1000, training=False):
    """MobileNet v2 on NHWC `inputs`; returns logits (N, num_classes)."""
    alpha, divisor = config.depth_multiplier, config.round_to
    with tf.variable_scope("MobilenetV2"):
        x = _conv(inputs, make_divisible(config.stem_filters * alpha, divisor), 3, 2,
                  "Conv1", config)
        x = tf.nn.relu6(_batch_norm(x, "bn_Conv1", config, training))  # (N, H/2, W/2, 32a)
        index = 0
        for expansion, channels, repeats, first_stride in config.blocks:
            filters = make_divisible(int(channels * alpha), divisor)
            for repeat in range(repeats):
                strides = first_stride if repeat == 0 else 1
                x = _inverted_residual(x, expansion, filters, strides, index, config,
                                       training)
                index += 1
        x = _conv(x, _v2_last_filters(config), 1, 1, "Conv_1", config)
        x = tf.nn.relu6(_batch_norm(x, "Conv_1_bn", config, training))  # (N, H/32, W/32, 1280)
        return _classifier(x, num_classes, config, training)


# ----------------------------------------------------------------------------- model_fn

_BUILDERS = {MobileNetV1Config: mobilenet_v1, MobileNetV2Config: mobilenet_v2}


def model_fn(features, labels, mode, params):
    """Estimator-style model function.

    features: NHWC float images; labels: int class ids (N,) (unused for "infer");
    mode: "train", "eval" or "infer"; params: dict with optional keys
      model ("mobilenet_v1" | "mobilenet_v2" or any registered MobileNet name),
      config (a MobileNetV1Config / MobileNetV2Config replacing the model's),
      num_classes (1000), learning_rate (0.045), decay (0.9), momentum (0.9).
    Returns a tf.estimator.EstimatorSpec: predictions "classes", "probabilities" and
    "logits"; outside "infer" the loss (softmax cross-entropy + the kernels' L2 weight
    decay) and eval metrics "accuracy" / "top_5_accuracy"; for "train" a train_op
    (RMSProp, as both papers train) that runs after the batch-norm moving-average updates.
    """
    check_mode(mode)
    check_labels(labels, mode, "mobilenet")
    spec = specs()[params.get("model", "mobilenet_v1")]
    config = params.get("config", spec.config)
    training = mode == "train"
    logits = _BUILDERS[type(config)](features, config,
                                     num_classes=params.get("num_classes", spec.num_classes),
                                     training=training)
    return classifier_spec(
        logits, labels, mode, params=params,
        make_optimizer=lambda: tf.train.RMSPropOptimizer(
            params.get("learning_rate", 0.045), decay=params.get("decay", 0.9),
            momentum=params.get("momentum", 0.9)))


# ----------------------------------------------------------------------------- registry

def _register(name, build, config):
    register(ModelSpec(name=name, family="mobilenet", kind="image_classifier", config=config,
                       build=build, input_shape=(224, 224, 3), num_classes=1000))


_register("mobilenet_v1", mobilenet_v1, MobileNetV1Config())
_register("mobilenet_v1_050", mobilenet_v1, MobileNetV1Config(depth_multiplier=0.5))
_register("mobilenet_v1_025", mobilenet_v1, MobileNetV1Config(depth_multiplier=0.25))
_register("mobilenet_v2", mobilenet_v2, MobileNetV2Config())
_register("mobilenet_v2_035", mobilenet_v2, MobileNetV2Config(depth_multiplier=0.35))
_register("mobilenet_v2_140", mobilenet_v2, MobileNetV2Config(depth_multiplier=1.4))
