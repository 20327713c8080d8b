"""tf.image.psnr, ssim, ssim_multiscale, image_gradients, sobel_edges and the YIQ / YUV
conversions against NumPy implementations of TF's formulas, and finite differences."""

import numpy as np
import pytest

import tensorflux as tf
from tests.helpers import run
from tests.ops.harness import numeric_gradient

RNG = np.random.default_rng(5)


def gaussian(size=11, sigma=1.5):
    d = np.arange(size) - (size - 1) / 2
    g = np.exp(-(d[:, None] ** 2 + d[None, :] ** 2) / (2 * sigma ** 2))
    return g / g.sum()


def local_mean(x, window):
    """VALID correlation of every [h, w] plane of x [..., h, w, c] with `window`."""
    k = window.shape[0]
    h, w = x.shape[-3] - k + 1, x.shape[-2] - k + 1
    out = np.zeros(x.shape[:-3] + (h, w, x.shape[-1]))
    for i in range(k):
        for j in range(k):
            out += window[i, j] * x[..., i:i + h, j:j + w, :]
    return out


def np_ssim_parts(x, y, max_val, size=11, sigma=1.5, k1=0.01, k2=0.03):
    """(ssim, cs) per channel, Wang et al.'s formula with TF's biased covariances."""
    window = gaussian(size, sigma)
    c1, c2 = (k1 * max_val) ** 2, (k2 * max_val) ** 2
    mx, my = local_mean(x, window), local_mean(y, window)
    vx = local_mean(x * x, window) - mx ** 2
    vy = local_mean(y * y, window) - my ** 2
    cxy = local_mean(x * y, window) - mx * my
    lum = (2 * mx * my + c1) / (mx ** 2 + my ** 2 + c1)
    cs = (2 * cxy + c2) / (vx + vy + c2)
    return (lum * cs).mean(axis=(-3, -2)), cs.mean(axis=(-3, -2))


def np_ms_ssim(x, y, max_val, weights):
    values = []
    for k in range(len(weights)):
        if k:
            pad = [(0, 0)] * (x.ndim - 3) + [(0, x.shape[-3] % 2), (0, x.shape[-2] % 2), (0, 0)]
            x, y = (np.pad(v, pad, mode="symmetric") for v in (x, y))
            x, y = ((v[..., ::2, ::2, :] + v[..., 1::2, ::2, :] + v[..., ::2, 1::2, :]
                     + v[..., 1::2, 1::2, :]) / 4 for v in (x, y))
        ssim_c, cs = np_ssim_parts(x, y, max_val)
        values.append(np.maximum(cs if k < len(weights) - 1 else ssim_c, 0))
    prod = np.prod([v ** w for v, w in zip(values, weights)], axis=0)
    return prod.mean(-1)


def test_psnr_and_ssim_values():
    a = RNG.uniform(0, 1, (2, 16, 17, 3)).astype(np.float32)
    b = np.clip(a + RNG.normal(0, 0.1, a.shape), 0, 1).astype(np.float32)
    a8, b8 = (np.round(v * 255).astype(np.uint8) for v in (a, b))
    ph = tf.placeholder(tf.float32, [None, None, None, 3])
    outs = [tf.image.psnr(ph, b, 1.0), tf.image.psnr(a8, b8, 255),
            tf.image.ssim(ph, b, 1.0), tf.image.ssim(a8, b8, 255),
            tf.image.ssim(ph, b, 2.0, filter_size=7, filter_sigma=1.0, k1=0.02, k2=0.05),
            tf.image.ssim(a[0], a[0], 1.0)]
    assert outs[0].dtype == tf.float32 and outs[0].op.name.startswith("PSNR/Identity")
    assert outs[3].shape.as_list() == [2]
    got = run(outs, {ph: a})
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    mse = ((a64 - b64) ** 2).mean(axis=(1, 2, 3))
    np.testing.assert_allclose(got[0], 20 * np.log10(1.0) - 10 * np.log10(mse), rtol=1e-5)
    mse8 = ((a8 / 255.0 - b8 / 255.0) ** 2).mean(axis=(1, 2, 3))
    np.testing.assert_allclose(got[1], -10 * np.log10(mse8), rtol=1e-5)
    np.testing.assert_allclose(got[2], np_ssim_parts(a64, b64, 1.0)[0].mean(-1), rtol=1e-4)
    np.testing.assert_allclose(got[3], np_ssim_parts(a8 / 255., b8 / 255., 1.0)[0].mean(-1),
                               rtol=1e-4)
    np.testing.assert_allclose(got[4], np_ssim_parts(a64, b64, 2.0, 7, 1.0, 0.02, 0.05)[0]
                               .mean(-1), rtol=1e-4)
    np.testing.assert_allclose(got[5], 1.0, rtol=1e-6)


def test_ssim_multiscale_values():
    a = RNG.uniform(0, 1, (1, 45, 47, 2)).astype(np.float32)  # odd sizes: padded scales
    b = np.clip(a + RNG.normal(0, 0.2, a.shape), 0, 1).astype(np.float32)
    weights = (0.2, 0.3, 0.5)
    ms = tf.image.ssim_multiscale(a, b, 1.0, power_factors=weights)
    unknown = tf.placeholder(tf.float32, None)
    ms_unknown = tf.image.ssim_multiscale(unknown, b, 1.0, power_factors=weights)
    got = run([ms, ms_unknown], {unknown: a})
    want = np_ms_ssim(a.astype(np.float64), b.astype(np.float64), 1.0, weights)
    np.testing.assert_allclose(got[0], want, rtol=1e-4)
    np.testing.assert_allclose(got[1], want, rtol=1e-4)


def test_ssim_gradient_matches_finite_differences():
    x0 = RNG.uniform(0, 1, (1, 12, 12, 1))
    y0 = RNG.uniform(0, 1, (1, 12, 12, 1))
    x = tf.placeholder(tf.float64, [1, 12, 12, 1])
    value = tf.image.ssim(x, y0, 1.0)  # float64 images are compared in float32
    grad, = tf.gradients(value, [x])
    got = run(grad, {x: x0})
    y32 = y0.astype(np.float32).astype(np.float64)
    numeric = numeric_gradient(lambda v: np_ssim_parts(v, y32, 1.0)[0].sum(),
                               [x0.astype(np.float32).astype(np.float64)], 0, 1e-6)
    np.testing.assert_allclose(got, numeric, rtol=2e-3, atol=2e-4)


def test_ssim_and_psnr_errors():
    with pytest.raises(ValueError, match="must have rank at least 3"):
        tf.image.ssim(tf.zeros([4, 4]), tf.zeros([4, 4]), 1.0)
    with pytest.raises(ValueError, match="are incompatible"):
        tf.image.ssim(tf.zeros([4, 4, 3]), tf.zeros([4, 5, 3]), 1.0)
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 4 and 5"):
        tf.image.psnr(tf.zeros([4, 4, 3]), tf.zeros([4, 5, 3]), 1.0)  # TF's order too
    with pytest.raises(TypeError, match="ShapeN"):
        tf.image.ssim(tf.zeros([11, 11, 1], tf.float64), tf.zeros([11, 11, 1]), 1.0)
    with pytest.raises(ValueError, match="Two images are not compatible"):
        tf.image.ssim(tf.zeros([2, 11, 11, 1]), tf.zeros([3, 11, 11, 1]), 1.0)
    small = tf.placeholder(tf.float32, [None, None, 1])
    value = tf.image.ssim(small, small, 1.0)
    with pytest.raises(tf.errors.InvalidArgumentError, match="assertion failed"):
        run(value, {small: np.zeros([8, 8, 1])})


def test_image_gradients_and_sobel():
    image = RNG.uniform(-1, 1, (2, 5, 6, 3)).astype(np.float32)
    ph = tf.placeholder(tf.float32, [None, None, None, 3])
    dy, dx = tf.image.image_gradients(ph)
    sobel = tf.image.sobel_edges(ph)
    sobel64 = tf.image.sobel_edges(image.astype(np.float64))
    assert sobel.shape.as_list() == [None, None, None, 3, 2]
    assert sobel64.shape.as_list() == [2, 5, 6, 3, 2] and sobel64.dtype == tf.float64
    got_dy, got_dx, got_sobel, got64 = run([dy, dx, sobel, sobel64], {ph: image})
    want_dy = np.zeros_like(image)
    want_dy[:, :-1] = image[:, 1:] - image[:, :-1]
    want_dx = np.zeros_like(image)
    want_dx[:, :, :-1] = image[:, :, 1:] - image[:, :, :-1]
    np.testing.assert_allclose(got_dy, want_dy, atol=1e-7)
    np.testing.assert_allclose(got_dx, want_dx, atol=1e-7)
    padded = np.pad(image.astype(np.float64), [(0, 0), (1, 1), (1, 1), (0, 0)], mode="reflect")
    kernels = [np.array([[-1, -2, -1], [0, 0, 0], [1, 2, 1]]),
               np.array([[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]])]
    want = np.stack([sum(k[i, j] * padded[:, i:i + 5, j:j + 6] for i in range(3)
                         for j in range(3)) for k in kernels], axis=-1)
    np.testing.assert_allclose(got_sobel, want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got64, want, rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="image_gradients expects a 4D tensor"):
        tf.image.image_gradients(tf.zeros([5, 6, 3]))


def test_yiq_yuv():
    rgb = RNG.uniform(0, 1, (4, 5, 3))
    rgb_to_yiq = np.array([[0.299, 0.59590059, 0.2115], [0.587, -0.27455667, -0.52273617],
                           [0.114, -0.32134392, 0.31119955]])
    rgb_to_yuv = np.array([[0.299, -0.14714119, 0.61497538], [0.587, -0.28886916, -0.51496512],
                           [0.114, 0.43601035, -0.10001026]])
    ph = tf.placeholder(tf.float64, [4, 5, 3])
    yiq, yuv = tf.image.rgb_to_yiq(ph), tf.image.rgb_to_yuv(ph)
    outs = [yiq, yuv, tf.image.yiq_to_rgb(yiq), tf.image.yuv_to_rgb(yuv),
            tf.image.rgb_to_yiq(rgb.astype(np.float32))]
    assert yiq.shape.as_list() == [4, 5, 3] and outs[4].dtype == tf.float32
    got = run(outs, {ph: rgb})
    np.testing.assert_allclose(got[0], rgb @ rgb_to_yiq, rtol=1e-12)
    np.testing.assert_allclose(got[1], rgb @ rgb_to_yuv, rtol=1e-12)
    # TF's inverse matrices undo the forward ones to about 1e-4.
    np.testing.assert_allclose(got[2], rgb, atol=1e-4)
    np.testing.assert_allclose(got[3], rgb, atol=1e-4)
    np.testing.assert_allclose(got[2], rgb @ rgb_to_yiq @ np.array(
        [[1, 1, 1], [0.95598634, -0.27201283, -1.10674021],
         [0.6208248, -0.64720424, 1.70423049]]), rtol=1e-12)
    np.testing.assert_allclose(got[4], rgb @ rgb_to_yiq, rtol=1e-5, atol=1e-6)
    # Gray has no chroma.
    gray = run(tf.image.rgb_to_yuv(tf.constant([[0.5, 0.5, 0.5]])))
    np.testing.assert_allclose(gray, [[0.5, 0, 0]], atol=1e-6)
