"""ResNet-50 v1.5, MobileNet v2 and a Transformer language model written directly in JAX.

These are the references `tensorflux bench --compare` times against: the same
architectures as the zoo (NHWC images, HWIO kernels, batch norm without conv biases,
He-normal convolutions, Glorot dense layers), a softmax cross-entropy loss and the same
optimizer step (Momentum 0.9 for the classifiers, Adam for the Transformer), jitted with
the parameters, optimizer slots and batch-norm statistics donated so updates are in place.

    run = image_classifier_step("resnet50", batch_size=16, image_size=64)
    run()                       # one training step; returns the loss
    parameter_count("resnet50") # 25,557,032 trainable values for 1000 classes

`precision="bfloat16"` is mixed precision: float32 parameters, bfloat16 compute (the
parameters and images are cast inside the step; batch-norm statistics and the loss stay
in float32).
"""

from __future__ import annotations

import dataclasses

import numpy as np

BN_MOMENTUM, BN_EPSILON = 0.997, 1e-5
LEARNING_RATE, MOMENTUM = 0.1, 0.9


# -- a tiny functional "layer context": one architecture function, two uses ---------------------
class Net:
    """Holds parameters and batch-norm statistics by name.

    With `rng` set, a missing parameter is created on first use (the architecture is run
    once under `jax.eval_shape` to create them all); otherwise parameters are read, cast
    to the compute dtype, and batch-norm's new statistics are collected in `new_state`.
    """

    def __init__(self, params=None, state=None, rng=None, dtype=None):
        import jax.numpy as jnp
        self.params = {} if params is None else params
        self.state = {} if state is None else state
        self.new_state = {}
        self.rng = rng
        self.dtype = dtype or jnp.float32

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


def he_normal(rng, shape):
    fan_in = int(np.prod(shape[:-1]))
    return rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)


def glorot_uniform(rng, shape):
    limit = np.sqrt(6.0 / (shape[0] + shape[-1]))
    return rng.uniform(-limit, limit, shape)


def zeros(rng, shape):
    return np.zeros(shape)


def ones(rng, shape):
    return np.ones(shape)


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


def batch_norm(net, name, x):
    """Training-mode batch norm over (N, H, W); statistics in float32 whatever x's dtype."""
    import jax.numpy as jnp
    c = x.shape[-1]
    gamma = net.param(f"{name}/gamma", (c,), ones).astype(jnp.float32)
    beta = net.param(f"{name}/beta", (c,), zeros).astype(jnp.float32)
    moving_mean = net.stat(f"{name}/moving_mean", (c,), 0.0)
    moving_var = net.stat(f"{name}/moving_variance", (c,), 1.0)
    x32 = x.astype(jnp.float32)
    mean = x32.mean(axis=(0, 1, 2))
    var = jnp.square(x32 - mean).mean(axis=(0, 1, 2))
    net.new_state[f"{name}/moving_mean"] = moving_mean * BN_MOMENTUM + mean * (1 - BN_MOMENTUM)
    net.new_state[f"{name}/moving_variance"] = (moving_var * BN_MOMENTUM
                                               + var * (1 - BN_MOMENTUM))
    y = (x32 - mean) * (gamma * jnp.reciprocal(jnp.sqrt(var + BN_EPSILON))) + beta
    return y.astype(x.dtype)


def dense(net, name, x, units):
    kernel = net.param(f"{name}/kernel", (x.shape[-1], units), glorot_uniform)
    return x @ kernel + net.param(f"{name}/bias", (units,), zeros)


# -- ResNet-50 v1.5 -------------------------------------------------------------------------------
RESNET50_STAGES = ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2))  # (width, blocks, stride)


def resnet50(net, x, num_classes):
    """x: (N, H, W, 3) -> logits (N, num_classes). v1.5: the stride is on the 3x3 conv."""
    import jax
    h = jax.nn.relu(batch_norm(net, "conv1/bn", conv(net, "conv1", x, 64, 7, 2)))
    h = jax.lax.reduce_window(h, -np.inf, jax.lax.max, (1, 3, 3, 1), (1, 2, 2, 1),
                              [(0, 0), (1, 1), (1, 1), (0, 0)])
    for s, (width, blocks, stride) in enumerate(RESNET50_STAGES):
        for b in range(blocks):
            h = _bottleneck(net, f"stage{s + 1}/block{b + 1}", h, width,
                            stride if b == 0 else 1, project=b == 0)
    return dense(net, "logits", h.mean(axis=(1, 2)), num_classes)


def _bottleneck(net, name, x, width, stride, project):
    import jax
    shortcut = x
    if project:  # (N, H, W, C) -> (N, H/s, W/s, 4*width)
        shortcut = batch_norm(net, f"{name}/shortcut/bn",
                              conv(net, f"{name}/shortcut", x, 4 * width, 1, stride))
    h = jax.nn.relu(batch_norm(net, f"{name}/bn1", conv(net, f"{name}/conv1", x, width, 1)))
    h = jax.nn.relu(batch_norm(net, f"{name}/bn2",
                               conv(net, f"{name}/conv2", h, width, 3, stride)))
    h = batch_norm(net, f"{name}/bn3", conv(net, f"{name}/conv3", h, 4 * width, 1))
    return jax.nn.relu(h + shortcut)


# -- MobileNet v2 ----------------------------------------------------------------------------------
# (expansion, output channels, repeats, first stride), as in the paper's table 2.
MOBILENET_V2_BLOCKS = ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
                       (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1))


def mobilenet_v2(net, x, num_classes):
    import jax
    h = jax.nn.relu6(batch_norm(net, "conv1/bn", conv(net, "conv1", x, 32, 3, 2)))
    i = 0
    for expansion, channels, repeats, stride in MOBILENET_V2_BLOCKS:
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


# -- Transformer language model ----------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class TransformerConfig:
    """A decoder-only Transformer (pre-layer-norm, tied input/output embeddings)."""
    vocab_size: int = 32000
    seq_len: int = 256
    d_model: int = 512
    num_heads: int = 8
    num_layers: int = 6
    d_ff: int = 2048


def transformer_lm(net, tokens, config):
    """tokens: (N, T) int32 -> logits (N, T, vocab) of the next token."""
    import jax
    import jax.numpy as jnp
    embedding = net.param("embedding", (config.vocab_size, config.d_model),
                          lambda rng, s: rng.standard_normal(s) * config.d_model ** -0.5)
    t = tokens.shape[1]
    h = embedding[tokens] * np.sqrt(config.d_model) + _positions(t, config.d_model, net.dtype)
    causal = jnp.tril(jnp.ones((t, t), bool))
    for i in range(config.num_layers):
        a = _layer_norm(net, f"layer{i}/ln1", h)
        h = h + _attention(net, f"layer{i}/attention", a, causal, config.num_heads)
        f = _layer_norm(net, f"layer{i}/ln2", h)
        f = jax.nn.relu(dense(net, f"layer{i}/ffn1", f, config.d_ff))
        h = h + dense(net, f"layer{i}/ffn2", f, config.d_model)
    return _layer_norm(net, "final_ln", h) @ embedding.T


def _positions(t, d, dtype):
    position = np.arange(t)[:, None]
    rate = np.exp(-np.log(10000.0) * np.arange(0, d, 2) / d)
    table = np.zeros((t, d), np.float32)
    table[:, 0::2], table[:, 1::2] = np.sin(position * rate), np.cos(position * rate)
    return table.astype(dtype)


def _layer_norm(net, name, x):
    import jax.numpy as jnp
    d = x.shape[-1]
    x32 = x.astype(jnp.float32)
    mean = x32.mean(-1, keepdims=True)
    var = jnp.square(x32 - mean).mean(-1, keepdims=True)
    y = (x32 - mean) / jnp.sqrt(var + 1e-6)
    y = y * net.param(f"{name}/gamma", (d,), ones).astype(jnp.float32) \
        + net.param(f"{name}/beta", (d,), zeros).astype(jnp.float32)
    return y.astype(x.dtype)


def _attention(net, name, x, causal, heads):
    import jax
    import jax.numpy as jnp
    n, t, d = x.shape
    qkv = dense(net, f"{name}/qkv", x, 3 * d).reshape(n, t, 3, heads, d // heads)
    q, k, v = qkv[:, :, 0], qkv[:, :, 1], qkv[:, :, 2]  # (N, T, heads, d/heads)
    scores = jnp.einsum("nqhd,nkhd->nhqk", q, k) / np.sqrt(d // heads)
    scores = jnp.where(causal, scores.astype(jnp.float32), -1e9)
    weights = jax.nn.softmax(scores, axis=-1).astype(x.dtype)
    out = jnp.einsum("nhqk,nkhd->nqhd", weights, v).reshape(n, t, d)
    return dense(net, f"{name}/out", out, d)


# -- initialization, steps and counts ------------------------------------------------------------------
def init(model_fn, input_spec, *args, seed=0):
    """(params, batch-norm state) as NumPy float32, created by tracing the model once."""
    import jax
    net = Net(rng=np.random.default_rng(seed))
    jax.eval_shape(lambda x: model_fn(net, x, *args), input_spec)
    return net.params, net.state


def parameter_count(name, num_classes=1000, image_size=224):
    """Trainable values (weights, biases, batch-norm gamma and beta) of a JAX peer."""
    import jax
    import jax.numpy as jnp
    if name in IMAGE_CLASSIFIERS:
        spec = jax.ShapeDtypeStruct((1, image_size, image_size, 3), jnp.float32)
        params, _ = init(IMAGE_CLASSIFIERS[name], spec, num_classes)
    else:
        config = TransformerConfig()
        spec = jax.ShapeDtypeStruct((1, config.seq_len), jnp.int32)
        params, _ = init(transformer_lm, spec, config)
    return sum(int(np.prod(p.shape)) for p in params.values())


def _compute_dtype(precision):
    import jax.numpy as jnp
    if precision not in ("float32", "bfloat16"):
        raise ValueError(f"precision must be float32 or bfloat16, got {precision!r}")
    return jnp.bfloat16 if precision == "bfloat16" else jnp.float32


def _cross_entropy(logits, labels):
    import jax
    import jax.numpy as jnp
    log_probs = jax.nn.log_softmax(logits.astype(jnp.float32))
    return -jnp.take_along_axis(log_probs, labels[..., None], axis=-1).mean()


def image_classifier_step(name, batch_size, image_size=224, num_classes=1000,
                          precision="float32", seed=0):
    """A jitted Momentum training step on fixed random images; returns `run()`."""
    import jax
    import jax.numpy as jnp
    model_fn = IMAGE_CLASSIFIERS[name]
    dtype = _compute_dtype(precision)
    rng = np.random.default_rng(seed)
    images = jnp.asarray(rng.standard_normal((batch_size, image_size, image_size, 3)),
                         jnp.float32)
    labels = jnp.asarray(rng.integers(0, num_classes, batch_size), jnp.int32)
    params, state = init(model_fn, jax.ShapeDtypeStruct(images.shape, jnp.float32),
                         num_classes, seed=seed)

    def loss_fn(params, state, x, y):
        net = Net(params, state, dtype=dtype)
        logits = model_fn(net, x.astype(dtype), num_classes)
        return _cross_entropy(logits, y), net.new_state

    def step(params, velocity, state, x, y):
        (loss, state), grads = jax.value_and_grad(loss_fn, has_aux=True)(params, state, x, y)
        # TF's MomentumOptimizer: v <- m*v + g; p <- p - lr*v.
        velocity = jax.tree_util.tree_map(lambda v, g: MOMENTUM * v + g, velocity, grads)
        params = jax.tree_util.tree_map(lambda p, v: p - LEARNING_RATE * v, params, velocity)
        return params, velocity, state, loss

    velocity = {k: np.zeros_like(v) for k, v in params.items()}
    return _runner(step, (params, velocity, state), images, labels)


def transformer_step(batch_size, config=TransformerConfig(), precision="float32", seed=0,
                     learning_rate=1e-3):
    """A jitted Adam training step of the language model on fixed random tokens."""
    import jax
    import jax.numpy as jnp
    dtype = _compute_dtype(precision)
    rng = np.random.default_rng(seed)
    tokens = jnp.asarray(rng.integers(0, config.vocab_size, (batch_size, config.seq_len + 1)),
                         jnp.int32)
    params, _ = init(transformer_lm, jax.ShapeDtypeStruct((1, config.seq_len), jnp.int32),
                     config, seed=seed)

    def loss_fn(params, tokens):
        logits = transformer_lm(Net(params, dtype=dtype), tokens[:, :-1], config)
        return _cross_entropy(logits, tokens[:, 1:])

    def step(params, slots, t, tokens):
        loss, grads = jax.value_and_grad(loss_fn)(params, tokens)
        m, v = slots
        b1, b2, eps = 0.9, 0.999, 1e-8
        m = jax.tree_util.tree_map(lambda m, g: b1 * m + (1 - b1) * g, m, grads)
        v = jax.tree_util.tree_map(lambda v, g: b2 * v + (1 - b2) * g * g, v, grads)
        lr = learning_rate * jnp.sqrt(1 - b2 ** t) / (1 - b1 ** t)
        params = jax.tree_util.tree_map(lambda p, m, v: p - lr * m / (jnp.sqrt(v) + eps),
                                        params, m, v)
        return params, (m, v), t + 1, loss

    slots = ({k: np.zeros_like(p) for k, p in params.items()},
             {k: np.zeros_like(p) for k, p in params.items()})
    return _runner(step, (params, slots, np.float32(1.0)), tokens)


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
