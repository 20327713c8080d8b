"""More codecs: EncodeJpegVariableQuality (a run-time JPEG quality), DecodeWebP and
DecodeJxl host records, and `tf.image.adjust_jpeg_quality` / `random_jpeg_quality` /
`decode_webp` / `decode_jxl`.

- EncodeJpegVariableQuality is EncodeJpeg with TF's default flags and the quality given
  as a tensor (TF1.15's adjust_jpeg_quality encodes through it, then DecodeJpeg).
- DecodeWebP (Pillow's libwebp) follows TF's kernel: channels 0, 3 or 4 and equal to the
  file's (3 without alpha, 4 with); the result is 4-D [frames, height, width, channels],
  one frame for a still image; an animation is composited RGBA frames.
- DecodeJxl decodes JPEG XL with imagecodecs' libjxl (imported on first use): [height,
  width, channels] uint8, channels 0 or the file's (1 gray, 3 RGB, 4 RGBA).
Messages are the TF kernels', prefixed with the op type.
"""

from __future__ import annotations

import io

import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import errors
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.operation import Tensor
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.framework.tensor_shape import TensorShape
from tensorflux._src.ops.image.image_codec import _pil, _scalar_bytes, decode_jpeg
from tensorflux._src.ops.image.image_ops import convert_image_dtype
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.op_helpers import dims_str, kernel_error, with_rank
from tensorflux._src.ops.random.random_ops import random_uniform
from tensorflux._src.ops.registry import OpDef, register

__all__ = ["adjust_jpeg_quality", "decode_jxl", "decode_webp", "random_jpeg_quality"]


# -- EncodeJpegVariableQuality ---------------------------------------------------------------
def _encode_variable_quality_kernel(images, quality):
    op = "EncodeJpegVariableQuality"
    if images.ndim != 3:
        raise kernel_error(f"{op}: image must be 3-dimensional{dims_str(images.shape)}")
    if np.ndim(quality) != 0:
        raise kernel_error(f"{op}: quality must be scalar: {dims_str(np.shape(quality))}")
    quality = int(quality)
    if not 0 <= quality <= 100:
        raise kernel_error(f"{op}: quality must be in [0,100], got {quality}")
    if images.shape[2] not in (1, 3):
        raise kernel_error(f"{op}: image must have 1 or 3 channels, got "
                           f"{dims_str(images.shape)}")
    if images.shape[0] == 0 or images.shape[1] == 0:
        raise kernel_error(f"{op}: cannot encode an empty image of shape "
                           f"{dims_str(images.shape)}")
    Image, _ = _pil()
    pixels = images[..., 0] if images.shape[2] == 1 else images
    buffer = io.BytesIO()
    # TF's default CompressFlags: 4:2:0 chroma, baseline, 300 dpi.
    Image.fromarray(np.ascontiguousarray(pixels)).save(buffer, "JPEG", quality=quality,
                                                       subsampling=2, dpi=(300, 300))
    return np.array(buffer.getvalue(), object)


def _encode_shape(op):
    with_rank(op.inputs[0].shape, 3)
    return TensorShape([])


register(OpDef("EncodeJpegVariableQuality", inputs=("images: uint8", "quality: int32"),
               outputs=("contents: string",), shape=_encode_shape,
               host=_encode_variable_quality_kernel, not_differentiable=True))


def adjust_jpeg_quality(image, jpeg_quality, name=None):
    """Re-encodes an RGB (or gray) 3-D image as JPEG at `jpeg_quality` (an int or int32
    tensor in [0, 100]) and decodes it again, in the image's dtype."""
    with _graph.name_scope(name, "adjust_jpeg_quality", [image]):
        image = convert_to_tensor(image, name="image")
        orig_dtype = image.dtype
        image = convert_image_dtype(image, _dtypes.uint8)
        if not isinstance(jpeg_quality, Tensor):
            jpeg_quality = convert_to_tensor(jpeg_quality, dtype=_dtypes.int32)
        image = apply_op("EncodeJpegVariableQuality", images=image, quality=jpeg_quality)
        image = decode_jpeg(image)
        return convert_image_dtype(image, orig_dtype)


def random_jpeg_quality(image, min_jpeg_quality, max_jpeg_quality, seed=None):
    """adjust_jpeg_quality with a quality drawn uniformly from [min, max) every run."""
    if (min_jpeg_quality < 0 or max_jpeg_quality < 0 or min_jpeg_quality > 100
            or max_jpeg_quality > 100):
        raise ValueError("jpeg encoding range must be between 0 and 100.")
    if min_jpeg_quality >= max_jpeg_quality:
        raise ValueError("`min_jpeg_quality` must be less than `max_jpeg_quality`.")
    jpeg_quality = random_uniform([], min_jpeg_quality, max_jpeg_quality, seed=seed,
                                  dtype=_dtypes.int32)
    return adjust_jpeg_quality(image, jpeg_quality)


# -- DecodeWebP and DecodeJxl ----------------------------------------------------------------
def _check_channels(op, channels):
    if channels not in (0, 1, 3, 4):
        raise kernel_error(f"{op}: `channels` must be 0, 1, 3 or 4 but got {channels}")


def _decode_webp_kernel(contents, channels):
    op = "DecodeWebP"
    _check_channels(op, channels)
    if channels == 1:
        raise kernel_error(f"{op}: WebP only supports 3 or 4 channels")
    data = _scalar_bytes(contents, op)
    if not data:
        raise kernel_error(f"{op}: Input is empty.")
    if not (data[:4] == b"RIFF" and data[8:12] == b"WEBP" and len(data) > 12):
        raise kernel_error(f"{op}: Unknown image file format. One of JPEG, PNG, GIF, BMP, "
                           f"WebP required.")
    Image, ImageSequence = _pil()
    try:
        image = Image.open(io.BytesIO(data))
        animated = getattr(image, "n_frames", 1) > 1
        has_alpha = image.mode in ("RGBA", "LA", "PA") or animated
        file_channels = 4 if has_alpha else 3
        if channels not in (0, file_channels):
            raise kernel_error(f"{op}: Number of channels requested does not match input")
        mode = "RGBA" if file_channels == 4 else "RGB"
        frames = [np.asarray(frame.convert(mode)) for frame in ImageSequence.Iterator(image)]
    except (OSError, SyntaxError, ValueError, EOFError):  # Pillow's decoding failures
        raise kernel_error(f"{op}: Failed to decode WebP header.") from None
    return np.stack(frames).astype(np.uint8)


def _check_dtype(op, dtype):
    if dtype != _dtypes.uint8:
        raise kernel_error(f"{op}: only uint8 dtype is supported, got {dtype.name}")


def _decode_jxl_kernel(contents, channels, dtype):
    op = "DecodeJxl"
    _check_channels(op, channels)
    _check_dtype(op, dtype)
    data = _scalar_bytes(contents, op)
    if not data:
        raise kernel_error(f"{op}: Input is empty.")
    try:
        import imagecodecs  # libjxl; heavy, so loaded only when a JPEG XL is decoded
    except ImportError:
        raise errors.UnimplementedError(
            None, None, f"{op}: decoding JPEG XL needs the imagecodecs package, an optional "
                        f"dependency: pip install 'tensorflux[images]' (or imagecodecs)") from None
    try:
        pixels = np.asarray(imagecodecs.jpegxl_decode(data))
    except Exception:  # noqa: BLE001 - imagecodecs raises its own JpegxlError and others
        raise kernel_error(f"{op}: Failed to decode JXL header") from None
    if pixels.ndim == 4:  # an animation: TF's kernel decodes the first frame
        pixels = pixels[0]
    if pixels.ndim == 2:
        pixels = pixels[..., None]
    if pixels.dtype != np.uint8:  # 16-bit or float files, scaled to 8 bits
        top = np.iinfo(pixels.dtype).max if pixels.dtype.kind in "ui" else 1.0
        pixels = np.clip(np.round(pixels.astype(np.float64) * (255.0 / top)), 0, 255)
    if channels not in (0, pixels.shape[-1]):
        raise kernel_error(f"{op}: Number of channels requested does not match input")
    return pixels.astype(np.uint8)


def _webp_shape(op):
    with_rank(op.inputs[0].shape, 0)
    return TensorShape([None, None, None, op.attrs.get("channels", 0) or None])


def _jxl_shape(op):
    with_rank(op.inputs[0].shape, 0)
    return TensorShape([None, None, op.attrs.get("channels", 0) or None])


register(OpDef("DecodeWebP", inputs=("contents: string",), outputs=("image: dtype",),
               attrs={"channels": 0, "dtype": (_dtypes.uint8,)},
               type_defaults={"dtype": _dtypes.uint8}, shape=_webp_shape,
               host=_decode_webp_kernel, not_differentiable=True))
register(OpDef("DecodeJxl", inputs=("contents: string",), outputs=("image: dtype",),
               attrs={"channels": 0, "dtype": (_dtypes.uint8,)},
               type_defaults={"dtype": _dtypes.uint8}, shape=_jxl_shape,
               host=_decode_jxl_kernel, not_differentiable=True))


def decode_webp(contents, channels=0, dtype=_dtypes.uint8, name=None):
    """A WebP as a [num_frames, height, width, channels] uint8 tensor (one frame for a
    still image; animations are RGBA)."""
    return apply_op("DecodeWebP", name=name, contents=contents, channels=channels,
                    dtype=_dtypes.as_dtype(dtype))


def decode_jxl(contents, channels=0, dtype=_dtypes.uint8, name=None):
    """A JPEG XL image as a [height, width, channels] uint8 tensor."""
    return apply_op("DecodeJxl", name=name, contents=contents, channels=channels,
                    dtype=_dtypes.as_dtype(dtype))
