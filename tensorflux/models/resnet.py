"""ResNet: the ImageNet ResNets v1.5 (18/34/50/101/152) and the CIFAR ResNets (20 ... 110).

    logits = models.build("resnet50", images, training=True)     # images: [N, 224, 224, 3]
    spec = model_fn(images, labels, "train", {"model": "resnet20"})  # an EstimatorSpec
    maps = feature_maps(images, depth=50)                          # C3, C4, C5 for an FPN

ImageNet models follow He et al. 2016 ("Deep Residual Learning") with the v1.5 change
of the reference TF/TPU implementations: a bottleneck block downsamples in its 3x3 conv,
not in its first 1x1 conv. Convolutions have no bias (batch norm follows each), strided
convolutions pad explicitly ("fixed padding") so the output does not depend on whether
the input size is even, and the last batch norm of every residual block starts with
gamma = 0 (Goyal et al. 2017) so every block starts as the identity.

CIFAR models follow section 4.2 of the paper: a 3x3 stem, three stages of n basic
blocks with 16/32/64 channels (depth = 6n + 2) and option-A shortcuts: where a block
halves the resolution and doubles the channels, the shortcut subsamples by 2 and pads
the new channels with zeros, so it has no parameters. That is what gives the published
0.27M parameters for ResNet-20 (269,722 here; projection shortcuts would give 272,474).
`cifar_shortcut="projection"` switches to option B.

Variables are named per block, TF1 style: `resnet50/stage2/block1/conv2/kernel:0`,
`.../bn2/gamma:0`, `.../shortcut/conv/kernel:0`, then `resnet50/logits/kernel:0`.
"""

from __future__ import annotations

import dataclasses

import tensorflux as tf
from tensorflux.models._classifier import (check_labels, check_mode, classifier_spec,
                                           model_params)
from tensorflux.models.registry import ModelSpec, register, specs

# Blocks per stage for each standard depth.
_IMAGENET_STAGES = {
    18: ("basic", (2, 2, 2, 2)),
    34: ("basic", (3, 4, 6, 3)),
    50: ("bottleneck", (3, 4, 6, 3)),
    101: ("bottleneck", (3, 4, 23, 3)),
    152: ("bottleneck", (3, 8, 36, 3)),
    200: ("bottleneck", (3, 24, 36, 3)),
}
_BOTTLENECK_EXPANSION = 4


@dataclasses.dataclass(frozen=True)
class ResNetConfig:
    """One ResNet. The defaults are ResNet-50 with the TPU recipe's batch norm and decay.

    depth:     the network's depth; fixes the blocks per stage (ImageNet: a standard
               depth; CIFAR: any 6n + 2).
    variant:   "imagenet" (7x7/2 stem + max pool, four stages) or "cifar" (3x3 stem,
               three stages).
    block:     "basic" or "bottleneck"; None takes the paper's choice for the depth.
    width:     channels of the first stage; each later stage doubles them.
    cifar_shortcut: "zero_pad" (option A) or "projection" (option B, 1x1 conv + BN);
               ImageNet models always project.
    """

    depth: int = 50
    variant: str = "imagenet"
    block: str | None = None
    width: int = 64
    data_format: str = "channels_last"
    cifar_shortcut: str = "zero_pad"
    zero_init_last_bn_gamma: bool = True
    bn_momentum: float = 0.9
    bn_epsilon: float = 1e-5
    weight_decay: float = 1e-4
    label_smoothing: float = 0.0
    learning_rate: float = 0.1
    momentum: float = 0.9

    @property
    def block_type(self) -> str:
        if self.block is not None:
            if self.block not in ("basic", "bottleneck"):
                raise ValueError(f"block must be 'basic' or 'bottleneck', got {self.block!r}")
            return self.block
        return "basic" if self.variant == "cifar" else _IMAGENET_STAGES[self.depth][0]

    @property
    def stage_blocks(self) -> tuple:
        if self.variant == "cifar":
            if self.depth < 8 or (self.depth - 2) % 6:
                raise ValueError(f"a CIFAR ResNet's depth is 6n + 2 (20, 32, 44, 56, 110, "
                                 f"...), got {self.depth}")
            return ((self.depth - 2) // 6,) * 3
        if self.variant != "imagenet":
            raise ValueError(f"variant must be 'imagenet' or 'cifar', got {self.variant!r}")
        if self.depth not in _IMAGENET_STAGES:
            raise ValueError(f"an ImageNet ResNet's depth is one of "
                             f"{sorted(_IMAGENET_STAGES)}, got {self.depth}")
        return _IMAGENET_STAGES[self.depth][1]

    @property
    def channel_axis(self) -> int:
        return 1 if self.data_format == "channels_first" else 3


def imagenet_config(depth, **overrides) -> ResNetConfig:
    return ResNetConfig(depth=depth, variant="imagenet", width=64, **overrides)


def cifar_config(depth, **overrides) -> ResNetConfig:
    return ResNetConfig(depth=depth, variant="cifar", width=16, **overrides)


# --- layers with the recipe's settings ---------------------------------------------------

def _conv(x, filters, kernel_size, strides, config, name):
    """A bias-free convolution. Strided ones pad (k - 1) / 2 explicitly and use "valid",
    as the reference implementation does, instead of "same" (whose padding depends on
    the input size)."""
    padding = "same"
    if strides > 1:
        x = _fixed_padding(x, kernel_size, config)
        padding = "valid"
    return tf.layers.conv2d(
        x, filters, kernel_size, strides=strides, padding=padding, use_bias=False,
        data_format=config.data_format, name=name,
        # He et al. 2015: keeps the activations' variance through ReLU layers.
        kernel_initializer=tf.variance_scaling_initializer(
            scale=2.0, mode="fan_in", distribution="truncated_normal"))


def _fixed_padding(x, kernel_size, config):
    total = kernel_size - 1
    before, after = total // 2, total - total // 2
    spatial = [[before, after], [before, after]]
    if config.channel_axis == 1:
        return tf.pad(x, [[0, 0], [0, 0]] + spatial)
    return tf.pad(x, [[0, 0]] + spatial + [[0, 0]])


def _batch_norm(x, config, training, name, zero_gamma=False):
    gamma = tf.zeros_initializer() if zero_gamma else tf.ones_initializer()
    return tf.layers.batch_normalization(
        x, axis=config.channel_axis, momentum=config.bn_momentum, epsilon=config.bn_epsilon,
        gamma_initializer=gamma, training=training, name=name)


def _conv_bn(x, filters, kernel_size, strides, config, training, index, relu=True,
             zero_gamma=False):
    x = _conv(x, filters, kernel_size, strides, config, name=f"conv{index}")
    x = _batch_norm(x, config, training, name=f"bn{index}", zero_gamma=zero_gamma)
    return tf.nn.relu(x) if relu else x


# --- residual blocks ---------------------------------------------------------------------

def _shortcut(x, out_channels, strides, config, training):
    """The identity where shapes agree; otherwise a 1x1 projection (option B) or, for
    CIFAR's option A, a subsampled copy padded with zero channels."""
    in_channels = x.shape[config.channel_axis].value
    if strides == 1 and in_channels == out_channels:
        return x
    if config.variant == "cifar" and config.cifar_shortcut == "zero_pad":
        return _zero_pad_shortcut(x, out_channels - in_channels, strides, config)
    if config.cifar_shortcut not in ("zero_pad", "projection"):
        raise ValueError(f"cifar_shortcut must be 'zero_pad' or 'projection', "
                         f"got {config.cifar_shortcut!r}")
    with tf.variable_scope("shortcut"):
        x = tf.layers.conv2d(
            x, out_channels, 1, strides=strides, use_bias=False,
            data_format=config.data_format, name="conv",
            kernel_initializer=tf.variance_scaling_initializer(scale=2.0))
        return _batch_norm(x, config, training, name="bn")


def _zero_pad_shortcut(x, extra_channels, strides, config):
    if config.channel_axis == 1:
        x = x[:, :, ::strides, ::strides]
        paddings = [[0, 0], [extra_channels // 2, extra_channels - extra_channels // 2],
                    [0, 0], [0, 0]]
    else:
        x = x[:, ::strides, ::strides, :]
        paddings = [[0, 0], [0, 0], [0, 0],
                    [extra_channels // 2, extra_channels - extra_channels // 2]]
    return tf.pad(x, paddings)


def _basic_block(x, filters, strides, config, training):
    """3x3 (strided) -> 3x3, plus the shortcut; `filters` channels out."""
    shortcut = _shortcut(x, filters, strides, config, training)
    x = _conv_bn(x, filters, 3, strides, config, training, 1)
    x = _conv_bn(x, filters, 3, 1, config, training, 2, relu=False,
                 zero_gamma=config.zero_init_last_bn_gamma)
    return tf.nn.relu(x + shortcut)


def _bottleneck_block(x, filters, strides, config, training):
    """1x1 reduce -> 3x3 (strided: v1.5) -> 1x1 expand, plus the shortcut;
    4 * `filters` channels out."""
    out_channels = filters * _BOTTLENECK_EXPANSION
    shortcut = _shortcut(x, out_channels, strides, config, training)
    x = _conv_bn(x, filters, 1, 1, config, training, 1)
    x = _conv_bn(x, filters, 3, strides, config, training, 2)
    x = _conv_bn(x, out_channels, 1, 1, config, training, 3, relu=False,
                 zero_gamma=config.zero_init_last_bn_gamma)
    return tf.nn.relu(x + shortcut)


def _stage(x, index, num_blocks, filters, strides, config, training):
    block_fn = _bottleneck_block if config.block_type == "bottleneck" else _basic_block
    with tf.variable_scope(f"stage{index}"):
        for b in range(num_blocks):
            with tf.variable_scope(f"block{b + 1}"):
                # Only a stage's first block changes the resolution.
                x = block_fn(x, filters, strides if b == 0 else 1, config, training)
    return x


# --- the network -------------------------------------------------------------------------

def _stem(x, config, training):
    with tf.variable_scope("stem"):
        if config.variant == "cifar":
            return _conv_bn(x, config.width, 3, 1, config, training, 1)
        x = _conv_bn(x, config.width, 7, 2, config, training, 1)
        return tf.layers.max_pooling2d(x, 3, 2, padding="same",
                                       data_format=config.data_format, name="pool")


def _to_data_format(images, config):
    """Inputs are NHWC; channels_first models transpose once at the start."""
    if config.data_format == "channels_first":
        return tf.transpose(images, [0, 3, 1, 2])
    if config.data_format != "channels_last":
        raise ValueError(f"data_format must be 'channels_last' or 'channels_first', "
                         f"got {config.data_format!r}")
    return images


def _backbone(images, config, training):
    """The stem and every stage; returns each stage's output, first stage first."""
    x = _stem(_to_data_format(images, config), config, training)
    outputs = []
    for i, num_blocks in enumerate(config.stage_blocks):
        x = _stage(x, i + 1, num_blocks, config.width * 2 ** i, 1 if i == 0 else 2,
                   config, training)
        outputs.append(x)
    return outputs


def _scope_name(config):
    return f"resnet{config.depth}"


def resnet(inputs, config, *, num_classes, training=False):
    """Logits [batch, num_classes] of the ResNet `config` on NHWC `inputs`."""
    with tf.variable_scope(None, default_name=_scope_name(config)):
        x = _backbone(inputs, config, training)[-1]
        spatial_axes = [2, 3] if config.channel_axis == 1 else [1, 2]
        x = tf.reduce_mean(x, spatial_axes, name="global_pool")
        return tf.layers.dense(
            x, num_classes, name="logits",
            kernel_initializer=tf.random_normal_initializer(stddev=0.01))


def feature_maps(inputs, depth=50, training=False, config=None) -> dict:
    """An ImageNet ResNet's last three stages for a feature pyramid: {"C3", "C4", "C5"},
    at strides 8, 16 and 32 of NHWC `inputs`. `config` (an ImageNet ResNetConfig)
    replaces the default one of `depth`. Variables share the classifier's names, so a
    classifier checkpoint restores the backbone."""
    config = imagenet_config(depth) if config is None else config
    if config.variant != "imagenet":
        raise ValueError("feature_maps needs an ImageNet ResNet (four stages)")
    with tf.variable_scope(None, default_name=_scope_name(config)):
        _, c3, c4, c5 = _backbone(inputs, config, training)
    return {"C3": c3, "C4": c4, "C5": c5}


# --- training ----------------------------------------------------------------------------

def weight_decay_loss(weight_decay, variables=None):
    """weight_decay * sum of l2_loss over convolution and dense kernels (batch norm's
    gamma/beta and biases are not decayed, as in the TPU recipe)."""
    variables = tf.trainable_variables() if variables is None else variables
    kernels = [v for v in variables if v.op.name.endswith("kernel")]
    if not kernels or not weight_decay:
        return tf.constant(0.0)
    return weight_decay * tf.add_n([tf.nn.l2_loss(v) for v in kernels])


def _config_from_params(params):
    if params.get("config") is not None:
        config = params["config"]
        return config, params.get("num_classes", 10 if config.variant == "cifar" else 1000)
    spec = specs()[params.get("model", "resnet50")]
    return spec.config, params.get("num_classes", spec.num_classes)


def model_fn(features, labels, mode, params=None):
    """Builds a ResNet for training ("train"), evaluation ("eval") or prediction ("infer")
    (tf.estimator.ModeKeys' values), as the reference TF/TPU resnet_main's model_fn.

    features: NHWC float images. labels: int class ids [batch] (None only for "infer").
    params:   a dict; "model" names a registered ResNet (default "resnet50") or "config"
              gives a ResNetConfig; "num_classes" and any config field (weight_decay,
              label_smoothing, learning_rate, momentum, ...) override.
    Returns a tf.estimator.EstimatorSpec: predictions "classes", "probabilities",
    "logits"; outside "infer" the loss (label-smoothed cross-entropy + weight decay of
    this model's variables) and eval metrics "accuracy" / "top_5_accuracy"; for "train"
    a Momentum train_op that runs the batch-norm updates (UPDATE_OPS) before each step.
    """
    check_mode(mode)
    check_labels(labels, mode, "resnet")
    config, num_classes = _config_from_params(model_params(params))
    fields = {f.name for f in dataclasses.fields(ResNetConfig)}
    config = dataclasses.replace(config, **{k: v for k, v in model_params(params).items()
                                            if k in fields})
    training = mode == "train"

    # Decay and update only this model's variables, should the graph hold others: those
    # the build adds (a name scope would not do: inside TPUEstimator's loop the ops'
    # names start with "while/", the variables' do not).
    variables_before = len(tf.trainable_variables())
    updates_before = len(tf.get_collection(tf.GraphKeys.UPDATE_OPS))
    logits = resnet(features, config, num_classes=num_classes, training=training)
    model_variables = tf.trainable_variables()[variables_before:]
    loss = None
    if mode != "infer":
        onehot = tf.one_hot(tf.cast(labels, tf.int32), num_classes)
        cross_entropy = tf.losses.softmax_cross_entropy(
            onehot, logits, label_smoothing=config.label_smoothing)
        loss = cross_entropy + weight_decay_loss(config.weight_decay, model_variables)
    return classifier_spec(
        logits, labels, mode, loss=loss, params=params, var_list=model_variables,
        update_ops=tf.get_collection(tf.GraphKeys.UPDATE_OPS)[updates_before:],
        make_optimizer=lambda: tf.train.MomentumOptimizer(config.learning_rate,
                                                          config.momentum))


# --- the registry ------------------------------------------------------------------------

def _register_all():
    for depth in (18, 34, 50, 101, 152):
        register(ModelSpec(name=f"resnet{depth}", family="resnet", kind="image_classifier",
                           config=imagenet_config(depth), build=resnet,
                           input_shape=(224, 224, 3), num_classes=1000))
    for depth in (20, 32, 44, 56, 110):
        register(ModelSpec(name=f"resnet{depth}", family="resnet", kind="image_classifier",
                           config=cifar_config(depth), build=resnet,
                           input_shape=(32, 32, 3), num_classes=10))


_register_all()
