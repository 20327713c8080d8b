"""The PNG cases Pillow cannot do: 16-bit colour images, read and written exactly.

Pillow keeps 16 bits only for grayscale ("I;16") and reduces 16-bit RGB(A) to 8 bits,
while TF's DecodePng(dtype=uint16) and EncodePng(uint16) keep all 16. This module
reads and writes 16-bit PNGs (any colour type without a palette) with zlib and NumPy;
everything else goes through Pillow (image_codec.py).

Format (PNG spec, ISO/IEC 15948): signature, chunks (length, type, data, CRC-32); IHDR
holds width, height, bit depth, colour type, interlace; IDAT chunks hold one zlib
stream of scanlines, each a filter-type byte then the filtered bytes of the row.
"""

from __future__ import annotations

import struct
import zlib
from typing import NamedTuple

import numpy as np

SIGNATURE = b"\x89PNG\r\n\x1a\n"
CHANNELS = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}  # colour type -> samples per pixel
# Adam7 interlacing: (x0, y0, dx, dy) of the seven passes.
_ADAM7 = ((0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4),
          (1, 0, 2, 2), (0, 1, 1, 2))


class Header(NamedTuple):
    width: int
    height: int
    bit_depth: int
    color_type: int
    interlace: int


class PngError(ValueError):
    pass


def read_header(data: bytes) -> Header | None:
    """IHDR's fields, or None when `data` does not start like a PNG."""
    if len(data) < 33 or data[:8] != SIGNATURE or data[12:16] != b"IHDR":
        return None
    return Header(*struct.unpack(">IIBB2xB", data[16:29]))


def _chunks(data: bytes):
    pos = 8
    while pos + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        crc = data[pos + 8 + length:pos + 12 + length]
        if len(body) != length or len(crc) != 4 or \
                struct.unpack(">I", crc)[0] != zlib.crc32(kind + body) & 0xFFFFFFFF:
            raise PngError("truncated or corrupt chunk")
        yield kind, body
        if kind == b"IEND":
            return
        pos += 12 + length
    raise PngError("missing IEND chunk")


def _paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    return np.where((pa <= pb) & (pa <= pc), a, np.where(pb <= pc, b, c))


def _unfilter(raw, pos, width, height, bpp):
    """Undoes the per-row filters of a width x height image at raw[pos:]; returns the
    (height, width * bpp) bytes and the position after them."""
    stride = width * bpp
    out = np.zeros((height, stride), np.uint8)
    prior = np.zeros(stride, np.int32)
    for y in range(height):
        if pos + 1 + stride > len(raw):
            raise PngError("image data too short")
        kind = raw[pos]
        line = np.frombuffer(raw, np.uint8, stride, pos + 1).astype(np.int32)
        pos += 1 + stride
        if kind == 0:
            row = line
        elif kind == 1:  # Sub: a running sum along each byte lane of the pixels
            row = np.cumsum(line.reshape(width, bpp), axis=0).reshape(-1) & 0xFF
        elif kind == 2:  # Up
            row = (line + prior) & 0xFF
        elif kind in (3, 4):  # Average, Paeth: each pixel needs the one before it
            row = np.zeros(stride, np.int32)
            left = np.zeros(bpp, np.int32)
            up_left = np.zeros(bpp, np.int32)
            for x in range(0, stride, bpp):
                up = prior[x:x + bpp]
                pred = (left + up) >> 1 if kind == 3 else _paeth(left, up, up_left)
                left = (line[x:x + bpp] + pred) & 0xFF
                row[x:x + bpp] = left
                up_left = up
        else:
            raise PngError(f"unknown filter type {kind}")
        out[y] = row
        prior = row
    return out, pos


def read_16bit(data: bytes, header: Header):
    """(samples (height, width, channels) uint16, tRNS colour or None) of a 16-bit PNG."""
    if header.bit_depth != 16 or header.color_type not in (0, 2, 4, 6):
        raise PngError(f"not a 16-bit non-palette PNG: {header}")
    idat, trns = [], None
    for kind, body in _chunks(data):
        if kind == b"IDAT":
            idat.append(body)
        elif kind == b"tRNS" and header.color_type in (0, 2):
            trns = np.frombuffer(body, ">u2").astype(np.uint16)
    try:
        raw = zlib.decompress(b"".join(idat))
    except zlib.error as e:
        raise PngError(f"bad image data: {e}") from None
    channels = CHANNELS[header.color_type]
    bpp = 2 * channels
    width, height = header.width, header.height
    if header.interlace == 0:
        rows, _ = _unfilter(raw, 0, width, height, bpp)
        samples = rows.view(">u2").reshape(height, width, channels)
    else:
        samples = np.zeros((height, width, channels), ">u2")
        pos = 0
        for x0, y0, dx, dy in _ADAM7:
            w, h = -(-(width - x0) // dx), -(-(height - y0) // dy)
            if w > 0 and h > 0:
                rows, pos = _unfilter(raw, pos, w, h, bpp)
                samples[y0::dy, x0::dx] = rows.view(">u2").reshape(h, w, channels)
    return samples.astype(np.uint16), trns


def _chunk(kind: bytes, body: bytes) -> bytes:
    crc = zlib.crc32(kind + body) & 0xFFFFFFFF
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", crc)


def write(image: np.ndarray, level: int) -> bytes:
    """A PNG of a (height, width, 1..4) uint8 or uint16 image; zlib `level` (-1: default).
    Rows use the Up filter (cheap to compute, and smooth images compress well with it)."""
    height, width, channels = image.shape
    depth = 16 if image.dtype == np.uint16 else 8
    color_type = {1: 0, 2: 4, 3: 2, 4: 6}[channels]
    rows = image.astype(">u2" if depth == 16 else np.uint8).reshape(height, -1).view(np.uint8)
    up = rows.copy()
    up[1:] -= rows[:-1]  # uint8 arithmetic wraps modulo 256, as the filter is defined
    scanlines = np.concatenate([np.full((height, 1), 2, np.uint8), up], axis=1)
    header = struct.pack(">IIBBBBB", width, height, depth, color_type, 0, 0, 0)
    return b"".join((SIGNATURE, _chunk(b"IHDR", header),
                     _chunk(b"IDAT", zlib.compress(scanlines.tobytes(), level)),
                     _chunk(b"IEND", b"")))
