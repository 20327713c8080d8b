"""Crops that resample: TF1's CropAndResize (with its two gradient records) and
ExtractGlimpse, and `tf.image.crop_and_resize` / `tf.image.extract_glimpse`.

Both are compiled records: the crop sizes are static when a run compiles, so the
lowering computes every sample position with jax.numpy and gathers.

CropAndResize follows TF's CPU kernel (crop_and_resize_op.cc), in float32:
- a box [y1, x1, y2, x2] of image `box_ind[i]` samples rows
  y1 * (H - 1) + y * (y2 - y1) * (H - 1) / (crop_h - 1), or the box centre
  0.5 * (y1 + y2) * (H - 1) when crop_h == 1 (columns alike); y1 > y2 flips the crop;
- a sample outside [0, H - 1] x [0, W - 1] is `extrapolation_value`;
- "bilinear" interpolates between floor and ceil, along x first, then y; "nearest" takes
  roundf of both coordinates (halves away from zero);
- a box index outside [0, batch) fails the run with TF's OutOfRangeError.
The gradient records are the adjoints of that sampling (JAX's VJP): CropAndResizeGradImage
scatters the incoming gradient back onto the pixels each sample read, and
CropAndResizeGradBoxes differentiates the bilinear sample positions with respect to the box
corners (TF uses the bilinear formula for "nearest" crops as well, as here).

ExtractGlimpse is TF1.15's V1 kernel (eigen_attention.h, version 1): offsets are the
glimpse centres, (y, x); `normalized` scales them by the image size, `centered` moves the
origin to the image centre (then [-1, 1] spans the image), and half the glimpse is always
subtracted; the top-left corner is truncated toward zero. Pixels outside the image are
noise: "uniform" (between the image's min and max), "gaussian" (each channel's mean and
standard deviation, clipped to its range) or "zero". As in TF's kernel, a non-empty
`noise` attr wins over `uniform_noise` (`noise=""` picks uniform or gaussian from
`uniform_noise`), so the op's default noise="uniform" gives uniform noise even with
uniform_noise=False. TF declares the op stateless (its Eigen generator is unseeded and
its result may be folded), so here the noise comes from a fixed PRNG key: the same input
gives the same glimpse, and the record stays foldable.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from tensorflux._src.compiler import effects
from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import errors
from tensorflux._src.framework.tensor_shape import TensorShape
from tensorflux._src.ops.array import array_ops
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.op_helpers import (deprecated_argument_lookup, dims_str, kernel_error,
                                            static_input, with_rank)
from tensorflux._src.ops.registry import OpDef, register
from tensorflux._src.ops.shape_fns import static_shape_from_tensor

__all__ = ["crop_and_resize", "extract_glimpse"]

_d = _dtypes
_IMAGE_TYPES = (_d.uint8, _d.uint16, _d.int8, _d.int16, _d.int32, _d.int64, _d.float16,
                _d.float32, _d.float64)
_METHODS = ("bilinear", "nearest")


# -- shape helpers (TF's Merge / WithValue / SetOutputToSizedImage) --------------------------
def merge_dim(a, b):
    """TF's Merge of two dimensions (None when both are unknown)."""
    if a is not None and b is not None and a != b:
        raise ValueError(f"Dimensions must be equal, but are {a} and {b}")
    return a if a is not None else b


def with_value(dim, value):
    if dim is not None and dim != value:
        raise ValueError(f"Dimension must be {value} but is {dim}")


def sized_image_shape(op, batch, size_index, channels):
    """[batch, height, width, channels] with height and width read from the 2-element int32
    input `size_index` when it is a constant."""
    size = with_rank(op.inputs[size_index].shape, 1)
    with_value(size[0].value, 2)
    hw = static_shape_from_tensor(op.inputs[size_index])
    height, width = hw.as_list() if hw.ndims == 2 else (None, None)
    return TensorShape([batch, height, width, channels])


def _check_method(method, allowed=_METHODS):
    if method not in allowed:
        listed = ", ".join(f'"{m}"' for m in allowed)
        raise ValueError(f'Value for attr \'method\' of "{method}" is not in the list of '
                         f"allowed values: {listed}")


# -- CropAndResize: sample positions and the sampler -----------------------------------------
def _positions(lo, hi, crop, size):
    """[num_boxes, crop] float32 source coordinates along one axis (TF's float arithmetic;
    the crop == 1 centre is computed in double, as TF's 0.5 literal makes it)."""
    if crop > 1:
        # Divided in float64 and rounded: XLA turns a float32 division by a constant into
        # a multiplication by its reciprocal, which can round differently from TF.
        spread = (hi - lo) * np.float32(size - 1)
        scale = (spread.astype(jnp.float64) / (crop - 1)).astype(jnp.float32)
        steps = jnp.arange(crop, dtype=jnp.float32)
        return lo[:, None] * np.float32(size - 1) + steps[None, :] * scale[:, None]
    centre = 0.5 * (lo.astype(jnp.float64) + hi.astype(jnp.float64)) * (size - 1)
    return centre.astype(jnp.float32)[:, None]


def _round_half_away(x):
    floor = jnp.floor(x)
    return jnp.where(x - floor >= 0.5, floor + 1, floor)


def _kernel_method(op_type, method, allowed=_METHODS):
    """TF's kernel-construction check of the `method` attr (a raw op may bypass the
    wrapper's ValueError)."""
    if method not in allowed:
        names = " or ".join(f"'{m}'" for m in allowed)
        raise kernel_error(f"{op_type}: method must be {names}{method}")


def _crop_and_resize(image, boxes, box_ind, crop_h, crop_w, method, extrapolation_value):
    """The float32 crops [num_boxes, crop_h, crop_w, depth] of a float32 image."""
    _, height, width, _ = image.shape
    in_y = _positions(boxes[:, 0], boxes[:, 2], crop_h, height)  # [n, crop_h]
    in_x = _positions(boxes[:, 1], boxes[:, 3], crop_w, width)   # [n, crop_w]
    valid = (((in_y >= 0) & (in_y <= height - 1))[:, :, None]
             & ((in_x >= 0) & (in_x <= width - 1))[:, None, :])[..., None]
    # Samples outside the image are masked out below; 0 keeps their gathers in range.
    in_y = jnp.where((in_y >= 0) & (in_y <= height - 1), in_y, 0)
    in_x = jnp.where((in_x >= 0) & (in_x <= width - 1), in_x, 0)
    b = jnp.clip(box_ind, 0, image.shape[0] - 1)[:, None, None]

    def pixels(rows, cols):  # [n, crop_h, crop_w, depth]
        return image[b, rows[:, :, None], cols[:, None, :]]

    if method == "nearest":
        crops = pixels(_round_half_away(in_y).astype(jnp.int32),
                       _round_half_away(in_x).astype(jnp.int32))
    else:
        top, left = jnp.floor(in_y), jnp.floor(in_x)
        y_lerp = (in_y - top)[:, :, None, None]
        x_lerp = (in_x - left)[:, None, :, None]
        top_i, bottom_i = top.astype(jnp.int32), jnp.ceil(in_y).astype(jnp.int32)
        left_i, right_i = left.astype(jnp.int32), jnp.ceil(in_x).astype(jnp.int32)
        top_row = pixels(top_i, left_i) + (pixels(top_i, right_i) - pixels(top_i, left_i)) * x_lerp
        bottom_row = (pixels(bottom_i, left_i)
                      + (pixels(bottom_i, right_i) - pixels(bottom_i, left_i)) * x_lerp)
        crops = top_row + (bottom_row - top_row) * y_lerp
    return jnp.where(valid, crops, jnp.float32(extrapolation_value))


def _check_boxes(op_type, boxes, box_ind):
    if boxes.ndim != 2:
        raise kernel_error(f"{op_type}: boxes must be 2-D{dims_str(boxes.shape)}")
    if boxes.shape[1] != 4:
        raise kernel_error(f"{op_type}: boxes must have 4 columns")
    if box_ind.ndim != 1:
        raise kernel_error(f"{op_type}: box_index must be 1-D{dims_str(box_ind.shape)}")
    if box_ind.shape[0] != boxes.shape[0]:
        raise kernel_error(f"{op_type}: box_index has incompatible shape")


def _check_box_index(box_ind, batch):
    # TF's CPU kernels check every index before computing (RunIfBoxIndexIsValid).
    xp = np if isinstance(box_ind, np.ndarray) else jnp
    effects.check(xp.all((box_ind >= 0) & (box_ind < batch)),
                  "box_index has values outside [0, batch_size)", error=errors.OutOfRangeError)


def _check_image(op_type, image, what="input image"):
    if image.ndim != 4:
        raise kernel_error(f"{op_type}: {what} must be 4-D{dims_str(image.shape)}")
    if image.shape[1] <= 0 or image.shape[2] <= 0:
        raise kernel_error(f"{op_type}: image dimensions must be positive")


def _check_grads(op_type, grads, boxes):
    if grads.ndim != 4:
        raise kernel_error(f"{op_type}: grads image must be 4-D{dims_str(grads.shape)}")
    if grads.shape[1] <= 0 or grads.shape[2] <= 0:
        raise kernel_error(f"{op_type}: grads dimensions must be positive")
    if grads.shape[0] != boxes.shape[0]:
        raise kernel_error(f"{op_type}: boxes and grads have incompatible shape")


def _crop_size(crop_size):
    crop_size = static_input(crop_size, "CropAndResize", "crop_size")
    if crop_size.ndim != 1:
        raise kernel_error(f"CropAndResize: crop_size must be 1-D{dims_str(crop_size.shape)}")
    if crop_size.shape[0] != 2:
        raise kernel_error(f"CropAndResize: crop_size must have two elements"
                           f"{dims_str(crop_size.shape)}")
    crop_h, crop_w = (int(v) for v in crop_size)
    if crop_h <= 0 or crop_w <= 0:
        raise kernel_error("CropAndResize: crop dimensions must be positive")
    return crop_h, crop_w


def _crop_and_resize_lower(image, boxes, box_ind, crop_size, method, extrapolation_value):
    _kernel_method("CropAndResize", method)
    _check_image("CropAndResize", image)
    _check_boxes("CropAndResize", boxes, box_ind)
    crop_h, crop_w = _crop_size(crop_size)
    _check_box_index(box_ind, image.shape[0])
    return _crop_and_resize(jnp.asarray(image).astype(jnp.float32), jnp.asarray(boxes),
                            jnp.asarray(box_ind), crop_h, crop_w, method,
                            extrapolation_value)


def _grad_image_lower(grads, boxes, box_ind, image_size, T, method):
    _kernel_method("CropAndResizeGradImage", method)
    _check_grads("CropAndResizeGradImage", grads, boxes)
    _check_boxes("CropAndResizeGradImage", boxes, box_ind)
    size = static_input(image_size, "CropAndResizeGradImage", "image_size")
    if size.ndim != 1:
        raise kernel_error(f"CropAndResizeGradImage: image_size must be 1-D{dims_str(size.shape)}")
    if size.shape[0] != 4:
        raise kernel_error(f"CropAndResizeGradImage: image_size must have 4 elements"
                           f"{dims_str(size.shape)}")
    batch, height, width, depth = (int(v) for v in size)
    if height <= 0 or width <= 0:
        raise kernel_error("CropAndResizeGradImage: image dimensions must be positive")
    if grads.shape[3] != depth:
        raise kernel_error("CropAndResizeGradImage: image_size and grads are incompatible")
    _check_box_index(box_ind, batch)
    crop_h, crop_w = grads.shape[1:3]
    _, vjp = jax.vjp(lambda im: _crop_and_resize(im, jnp.asarray(boxes), jnp.asarray(box_ind),
                                                 crop_h, crop_w, method, 0.0),
                     jnp.zeros((batch, height, width, depth), jnp.float32))
    return vjp(jnp.asarray(grads, jnp.float32))[0].astype(T.as_numpy_dtype)


def _grad_boxes_lower(grads, image, boxes, box_ind, method):
    _kernel_method("CropAndResizeGradBoxes", method, ("bilinear",))
    _check_grads("CropAndResizeGradBoxes", grads, boxes)
    _check_image("CropAndResizeGradBoxes", image)
    if image.shape[3] != grads.shape[3]:
        raise kernel_error("CropAndResizeGradBoxes: image, grads depth differ")
    _check_boxes("CropAndResizeGradBoxes", boxes, box_ind)
    _check_box_index(box_ind, image.shape[0])
    crop_h, crop_w = grads.shape[1:3]
    flt = jnp.asarray(image).astype(jnp.float32)
    _, vjp = jax.vjp(lambda bx: _crop_and_resize(flt, bx, jnp.asarray(box_ind), crop_h, crop_w,
                                                 "bilinear", 0.0),
                     jnp.asarray(boxes, jnp.float32))
    return vjp(jnp.asarray(grads, jnp.float32))[0]


def _crop_and_resize_shape(op):
    image = with_rank(op.inputs[0].shape, 4)
    boxes = with_rank(op.inputs[1].shape, 2)
    box_ind = with_rank(op.inputs[2].shape, 1)
    num_boxes = merge_dim(boxes[0].value, box_ind[0].value)
    with_value(boxes[1].value, 4)
    return sized_image_shape(op, num_boxes, 3, image[3].value)


def _grad_image_shape(op):
    out = static_shape_from_tensor(op.inputs[3])
    return with_rank(out, 4)


def _crop_and_resize_grad(op, grad):
    image, boxes, box_ind = op.inputs[:3]
    if image.shape.is_fully_defined():
        image_shape = np.array(image.shape.as_list(), np.int32)
    else:
        image_shape = array_ops.shape(image)
    grad_image = None
    if image.dtype.base_dtype in (_d.float16, _d.float32, _d.float64):
        grad_image = apply_op("CropAndResizeGradImage", grads=grad, boxes=boxes,
                              box_ind=box_ind, image_size=image_shape,
                              T=image.dtype.base_dtype, method=op.get_attr("method"))
    # The box gradient comes from bilinear sampling even for "nearest" crops, as in TF.
    grad_boxes = apply_op("CropAndResizeGradBoxes", grads=grad, image=image, boxes=boxes,
                          box_ind=box_ind)
    return [grad_image, grad_boxes, None, None]


register(OpDef(
    "CropAndResize",
    inputs=("image: T", "boxes: float", "box_ind: int32", "crop_size: int32"),
    outputs=("crops: float",),
    attrs={"T": _IMAGE_TYPES, "method": "bilinear", "extrapolation_value": 0.0},
    shape=_crop_and_resize_shape, lower=_crop_and_resize_lower, grad=_crop_and_resize_grad))
register(OpDef(
    "CropAndResizeGradImage",
    inputs=("grads: float", "boxes: float", "box_ind: int32", "image_size: int32"),
    outputs=("output: T",),
    attrs={"T": (_d.float32, _d.float16, _d.float64), "method": "bilinear"},
    shape=_grad_image_shape, lower=_grad_image_lower))
register(OpDef(
    "CropAndResizeGradBoxes",
    inputs=("grads: float", "image: T", "boxes: float", "box_ind: int32"),
    outputs=("output: float",), attrs={"T": _IMAGE_TYPES, "method": "bilinear"},
    shape=lambda op: op.inputs[2].shape, lower=_grad_boxes_lower))


def crop_and_resize(image, boxes, box_ind=None, crop_size=None, method="bilinear",
                    extrapolation_value=0, name=None, box_indices=None):
    """Crops [num_boxes, crop_height, crop_width, depth] (float32) out of a 4-D `image`.

    boxes: [num_boxes, 4] normalized [y1, x1, y2, x2] (y * (height - 1) is the pixel row;
    y1 > y2 flips; coordinates outside [0, 1] sample `extrapolation_value`). box_ind (or its
    new name box_indices): the image of each box. crop_size: [crop_height, crop_width].
    """
    box_ind = deprecated_argument_lookup("box_indices", box_indices, "box_ind", box_ind)
    _check_method(method)
    return apply_op("CropAndResize", name=name, image=image, boxes=boxes, box_ind=box_ind,
                    crop_size=crop_size, method=method,
                    extrapolation_value=float(extrapolation_value))


# -- ExtractGlimpse --------------------------------------------------------------------------
def _noise_mode(uniform_noise, noise):
    if uniform_noise and noise not in ("", "uniform"):
        raise ValueError("The uniform_noise and noise should not be specified at the same "
                         "time")
    if noise == "":
        return "uniform" if uniform_noise else "gaussian"
    if noise not in ("uniform", "gaussian", "zero"):
        raise kernel_error(f"ExtractGlimpse: The noise could only be uniform, gaussian, or "
                           f"zero, got{noise}")
    return noise


def _glimpse_corner(offset, in_size, size, normalized, centered):
    """The glimpse's top-left index along one axis (TF1's V1 arithmetic, in float32)."""
    if normalized:
        offset = offset * np.float32(in_size)
    if centered:
        offset = offset / np.float32(2.0) + np.float32(in_size / 2.0)
    offset = offset - np.float32(size / 2.0)
    return jnp.trunc(offset).astype(jnp.int32)  # C's (Index) cast truncates toward zero


def _glimpse_noise(key, image, size_h, size_w, mode):
    batch, _, _, depth = image.shape
    shape = (batch, size_h, size_w, depth)
    if mode == "zero":
        return jnp.zeros(shape, jnp.float32)
    if mode == "uniform":  # the whole image's range, all channels together
        lo = jnp.min(image, axis=(1, 2, 3), keepdims=True)
        hi = jnp.max(image, axis=(1, 2, 3), keepdims=True)
        return lo + jax.random.uniform(key, shape, jnp.float32) * (hi - lo)
    mean = jnp.mean(image, axis=(1, 2), keepdims=True)  # per image and channel
    sigma = jnp.sqrt(jnp.mean(jnp.square(image - mean), axis=(1, 2), keepdims=True))
    lo = jnp.min(image, axis=(1, 2), keepdims=True)
    hi = jnp.max(image, axis=(1, 2), keepdims=True)
    sample = mean + jax.random.normal(key, shape, jnp.float32) * sigma
    return jnp.maximum(jnp.minimum(sample, hi), lo)


def _extract_glimpse_lower(input, size, offsets, centered, normalized,  # noqa: A002
                           uniform_noise, noise):
    mode = _noise_mode(uniform_noise, noise)
    if input.ndim != 4:
        raise kernel_error(f"ExtractGlimpse: input must be 4-dimensional (batch_size, height, "
                           f"width, depth){dims_str(input.shape)}")
    size = static_input(size, "ExtractGlimpse", "size")
    if size.shape != (2,):
        raise kernel_error(f"ExtractGlimpse: input must be a vector of size 2 (height, width)"
                           f"{dims_str(size.shape)}")
    if offsets.ndim != 2:
        raise kernel_error(f"ExtractGlimpse: input must be a matrix{dims_str(offsets.shape)}")
    if offsets.shape[0] != input.shape[0]:
        raise kernel_error(f"ExtractGlimpse: first dimension should be batch"
                           f"{dims_str(offsets.shape)}")
    if offsets.shape[1] != 2:
        raise kernel_error(f"ExtractGlimpse: second dimension should be of size 2 (y,x)"
                           f"{dims_str(offsets.shape)}")
    size_h, size_w = (int(v) for v in size)
    _, height, width, _ = input.shape
    image = jnp.asarray(input, jnp.float32)
    offsets = jnp.asarray(offsets, jnp.float32)
    top = _glimpse_corner(offsets[:, 0], height, size_h, normalized, centered)
    left = _glimpse_corner(offsets[:, 1], width, size_w, normalized, centered)
    rows = top[:, None] + jnp.arange(size_h)[None, :]  # [batch, size_h]
    cols = left[:, None] + jnp.arange(size_w)[None, :]
    inside = (((rows >= 0) & (rows < height))[:, :, None]
              & ((cols >= 0) & (cols < width))[:, None, :])[..., None]
    b = jnp.arange(image.shape[0])[:, None, None]
    pixels = image[b, jnp.clip(rows, 0, height - 1)[:, :, None],
                   jnp.clip(cols, 0, width - 1)[:, None, :]]
    noise = _glimpse_noise(jax.random.PRNGKey(0), image, size_h, size_w, mode)
    return jnp.where(inside, pixels, noise)


def _extract_glimpse_shape(op):
    image = with_rank(op.inputs[0].shape, 4)
    offsets = with_rank(op.inputs[2].shape, 2)
    batch = merge_dim(image[0].value, offsets[0].value)
    with_value(offsets[1].value, 2)
    if op.attrs.get("uniform_noise", True) and op.attrs.get("noise", "uniform") not in (
            "", "uniform"):
        raise ValueError("The uniform_noise and noise should not be specified at the same "
                         "time")
    return sized_image_shape(op, batch, 1, image[3].value)


register(OpDef(
    "ExtractGlimpse", inputs=("input: float", "size: int32", "offsets: float"),
    outputs=("glimpse: float",),
    attrs={"centered": True, "normalized": True, "uniform_noise": True, "noise": "uniform"},
    shape=_extract_glimpse_shape, lower=_extract_glimpse_lower))


def extract_glimpse(input, size, offsets, centered=True, normalized=True,  # noqa: A002
                    uniform_noise=True, name=None):
    """Windows of `size` = [height, width] at `offsets` ([batch, 2] glimpse centres, (y, x))
    from a 4-D float32 `input`; the part outside the image is noise (see the module doc)."""
    return apply_op("ExtractGlimpse", name=name, input=input, size=size, offsets=offsets,
                    centered=centered, normalized=normalized, uniform_noise=uniform_noise)
