"""Conv2D and its backprop ops lowered as im2col matrix products (ops/nn/conv_im2col.py)
and as XLA's convolution, forced through a session's compiler options, against NumPy
written in the tests (cases_conv.py's tap-by-tap references), over strides, dilations,
paddings and layouts; and tf.gradients through the im2col form against finite
differences."""

import numpy as np
import pytest

import tensorflux as tf
from tensorflux._src.ops.nn import conv_lowering
from tensorflux._src.runtime.config import compiler_options_config
from tests.ops.cases_conv import np_conv, np_conv_backprop_filter, np_conv_backprop_input
from tests.ops.harness import numeric_gradient

MODES = conv_lowering.ALTERNATIVES[conv_lowering.CONV2D]

# (input NHWC shape, filter shape, strides, padding, dilations, data_format)
CONFIGS = [
    ((2, 7, 8, 3), (3, 3, 3, 4), (1, 1), "SAME", (1, 1), "NHWC"),
    ((2, 7, 8, 3), (3, 3, 3, 2), (2, 2), "SAME", (1, 1), "NHWC"),
    ((1, 8, 7, 2), (3, 2, 2, 3), (3, 2), "VALID", (1, 1), "NHWC"),
    ((1, 9, 9, 2), (3, 3, 2, 2), (1, 1), "VALID", (2, 1), "NHWC"),
    ((1, 6, 7, 3), (2, 3, 3, 2), (1, 1), "SAME", (2, 2), "NCHW"),
    ((2, 9, 9, 3), (7, 7, 3, 4), (2, 2), [(3, 3), (3, 3)], (1, 1), "NHWC"),
    # 1x1: plain matrix products; strided and padded ones spread dx out afterwards
    ((1, 6, 6, 4), (1, 1, 4, 3), (2, 2), "VALID", (1, 1), "NHWC"),
    ((2, 5, 6, 4), (1, 1, 4, 3), (1, 1), "SAME", (1, 1), "NCHW"),
    ((1, 7, 7, 3), (1, 1, 3, 2), (2, 2), "SAME", (1, 1), "NHWC"),
    ((1, 5, 5, 2), (1, 1, 2, 3), (2, 3), [(1, 2), (2, 0)], (1, 1), "NHWC"),
    ((1, 5, 4, 4), (3, 3, 2, 4), (1, 1), "SAME", (1, 1), "NHWC"),   # grouped: XLA's
]


def _attrs(strides, dilations, padding, fmt):
    st = [1, *strides, 1] if fmt == "NHWC" else [1, 1, *strides]
    dl = [1, *dilations, 1] if fmt == "NHWC" else [1, 1, *dilations]
    if isinstance(padding, list):
        return st, dl, [[0, 0], *map(list, padding), [0, 0]], "EXPLICIT", padding
    return st, dl, padding, padding, None


def _nchw(x, fmt):
    return np.ascontiguousarray(np.moveaxis(x, -1, 1)) if fmt == "NCHW" else x


def _session(mode):
    return tf.Session(config=compiler_options_config({conv_lowering.CONV2D: mode}))


@pytest.mark.parametrize("mode", MODES)
def test_forward_and_backprops_match_numpy(mode):
    rng = np.random.default_rng(0)
    graph, fetches, wants, feeds = tf.Graph(), [], [], {}

    def fed(value):  # placeholders: constants would be folded before compiling
        ph = tf.placeholder(tf.float32, value.shape)
        feeds[ph] = value
        return ph

    with graph.as_default():
        for x_shape, w_shape, strides, padding, dilations, fmt in CONFIGS:
            st, dl, tf_pad, np_pad, explicit = _attrs(strides, dilations, padding, fmt)
            x = _nchw(rng.uniform(-1, 1, x_shape), fmt).astype(np.float32)
            w = rng.uniform(-1, 1, w_shape).astype(np.float32)
            y = np_conv(x, w, strides, np_pad, dilations, fmt, explicit)
            dy = rng.uniform(-1, 1, y.shape).astype(np.float32)
            fetches.append(tf.nn.conv2d(fed(x), fed(w), st, tf_pad, data_format=fmt,
                                        dilations=dl))
            wants.append(y)
            if w_shape[2] != x_shape[3]:
                continue  # grouped backprops: covered by cases_conv.py
            fetches.append(tf.nn.conv2d_backprop_input(
                list(x.shape), fed(w), fed(dy), st, tf_pad, data_format=fmt, dilations=dl))
            wants.append(np_conv_backprop_input(x.shape, w, dy, strides, np_pad, dilations,
                                                fmt, explicit))
            fetches.append(tf.nn.conv2d_backprop_filter(
                fed(x), list(w_shape), fed(dy), st, tf_pad, data_format=fmt, dilations=dl))
            wants.append(np_conv_backprop_filter(x, w_shape, dy, strides, np_pad, dilations,
                                                 fmt, explicit))
        with _session(mode) as sess:
            got = sess.run(fetches, feeds)
            (run,) = sess._runs.values()
            assert run.executable.compiler_options[conv_lowering.CONV2D] == mode
    for g, w, t in zip(got, wants, fetches):
        assert g.shape == w.shape, t.name
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4, err_msg=f"{mode} {t.name}")


def test_bfloat16_products_accumulate_in_float32():
    """A 3x3 filter over 2 channels: 18 products of 1 * (1 + 2^-6) sum to 18.28125,
    18.25 in bfloat16 when rounded once (bfloat16 accumulation would drift lower)."""
    x = np.ones((1, 3, 3, 2), np.float32)
    w = np.full((3, 3, 2, 1), 1 + 2 ** -6, np.float32)
    with tf.Graph().as_default():
        px, pw = tf.placeholder(tf.float32, x.shape), tf.placeholder(tf.float32, w.shape)
        y = tf.nn.conv2d(tf.cast(px, tf.bfloat16), tf.cast(pw, tf.bfloat16), [1, 1, 1, 1],
                         "VALID")
        with _session("im2col") as sess:
            got = sess.run(tf.cast(y, tf.float32), {px: x, pw: w})
    assert got.reshape(-1)[0] == np.float32(18.25)


@pytest.mark.parametrize("fmt", ["NHWC", "NCHW"])
def test_gradients_through_im2col_match_finite_differences(fmt):
    """tf.gradients of sum(v * conv2d(x, w)) (the backprop ops, im2col) and a second
    derivative (Conv2DBackpropInput differentiated again) against central differences
    of the NumPy forward."""
    rng = np.random.default_rng(1)
    x_shape, w_shape, strides = (1, 5, 4, 2), (3, 2, 2, 3), (2, 1)
    x = _nchw(rng.uniform(-1, 1, x_shape), fmt)
    w = rng.uniform(-1, 1, w_shape)
    st = [1, *strides, 1] if fmt == "NHWC" else [1, 1, *strides]
    v = rng.uniform(-1, 1, np_conv(x, w, strides, "SAME", None, fmt).shape)

    def objective(x_, w_):
        return float(np.sum(v * np_conv(x_, w_, strides, "SAME", None, fmt)))

    def grad_x_norm(w_):
        dx = np_conv_backprop_input(x.shape, w_, v, strides, "SAME", None, fmt)
        return float(np.sum(dx ** 2))

    with tf.Graph().as_default():
        tx, tw = tf.placeholder(tf.float64, x.shape), tf.placeholder(tf.float64, w.shape)
        loss = tf.reduce_sum(v * tf.nn.conv2d(tx, tw, st, "SAME", data_format=fmt))
        gx, gw = tf.gradients(loss, [tx, tw])
        ggw = tf.gradients(tf.reduce_sum(tf.square(gx)), tw)[0]
        with _session("im2col") as sess:
            got_x, got_w, got_ggw = sess.run([gx, gw, ggw], {tx: x, tw: w})
    np.testing.assert_allclose(got_x, numeric_gradient(objective, [x, w], 0), rtol=1e-6,
                               atol=1e-8)
    np.testing.assert_allclose(got_w, numeric_gradient(objective, [x, w], 1), rtol=1e-6,
                               atol=1e-8)
    np.testing.assert_allclose(got_ggw, numeric_gradient(grad_x_norm, [w], 0), rtol=1e-5,
                               atol=1e-7)
