"""NumPy-checked cases for reductions, arg-reductions and scans (reduce_ops.py)."""

import numpy as np

import tensorflux as tf
from tests.ops.harness import Case, positive, uniform

FLOAT = (np.float32, np.float64)
REAL = (np.float32, np.float64, np.int32, np.int64)
M = [((2, 3),)]
M3 = [((2, 3, 4),)]
V = [((5,),)]


def c_mean(x, axis=None, keepdims=False):
    """TF's integer mean: the sum divided by the count, truncated toward zero."""
    total = np.sum(x, axis=axis, keepdims=keepdims, dtype=x.dtype)
    count = x.size // max(np.size(total), 1)
    q = np.abs(total) // count
    return np.where(total < 0, -q, q).astype(x.dtype)


def exclusive(scan, identity, reverse=False, axis=0):
    """NumPy scan with TF's exclusive/reverse flags, written with flips and a shift."""
    def expect(x):
        y = np.flip(x, axis) if reverse else x
        y = np.moveaxis(y, axis, 0)
        shifted = np.concatenate([np.full_like(y[:1], identity), y[:-1]], axis=0)
        out = np.moveaxis(scan(shifted, axis=0).astype(x.dtype), 0, axis)
        return np.flip(out, axis) if reverse else out
    return expect


def with_zeros(rng, shape, dtype):
    """Values in [-2, 2] with about a quarter of them exactly 0."""
    x = uniform(-2, 2)(rng, shape, dtype)
    return np.where(rng.random(shape) < 0.25, 0, x).astype(dtype)


def logsumexp(x, axis=None, keepdims=False):
    m = np.max(x, axis=axis, keepdims=True)
    out = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
    return out if keepdims else np.squeeze(out, axis=axis)


CASES = [
    # -- Sum: every way of naming the axes -----------------------------------------------------
    Case("Sum", tf.reduce_sum, lambda x: np.sum(x, dtype=x.dtype), M3,
         REAL + (np.int8, np.complex64)),
    Case("Sum", lambda x: tf.reduce_sum(x, 1), lambda x: np.sum(x, 1), M3, (np.float32,),
         name="Sum(axis=1)"),
    Case("Sum", lambda x: tf.reduce_sum(x, -1, keepdims=True),
         lambda x: np.sum(x, -1, keepdims=True, dtype=x.dtype), M3, (np.float32, np.int32),
         name="Sum(axis=-1, keepdims)"),
    Case("Sum", lambda x: tf.reduce_sum(x, [0, 2]), lambda x: np.sum(x, (0, 2)), M3,
         (np.float64,), name="Sum(axis=[0, 2])"),
    Case("Sum", lambda x: tf.reduce_sum(x, reduction_indices=[1], keep_dims=True),
         lambda x: np.sum(x, 1, keepdims=True), M, (np.float32,),
         name="Sum(reduction_indices, keep_dims)"),
    Case("Sum", lambda x: tf.reduce_sum(x, tf.constant([-1, 0])), lambda x: np.sum(x, (0, 1)),
         M, (np.float32,), name="Sum(axis tensor)"),
    Case("Sum", lambda x: tf.reduce_sum(x, tf.rank(x) - 1), lambda x: np.sum(x, -1), M3,
         (np.float32,), name="Sum(axis computed from rank)"),
    Case("Sum", lambda x: tf.reduce_sum(x, []), lambda x: x, M, (np.float32,),
         name="Sum(no axes)"),
    Case("Sum", lambda x: tf.reduce_sum(x, 0), lambda x: np.sum(x, 0), [((0, 3),)],
         (np.float32,), name="Sum(empty input)"),
    # -- Mean: integer mean truncates toward zero, as TF's kernel ---------------------------
    Case("Mean", tf.reduce_mean, np.mean, M3, FLOAT + (np.complex64,)),
    Case("Mean", lambda x: tf.reduce_mean(x, 1), lambda x: c_mean(x, 1), M3,
         (np.int32, np.int64), gen=uniform(-9, 9), name="Mean(ints)"),
    Case("Mean", lambda x: tf.reduce_mean(x, keepdims=True),
         lambda x: c_mean(x, keepdims=True), M, (np.int32,), gen=uniform(-9, 9),
         name="Mean(ints, keepdims)"),
    Case("Mean", lambda x: tf.reduce_mean(x, [0, 1]), lambda x: np.mean(x, (0, 1)),
         M, (np.float16,), name="Mean(float16)"),
    Case("Mean", lambda x: tf.reduce_mean(x, -2, keepdims=True),
         lambda x: np.mean(x, -2, keepdims=True), M3, (np.float64,), name="Mean(keepdims)"),
    # -- Prod, Max, Min, Any, All, EuclideanNorm -----------------------------------------------
    Case("Prod", lambda x: tf.reduce_prod(x, 1), lambda x: np.prod(x, 1, dtype=x.dtype), M3,
         REAL + (np.complex128,), gen=uniform(-2, 2)),
    Case("Prod", tf.reduce_prod, lambda x: np.prod(x, dtype=x.dtype), M, (np.float32,),
         name="Prod(all)"),
    # Zeros: the gradient is the product of the other elements, with no division.
    Case("Prod", lambda x: tf.reduce_prod(x, [0, 2], keepdims=True),
         lambda x: np.prod(x, (0, 2), keepdims=True), M3, (np.float64,), gen=with_zeros,
         name="Prod(axes, keepdims, zeros)"),
    Case("Prod", lambda x: tf.reduce_prod(x, -1), lambda x: np.prod(x, -1),
         [((2, 3),)], (np.complex128,), name="Prod(complex)"),
    Case("Max", tf.reduce_max, np.max, M3, REAL + (np.uint8, np.float16)),
    Case("Max", lambda x: tf.reduce_max(x, [0, -1], keepdims=True),
         lambda x: np.max(x, (0, 2), keepdims=True), M3, (np.float32, np.int32),
         name="Max(axes, keepdims)"),
    Case("Max", lambda x: tf.reduce_max(x, 0), lambda x: np.full((3,), -np.inf, x.dtype),
         [((0, 3),)], (np.float32,), name="Max(empty gives -inf)"),
    Case("Min", lambda x: tf.reduce_min(x, 1), lambda x: np.min(x, 1), M3, REAL),
    Case("Min", lambda x: tf.reduce_min(x, [-1], keepdims=True),
         lambda x: np.min(x, -1, keepdims=True), M3, (np.float64,), name="Min(keepdims)"),
    Case("Any", lambda x: tf.reduce_any(x, 1), lambda x: np.any(x, 1), M3, (np.bool_,)),
    Case("Any", tf.reduce_any, np.any, M, (np.bool_,), name="Any(all)"),
    Case("All", lambda x: tf.reduce_all(x, -1, keepdims=True),
         lambda x: np.all(x, -1, keepdims=True), M3, (np.bool_,)),
    Case("EuclideanNorm", lambda x: tf.reduce_euclidean_norm(x, 1),
         lambda x: np.sqrt(np.sum(x * x, 1)), M3, FLOAT),
    Case("EuclideanNorm", lambda x: tf.reduce_euclidean_norm(x, [0, 2], keepdims=True),
         lambda x: np.sqrt(np.sum(x * x, (0, 2), keepdims=True)), M3, (np.float64,),
         name="EuclideanNorm(axes, keepdims)"),
    Case("EuclideanNorm", tf.reduce_euclidean_norm,
         lambda x: np.trunc(np.sqrt(np.sum(x * x))).astype(x.dtype), M, (np.int32,),
         name="EuclideanNorm(ints truncate)"),
    # -- composites --------------------------------------------------------------------------
    # int64 output: nothing to differentiate (the gradient check skips it).
    Case("Sum", lambda x: tf.count_nonzero(x, 1), lambda x: np.count_nonzero(x, 1), M3,
         (np.float32, np.int32, np.bool_), gen=uniform(-1, 1), name="Sum(count_nonzero)"),
    Case("Mean", lambda x: tf.reduce_variance(x, 1), lambda x: np.var(x, 1), M3, FLOAT,
         name="Mean(reduce_variance)"),
    Case("Mean", lambda x: tf.reduce_std(x, [0, 1], keepdims=True),
         lambda x: np.std(x, (0, 1), keepdims=True), M3, FLOAT, name="Mean(reduce_std)"),
    Case("Max", lambda x: tf.reduce_logsumexp(x, 1), lambda x: logsumexp(x, 1), M3, FLOAT,
         name="Max(reduce_logsumexp)"),
    Case("Max", lambda x: tf.reduce_logsumexp(x, keepdims=True),
         lambda x: logsumexp(x, keepdims=True), M, FLOAT, gen=uniform(-50, 50),
         name="Max(reduce_logsumexp, keepdims)"),
    # -- argmax / argmin: ties resolve to the first index --------------------------------------
    Case("ArgMax", lambda x: tf.argmax(x, 1), lambda x: np.argmax(x, 1), M3,
         REAL + (np.float16,), gen=uniform(-2, 2)),
    Case("ArgMax", tf.argmax, lambda x: np.argmax(x, 0), M, (np.int32,), gen=uniform(-1, 1),
         name="ArgMax(default axis 0)"),
    Case("ArgMax", lambda x: tf.argmax(x, dimension=-1, output_type=tf.int32),
         lambda x: np.argmax(x, -1).astype(np.int32), M3, (np.float32,),
         name="ArgMax(dimension, int32)"),
    Case("ArgMax", lambda x: tf.arg_max(x, 0), lambda x: np.argmax(x), V, (np.float64,),
         name="ArgMax(arg_max of a vector)"),
    Case("ArgMin", lambda x: tf.argmin(x, -2), lambda x: np.argmin(x, -2), M3, REAL,
         gen=uniform(-2, 2)),
    # -- scans ---------------------------------------------------------------------------------
    Case("Cumsum", tf.cumsum, lambda x: np.cumsum(x, 0, dtype=x.dtype), M3,
         REAL + (np.complex64, np.int8)),
    Case("Cumsum", lambda x: tf.cumsum(x, axis=-1, exclusive=True),
         exclusive(np.cumsum, 0, axis=2), M3, (np.float32, np.int32), name="Cumsum(exclusive)"),
    Case("Cumsum", lambda x: tf.cumsum(x, 1, reverse=True),
         lambda x: np.flip(np.cumsum(np.flip(x, 1), 1), 1), M3, (np.float64,),
         name="Cumsum(reverse)"),
    Case("Cumsum", lambda x: tf.cumsum(x, 1, exclusive=True, reverse=True),
         exclusive(np.cumsum, 0, reverse=True, axis=1), M3, (np.int64, np.float64),
         name="Cumsum(exclusive, reverse)"),
    Case("Cumprod", lambda x: tf.cumprod(x, 1), lambda x: np.cumprod(x, 1, dtype=x.dtype), M3,
         REAL, gen=uniform(-2, 2)),
    Case("Cumprod", lambda x: tf.cumprod(x, exclusive=True, reverse=True),
         exclusive(np.cumprod, 1, reverse=True), M3, (np.float32,), gen=positive(),
         name="Cumprod(exclusive, reverse)"),
    Case("Cumprod", lambda x: tf.cumprod(x, -1, exclusive=True),
         exclusive(np.cumprod, 1, axis=2), M3, (np.float64,), gen=uniform(-2, 2),
         name="Cumprod(exclusive)"),
]
