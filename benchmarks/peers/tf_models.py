"""ResNet-50 v1.5, MobileNet v2 and the zoo's Transformer written directly in TensorFlow 2.

Written with raw TensorFlow ops (tf.nn.conv2d, fused batch norm, tf.matmul, ...) on
tf.Variables, one training step per `tf.function(jit_compile=False)`, not with tf.keras:

- jit_compile=False runs TensorFlow's own graph executor and kernels (oneDNN on CPU,
  cuDNN on GPU), the engine TF1 programs ran on and that tensorflux replaces with XLA.
  With jit_compile=True it would be one more XLA front end, which the JAX peer already
  measures.
- Raw ops, because they are the kernels the zoo's TF1 layers call (Conv2D,
  DepthwiseConv2dNative, FusedBatchNormV3, and TF1's optimizer kernels
  ResourceApplyMomentum / ResourceApplyAdam), with the zoo's exact variable layout
  (NHWC, HWIO kernels, fixed padding), so parameter counts match by construction. Keras
  3 is a separate multi-backend package whose layers and optimizers add their own Python
  and variable machinery on top of the same kernels: a different thing to measure.

    run = image_classifier_step("resnet50", batch_size=16, image_size=64)
    run()                       # one training step; returns the loss
    parameter_count("resnet50") # 25,557,032 trainable values for 1000 classes

Parameters are discovered by tracing the model once with placeholders (as jax_models.py
does with eval_shape), then created as float32 tf.Variables with the same NumPy
initializers as the JAX peer. `precision="bfloat16"` casts parameters and inputs to
bfloat16 inside the step; batch-norm statistics, layer norm, the attention softmax and
the loss stay in float32.

tensorflow is imported on first use; `unavailable()` says why it cannot be.
"""

from __future__ import annotations

import math
import os

import numpy as np

from . import common
from .common import (LEARNING_RATE, MOMENTUM, TransformerConfig, glorot_uniform, he_normal,
                     ones, zeros)

NAME, KEY, FRAMEWORK = "TensorFlow", "tf", "tensorflow"
SHORT = "TF"  # its table columns' label


def _tf():
    # TF's C++ start-up messages (CPU features, oneDNN) are noise in a benchmark table.
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import tensorflow as tf
    return tf


def unavailable():
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    return common.unavailable(FRAMEWORK)


def version():
    return _tf().__version__


class Net:
    """Parameters and batch-norm statistics by name.

    Recording (no `variables`): each parameter is noted with its shape and initializer
    and stands in as zeros, so tracing the model once lists them all. Running: parameters
    are read from `variables` cast to the compute dtype, and batch norm's moving averages
    are assigned.
    """

    def __init__(self, variables=None, stats=None, dtype=None, batch_norm=(0.9, 1e-5),
                 dropout=False):
        tf = _tf()
        self.variables, self.stats = variables, stats
        self.specs, self.stat_specs = {}, {}
        self.dtype = dtype or tf.float32
        self.bn_momentum, self.bn_epsilon = batch_norm
        self.training_dropout = dropout

    def param(self, name, shape, init):
        tf = _tf()
        if self.variables is None:
            self.specs[name] = (tuple(shape), init)
            return tf.zeros(shape, self.dtype)
        return tf.cast(self.variables[name], self.dtype)

    def stat(self, name, shape, value):
        if self.stats is None:
            self.stat_specs[name] = (tuple(shape), value)
            return None
        return self.stats[name]

    def dropout(self, x, rate):
        return _tf().nn.dropout(x, rate=rate) if self.training_dropout and rate else x


# -- layers ---------------------------------------------------------------------------------------
def conv(net, name, x, filters, kernel, stride=1, padding="fixed"):
    """A bias-free convolution; padding "fixed" pads strided ones explicitly (the zoo's
    ResNet), "same" lets TF pad (the zoo's MobileNet)."""
    tf = _tf()
    w = net.param(f"{name}/kernel", (kernel, kernel, x.shape[-1], filters), he_normal)
    if stride > 1 and padding == "fixed":
        total = kernel - 1
        x = tf.pad(x, [[0, 0], [total // 2, total - total // 2],
                       [total // 2, total - total // 2], [0, 0]])
        return tf.nn.conv2d(x, w, stride, "VALID")
    return tf.nn.conv2d(x, w, stride, "SAME")


def depthwise_conv(net, name, x, stride):
    tf = _tf()
    c = x.shape[-1]
    # Drawn as HWIO (3, 3, 1, c) so fan-in is 9, as for the JAX peer; TF lays it (3, 3, c, 1).
    w = net.param(f"{name}/depthwise_kernel", (3, 3, c, 1),
                  lambda rng, shape: he_normal(rng, (3, 3, 1, c)).reshape(shape))
    return tf.nn.depthwise_conv2d(x, w, [1, stride, stride, 1], "SAME")


def batch_norm(net, name, x, gamma_init=ones):
    """Training-mode fused batch norm (TF1's tf.layers default for NHWC); float32
    scale, offset and statistics whatever x's dtype."""
    tf = _tf()
    c = x.shape[-1]
    gamma = net.param(f"{name}/gamma", (c,), gamma_init)
    beta = net.param(f"{name}/beta", (c,), zeros)
    moving_mean = net.stat(f"{name}/moving_mean", (c,), 0.0)
    moving_var = net.stat(f"{name}/moving_variance", (c,), 1.0)
    y, mean, var = tf.compat.v1.nn.fused_batch_norm(
        x, tf.cast(gamma, tf.float32), tf.cast(beta, tf.float32), epsilon=net.bn_epsilon,
        is_training=True)
    if moving_mean is not None:
        decay = net.bn_momentum
        moving_mean.assign(moving_mean * decay + mean * (1 - decay))
        moving_var.assign(moving_var * decay + var * (1 - decay))
    return y


def dense(net, name, x, units, use_bias=True, init=glorot_uniform):
    tf = _tf()
    kernel = net.param(f"{name}/kernel", (x.shape[-1], units), init)
    y = tf.tensordot(x, kernel, 1) if len(x.shape) > 2 else tf.matmul(x, kernel)
    return y + net.param(f"{name}/bias", (units,), zeros) if use_bias else y


# -- ResNet-50 v1.5 -------------------------------------------------------------------------------
def resnet50(net, x, num_classes):
    """x: (N, H, W, 3) -> logits (N, num_classes). v1.5: the stride is on the 3x3 conv."""
    tf = _tf()
    h = tf.nn.relu(batch_norm(net, "conv1/bn", conv(net, "conv1", x, 64, 7, 2)))
    h = tf.nn.max_pool2d(h, 3, 2, "SAME")
    for s, (width, blocks, stride) in enumerate(common.RESNET50_STAGES):
        for b in range(blocks):
            h = _bottleneck(net, f"stage{s + 1}/block{b + 1}", h, width,
                            stride if b == 0 else 1, project=b == 0)
    return dense(net, "logits", tf.reduce_mean(h, [1, 2]), num_classes,
                 init=common.normal_001)


def _bottleneck(net, name, x, width, stride, project):
    tf = _tf()
    shortcut = x
    if project:  # (N, H, W, C) -> (N, H/s, W/s, 4*width)
        shortcut = batch_norm(net, f"{name}/shortcut/bn",
                              conv(net, f"{name}/shortcut", x, 4 * width, 1, stride))
    h = tf.nn.relu(batch_norm(net, f"{name}/bn1", conv(net, f"{name}/conv1", x, width, 1)))
    h = tf.nn.relu(batch_norm(net, f"{name}/bn2",
                              conv(net, f"{name}/conv2", h, width, 3, stride)))
    # The zoo starts each block as the identity: the last batch norm's gamma is 0.
    h = batch_norm(net, f"{name}/bn3", conv(net, f"{name}/conv3", h, 4 * width, 1), zeros)
    return tf.nn.relu(h + shortcut)


# -- MobileNet v2 ---------------------------------------------------------------------------------
def mobilenet_v2(net, x, num_classes):
    tf = _tf()
    h = tf.nn.relu6(batch_norm(net, "conv1/bn", conv(net, "conv1", x, 32, 3, 2, "same")))
    i = 0
    for expansion, channels, repeats, stride in common.MOBILENET_V2_BLOCKS:
        for r in range(repeats):
            i += 1
            h = _inverted_residual(net, f"block{i}", h, expansion, channels,
                                   stride if r == 0 else 1)
    h = tf.nn.relu6(batch_norm(net, "conv_last/bn", conv(net, "conv_last", h, 1280, 1)))
    return dense(net, "logits", tf.reduce_mean(h, [1, 2]), num_classes)


def _inverted_residual(net, name, x, expansion, channels, stride):
    tf = _tf()
    c_in = x.shape[-1]
    h = x
    if expansion != 1:
        h = tf.nn.relu6(batch_norm(net, f"{name}/expand/bn",
                                   conv(net, f"{name}/expand", h, c_in * expansion, 1)))
    h = tf.nn.relu6(batch_norm(net, f"{name}/depthwise/bn",
                               depthwise_conv(net, f"{name}/depthwise", h, stride)))
    h = batch_norm(net, f"{name}/project/bn", conv(net, f"{name}/project", h, channels, 1))
    return x + h if stride == 1 and c_in == channels else h  # linear bottleneck


IMAGE_CLASSIFIERS = {"resnet50": resnet50, "mobilenet_v2": mobilenet_v2}


# -- the Transformer (common.TransformerConfig) ---------------------------------------------------


def transformer(net, source, inputs, config):
    """source (N, S) or None, decoder inputs (N, T) int -> float32 logits (N, T, vocab)."""
    tf = _tf()
    d = config.d_model
    embedding = net.param("embeddings/shared", (config.vocab_size, d),
                          lambda rng, s: rng.standard_normal(s) * d ** -0.5)
    memory = memory_bias = None
    if source is not None:
        pad = tf.cast(tf.equal(source, common.PAD_ID), tf.float32)
        memory_bias = (pad * common.MASK)[:, None, None, :]  # (N, 1, 1, S)
        x = _embed(net, embedding, source, config)
        for i in range(config.num_encoder_layers):
            x = _sublayer(net, f"encoder/layer_{i}/self_attention", x, config,
                          lambda h, n: _attention(net, n, h, h, memory_bias, config))
            x = _sublayer(net, f"encoder/layer_{i}/ffn", x, config,
                          lambda h, n: _feed_forward(net, n, h, config))
        memory = _layer_norm(net, "encoder/layer_norm", x, config)
    t = inputs.shape[1]
    causal = tf.constant(np.triu(np.full((t, t), common.MASK, np.float32), 1))  # (T, T)
    x = _embed(net, embedding, inputs, config)
    for i in range(config.num_decoder_layers):
        x = _sublayer(net, f"decoder/layer_{i}/self_attention", x, config,
                      lambda h, n: _attention(net, n, h, h, causal, config))
        if memory is not None:
            x = _sublayer(net, f"decoder/layer_{i}/encdec_attention", x, config,
                          lambda h, n: _attention(net, n, h, memory, memory_bias, config))
        x = _sublayer(net, f"decoder/layer_{i}/ffn", x, config,
                      lambda h, n: _feed_forward(net, n, h, config))
    x = _layer_norm(net, "decoder/layer_norm", x, config)
    return tf.cast(tf.matmul(x, embedding, transpose_b=True), tf.float32)  # tied softmax


def _embed(net, embedding, ids, config):
    tf = _tf()
    x = tf.gather(embedding, ids) * math.sqrt(config.d_model)
    positions = common.positional_encoding(ids.shape[1], config.d_model)
    return net.dropout(x + tf.cast(positions, x.dtype), config.dropout)


def _sublayer(net, name, x, config, body):
    """Pre-norm residual: x + dropout(body(layer_norm(x)))."""
    return x + net.dropout(body(_layer_norm(net, f"{name}/layer_norm", x, config), name),
                           config.dropout)


def _layer_norm(net, name, x, config):
    tf = _tf()
    d = x.shape[-1]
    x32 = tf.cast(x, tf.float32)
    mean, var = tf.nn.moments(x32, axes=[-1], keepdims=True)
    y = (x32 - mean) * tf.math.rsqrt(var + config.layer_norm_epsilon)
    y = (y * tf.cast(net.param(f"{name}/scale", (d,), ones), tf.float32)
         + tf.cast(net.param(f"{name}/bias", (d,), zeros), tf.float32))
    return tf.cast(y, x.dtype)


def _attention(net, name, x, memory, bias, config):
    """Multi-head attention of x (N, T, d) over memory (N, S, d); no projection biases."""
    tf = _tf()
    n, t, d = tf.shape(x)[0], x.shape[1], x.shape[2]
    heads = config.num_heads

    def split(h):  # (N, L, d) -> (N, heads, L, d/heads)
        return tf.transpose(tf.reshape(h, [n, h.shape[1], heads, d // heads]), [0, 2, 1, 3])

    q = split(dense(net, f"{name}/q", x, d, use_bias=False)) * (d // heads) ** -0.5
    k = split(dense(net, f"{name}/k", memory, d, use_bias=False))
    v = split(dense(net, f"{name}/v", memory, d, use_bias=False))
    logits = tf.cast(tf.matmul(q, k, transpose_b=True), tf.float32) + bias  # (N, h, T, S)
    weights = tf.cast(tf.nn.softmax(logits), v.dtype)
    out = tf.reshape(tf.transpose(tf.matmul(weights, v), [0, 2, 1, 3]), [n, t, d])
    return dense(net, f"{name}/output", out, d, use_bias=False)


def _feed_forward(net, name, x, config):
    tf = _tf()
    h = tf.nn.relu(dense(net, f"{name}/filter", x, config.d_ff))
    return dense(net, f"{name}/output", h, config.d_model)


def transformer_loss(logits, targets, config):
    """Mean label-smoothed cross-entropy over the non-padding targets (the zoo's loss)."""
    tf = _tf()
    vocab = logits.shape[-1]
    if config.label_smoothing:
        confidence, low, entropy = common.smoothing_constants(config, vocab)
        soft = tf.one_hot(targets, vocab, on_value=confidence, off_value=low)
        xent = tf.nn.softmax_cross_entropy_with_logits(labels=soft, logits=logits) - entropy
    else:
        xent = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=targets, logits=logits)
    weights = tf.cast(tf.not_equal(targets, common.PAD_ID), tf.float32)
    return tf.reduce_sum(xent * weights) / tf.maximum(tf.reduce_sum(weights), 1.0)


# -- parameters, steps and counts -----------------------------------------------------------------
def _record(model_fn, input_specs, *args):
    """(parameter specs, statistic specs) of `model_fn`, from tracing it once."""
    tf = _tf()
    net = Net()
    tf.function(lambda *inputs: model_fn(net, *inputs, *args),
                autograph=False).get_concrete_function(
        *input_specs)
    return net.specs, net.stat_specs


def _create(specs, stat_specs, seed):
    tf = _tf()
    rng = np.random.default_rng(seed)
    variables = {name: tf.Variable(init(rng, shape).astype(np.float32), name=name)
                 for name, (shape, init) in specs.items()}
    stats = {name: tf.Variable(np.full(shape, value, np.float32), trainable=False)
             for name, (shape, value) in stat_specs.items()}
    return variables, stats


def _classifier_specs(name, image_size, num_classes):
    tf = _tf()
    common.check_model(name)
    spec = tf.TensorSpec((1, image_size, image_size, 3), tf.float32)
    return _record(IMAGE_CLASSIFIERS[name], [spec], num_classes)


def _transformer_specs(config):
    tf = _tf()
    ids = tf.TensorSpec((1, config.seq_len), tf.int64)
    if config.decoder_only:
        return _record(lambda net, x: transformer(net, None, x, config), [ids])
    return _record(lambda net, s, x: transformer(net, s, x, config), [ids, ids])


def parameter_count(name, num_classes=1000, image_size=224, config=None):
    """Trainable values of a TensorFlow peer; "transformer" counts `config`'s."""
    if name == "transformer":
        specs, _ = _transformer_specs(config or TransformerConfig())
    else:
        specs, _ = _classifier_specs(name, image_size, num_classes)
    return sum(int(np.prod(shape)) for shape, _ in specs.values())


def _compute_dtype(precision):
    tf = _tf()
    common.check_precision(precision)
    return tf.bfloat16 if precision == "bfloat16" else tf.float32


def image_classifier_step(name, batch_size, image_size=224, num_classes=1000,
                          precision="float32", seed=0, learning_rate=LEARNING_RATE):
    """A tf.function Momentum training step on fixed random images; returns `run()`."""
    tf = _tf()
    dtype = _compute_dtype(precision)
    variables, stats = _create(*_classifier_specs(name, image_size, num_classes), seed)
    names = sorted(variables)
    velocity = {k: tf.Variable(tf.zeros_like(variables[k]), trainable=False) for k in names}
    images, labels = common.synthetic_images(batch_size, image_size, num_classes, seed)
    x, y = tf.constant(images), tf.constant(labels)
    model_fn, batch_norm_settings = IMAGE_CLASSIFIERS[name], common.BATCH_NORM[name]

    @tf.function(jit_compile=False, autograph=False)  # no Python control flow to convert
    def step(x, y):
        with tf.GradientTape() as tape:
            net = Net(variables, stats, dtype, batch_norm_settings)
            logits = tf.cast(model_fn(net, tf.cast(x, dtype), num_classes), tf.float32)
            loss = tf.reduce_mean(
                tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
        grads = tape.gradient(loss, [variables[k] for k in names])
        for k, g in zip(names, grads):
            # TF1's MomentumOptimizer kernel: v <- m*v + g; p <- p - lr*v.
            tf.raw_ops.ResourceApplyMomentum(var=variables[k].handle,
                                             accum=velocity[k].handle,
                                             lr=tf.constant(learning_rate), grad=g,
                                             momentum=tf.constant(MOMENTUM))
        return loss

    return lambda: step(x, y).numpy()


def transformer_step(batch_size, config=TransformerConfig(), precision="float32", seed=0):
    """A tf.function Adam training step of the Transformer on fixed random tokens (with
    the config's dropout and label smoothing); returns `run()`."""
    tf = _tf()
    dtype = _compute_dtype(precision)
    tf.random.set_seed(seed)
    variables, _ = _create(*_transformer_specs(config), seed)
    names = sorted(variables)
    slots = {k: (tf.Variable(tf.zeros_like(variables[k]), trainable=False),
                 tf.Variable(tf.zeros_like(variables[k]), trainable=False)) for k in names}
    step_count = tf.Variable(0.0, trainable=False)
    source, inputs, targets = (None if a is None else tf.constant(a)
                               for a in common.synthetic_tokens(batch_size, config, seed))
    b1, b2 = config.adam_beta1, config.adam_beta2

    @tf.function(jit_compile=False, autograph=False)  # no Python control flow to convert
    def step(source, inputs, targets):
        with tf.GradientTape() as tape:
            net = Net(variables, {}, dtype, dropout=True)
            loss = transformer_loss(transformer(net, source, inputs, config), targets,
                                    config)
        grads = tape.gradient(loss, [variables[k] for k in names])
        n = step_count.assign_add(1.0)  # steps count from 1
        rate = common.learning_rate(config, n, tf.minimum)
        for k, g in zip(names, grads):
            m, v = slots[k]
            # TF1's AdamOptimizer kernel (bias correction from beta^t inside).
            tf.raw_ops.ResourceApplyAdam(
                var=variables[k].handle, m=m.handle, v=v.handle,
                beta1_power=tf.pow(b1, n), beta2_power=tf.pow(b2, n), lr=rate,
                beta1=tf.constant(b1), beta2=tf.constant(b2),
                epsilon=tf.constant(config.adam_epsilon), grad=tf.convert_to_tensor(g))
        return loss

    return lambda: step(source, inputs, targets).numpy()
