"""Resizing: TF1's ResizeBilinear / ResizeNearestNeighbor / ResizeBicubic / ResizeArea
records, their gradient ops, and `tf.image.resize_images` & co. as TF1.15 builds them.

The ops take 4-D [batch, height, width, channels] images and a static int32 `size`
([new_height, new_width]); bilinear, bicubic and area return float32, nearest neighbour
keeps the dtype. TF1's v1 ops default to the legacy coordinate mapping (src = dst * in /
out; see image_resize_kernels.py). Gradients follow TF's image_grad.py: the *Grad ops
(ResizeAreaGrad does not exist in TF, so ResizeArea has no gradient).
"""

from __future__ import annotations

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.framework.tensor_shape import TensorShape
from tensorflux._src.ops.array import array_ops
from tensorflux._src.ops.image import image_resize_kernels as K
from tensorflux._src.ops.image.image_ops import (as_batch, batch_with_target_checks,
                                                 image_dimensions, pad_to_bounding_box, unbatch)
from tensorflux._src.ops.math import math_ops
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.op_helpers import with_rank
from tensorflux._src.ops.registry import OpDef, register
from tensorflux._src.ops.shape_fns import static_shape_from_tensor

__all__ = [
    "ResizeMethod", "resize_area", "resize_bicubic", "resize_bilinear", "resize_image_with_pad",
    "resize_images", "resize_nearest_neighbor",
]

_d = _dtypes
_RESIZE_TYPES = (_d.int8, _d.uint8, _d.int16, _d.uint16, _d.int32, _d.int64, _d.bfloat16,
                 _d.float16, _d.float32, _d.float64)
_PIXEL_ATTRS = {"align_corners": False, "half_pixel_centers": False}


class ResizeMethod:
    """TF1's resize methods (tf.image.ResizeMethod); the TF2 names are accepted too."""
    BILINEAR = 0
    NEAREST_NEIGHBOR = 1
    BICUBIC = 2
    AREA = 3


_METHOD_NAMES = {"bilinear": 0, "nearest": 1, "bicubic": 2, "area": 3}


# -- records ----------------------------------------------------------------------------------
def _size_dims(size_tensor):
    with_rank(size_tensor.shape, 1)
    n = size_tensor.shape[0].value
    if n not in (None, 2):
        raise ValueError(f"Dimension must be 2 but is {n}")
    dims = static_shape_from_tensor(size_tensor)
    return dims.as_list() if dims.ndims == 2 else [None, None]


def _resize_shape(op):
    images = with_rank(op.inputs[0].shape, 4)
    height, width = _size_dims(op.inputs[1])
    return TensorShape([images[0], height, width, images[3]])


def _same_as_original(op):
    with_rank(op.inputs[0].shape, 4)
    return with_rank(op.inputs[1].shape, 4)


def _nearest_grad_shape(op):
    grads = with_rank(op.inputs[0].shape, 4)
    height, width = _size_dims(op.inputs[1])
    return TensorShape([grads[0], height, width, grads[3]])


def _pixel_attrs(op):
    return {k: op.get_attr(k) for k in _PIXEL_ATTRS}


def _spatial_size(tensor):
    """[height, width] of a 4-D tensor: a constant when static (TF's grad functions)."""
    hw = tensor.shape[1:3]
    if hw.ndims == 2 and hw.is_fully_defined():
        return hw.as_list()
    return array_ops.shape(tensor)[1:3]


def _float_grad(grad_op):
    def grad(op, dy):
        image = op.inputs[0]
        allowed = (_d.float32, _d.float64) if grad_op == "ResizeBicubicGrad" else (
            _d.float16, _d.bfloat16, _d.float32, _d.float64)
        if image.dtype.base_dtype not in allowed:
            return [None, None]  # TF: no gradient to integer images
        return [apply_op(grad_op, grads=dy, original_image=image, **_pixel_attrs(op)), None]
    return grad


def _nearest_grad(op, dy):
    return [apply_op("ResizeNearestNeighborGrad", grads=dy, size=_spatial_size(op.inputs[0]),
                     **_pixel_attrs(op)), None]


def _grad_of_grad(forward_op):
    """The *Grad ops are linear in `grads`: their own gradient is the forward resize."""
    def grad(op, ddx):
        size = _spatial_size(op.inputs[0])
        return [apply_op(forward_op, images=ddx, size=size, **_pixel_attrs(op)), None]
    return grad


register(OpDef("ResizeBilinear", inputs=("images: T", "size: int32"), outputs=("y: float32",),
               attrs={"T": _RESIZE_TYPES, **_PIXEL_ATTRS}, shape=_resize_shape,
               lower=K.resize_bilinear, grad=_float_grad("ResizeBilinearGrad")))
register(OpDef("ResizeNearestNeighbor", inputs=("images: T", "size: int32"),
               outputs=("y: T",), attrs={"T": _RESIZE_TYPES, **_PIXEL_ATTRS},
               shape=_resize_shape, lower=K.resize_nearest, grad=_nearest_grad))
register(OpDef("ResizeBicubic", inputs=("images: T", "size: int32"), outputs=("y: float32",),
               attrs={"T": _RESIZE_TYPES, **_PIXEL_ATTRS}, shape=_resize_shape,
               lower=K.resize_bicubic, grad=_float_grad("ResizeBicubicGrad")))
register(OpDef("ResizeArea", inputs=("images: T", "size: int32"), outputs=("y: float32",),
               attrs={"T": _RESIZE_TYPES, "align_corners": False}, shape=_resize_shape,
               lower=K.resize_area))

register(OpDef(
    "ResizeBilinearGrad", inputs=("grads: float32", "original_image: T"), outputs=("y: T",),
    attrs={"T": (_d.float32, _d.bfloat16, _d.float16, _d.float64), **_PIXEL_ATTRS},
    shape=_same_as_original, grad=_grad_of_grad("ResizeBilinear"),
    lower=K.bilinear_grad))
register(OpDef(
    "ResizeBicubicGrad", inputs=("grads: float32", "original_image: T"), outputs=("y: T",),
    attrs={"T": (_d.float32, _d.float64), **_PIXEL_ATTRS},
    shape=_same_as_original, grad=_grad_of_grad("ResizeBicubic"),
    lower=K.bicubic_grad))
register(OpDef(
    "ResizeNearestNeighborGrad", inputs=("grads: T", "size: int32"), outputs=("y: T",),
    attrs={"T": (_d.uint8, _d.int8, _d.int32, _d.float16, _d.float32, _d.float64,
                 _d.bfloat16), **_PIXEL_ATTRS},
    shape=_nearest_grad_shape, lower=K.nearest_grad,
    grad=_grad_of_grad("ResizeNearestNeighbor")))


# -- raw op wrappers (4-D only, as TF's generated functions) ---------------------------------
def resize_bilinear(images, size, align_corners=False, name=None, half_pixel_centers=False):
    """Bilinear interpolation of 4-D `images` to `size` = [new_height, new_width]; float32."""
    return apply_op("ResizeBilinear", name=name, images=images, size=size,
                    align_corners=align_corners, half_pixel_centers=half_pixel_centers)


def resize_nearest_neighbor(images, size, align_corners=False, name=None,
                            half_pixel_centers=False):
    """Nearest-neighbour resize of 4-D `images`; keeps the dtype."""
    return apply_op("ResizeNearestNeighbor", name=name, images=images, size=size,
                    align_corners=align_corners, half_pixel_centers=half_pixel_centers)


def resize_bicubic(images, size, align_corners=False, name=None, half_pixel_centers=False):
    """Bicubic (Keys) interpolation of 4-D `images`; float32."""
    return apply_op("ResizeBicubic", name=name, images=images, size=size,
                    align_corners=align_corners, half_pixel_centers=half_pixel_centers)


def resize_area(images, size, align_corners=False, name=None):
    """Area-weighted averaging of 4-D `images` (for shrinking); float32."""
    return apply_op("ResizeArea", name=name, images=images, size=size,
                    align_corners=align_corners)


# -- resize_images ----------------------------------------------------------------------------
def _method_op(method):
    method = _METHOD_NAMES.get(method, method) if isinstance(method, str) else method
    ops = {0: "ResizeBilinear", 1: "ResizeNearestNeighbor", 2: "ResizeBicubic",
           3: "ResizeArea"}
    if method not in ops:
        raise ValueError(f"Resize method is not implemented: {method!r}; expected one of "
                         f"tf.image.ResizeMethod.BILINEAR, NEAREST_NEIGHBOR, BICUBIC, AREA.")
    return ops[method]


def resize_images(images, size, method=ResizeMethod.BILINEAR, align_corners=False,
                  preserve_aspect_ratio=False, name=None):
    """TF1's tf.image.resize_images: a 3-D image or 4-D batch to `size` with `method`.

    As in TF1, an image that already has the requested size is returned unchanged (in its
    own dtype, even for methods that otherwise return float32).
    """
    op_type = _method_op(method)
    with _graph.name_scope(name, "resize", [images, size]):
        images = convert_to_tensor(images, name="images")
        if images.shape.ndims is None:
            raise ValueError("'images' contains no shape.")
        images, is_batch = as_batch(images, "images")
        _, height, width, _ = images.shape.as_list()
        try:
            size = convert_to_tensor(size, _dtypes.int32, name="size")
        except (TypeError, ValueError):
            raise ValueError(f"'size' must be a 1-D int32 Tensor, got {size!r}") from None
        if not size.shape.is_compatible_with([2]):
            raise ValueError(f"'size' must be a 1-D Tensor of 2 elements: new_height, "
                             f"new_width; got shape {size.shape}")
        if preserve_aspect_ratio:
            size = _fit_size(images, size)
        new_height, new_width = _size_dims(size)
        if None not in (new_height, new_width, height, width) and \
                (new_height, new_width) == (height, width):
            return unbatch(images, is_batch)
        attrs = {"align_corners": align_corners}
        resized = apply_op(op_type, images=images, size=size, **attrs)
        resized.set_shape([None, new_height, new_width, None])
        return unbatch(resized, is_batch)


def _fit_size(images, size):
    """The largest size within `size` that keeps the images' aspect ratio (TF's rounding)."""
    _, height, width, _ = image_dimensions(images, rank=4)
    f32 = _dtypes.float32
    height_f = math_ops.cast(height, f32)
    width_f = math_ops.cast(width, f32)
    factor = math_ops.minimum(math_ops.cast(size[0], f32) / height_f,
                              math_ops.cast(size[1], f32) / width_f)
    new = [math_ops.cast(math_ops.round(factor * d), _dtypes.int32) for d in (height_f, width_f)]
    return convert_to_tensor(array_ops.stack(new), _dtypes.int32, name="size")


def resize_image_with_pad(image, target_height, target_width,
                          method=ResizeMethod.BILINEAR, align_corners=False):
    """Resizes keeping the aspect ratio so the image fits, then zero-pads to the target."""
    with _graph.name_scope(None, "resize_image_with_pad", [image]):
        image, is_batch, height, width = batch_with_target_checks(
            image, target_height, target_width)
        f32 = _dtypes.float32
        f_height, f_width = math_ops.cast(height, f32), math_ops.cast(width, f32)
        f_target_height = math_ops.cast(target_height, f32)
        f_target_width = math_ops.cast(target_width, f32)
        ratio = math_ops.maximum(f_width / f_target_width, f_height / f_target_height)
        resized_height_f, resized_width_f = f_height / ratio, f_width / ratio
        resized_size = [math_ops.cast(math_ops.floor(v), _dtypes.int32)
                        for v in (resized_height_f, resized_width_f)]
        pads = [math_ops.maximum(0, math_ops.cast(math_ops.floor((t - r) / 2), _dtypes.int32))
                for t, r in ((f_target_height, resized_height_f),
                             (f_target_width, resized_width_f))]
        resized = resize_images(image, array_ops.stack(resized_size), method,
                                align_corners=align_corners)
        padded = pad_to_bounding_box(resized, pads[0], pads[1], target_height, target_width)
        return unbatch(padded, is_batch)

