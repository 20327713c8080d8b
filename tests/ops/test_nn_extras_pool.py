"""tf.nn extras beside CTC: pool / with_space_to_batch, fractional pooling, dilation2d /
erosion2d, conv_transpose and the raw convolution ops, compute_average_loss /
scale_regularization_loss and the experimental dropouts. Values against NumPy written
here (window loops, the fetched pooling sequences), gradients against finite
differences, TF's error classes and messages."""

import itertools
import re

import numpy as np
import pytest

import tensorflux as tf
from tests.ops.cases_nn_extras import np_backprop_input, np_conv_nhwc
from tests.ops.harness import numeric_gradient

RNG = np.random.default_rng(3)


def raises(exc, text):
    return pytest.raises(exc, match=re.escape(text))


def distinct(shape):
    n = int(np.prod(shape))
    return ((RNG.permutation(n) - n / 2) * 0.1).reshape(shape)


def np_pool(x, window, kind, strides, dilation, padding):
    """N-D pooling over the spatial axes 1..N of channels-last x (valid positions only)."""
    n = len(window)
    eff = [(w - 1) * d + 1 for w, d in zip(window, dilation)]
    geo = []
    for size, e, s in zip(x.shape[1:1 + n], eff, strides):
        if padding == "VALID":
            geo.append((0, (size - e) // s + 1))
        else:
            out = -(-size // s)
            geo.append((max((out - 1) * s + e - size, 0) // 2, out))
    out = np.zeros((x.shape[0],) + tuple(o for _, o in geo) + (x.shape[-1],))
    for index in itertools.product(*[range(o) for _, o in geo]):
        taps = [[i * s - b + j * d for j in range(w) if 0 <= i * s - b + j * d < size]
                for i, s, (b, _), w, d, size in zip(index, strides, geo, window, dilation,
                                                     x.shape[1:1 + n])]
        block = x[(slice(None),) + np.ix_(*taps) + (slice(None),)] if n > 1 else \
            x[:, taps[0]]
        block = block.reshape(x.shape[0], -1, x.shape[-1])
        out[(slice(None),) + index] = block.max(1) if kind == "MAX" else block.mean(1)
    return out


# -- pool and with_space_to_batch --------------------------------------------------------------
def test_pool_matches_numpy_in_every_rank_and_layout():
    x2 = RNG.normal(size=(2, 9, 8, 3))
    x1 = RNG.normal(size=(2, 9, 3))
    x3 = RNG.normal(size=(1, 5, 6, 7, 2))
    p2 = tf.placeholder(tf.float64, [None, 9, 8, 3])
    checks = [
        (tf.nn.pool(p2, [2, 3], "MAX", "VALID", dilation_rate=[2, 2]),
         np_pool(x2, [2, 3], "MAX", [1, 1], [2, 2], "VALID")),
        (tf.nn.pool(p2, [2, 2], "AVG", "SAME", strides=[2, 2]),
         np_pool(x2, [2, 2], "AVG", [2, 2], [1, 1], "SAME")),
        (tf.nn.pool(p2, [3, 2], "AVG", "VALID", dilations=[1, 3]),
         np_pool(x2, [3, 2], "AVG", [1, 1], [1, 3], "VALID")),
        (tf.nn.pool(tf.transpose(p2, [0, 3, 1, 2]), [2, 3], "MAX", "SAME", strides=[1, 2],
                    data_format="NCHW"),
         np.transpose(np_pool(x2, [2, 3], "MAX", [1, 2], [1, 1], "SAME"), [0, 3, 1, 2])),
        (tf.nn.pool(x1, [3], "MAX", "VALID", dilation_rate=[2]),
         np_pool(x1, [3], "MAX", [1], [2], "VALID")),
        (tf.nn.pool(np.transpose(x1, [0, 2, 1]), [2], "AVG", "SAME", strides=[2],
                    data_format="NCW"),
         np.transpose(np_pool(x1, [2], "AVG", [2], [1], "SAME"), [0, 2, 1])),
        (tf.nn.pool(x3, [2, 2, 3], "MAX", "VALID", dilation_rate=[2, 1, 2]),
         np_pool(x3, [2, 2, 3], "MAX", [1, 1, 1], [2, 1, 2], "VALID")),
    ]
    assert checks[0][0].shape.as_list() == [None, 7, 4, 3]
    assert checks[1][0].op.name == "avg_pool" and checks[1][0].op.type == "AvgPool"
    got = tf.Session().run([c[0] for c in checks], {p2: x2})
    for (_, want), value in zip(checks, got):
        np.testing.assert_allclose(value, want, rtol=1e-12)


def test_dilated_pool_gradient_matches_finite_differences():
    x = distinct((1, 7, 6, 2))
    p = tf.placeholder(tf.float64, x.shape)
    w = RNG.uniform(0.5, 1.5, (1, 5, 2, 2))
    y = tf.nn.pool(p, [2, 3], "MAX", "VALID", dilation_rate=[2, 2])
    z = tf.nn.pool(p, [3, 2], "AVG", "VALID", dilation_rate=[2, 2])
    g = tf.Session().run(tf.gradients(tf.reduce_sum(y * w) + tf.reduce_sum(z), p)[0], {p: x})

    def objective(v):
        return (np.sum(np_pool(v, [2, 3], "MAX", [1, 1], [2, 2], "VALID") * w)
                + np.sum(np_pool(v, [3, 2], "AVG", [1, 1], [2, 2], "VALID")))

    np.testing.assert_allclose(g, numeric_gradient(objective, [x.copy()], 0), atol=1e-6)


def test_with_space_to_batch_makes_a_windowed_op_atrous():
    x = RNG.normal(size=(2, 9, 10, 3))
    w = RNG.normal(size=(3, 2, 3, 4))
    p = tf.placeholder(tf.float64, [None, None, 10, 3])

    def conv(inp, num_spatial_dims, padding):
        assert num_spatial_dims == 2
        return tf.nn.conv2d(inp, w, [1, 1, 1, 1], padding)

    valid = tf.nn.with_space_to_batch(p, [2, 3], "VALID", conv)
    same = tf.nn.with_space_to_batch(p, np.array([3, 2]), "SAME", conv, filter_shape=[3, 2])
    plain = tf.nn.with_space_to_batch(p, [1, 1], "SAME", conv)
    assert plain.op.type == "Conv2D"  # a rate of ones calls op directly
    a, b, c = tf.Session().run([valid, same, plain], {p: x})
    np.testing.assert_allclose(a, np_conv_nhwc(x, w, (1, 1), "VALID", dilations=(2, 3)),
                               rtol=1e-10)
    np.testing.assert_allclose(b, np_conv_nhwc(x, w, (1, 1), "SAME", dilations=(3, 2)),
                               rtol=1e-10)
    np.testing.assert_allclose(c, np_conv_nhwc(x, w, (1, 1), "SAME"), rtol=1e-10)


def test_pool_and_with_space_to_batch_errors():
    x = tf.zeros([2, 9, 8, 3])

    def op(inp, n, padding):
        return inp

    with raises(ValueError, "pooling with SAME padding is not implemented for "
                            "dilation_rate > 1"):
        tf.nn.pool(x, [2, 2], "MAX", "SAME", dilation_rate=[2, 2])
    with raises(ValueError, "strides > window_shape not supported due to inconsistency "
                            "between CPU and GPU implementations"):
        tf.nn.pool(x, [2, 2], "MAX", "VALID", strides=[3, 1])
    with raises(ValueError, "strides > 1 not supported in conjunction with dilation_rate > 1"):
        tf.nn.pool(x, [2, 2], "MAX", "VALID", strides=[2, 1], dilation_rate=[1, 2])
    with raises(ValueError, "2-D MIN pooling is not supported."):
        tf.nn.pool(x, [2, 2], "MIN", "VALID")
    with raises(ValueError, "It is required that 1 <= num_spatial_dims <= 3."):
        tf.nn.pool(x, [2, 2, 2, 2], "MAX", "VALID")
    with raises(ValueError, "len(dilation_rate)=1 but should be 2"):
        tf.nn.pool(x, [2, 2], "MAX", "VALID", dilation_rate=[2])
    with raises(ValueError, "filter_shape must be specified for SAME padding"):
        tf.nn.with_space_to_batch(x, [2, 2], "SAME", op)
    with raises(ValueError, "dilation_rate must be positive"):
        tf.nn.with_space_to_batch(x, [0, 2], "VALID", op)
    with raises(ValueError, "spatial_dims must be a montonically increasing sequence"):
        tf.nn.with_space_to_batch(x, [2, 2], "VALID", op, spatial_dims=[2, 1])
    with raises(ValueError, "Invalid padding method 'FULL'"):
        tf.nn.with_space_to_batch(x, [2, 2], "FULL", op)


# -- fractional pooling ------------------------------------------------------------------------
def _cells(seq, size, overlapping):
    return [range(seq[i], min(seq[i + 1] - (0 if overlapping else 1), size - 1) + 1)
            for i in range(len(seq) - 1)]


def np_fractional(x, rows, cols, overlapping, kind):
    out = np.zeros((x.shape[0], len(rows) - 1, len(cols) - 1, x.shape[3]), x.dtype)
    for (i, r), (j, c) in itertools.product(enumerate(_cells(rows, x.shape[1], overlapping)),
                                            enumerate(_cells(cols, x.shape[2], overlapping))):
        block = x[:, list(r)][:, :, list(c)].reshape(x.shape[0], -1, x.shape[3])
        if kind == "max":
            out[:, i, j] = block.max(1)
        elif x.dtype.kind == "i":
            out[:, i, j] = np.trunc(block.sum(1) / block.shape[1]).astype(x.dtype)
        else:
            out[:, i, j] = block.mean(1)
    return out


def check_sequence(seq, n, m, pseudo_random):
    """TF's GeneratePoolingSequence rules for an input length n, output length m."""
    seq = np.asarray(seq)
    k = n // m
    gaps = np.diff(seq)
    assert seq[0] == 0 and seq[-1] == n and len(seq) == m + 1
    assert set(gaps) <= {k, k + 1}
    if not pseudo_random:
        assert np.sum(gaps == k + 1) == n % m
        return
    # seq[i] + 1 = ceil(alpha * (i + u)) for one u in [0, max_u)
    alpha = n / m
    max_u = min((k + 2) / alpha - 1, (n + 1 - k) / alpha - (m - 1))
    low = max([0.0] + [seq[i] / alpha - i for i in range(1, m)])
    high = min([max_u] + [(seq[i] + 1) / alpha - i for i in range(1, m)])
    assert low <= high


def test_fractional_pools_match_numpy_over_their_sequences():
    x = distinct((2, 10, 9, 3))
    xi = RNG.integers(-9, 9, size=(1, 7, 8, 2)).astype(np.int32)
    p = tf.placeholder(tf.float64, [None, 10, 9, 3])
    pools = [
        ("max", True, True, tf.nn.fractional_max_pool(p, [1, 1.44, 1.73, 1], True, True)),
        ("max", False, False, tf.nn.fractional_max_pool(p, [1, 2.0, 1.5, 1])),
        ("avg", True, True, tf.nn.fractional_avg_pool(p, [1, 1.5, 1.2, 1], True, True)),
        ("avg", False, False, tf.nn.fractional_avg_pool(p, [1, 1.3, 2.5, 1])),
    ]
    int_pool = tf.nn.fractional_avg_pool(xi, [1, 1.6, 1.6, 1], overlapping=True)
    out, rows, cols = pools[0][3]
    assert out.shape.as_list() == [None, 6, 5, 3] and rows.shape.as_list() == [7]
    assert cols.dtype == tf.int64 and out.op.type == "FractionalMaxPool"
    assert pools[3][3].output.shape.as_list() == [None, 7, 3, 3]
    with tf.Session() as sess:
        got, got_int = sess.run([[pl[3] for pl in pools], int_pool], {p: x})
    for (kind, pseudo, overlapping, _), (value, r, c) in zip(pools, got):
        check_sequence(r, 10, len(r) - 1, pseudo)
        check_sequence(c, 9, len(c) - 1, pseudo)
        np.testing.assert_allclose(value, np_fractional(x, r, c, overlapping, kind),
                                   rtol=1e-12)
    value, r, c = got_int
    np.testing.assert_array_equal(value, np_fractional(xi, r, c, True, "avg"))


def test_fractional_pool_randomness_and_determinism():
    x = np.zeros((1, 20, 20, 1), np.float32)
    fresh = tf.nn.fractional_max_pool(x, [1, 1.3, 1.3, 1], pseudo_random=True).row_pooling_sequence
    fixed = tf.nn.fractional_max_pool(x, [1, 1.3, 1.3, 1], deterministic=True, seed=5,
                                      seed2=7).row_pooling_sequence
    with tf.Session() as sess:
        runs = [sess.run([fresh, fixed]) for _ in range(8)]
    assert len({tuple(r[0]) for r in runs}) > 1  # a new draw every run
    assert len({tuple(r[1]) for r in runs}) == 1  # the same cells every run
    with tf.Session() as sess:  # and in another session
        assert tuple(sess.run(fixed)) == tuple(runs[0][1])


def test_fractional_pool_gradients_match_finite_differences():
    x = distinct((1, 7, 8, 2))
    p = tf.placeholder(tf.float64, x.shape)
    mx = tf.nn.fractional_max_pool(p, [1, 1.4, 1.5, 1], True, True, deterministic=True,
                                   seed=1, seed2=2)
    av = tf.nn.fractional_avg_pool(p, [1, 1.7, 1.3, 1], False, False, deterministic=True,
                                   seed=3, seed2=4)
    w1 = RNG.uniform(0.5, 1.5, (1, 5, 5, 2))
    w2 = RNG.uniform(0.5, 1.5, (1, 4, 6, 2))
    grad = tf.gradients(tf.reduce_sum(mx.output * w1) + tf.reduce_sum(av.output * w2), p)[0]
    with tf.Session() as sess:
        g, (_, r1, c1), (_, r2, c2) = sess.run([grad, mx, av], {p: x})

    def objective(v):
        return (np.sum(np_fractional(v, r1, c1, True, "max") * w1)
                + np.sum(np_fractional(v, r2, c2, False, "avg") * w2))

    np.testing.assert_allclose(g, numeric_gradient(objective, [x.copy()], 0), atol=1e-7)


def test_fractional_pool_errors():
    with raises(ValueError, "pooling_ratio field must specify 4 dimensions"):
        tf.nn.fractional_max_pool(tf.zeros([1, 4, 4, 1]), [1.5, 1.5])
    with raises(ValueError, "Shape must be rank 4 but is rank 3"):
        tf.nn.fractional_avg_pool(tf.zeros([4, 4, 1]), [1, 1.5, 1.5, 1])
    bad = tf.nn.fractional_max_pool(tf.zeros([2, 4, 4, 1]), [2.0, 1.5, 1.5, 1]).output
    with raises(tf.errors.UnimplementedError, "Fractional max pooling is not yet supported "
                                              "on the batch nor channel dimension."):
        tf.Session().run(bad)


# -- morphology --------------------------------------------------------------------------------
def np_erosion(x, k, strides, rates, padding):
    """TF's erosion2d formula: the min over the window of value - kernel, the kernel
    taps taken from the far end of the (dilated) window."""
    (kh, kw, _), out = k.shape, []
    eff = [(kh - 1) * rates[1] + 1, (kw - 1) * rates[2] + 1]
    geo = []
    for size, e, s in zip(x.shape[1:3], eff, strides[1:3]):
        if padding == "VALID":
            geo.append((0, (size - e) // s + 1))
        else:
            o = -(-size // s)
            geo.append((max((o - 1) * s + e - size, 0) // 2, o))
    out = np.zeros((x.shape[0], geo[0][1], geo[1][1], x.shape[3]))
    for oy, ox in itertools.product(range(geo[0][1]), range(geo[1][1])):
        vals = []
        for dy, dx in itertools.product(range(kh), range(kw)):
            y = oy * strides[1] - geo[0][0] + eff[0] - 1 - dy * rates[1]
            xx = ox * strides[2] - geo[1][0] + eff[1] - 1 - dx * rates[2]
            if 0 <= y < x.shape[1] and 0 <= xx < x.shape[2]:
                vals.append(x[:, y, xx] - k[dy, dx])
        out[:, oy, ox] = np.min(vals, axis=0)
    return out


def test_erosion2d_and_dilation2d_names_and_errors():
    x = RNG.normal(size=(2, 7, 6, 3))
    k = RNG.normal(size=(3, 2, 3))
    ero = tf.nn.erosion2d(x, k, [1, 2, 1, 1], [1, 1, 2, 1], "SAME")
    ero_valid = tf.nn.erosion2d(x, k, [1, 1, 1, 1], [1, 2, 1, 1], "VALID")
    assert ero.shape.as_list() == [2, 4, 6, 3]
    xt = tf.constant(x)
    dil = tf.nn.dilation2d(xt, filters=k, strides=[1, 1, 1, 1], dilations=[1, 1, 1, 1],
                           padding="VALID")
    assert dil.op.type == "Dilation2D" and dil.op.name == "Dilation2D"
    a, b = tf.Session().run([ero, ero_valid])
    np.testing.assert_allclose(a, np_erosion(x, k, [1, 2, 1, 1], [1, 1, 2, 1], "SAME"),
                               rtol=1e-12)
    np.testing.assert_allclose(b, np_erosion(x, k, [1, 1, 1, 1], [1, 2, 1, 1], "VALID"),
                               rtol=1e-12)
    with raises(ValueError, "Attr 'strides' of 'Dilation2D' Op passed list of length 3 less "
                            "than minimum 4."):
        tf.nn.dilation2d(x, k, [1, 1, 1], [1, 1, 1, 1], "SAME")
    with raises(ValueError, "Dimensions must be equal, but are 3 and 2"):
        tf.nn.dilation2d(x, k[:, :, :2], [1, 1, 1, 1], [1, 1, 1, 1], "SAME")
    with raises(ValueError, "Computed output size would be negative"):
        tf.nn.dilation2d(x, k, [1, 1, 1, 1], [1, 4, 1, 1], "VALID")
    bad = tf.nn.dilation2d(x, k, [2, 1, 1, 1], [1, 1, 1, 1], "SAME")
    with raises(tf.errors.UnimplementedError,
                "Stride is only supported across spatial dimensions."):
        tf.Session().run(bad)
    with raises(LookupError, "No gradient defined for operation"):
        tf.gradients(tf.gradients(dil, xt)[0], xt)


# -- conv_transpose and the raw convolution ops ------------------------------------------------
def test_conv_transpose_dispatch_and_values():
    y2 = RNG.normal(size=(2, 3, 3, 4))
    w2 = RNG.normal(size=(3, 3, 5, 4))
    t2 = tf.nn.conv_transpose(y2, w2, [2, 6, 6, 5], [2, 2], padding="SAME")
    y1 = RNG.normal(size=(2, 4, 4))
    w1 = RNG.normal(size=(3, 5, 4))
    t1 = tf.nn.conv_transpose(y1, w1, tf.constant([2, 9, 5]), 2, padding="VALID")
    t3 = tf.nn.conv_transpose(tf.zeros([1, 2, 2, 2, 3]), tf.zeros([2, 2, 2, 6, 3]),
                              [1, 4, 4, 4, 6], 2)
    assert t2.op.type == "Conv2DBackpropInput" and t2.op.name == "conv_transpose"
    assert t3.op.type == "Conv3DBackpropInputV2" and t3.shape.as_list() == [1, 4, 4, 4, 6]
    assert t1.shape.as_list() == [2, 9, 5]
    a, b = tf.Session().run([t2, t1])
    np.testing.assert_allclose(a, np_backprop_input(w2, y2, (2, 6, 6, 5), (2, 2), "SAME"),
                               rtol=1e-10)
    want = np_backprop_input(w1[None], y1[:, None], (2, 1, 9, 5), (1, 2), "VALID")[:, 0]
    np.testing.assert_allclose(b, want, rtol=1e-10)
    with raises(ValueError, "output_shape must be of length 3, 4 or 5 but was 6."):
        tf.nn.conv_transpose(y2, w2, [1] * 6, 1)
    with raises(ValueError, "output_shape must be a tensor or sized collection."):
        tf.nn.conv_transpose(y2, w2, 7, 1)


def test_raw_conv_ops_shapes_errors_and_no_gradient():
    x = tf.placeholder(tf.float32, [None, 3, 7, 7, 4])
    w = tf.zeros([3, 3, 2, 6])
    y = tf.conv(x, w, [1, 2, 2, 1], "VALID", batch_dims=2, groups=2)
    assert y.shape.as_list() == [None, 3, 3, 3, 6] and y.op.type == "Conv"
    with raises(ValueError, "Input depth (4) must be equal to the filter's input depth (2) "
                            "times the number of groups (1)"):
        tf.conv(x, w, [1, 1, 1, 1], "SAME", batch_dims=2)
    with raises(ValueError, "Attr 'data_format' of 'Conv' Op passed string 'NHWC' not in"):
        tf.conv(x, w, [1, 1, 1, 1], "SAME", batch_dims=2, groups=2, data_format="NHWC")
    with raises(LookupError, "No gradient defined for operation 'Conv' (op type: Conv)"):
        tf.gradients(y, x)
    f = tf.conv2d_backprop_filter_v2(tf.zeros([1, 5, 5, 3]), tf.zeros([2, 2, 3, 4]),
                                     tf.zeros([1, 4, 4, 4]), [1, 1, 1, 1], "VALID")
    i = tf.conv2d_backprop_input_v2(tf.zeros([1, 5, 5, 3]), tf.zeros([2, 2, 3, 4]),
                                    tf.zeros([1, 3, 3, 4]), [1, 2, 2, 1],
                                    "EXPLICIT",
                                    explicit_paddings=[0, 0, 1, 0, 1, 0, 0, 0])
    assert f.shape.as_list() == [2, 2, 3, 4] and i.shape.as_list() == [1, 5, 5, 3]
    with raises(tf.errors.InvalidArgumentError, "Conv2DBackpropFilterV2: Size of "
                                                "out_backprop doesn't match computed"):
        tf.Session().run(tf.conv2d_backprop_filter_v2(
            tf.zeros([1, 5, 5, 3]), tf.zeros([2, 2, 3, 4]), tf.zeros([1, 3, 3, 4]),
            [1, 1, 1, 1], "VALID"))
    assert tf.Session().run(i).shape == (1, 5, 5, 3)


# -- loss scaling and dropouts -----------------------------------------------------------------
def test_compute_average_loss_and_scale_regularization_loss():
    losses = RNG.uniform(size=(4, 3))
    p = tf.placeholder(tf.float64, [None, 3])
    weights = RNG.uniform(size=(4,))
    out = [tf.nn.compute_average_loss(p),
           tf.nn.compute_average_loss(p, sample_weight=weights),
           tf.nn.compute_average_loss(p, sample_weight=2.0, global_batch_size=10),
           tf.nn.scale_regularization_loss(p)]
    assert out[1].dtype == tf.float64 and out[0].shape.as_list() == []
    got = tf.Session().run(out, {p: losses})
    np.testing.assert_allclose(got[0], losses.sum() / 4, rtol=1e-12)
    np.testing.assert_allclose(got[1], (losses * weights[:, None].astype(np.float32)
                                        .astype(np.float64)).sum() / 4, rtol=1e-6)
    np.testing.assert_allclose(got[2], 2 * losses.sum() / 10, rtol=1e-6)
    np.testing.assert_allclose(got[3], losses.sum(), rtol=1e-12)
    with raises(ValueError, "Invalid value passed for `per_example_loss`. Expected a tensor "
                            "with at least rank 1"):
        tf.nn.compute_average_loss(1.0)


def test_experimental_dropouts():
    x = RNG.uniform(1, 2, size=(3, 4)).astype(np.float32)
    noise = np.tile(np.array([0.1, 0.5, 0.25, 0.9], np.float32), (3, 1))

    def sampler(shape, dtype):
        return tf.cast(tf.constant(noise), dtype) + tf.zeros(shape, dtype)

    a = tf.nn.experimental.general_dropout(x, 0.25, sampler)
    b = tf.nn.experimental.general_dropout(x, tf.constant(0.5), sampler)
    same = tf.nn.experimental.general_dropout(tf.constant(x), 0.0, sampler)
    assert same.op.type == "Const" and a.shape.as_list() == [3, 4]
    got_a, got_b = tf.Session().run([a, b])
    np.testing.assert_allclose(got_a, np.where(noise >= 0.25, x / 0.75, 0), rtol=1e-6)
    np.testing.assert_allclose(got_b, np.where(noise >= 0.5, x / 0.5, 0), rtol=1e-6)
    with raises(ValueError, "`rate` must be a scalar tensor or a float in the range [0, 1). "
                            "Received: rate=1.0"):
        tf.nn.experimental.general_dropout(x, 1.0, sampler)
    with raises(ValueError, "`x.dtype` must be a floating point tensor as `x` will be "
                            "scaled."):
        tf.nn.experimental.general_dropout(np.ones(3, np.int32), 0.5, sampler)


def test_stateless_dropout_depends_only_on_the_seed():
    pytest.importorskip("tensorflux._src.ops.random.stateless_random_ops",
                        reason="tf.random's stateless ops come with the random family")
    x = np.ones((50, 40), np.float32)
    d1 = tf.nn.experimental.stateless_dropout(x, 0.3, seed=[1, 2])
    d2 = tf.nn.experimental.stateless_dropout(x, 0.3, seed=[1, 2])
    with tf.Session() as sess:
        a, b = sess.run([d1, d2])
    with tf.Session() as sess:
        c = sess.run(d1)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a, c)
    assert set(np.unique(a)) <= {0.0, np.float32(1 / 0.7)}
    assert 0.25 < np.mean(a == 0) < 0.35
