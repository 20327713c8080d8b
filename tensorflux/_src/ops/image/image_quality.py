"""Image quality measures and derivatives: `tf.image.psnr`, `ssim`, `ssim_multiscale`,
`image_gradients` and `sobel_edges`, composed from registry ops as TF1.15's
image_ops_impl builds them (so gradients come from those ops).

- psnr: 20 log10(max_val) - 10 log10(mse) over the last three dimensions, in float32
  (integer images and max_val go through convert_image_dtype first).
- ssim: per channel, luminance (2 mu_x mu_y + c1) / (mu_x^2 + mu_y^2 + c1) times
  contrast-structure (2 cov_xy + c2) / (var_x + var_y + c2), c1 = (k1 max_val)^2,
  c2 = (k2 max_val)^2; the local means are a VALID depthwise convolution with a
  filter_size x filter_size Gaussian of width filter_sigma (a softmax of -d^2 / (2 sigma^2),
  as TF's _fspecial_gauss); averaged over positions, then channels.
- ssim_multiscale: the contrast-structure terms of scales 0..n-2 and the SSIM of the last,
  each through relu, raised to `power_factors` and multiplied; each scale halves the
  images by 2x2 average pooling after padding odd sizes symmetrically by one.
- image_gradients: forward differences (dy, dx) with a zero last row / column.
- sobel_edges: the two 3x3 Sobel filters on the reflect-padded image, [..., d, 2].
"""

from __future__ import annotations

import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.ops.array import array_ops
from tensorflux._src.ops.array.generator_ops import zeros
from tensorflux._src.ops.array.shapes import shape_n
from tensorflux._src.ops.control.control_flow_ops import cond
from tensorflux._src.ops.debug.debug_ops import Assert
from tensorflux._src.ops.image.image_ops import convert_image_dtype
from tensorflux._src.ops.math import math_ops, reduce_ops
from tensorflux._src.ops.nn.conv_ops import depthwise_conv2d
from tensorflux._src.ops.nn.nn_ops import relu, softmax
from tensorflux._src.ops.nn.pool_ops import avg_pool

__all__ = ["image_gradients", "psnr", "sobel_edges", "ssim", "ssim_multiscale"]

# Wang et al.'s weights of the five scales.
_MSSSIM_WEIGHTS = (0.0448, 0.2856, 0.3001, 0.2363, 0.1333)


def _verify_compatible_image_shapes(img1, img2):
    """(shape1, shape2, run-time checks): rank >= 3, equal last three dimensions and
    broadcastable leading ones (TF's static checks raise ValueError)."""
    shape1 = img1.shape.with_rank_at_least(3)
    shape2 = img2.shape.with_rank_at_least(3)
    shape1[-3:].assert_is_compatible_with(shape2[-3:])
    if shape1.ndims is not None and shape2.ndims is not None:
        for dim1, dim2 in zip(reversed(shape1.dims[:-3]), reversed(shape2.dims[:-3])):
            if not (dim1 == 1 or dim2 == 1 or dim1.is_compatible_with(dim2)):
                raise ValueError(f"Two images are not compatible: {shape1} and {shape2}")
    shape1, shape2 = shape_n([img1, img2])
    checks = [
        Assert(math_ops.greater_equal(array_ops.size(shape1), 3), [shape1, shape2],
               summarize=10),
        Assert(reduce_ops.reduce_all(math_ops.equal(shape1[-3:], shape2[-3:])),
               [shape1, shape2], summarize=10)]
    return shape1, shape2, checks


def _with_checks(checks, tensor):
    with _graph.control_dependencies(checks):
        return array_ops.identity(tensor)


def _as_float_pair(img1, img2, max_val):
    """Both images and max_val in float32, max_val scaled as the images' dtype says."""
    max_val = math_ops.cast(max_val, img1.dtype)
    max_val = convert_image_dtype(max_val, _dtypes.float32)
    return (convert_image_dtype(img1, _dtypes.float32),
            convert_image_dtype(img2, _dtypes.float32), max_val)


def psnr(a, b, max_val, name=None):
    """Peak signal-to-noise ratio of a and b (float32, one value per image)."""
    with _graph.name_scope(name, "PSNR", [a, b]):
        a = convert_to_tensor(a, name="a")
        b = convert_to_tensor(b, name="b")
        a, b, max_val = _as_float_pair(a, b, max_val)
        mse = reduce_ops.reduce_mean(math_ops.squared_difference(a, b), [-3, -2, -1])
        psnr_val = math_ops.subtract(
            20 * math_ops.log(max_val) / math_ops.log(10.0),
            np.float32(10 / np.log(10)) * math_ops.log(mse), name="psnr")
        _, _, checks = _verify_compatible_image_shapes(a, b)
        return _with_checks(checks, psnr_val)


# -- SSIM ------------------------------------------------------------------------------------
def _fspecial_gauss(size, sigma):
    """MATLAB's fspecial('gaussian'): [size, size, 1, 1] weights summing to 1."""
    size = convert_to_tensor(size, _dtypes.int32)
    sigma = convert_to_tensor(sigma)
    coords = math_ops.cast(math_ops.range(size), sigma.dtype)
    coords -= math_ops.cast(size - 1, sigma.dtype) / 2.0
    g = math_ops.square(coords)
    g *= -0.5 / math_ops.square(sigma)
    g = array_ops.reshape(g, [1, -1]) + array_ops.reshape(g, [-1, 1])
    g = softmax(array_ops.reshape(g, [1, -1]))
    return array_ops.reshape(g, array_ops.stack([size, size, 1, 1]))


def _ssim_helper(x, y, reducer, max_val, compensation=1.0, k1=0.01, k2=0.03):
    """(luminance, contrast-structure) with `reducer` taking the weighted local means."""
    c1 = (k1 * max_val) ** 2
    c2 = (k2 * max_val) ** 2
    mean0 = reducer(x)
    mean1 = reducer(y)
    num0 = mean0 * mean1 * 2.0
    den0 = math_ops.square(mean0) + math_ops.square(mean1)
    luminance = (num0 + c1) / (den0 + c1)
    # cov_xy = E[xy] - E[x]E[y] with the same weights.
    num1 = reducer(x * y) * 2.0
    den1 = reducer(math_ops.square(x) + math_ops.square(y))
    c2 *= compensation
    cs = (num1 - num0 + c2) / (den1 - den0 + c2)
    return luminance, cs


def _ssim_per_channel(img1, img2, max_val=1.0, filter_size=11, filter_sigma=1.5, k1=0.01,
                      k2=0.03):
    """(ssim, cs) per channel: [..., channels]."""
    filter_size = convert_to_tensor(filter_size, dtype=_dtypes.int32)
    filter_sigma = convert_to_tensor(filter_sigma, dtype=img1.dtype)
    shape1, shape2 = shape_n([img1, img2])
    checks = [
        Assert(reduce_ops.reduce_all(math_ops.greater_equal(shape1[-3:-1], filter_size)),
               [shape1, filter_size], summarize=8),
        Assert(reduce_ops.reduce_all(math_ops.greater_equal(shape2[-3:-1], filter_size)),
               [shape2, filter_size], summarize=8)]
    img1 = _with_checks(checks, img1)
    kernel = _fspecial_gauss(filter_size, filter_sigma)
    kernel = array_ops.tile(kernel, array_ops.stack([1, 1, shape1[-1], 1]))
    # TF keeps compensation at 1.0 (the biased covariance) to match MATLAB's MS-SSIM.
    compensation = 1.0

    def reducer(x):
        shape = array_ops.shape(x)
        x = array_ops.reshape(x, array_ops.concat([[-1], shape[-3:]], 0))
        y = depthwise_conv2d(x, kernel, strides=[1, 1, 1, 1], padding="VALID")
        return array_ops.reshape(y, array_ops.concat([shape[:-3], array_ops.shape(y)[1:]], 0))

    luminance, cs = _ssim_helper(img1, img2, reducer, max_val, compensation, k1, k2)
    axes = convert_to_tensor([-3, -2], dtype=_dtypes.int32)
    return reduce_ops.reduce_mean(luminance * cs, axes), reduce_ops.reduce_mean(cs, axes)


def _checked_pair(img1, img2):
    img1 = convert_to_tensor(img1, name="img1")
    img2 = convert_to_tensor(img2, name="img2")
    shape1, shape2, checks = _verify_compatible_image_shapes(img1, img2)
    return _with_checks(checks, img1), img2, shape1, shape2


def ssim(img1, img2, max_val, filter_size=11, filter_sigma=1.5, k1=0.01, k2=0.03):
    """Structural similarity of two image batches (last three dimensions [h, w, c], at
    least filter_size x filter_size): one float32 value per image, in (-1, 1]."""
    with _graph.name_scope(None, "SSIM", [img1, img2]):
        img1, img2, _, _ = _checked_pair(img1, img2)
        img1, img2, max_val = _as_float_pair(img1, img2, max_val)
        ssim_per_channel, _ = _ssim_per_channel(img1, img2, max_val, filter_size,
                                                filter_sigma, k1, k2)
        return reduce_ops.reduce_mean(ssim_per_channel, [-1])


def _downscale(imgs, tails, heads):
    """Halves [..., h, w, c] images with 2x2 average pooling, first padding an odd height
    or width by one symmetric row / column (a cond when the sizes are only known later)."""
    divisor = [1, 2, 2, 1]
    flat = [array_ops.reshape(x, array_ops.concat([[-1], t], 0)) for x, t in zip(imgs, tails)]
    static = imgs[0].shape[-3:] if imgs[0].shape.ndims is not None else None

    def do_pad(remainder):
        padding = array_ops.pad(array_ops.expand_dims(remainder, -1), [[1, 0], [1, 0]])
        return [array_ops.pad(x, padding, mode="SYMMETRIC") for x in flat]

    if static is not None and static.is_fully_defined():
        remainder = [d % m for d, m in zip(static.as_list(), divisor[1:])]
        padded = do_pad(convert_to_tensor(remainder, _dtypes.int32)) if any(remainder) \
            else flat
    else:
        remainder = tails[0] % convert_to_tensor(divisor[1:], dtype=_dtypes.int32)
        need_padding = reduce_ops.reduce_any(math_ops.not_equal(remainder, 0))
        padded = cond(need_padding, lambda: do_pad(remainder), lambda: flat)
    downscaled = [avg_pool(x, ksize=divisor, strides=divisor, padding="VALID")
                  for x in padded]
    tails = [x[1:] for x in shape_n(downscaled)]
    return [array_ops.reshape(x, array_ops.concat([h, t], 0))
            for x, h, t in zip(downscaled, heads, tails)], tails


def ssim_multiscale(img1, img2, max_val, power_factors=_MSSSIM_WEIGHTS, filter_size=11,
                    filter_sigma=1.5, k1=0.01, k2=0.03):
    """Multi-scale SSIM (Wang, Simoncelli and Bovik): one float32 value per image in
    [0, 1]; len(power_factors) scales, each half the size of the previous."""
    with _graph.name_scope(None, "MS-SSIM", [img1, img2]):
        img1, img2, shape1, shape2 = _checked_pair(img1, img2)
        img1, img2, max_val = _as_float_pair(img1, img2, max_val)
        imgs = [img1, img2]
        heads = [s[:-3] for s in (shape1, shape2)]
        tails = [s[-3:] for s in (shape1, shape2)]
        mcs = []
        ssim_per_channel = None
        for k in range(len(power_factors)):
            with _graph.name_scope(None, f"Scale{k}", imgs):
                if k > 0:
                    imgs, tails = _downscale(imgs, tails, heads)
                ssim_per_channel, cs = _ssim_per_channel(
                    *imgs, max_val=max_val, filter_size=filter_size,
                    filter_sigma=filter_sigma, k1=k1, k2=k2)
                mcs.append(relu(cs))
        # The last scale contributes its whole SSIM, the others their cs term.
        mcs.pop()
        mcs_and_ssim = array_ops.stack(mcs + [relu(ssim_per_channel)], axis=-1)
        ms_ssim = reduce_ops.reduce_prod(math_ops.pow(mcs_and_ssim, power_factors), [-1])
        return reduce_ops.reduce_mean(ms_ssim, [-1])


# -- image gradients and edges ---------------------------------------------------------------
def image_gradients(image):
    """(dy, dx): I(y + 1, x) - I(y, x) and I(y, x + 1) - I(y, x) of a 4-D batch, the same
    shape as `image` (zero in the last row / column)."""
    image = convert_to_tensor(image, name="image")
    if image.shape.ndims != 4:
        raise ValueError(f"image_gradients expects a 4D tensor [batch_size, h, w, d], not "
                         f"{image.shape}.")
    image_shape = array_ops.shape(image)
    batch_size, height, width, depth = array_ops.unstack(image_shape)
    dy = image[:, 1:, :, :] - image[:, :-1, :, :]
    dx = image[:, :, 1:, :] - image[:, :, :-1, :]
    shape = array_ops.stack([batch_size, 1, width, depth])
    dy = array_ops.concat([dy, zeros(shape, image.dtype)], 1)
    dy = array_ops.reshape(dy, image_shape)
    shape = array_ops.stack([batch_size, height, 1, depth])
    dx = array_ops.concat([dx, zeros(shape, image.dtype)], 2)
    dx = array_ops.reshape(dx, image_shape)
    return dy, dx


def sobel_edges(image):
    """Sobel responses [batch, h, w, d, 2] (vertical, then horizontal) of a 4-D float batch
    (at least 2x2), computed on the image padded by reflection."""
    image = convert_to_tensor(image, name="image")
    static_image_shape = image.shape
    image_shape = array_ops.shape(image)
    kernels = [[[-1, -2, -1], [0, 0, 0], [1, 2, 1]],
               [[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]]]
    num_kernels = len(kernels)
    kernels = np.expand_dims(np.transpose(np.asarray(kernels), (1, 2, 0)), -2)
    kernels_tf = convert_to_tensor(kernels.astype(image.dtype.as_numpy_dtype))
    kernels_tf = array_ops.tile(kernels_tf, array_ops.stack([1, 1, image_shape[-1], 1]),
                                name="sobel_filters")
    padded = array_ops.pad(image, [[0, 0], [1, 1], [1, 1], [0, 0]], mode="REFLECT")
    output = depthwise_conv2d(padded, kernels_tf, [1, 1, 1, 1], "VALID")
    shape = array_ops.concat([image_shape, [num_kernels]], 0)
    output = array_ops.reshape(output, shape)
    output.set_shape(static_image_shape.concatenate([num_kernels]))
    return output
