"""`tf.image` colour ops: grayscale, HSV, and the adjust_* / random_* augmentations.

Op records (compiled, JAX lowerings) for TF1's colour kernels: RGBToHSV, HSVToRGB,
AdjustContrastv2, AdjustSaturation, AdjustHue. Each lowering follows its CPU kernel's
formulas, which differ slightly between ops (AdjustHue works on hue in [0, 6) with a
value range, AdjustSaturation on its own HSV helpers), so results match TF's to float
rounding. TF registers no gradients for them (tf.gradients raises LookupError); the
rest of this module composes ordinary ops, as TF1.15's image_ops_impl does.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import errors
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.ops.array import array_ops
from tensorflux._src.ops.array.generator_ops import ones
from tensorflux._src.ops.image.image_ops import (convert_image_dtype, numpy_as_tensor, tf_assert,
                                                 with_dependencies)
from tensorflux._src.ops.linalg.linalg_ops import tensordot
from tensorflux._src.ops.math import math_ops
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.op_helpers import dims_str, kernel_error, with_rank, with_rank_at_least
from tensorflux._src.ops.random.random_ops import random_uniform
from tensorflux._src.ops.registry import OpDef, register

__all__ = [
    "adjust_brightness", "adjust_contrast", "adjust_gamma", "adjust_hue",
    "adjust_saturation", "grayscale_to_rgb", "hsv_to_rgb", "random_brightness",
    "random_contrast", "random_hue", "random_saturation", "rgb_to_grayscale", "rgb_to_hsv",
    "rgb_to_yiq", "rgb_to_yuv", "yiq_to_rgb", "yuv_to_rgb",
]

_HSV_TYPES = (_dtypes.float16, _dtypes.bfloat16, _dtypes.float32, _dtypes.float64)
_ADJUST_TYPES = (_dtypes.float16, _dtypes.float32)


def _in_float(fn):
    """Runs `fn` on float32 (or float64) values and casts back: TF's half kernels compute
    in float. Jitted, so constant images fold in one compiled call, not op by op."""
    @jax.jit
    def lower(images, *args):
        dtype = images.dtype
        compute = jnp.float64 if dtype == jnp.float64 else jnp.float32
        return fn(images.astype(compute), *args).astype(dtype)
    return lower


def _channels(images):
    return images[..., 0], images[..., 1], images[..., 2]


def _rgb_shape(op):
    shape = with_rank_at_least(op.inputs[0].shape, 1)
    if shape.ndims is not None and shape[-1].value not in (None, 3):
        raise ValueError(f"Dimension must be 3 but is {shape[-1].value}")
    return shape


def _check_rgb(images, op_type, error=kernel_error):
    if images.ndim < 1 or images.shape[-1] != 3:
        have = images.shape[-1] if images.ndim else 0
        raise error(f"{op_type}: input must have 3 channels but input only has {have} "
                    f"channels.")


# -- RGBToHSV / HSVToRGB (colorspace_op.h) ---------------------------------------------------
def _rgb_to_hsv(images):
    r, g, b = _channels(images)
    v = jnp.maximum(jnp.maximum(r, g), b)
    spread = v - jnp.minimum(jnp.minimum(r, g), b)
    s = jnp.where(v > 0, spread / jnp.where(v > 0, v, 1), 0)
    norm = (1 / jnp.where(spread > 0, spread, 1)) * (1 / 6)
    h = jnp.where(r == v, norm * (g - b),
                  jnp.where(g == v, norm * (b - r) + 2 / 6, norm * (r - g) + 4 / 6))
    h = jnp.where(spread > 0, h, 0)
    h = jnp.where(h < 0, h + 1, h)
    return h, s, v


def _rgb_to_hsv_lower(images):
    _check_rgb(images, "RGBToHSV", _failed_precondition)
    return jnp.stack(_rgb_to_hsv(images), axis=-1).astype(images.dtype)


def _hsv_to_rgb_lower(images):
    _check_rgb(images, "HSVToRGB", _failed_precondition)
    h, s, v = _channels(images)
    dh = h * 6
    dr = jnp.clip(jnp.abs(dh - 3) - 1, 0, 1)
    dg = jnp.clip(2 - jnp.abs(dh - 2), 0, 1)
    db = jnp.clip(2 - jnp.abs(dh - 4), 0, 1)
    one_s = 1 - s
    return jnp.stack([(one_s + s * dr) * v, (one_s + s * dg) * v, (one_s + s * db) * v],
                     axis=-1).astype(images.dtype)


def _failed_precondition(message):
    return errors.FailedPreconditionError(None, None, message)


for _name, _lower in (("RGBToHSV", _in_float(_rgb_to_hsv_lower)),
                      ("HSVToRGB", _in_float(_hsv_to_rgb_lower))):
    register(OpDef(_name, inputs=("images: T",), outputs=("output: T",),
                   attrs={"T": _HSV_TYPES}, type_defaults={"T": _dtypes.float32},
                   shape=_rgb_shape, lower=_lower, not_differentiable=_name == "HSVToRGB"))


def rgb_to_hsv(images, name=None):
    """RGB in [0, 1] (last dimension 3) to HSV, each component in [0, 1]."""
    return apply_op("RGBToHSV", name=name, images=numpy_as_tensor(images, "images"))


def hsv_to_rgb(images, name=None):
    """HSV in [0, 1] (last dimension 3) to RGB."""
    return apply_op("HSVToRGB", name=name, images=numpy_as_tensor(images, "images"))


# -- AdjustContrastv2, AdjustSaturation, AdjustHue -------------------------------------------
def _adjust_shape(op):
    shape = with_rank_at_least(op.inputs[0].shape, 3)
    with_rank(op.inputs[1].shape, 0)
    return shape


def _check_adjust(op_type, images, factor, factor_name, rgb):
    if images.ndim < 3:
        raise kernel_error(f"{op_type}: input must be at least 3-D, got shape"
                           f"{dims_str(images.shape)}")
    if getattr(factor, "ndim", 0) != 0:
        raise kernel_error(f"{op_type}: {factor_name} must be scalar: "
                           f"{dims_str(factor.shape)}")
    if rgb and images.shape[-1] != 3:
        raise kernel_error(f"{op_type}: input must have 3 channels but instead has "
                           f"{images.shape[-1]} channels.")


def _adjust_contrast_lower(images, contrast_factor):
    _check_adjust("AdjustContrastv2", images, contrast_factor, "contrast_factor", rgb=False)
    mean = jnp.mean(images, axis=(-3, -2), keepdims=True)  # per image and channel
    return (images - mean) * contrast_factor + mean


def _adjust_saturation_lower(images, scale):
    _check_adjust("AdjustSaturation", images, scale, "scale", rgb=True)
    r, g, b = _channels(images)
    # adjust_saturation_op.cc's own rgb_to_hsv: norm = 1 / (6 * range).
    v = jnp.maximum(jnp.maximum(r, g), b)
    spread = v - jnp.minimum(jnp.minimum(r, g), b)
    s = jnp.where(v > 0, spread / jnp.where(v > 0, v, 1), 0)
    norm = 1 / (6 * jnp.where(spread > 0, spread, 1))
    h = jnp.where(r == v, norm * (g - b),
                  jnp.where(g == v, norm * (b - r) + 2 / 6, norm * (r - g) + 4 / 6))
    h = jnp.where(spread > 0, h, 0)
    h = jnp.where(h < 0, h + 1, h)
    s = jnp.clip(s * scale, 0, 1)
    # ... and its sector-wise hsv_to_rgb.
    c = s * v
    m = v - c
    dh = h * 6
    sector = jnp.floor(dh)
    x = c * (1 - jnp.abs(jnp.mod(dh, 2) - 1))
    zero = jnp.zeros_like(c)
    rgb = [jnp.select([sector == k for k in range(6)], choices, zero)
           for choices in ([c, x, zero, zero, x, c], [x, c, c, x, zero, zero],
                           [zero, zero, x, c, c, x])]
    return jnp.stack([ch + m for ch in rgb], axis=-1)


def _adjust_hue_lower(images, delta):
    _check_adjust("AdjustHue", images, delta, "delta", rgb=True)
    r, g, b = _channels(images)
    # adjust_hue_op.cc: the hue is a sector 0..5 of the colour hexagon plus the position
    # of the middle channel between the smallest and the largest, in [0, 6).
    sector = jnp.where(r < g, jnp.where(b < r, 1, jnp.where(b > g, 3, 2)),
                       jnp.where(b < g, 0, jnp.where(b > r, 4, 5)))
    k = [sector == i for i in range(5)]
    v_max = jnp.select(k, [r, g, g, b, b], r)
    v_mid = jnp.select(k, [g, r, b, g, r], b)
    v_min = jnp.select(k, [b, b, r, r, g], g)
    spread = v_max - v_min
    ratio = (v_mid - v_min) / jnp.where(spread > 0, spread, 1)
    h = jnp.where(spread > 0, sector + jnp.where(sector % 2 == 0, ratio, 1 - ratio), 0)
    h = jnp.mod(h + delta * 6, 6)
    h = jnp.where(h >= 6, h - 6, h)  # a tiny negative hue + 6 can round up to 6
    sector = jnp.floor(h)
    ratio = h - sector
    ratio = jnp.where(sector % 2 == 0, ratio, 1 - ratio)
    mid = v_min + ratio * spread
    k = [sector == i for i in range(5)]
    return jnp.stack([jnp.select(k, [v_max, mid, v_min, v_min, mid], v_max),
                      jnp.select(k, [mid, v_max, v_max, mid, v_min], v_min),
                      jnp.select(k, [v_min, v_min, mid, v_max, v_max], mid)], axis=-1)


for _name, _factor, _lower in (("AdjustContrastv2", "contrast_factor", _adjust_contrast_lower),
                               ("AdjustSaturation", "scale", _adjust_saturation_lower),
                               ("AdjustHue", "delta", _adjust_hue_lower)):
    register(OpDef(_name, inputs=("images: T", f"{_factor}: float32"), outputs=("output: T",),
                   attrs={"T": _ADJUST_TYPES}, type_defaults={"T": _dtypes.float32},
                   shape=_adjust_shape, lower=_in_float(_lower)))


# -- public compositions -----------------------------------------------------------------------
def _as_float(image):
    """TF's adjust_* convention: float16/float32 images are used as they are, any other
    dtype goes through convert_image_dtype to float32 (and back afterwards)."""
    if image.dtype.base_dtype in (_dtypes.float16, _dtypes.float32):
        return image
    return convert_image_dtype(image, _dtypes.float32)


def rgb_to_grayscale(images, name=None):
    """Luma 0.2989 R + 0.5870 G + 0.1140 B; keeps the dtype, last dimension 1."""
    with _graph.name_scope(name, "rgb_to_grayscale", [images]) as scope:
        images = convert_to_tensor(images, name="images")
        orig_dtype = images.dtype.base_dtype
        flt = convert_image_dtype(images, _dtypes.float32)
        weights = convert_to_tensor([0.2989, 0.5870, 0.1140], dtype=_dtypes.float32)
        gray = array_ops.expand_dims(tensordot(flt, weights, [[-1], [-1]]), -1)
        return convert_image_dtype(gray, orig_dtype, name=scope)


def grayscale_to_rgb(images, name=None):
    """Repeats the single channel of a grayscale image three times."""
    with _graph.name_scope(name, "grayscale_to_rgb", [images]) as scope:
        images = convert_to_tensor(images, name="images")
        shape = images.shape
        if shape.ndims is not None and shape.ndims < 2:
            raise ValueError(f"A grayscale image (shape {shape}) must be at least "
                             f"two-dimensional.")
        if shape.ndims is not None and shape[-1].value not in (None, 1):
            raise ValueError(f"Last dimension of a grayscale image should be size 1, got "
                             f"shape {shape}.")
        rank_1 = array_ops.expand_dims(array_ops.rank(images) - 1, 0)
        multiples = array_ops.concat([ones(rank_1, dtype=_dtypes.int32),
                                      array_ops.expand_dims(3, 0)], 0)
        rgb = array_ops.tile(images, multiples, name=scope)
        if shape.ndims is not None:
            rgb.set_shape(shape[:-1].concatenate([3]))
        return rgb


def adjust_brightness(image, delta):
    """image + delta, in float (see `_as_float`), saturating back to the image's dtype."""
    with _graph.name_scope(None, "adjust_brightness", [image, delta]) as scope:
        image = convert_to_tensor(image, name="image")
        flt = _as_float(image)
        adjusted = math_ops.add(flt, math_ops.cast(delta, flt.dtype), name=scope)
        return convert_image_dtype(adjusted, image.dtype, saturate=True)


def adjust_contrast(images, contrast_factor):
    """(x - mean) * contrast_factor + mean, the mean per image and channel."""
    with _graph.name_scope(None, "adjust_contrast", [images, contrast_factor]) as scope:
        images = convert_to_tensor(images, name="images")
        adjusted = apply_op("AdjustContrastv2", name=scope, images=_as_float(images),
                            contrast_factor=contrast_factor)
        return convert_image_dtype(adjusted, images.dtype, saturate=True)


def adjust_saturation(image, saturation_factor, name=None):
    """Multiplies the HSV saturation by `saturation_factor` (clipped to [0, 1])."""
    with _graph.name_scope(name, "adjust_saturation", [image]):
        image = convert_to_tensor(image, name="image")
        adjusted = apply_op("AdjustSaturation", images=_as_float(image),
                            scale=saturation_factor)
        return convert_image_dtype(adjusted, image.dtype)


def adjust_hue(image, delta, name=None):
    """Rotates the hue by `delta` (in [-1, 1], a full turn being 1)."""
    with _graph.name_scope(name, "adjust_hue", [image]):
        image = convert_to_tensor(image, name="image")
        adjusted = apply_op("AdjustHue", images=_as_float(image), delta=delta)
        return convert_image_dtype(adjusted, image.dtype)


def adjust_gamma(image, gamma=1, gain=1):
    """gain * image ** gamma, in float, saturating back to the image's dtype."""
    with _graph.name_scope(None, "adjust_gamma", [image, gamma, gain]):
        image = convert_to_tensor(image, name="image")
        flt = _as_float(image)
        checks = tf_assert(gamma >= 0, f"Gamma should be a non-negative real number, got "
                                       f"gamma={gamma}.")
        gamma = with_dependencies(checks, convert_to_tensor(gamma, dtype=flt.dtype,
                                                            name="gamma"))
        adjusted = convert_to_tensor(gain, dtype=flt.dtype, name="gain") * flt ** gamma
        return convert_image_dtype(adjusted, image.dtype, saturate=True)


def _uniform(low, high, seed):
    return random_uniform([], low, high, seed=seed)


def random_brightness(image, max_delta, seed=None):
    """adjust_brightness by a delta drawn from [-max_delta, max_delta)."""
    if max_delta < 0:
        raise ValueError(f"max_delta must be non-negative, got {max_delta}.")
    return adjust_brightness(image, _uniform(-max_delta, max_delta, seed))


def _check_range(lower, upper):
    if upper <= lower:
        raise ValueError(f"upper must be > lower, got lower={lower}, upper={upper}.")
    if lower < 0:
        raise ValueError(f"lower must be non-negative, got {lower}.")


def random_contrast(image, lower, upper, seed=None):
    """adjust_contrast by a factor drawn from [lower, upper)."""
    _check_range(lower, upper)
    return adjust_contrast(image, _uniform(lower, upper, seed))


def random_saturation(image, lower, upper, seed=None):
    """adjust_saturation by a factor drawn from [lower, upper)."""
    _check_range(lower, upper)
    return adjust_saturation(image, _uniform(lower, upper, seed))


def random_hue(image, max_delta, seed=None):
    """adjust_hue by a delta drawn from [-max_delta, max_delta); max_delta <= 0.5."""
    if max_delta > 0.5:
        raise ValueError(f"max_delta must be <= 0.5, got {max_delta}.")
    if max_delta < 0:
        raise ValueError(f"max_delta must be non-negative, got {max_delta}.")
    return adjust_hue(image, _uniform(-max_delta, max_delta, seed))



# -- YIQ and YUV: one 3x3 matrix on the last axis (TF1.15's constants) -----------------------
_RGB_TO_YIQ = [[0.299, 0.59590059, 0.2115], [0.587, -0.27455667, -0.52273617],
               [0.114, -0.32134392, 0.31119955]]
_YIQ_TO_RGB = [[1, 1, 1], [0.95598634, -0.27201283, -1.10674021],
               [0.6208248, -0.64720424, 1.70423049]]
_RGB_TO_YUV = [[0.299, -0.14714119, 0.61497538], [0.587, -0.28886916, -0.51496512],
               [0.114, 0.43601035, -0.10001026]]
_YUV_TO_RGB = [[1, 1, 1], [0, -0.394642334, 2.03206185], [1.13988303, -0.58062185, 0]]


def _convert_colors(images, matrix):
    images = convert_to_tensor(images, name="images")
    kernel = convert_to_tensor(matrix, dtype=images.dtype, name="kernel")
    ndims = images.shape.ndims
    return tensordot(images, kernel, axes=[[ndims - 1], [0]])


def rgb_to_yiq(images):
    """RGB in [0, 1] (last dimension 3) to YIQ."""
    return _convert_colors(images, _RGB_TO_YIQ)


def yiq_to_rgb(images):
    """YIQ (Y in [0, 1], I in [-0.5957, 0.5957], Q in [-0.5226, 0.5226]) to RGB."""
    return _convert_colors(images, _YIQ_TO_RGB)


def rgb_to_yuv(images):
    """RGB in [0, 1] (last dimension 3) to YUV."""
    return _convert_colors(images, _RGB_TO_YUV)


def yuv_to_rgb(images):
    """YUV (Y in [0, 1], U and V in [-0.5, 0.5]) to RGB."""
    return _convert_colors(images, _YUV_TO_RGB)
