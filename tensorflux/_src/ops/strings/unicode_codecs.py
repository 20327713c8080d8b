"""Decoding and encoding for TF's Unicode ops, following what their ICU converters do.

`iter_chars(data, encoding)` yields (code point, bytes consumed, format error) per
character, as ICU's ucnv_getNextUChar with TF's substituting callback does: an
ill-formed sequence is one U+FFFD per *maximal subpart* (Unicode's recommended
practice, ICU's since version 60), e.g. b"\\xe2\\x82" then "x" is U+FFFD, "x".

- UTF-8, UTF-16-BE / -LE and UTF-32-BE / -LE are decoded here, byte for byte as ICU:
  unpaired surrogates and values past U+10FFFF are errors, a cut-off unit at the end is
  one error.
- Other encodings ICU knows (ISO-8859-1, US-ASCII, windows-1252, Shift_JIS, ...) go
  through Python's codec of that name, one character at a time; an undecodable byte is
  one error. An encoding Python does not know raises LookupError (the op reports
  "Could not create converter for input encoding: ...").

`encode(units, encoding)` writes the UTF-16 code units of an ICU UnicodeString in one of
TF's three output encodings: UTF-8 (an unpaired surrogate becomes U+FFFD, as ICU's
toUTF8String does), UTF-16-BE (the units as they are) or UTF-32-BE (pairs combined, an
unpaired surrogate written as its own value).
"""

from __future__ import annotations

import codecs
import struct

REPLACEMENT = 0xFFFD
MAX_CODE_POINT = 0x10FFFF


def _utf8(data: bytes):
    i, n = 0, len(data)
    while i < n:
        b0 = data[i]
        if b0 < 0x80:
            yield b0, 1, False
            i += 1
            continue
        if 0xC2 <= b0 <= 0xDF:
            need, lo, hi = 1, 0x80, 0xBF
        elif 0xE0 <= b0 <= 0xEF:
            need = 2
            lo, hi = {0xE0: (0xA0, 0xBF), 0xED: (0x80, 0x9F)}.get(b0, (0x80, 0xBF))
        elif 0xF0 <= b0 <= 0xF4:
            need = 3
            lo, hi = {0xF0: (0x90, 0xBF), 0xF4: (0x80, 0x8F)}.get(b0, (0x80, 0xBF))
        else:
            yield REPLACEMENT, 1, True
            i += 1
            continue
        j = i + 1
        value = b0 & (0x3F >> need)
        for k in range(need):
            if j >= n:
                break
            b = data[j]
            first_lo, first_hi = (lo, hi) if k == 0 else (0x80, 0xBF)
            if not first_lo <= b <= first_hi:
                break
            value = (value << 6) | (b & 0x3F)
            j += 1
        if j - i == need + 1:
            yield value, need + 1, False
        else:  # the maximal subpart i..j is one error; decoding resumes at j
            yield REPLACEMENT, j - i, True
        i = j


def _utf16(data: bytes, order: str):
    units = [struct.unpack_from(order + "H", data, k)[0] for k in range(0, len(data) - 1, 2)]
    i = 0
    while i < len(units):
        u = units[i]
        if 0xD800 <= u <= 0xDBFF and i + 1 < len(units) and 0xDC00 <= units[i + 1] <= 0xDFFF:
            yield 0x10000 + ((u - 0xD800) << 10) + (units[i + 1] - 0xDC00), 4, False
            i += 2
        elif 0xD800 <= u <= 0xDFFF:
            yield REPLACEMENT, 2, True
            i += 1
        else:
            yield u, 2, False
            i += 1
    if len(data) % 2:
        yield REPLACEMENT, 1, True


def _utf32(data: bytes, order: str):
    full = len(data) - len(data) % 4
    for k in range(0, full, 4):
        value = struct.unpack_from(order + "I", data, k)[0]
        if value > MAX_CODE_POINT or 0xD800 <= value <= 0xDFFF:
            yield REPLACEMENT, 4, True
        else:
            yield value, 4, False
    if full < len(data):
        yield REPLACEMENT, len(data) - full, True


def _python_codec(data: bytes, name: str):
    decoder = codecs.getincrementaldecoder(name)("strict")
    pending = 0
    for byte in data:
        pending += 1
        try:
            text = decoder.decode(bytes([byte]))
        except UnicodeDecodeError:
            decoder.reset()
            yield REPLACEMENT, pending, True
            pending = 0
            continue
        if text:
            for k, ch in enumerate(text):
                yield ord(ch), pending if k == 0 else 0, False
            pending = 0
    if pending:
        yield REPLACEMENT, pending, True


def _normalize(name: str) -> str:
    return name.upper().replace("_", "-")


_OWN = {
    "UTF-8": _utf8, "UTF8": _utf8,
    "UTF-16-BE": lambda d: _utf16(d, ">"), "UTF-16BE": lambda d: _utf16(d, ">"),
    "UTF-16-LE": lambda d: _utf16(d, "<"), "UTF-16LE": lambda d: _utf16(d, "<"),
    "UTF-32-BE": lambda d: _utf32(d, ">"), "UTF-32BE": lambda d: _utf32(d, ">"),
    "UTF-32-LE": lambda d: _utf32(d, "<"), "UTF-32LE": lambda d: _utf32(d, "<"),
}


def check_encoding(name: str):
    """Raises LookupError when no converter exists for `name`."""
    if _normalize(name) not in _OWN:
        codecs.lookup(name)


def iter_chars(data: bytes, encoding: str):
    own = _OWN.get(_normalize(encoding))
    if own is not None:
        return own(data)
    return _python_codec(data, encoding)


# -- encoding ------------------------------------------------------------------------------
def to_units(code_points):
    """ICU UnicodeString::append(UChar32) for each value: UTF-16 code units; values
    outside 0..0x10FFFF are dropped (appendCodePoint ignores them)."""
    units = []
    for cp in code_points:
        if cp < 0 or cp > MAX_CODE_POINT:
            continue
        if cp >= 0x10000:
            cp -= 0x10000
            units += [0xD800 + (cp >> 10), 0xDC00 + (cp & 0x3FF)]
        else:
            units.append(cp)
    return units


def _code_points(units):
    """Code points of UTF-16 units, pairs combined; an unpaired surrogate stays itself."""
    i = 0
    while i < len(units):
        u = units[i]
        if 0xD800 <= u <= 0xDBFF and i + 1 < len(units) and 0xDC00 <= units[i + 1] <= 0xDFFF:
            yield 0x10000 + ((u - 0xD800) << 10) + (units[i + 1] - 0xDC00)
            i += 2
        else:
            yield u
            i += 1


def encode(units, encoding: str) -> bytes:
    if encoding == "UTF-16-BE":
        return b"".join(struct.pack(">H", u) for u in units)
    if encoding == "UTF-32-BE":
        return b"".join(struct.pack(">I", cp) for cp in _code_points(units))
    text = "".join(chr(REPLACEMENT if 0xD800 <= cp <= 0xDFFF else cp)
                   for cp in _code_points(units))
    return text.encode("utf-8")
