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
