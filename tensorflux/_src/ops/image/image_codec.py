"""Image codecs: DecodePng / DecodeJpeg / DecodeGif / DecodeBmp / DecodeImage and
EncodePng / EncodeJpeg, host records on scalar tf.string tensors.

Decoding and encoding run on the host with Pillow (imported on first use), following
TF1.15's kernels where Pillow allows:
- PNG: `channels` 0 keeps the file's (a palette becomes RGB, or RGBA with tRNS), 1 and 3
  convert gray <-> colour with libpng's rgb_to_gray weights (0.299, 0.587, fixed point),
  2 and 4 add an opaque alpha or drop it. dtype uint8 keeps the high byte of 16-bit
  samples, uint16 widens 8-bit samples by 257. 16-bit colour files are read by
  image_png.py (Pillow would reduce them to 8 bits).
- JPEG: libjpeg-turbo through Pillow, with its default (ISLOW) DCT where TF defaults to
  IFAST, so pixels may differ from TF's by a level or two; `ratio` uses libjpeg's DCT
  scaling, `channels=1` its grayscale output (the Y channel). fancy_upscaling,
  try_recover_truncated, acceptable_fraction and dct_method are accepted and ignored.
- EncodeJpeg's density_unit "cm" is written as the equivalent dots per inch.
Messages are the TF kernels', prefixed with the op type.
"""

from __future__ import annotations

import io

import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.tensor_shape import TensorShape, unknown_shape
from tensorflux._src.ops.image import image_png
from tensorflux._src.ops.image.image_ops import numpy_as_tensor
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.op_helpers import dims_str, kernel_error, with_rank
from tensorflux._src.ops.registry import OpDef, register

__all__ = ["decode_bmp", "decode_gif", "decode_image", "decode_jpeg", "decode_png",
           "encode_jpeg", "encode_png"]

_JPEG, _PNG, _GIF, _BMP = b"\xff\xd8\xff", b"\x89PN", b"GIF", b"BM"


def _pil():
    from PIL import Image, ImageSequence
    return Image, ImageSequence


def _scalar_bytes(contents, op_type, name="contents"):
    if contents.ndim != 0:
        raise kernel_error(f"{op_type}: {name} must be scalar, got shape "
                           f"{dims_str(contents.shape)}")
    value = contents[()]
    return value.encode("utf-8") if isinstance(value, str) else bytes(value)


def _open(data, op_type, what):
    Image, _ = _pil()
    try:
        image = Image.open(io.BytesIO(data))
        image.load()
        return image
    except Exception:  # noqa: BLE001 - Pillow raises OSError, SyntaxError, ValueError...
        raise kernel_error(f"{op_type}: Invalid {what} data, size {len(data)}") from None


def _rgb_to_gray(samples):
    """libpng's png_set_rgb_to_gray(1, 0.299, 0.587): 15-bit fixed-point weights, truncated."""
    r, g, b = (samples[..., i].astype(np.int64) for i in range(3))
    return ((9797 * r + 19234 * g + 3737 * b) >> 15).astype(samples.dtype)


def _png_samples(data):
    """(samples (h, w, c) at the file's depth, bit depth, tRNS colour or None)."""
    header = image_png.read_header(data)
    if header is None:
        raise kernel_error(f"DecodePng: Invalid PNG data, size {len(data)}")
    if header.bit_depth == 16 and header.color_type != 3:
        try:
            samples, trns = image_png.read_16bit(data, header)
        except image_png.PngError:
            raise kernel_error(f"DecodePng: Invalid PNG data, size {len(data)}") from None
        return samples, 16, trns
    image = _open(data, "DecodePng", "PNG")
    if image.mode in ("P", "PA"):
        transparent = "transparency" in image.info or image.mode == "PA"
        image = image.convert("RGBA" if transparent else "RGB")
    elif image.mode == "1":
        image = image.convert("L")
    samples = np.asarray(image)
    samples = samples[..., None] if samples.ndim == 2 else samples
    # A gray or RGB file's tRNS colour (fully transparent where it matches), if any.
    trns = image.info.get("transparency") if image.mode in ("L", "RGB") else None
    return samples, 8, None if trns is None else np.atleast_1d(np.asarray(trns, np.uint8))


def decode_png_array(data, channels, sixteen_bits):
    samples, depth, trns = _png_samples(data)
    have = samples.shape[-1]
    want = channels or have
    color = samples[..., :3] if have >= 3 else samples[..., :1]
    alpha = samples[..., -1:] if have in (2, 4) else None
    if want < 3 and color.shape[-1] == 3:
        color = _rgb_to_gray(color)[..., None]
    elif want >= 3 and color.shape[-1] == 1:
        color = np.repeat(color, 3, axis=-1)
    if want % 2 == 0:  # 2 or 4 channels: keep the alpha, or make one
        if alpha is None:
            top = (1 << depth) - 1
            alpha = np.full(color.shape[:-1] + (1,), top, samples.dtype)
            if trns is not None and len(trns) == samples.shape[-1]:
                alpha[np.all(samples == trns, axis=-1)] = 0
        color = np.concatenate([color, alpha], axis=-1)
    if depth == 16 and not sixteen_bits:
        return (color >> 8).astype(np.uint8)
    if depth == 8 and sixteen_bits:
        return color.astype(np.uint16) * 257
    return color.astype(np.uint16 if sixteen_bits else np.uint8)


def decode_jpeg_array(data, channels, ratio, op_type="DecodeJpeg"):
    Image, _ = _pil()
    try:
        image = Image.open(io.BytesIO(data))
        if image.format != "JPEG":
            raise ValueError("not a JPEG")
        width, height = image.size
        # draft() makes libjpeg decode at 1/ratio scale (and to gray, which yields the Y
        # channel); Pillow picks the scale from the requested size's ratio.
        size = None if ratio == 1 else (max(1, width // ratio), max(1, height // ratio))
        image.draft("L" if channels == 1 else image.mode, size)
        image.load()
    except Exception:  # noqa: BLE001 - Pillow raises OSError, SyntaxError, ValueError...
        raise kernel_error(f"{op_type}: Invalid JPEG data or crop window, data size "
                           f"{len(data)}") from None
    if channels == 1 or (channels == 0 and image.mode in ("L", "1")):
        image = image.convert("L")
    else:
        image = image.convert("RGB")
    samples = np.asarray(image)
    return samples[..., None] if samples.ndim == 2 else samples


def decode_gif_array(data, op_type="DecodeGif"):
    image = _open(data, op_type, "GIF")
    _, ImageSequence = _pil()
    return np.stack([np.asarray(frame.convert("RGB"))
                     for frame in ImageSequence.Iterator(image)])


def decode_bmp_array(data, channels, op_type="DecodeBmp"):
    image = _open(data, op_type, "BMP")
    image = image.convert({"1": "L", "P": "RGB"}.get(image.mode, image.mode))
    samples = np.asarray(image)
    samples = samples[..., None] if samples.ndim == 2 else samples
    if channels and channels != samples.shape[-1]:
        raise kernel_error(f"{op_type}: channels attribute {channels} does not match bits "
                           f"per pixel from file {samples.shape[-1] * 8}")
    return samples


def _check_channels(op_type, channels, allowed):
    if channels not in allowed:
        listed = ", ".join(str(c) for c in allowed[:-1]) + f", or {allowed[-1]}"
        raise kernel_error(f"{op_type}: channels must be {listed}, got {channels}")


# -- decode records ---------------------------------------------------------------------------
def _decoded_shape(op):
    with_rank(op.inputs[0].shape, 0)
    channels = op.attrs.get("channels", 0)
    return TensorShape([None, None, channels or None])


def _decode_png_kernel(contents, channels, dtype):
    _check_channels("DecodePng", channels, (0, 1, 3, 4))
    return decode_png_array(_scalar_bytes(contents, "DecodePng"), channels,
                            dtype == _dtypes.uint16)


def _decode_jpeg_kernel(contents, channels, ratio):
    _check_channels("DecodeJpeg", channels, (0, 1, 3))
    if ratio not in (1, 2, 4, 8):
        raise kernel_error(f"DecodeJpeg: ratio must be 1, 2, 4, or 8, got {ratio}")
    return decode_jpeg_array(_scalar_bytes(contents, "DecodeJpeg"), channels, ratio)


def _decode_bmp_kernel(contents, channels):
    _check_channels("DecodeBmp", channels, (0, 1, 3, 4))
    return decode_bmp_array(_scalar_bytes(contents, "DecodeBmp"), channels)


_CONTENTS = ("contents: string",)
register(OpDef("DecodePng", inputs=_CONTENTS, outputs=("image: dtype",),
               attrs={"channels": 0, "dtype": (_dtypes.uint8, _dtypes.uint16)},
               type_defaults={"dtype": _dtypes.uint8}, shape=_decoded_shape,
               host=_decode_png_kernel, not_differentiable=True))
register(OpDef("DecodeJpeg", inputs=_CONTENTS, outputs=("image: uint8",),
               attrs={"channels": 0, "ratio": 1, "fancy_upscaling": True,
                      "try_recover_truncated": False, "acceptable_fraction": 1.0,
                      "dct_method": ""},
               shape=_decoded_shape, host=_decode_jpeg_kernel, not_differentiable=True))
register(OpDef("DecodeBmp", inputs=_CONTENTS, outputs=("image: uint8",),
               attrs={"channels": 0}, shape=_decoded_shape, host=_decode_bmp_kernel,
               not_differentiable=True))
def _gif_shape(op):
    with_rank(op.inputs[0].shape, 0)
    return TensorShape([None, None, None, 3])  # [frames, height, width, RGB]


register(OpDef("DecodeGif", inputs=_CONTENTS, outputs=("image: uint8",), shape=_gif_shape,
               host=lambda contents: decode_gif_array(_scalar_bytes(contents, "DecodeGif")),
               not_differentiable=True))


# -- DecodeImage: sniff the format, then convert_image_dtype's scaling in NumPy --------------
def _convert_np(samples, dtype):
    """convert_image_dtype for uint8/uint16 samples, computed as its graph would be."""
    target = np.dtype(dtype.as_numpy_dtype)
    source_max = np.iinfo(samples.dtype).max
    if target == samples.dtype:
        return samples
    if dtype.is_floating:
        return samples.astype(target) * target.type(1.0 / source_max)
    target_max = np.iinfo(target).max
    if source_max > target_max:
        return (samples // ((source_max + 1) // (target_max + 1))).astype(target)
    return samples.astype(target) * target.type((target_max + 1) // (source_max + 1))


def _decode_image_kernel(contents, channels, dtype, expand_animations):
    data = _scalar_bytes(contents, "DecodeImage")
    head = data[:3]
    if head == _JPEG:
        if channels not in (0, 1, 3):
            raise kernel_error("DecodeImage: Channels must be in (None, 0, 1, 3) when "
                               "decoding JPEG images")
        samples = decode_jpeg_array(data, channels, 1, "DecodeImage")
    elif head == _PNG:
        samples = decode_png_array(data, channels, dtype != _dtypes.uint8)
    elif head == _GIF:
        if channels not in (0, 3):
            raise kernel_error("DecodeImage: Channels must be in (None, 0, 3) when decoding "
                               "GIF images")
        samples = decode_gif_array(data, "DecodeImage")
        samples = samples if expand_animations else samples[0]
    elif data[:2] == _BMP:
        if channels == 1:
            raise kernel_error("DecodeImage: Channels must be in (None, 0, 3) when decoding "
                               "BMP images")
        samples = decode_bmp_array(data, channels, "DecodeImage")
    else:
        raise kernel_error("DecodeImage: Unable to decode bytes as JPEG, PNG, GIF, or BMP")
    return _convert_np(samples, dtype)


def _decode_image_shape(op):
    with_rank(op.inputs[0].shape, 0)
    if op.attrs.get("expand_animations", True):
        return unknown_shape()  # 4-D for a GIF, 3-D otherwise
    return TensorShape([None, None, op.attrs.get("channels", 0) or None])


register(OpDef("DecodeImage", inputs=_CONTENTS, outputs=("image: dtype",),
               attrs={"channels": 0, "dtype": _dtypes.FLOATS + _dtypes.INTS,
                      "expand_animations": True},
               type_defaults={"dtype": _dtypes.uint8}, shape=_decode_image_shape,
               host=_decode_image_kernel, not_differentiable=True))


# -- encode records ---------------------------------------------------------------------------
def _check_image(op_type, image, channels):
    if image.ndim != 3:
        raise kernel_error(f"{op_type}: image must be 3-dimensional, got shape "
                           f"{dims_str(image.shape)}")
    if image.shape[2] not in channels:
        raise kernel_error(f"{op_type}: image must have {' or '.join(map(str, channels))} "
                           f"channels, got {image.shape[2]}")
    if image.shape[0] == 0 or image.shape[1] == 0:
        raise kernel_error(f"{op_type}: cannot encode an empty image of shape "
                           f"{dims_str(image.shape)}")


def _encode_png_kernel(image, compression):
    if not -1 <= compression <= 9:
        raise kernel_error(f"EncodePng: compression should be in [-1,9], got {compression}")
    _check_image("EncodePng", image, (1, 2, 3, 4))
    if image.dtype == np.uint16:  # Pillow writes 16-bit PNGs only for one channel
        return np.array(image_png.write(image, compression), object)
    Image, _ = _pil()
    pixels = image[..., 0] if image.shape[2] == 1 else image
    buffer = io.BytesIO()
    Image.fromarray(np.ascontiguousarray(pixels)).save(
        buffer, "PNG", compress_level=6 if compression == -1 else compression)
    return np.array(buffer.getvalue(), object)


def _encode_jpeg_kernel(image, format, quality, progressive,  # noqa: A002 - TF's attr name
                        optimize_size, chroma_downsampling, density_unit, x_density,
                        y_density, xmp_metadata):
    wanted = {"": (1, 3), "grayscale": (1,), "rgb": (3,)}
    if format not in wanted:
        raise kernel_error(f"EncodeJpeg: format must be '', grayscale or rgb, got {format!r}")
    if not 0 <= quality <= 100:
        raise kernel_error(f"EncodeJpeg: quality must be in [0,100], got {quality}")
    if density_unit not in ("in", "cm"):
        raise kernel_error(f"EncodeJpeg: density_unit must be 'in' or 'cm', got "
                           f"{density_unit!r}")
    _check_image("EncodeJpeg", image, wanted[format])
    Image, _ = _pil()
    per_inch = 2.54 if density_unit == "cm" else 1.0
    options = {"quality": quality, "progressive": progressive, "optimize": optimize_size,
               "subsampling": 2 if chroma_downsampling else 0,
               "dpi": (x_density * per_inch, y_density * per_inch)}
    if xmp_metadata:
        options["xmp"] = xmp_metadata.encode("utf-8")
    pixels = image[..., 0] if image.shape[2] == 1 else image
    buffer = io.BytesIO()
    Image.fromarray(np.ascontiguousarray(pixels)).save(buffer, "JPEG", **options)
    return np.array(buffer.getvalue(), object)


def _encoded_shape(op):
    with_rank(op.inputs[0].shape, 3)
    return TensorShape([])


register(OpDef("EncodePng", inputs=("image: T",), outputs=("contents: string",),
               attrs={"T": (_dtypes.uint8, _dtypes.uint16), "compression": -1},
               type_defaults={"T": _dtypes.uint8}, shape=_encoded_shape,
               host=_encode_png_kernel, not_differentiable=True))
register(OpDef("EncodeJpeg", inputs=("image: uint8",), outputs=("contents: string",),
               attrs={"format": "", "quality": 95, "progressive": False,
                      "optimize_size": False, "chroma_downsampling": True,
                      "density_unit": "in", "x_density": 300, "y_density": 300,
                      "xmp_metadata": ""},
               shape=_encoded_shape, host=_encode_jpeg_kernel, not_differentiable=True))


# -- public functions (TF1.15's generated wrappers and decode_image) -------------------------
def decode_png(contents, channels=0, dtype=_dtypes.uint8, name=None):
    """A PNG as a [height, width, channels] uint8 or uint16 tensor."""
    return apply_op("DecodePng", name=name, contents=contents, channels=channels,
                    dtype=_dtypes.as_dtype(dtype))


def decode_jpeg(contents, channels=0, ratio=1, fancy_upscaling=True,
                try_recover_truncated=False, acceptable_fraction=1, dct_method="",
                name=None):
    """A JPEG as a [height, width, channels] uint8 tensor (downscaled by `ratio`)."""
    return apply_op("DecodeJpeg", name=name, contents=contents, channels=channels,
                    ratio=ratio, fancy_upscaling=fancy_upscaling,
                    try_recover_truncated=try_recover_truncated,
                    acceptable_fraction=float(acceptable_fraction), dct_method=dct_method)


def decode_gif(contents, name=None):
    """The frames of a GIF as a [num_frames, height, width, 3] uint8 tensor."""
    return apply_op("DecodeGif", name=name, contents=contents)


def decode_bmp(contents, channels=0, name=None):
    """A BMP as a [height, width, channels] uint8 tensor."""
    return apply_op("DecodeBmp", name=name, contents=contents, channels=channels)


def decode_image(contents, channels=None, dtype=_dtypes.uint8, name=None,
                 expand_animations=True):
    """Decodes a BMP, GIF, JPEG or PNG (found from its first bytes) and converts it to
    `dtype` as convert_image_dtype does. GIFs are 4-D [frames, h, w, 3] unless
    `expand_animations` is False (then only the first frame, 3-D)."""
    if channels not in (None, 0, 1, 3, 4):
        raise ValueError(f"channels must be in (None, 0, 1, 3, 4), got {channels!r}")
    with _graph.name_scope(name, "decode_image"):
        return apply_op("DecodeImage", contents=contents, channels=channels or 0,
                        dtype=_dtypes.as_dtype(dtype), expand_animations=expand_animations)


def encode_png(image, compression=-1, name=None):
    """A 3-D uint8 or uint16 image with 1 to 4 channels as PNG bytes (scalar string)."""
    return apply_op("EncodePng", name=name, image=numpy_as_tensor(image, "image"),
                    compression=compression)


def encode_jpeg(image, format="", quality=95, progressive=False,  # noqa: A002
                optimize_size=False, chroma_downsampling=True, density_unit="in",
                x_density=300, y_density=300, xmp_metadata="", name=None):
    """A 3-D uint8 image with 1 or 3 channels as JPEG bytes (scalar string)."""
    return apply_op("EncodeJpeg", name=name, image=image, format=format, quality=quality,
                    progressive=progressive, optimize_size=optimize_size,
                    chroma_downsampling=chroma_downsampling, density_unit=density_unit,
                    x_density=x_density, y_density=y_density, xmp_metadata=xmp_metadata)
