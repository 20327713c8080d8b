"""NumPy-checked cases for the convolution family (tf.nn.conv*, depthwise, separable,
transposed, backprop ops). The expectations below loop over filter offsets: each offset
contributes a strided slice of the zero-padded input times one filter tap, with TF's
padding rule written out again here (SAME: out = ceil(in / s), pad_total =
max((out - 1) * s + (k - 1) * d + 1 - in, 0), the odd pixel after)."""

import numpy as np

import tensorflux as tf
from tests.ops.harness import Case, uniform

FLOAT = (np.float32, np.float64)
small = uniform(-1.0, 1.0)


# -- NumPy references ---------------------------------------------------------------------------
def tf_pads(size, k, s, padding, d=1, explicit=None):
    """(pad_before, pad_after, out_size) of one spatial dim, by TF's rule."""
    eff = (k - 1) * d + 1
    if padding == "SAME":
        out = -(-size // s)
        total = max((out - 1) * s + eff - size, 0)
        return total // 2, total - total // 2, out
    before, after = (0, 0) if padding == "VALID" else explicit
    return before, after, (size + before + after - eff) // s + 1


def _last(x, fmt):
    return np.moveaxis(x, 1, -1) if fmt.startswith("NC") else x


def _first(x, fmt):
    return np.moveaxis(x, -1, 1) if fmt.startswith("NC") else x


def _geometry(spatial, kernel, strides, padding, dilations, explicit):
    n = len(spatial)
    dilations = dilations or [1] * n
    explicit = explicit or [None] * n
    return [tf_pads(spatial[i], kernel[i], strides[i], padding, dilations[i], explicit[i])
            for i in range(n)], dilations


def _taps(geo, strides, dilations, kernel):
    """(filter offset, slice of the padded input it multiplies) for every tap."""
    for off in np.ndindex(*kernel):
        yield off, (slice(None),) + tuple(
            slice(o * d, o * d + (g[2] - 1) * s + 1, s)
            for o, d, g, s in zip(off, dilations, geo, strides))


def _padded(x, geo):
    return np.pad(x, [(0, 0)] + [(b, a) for b, a, _ in geo] + [(0, 0)])


def np_conv(x, w, strides, padding, dilations=None, data_format="NHWC", explicit=None):
    """TF's convolution (cross-correlation), grouped when in-depth is a multiple."""
    x = _last(x, data_format)
    n = w.ndim - 2
    geo, dilations = _geometry(x.shape[1:-1], w.shape[:n], strides, padding, dilations,
                               explicit)
    xp = _padded(x, geo)
    cin, cout = w.shape[-2:]
    groups = x.shape[-1] // cin
    og = cout // groups
    out = np.zeros((x.shape[0], *[g[2] for g in geo], cout))
    for off, sl in _taps(geo, strides, dilations, w.shape[:n]):
        patch = xp[sl]
        for g in range(groups):
            out[..., g * og:(g + 1) * og] += (patch[..., g * cin:(g + 1) * cin]
                                              @ w[off][:, g * og:(g + 1) * og])
    return _first(out, data_format).astype(x.dtype)


def np_conv_backprop_input(in_shape, w, dy, strides, padding, dilations=None,
                           data_format="NHWC", explicit=None):
    """The transpose of np_conv: each tap scatters dy @ w_tap^T back onto the input."""
    dy = _last(dy, data_format)
    shape = _last(np.empty(in_shape), data_format).shape
    n = w.ndim - 2
    geo, dilations = _geometry(shape[1:-1], w.shape[:n], strides, padding, dilations,
                               explicit)
    dxp = _padded(np.zeros(shape), geo)
    for off, sl in _taps(geo, strides, dilations, w.shape[:n]):
        dxp[sl] += dy @ w[off].T
    crop = (slice(None),) + tuple(slice(b, b + d) for (b, _, _), d in zip(geo, shape[1:-1]))
    return _first(dxp[crop], data_format).astype(dy.dtype)


def np_conv_backprop_filter(x, w_shape, dy, strides, padding, dilations=None,
                            data_format="NHWC", explicit=None):
    """d(sum(np_conv * dy))/dw: each tap correlates its input slice with dy."""
    x, dy = _last(x, data_format), _last(dy, data_format)
    n = len(w_shape) - 2
    geo, dilations = _geometry(x.shape[1:-1], w_shape[:n], strides, padding, dilations,
                               explicit)
    xp = _padded(x, geo)
    dw = np.zeros(w_shape)
    for off, sl in _taps(geo, strides, dilations, w_shape[:n]):
        dw[off] = xp[sl].reshape(-1, x.shape[-1]).T @ dy.reshape(-1, dy.shape[-1])
    return dw.astype(x.dtype)


def np_depthwise(x, w, strides, padding, dilations=None, data_format="NHWC", explicit=None):
    """output[..., c * M + m] = sum_taps input[..., c] * w[tap, c, m]."""
    x = _last(x, data_format)
    c, m = w.shape[2:]
    geo, dilations = _geometry(x.shape[1:-1], w.shape[:2], strides, padding, dilations,
                               explicit)
    xp = _padded(x, geo)
    out = 0
    for off, sl in _taps(geo, strides, dilations, w.shape[:2]):
        out = out + xp[sl][..., :, None] * w[off]
    out = out.reshape(out.shape[:-2] + (c * m,))
    return _first(out, data_format).astype(x.dtype)


def np_depthwise_backprop_input(in_shape, w, dy, strides, padding, dilations=None,
                                data_format="NHWC"):
    dy = _last(dy, data_format)
    shape = _last(np.empty(in_shape), data_format).shape
    c, m = w.shape[2:]
    dy = dy.reshape(dy.shape[:-1] + (c, m))
    geo, dilations = _geometry(shape[1:-1], w.shape[:2], strides, padding, dilations, None)
    dxp = _padded(np.zeros(shape), geo)
    for off, sl in _taps(geo, strides, dilations, w.shape[:2]):
        dxp[sl] += (dy * w[off]).sum(-1)
    crop = (slice(None),) + tuple(slice(b, b + d) for (b, _, _), d in zip(geo, shape[1:-1]))
    return _first(dxp[crop], data_format).astype(w.dtype)


def np_depthwise_backprop_filter(x, w_shape, dy, strides, padding, dilations=None,
                                 data_format="NHWC"):
    x, dy = _last(x, data_format), _last(dy, data_format)
    c, m = w_shape[2:]
    dy = dy.reshape(dy.shape[:-1] + (c, m))
    geo, dilations = _geometry(x.shape[1:-1], w_shape[:2], strides, padding, dilations, None)
    xp = _padded(x, geo)
    dw = np.zeros(w_shape)
    for off, sl in _taps(geo, strides, dilations, w_shape[:2]):
        dw[off] = np.einsum("nc,ncm->cm", xp[sl].reshape(-1, c), dy.reshape(-1, c, m))
    return dw.astype(x.dtype)


# -- cases ---------------------------------------------------------------------------------------
def conv_case(name, fn, expect, shapes, **kw):
    return Case(name.split("(")[0], fn, expect, shapes, FLOAT, gen=small, name=name, **kw)


CASES = [
    # conv2d: paddings, strides, dilations, both layouts, grouped.
    conv_case("Conv2D(SAME,s2,NHWC)",
              lambda x, w: tf.nn.conv2d(x, w, strides=[1, 2, 2, 1], padding="SAME"),
              lambda x, w: np_conv(x, w, [2, 2], "SAME"),
              [((1, 4, 4, 2), (3, 3, 2, 2)), ((2, 5, 5, 3), (3, 3, 3, 4))]),
    conv_case("Conv2D(VALID,s(2,1),NCHW)",
              lambda x, w: tf.nn.conv2d(x, w, strides=[1, 1, 2, 1], padding="VALID",
                                        data_format="NCHW"),
              lambda x, w: np_conv(x, w, [2, 1], "VALID", data_format="NCHW"),
              [((1, 2, 5, 4), (2, 3, 2, 2))]),
    conv_case("Conv2D(explicit,dilated,NHWC)",
              lambda x, w: tf.nn.conv2d(x, w, strides=1, dilations=[1, 2, 1, 1],
                                        padding=[[0, 0], [1, 2], [0, 1], [0, 0]]),
              lambda x, w: np_conv(x, w, [1, 1], "EXPLICIT", [2, 1],
                                   explicit=[(1, 2), (0, 1)]),
              [((1, 4, 3, 2), (2, 2, 2, 3))]),
    conv_case("Conv2D(SAME,even kernel,dilated,NCHW)",
              lambda x, w: tf.nn.conv2d(x, w, strides=[1, 1, 1, 1], padding="SAME",
                                        dilations=2, data_format="NCHW"),
              lambda x, w: np_conv(x, w, [1, 1], "SAME", [2, 2], "NCHW"),
              [((1, 2, 5, 4), (2, 2, 2, 2))]),
    conv_case("Conv2D(grouped)",
              lambda x, w: tf.nn.conv2d(x, w, strides=[1, 1, 1, 1], padding="SAME"),
              lambda x, w: np_conv(x, w, [1, 1], "SAME"),
              [((1, 3, 3, 4), (2, 2, 2, 4))]),
    conv_case("Conv2D(conv1d,NWC,s2,SAME)",
              lambda x, w: tf.nn.conv1d(x, w, stride=2, padding="SAME"),
              lambda x, w: np_conv(x, w, [2], "SAME"),
              [((2, 5, 2), (3, 2, 3))]),
    conv_case("Conv2D(conv1d,NCW,dilated,VALID)",
              lambda x, w: tf.nn.conv1d(x, w, stride=1, padding="VALID", data_format="NCW",
                                        dilations=2),
              lambda x, w: np_conv(x, w, [1], "VALID", [2], "NCW"),
              [((2, 2, 6), (2, 2, 3))]),
    conv_case("Conv2D(atrous_conv2d,SAME)",
              lambda x, w: tf.nn.atrous_conv2d(x, w, rate=2, padding="SAME"),
              lambda x, w: np_conv(x, w, [1, 1], "SAME", [2, 2]),
              [((1, 5, 4, 2), (2, 3, 2, 2))]),
    conv_case("Conv2D(convolution,N=2,strided)",
              lambda x, w: tf.nn.convolution(x, w, "VALID", strides=[2, 1]),
              lambda x, w: np_conv(x, w, [2, 1], "VALID"),
              [((1, 5, 4, 2), (2, 2, 2, 2))]),
    conv_case("Conv3D(SAME,s(1,2,1),NDHWC)",
              lambda x, w: tf.nn.conv3d(x, w, strides=[1, 1, 2, 1, 1], padding="SAME"),
              lambda x, w: np_conv(x, w, [1, 2, 1], "SAME"),
              [((1, 3, 4, 3, 2), (2, 2, 2, 2, 2))]),
    conv_case("Conv3D(VALID,dilated,NCDHW)",
              lambda x, w: tf.nn.conv3d(x, w, strides=[1, 1, 1, 1, 1], padding="VALID",
                                        data_format="NCDHW", dilations=[1, 1, 1, 2, 1]),
              lambda x, w: np_conv(x, w, [1, 1, 1], "VALID", [1, 2, 1], "NCDHW"),
              [((1, 2, 3, 4, 3), (2, 2, 2, 2, 2))]),
    conv_case("DepthwiseConv2dNative(SAME,s2,NHWC)",
              lambda x, w: tf.nn.depthwise_conv2d(x, w, [1, 2, 2, 1], "SAME"),
              lambda x, w: np_depthwise(x, w, [2, 2], "SAME"),
              [((1, 4, 4, 2), (3, 3, 2, 2)), ((2, 5, 5, 3), (3, 3, 3, 1))]),
    conv_case("DepthwiseConv2dNative(VALID,rate 2,NCHW)",
              lambda x, w: tf.nn.depthwise_conv2d(x, w, [1, 1, 1, 1], "VALID", rate=[2, 1],
                                                  data_format="NCHW"),
              lambda x, w: np_depthwise(x, w, [1, 1], "VALID", [2, 1], "NCHW"),
              [((1, 2, 5, 4), (2, 2, 2, 2))]),
    conv_case("DepthwiseConv2dNative(separable_conv2d)",
              lambda x, dw, pw: tf.nn.separable_conv2d(x, dw, pw, [1, 1, 1, 1], "SAME"),
              lambda x, dw, pw: np_conv(np_depthwise(x, dw, [1, 1], "SAME"), pw, [1, 1],
                                        "VALID"),
              [((1, 3, 4, 2), (2, 2, 2, 2), (1, 1, 4, 3))]),
    # Transposed convolutions and the backprop ops.
    conv_case("Conv2DBackpropInput(conv2d_transpose,SAME,s2)",
              lambda x, w: tf.nn.conv2d_transpose(x, w, [1, 5, 4, 2], strides=2,
                                                  padding="SAME"),
              lambda x, w: np_conv_backprop_input((1, 5, 4, 2), w, x, [2, 2], "SAME"),
              [((1, 3, 2, 3), (3, 3, 2, 3))]),
    conv_case("Conv2DBackpropInput(conv2d_transpose,VALID,s2,NCHW)",
              lambda x, w: tf.nn.conv2d_transpose(x, w, [1, 2, 6, 5], strides=[1, 1, 2, 2],
                                                  padding="VALID", data_format="NCHW"),
              lambda x, w: np_conv_backprop_input((1, 2, 6, 5), w, x, [2, 2], "VALID",
                                                  data_format="NCHW"),
              [((1, 3, 2, 2), (3, 2, 2, 3))]),
    conv_case("Conv2DBackpropInput(explicit,dilated)",
              lambda w, dy: tf.nn.conv2d_backprop_input(
                  [1, 4, 4, 2], w, dy, strides=[1, 1, 1, 1], dilations=[1, 1, 2, 1],
                  padding=[[0, 0], [1, 0], [2, 1], [0, 0]]),
              lambda w, dy: np_conv_backprop_input((1, 4, 4, 2), w, dy, [1, 1], "EXPLICIT",
                                                   [1, 2], explicit=[(1, 0), (2, 1)]),
              [((2, 2, 2, 3), (1, 4, 5, 3))]),
    conv_case("Conv2DBackpropInput(conv1d_transpose)",
              lambda x, w: tf.nn.conv1d_transpose(x, w, [1, 6, 2], strides=2),
              lambda x, w: np_conv_backprop_input((1, 6, 2), w, x, [2], "SAME"),
              [((1, 3, 3), (3, 2, 3))]),
    conv_case("Conv2DBackpropFilter(SAME,s2)",
              lambda x, dy: tf.nn.conv2d_backprop_filter(x, [3, 3, 2, 3], dy, [1, 2, 2, 1],
                                                         "SAME"),
              lambda x, dy: np_conv_backprop_filter(x, (3, 3, 2, 3), dy, [2, 2], "SAME"),
              [((1, 4, 5, 2), (1, 2, 3, 3))]),
    conv_case("Conv2DBackpropFilter(explicit,NCHW)",
              lambda x, dy: tf.nn.conv2d_backprop_filter(
                  x, [2, 2, 2, 2], dy, [1, 1, 1, 2], [[0, 0], [0, 0], [1, 1], [0, 1]],
                  data_format="NCHW"),
              lambda x, dy: np_conv_backprop_filter(x, (2, 2, 2, 2), dy, [1, 2], "EXPLICIT",
                                                    data_format="NCHW",
                                                    explicit=[(1, 1), (0, 1)]),
              [((1, 2, 3, 4), (1, 2, 4, 2))]),
    conv_case("Conv3DBackpropInputV2(conv3d_transpose)",
              lambda x, w: tf.nn.conv3d_transpose(x, w, [1, 3, 4, 3, 2],
                                                  strides=[1, 1, 2, 1, 1], padding="SAME"),
              lambda x, w: np_conv_backprop_input((1, 3, 4, 3, 2), w, x, [1, 2, 1], "SAME"),
              [((1, 3, 2, 3, 2), (2, 2, 2, 2, 2))]),
    conv_case("Conv3DBackpropFilterV2(NCDHW)",
              lambda x, dy: tf.nn.conv3d_backprop_filter_v2(
                  x, [2, 2, 2, 2, 2], dy, [1, 1, 1, 1, 1], "VALID", data_format="NCDHW"),
              lambda x, dy: np_conv_backprop_filter(x, (2, 2, 2, 2, 2), dy, [1, 1, 1],
                                                    "VALID", data_format="NCDHW"),
              [((1, 2, 3, 3, 3), (1, 2, 2, 2, 2))]),
    conv_case("DepthwiseConv2dNativeBackpropInput(SAME,s2)",
              lambda w, dy: tf.nn.depthwise_conv2d_native_backprop_input(
                  [1, 4, 3, 2], w, dy, [1, 2, 2, 1], "SAME"),
              lambda w, dy: np_depthwise_backprop_input((1, 4, 3, 2), w, dy, [2, 2], "SAME"),
              [((3, 3, 2, 2), (1, 2, 2, 4))]),
    conv_case("DepthwiseConv2dNativeBackpropFilter(VALID,NCHW)",
              lambda x, dy: tf.nn.depthwise_conv2d_native_backprop_filter(
                  x, [2, 2, 2, 2], dy, [1, 1, 1, 1], "VALID", data_format="NCHW"),
              lambda x, dy: np_depthwise_backprop_filter(x, (2, 2, 2, 2), dy, [1, 1],
                                                         "VALID", data_format="NCHW"),
              [((1, 2, 3, 4), (1, 4, 2, 3))]),
]
