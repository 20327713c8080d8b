"""NumPy-checked cases for the pooling family (max/avg pooling in 1-D, 2-D, 3-D, both
layouts, the gradient ops, max_pool_with_argmax). The expectations visit every output
window with plain loops: the window's valid (non-padded) input positions in row-major
order, TF's SAME padding rule written out again, the *first* maximum taking the
gradient, averages over the valid elements only."""

import itertools

import numpy as np

import tensorflux as tf
from tensorflux._src.ops.op_builder import apply_op
from tests.ops.harness import Case, uniform

FLOAT = (np.float32, np.float64)
small = uniform(-1.0, 1.0)


def distinct(rng, shape, dtype):
    """Values 0.25 apart in random order: no ties, so max pooling is differentiable."""
    n = int(np.prod(shape))
    return ((rng.permutation(n) - n / 2) * 0.25).reshape(shape).astype(dtype)


def ties(rng, shape, dtype):
    """Small integers: many windows hold their maximum more than once."""
    return rng.integers(0, 3, size=shape).astype(dtype)


# -- NumPy references ---------------------------------------------------------------------------
def _pads(size, k, s, padding):
    if padding == "VALID":
        return 0, (size - k) // s + 1
    out = -(-size // s)
    return max((out - 1) * s + k - size, 0) // 2, out


def _windows(shape, ksize, strides, padding):
    """(output index, valid input indices of its window in row-major order)."""
    geo = [_pads(d, k, s, padding) for d, k, s in zip(shape, ksize, strides)]
    for out in np.ndindex(*[o for _, o in geo]):
        ranges = [[o * s - b + j for j in range(k) if 0 <= o * s - b + j < d]
                  for o, s, (b, _), k, d in zip(out, strides, geo, ksize, shape)]
        yield out, list(itertools.product(*ranges))


def _out_shape(shape, ksize, strides, padding):
    return tuple(_pads(d, k, s, padding)[1] for d, k, s in zip(shape, ksize, strides))


def _first_max(x, window):
    best = window[0]
    for i in window[1:]:
        if x[i] > x[best]:
            best = i
    return best


def np_max_pool(x, ksize, strides, padding):
    out = np.empty(_out_shape(x.shape, ksize, strides, padding), x.dtype)
    for o, window in _windows(x.shape, ksize, strides, padding):
        out[o] = x[_first_max(x, window)]
    return out


def np_avg_pool(x, ksize, strides, padding):
    out = np.empty(_out_shape(x.shape, ksize, strides, padding), x.dtype)
    for o, window in _windows(x.shape, ksize, strides, padding):
        out[o] = np.mean([x[i] for i in window])
    return out


def np_max_pool_grad(x, g, ksize, strides, padding):
    dx = np.zeros(x.shape, g.dtype)
    for o, window in _windows(x.shape, ksize, strides, padding):
        dx[_first_max(x, window)] += g[o]
    return dx


def np_max_pool_grad_grad(x, h, ksize, strides, padding):
    out = np.empty(_out_shape(x.shape, ksize, strides, padding), h.dtype)
    for o, window in _windows(x.shape, ksize, strides, padding):
        out[o] = h[_first_max(x, window)]
    return out


def np_avg_pool_grad(shape, g, ksize, strides, padding):
    dx = np.zeros(shape, g.dtype)
    for o, window in _windows(shape, ksize, strides, padding):
        for i in window:
            dx[i] += g[o] / len(window)
    return dx


def np_argmax(x, ksize, strides, padding, include_batch_in_index=False):
    """TF's flattened index ((b * H + y) * W + x) * C + c, without b unless asked."""
    out = np.empty(_out_shape(x.shape, ksize, strides, padding), np.int64)
    for o, window in _windows(x.shape, ksize, strides, padding):
        flat = np.ravel_multi_index(_first_max(x, window), x.shape)
        out[o] = flat if include_batch_in_index else flat % int(np.prod(x.shape[1:]))
    return out


# -- cases ---------------------------------------------------------------------------------------
K2, S2 = [1, 2, 2, 1], [1, 2, 2, 1]
K3_NCHW, S2_NCHW = [1, 1, 3, 3], [1, 1, 2, 2]


def max_grad(pool):
    return lambda x, g: tf.gradients(pool(x), x, grad_ys=g)[0]


def raw(op_type, ksize, strides, padding, **attrs):
    """A gradient op built directly (TF has no public wrapper for these)."""
    def build(x, h):
        pool = "MaxPool3D" if len(ksize) == 5 else "MaxPool"
        y = apply_op(pool, input=x, ksize=ksize, strides=strides, padding=padding, **attrs)
        return apply_op(op_type, orig_input=x, orig_output=y, grad=h, ksize=ksize,
                        strides=strides, padding=padding, **attrs)
    return build


CASES = [
    # Forward max pooling: tiles, overlapping windows, 1-D/2-D/3-D, depth windows, ints.
    Case("MaxPool", lambda x: tf.nn.max_pool(x, 2, 2, "VALID"),
         lambda x: np_max_pool(x, K2, S2, "VALID"), [((1, 4, 4, 2),), ((2, 5, 5, 3),)],
         FLOAT + (np.int32,), grad_gen=distinct, name="MaxPool(2x2,s2,VALID)"),
    Case("MaxPool", lambda x: tf.nn.max_pool(x, 2, 2, "SAME"),
         lambda x: np_max_pool(x, K2, S2, "SAME"), [((2, 5, 3, 3),)],
         FLOAT + (np.int32,), grad_gen=distinct, name="MaxPool(2x2,s2,SAME,odd)"),
    Case("MaxPool", lambda x: tf.nn.max_pool(x, K3_NCHW, S2_NCHW, "SAME", data_format="NCHW"),
         lambda x: np_max_pool(x, K3_NCHW, S2_NCHW, "SAME"), [((1, 2, 5, 4),)], FLOAT,
         grad_gen=distinct, name="MaxPool(3x3,s2,SAME,NCHW)"),
    Case("MaxPool", lambda x: tf.nn.max_pool1d(x, 3, 1, "SAME", data_format="NCW"),
         lambda x: np_max_pool(x, [1, 1, 3], [1, 1, 1], "SAME"), [((2, 2, 5),)], FLOAT,
         grad_gen=distinct, name="MaxPool(max_pool1d,NCW)"),
    Case("MaxPool", lambda x: tf.nn.max_pool(x, [1, 1, 1, 2], [1, 1, 1, 2], "VALID"),
         lambda x: np_max_pool(x, [1, 1, 1, 2], [1, 1, 1, 2], "VALID"), [((1, 2, 3, 4),)],
         FLOAT, grad_gen=distinct, name="MaxPool(depth window)"),
    Case("MaxPool3D", lambda x: tf.nn.max_pool3d(x, 2, 2, "SAME"),
         lambda x: np_max_pool(x, [1, 2, 2, 2, 1], [1, 2, 2, 2, 1], "SAME"),
         [((1, 3, 4, 3, 2),)], FLOAT, grad_gen=distinct, name="MaxPool3D(2,s2,SAME)"),
    Case("MaxPool3D", lambda x: tf.nn.max_pool3d(x, [1, 1, 2, 3, 2], [1, 1, 1, 2, 1], "VALID",
                                                 data_format="NCDHW"),
         lambda x: np_max_pool(x, [1, 1, 2, 3, 2], [1, 1, 1, 2, 1], "VALID"),
         [((1, 2, 3, 5, 3),)], FLOAT, grad_gen=distinct, name="MaxPool3D(VALID,NCDHW)"),
    # Average pooling: SAME averages over the valid elements only.
    Case("AvgPool", lambda x: tf.nn.avg_pool(x, 3, 2, "SAME"),
         lambda x: np_avg_pool(x, [1, 3, 3, 1], S2, "SAME"),
         [((1, 4, 5, 2),), ((2, 6, 5, 3),)], FLOAT, name="AvgPool(3x3,s2,SAME)"),
    Case("AvgPool", lambda x: tf.nn.avg_pool(x, [1, 1, 2, 2], [1, 1, 1, 1], "VALID",
                                             data_format="NCHW"),
         lambda x: np_avg_pool(x, [1, 1, 2, 2], [1, 1, 1, 1], "VALID"), [((1, 2, 3, 4),)],
         FLOAT, name="AvgPool(2x2,VALID,NCHW)"),
    Case("AvgPool", lambda x: tf.nn.avg_pool1d(x, 2, 2, "SAME"),
         lambda x: np_avg_pool(x, [1, 2, 1], [1, 2, 1], "SAME"), [((2, 5, 2),)], FLOAT,
         name="AvgPool(avg_pool1d,SAME)"),
    Case("AvgPool3D", lambda x: tf.nn.avg_pool3d(x, [1, 1, 2, 2, 3], [1, 1, 2, 1, 2], "SAME",
                                                 data_format="NCDHW"),
         lambda x: np_avg_pool(x, [1, 1, 2, 2, 3], [1, 1, 2, 1, 2], "SAME"),
         [((1, 2, 3, 3, 4),)], FLOAT, name="AvgPool3D(SAME,NCDHW)"),
    # Max-pool gradients: tie-heavy inputs check the first-max rule on both lowerings.
    Case("MaxPoolGrad", max_grad(lambda x: tf.nn.max_pool(x, 2, 2, "SAME")),
         lambda x, g: np_max_pool_grad(x, g, K2, S2, "SAME"),
         [((1, 3, 5, 2), (1, 2, 3, 2)), ((2, 6, 4, 3), (2, 3, 2, 3))], FLOAT,
         gen=[ties, small], grad_gen=[distinct, small], name="MaxPoolGrad(tiles,SAME)"),
    Case("MaxPoolGrad", max_grad(lambda x: tf.nn.max_pool(x, 2, 2, "VALID")),
         lambda x, g: np_max_pool_grad(x, g, K2, S2, "VALID"),
         [((1, 5, 7, 2), (1, 2, 3, 2)), ((2, 4, 6, 3), (2, 2, 3, 3))], FLOAT,
         gen=[ties, small], grad_gen=[distinct, small],
         name="MaxPoolGrad(tiles,VALID,remainder)"),
    Case("MaxPoolGrad", max_grad(lambda x: tf.nn.max_pool(x, K3_NCHW, S2_NCHW, "SAME",
                                                          data_format="NCHW")),
         lambda x, g: np_max_pool_grad(x, g, K3_NCHW, S2_NCHW, "SAME"),
         [((1, 2, 5, 4), (1, 2, 3, 2))], FLOAT, gen=[ties, small],
         grad_gen=[distinct, small], name="MaxPoolGrad(overlapping,NCHW)"),
    Case("MaxPoolGrad", max_grad(lambda x: tf.nn.max_pool(x, 2, 3, "VALID")),
         lambda x, g: np_max_pool_grad(x, g, K2, [1, 3, 3, 1], "VALID"),
         [((1, 5, 6, 2), (1, 2, 2, 2))], FLOAT, gen=[ties, small],
         grad_gen=[distinct, small], name="MaxPoolGrad(gaps,VALID)"),
    Case("MaxPoolGradGrad", raw("MaxPoolGradGrad", K2, S2, "VALID"),
         lambda x, h: np_max_pool_grad_grad(x, h, K2, S2, "VALID"),
         [((1, 4, 5, 2), (1, 4, 5, 2))], FLOAT, gen=[ties, small],
         grad_gen=[distinct, small], name="MaxPoolGradGrad(tiles)"),
    Case("MaxPoolGradGrad", raw("MaxPoolGradGrad", [1, 3, 3, 1], S2, "SAME"),
         lambda x, h: np_max_pool_grad_grad(x, h, [1, 3, 3, 1], S2, "SAME"),
         [((1, 5, 4, 2), (1, 5, 4, 2))], FLOAT, gen=[ties, small],
         grad_gen=[distinct, small], name="MaxPoolGradGrad(overlapping)"),
    Case("AvgPoolGrad", max_grad(lambda x: tf.nn.avg_pool(x, 3, 2, "SAME")),
         lambda x, g: np_avg_pool_grad(x.shape, g, [1, 3, 3, 1], S2, "SAME"),
         [((1, 5, 4, 2), (1, 3, 2, 2))], FLOAT, grad_inputs=[1]),
    Case("MaxPool3DGrad", max_grad(lambda x: tf.nn.max_pool3d(x, 2, [1, 1, 2, 1, 1], "SAME")),
         lambda x, g: np_max_pool_grad(x, g, [1, 2, 2, 2, 1], [1, 1, 2, 1, 1], "SAME"),
         [((1, 2, 3, 2, 2), (1, 2, 2, 2, 2))], FLOAT, gen=[ties, small],
         grad_gen=[distinct, small]),
    Case("MaxPool3DGradGrad", raw("MaxPool3DGradGrad", [1, 2, 2, 2, 1], [1, 2, 2, 2, 1],
                                  "SAME"),
         lambda x, h: np_max_pool_grad_grad(x, h, [1, 2, 2, 2, 1], [1, 2, 2, 2, 1], "SAME"),
         [((1, 3, 2, 3, 2), (1, 3, 2, 3, 2))], FLOAT, gen=[ties, small],
         grad_gen=[distinct, small]),
    Case("AvgPool3DGrad", max_grad(lambda x: tf.nn.avg_pool3d(x, 2, 1, "SAME")),
         lambda x, g: np_avg_pool_grad(x.shape, g, [1, 2, 2, 2, 1], [1] * 5, "SAME"),
         [((1, 2, 3, 2, 2), (1, 2, 3, 2, 2))], FLOAT, grad_inputs=[1]),
    # max_pool_with_argmax and its gradient ops.
    Case("MaxPoolWithArgmax", lambda x: list(tf.nn.max_pool_with_argmax(x, 2, 2, "SAME")),
         lambda x: [np_max_pool(x, K2, S2, "SAME"), np_argmax(x, K2, S2, "SAME")],
         [((2, 3, 5, 2),)], FLOAT, gen=ties, grad_gen=distinct,
         name="MaxPoolWithArgmax(tiles,ties)"),
    Case("MaxPoolWithArgmax",
         lambda x: list(tf.nn.max_pool_with_argmax(x, 3, 2, "SAME", Targmax=tf.int32,
                                                   include_batch_in_index=True)),
         lambda x: [np_max_pool(x, [1, 3, 3, 1], S2, "SAME"),
                    np_argmax(x, [1, 3, 3, 1], S2, "SAME", True).astype(np.int32)],
         [((2, 5, 4, 2),)], FLOAT, gen=ties, grad_gen=distinct,
         name="MaxPoolWithArgmax(overlapping,batch index)"),
    Case("MaxPoolGradWithArgmax",
         max_grad(lambda x: tf.nn.max_pool_with_argmax(x, 3, 2, "VALID")[0]),
         lambda x, g: np_max_pool_grad(x, g, [1, 3, 3, 1], S2, "VALID"),
         [((2, 5, 5, 2), (2, 2, 2, 2))], FLOAT, gen=[ties, small],
         grad_gen=[distinct, small]),
    Case("MaxPoolGradGradWithArgmax",
         lambda x, h: apply_op(
             "MaxPoolGradGradWithArgmax", input=x, grad=h,
             argmax=tf.nn.max_pool_with_argmax(x, 2, 2, "SAME")[1], ksize=K2, strides=S2,
             padding="SAME"),
         lambda x, h: np_max_pool_grad_grad(x, h, K2, S2, "SAME"),
         [((2, 3, 4, 2), (2, 3, 4, 2))], FLOAT, gen=[ties, small],
         grad_gen=[distinct, small]),
]
