"""ResNet-50 v1.5, MobileNet v2 and the zoo's Transformer written directly in JAX.

These are the references `tensorflux bench --compare` times against: the same
architectures as the zoo (NHWC images, HWIO kernels, batch norm without conv biases,
He-normal convolutions, Glorot dense layers; the Transformer of common.TransformerConfig),
the same loss and optimizer step (Momentum 0.9 for the classifiers, Adam with the warm-up
schedule for the Transformer), jitted with the parameters, optimizer slots and batch-norm
statistics donated so updates are in place.

    run = image_classifier_step("resnet50", batch_size=16, image_size=64)
    run()                       # one training step; returns the loss
    parameter_count("resnet50") # 25,557,032 trainable values for 1000 classes
    run = transformer_step(8, TransformerConfig(seq_len=128))

`precision="bfloat16"` is mixed precision: float32 parameters, bfloat16 compute (the
parameters and images are cast inside the step; batch-norm statistics, layer norm, the
attention softmax and the loss stay in float32).
"""

from __future__ import annotations

import math

import numpy as np

from . import common
from .common import (LEARNING_RATE, MOMENTUM, TransformerConfig, glorot_uniform,
                     he_normal, ones, zeros)

NAME, KEY, FRAMEWORK = "JAX", "jax", "jax"  # what reports call it; its key in bench.json
SHORT = "JAX"  # its table columns' label


def unavailable():
    """None when JAX imports, else why not (tensorflux needs JAX, so always None)."""
    return common.unavailable(FRAMEWORK)


def version():
    import jax
    return jax.__version__


# -- a tiny functional "layer context": one architecture function, two uses ---------------------
class Net:
    """Holds parameters and batch-norm statistics by name.

    With `rng` set, a missing parameter is created on first use (the architecture is run
    once under `jax.eval_shape` to create them all); otherwise parameters are read, cast
    to the compute dtype, and batch-norm's new statistics are collected in `new_state`.
    """

    def __init__(self, params=None, state=None, rng=None, dtype=None, batch_norm=(0.9, 1e-5),
                 dropout_key=None):
        import jax.numpy as jnp
        self.params = {} if params is None else params
        self.state = {} if state is None else state
        self.new_state = {}
        self.rng = rng
        self.dtype = dtype or jnp.float32
        self.bn_momentum, self.bn_epsilon = batch_norm
        self.dropout_key = dropout_key  # None: no dropout (initialization, evaluation)
        self.dropouts = 0

    def dropout(self, x, rate):
        """Inverted dropout with a fresh key per call site (folded from the step's key)."""
        import jax
        import jax.numpy as jnp
        if self.dropout_key is None or not rate:
            return x
        self.dropouts += 1
        keep = jax.random.bernoulli(jax.random.fold_in(self.dropout_key, self.dropouts),
                                    1.0 - rate, x.shape)
        return jnp.where(keep, x / (1.0 - rate), 0).astype(x.dtype)

    def param(self, name, shape, init):
        import jax.numpy as jnp
        if name not in self.params:
            if self.rng is None:
                raise KeyError(f"no parameter {name!r}")
            self.params[name] = init(self.rng, shape).astype(np.float32)
        return jnp.asarray(self.params[name]).astype(self.dtype)

    def stat(self, name, shape, value):
        if name not in self.state:
            self.state[name] = np.full(shape, value, np.float32)
        return self.state[name]


def conv(net, name, x, filters, kernel, stride=1, groups=1):
    """A bias-free convolution; strided ones pad explicitly (TF's "fixed padding") so the
    output does not depend on the input size's parity."""
    import jax
    c_in = x.shape[-1]
    w = net.param(f"{name}/kernel", (kernel, kernel, c_in // groups, filters), he_normal)
    if stride == 1:
        padding = "SAME"
    else:
        total = kernel - 1
        padding = [(total // 2, total - total // 2)] * 2
    return jax.lax.conv_general_dilated(
        x, w, (stride, stride), padding, dimension_numbers=("NHWC", "HWIO", "NHWC"),
        feature_group_count=groups)


def batch_norm(net, name, x, gamma_init=ones):
    """Training-mode batch norm over (N, H, W); statistics in float32 whatever x's dtype."""
    import jax.numpy as jnp
    c = x.shape[-1]
    gamma = net.param(f"{name}/gamma", (c,), gamma_init).astype(jnp.float32)
    beta = net.param(f"{name}/beta", (c,), zeros).astype(jnp.float32)
    moving_mean = net.stat(f"{name}/moving_mean", (c,), 0.0)
    moving_var = net.stat(f"{name}/moving_variance", (c,), 1.0)
    x32 = x.astype(jnp.float32)
    mean = x32.mean(axis=(0, 1, 2))
    var = jnp.square(x32 - mean).mean(axis=(0, 1, 2))
    decay = net.bn_momentum
    net.new_state[f"{name}/moving_mean"] = moving_mean * decay + mean * (1 - decay)
    net.new_state[f"{name}/moving_variance"] = moving_var * decay + var * (1 - decay)
    y = (x32 - mean) * (gamma * jnp.reciprocal(jnp.sqrt(var + net.bn_epsilon))) + beta
    return y.astype(x.dtype)


def dense(net, name, x, units, use_bias=True, init=glorot_uniform):
    kernel = net.param(f"{name}/kernel", (x.shape[-1], units), init)
    y = x @ kernel
    return y + net.param(f"{name}/bias", (units,), zeros) if use_bias else y


# -- ResNet-50 v1.5 -------------------------------------------------------------------------------
def resnet50(net, x, num_classes):
    """x: (N, H, W, 3) -> logits (N, num_classes). v1.5: the stride is on the 3x3 conv."""
    import jax
    h = jax.nn.relu(batch_norm(net, "conv1/bn", conv(net, "conv1", x, 64, 7, 2)))
    h = jax.lax.reduce_window(h, -np.inf, jax.lax.max, (1, 3, 3, 1), (1, 2, 2, 1),
                              [(0, 0), (1, 1), (1, 1), (0, 0)])
    for s, (width, blocks, stride) in enumerate(common.RESNET50_STAGES):
        for b in range(blocks):
            h = _bottleneck(net, f"stage{s + 1}/block{b + 1}", h, width,
                            stride if b == 0 else 1, project=b == 0)
    return dense(net, "logits", h.mean(axis=(1, 2)), num_classes, init=common.normal_001)


def _bottleneck(net, name, x, width, stride, project):
    import jax
    shortcut = x
    if project:  # (N, H, W, C) -> (N, H/s, W/s, 4*width)
        shortcut = batch_norm(net, f"{name}/shortcut/bn",
                              conv(net, f"{name}/shortcut", x, 4 * width, 1, stride))
    h = jax.nn.relu(batch_norm(net, f"{name}/bn1", conv(net, f"{name}/conv1", x, width, 1)))
    h = jax.nn.relu(batch_norm(net, f"{name}/bn2",
                               conv(net, f"{name}/conv2", h, width, 3, stride)))
    # The zoo starts each block as the identity: the last batch norm's gamma is 0.
    h = batch_norm(net, f"{name}/bn3", conv(net, f"{name}/conv3", h, 4 * width, 1), zeros)
    return jax.nn.relu(h + shortcut)


# -- MobileNet v2 ---------------------------------------------------------------------------------
def mobilenet_v2(net, x, num_classes):
    import jax
    h = jax.nn.relu6(batch_norm(net, "conv1/bn", conv(net, "conv1", x, 32, 3, 2)))
    i = 0
    for expansion, channels, repeats, stride in common.MOBILENET_V2_BLOCKS:
        for r in range(repeats):
            i += 1
            h = _inverted_residual(net, f"block{i}", h, expansion, channels,
                                   stride if r == 0 else 1)
    h = jax.nn.relu6(batch_norm(net, "conv_last/bn", conv(net, "conv_last", h, 1280, 1)))
    return dense(net, "logits", h.mean(axis=(1, 2)), num_classes)


def _inverted_residual(net, name, x, expansion, channels, stride):
    import jax
    c_in = x.shape[-1]
    h = x
    if expansion != 1:
        h = jax.nn.relu6(batch_norm(net, f"{name}/expand/bn",
                                    conv(net, f"{name}/expand", h, c_in * expansion, 1)))
    c_mid = h.shape[-1]
    h = jax.nn.relu6(batch_norm(net, f"{name}/depthwise/bn",
                                conv(net, f"{name}/depthwise", h, c_mid, 3, stride,
                                     groups=c_mid)))
    h = batch_norm(net, f"{name}/project/bn", conv(net, f"{name}/project", h, channels, 1))
    return x + h if stride == 1 and c_in == channels else h  # linear bottleneck


IMAGE_CLASSIFIERS = {"resnet50": resnet50, "mobilenet_v2": mobilenet_v2}


# -- the Transformer (common.TransformerConfig) ---------------------------------------------------


def transformer(net, source, inputs, config):
    """source (N, S) int32 or None (a language model), decoder inputs (N, T) int32 ->
    float32 logits (N, T, vocab); logits[:, t] predict the target at t."""
    import jax.numpy as jnp
    d = config.d_model
    embedding = net.param("embeddings/shared", (config.vocab_size, d),
                          lambda rng, s: rng.standard_normal(s) * d ** -0.5)
    memory = memory_bias = None
    if source is not None:
        memory_bias = jnp.where(source == common.PAD_ID, jnp.float32(common.MASK),
                                jnp.float32(0))[:, None, None, :]  # (N, 1, 1, S)
        x = _embed(net, embedding, source, config)
        for i in range(config.num_encoder_layers):
            x = _sublayer(net, f"encoder/layer_{i}/self_attention", x, config,
                          lambda h, n: _attention(net, n, h, h, memory_bias, config))
            x = _sublayer(net, f"encoder/layer_{i}/ffn", x, config,
                          lambda h, n: _feed_forward(net, n, h, config))
        memory = _layer_norm(net, "encoder/layer_norm", x, config)
    t = inputs.shape[1]
    causal = np.triu(np.full((t, t), common.MASK, np.float32), 1)  # (T, T): MASK above the diagonal
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
    return (x @ embedding.T).astype(jnp.float32)  # the tied softmax weights


def _embed(net, embedding, ids, config):
    """(N, T) ids -> (N, T, d): scaled embeddings plus positions, with dropout."""
    # A Python float: a NumPy float64 scalar would promote the activations to float64
    # (tensorflux turns on 64-bit types in the process).
    x = embedding[ids] * math.sqrt(config.d_model)
    x = x + common.positional_encoding(ids.shape[1], config.d_model).astype(x.dtype)
    return net.dropout(x, config.dropout)


def _sublayer(net, name, x, config, body):
    """Pre-norm residual: x + dropout(body(layer_norm(x)))."""
    return x + net.dropout(body(_layer_norm(net, f"{name}/layer_norm", x, config), name),
                           config.dropout)


def _layer_norm(net, name, x, config):
    import jax.numpy as jnp
    d = x.shape[-1]
    x32 = x.astype(jnp.float32)
    mean = x32.mean(-1, keepdims=True)
    var = jnp.square(x32 - mean).mean(-1, keepdims=True)
    y = (x32 - mean) / jnp.sqrt(var + config.layer_norm_epsilon)
    y = y * net.param(f"{name}/scale", (d,), ones).astype(jnp.float32) \
        + net.param(f"{name}/bias", (d,), zeros).astype(jnp.float32)
    return y.astype(x.dtype)


def _attention(net, name, x, memory, bias, config):
    """Multi-head attention of x (N, T, d) over memory (N, S, d); no projection biases."""
    import jax
    import jax.numpy as jnp
    n, t, d = x.shape
    heads = config.num_heads

    def split(h):  # (N, L, d) -> (N, L, heads, d/heads)
        return h.reshape(n, h.shape[1], heads, d // heads)

    q = split(dense(net, f"{name}/q", x, d, use_bias=False)) * (d // heads) ** -0.5
    k = split(dense(net, f"{name}/k", memory, d, use_bias=False))
    v = split(dense(net, f"{name}/v", memory, d, use_bias=False))
    logits = jnp.einsum("nqhd,nkhd->nhqk", q, k).astype(jnp.float32) + bias
    weights = jax.nn.softmax(logits, axis=-1).astype(v.dtype)
    out = jnp.einsum("nhqk,nkhd->nqhd", weights, v).reshape(n, t, d)
    return dense(net, f"{name}/output", out, d, use_bias=False)


def _feed_forward(net, name, x, config):
    import jax
    h = jax.nn.relu(dense(net, f"{name}/filter", x, config.d_ff))
    return dense(net, f"{name}/output", h, config.d_model)


def transformer_loss(logits, targets, config):
    """Mean label-smoothed cross-entropy over the non-padding targets (the zoo's loss)."""
    import jax
    import jax.numpy as jnp
    log_probs = jax.nn.log_softmax(logits, axis=-1)
    nll = -jnp.take_along_axis(log_probs, targets[..., None], axis=-1)[..., 0]  # (N, T)
    confidence, low, entropy = common.smoothing_constants(config, logits.shape[-1])
    xent = nll
    if config.label_smoothing:
        xent = confidence * nll + low * (-log_probs.sum(-1) - nll) - entropy
    weights = (targets != common.PAD_ID).astype(jnp.float32)
    return (xent * weights).sum() / jnp.maximum(weights.sum(), 1.0)


# -- initialization, steps and counts -------------------------------------------------------------
def init(model_fn, input_spec, *args, seed=0):
    """(params, batch-norm state) as NumPy float32, created by tracing the model once."""
    import jax
    net = Net(rng=np.random.default_rng(seed))
    jax.eval_shape(lambda x: model_fn(net, x, *args), input_spec)
    return net.params, net.state


def _transformer_init(config, seed=0):
    import jax
    import jax.numpy as jnp
    ids = jax.ShapeDtypeStruct((1, config.seq_len), jnp.int32)
    net = Net(rng=np.random.default_rng(seed))
    source = None if config.decoder_only else ids
    jax.eval_shape(lambda s, x: transformer(net, s, x, config), source, ids)
    return net.params


def parameter_count(name, num_classes=1000, image_size=224, config=None):
    """Trainable values (weights, biases, batch-norm gamma and beta) of a JAX peer;
    `name` "transformer" counts the Transformer of `config`."""
    import jax
    import jax.numpy as jnp
    if name == "transformer":
        params = _transformer_init(config or TransformerConfig())
    else:
        common.check_model(name)
        spec = jax.ShapeDtypeStruct((1, image_size, image_size, 3), jnp.float32)
        params, _ = init(IMAGE_CLASSIFIERS[name], spec, num_classes)
    return sum(int(np.prod(p.shape)) for p in params.values())


def _compute_dtype(precision):
    import jax.numpy as jnp
    common.check_precision(precision)
    return jnp.bfloat16 if precision == "bfloat16" else jnp.float32


def _cross_entropy(logits, labels):
    import jax
    import jax.numpy as jnp
    log_probs = jax.nn.log_softmax(logits.astype(jnp.float32))
    return -jnp.take_along_axis(log_probs, labels[..., None], axis=-1).mean()


def image_classifier_step(name, batch_size, image_size=224, num_classes=1000,
                          precision="float32", seed=0, learning_rate=LEARNING_RATE):
    """A jitted Momentum training step on fixed random images; returns `run()`."""
    import jax
    import jax.numpy as jnp
    common.check_model(name)
    model_fn = IMAGE_CLASSIFIERS[name]
    dtype = _compute_dtype(precision)
    images, labels = common.synthetic_images(batch_size, image_size, num_classes, seed)
    images, labels = jnp.asarray(images), jnp.asarray(labels, jnp.int32)
    params, state = init(model_fn, jax.ShapeDtypeStruct(images.shape, jnp.float32),
                         num_classes, seed=seed)
    batch_norm = common.BATCH_NORM[name]

    def loss_fn(params, state, x, y):
        net = Net(params, state, dtype=dtype, batch_norm=batch_norm)
        logits = model_fn(net, x.astype(dtype), num_classes)
        return _cross_entropy(logits, y), net.new_state

    def step(params, velocity, state, x, y):
        (loss, state), grads = jax.value_and_grad(loss_fn, has_aux=True)(params, state, x, y)
        # TF's MomentumOptimizer: v <- m*v + g; p <- p - lr*v.
        velocity = jax.tree_util.tree_map(lambda v, g: MOMENTUM * v + g, velocity, grads)
        params = jax.tree_util.tree_map(lambda p, v: p - learning_rate * v, params, velocity)
        return params, velocity, state, loss

    velocity = {k: np.zeros_like(v) for k, v in params.items()}
    return _runner(step, (params, velocity, state), images, labels)


def transformer_step(batch_size, config=TransformerConfig(), precision="float32", seed=0):
    """A jitted Adam training step of the Transformer on fixed random tokens (with the
    config's dropout and label smoothing); returns `run()`."""
    import jax
    import jax.numpy as jnp
    dtype = _compute_dtype(precision)
    source, inputs, targets = (None if a is None else jnp.asarray(a, jnp.int32)
                               for a in common.synthetic_tokens(batch_size, config, seed))
    params = _transformer_init(config, seed)
    key = jax.random.PRNGKey(seed)

    def loss_fn(params, step_key, source, inputs, targets):
        net = Net(params, dtype=dtype, dropout_key=step_key)
        return transformer_loss(transformer(net, source, inputs, config), targets, config)

    def step(params, slots, t, source, inputs, targets):
        loss, grads = jax.value_and_grad(loss_fn)(params, jax.random.fold_in(key, t),
                                                  source, inputs, targets)
        m, v = slots
        b1, b2, eps = config.adam_beta1, config.adam_beta2, config.adam_epsilon
        m = jax.tree_util.tree_map(lambda m, g: b1 * m + (1 - b1) * g, m, grads)
        v = jax.tree_util.tree_map(lambda v, g: b2 * v + (1 - b2) * g * g, v, grads)
        # TF's AdamOptimizer with the warm-up schedule; steps count from 1.
        n = (t + 1).astype(jnp.float32)
        rate = common.learning_rate(config, n, jnp.minimum)
        lr = rate * jnp.sqrt(1 - b2 ** n) / (1 - b1 ** n)
        params = jax.tree_util.tree_map(lambda p, m, v: p - lr * m / (jnp.sqrt(v) + eps),
                                        params, m, v)
        return params, (m, v), t + 1, loss

    slots = ({k: np.zeros_like(p) for k, p in params.items()},
             {k: np.zeros_like(p) for k, p in params.items()})
    return _runner(step, (params, slots, np.int32(0)), source, inputs, targets)


def _runner(step, state, *data):
    """Keeps the donated state between calls; each call is one step and returns its loss."""
    import jax
    n = len(state)
    step = jax.jit(step, donate_argnums=tuple(range(n)))
    box = [jax.device_put(state)]

    def run():
        *new_state, loss = step(*box[0], *data)
        box[0] = tuple(new_state)
        return np.asarray(loss)

    return run
