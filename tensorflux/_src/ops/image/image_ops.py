"""`tf.image` geometry, dtype conversion and standardization, built as TF1.15 builds them.

Everything here is a composition of registry ops (Reverse, Transpose, Slice, Pad, Cast,
...), so gradients and lowering come from those records; this module only adds TF1's
argument checks, graph structure and messages. Images are 3-D [height, width, channels]
or 4-D [batch, height, width, channels]; TF's rank errors are raised at graph build.

Sibling modules: image_color.py (grayscale/HSV, adjust_* and random_* colour ops),
image_resize.py (ResizeBilinear & co, resize_images), image_codec.py (decode/encode).
Public names are collected in tensorflux/image.py.
"""

from __future__ import annotations

import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.operation import Tensor
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.ops.array import array_ops, slicing_ops
from tensorflux._src.ops.control.control_flow_ops import case, cond
from tensorflux._src.ops.debug.debug_ops import Assert
from tensorflux._src.ops.math import math_ops, reduce_ops
from tensorflux._src.ops.nn.nn_ops import relu
from tensorflux._src.ops.op_helpers import with_rank
from tensorflux._src.ops.random.random_ops import random_uniform
from tensorflux._src.ops.shape_fns import static_value

__all__ = [
    "central_crop", "convert_image_dtype", "crop_to_bounding_box", "flip_left_right",
    "flip_up_down", "pad_to_bounding_box", "per_image_standardization",
    "random_flip_left_right", "random_flip_up_down", "resize_image_with_crop_or_pad",
    "rot90", "total_variation", "transpose_image",
]


# -- shared checks (TF's _CheckAtLeast3DImage, _ImageDimensions, _assert) --------------------
def check_at_least_3d(image, arg="image"):
    """TF's static image checks: rank >= 3 and no zero-sized inner dimension. (TF adds
    run-time asserts for unknown dims; shapes are static when a run compiles, so an empty
    image here simply gives an empty result.)"""
    shape = image.shape
    if shape.ndims is not None and shape.ndims < 3:
        raise ValueError(f"'{arg}' (shape {shape}) must be at least three-dimensional.")
    if shape.ndims is not None and any(d.value == 0 for d in shape[-3:].dims):
        raise ValueError(f"inner 3 dims of '{arg}.shape' must be > 0: {shape}")
    return image


def is_tensor(x):
    return isinstance(x, Tensor)


def numpy_as_tensor(value, name):
    """A NumPy array as a tensor of its own dtype. apply_op converts Python values with a
    type attr's default (EncodePng's uint8, RGBToHSV's float32); as in TF, that default
    is for Python lists and must not narrow an array that already has a dtype."""
    if isinstance(value, (np.ndarray, np.generic)):
        return convert_to_tensor(value, name=name)
    return value


def tf_assert(cond, message):
    """TF's polymorphic _assert: a Python condition is checked now (ValueError), a tensor
    one becomes an Assert op to depend on."""
    if is_tensor(cond):
        return [Assert(cond, [message])]
    if not cond:
        raise ValueError(message)
    return []


def with_dependencies(deps, tensor):
    if not deps:
        return tensor
    with _graph.control_dependencies(deps):
        return array_ops.identity(tensor)


def image_dimensions(image, rank):
    """[dims] of a rank-`rank` image: Python ints where static, scalar tensors elsewhere."""
    shape = image.shape
    if shape.is_fully_defined():
        return shape.as_list()
    static = with_rank(shape, rank).as_list()
    dynamic = array_ops.unstack(array_ops.shape(image), rank)
    return [s if s is not None else d for s, d in zip(static, dynamic)]


def by_rank(image, fn3, fn4):
    """fn3() for a 3-D image, fn4() for a 4-D batch; a cond on the rank when it is unknown
    (the predicate is static once the run compiles, so only one branch is traced)."""
    ndims = image.shape.ndims
    if ndims is None:
        return cond(math_ops.equal(array_ops.rank(image), 3), fn3, fn4)
    if ndims == 3:
        return fn3()
    if ndims == 4:
        return fn4()
    raise ValueError(f"'image' (shape {image.shape}) must have either 3 or 4 dimensions.")


def as_batch(image, what="image"):
    """(4-D image, was it a batch?) as TF's crop/pad/resize helpers: a 3-D or unknown-rank
    image gets a batch dimension of 1, removed again by `unbatch`."""
    ndims = image.shape.ndims
    if ndims == 3:
        return array_ops.expand_dims(image, 0), False
    if ndims is None:
        image = array_ops.expand_dims(image, 0)
        image.set_shape([None] * 4)
        return image, False
    if ndims != 4:
        raise ValueError(f"'{what}' (shape {image.shape}) must have either 3 or 4 "
                         f"dimensions.")
    return image, True


def unbatch(image, is_batch):
    return image if is_batch else array_ops.squeeze(image, axis=[0])


def _keep_shape(image, result):
    # TF's fix_image_flip_shape: a flip keeps the shape (at least 3 unknown dims).
    result.set_shape(image.shape if image.shape.ndims is not None else [None] * 3)
    return result


# -- flips, transposes, rotations ------------------------------------------------------------
def _flip(image, axis, scope_name):
    with _graph.name_scope(None, scope_name, [image]):
        image = check_at_least_3d(convert_to_tensor(image, name="image"))
        return by_rank(image,
                       lambda: _keep_shape(image, array_ops.reverse(image, [axis])),
                       lambda: array_ops.reverse(image, [axis + 1]))


def flip_left_right(image):
    """Reverses the width dimension of a 3-D image or 4-D batch."""
    return _flip(image, 1, "flip_left_right")


def flip_up_down(image):
    """Reverses the height dimension of a 3-D image or 4-D batch."""
    return _flip(image, 0, "flip_up_down")


def _random_flip(image, axis, seed, scope_name):
    with _graph.name_scope(None, scope_name, [image]) as scope:
        image = check_at_least_3d(convert_to_tensor(image, name="image"))

        def rank3():  # one coin for the image
            mirror = math_ops.less(random_uniform([], 0, 1.0, seed=seed), 0.5)
            result = cond(mirror, lambda: array_ops.reverse(image, [axis]), lambda: image,
                          name=scope)
            return _keep_shape(image, result)

        def rank4():  # one coin per image of the batch, mixed in arithmetically as TF does
            batch = array_ops.shape(image)[0]
            coins = random_uniform(array_ops.stack([batch]), 0, 1.0, seed=seed)
            flips = math_ops.cast(math_ops.round(
                array_ops.reshape(coins, array_ops.stack([batch, 1, 1, 1]))), image.dtype)
            flipped = array_ops.reverse(image, [axis + 1])
            return flips * flipped + (1 - flips) * image

        return by_rank(image, rank3, rank4)


def random_flip_left_right(image, seed=None):
    """Flips the width dimension with probability 1/2 (each image of a batch on its own)."""
    return _random_flip(image, 1, seed, "random_flip_left_right")


def random_flip_up_down(image, seed=None):
    """Flips the height dimension with probability 1/2 (each image of a batch on its own)."""
    return _random_flip(image, 0, seed, "random_flip_up_down")


def transpose_image(image, name=None):
    """Swaps height and width: [w, h, c] (or [n, w, h, c] for a batch)."""
    with _graph.name_scope(name, "transpose", [image]):
        image = check_at_least_3d(convert_to_tensor(image, name="image"))
        return by_rank(image, lambda: array_ops.transpose(image, [1, 0, 2], name=name),
                       lambda: array_ops.transpose(image, [0, 2, 1, 3], name=name))


def _rotations(image, h_axis):
    """The four counter-clockwise rotations of `image` whose height axis is `h_axis`."""
    w_axis = h_axis + 1
    perm = list(range(h_axis + 3))  # [h, w, c], after the batch dimension if any
    perm[h_axis], perm[w_axis] = w_axis, h_axis
    return [lambda: image,
            lambda: array_ops.transpose(array_ops.reverse(image, [w_axis]), perm),
            lambda: array_ops.reverse(image, [h_axis, w_axis]),
            lambda: array_ops.reverse(array_ops.transpose(image, perm), [w_axis])]


def rot90(image, k=1, name=None):
    """Rotates counter-clockwise by k * 90 degrees. A constant k picks the rotation when
    the graph is built; a run-time k uses tf.case as TF does (whose branches must then
    have one shape: square images)."""
    with _graph.name_scope(name, "rot90", [image, k]) as scope:
        image = check_at_least_3d(convert_to_tensor(image, name="image"))
        k = convert_to_tensor(k, dtype=_dtypes.int32, name="k")
        k.shape.assert_has_rank(0)
        known = static_value(k)

        def rotate(h_axis):
            rotations = _rotations(image, h_axis)
            if known is not None:
                return rotations[int(known) % 4]()
            k4 = math_ops.floormod(k, 4)
            return case([(math_ops.equal(k4, i), rotations[i]) for i in (1, 2, 3)],
                        default=rotations[0], exclusive=True, name=scope)

        return by_rank(image, lambda: rotate(0), lambda: rotate(1))


# -- crops and pads --------------------------------------------------------------------------
def central_crop(image, central_fraction):
    """The central `central_fraction` (in (0, 1]) of each spatial dimension."""
    with _graph.name_scope(None, "central_crop", [image]):
        image = convert_to_tensor(image, name="image")
        if central_fraction <= 0.0 or central_fraction > 1.0:
            raise ValueError(f"central_fraction must be within (0, 1], got "
                             f"{central_fraction}")
        if central_fraction == 1.0:
            return image
        check_at_least_3d(image)
        rank = image.shape.ndims
        if rank not in (3, 4):
            raise ValueError(f"`image` should either be a Tensor with rank = 3 or rank = 4. "
                             f"Had rank = {rank}.")
        offset = rank - 3  # the batch dimension, if any
        starts, sizes = [], []
        for axis in (offset, offset + 1):
            static = image.shape[axis].value
            if static is not None:  # TF computes the start in Python when it can
                size_f = float(static)
                start = int((size_f - size_f * central_fraction) / 2)
                starts.append(start), sizes.append(static - 2 * start)
            else:
                size = array_ops.shape(image)[axis]
                size_f = math_ops.cast(size, _dtypes.float64)
                start = math_ops.cast((size_f - size_f * central_fraction) / 2, _dtypes.int32)
                starts.append(start), sizes.append(size - start * 2)
        begin = array_ops.stack([0] * offset + starts + [0])
        size = array_ops.stack([-1] * offset + sizes + [-1])
        out = slicing_ops.slice(image, begin, size)
        static_hw = [s if isinstance(s, int) else None for s in sizes]
        out.set_shape(image.shape[:offset].concatenate(static_hw).concatenate(image.shape[-1:]))
        return out


def crop_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    """image[offset_height:offset_height + target_height, offset_width:... ] (per batch)."""
    with _graph.name_scope(None, "crop_to_bounding_box", [image]):
        image, is_batch = as_batch(convert_to_tensor(image, name="image"))
        check_at_least_3d(image)
        batch, height, width, depth = image_dimensions(image, rank=4)
        checks = (tf_assert(offset_width >= 0, "offset_width must be >= 0.")
                  + tf_assert(offset_height >= 0, "offset_height must be >= 0.")
                  + tf_assert(target_width > 0, "target_width must be > 0.")
                  + tf_assert(target_height > 0, "target_height must be > 0.")
                  + tf_assert(width >= target_width + offset_width,
                              "width must be >= target + offset.")
                  + tf_assert(height >= target_height + offset_height,
                              "height must be >= target + offset."))
        image = with_dependencies(checks, image)
        cropped = slicing_ops.slice(
            image, array_ops.stack([0, offset_height, offset_width, 0]),
            array_ops.stack([-1, target_height, target_width, -1]))
        cropped.set_shape([None if is_tensor(d) else d
                           for d in (batch, target_height, target_width, depth)])
        return unbatch(cropped, is_batch)


def pad_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    """Zero-pads to [target_height, target_width], the image at (offset_height, offset_width)."""
    with _graph.name_scope(None, "pad_to_bounding_box", [image]):
        image, is_batch = as_batch(convert_to_tensor(image, name="image"))
        check_at_least_3d(image)
        batch, height, width, depth = image_dimensions(image, rank=4)
        after_width = target_width - offset_width - width
        after_height = target_height - offset_height - height
        checks = (tf_assert(offset_height >= 0, "offset_height must be >= 0")
                  + tf_assert(offset_width >= 0, "offset_width must be >= 0")
                  + tf_assert(after_width >= 0, "width must be <= target - offset")
                  + tf_assert(after_height >= 0, "height must be <= target - offset"))
        image = with_dependencies(checks, image)
        paddings = array_ops.reshape(array_ops.stack(
            [0, 0, offset_height, after_height, offset_width, after_width, 0, 0]), [4, 2])
        padded = array_ops.pad(image, paddings)
        padded.set_shape([None if is_tensor(d) else d
                          for d in (batch, target_height, target_width, depth)])
        return unbatch(padded, is_batch)


def _max(x, y):
    return math_ops.maximum(x, y) if is_tensor(x) or is_tensor(y) else max(x, y)


def _min(x, y):
    return math_ops.minimum(x, y) if is_tensor(x) or is_tensor(y) else min(x, y)


def batch_with_target_checks(image, target_height, target_width):
    """(NHWC image with run-time checks that the targets are positive, whether the input
    was a batch, height, width): the start of TF's crop-or-pad style functions."""
    image, is_batch = as_batch(convert_to_tensor(image, name="image"))
    check_at_least_3d(image)
    checks = (tf_assert(target_width > 0, "target_width must be > 0.")
              + tf_assert(target_height > 0, "target_height must be > 0."))
    image = with_dependencies(checks, image)
    _, height, width, _ = image_dimensions(image, rank=4)
    return image, is_batch, height, width


def resize_image_with_crop_or_pad(image, target_height, target_width):
    """Centrally crops and/or zero-pads to [target_height, target_width]."""
    with _graph.name_scope(None, "resize_image_with_crop_or_pad", [image]):
        image, is_batch, height, width = batch_with_target_checks(
            image, target_height, target_width)
        # Floor division as TF's Python code: -d // 2 is the crop, d // 2 the pad offset.
        width_diff = target_width - width
        height_diff = target_height - height
        cropped = crop_to_bounding_box(image, _max(-height_diff // 2, 0),
                                       _max(-width_diff // 2, 0),
                                       _min(target_height, height), _min(target_width, width))
        resized = pad_to_bounding_box(cropped, _max(height_diff // 2, 0),
                                      _max(width_diff // 2, 0), target_height, target_width)
        return unbatch(resized, is_batch)


# -- dtype conversion and standardization ----------------------------------------------------
def convert_image_dtype(image, dtype, saturate=False, name=None):
    """TF's image scaling: floats in [0, 1), integers over their full positive range.

    int -> int shifts by the ratio of the ranges (max + 1), int -> float divides by the
    input's max, float -> int multiplies by max + 0.5 then casts (truncating), float ->
    float only casts. `saturate` clamps before casts that could overflow.
    """
    image = convert_to_tensor(image, name="image")
    dtype = _dtypes.as_dtype(dtype).base_dtype
    if not dtype.is_floating and not dtype.is_integer:
        raise AttributeError(f"dtype must be either floating point or integer, got "
                             f"{dtype.name}")
    source = image.dtype.base_dtype
    if not source.is_floating and not source.is_integer:
        raise AttributeError(f"convert_image_dtype: the image must have a floating point "
                             f"or integer dtype, got {source.name}")
    if dtype == source:
        return array_ops.identity(image, name=name)
    cast = math_ops.saturate_cast if saturate else math_ops.cast
    with _graph.name_scope(name, "convert_image", [image]) as scope:
        if source.is_integer and dtype.is_integer:
            scale_in, scale_out = source.max, dtype.max
            if scale_in > scale_out:  # scale down first, so in.max lands below out.max + 1
                scaled = math_ops.floordiv(image, (scale_in + 1) // (scale_out + 1))
                return cast(scaled, dtype, name=scope)
            return math_ops.multiply(cast(image, dtype), (scale_out + 1) // (scale_in + 1),
                                     name=scope)
        if source.is_floating and dtype.is_floating:
            return math_ops.cast(image, dtype, name=scope)
        if source.is_integer:
            return math_ops.multiply(math_ops.cast(image, dtype), 1.0 / source.max,
                                     name=scope)
        # + 0.5 so that values just below 1.0 are not truncated one step too low.
        scaled = math_ops.multiply(image, dtype.max + 0.5)
        return cast(scaled, dtype, name=scope)


def per_image_standardization(image):
    """(x - mean) / max(stddev, 1 / sqrt(num_pixels)) per image, as float32; the floor on
    the stddev keeps uniform images finite."""
    with _graph.name_scope(None, "per_image_standardization", [image]) as scope:
        image = check_at_least_3d(convert_to_tensor(image, name="image"))
        num_pixels = reduce_ops.reduce_prod(array_ops.shape(image)[-3:])
        image = math_ops.cast(image, _dtypes.float32)
        axes = [-1, -2, -3]
        mean = reduce_ops.reduce_mean(image, axis=axes, keepdims=True)
        variance = (reduce_ops.reduce_mean(math_ops.square(image), axis=axes, keepdims=True)
                    - math_ops.square(mean))
        stddev = math_ops.sqrt(relu(variance))  # E[x^2] - E[x]^2 can round below 0
        min_stddev = math_ops.rsqrt(math_ops.cast(num_pixels, _dtypes.float32))
        scale = math_ops.maximum(stddev, min_stddev)
        return math_ops.div(math_ops.subtract(image, mean), scale, name=scope)


def total_variation(images, name=None):
    """Sum of absolute differences of neighbouring pixels: a scalar for a 3-D image, one
    value per image for a 4-D batch."""
    with _graph.name_scope(name, "total_variation"):
        images = convert_to_tensor(images, name="images")
        ndims = images.shape.ndims
        if ndims == 3:
            dy = images[1:, :, :] - images[:-1, :, :]
            dx = images[:, 1:, :] - images[:, :-1, :]
            axis = None
        elif ndims == 4:
            dy = images[:, 1:, :, :] - images[:, :-1, :, :]
            dx = images[:, :, 1:, :] - images[:, :, :-1, :]
            axis = [1, 2, 3]
        else:
            raise ValueError(f"'images' (shape {images.shape}) must be either 3 or "
                             f"4-dimensional.")
        return (reduce_ops.reduce_sum(math_ops.abs(dy), axis=axis)
                + reduce_ops.reduce_sum(math_ops.abs(dx), axis=axis))
