"""tf.layers convolution and pooling layers against direct NumPy loops."""

import itertools
import math

import numpy as np
import pytest

import tensorflux as tf


def _run(fetches, feed=None):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(fetches, feed)


def _same_pads(size, k, s, d=1):
    """TF's SAME padding: (before, after) for one spatial axis."""
    dk = (k - 1) * d + 1
    out = math.ceil(size / s)
    total = max((out - 1) * s + dk - size, 0)
    return total // 2, total - total // 2


def np_conv(x, w, strides, padding, dilations=None):
    """Channels-last N-D convolution (cross-correlation): x (N, *S, C), w (*K, C, F)."""
    nd = x.ndim - 2
    dilations = dilations or (1,) * nd
    ks = w.shape[:nd]
    if padding == "SAME":
        pads = [_same_pads(x.shape[1 + i], ks[i], strides[i], dilations[i]) for i in range(nd)]
        x = np.pad(x, [(0, 0)] + pads + [(0, 0)])
    outs = [(x.shape[1 + i] - (ks[i] - 1) * dilations[i] - 1) // strides[i] + 1
            for i in range(nd)]
    y = np.zeros((x.shape[0], *outs, w.shape[-1]))
    for offset in itertools.product(*[range(k) for k in ks]):
        index = tuple(slice(o * d, o * d + (n - 1) * s + 1, s)
                      for o, d, n, s in zip(offset, dilations, outs, strides))
        y += x[(slice(None),) + index] @ w[offset]
    return y


def np_conv_transpose(y, w, strides, padding):
    """Channels-last transposed convolution: y (N, *S, C_in), w (*K, F, C_in)."""
    nd = y.ndim - 2
    ks, ins = w.shape[:nd], y.shape[1:-1]
    outs = [n * s + max(k - s, 0) if padding == "VALID" else n * s
            for n, k, s in zip(ins, ks, strides)]
    before = [_same_pads(o, k, s)[0] if padding == "SAME" else 0
              for o, k, s in zip(outs, ks, strides)]
    full_sizes = [max((n - 1) * s + k, o + b) for n, s, k, o, b in
                  zip(ins, strides, ks, outs, before)]
    full = np.zeros((y.shape[0], *full_sizes, w.shape[-2]))
    for offset in itertools.product(*[range(k) for k in ks]):
        index = tuple(slice(o, o + (n - 1) * s + 1, s) for o, n, s in zip(offset, ins, strides))
        full[(slice(None),) + index] += y @ w[offset].T
    crop = tuple(slice(b, b + o) for b, o in zip(before, outs))
    return full[(slice(None),) + crop]


def np_pool(x, size, strides, padding, mode):
    """Channels-last N-D max/avg pooling; SAME averages count only real elements."""
    nd = x.ndim - 2
    if padding == "SAME":
        pads = [_same_pads(x.shape[1 + i], size[i], strides[i]) for i in range(nd)]
    else:
        pads = [(0, 0)] * nd
    fill = -np.inf if mode == "max" else 0.0
    xp = np.pad(x, [(0, 0)] + pads + [(0, 0)], constant_values=fill)
    ones = np.pad(np.ones(x.shape), [(0, 0)] + pads + [(0, 0)])
    outs = [(xp.shape[1 + i] - size[i]) // strides[i] + 1 for i in range(nd)]
    windows = []
    for offset in itertools.product(*[range(k) for k in size]):
        index = (slice(None),) + tuple(slice(o, o + (n - 1) * s + 1, s)
                                       for o, n, s in zip(offset, outs, strides))
        windows.append((xp[index], ones[index]))
    if mode == "max":
        return np.max([w for w, _ in windows], axis=0)
    return sum(w for w, _ in windows) / sum(c for _, c in windows)


RNG = np.random.default_rng(0)


def test_conv2d_names_shapes_and_values():
    xv = RNG.normal(size=(2, 7, 6, 3)).astype(np.float32)
    x = tf.placeholder(tf.float32, [None, 7, 6, 3])
    same = tf.layers.Conv2D(4, 3, strides=2, padding="same",
                            bias_initializer=tf.constant_initializer(0.5))
    y1 = same(x)
    y2 = tf.layers.conv2d(x, 2, (3, 2), dilation_rate=2, activation=tf.nn.relu,
                          use_bias=False)
    assert [v.name for v in tf.global_variables()] == [
        "conv2d/kernel:0", "conv2d/bias:0", "conv2d_1/kernel:0"]
    assert same.kernel.shape.as_list() == [3, 3, 3, 4]
    assert y1.shape.as_list() == [None, 4, 3, 4] and y2.shape.as_list() == [None, 3, 4, 2]
    assert y1.op.name == "conv2d/BiasAdd" and y2.op.name == "conv2d_1/Relu"
    k2 = [v for v in tf.global_variables() if v.name == "conv2d_1/kernel:0"][0]
    got1, got2, w1, w2 = _run([y1, y2, same.kernel, k2], {x: xv})
    np.testing.assert_allclose(got1, np_conv(xv, w1, (2, 2), "SAME") + 0.5, rtol=1e-4,
                               atol=1e-5)
    np.testing.assert_allclose(got2, np.maximum(np_conv(xv, w2, (1, 1), "VALID", (2, 2)), 0),
                               rtol=1e-4, atol=1e-5)


def test_conv2d_channels_first_matches_channels_last():
    xv = RNG.normal(size=(1, 3, 5, 5)).astype(np.float32)  # NCHW
    layer = tf.layers.Conv2D(2, 3, padding="same", data_format="channels_first",
                             bias_initializer=tf.constant_initializer(1.0))
    y = layer(tf.constant(xv))
    assert y.shape.as_list() == [1, 2, 5, 5]
    got, w = _run([y, layer.kernel])
    want = np_conv(xv.transpose(0, 2, 3, 1), w, (1, 1), "SAME") + 1.0
    np.testing.assert_allclose(got, want.transpose(0, 3, 1, 2), rtol=1e-4, atol=1e-5)


def test_conv1d_causal_and_conv3d():
    xv = RNG.normal(size=(2, 9, 3)).astype(np.float32)
    c1 = tf.layers.Conv1D(4, 3, padding="causal", dilation_rate=2)
    y1 = c1(tf.constant(xv))
    zv = RNG.normal(size=(1, 4, 5, 4, 2)).astype(np.float32)
    c3 = tf.layers.Conv3D(3, (2, 3, 2), strides=(1, 2, 1))
    y3 = c3(tf.constant(zv))
    assert y1.shape.as_list() == [2, 9, 4] and y3.shape.as_list() == [1, 3, 2, 3, 3]
    assert c1.kernel.name == "conv1d/kernel:0" and c3.kernel.name == "conv3d/kernel:0"
    got1, got3, w1, w3 = _run([y1, y3, c1.kernel, c3.kernel])
    # Causal: left-pad by dilation * (k - 1), then a valid convolution.
    padded = np.pad(xv, [(0, 0), (4, 0), (0, 0)])
    np.testing.assert_allclose(got1, np_conv(padded, w1, (1,), "VALID", (2,)), rtol=1e-4,
                               atol=1e-5)
    np.testing.assert_allclose(got3, np_conv(zv, w3, (1, 2, 1), "VALID"), rtol=1e-4,
                               atol=1e-5)


@pytest.mark.parametrize("padding", ["same", "valid"])
def test_conv2d_transpose(padding):
    yv = RNG.normal(size=(2, 3, 4, 3)).astype(np.float32)
    layer = tf.layers.Conv2DTranspose(2, 3, strides=2, padding=padding,
                                      bias_initializer=tf.constant_initializer(-1.0))
    out = layer(tf.placeholder_with_default(yv, [None, 3, 4, 3]))
    assert layer.kernel.shape.as_list() == [3, 3, 2, 3]  # (kh, kw, filters, in_channels)
    assert layer.kernel.name == "conv2d_transpose/kernel:0"
    want_shape = [None, 6, 8, 2] if padding == "same" else [None, 7, 9, 2]
    assert out.shape.as_list() == want_shape
    got, w = _run([out, layer.kernel])
    np.testing.assert_allclose(got, np_conv_transpose(yv, w, (2, 2), padding.upper()) - 1.0,
                               rtol=1e-4, atol=1e-5)


def test_conv3d_transpose():
    yv = RNG.normal(size=(1, 2, 3, 2, 2)).astype(np.float32)
    layer = tf.layers.Conv3DTranspose(3, 2, strides=(2, 1, 2), padding="same")
    out = layer(tf.constant(yv))
    assert out.shape.as_list() == [1, 4, 3, 4, 3]
    got, w = _run([out, layer.kernel])
    np.testing.assert_allclose(got, np_conv_transpose(yv, w, (2, 1, 2), "SAME"), rtol=1e-4,
                               atol=1e-5)


def test_separable_conv2d_and_1d():
    xv = RNG.normal(size=(2, 6, 6, 3)).astype(np.float32)
    layer = tf.layers.SeparableConv2D(4, 3, depth_multiplier=2, padding="same")
    y = layer(tf.constant(xv))
    assert [v.name for v in layer.variables] == [
        "separable_conv2d/depthwise_kernel:0", "separable_conv2d/pointwise_kernel:0",
        "separable_conv2d/bias:0"]
    assert layer.depthwise_kernel.shape.as_list() == [3, 3, 3, 2]
    assert layer.pointwise_kernel.shape.as_list() == [1, 1, 6, 4]
    sv = RNG.normal(size=(2, 8, 3)).astype(np.float32)
    layer1 = tf.layers.SeparableConv1D(5, 3)
    y1 = layer1(tf.constant(sv))
    assert y1.shape.as_list() == [2, 6, 5]
    got, dw, pw, got1, dw1, pw1 = _run([y, layer.depthwise_kernel, layer.pointwise_kernel,
                                        y1, layer1.depthwise_kernel, layer1.pointwise_kernel])

    def np_separable(x, dw, pw, padding):
        c, m = dw.shape[-2:]
        depth = np.concatenate([np_conv(x[..., i:i + 1], dw[..., i:i + 1, :],
                                        (1,) * (x.ndim - 2), padding) for i in range(c)], -1)
        return depth @ pw.reshape(c * m, -1)  # channel i * m + j: input i, multiplier j

    np.testing.assert_allclose(got, np_separable(xv, dw, pw, "SAME"), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got1, np_separable(sv, dw1, pw1, "VALID"), rtol=1e-4,
                               atol=1e-5)


def test_conv_reuse_and_argument_errors():
    x = tf.placeholder(tf.float32, [None, 5, 5, 2])
    tf.layers.conv2d(x, 3, 3, name="c")
    tf.layers.conv2d(x, 3, 3, name="c", reuse=True)
    assert len(tf.global_variables()) == 2
    with pytest.raises(ValueError, match="The `kernel_size` argument must be a tuple of 2 "
                                         "integers. Received: \\(1, 2, 3\\)"):
        tf.layers.Conv2D(1, (1, 2, 3))
    with pytest.raises(ValueError, match='The `padding` argument must be one of "valid", '
                                         '"same"'):
        tf.layers.Conv2D(1, 3, padding="full")
    with pytest.raises(ValueError, match="expected ndim=4, found ndim=3"):
        tf.layers.conv2d(tf.placeholder(tf.float32, [1, 5, 5]), 1, 3)
    with pytest.raises(ValueError, match="The channel dimension of the inputs should be "
                                         "defined"):
        tf.layers.conv2d(tf.placeholder(tf.float32, [1, 5, 5, None]), 1, 3)


def test_pooling_2d_matches_numpy():
    xv = RNG.normal(size=(2, 7, 6, 3)).astype(np.float32)
    x = tf.constant(xv)
    outs = [tf.layers.max_pooling2d(x, 2, 2),
            tf.layers.max_pooling2d(x, 3, 2, padding="same"),
            tf.layers.average_pooling2d(x, (3, 2), (2, 1), padding="same"),
            tf.layers.AveragePooling2D(2, 2, data_format="channels_first")(
                tf.constant(xv.transpose(0, 3, 1, 2)))]
    assert outs[0].op.name.startswith("max_pooling2d/")
    assert outs[1].shape.as_list() == [2, 4, 3, 3]
    got = _run(outs)
    np.testing.assert_allclose(got[0], np_pool(xv, (2, 2), (2, 2), "VALID", "max"))
    np.testing.assert_allclose(got[1], np_pool(xv, (3, 3), (2, 2), "SAME", "max"))
    np.testing.assert_allclose(got[2], np_pool(xv, (3, 2), (2, 1), "SAME", "avg"), rtol=1e-5)
    np.testing.assert_allclose(got[3], np_pool(xv, (2, 2), (2, 2), "VALID", "avg")
                               .transpose(0, 3, 1, 2), rtol=1e-5)


def test_pooling_1d_and_3d():
    sv = RNG.normal(size=(2, 9, 3)).astype(np.float32)
    zv = RNG.normal(size=(1, 4, 5, 4, 2)).astype(np.float32)
    outs = [tf.layers.max_pooling1d(tf.constant(sv), 3, 2),
            tf.layers.average_pooling1d(tf.constant(sv), 2, 2, padding="same"),
            tf.layers.max_pooling3d(tf.constant(zv), 2, 2, padding="same"),
            tf.layers.AveragePooling3D(2, (1, 2, 2), data_format="channels_first")(
                tf.constant(zv.transpose(0, 4, 1, 2, 3)))]
    assert [o.shape.as_list() for o in outs] == [[2, 4, 3], [2, 5, 3], [1, 2, 3, 2, 2],
                                                 [1, 2, 3, 2, 2]]
    got = _run(outs)
    np.testing.assert_allclose(got[0], np_pool(sv, (3,), (2,), "VALID", "max"))
    np.testing.assert_allclose(got[1], np_pool(sv, (2,), (2,), "SAME", "avg"), rtol=1e-5)
    np.testing.assert_allclose(got[2], np_pool(zv, (2, 2, 2), (2, 2, 2), "SAME", "max"))
    np.testing.assert_allclose(got[3], np_pool(zv, (2, 2, 2), (1, 2, 2), "VALID", "avg")
                               .transpose(0, 4, 1, 2, 3), rtol=1e-5)


def test_small_cnn_trains():
    """conv -> pool -> batch norm -> dense: the loss falls on a fixed batch."""
    rng = np.random.default_rng(5)
    xv = rng.normal(size=(8, 8, 8, 1)).astype(np.float32)
    labels = (xv.mean((1, 2, 3)) > 0).astype(np.int32)
    x = tf.constant(xv)
    h = tf.layers.conv2d(x, 4, 3, padding="same", activation=tf.nn.relu)
    h = tf.layers.max_pooling2d(h, 2, 2)
    h = tf.layers.batch_normalization(h, training=True, fused=False)
    logits = tf.layers.dense(tf.layers.flatten(h), 2)
    loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
    with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS)):
        train = tf.train.AdamOptimizer(0.01).minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        first = sess.run(loss)
        for _ in range(30):
            sess.run(train)
        last = sess.run(loss)
    assert last < first * 0.5
