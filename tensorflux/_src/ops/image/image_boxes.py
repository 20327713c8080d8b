"""Bounding boxes on images: TF's DrawBoundingBoxes(V2) and SampleDistortedBoundingBoxV2
records, `tf.image.draw_bounding_boxes` and `tf.image.sample_distorted_bounding_box`.

Both are compiled records.

DrawBoundingBoxes follows TF's CPU kernel (draw_bounding_box_op.cc): box [y_min, x_min,
y_max, x_max] (normalized) becomes rows y * (height - 1) and columns x * (width - 1),
truncated toward zero; its four one-pixel edges are drawn in colour `i % len(colors)`
(TF's 10-colour default table when `colors` is empty), clipped to the image, later boxes
over earlier ones. An inverted box or one entirely outside the image is not drawn. A
gray image takes each colour's first component.

SampleDistortedBoundingBoxV2 follows TF's CPU kernel (sample_distorted_bounding_box_op.cc)
with this op's own PRNG stream in place of TF's Philox: up to `max_attempts` tries, each
drawing an aspect ratio in aspect_ratio_range, a height between the ones that make the
area area_range[0] and area_range[1] of the image (lrintf rounding, the width
round(height * ratio), TF's nudges when rounding leaves the area range) and a uniform
position; the first crop covering at least `min_object_covered` of one of the boxes
(converted to whole pixels, truncated) wins, else the whole image. All attempts are drawn
and tested at once and the first success is taken, which is the same rule as TF's loop.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from tensorflux._src.compiler import effects
from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.tensor_shape import TensorShape
from tensorflux._src.ops.image.image_crop import with_value
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.op_helpers import dims_str, kernel_error, with_rank
from tensorflux._src.ops.registry import OpDef, register

__all__ = ["draw_bounding_boxes", "sample_distorted_bounding_box"]

_F32 = np.float32
_DEFAULT_COLORS = np.array([[1, 1, 0, 1], [0, 0, 1, 1], [1, 0, 0, 1], [0, 1, 0, 1],
                            [0.5, 0, 0.5, 1], [0.5, 0.5, 0, 1], [0.5, 0, 0, 1], [0, 0, 0.5, 1],
                            [0, 1, 1, 1], [1, 0, 1, 1]], _F32)


# -- DrawBoundingBoxes(V2) -------------------------------------------------------------------
def _edges(lo, hi, size):
    """Truncated pixel positions of a box's two edges along one axis, per box."""
    return (jnp.trunc(lo * _F32(size - 1)).astype(jnp.int64),
            jnp.trunc(hi * _F32(size - 1)).astype(jnp.int64))


def _draw(images, boxes, colors):
    if images.ndim != 4:
        raise kernel_error("The rank of the images should be 4")
    if boxes.ndim != 3:
        raise kernel_error("The rank of the boxes tensor should be 3")
    batch, height, width, depth = images.shape
    if batch != boxes.shape[0]:
        raise kernel_error("The batch sizes should be the same")
    if depth not in (1, 3, 4):
        raise kernel_error("Channel depth should be either 1 (GRY), 3 (RGB), or 4 (RGBA)")
    if boxes.shape[2] != 4:
        raise kernel_error(f"The size of the third dimension of the box must be 4. "
                           f"Received: {boxes.shape[2]}")
    boxes = jnp.asarray(boxes, jnp.float32)
    top, bottom = _edges(boxes[..., 0], boxes[..., 2], height)  # [batch, num_boxes]
    left, right = _edges(boxes[..., 1], boxes[..., 3], width)
    drawn = ((top <= bottom) & (left <= right) & (top < height) & (bottom >= 0)
             & (left < width) & (right >= 0))
    palette = jnp.asarray(colors, jnp.float32)[:, :depth].astype(images.dtype)
    rows = jnp.arange(height)[None, :, None]
    cols = jnp.arange(width)[None, None, :]

    def draw_box(i, canvas):  # box i of every image, over the boxes before it
        t, b, l, r = (v[:, i, None, None] for v in (top, bottom, left, right))
        in_cols = (cols >= l) & (cols <= r)
        in_rows = (rows >= t) & (rows <= b)
        on_edge = (((rows == t) | (rows == b)) & in_cols) | (in_rows & ((cols == l) | (cols == r)))
        on_edge = (on_edge & drawn[:, i, None, None])[..., None]
        return jnp.where(on_edge, palette[i % palette.shape[0]], canvas)

    return jax.lax.fori_loop(0, boxes.shape[1], draw_box, jnp.asarray(images))


def _draw_lower(images, boxes):
    return _draw(images, boxes, _DEFAULT_COLORS)


def _draw_v2_lower(images, boxes, colors):
    depth = images.shape[-1]
    if colors.ndim != 2:
        raise kernel_error(f"colors must be a 2-D matrix{dims_str(colors.shape)}")
    if colors.shape[1] < depth:
        raise kernel_error(f"colors must have equal or more channels than the image "
                           f"provided: {dims_str(colors.shape)}")
    return _draw(images, boxes, colors if colors.size else _DEFAULT_COLORS)


def _draw_shape(op):
    images = with_rank(op.inputs[0].shape, 4)
    if images[3].value not in (None, 1, 3, 4):
        raise ValueError("Channel depth should be either 1 (GRY), 3 (RGB), or 4 (RGBA)")
    boxes = with_rank(op.inputs[1].shape, 3)
    with_value(boxes[2].value, 4)
    return images


def _draw_v2_shape(op):
    shape = op.inputs[0].shape
    if shape.ndims is not None and shape.ndims < 3:
        raise ValueError(f"Shape must be at least rank 3 but is rank {shape.ndims}")
    return shape


_DRAW_TYPES = {"T": (_dtypes.float32, _dtypes.float16)}
register(OpDef("DrawBoundingBoxes", inputs=("images: T", "boxes: float"),
               outputs=("output: T",), attrs=_DRAW_TYPES, type_defaults={"T": _dtypes.float32},
               shape=_draw_shape, lower=_draw_lower))
register(OpDef("DrawBoundingBoxesV2", inputs=("images: T", "boxes: float", "colors: float"),
               outputs=("output: T",), attrs=_DRAW_TYPES, type_defaults={"T": _dtypes.float32},
               shape=_draw_v2_shape, lower=_draw_v2_lower))


def draw_bounding_boxes(images, boxes, name=None, colors=None):
    """Draws `boxes` ([batch, num_boxes, 4], normalized [y_min, x_min, y_max, x_max]) on
    float `images` [batch, height, width, depth]; colors [num_colors, >= depth] cycle over
    the boxes (TF's default table when None)."""
    if colors is None:
        return apply_op("DrawBoundingBoxes", name=name, images=images, boxes=boxes)
    return apply_op("DrawBoundingBoxesV2", name=name, images=images, boxes=boxes,
                    colors=colors)


# -- SampleDistortedBoundingBoxV2 ------------------------------------------------------------
def _lrint(x):
    return jnp.round(x).astype(jnp.int32)  # lrintf: round half to even


def _check_attrs(aspect_ratio_range, area_range, max_attempts):
    if len(aspect_ratio_range) != 2:
        raise kernel_error("Aspect ratio range field must specify 2 dimensions")
    if not (aspect_ratio_range[0] > 0 and aspect_ratio_range[1] > 0):
        raise kernel_error(f"Aspect ratio range must be non-negative: "
                           f"[{aspect_ratio_range[0]}, {aspect_ratio_range[1]}]")
    if len(area_range) != 2:
        raise kernel_error("Area range field must specify 2 dimensions")
    if not (area_range[0] > 0 and area_range[1] > 0):
        raise kernel_error(f"Area range must be non-negative: [{area_range[0]}, "
                           f"{area_range[1]}]")
    if not (area_range[0] <= 1 and area_range[1] <= 1):
        raise kernel_error(f"Area range must be less then or equal to 1.0: [{area_range[0]}, "
                           f"{area_range[1]}]")
    if max_attempts <= 0:
        raise kernel_error(f"Max attempts must be non-negative: {max_attempts}")


def _random_crops(key, width, height, area_range, aspect_ratio_range, attempts):
    """Every attempt's crop (x, y, w, h) and whether GenerateRandomCrop succeeded."""
    k_ratio, k_height, k_y, k_x = jax.random.split(key, 4)
    lo_ratio, hi_ratio = (_F32(v) for v in aspect_ratio_range)
    ratio = (jax.random.uniform(k_ratio, (attempts,), jnp.float32) * (hi_ratio - lo_ratio)
             + lo_ratio)
    min_area = _F32(area_range[0]) * width * height  # float, as TF's int * float
    max_area = _F32(area_range[1]) * width * height
    h = _lrint(jnp.sqrt(min_area / ratio))
    max_h = _lrint(jnp.sqrt(max_area / ratio))
    # The largest max_h with round(max_h * ratio) <= width (TF's double arithmetic).
    too_wide = _lrint(max_h * ratio) > width
    fitted = jnp.floor((width + 0.5 - float(_F32(1e-7))) / ratio.astype(jnp.float64))
    fitted = fitted.astype(jnp.int32)
    fitted = jnp.where(_lrint(fitted * ratio) > width, fitted - 1, fitted)
    max_h = jnp.minimum(jnp.where(too_wide, fitted, max_h), height)
    h = jnp.minimum(h, max_h)
    h = h + jax.random.randint(k_height, (attempts,), 0, jnp.maximum(max_h - h + 1, 1))
    w = _lrint(h * ratio)
    area = (w * h).astype(jnp.float32)
    h = jnp.where(area < min_area, h + 1, h)  # nudge up, then down, as TF does
    w = _lrint(h * ratio)
    area = (w * h).astype(jnp.float32)
    h = jnp.where(area > max_area, h - 1, h)
    w = _lrint(h * ratio)
    area = (w * h).astype(jnp.float32)
    ok = ((area >= min_area) & (area <= max_area) & (w <= width) & (h <= height)
          & (w > 0) & (h > 0) & (ratio > 0) & (_F32(area_range[1]) > 0)
          & (_F32(area_range[0]) <= _F32(area_range[1])))
    y = jax.random.randint(k_y, (attempts,), 0, jnp.maximum(height - h, 1))
    x = jax.random.randint(k_x, (attempts,), 0, jnp.maximum(width - w, 1))
    return x, y, w, h, ok


def _covers(x, y, w, h, rects, min_object_covered):
    """SatisfiesOverlapConstraints for every attempt: [attempts] bool."""
    bx0, by0, bx1, by1 = (rects[:, i][None, :] for i in range(4))
    ix = jnp.minimum((x + w)[:, None], bx1) - jnp.maximum(x[:, None], bx0)
    iy = jnp.minimum((y + h)[:, None], by1) - jnp.maximum(y[:, None], by0)
    # Rectangle::Intersect gives an empty rectangle when the two do not meet.
    meet = (ix >= 0) & (iy >= 0)
    inter = jnp.where(meet, ix * iy, 0).astype(jnp.float32)
    box_area = ((bx1 - bx0) * (by1 - by0)).astype(jnp.float32)
    covered = (box_area >= 1) & (inter / jnp.where(box_area >= 1, box_area, 1)
                                 >= min_object_covered)
    return ((w * h).astype(jnp.float32) >= 1) & jnp.any(covered, axis=1)


def _sample_lower(key, image_size, bounding_boxes, min_object_covered, aspect_ratio_range,
                  area_range, max_attempts, use_image_if_no_bounding_boxes):
    _check_attrs(aspect_ratio_range, area_range, max_attempts)
    if image_size.ndim != 1:
        raise kernel_error(f"image_size must be 1-dimensional{dims_str(image_size.shape)}")
    if image_size.shape[0] != 3:
        raise kernel_error(f"image_size must contain 3 elements{dims_str(image_size.shape)}")
    if bounding_boxes.ndim != 3:
        raise kernel_error(f"input boxes must be 3-dimensional [batch, num_boxes, coords]: "
                           f"{dims_str(bounding_boxes.shape)}")
    if bounding_boxes.shape[-1] != 4:
        raise kernel_error(f"bounding boxes must have shape [4] or [*, 4], got "
                           f"{dims_str(bounding_boxes.shape)}")
    if np.ndim(min_object_covered) != 0:
        raise kernel_error(f"min_object_covered must be 0-D, got shape "
                           f"{dims_str(np.shape(min_object_covered))}")
    xp = np if all(isinstance(v, np.ndarray) for v in (min_object_covered, bounding_boxes)) \
        else jnp
    effects.check(xp.asarray(min_object_covered) >= 0,
                  lambda v: f"Min object covered must be non-negative: {v}",
                  data=(min_object_covered,))
    boxes = jnp.asarray(bounding_boxes, jnp.float32).reshape(-1, 4)
    if boxes.shape[0]:
        bad = boxes[jnp.argmax(jnp.any((boxes < 0) | (boxes > 1), axis=1))]
        effects.check(jnp.all((boxes >= 0) & (boxes <= 1)),
                      lambda b: f"All bounding box coordinates must be in [0.0, 1.0]: "
                                f"{next((v for v in b if not 0 <= v <= 1), b[0])}",
                      data=(bad,))
    elif not use_image_if_no_bounding_boxes:
        raise kernel_error("No bounding boxes provided as input. One must enable "
                           "use_image_if_no_bounding_boxes if you wish to not provide any "
                           "bounding boxes.")
    height = jnp.asarray(image_size[0]).astype(jnp.int32)
    width = jnp.asarray(image_size[1]).astype(jnp.int32)
    if boxes.shape[0]:
        scale = jnp.stack([height, width, height, width]).astype(jnp.float32)
        pixels = jnp.trunc(boxes * scale).astype(jnp.int32)  # [y0, x0, y1, x1]
        rects = pixels[:, jnp.array([1, 0, 3, 2])]  # as (x0, y0, x1, y1)
    else:
        rects = jnp.stack([0, 0, width, height])[None].astype(jnp.int32)
    x, y, w, h, ok = _random_crops(key, width, height, area_range, aspect_ratio_range,
                                   max_attempts)
    ok = ok & _covers(x, y, w, h, rects, jnp.asarray(min_object_covered, jnp.float32))
    first = jnp.argmax(ok)
    found = ok[first]
    x0 = jnp.where(found, x[first], 0)
    y0 = jnp.where(found, y[first], 0)
    cw = jnp.where(found, w[first], width)
    ch = jnp.where(found, h[first], height)
    dtype = image_size.dtype
    begin = jnp.stack([y0, x0, 0]).astype(dtype)
    size = jnp.stack([ch, cw, -1]).astype(dtype)
    # float64 division, rounded once: TF divides in float32, which this reproduces, while
    # XLA would multiply by the reciprocal of a constant float32 size.
    hf, wf = height.astype(jnp.float64), width.astype(jnp.float64)
    bboxes = jnp.stack([y0 / hf, x0 / wf, (y0 + ch) / hf, (x0 + cw) / wf]).astype(
        jnp.float32).reshape(1, 1, 4)
    return begin, size, bboxes


def _sample_shape(op):
    image_size = with_rank(op.inputs[0].shape, 1)
    boxes = with_rank(op.inputs[1].shape, 3)
    with_rank(op.inputs[2].shape, 0)
    with_value(image_size[0].value, 3)
    with_value(boxes[2].value, 4)
    return [TensorShape([3]), TensorShape([3]), TensorShape([1, 1, 4])]


register(OpDef(
    "SampleDistortedBoundingBoxV2",
    inputs=("image_size: T", "bounding_boxes: float", "min_object_covered: float"),
    outputs=("begin: T", "size: T", "bboxes: float"),
    attrs={"T": (_dtypes.uint8, _dtypes.int8, _dtypes.int16, _dtypes.int32, _dtypes.int64),
           "seed": 0, "seed2": 0, "aspect_ratio_range": [0.75, 1.33],
           "area_range": [0.05, 1.0], "max_attempts": 100,
           "use_image_if_no_bounding_boxes": False},
    shape=_sample_shape, lower=_sample_lower, random=True, not_differentiable=True))


def sample_distorted_bounding_box(image_size, bounding_boxes, seed=None, seed2=None,
                                  min_object_covered=0.1, aspect_ratio_range=None,
                                  area_range=None, max_attempts=None,
                                  use_image_if_no_bounding_boxes=None, name=None):
    """(begin, size, bboxes): a random crop of an image of `image_size` ([height, width,
    channels]) that covers at least `min_object_covered` of one of `bounding_boxes`
    ([batch, N, 4], normalized [y_min, x_min, y_max, x_max]); `begin` and `size` feed
    tf.slice, `bboxes` ([1, 1, 4]) tf.image.draw_bounding_boxes."""
    attrs = {"aspect_ratio_range": aspect_ratio_range, "area_range": area_range,
             "max_attempts": max_attempts,
             "use_image_if_no_bounding_boxes": use_image_if_no_bounding_boxes}
    attrs = {k: (list(v) if isinstance(v, tuple) else v) for k, v in attrs.items()
             if v is not None}
    # TF1.15's wrapper passes the seeds as they are (no graph-level seed): (0, 0) is an
    # unseeded op, a new stream in every session.
    with _graph.name_scope(name, "sample_distorted_bounding_box"):
        return tuple(apply_op("SampleDistortedBoundingBoxV2", image_size=image_size,
                              bounding_boxes=bounding_boxes,
                              min_object_covered=min_object_covered, seed=seed or 0,
                              seed2=seed2 or 0, **attrs))
