"""Both lowerings of depthwise convolution (XLA's grouped convolution and the sum of
shifted multiply-adds, ops/nn/depthwise_shifted.py) and of its two backprop ops, forced
through a session's compiler options, against NumPy written in the tests (cases_conv.py's
tap-by-tap references), over strides, dilations, paddings, layouts and channel
multipliers; and tf.gradients through the shifted form against finite differences."""

import numpy as np
import pytest

import tensorflux as tf
from tensorflux._src.ops.nn import conv_lowering
from tensorflux._src.runtime.config import compiler_options_config
from tests.ops.cases_conv import (np_depthwise, np_depthwise_backprop_filter,
                                  np_depthwise_backprop_input)
from tests.ops.harness import numeric_gradient

MODES = conv_lowering.ALTERNATIVES[conv_lowering.DEPTHWISE]

# (input NHWC shape, filter shape, strides, padding, dilations, data_format)
CONFIGS = [
    ((2, 7, 8, 3), (3, 3, 3, 1), (1, 1), "SAME", (1, 1), "NHWC"),
    ((2, 7, 8, 3), (3, 3, 3, 2), (2, 2), "SAME", (1, 1), "NHWC"),
    ((1, 8, 7, 2), (3, 2, 2, 1), (3, 2), "VALID", (1, 1), "NHWC"),
    ((1, 9, 9, 2), (3, 3, 2, 2), (1, 1), "VALID", (2, 1), "NHWC"),
    ((1, 6, 7, 3), (2, 3, 3, 1), (1, 1), "SAME", (2, 2), "NCHW"),
    ((2, 5, 6, 2), (3, 3, 2, 1), (2, 1), "SAME", (1, 1), "NCHW"),
    ((1, 6, 6, 4), (1, 1, 4, 1), (2, 2), "VALID", (1, 1), "NHWC"),
    ((1, 4, 4, 2), (3, 3, 2, 1), (1, 1), [(1, 2), (0, 1)], (1, 1), "NHWC"),
    # tall outputs: the filter gradient adds rows in groups (20 = 2 x 10; 17 is prime)
    ((2, 20, 3, 2), (3, 3, 2, 1), (1, 1), "SAME", (1, 1), "NHWC"),
    ((1, 35, 4, 3), (3, 3, 3, 2), (2, 1), "VALID", (1, 1), "NHWC"),
]


def _attrs(strides, dilations, padding, fmt):
    if fmt == "NHWC":
        st, dl = [1, *strides, 1], [1, *dilations, 1]
    else:
        st, dl = [1, 1, *strides], [1, 1, *dilations]
    if isinstance(padding, list):
        pads = [[0, 0], list(padding[0]), list(padding[1]), [0, 0]]
        if fmt == "NCHW":
            pads = [[0, 0], [0, 0]] + pads[1:3]
        return st, dl, pads, "EXPLICIT", [tuple(p) for p in padding]
    return st, dl, padding, padding, None


def _nchw(x, fmt):
    return np.ascontiguousarray(np.moveaxis(x, -1, 1)) if fmt == "NCHW" else x


def _session(mode):
    return tf.Session(config=compiler_options_config({conv_lowering.DEPTHWISE: mode}))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("mode", MODES)
def test_forward_and_backprops_match_numpy(mode, dtype):
    rng = np.random.default_rng(0)
    graph, fetches, wants, feeds = tf.Graph(), [], [], {}

    def fed(value):  # placeholders: constants would be folded before compiling
        ph = tf.placeholder(tf.as_dtype(value.dtype), value.shape)
        feeds[ph] = value
        return ph

    with graph.as_default():
        for x_shape, w_shape, strides, padding, dilations, fmt in CONFIGS:
            st, dl, tf_pad, np_pad, explicit = _attrs(strides, dilations, padding, fmt)
            x = _nchw(rng.uniform(-1, 1, x_shape), fmt).astype(dtype)
            w = rng.uniform(-1, 1, w_shape).astype(dtype)
            y = np_depthwise(x, w, strides, np_pad, dilations, fmt, explicit)
            dy = rng.uniform(-1, 1, y.shape).astype(dtype)
            fetches.append(tf.nn.depthwise_conv2d_native(fed(x), fed(w), st, tf_pad,
                                                         data_format=fmt, dilations=dl))
            wants.append(y)
            if explicit is None:  # the NumPy backprop references take SAME/VALID
                fetches.append(tf.nn.depthwise_conv2d_native_backprop_input(
                    list(x.shape), fed(w), fed(dy), st, tf_pad, data_format=fmt,
                    dilations=dl))
                wants.append(np_depthwise_backprop_input(x.shape, w, dy, strides, np_pad,
                                                         dilations, fmt))
                fetches.append(tf.nn.depthwise_conv2d_native_backprop_filter(
                    fed(x), list(w_shape), fed(dy), st, tf_pad, data_format=fmt,
                    dilations=dl))
                wants.append(np_depthwise_backprop_filter(x, w_shape, dy, strides, np_pad,
                                                          dilations, fmt))
        with _session(mode) as sess:
            got = sess.run(fetches, feeds)
            assert sess._runs  # the switch reached the executable
            (run,) = sess._runs.values()
            assert run.executable.compiler_options[conv_lowering.DEPTHWISE] == mode
    tol = 2e-5 if dtype == np.float32 else 1e-12
    for g, w, t in zip(got, wants, fetches):
        assert g.shape == w.shape, t.name
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol, err_msg=f"{mode} {t.name}")


def test_bfloat16_accumulates_in_float32():
    """One rounding at the end, not one per tap: 9 taps of 1 + 2^-6 (exact in bfloat16)
    sum to 9.140625, which rounds to 9.125 in bfloat16; adding tap by tap in bfloat16
    rounds the partial sums and ends at 9.0625."""
    x = np.ones((1, 3, 3, 1), np.float32)
    w = np.full((3, 3, 1, 1), 1 + 2 ** -6, np.float32)
    with tf.Graph().as_default():
        px, pw = tf.placeholder(tf.float32, x.shape), tf.placeholder(tf.float32, w.shape)
        y = tf.nn.depthwise_conv2d(tf.cast(px, tf.bfloat16), tf.cast(pw, tf.bfloat16),
                                   [1, 1, 1, 1], "VALID")
        with _session("shifted") as sess:
            got = sess.run(tf.cast(y, tf.float32), {px: x, pw: w})
    assert got.reshape(-1)[0] == np.float32(9.125)


@pytest.mark.parametrize("fmt", ["NHWC", "NCHW"])
def test_gradients_through_shifted_form_match_finite_differences(fmt):
    """tf.gradients of sum(v * depthwise(x, w)) (the backprop ops, shifted) and their
    own gradients (second order: the backprop ops differentiated again) against
    central differences of the NumPy forward."""
    rng = np.random.default_rng(1)
    x_shape, w_shape, strides = (1, 5, 4, 2), (3, 2, 2, 2), (2, 1)
    x = _nchw(rng.uniform(-1, 1, x_shape), fmt)
    w = rng.uniform(-1, 1, w_shape)
    st = [1, *strides, 1] if fmt == "NHWC" else [1, 1, *strides]
    v = rng.uniform(-1, 1, np_depthwise(x, w, strides, "SAME", None, fmt).shape)

    def objective(x_, w_):
        return float(np.sum(v * np_depthwise(x_, w_, strides, "SAME", None, fmt)))

    with tf.Graph().as_default():
        tx, tw = tf.placeholder(tf.float64, x.shape), tf.placeholder(tf.float64, w.shape)
        loss = tf.reduce_sum(v * tf.nn.depthwise_conv2d(tx, tw, st, "SAME",
                                                        data_format=fmt))
        gx, gw = tf.gradients(loss, [tx, tw])
        # d/dw of sum(gx^2): through DepthwiseConv2dNativeBackpropInput's gradient
        ggw = tf.gradients(tf.reduce_sum(tf.square(gx)), tw)[0]
        with _session("shifted") as sess:
            got_x, got_w, got_ggw = sess.run([gx, gw, ggw], {tx: x, tw: w})
    np.testing.assert_allclose(got_x, numeric_gradient(objective, [x, w], 0),
                               rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(got_w, numeric_gradient(objective, [x, w], 1),
                               rtol=1e-6, atol=1e-8)

    def grad_x_norm(w_):  # sum(gx^2), with gx = dobjective/dx by NumPy's transpose
        dx = np_depthwise_backprop_input(x.shape, w_, v, strides, "SAME", None, fmt)
        return float(np.sum(dx ** 2))

    np.testing.assert_allclose(got_ggw, numeric_gradient(grad_x_norm, [w], 0),
                               rtol=1e-5, atol=1e-7)
