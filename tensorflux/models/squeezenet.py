"""SqueezeNet 1.1 (Iandola et al. 2016, and the 1.1 revision of the reference code).

    logits = models.build("squeezenet1_1", images)      # images: [N, 224, 224, 3]

A fire module squeezes its input with 1x1 convolutions, then expands with parallel 1x1
and 3x3 convolutions whose outputs are concatenated along channels. Version 1.1 starts
with a 3x3/2 convolution of 64 filters and pools earlier than 1.0, for 2.4x less
computation at the same accuracy. There are no fully connected layers: a 1x1
convolution to `num_classes` channels, ReLU and a global average give the logits
(1,235,496 parameters for 1000 classes). Max pools are 3x3/2 "valid", which matches
the reference's ceil-mode pooling at 224x224.

Variables: `squeezenet1_1/conv1/kernel:0`, `.../fire2/squeeze/kernel:0`,
`.../fire2/expand1x1/...`, `.../fire2/expand3x3/...`, `.../classifier/kernel:0`.
"""

from __future__ import annotations

import dataclasses

import tensorflux as tf
from tensorflux.models.registry import ModelSpec, register

# (name, squeeze, expand 1x1, expand 3x3) per fire module; "pool" marks a max pool.
_V1_1_LAYERS = (
    "pool",
    ("fire2", 16, 64, 64), ("fire3", 16, 64, 64), "pool",
    ("fire4", 32, 128, 128), ("fire5", 32, 128, 128), "pool",
    ("fire6", 48, 192, 192), ("fire7", 48, 192, 192),
    ("fire8", 64, 256, 256), ("fire9", 64, 256, 256),
)


@dataclasses.dataclass(frozen=True)
class SqueezeNetConfig:
    """dropout_rate: dropped before the classifier while training (0.5 in the paper)."""

    version: str = "1.1"
    dropout_rate: float = 0.5
    data_format: str = "channels_last"

    @property
    def channel_axis(self) -> int:
        return 1 if self.data_format == "channels_first" else 3


def _conv(x, filters, kernel_size, config, name, strides=1, padding="same"):
    return tf.layers.conv2d(x, filters, kernel_size, strides=strides, padding=padding,
                            activation=tf.nn.relu, data_format=config.data_format,
                            name=name)


def _fire(x, name, squeeze, expand1x1, expand3x3, config):
    with tf.variable_scope(name):
        x = _conv(x, squeeze, 1, config, "squeeze")
        left = _conv(x, expand1x1, 1, config, "expand1x1")
        right = _conv(x, expand3x3, 3, config, "expand3x3")
        return tf.concat([left, right], axis=config.channel_axis)


def _max_pool(x, config, index):
    return tf.layers.max_pooling2d(x, 3, 2, padding="valid", data_format=config.data_format,
                                   name=f"pool{index}")


def squeezenet(inputs, config, *, num_classes, training=False):
    """Logits [batch, num_classes] of SqueezeNet on NHWC `inputs`."""
    if config.version != "1.1":
        raise ValueError(f"only SqueezeNet 1.1 is implemented, got version {config.version!r}")
    with tf.variable_scope(None, default_name="squeezenet1_1"):
        x = inputs
        if config.data_format == "channels_first":
            x = tf.transpose(x, [0, 3, 1, 2])
        x = _conv(x, 64, 3, config, "conv1", strides=2, padding="valid")
        pools = 0
        for layer in _V1_1_LAYERS:
            if layer == "pool":
                pools += 1
                x = _max_pool(x, config, pools)
            else:
                x = _fire(x, *layer, config)
        x = tf.layers.dropout(x, rate=config.dropout_rate, training=training)
        # The classifier's small initial weights keep the first logits near zero.
        x = tf.layers.conv2d(x, num_classes, 1, activation=tf.nn.relu,
                             data_format=config.data_format, name="classifier",
                             kernel_initializer=tf.random_normal_initializer(stddev=0.01))
        spatial_axes = [2, 3] if config.channel_axis == 1 else [1, 2]
        return tf.reduce_mean(x, spatial_axes, name="logits")


register(ModelSpec(name="squeezenet1_1", family="squeezenet", kind="image_classifier",
                   config=SqueezeNetConfig(), build=squeezenet, input_shape=(224, 224, 3),
                   num_classes=1000))
