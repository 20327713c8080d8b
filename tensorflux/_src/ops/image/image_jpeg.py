"""More image codec records: ExtractJpegShape and DecodeAndCropJpeg (host
records on Pillow), and is_jpeg (a composition: the first three bytes are FF D8 FF).

- extract_jpeg_shape reads [height, width, components] from the JPEG header without
  decoding the pixels (libjpeg's num_components: 1 gray, 3 YCbCr/RGB, 4 CMYK).
- decode_and_crop_jpeg decodes as decode_jpeg (image_codec.py) and keeps the window
  [y, x, height, width] of the (ratio-scaled) image; a window outside the image is TF's
  "Invalid JPEG data or crop window" error.
"""

from __future__ import annotations

import io

import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.tensor_shape import TensorShape
from tensorflux._src.ops.image.image_codec import decode_jpeg_array
from tensorflux._src.ops.math import math_ops
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.op_helpers import dims_str, kernel_error, with_rank
from tensorflux._src.ops.registry import OpDef, register
from tensorflux._src.ops.shape_fns import static_value
from tensorflux._src.ops.strings.text_ops import substr

__all__ = ["decode_and_crop_jpeg", "extract_jpeg_shape", "is_jpeg"]

_COMPONENTS = {"L": 1, "RGB": 3, "YCbCr": 3, "CMYK": 4}


def _scalar_bytes(contents, op_type):
    contents = np.asarray(contents, object)
    if contents.ndim != 0:
        raise kernel_error(f"{op_type}: contents must be scalar, got shape "
                           f"{dims_str(contents.shape)}")
    value = contents[()]
    return value.encode("utf-8") if isinstance(value, str) else bytes(value)


# -- ExtractJpegShape -------------------------------------------------------------------------
def _extract_jpeg_shape_kernel(contents, output_type):
    from PIL import Image
    data = _scalar_bytes(contents, "ExtractJpegShape")
    try:
        image = Image.open(io.BytesIO(data))  # reads the header only
        if image.format != "JPEG" or image.mode not in _COMPONENTS:
            raise ValueError("not a JPEG")
    except Exception:  # noqa: BLE001 - Pillow raises OSError, SyntaxError, ValueError...
        raise kernel_error(f"ExtractJpegShape: Invalid JPEG data, size {len(data)}") from None
    width, height = image.size
    return np.array([height, width, _COMPONENTS[image.mode]], output_type.as_numpy_dtype)


def _extract_jpeg_shape_shape(op):
    with_rank(op.inputs[0].shape, 0)
    return TensorShape([3])


register(OpDef("ExtractJpegShape", inputs=("contents: string",), outputs=("image_shape: "
                                                                          "output_type",),
               attrs={"output_type": (_dtypes.int32, _dtypes.int64)},
               type_defaults={"output_type": _dtypes.int32}, shape=_extract_jpeg_shape_shape,
               host=_extract_jpeg_shape_kernel, not_differentiable=True))


def extract_jpeg_shape(contents, output_type=_dtypes.int32, name=None):
    """[height, width, channels] of a JPEG image, from its header (no decoding)."""
    return apply_op("ExtractJpegShape", name=name, contents=contents,
                    output_type=_dtypes.as_dtype(output_type))


# -- DecodeAndCropJpeg ------------------------------------------------------------------------
def _decode_and_crop_kernel(contents, crop_window, channels, ratio):
    if channels not in (0, 1, 3):
        raise kernel_error(f"DecodeAndCropJpeg: channels must be 0, 1, or 3, got {channels}")
    if ratio not in (1, 2, 4, 8):
        raise kernel_error(f"DecodeAndCropJpeg: ratio must be 1, 2, 4, or 8, got {ratio}")
    data = _scalar_bytes(contents, "DecodeAndCropJpeg")
    window = np.asarray(crop_window)
    if window.ndim != 1:
        raise kernel_error(f"crop_window must be 1-D, got shape {dims_str(window.shape)}")
    if window.shape[0] != 4:
        raise kernel_error(f"crop_size must have four elements {dims_str(window.shape)}")
    y, x, h, w = (int(v) for v in window)
    image = decode_jpeg_array(data, channels, ratio, "DecodeAndCropJpeg")
    height, width = image.shape[:2]
    if not (w > 0 and h > 0 and x >= 0 and y >= 0 and y + h <= height and x + w <= width):
        raise kernel_error(f"DecodeAndCropJpeg: Invalid JPEG data or crop window, data size "
                           f"{len(data)}")
    return np.ascontiguousarray(image[y:y + h, x:x + w])


def _decode_and_crop_shape(op):
    with_rank(op.inputs[0].shape, 0)
    with_rank(op.inputs[1].shape, 1)
    window = static_value(op.inputs[1])
    h = w = None
    if window is not None and window.size == 4:
        h, w = int(window[2]), int(window[3])
    return TensorShape([h, w, op.attrs.get("channels", 0) or None])


register(OpDef("DecodeAndCropJpeg", inputs=("contents: string", "crop_window: int32"),
               outputs=("image: uint8",),
               attrs={"channels": 0, "ratio": 1, "fancy_upscaling": True,
                      "try_recover_truncated": False, "acceptable_fraction": 1.0,
                      "dct_method": ""},
               shape=_decode_and_crop_shape, host=_decode_and_crop_kernel,
               not_differentiable=True))


def decode_and_crop_jpeg(contents, crop_window, channels=0, ratio=1, fancy_upscaling=True,
                         try_recover_truncated=False, acceptable_fraction=1, dct_method="",
                         name=None):
    """The window crop_window = [y, x, height, width] of a JPEG, decoded as decode_jpeg
    (uint8 [height, width, channels])."""
    return apply_op("DecodeAndCropJpeg", name=name, contents=contents,
                    crop_window=crop_window, channels=channels, ratio=ratio,
                    fancy_upscaling=fancy_upscaling,
                    try_recover_truncated=try_recover_truncated,
                    acceptable_fraction=float(acceptable_fraction), dct_method=dct_method)


# -- is_jpeg ----------------------------------------------------------------------------------
def is_jpeg(contents, name=None):
    """Whether `contents` starts with a JPEG's magic bytes FF D8 FF (a bool tensor)."""
    with _graph.name_scope(name, "is_jpeg"):
        head = substr(contents, 0, 3)
        return math_ops.equal(head, b"\xff\xd8\xff", name=name)

