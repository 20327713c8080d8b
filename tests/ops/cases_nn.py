"""NumPy-checked cases for the core tf.nn ops (activations, softmax, cross-entropy)."""

import numpy as np

import tensorflux as tf
from tests.ops.harness import Case, uniform

FLOAT = (np.float32, np.float64)


def np_log_softmax(x, axis=-1):
    shifted = x - x.max(axis=axis, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))


def np_softmax(x, axis=-1):
    return np.exp(np_log_softmax(x, axis))


def np_xent(labels, logits):
    return -(labels * np_log_softmax(logits)).sum(-1)


def probs(rng, shape, dtype):
    p = rng.uniform(0.1, 1.0, shape)
    return (p / p.sum(-1, keepdims=True)).astype(dtype)


def labels_for(n):
    def make(rng, shape, dtype):
        return rng.integers(0, n, size=shape).astype(dtype)
    return make


def away_from_zero(rng, shape, dtype):
    return (rng.uniform(0.2, 2.0, shape) * rng.choice([-1, 1], shape)).astype(dtype)


CASES = [
    Case("Relu", tf.nn.relu, lambda x: np.maximum(x, 0), [((3, 4),), ((5,),)],
         FLOAT + (np.int32,), grad_gen=away_from_zero),
    Case("ReluGrad", lambda g, f: tf.gradients(tf.nn.relu(f), f, grad_ys=g)[0],
         lambda g, f: np.where(f > 0, g, 0).astype(g.dtype), [((3, 4), (3, 4))], FLOAT,
         gen=[uniform(), away_from_zero], grad_inputs=[0]),
    Case("Softmax", tf.nn.softmax, np_softmax, [((3, 5),), ((2, 3, 4),)], FLOAT),
    Case("Softmax", lambda x: tf.nn.softmax(x, axis=0), lambda x: np_softmax(x, 0),
         [((3, 5),)], FLOAT, name="Softmax(axis=0)"),
    Case("LogSoftmax", tf.nn.log_softmax, np_log_softmax, [((3, 5),), ((4,),)], FLOAT),
    Case("SoftmaxCrossEntropyWithLogits",
         lambda labels, logits: tf.nn.softmax_cross_entropy_with_logits_v2(
             labels=labels, logits=logits),
         np_xent, [((4, 5), (4, 5)), ((2, 3, 5), (2, 3, 5))], FLOAT, gen=[probs, uniform()]),
    Case("SparseSoftmaxCrossEntropyWithLogits",
         lambda labels, logits: tf.nn.sparse_softmax_cross_entropy_with_logits(
             labels=labels, logits=logits),
         lambda labels, logits: -np.take_along_axis(
             np_log_softmax(logits), labels[..., None].astype(np.int64), -1)[..., 0],
         [((4,), (4, 6)), ((2, 3), (2, 3, 6))],
         [(np.int32, np.float32), (np.int64, np.float64)], gen=[labels_for(6), uniform()]),
    Case("BiasAdd", tf.nn.bias_add, lambda x, b: x + b, [((2, 3, 4), (4,)), ((5, 2), (2,))],
         FLOAT),
    Case("BiasAdd", lambda x, b: tf.nn.bias_add(x, b, data_format="NCHW"),
         lambda x, b: x + b.reshape(1, -1, 1, 1), [((2, 3, 4, 5), (3,))], FLOAT,
         name="BiasAdd(NCHW)"),
    Case("StopGradient", tf.stop_gradient, lambda x: x, [((3,),)], FLOAT),
    Case("PlaceholderWithDefault", lambda x: tf.placeholder_with_default(x, x.shape),
         lambda x: x, [((2, 3),)], FLOAT),
    Case("IdentityN", lambda x, y: tf.identity_n([x, y]), lambda x, y: [x, y],
         [((2, 3), (4,))], FLOAT),
    # QR is unique only up to column signs: check Q R = A and Q^T Q = I instead.
    Case("Qr", lambda a: (lambda q, r: [tf.matmul(q, r), tf.matmul(q, q, transpose_a=True)])(
        *tf.qr(a)), lambda a: [a, np.eye(a.shape[1], dtype=a.dtype)], [((5, 3),)], FLOAT),
]


# -- activations, losses and normalization (nn_ops.py, nn_norm_ops.py, ...) ----------------------
import scipy.special  # noqa: E402

from tensorflux._src.ops.nn.nn_ops import log_sigmoid  # noqa: E402  (tf.log_sigmoid in TF1)
from tensorflux._src.ops.op_builder import apply_op  # noqa: E402

SELU_SCALE, SELU_ALPHA = 1.0507009873554804934193349852946, 1.6732632423543772848170429916717
F32 = (np.float32,)


def away_from(*kinks, low=-3.0, high=9.0):
    """Values at least 0.1 away from the given points (piecewise functions' kinks)."""
    def make(rng, shape, dtype):
        x = rng.uniform(low, high, shape)
        for k in kinks:
            x = np.where(np.abs(x - k) < 0.1, k + 0.2, x)
        return x.astype(dtype)
    return make


def grad_of(fn):
    """(gradients, features) -> the gradient kernel tf.gradients builds for fn."""
    return lambda g, f: tf.gradients(fn(f), f, grad_ys=g)[0]


def np_sigmoid(x):
    return 1 / (1 + np.exp(-x))


def np_softplus(x):
    return np.maximum(x, 0) + np.log1p(np.exp(-np.abs(x)))


def np_erf(x):
    return scipy.special.erf(x).astype(x.dtype)


def ints_as_floats(low, high):
    """Small integers as floats: ties between predictions."""
    def make(rng, shape, dtype):
        return rng.integers(low, high + 1, size=shape).astype(dtype)
    return make


def np_in_top_k(predictions, targets, k):
    out = np.zeros(len(targets), bool)
    for b, t in enumerate(targets):
        if 0 <= t < predictions.shape[1] and np.isfinite(predictions[b, t]):
            out[b] = np.sum(predictions[b] > predictions[b, t]) < k
    return out


def np_batch_norm_train(x, scale, offset, eps=0.001, nchw=False):
    axes = (0, 2, 3) if nchw else (0, 1, 2)
    shape = (1, -1, 1, 1) if nchw else (1, 1, 1, -1)
    xf = x.astype(np.float64)
    mean, var = xf.mean(axes), xf.var(axes)
    n = x.size // mean.size
    y = (xf - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + eps) * scale.reshape(shape) \
        + offset.reshape(shape)
    return [y.astype(x.dtype), mean.astype(np.float32), (var * n / (n - 1)).astype(np.float32)]


def np_batch_norm_infer(x, scale, offset, mean, var, eps=0.001, nchw=False):
    shape = (1, -1, 1, 1) if nchw else (1, 1, 1, -1)
    y = (x.astype(np.float64) - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + eps) \
        * scale.reshape(shape) + offset.reshape(shape)
    return [y.astype(x.dtype), mean, var]


def np_batch_norm_train_backward(dy, x, scale, eps=0.001):
    """d(sum(dy * y))/d(x, scale, offset) for training-mode batch norm, NHWC (the closed
    form of Ioffe & Szegedy's paper)."""
    axes = (0, 1, 2)
    dy64, x64 = dy.astype(np.float64), x.astype(np.float64)
    n = x.size // x.shape[-1]
    mean, var = x64.mean(axes), x64.var(axes)
    xhat = (x64 - mean) / np.sqrt(var + eps)
    dscale = (dy64 * xhat).sum(axes)
    doffset = dy64.sum(axes)
    dx = scale / np.sqrt(var + eps) / n * (n * dy64 - doffset - xhat * dscale)
    return [dx.astype(x.dtype), dscale.astype(np.float32), doffset.astype(np.float32)]


def np_lrn(x, r=2, bias=1.5, alpha=0.3, beta=0.75):
    x64 = x.astype(np.float64)
    depth = x.shape[-1]
    sqr = np.zeros_like(x64)
    for d in range(depth):
        sqr[..., d] = (x64[..., max(0, d - r):d + r + 1] ** 2).sum(-1)
    return (x64 / (bias + alpha * sqr) ** beta).astype(x.dtype)


def np_lrn_backward(g, x, r=2, bias=1.5, alpha=0.3, beta=0.75):
    # dx_i = g_i N_i^-beta - 2 alpha beta x_i sum_{j: |i - j| <= r} g_j x_j N_j^(-beta-1)
    g64, x64 = g.astype(np.float64), x.astype(np.float64)
    depth = x.shape[-1]
    norm = np.zeros_like(x64)
    for d in range(depth):
        norm[..., d] = bias + alpha * (x64[..., max(0, d - r):d + r + 1] ** 2).sum(-1)
    t = g64 * x64 * norm ** (-beta - 1)
    window = np.zeros_like(x64)
    for d in range(depth):
        window[..., d] = t[..., max(0, d - r):d + r + 1].sum(-1)
    return (g64 * norm ** -beta - 2 * alpha * beta * x64 * window).astype(x.dtype)


def np_gamma_sample_grad(alpha, sample):
    """d sample / d alpha of a Gamma(alpha, 1) sample: -(dP/dalpha) / pdf, with P the
    regularized lower incomplete gamma function (central differences in alpha)."""
    a, x = np.broadcast_arrays(alpha.astype(np.float64), sample.astype(np.float64))
    h = 1e-6
    dp_da = (scipy.special.gammainc(a + h, x) - scipy.special.gammainc(a - h, x)) / (2 * h)
    log_pdf = (a - 1) * np.log(x) - x - scipy.special.gammaln(a)
    return (-dp_da / np.exp(log_pdf)).astype(alpha.dtype)


def np_embedding(params, ids, strategy=None, max_norm=None):
    """The full table assembled from partitions, then rows `ids`."""
    if strategy == "mod":
        total = sum(len(p) for p in params)
        table = np.stack([params[i % len(params)][i // len(params)] for i in range(total)])
    else:
        table = np.concatenate(params)
    rows = table[ids]
    if max_norm is not None:
        norm = np.sqrt((rows ** 2).sum(-1, keepdims=True))
        rows = rows * (max_norm / np.maximum(norm, max_norm))
    return rows


FBN = dict(dtypes=[(np.float32, np.float32, np.float32), (np.float16, np.float32, np.float32)],
           grad=False)
FBN_INFER = dict(dtypes=[(np.float32,) * 5, (np.float16,) + (np.float32,) * 4],
                 gen=[uniform(), uniform(0.5, 2), uniform(), uniform(), uniform(0.5, 2)],
                 grad=False)
LRN_ARGS = dict(depth_radius=2, bias=1.5, alpha=0.3, beta=0.75)

CASES += [
    # Kernels with their gradient kernels: the *Grad cases' gradient checks are TF's
    # second derivatives.
    Case("Relu6", tf.nn.relu6, lambda x: np.clip(x, 0, 6), [((3, 4),)], FLOAT + (np.int32,),
         gen=uniform(-3, 9), grad_gen=away_from(0, 6)),
    Case("Relu6Grad", grad_of(tf.nn.relu6),
         lambda g, f: np.where((f > 0) & (f < 6), g, 0).astype(g.dtype), [((3, 4), (3, 4))],
         FLOAT, gen=[uniform(), away_from(0, 6)]),
    Case("LeakyRelu", lambda x: tf.nn.leaky_relu(x, alpha=0.3),
         lambda x: np.where(x > 0, x, 0.3 * x).astype(x.dtype), [((3, 4),)],
         FLOAT + (np.float16,), grad_gen=away_from(0)),
    Case("LeakyReluGrad", grad_of(lambda f: tf.nn.leaky_relu(f, alpha=0.3)),
         lambda g, f: np.where(f > 0, g, 0.3 * g).astype(g.dtype), [((3, 4), (3, 4))], FLOAT,
         gen=[uniform(), away_from(0)]),
    Case("Elu", tf.nn.elu, lambda x: np.where(x < 0, np.expm1(x), x).astype(x.dtype),
         [((3, 4),), ((5,),)], FLOAT + (np.float16,), grad_gen=away_from(0)),
    Case("EluGrad", grad_of(tf.nn.elu),
         lambda g, f: np.where(f < 0, g * np.exp(f), g).astype(g.dtype), [((3, 4), (3, 4))],
         FLOAT, gen=[uniform(), away_from(0)]),
    Case("Selu", tf.nn.selu,
         lambda x: np.where(x < 0, SELU_SCALE * SELU_ALPHA * np.expm1(x),
                            SELU_SCALE * x).astype(x.dtype),
         [((3, 4),)], FLOAT, grad_gen=away_from(0)),
    Case("SeluGrad", grad_of(tf.nn.selu),
         lambda g, f: np.where(f < 0, g * SELU_SCALE * SELU_ALPHA * np.exp(f),
                               g * SELU_SCALE).astype(g.dtype),
         [((3, 4), (3, 4))], FLOAT, gen=[uniform(), away_from(0)]),
    Case("Softplus", tf.nn.softplus, np_softplus, [((3, 4),)], FLOAT + (np.float16,),
         gen=uniform(-20, 20)),
    Case("SoftplusGrad", grad_of(tf.nn.softplus),
         lambda g, f: (g * np_sigmoid(f)).astype(g.dtype), [((3, 4), (3, 4))], FLOAT),
    Case("Softsign", tf.nn.softsign, lambda x: x / (1 + np.abs(x)), [((3, 4),)], FLOAT,
         grad_gen=away_from(0)),
    Case("SoftsignGrad", grad_of(tf.nn.softsign),
         lambda g, f: g / (1 + np.abs(f)) ** 2, [((3, 4), (3, 4))], FLOAT, grad=False),
    Case("L2Loss", tf.nn.l2_loss, lambda x: (x.astype(np.float64) ** 2).sum().astype(x.dtype) / 2,
         [((3, 4),), ((5,),)], FLOAT + (np.float16,)),
    Case("InTopKV2", lambda p, t: tf.nn.in_top_k(p, t, 2),
         lambda p, t: np_in_top_k(p, t, 2), [((6, 5), (6,))],
         [(np.float32, np.int32), (np.float32, np.int64)],
         gen=[ints_as_floats(0, 3), uniform(-1, 5)]),
    Case("InTopKV2", lambda p, t: tf.nn.in_top_k(p, t, 1),
         lambda p, t: np_in_top_k(p, t, 1), [((4, 3), (4,))], [(np.float32, np.int32)],
         gen=[ints_as_floats(0, 2), uniform(0, 2)], name="InTopKV2(k=1, ties)"),
    Case("FusedBatchNormV3", lambda x, s, o: list(tf.nn.fused_batch_norm(x, s, o)),
         np_batch_norm_train, [((2, 3, 2, 3), (3,), (3,))], **FBN),
    Case("FusedBatchNormV3",
         lambda x, s, o: list(tf.nn.fused_batch_norm(x, s, o, data_format="NCHW")),
         lambda x, s, o: np_batch_norm_train(x, s, o, nchw=True),
         [((2, 3, 2, 2), (3,), (3,))], name="FusedBatchNormV3(NCHW)", **FBN),
    Case("FusedBatchNormV3",
         lambda x, s, o, m, v: list(tf.nn.fused_batch_norm(x, s, o, m, v, is_training=False)),
         np_batch_norm_infer, [((2, 2, 2, 3), (3,), (3,), (3,), (3,))],
         name="FusedBatchNormV3(inference)", **FBN_INFER),
    Case("FusedBatchNormV3",
         lambda x, s, o, m, v: list(tf.nn.fused_batch_norm(
             x, s, o, m, v, data_format="NCHW", is_training=False)),
         lambda x, s, o, m, v: np_batch_norm_infer(x, s, o, m, v, nchw=True),
         [((2, 3, 2, 2), (3,), (3,), (3,), (3,))], name="FusedBatchNormV3(inference, NCHW)",
         **FBN_INFER),
    Case("FusedBatchNormGradV3",
         lambda dy, x, s: tf.gradients(tf.nn.fused_batch_norm(x, s, tf.zeros([3]))[0],
                                       [x, s], grad_ys=dy) + [tf.reduce_sum(
                                           dy, [0, 1, 2])],
         lambda dy, x, s: np_batch_norm_train_backward(dy, x, s),
         [((2, 2, 3, 3), (2, 2, 3, 3), (3,))], F32, grad=False, rtol=1e-4),
    Case("FusedBatchNormGradV3",
         lambda dy, x, s, m, v: tf.gradients(
             tf.nn.fused_batch_norm(x, s, tf.zeros([3]), m, v, is_training=False)[0],
             [x, s], grad_ys=dy),
         lambda dy, x, s, m, v: [(dy * s / np.sqrt(v + 0.001)).astype(x.dtype),
                                 (dy * (x - m) / np.sqrt(v + 0.001)).sum((0, 1, 2))],
         [((2, 2, 2, 3), (2, 2, 2, 3), (3,), (3,), (3,))], F32, grad=False, rtol=1e-4,
         gen=[uniform(), uniform(), uniform(), uniform(), uniform(0.5, 2)],
         name="FusedBatchNormGradV3(inference)"),
    Case("LRN", lambda x: tf.nn.local_response_normalization(x, **LRN_ARGS), np_lrn,
         [((2, 2, 2, 7),)], (np.float32, np.float16), grad=False),
    Case("LRN", tf.nn.lrn,
         lambda x: np_lrn(x, r=5, bias=1.0, alpha=1.0, beta=0.5), [((1, 2, 1, 4),)], F32,
         grad=False, name="LRN(defaults)"),
    Case("LRNGrad", grad_of(lambda x: tf.nn.lrn(x, **LRN_ARGS)), np_lrn_backward,
         [((2, 2, 1, 7), (2, 2, 1, 7))], F32, grad=False, rtol=1e-4),
    Case("RandomGammaGrad",
         lambda a, x: apply_op("RandomGammaGrad", alpha=a, sample=x),
         np_gamma_sample_grad, [((3, 4), (3, 4)), ((4,), (2, 4))], FLOAT,
         gen=[uniform(0.5, 4), uniform(0.2, 5)], grad=False, rtol=1e-4),
    # Composites: the case names the op they are built around.
    Case("Relu", tf.nn.crelu, lambda x: np.maximum(np.concatenate([x, -x], -1), 0),
         [((3, 4),)], FLOAT, grad_gen=away_from(0), name="crelu"),
    Case("Relu", lambda x: tf.nn.crelu(x, axis=0),
         lambda x: np.maximum(np.concatenate([x, -x], 0), 0), [((2, 3),)], FLOAT,
         grad_gen=away_from(0), name="crelu(axis=0)"),
    Case("Erf", tf.nn.gelu, lambda x: 0.5 * x * (1 + np_erf(x / np.sqrt(2).astype(x.dtype))),
         [((3, 4),)], FLOAT, name="gelu"),
    Case("Tanh", lambda x: tf.nn.gelu(x, approximate=True),
         lambda x: (0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))
                    ).astype(x.dtype),
         [((3, 4),)], FLOAT, name="gelu(approximate)"),
    Case("Sigmoid", tf.nn.swish, lambda x: x * np_sigmoid(x), [((3, 4),)], FLOAT,
         name="swish"),
    Case("Sigmoid", lambda x: tf.nn.silu(x, beta=1.5), lambda x: x * np_sigmoid(1.5 * x),
         [((3, 4),)], FLOAT, name="silu(beta)"),
    Case("Softplus", log_sigmoid, lambda x: -np_softplus(-x),
         [((3, 4),)], FLOAT, name="log_sigmoid"),
    Case("Log1p", lambda z, x: tf.nn.sigmoid_cross_entropy_with_logits(labels=z, logits=x),
         lambda z, x: np.maximum(x, 0) - x * z + np.log1p(np.exp(-np.abs(x))),
         [((3, 4), (3, 4)), ((5,), (5,))], FLOAT, gen=[uniform(0, 1), uniform(-5, 5)],
         grad_gen=[uniform(0, 1), away_from(0, low=-5, high=5)],
         name="sigmoid_cross_entropy_with_logits"),
    Case("Log1p", lambda z, x: tf.nn.weighted_cross_entropy_with_logits(
             labels=z, logits=x, pos_weight=2.5),
         lambda z, x: ((1 - z) * x + (1 + 1.5 * z) * (np.log1p(np.exp(-np.abs(x)))
                                                      + np.maximum(-x, 0))).astype(x.dtype),
         [((3, 4), (3, 4))], FLOAT, gen=[uniform(0, 1), uniform(-5, 5)],
         grad_gen=[uniform(0, 1), away_from(0, low=-5, high=5)],
         name="weighted_cross_entropy_with_logits"),
    Case("Exp", lambda z, c: tf.nn.log_poisson_loss(z, c, compute_full_loss=True),
         lambda z, c: np.exp(c) - c * z + np.where(
             (z >= 0) & (z <= 1), 0, z * np.log(z) - z + 0.5 * np.log(2 * np.pi * z)
         ).astype(z.dtype),
         [((3, 4), (3, 4))], FLOAT, gen=[uniform(0.1, 4), uniform()],
         grad_gen=[away_from(1, low=0.1, high=4), uniform()], name="log_poisson_loss"),
    Case("Rsqrt", lambda x: tf.nn.l2_normalize(x, axis=1),
         lambda x: x / np.sqrt(np.maximum((x ** 2).sum(1, keepdims=True), 1e-12)),
         [((3, 4),)], FLOAT, name="l2_normalize"),
    Case("Rsqrt", lambda x: tf.nn.l2_normalize(x, [0, 2]),
         lambda x: x / np.sqrt(np.maximum((x ** 2).sum((0, 2), keepdims=True), 1e-12)),
         [((2, 3, 2),)], FLOAT, name="l2_normalize(axes)"),
    Case("Mean", lambda x: list(tf.nn.moments(x, [0, 1])),
         lambda x: [x.mean((0, 1)), x.var((0, 1))], [((3, 2, 4),)], FLOAT, name="moments"),
    Case("Mean", lambda x: list(tf.nn.moments(x, [1], keep_dims=True)),
         lambda x: [x.mean(1, keepdims=True), x.var(1, keepdims=True)], [((3, 4),)],
         FLOAT + (np.float16,), name="moments(keep_dims)"),
    Case("Sum", lambda x, w: list(tf.nn.weighted_moments(x, [0], w)),
         lambda x, w: [(w * x).sum(0) / (w + 0 * x).sum(0),
                       (w * (x - (w * x).sum(0) / (w + 0 * x).sum(0)) ** 2).sum(0)
                       / (w + 0 * x).sum(0)],
         [((5, 3), (5, 1)), ((4, 3), (3,))], FLOAT, gen=[uniform(), uniform(0.5, 2)],
         name="weighted_moments"),
    Case("Sum", lambda x: list(tf.nn.normalize_moments(
             *tf.nn.sufficient_statistics(x, [0], shift=tf.cast(0.5, x.dtype)))),
         lambda x: [x.mean(0), x.var(0)], [((6, 3),)], FLOAT, name="sufficient_statistics"),
    Case("Rsqrt", lambda x, m, v, o, s: tf.nn.batch_normalization(x, m, v, o, s, 0.01),
         lambda x, m, v, o, s: (x - m) / np.sqrt(v + 0.01) * s + o,
         [((4, 3), (3,), (3,), (3,), (3,))], FLOAT,
         gen=[uniform(), uniform(), uniform(0.5, 2), uniform(), uniform()],
         name="batch_normalization"),
    Case("BiasAdd", tf.nn.xw_plus_b, lambda x, w, b: x @ w + b, [((2, 3), (3, 4), (4,))],
         FLOAT, name="xw_plus_b"),
    Case("GatherV2", lambda p, i: tf.nn.embedding_lookup(p, i), lambda p, i: p[i],
         [((6, 3), (2, 2))], [(np.float32, np.int32), (np.float64, np.int64)],
         gen=[uniform(), labels_for(6)], name="embedding_lookup"),
    Case("GatherV2", lambda p, i: tf.nn.embedding_lookup(p, i, max_norm=2.0),
         lambda p, i: np_embedding([p], i, max_norm=2.0), [((6, 3), (4,))],
         [(np.float64, np.int32)], gen=[uniform(), labels_for(6)],
         name="embedding_lookup(max_norm)"),
    Case("GatherV2", lambda a, b, c, i: tf.nn.embedding_lookup([a, b, c], i),
         lambda a, b, c, i: np_embedding([a, b, c], i, "mod"),
         [((3, 2), (2, 2), (2, 2), (2, 4))], [(np.float64,) * 3 + (np.int64,)],
         gen=[uniform()] * 3 + [labels_for(7)], unknown_dims=False,
         name="embedding_lookup(mod)"),
    Case("GatherV2", lambda a, b, c, i: tf.nn.embedding_lookup(
             [a, b, c], i, partition_strategy="div", max_norm=1.5),
         lambda a, b, c, i: np_embedding([a, b, c], i, "div", max_norm=1.5),
         [((3, 2), (2, 2), (2, 2), (5,))], [(np.float64,) * 3 + (np.int32,)],
         gen=[uniform()] * 3 + [labels_for(7)], name="embedding_lookup(div, max_norm)"),
    Case("Cast", tf.nn.zero_fraction,
         lambda x: np.float32(np.mean(x == 0)), [((3, 4),), ((7,),)],
         (np.float32, np.int32), gen=ints_as_floats(-1, 1), grad=False, name="zero_fraction"),
]
