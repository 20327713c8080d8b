"""Byte encodings of string tensors: EncodeBase64, DecodeBase64 (TF's web-safe base64)
and DecodeCompressed (ZLIB / GZIP streams), host records.

Base64 follows TF's lib/strings/base64.cc: the URL-safe alphabet (- and _ for + and /),
padding with "=" only when `pad`; decoding accepts input with or without padding, but
only that alphabet ("Invalid character found in base64."), and a length of 1 mod 4 is
"Base64 string length cannot be 1 modulo 4.". Unused low bits of the last character are
not checked, as in TF.
"""

from __future__ import annotations

import re
import zlib

from tensorflux._src.framework import errors
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.op_helpers import kernel_error
from tensorflux._src.ops.registry import OpDef, register
from tensorflux._src.ops.shape_fns import unchanged
from tensorflux._src.ops.strings.string_util import map_strings, ragged_elementwise

__all__ = ["decode_base64", "decode_compressed", "encode_base64"]

_ALPHABET = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
_VALUE = {c: i for i, c in enumerate(_ALPHABET)}
_PAD = ord("=")


def base64_encode(data: bytes, pad: bool) -> bytes:
    out = bytearray()
    for i in range(0, len(data) - len(data) % 3, 3):
        n = (data[i] << 16) | (data[i + 1] << 8) | data[i + 2]
        out += bytes(_ALPHABET[(n >> s) & 0x3F] for s in (18, 12, 6, 0))
    rest = data[len(data) - len(data) % 3:]
    if len(rest) == 2:
        n = (rest[0] << 16) | (rest[1] << 8)
        out += bytes(_ALPHABET[(n >> s) & 0x3F] for s in (18, 12, 6))
        out += b"=" if pad else b""
    elif len(rest) == 1:
        n = rest[0] << 16
        out += bytes(_ALPHABET[(n >> s) & 0x3F] for s in (18, 12))
        out += b"==" if pad else b""
    return bytes(out)


def _decode_quad(codes) -> bytes:
    try:
        n = 0
        for c in codes:
            n = (n << 6) | _VALUE[c]
    except KeyError:
        raise kernel_error("Invalid character found in base64.") from None
    return bytes([(n >> 16) & 0xFF, (n >> 8) & 0xFF, n & 0xFF])


def base64_decode(data: bytes) -> bytes:
    """TF's Base64Decode, step for step: full groups of 4, then a tail of 2 to 4
    characters, the padding of a final group of 4 removed first."""
    if not data:
        return b""
    out, pos, end = bytearray(), 0, len(data)
    while end - pos > 4:
        out += _decode_quad(data[pos:pos + 4])
        pos += 4
    if end - pos == 4:
        if data[pos + 2] == _PAD and data[pos + 3] == _PAD:
            end -= 2
        if data[pos + 2] != _PAD and data[pos + 3] == _PAD:
            end -= 1
    remain = end - pos
    if remain == 1:
        raise kernel_error("Base64 string length cannot be 1 modulo 4.")
    tail = data[pos:end] + b"A" * (4 - remain)
    out += _decode_quad(tail)[:remain - 1]
    return bytes(out)


def _encode_kernel(input, pad):  # noqa: A002 - TF's argument name
    return map_strings(lambda s: base64_encode(s, pad), input)


def _decode_kernel(input):  # noqa: A002
    return map_strings(base64_decode, input)


register(OpDef("EncodeBase64", inputs=("input: string",), outputs=("output: string",),
               attrs={"pad": False}, shape=unchanged, host=_encode_kernel,
               not_differentiable=True))
register(OpDef("DecodeBase64", inputs=("input: string",), outputs=("output: string",),
               shape=unchanged, host=_decode_kernel, not_differentiable=True))


@ragged_elementwise
def encode_base64(input, pad=False, name=None):  # noqa: A002
    """Web-safe base64 of each string (- and _ in place of + and /), padded with "="
    only when `pad`."""
    return apply_op("EncodeBase64", name=name, input=input, pad=bool(pad))


@ragged_elementwise
def decode_base64(input, name=None):  # noqa: A002
    """The bytes of each web-safe base64 string (padding optional)."""
    return apply_op("DecodeBase64", name=name, input=input)


# -- DecodeCompressed ---------------------------------------------------------------------------
_ZLIB_ERROR = re.compile(r"Error (-?\d+) while decompressing data: (.*)")


def _inflate(data: bytes, wbits: int) -> bytes:
    inflater = zlib.decompressobj(wbits)
    try:
        # A stream cut short gives what was decompressed (TF reads to the end of input).
        return inflater.decompress(data) + inflater.flush()
    except zlib.error as e:
        found = _ZLIB_ERROR.match(str(e))
        text = (f"inflate() failed with error {found.group(1)}: {found.group(2)}" if found
                else f"inflate() failed: {e}")
        raise errors.DataLossError(None, None, text) from None


def _decompress_kernel(bytes, compression_type):  # noqa: A002 - TF's argument name
    if compression_type not in ("", "ZLIB", "GZIP"):
        raise kernel_error("Only ZLIB, GZIP or NONE are supported compressions")
    if compression_type == "":
        return map_strings(lambda s: s, bytes)
    wbits = 15 if compression_type == "ZLIB" else 15 + 16
    return map_strings(lambda s: _inflate(s, wbits), bytes)


register(OpDef("DecodeCompressed", inputs=("bytes: string",), outputs=("output: string",),
               attrs={"compression_type": ""}, shape=unchanged, host=_decompress_kernel,
               not_differentiable=True))


@ragged_elementwise  # in TF 1.15's ragged dispatch list
def decode_compressed(bytes, compression_type="", name=None):  # noqa: A002
    """Decompresses each string: compression_type "ZLIB", "GZIP" or "" (unchanged)."""
    return apply_op("DecodeCompressed", name=name, bytes=bytes,
                    compression_type=compression_type)
