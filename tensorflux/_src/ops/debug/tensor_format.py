"""TF's text form of tensor values, as its C++ runtime prints them.

Two layouts, both from `Tensor::SummarizeValue` in TF's tensor.cc:

- `summarize_v1` (Assert, Print): the first `summarize` elements in row-major order,
  nested in brackets below the outermost dimension, "..." where a row or the whole
  tensor was cut: `[1 2 3]` prints as `1 2 3`, [[1, 2], [3, 4]] with summarize 3 as
  `[1 2][3]...`.
- `summarize_v2` (tf.print): the first and last `summarize` entries of every dimension,
  numpy style: `[1 2 3 ... 8 9 10]`, rows on their own lines.

Elements follow TF's StrCat: floats with 6 significant digits (9 when 6 do not give the
same float back; doubles 15 or 17), bools as 1/0, strings C-escaped (quoted in v2), and
types TF cannot print (complex) as "?".
"""

from __future__ import annotations

import numpy as np

from tensorflux._src.framework import dtypes as _dtypes

_FLOATS = (_dtypes.float16, _dtypes.bfloat16, _dtypes.float32)


def limit_for(num_elements: int, summarize: int) -> int:
    """How many leading elements SummarizeValue looks at (negative summarize: all)."""
    return num_elements if summarize < 0 else min(summarize, num_elements)


def _float_text(value, digits, extra, exact_type):
    value = exact_type(value)
    if np.isnan(value):
        return "-nan" if np.signbit(value) else "nan"
    text = "%.*g" % (digits, value)
    if exact_type(float(text)) != value:  # 6 (15) digits do not round-trip: use 9 (17)
        text = "%.*g" % (digits + extra, value)
    return text


def cescape(text) -> str:
    """absl::CEscape: quotes, backslashes and control characters escaped, other bytes
    outside printable ASCII as 3-digit octal."""
    data = text.encode("utf-8") if isinstance(text, str) else bytes(text)
    named = {ord("\n"): "\\n", ord("\r"): "\\r", ord("\t"): "\\t", ord('"'): '\\"',
             ord("'"): "\\'", ord("\\"): "\\\\"}
    out = []
    for byte in data:
        if byte in named:
            out.append(named[byte])
        elif byte < 0x20 or byte >= 0x7F:
            out.append("\\%03o" % byte)
        else:
            out.append(chr(byte))
    return "".join(out)


def element_text(value, dtype, quote_strings=False) -> str:
    """One element as TF's StrCat writes it."""
    dtype = dtype.base_dtype
    if dtype == _dtypes.bool:
        return "1" if value else "0"
    if dtype in _FLOATS:
        return _float_text(value, 6, 3, np.float32)
    if dtype == _dtypes.float64:
        return _float_text(value, 15, 2, np.float64)
    if dtype == _dtypes.string:
        text = cescape(value)
        return f'"{text}"' if quote_strings else text
    return str(int(value))


def _printable(dtype) -> bool:
    # SummarizeValue's "irregular" types print every element as "?".
    return not dtype.base_dtype.is_complex


def _unprintable(limit, num_elements, v2):
    text = " ".join(["?"] * limit) + ("..." if limit < num_elements else "")
    return f"[{text}]" if v2 else text


def summarize_v1(head, shape, dtype, summarize) -> str:
    """SummarizeValue(summarize): `head` holds (at least) the first `limit` elements of
    the flattened tensor, whose full shape is `shape`."""
    shape = tuple(int(d) for d in shape)
    num_elements = int(np.prod(shape)) if shape else 1
    limit = limit_for(num_elements, summarize)
    if not _printable(dtype):
        return _unprintable(limit, num_elements, v2=False)
    flat = np.asarray(head).reshape(-1)
    elements = [element_text(v, dtype) for v in flat[:limit]]
    if not shape:
        text = " ".join(elements)
    else:
        parts, taken = [], [0]
        _one_dim_v1(0, shape, limit, elements, taken, parts)
        text = "".join(parts)
    return text + ("..." if num_elements > limit else "")


def _one_dim_v1(dim, shape, limit, elements, taken, parts):
    """PrintOneDim: brackets for every dimension but the last, elements of the last."""
    if taken[0] >= limit:
        return
    if dim == len(shape) - 1:
        for i in range(shape[dim]):
            if taken[0] >= limit:
                if dim != 0:  # a row cut short
                    parts.append("...")
                return
            if i > 0:
                parts.append(" ")
            parts.append(elements[taken[0]])
            taken[0] += 1
        return
    for _ in range(shape[dim]):
        if taken[0] >= limit:
            break  # nothing more is printed for the remaining rows
        parts.append("[")
        _one_dim_v1(dim + 1, shape, limit, elements, taken, parts)
        parts.append("]")


def summarize_v2(value, dtype, summarize) -> str:
    """SummarizeValue(summarize, print_v2=true), as tf.print and tf.strings.format use."""
    value = np.asarray(value)
    num_elements = value.size
    limit = limit_for(num_elements, summarize)
    if not _printable(dtype):
        return _unprintable(limit, num_elements, v2=True)
    if value.ndim == 0:
        text = " ".join(element_text(v, dtype, True) for v in value.reshape(-1)[:limit])
        return text + ("..." if num_elements > limit else "")
    parts = []
    _one_dim_v2(value, (), limit, dtype, parts)
    return "".join(parts)


def _dim_spacing(dim, ndim, parts):
    if dim == ndim - 1:
        parts.append(" ")
    else:
        parts.append("\n" * (ndim - dim - 1) + " " * (dim + 1))


def _one_dim_v2(value, index, at_ends, dtype, parts):
    """PrintOneDimV2: the first and last `at_ends` entries of each dimension."""
    dim = len(index)
    if dim == value.ndim:
        parts.append(element_text(value[index], dtype, True))
        return
    parts.append("[")
    count = value.shape[dim]
    for i in range(min(at_ends, count)):
        if i > 0:
            _dim_spacing(dim, value.ndim, parts)
        _one_dim_v2(value, index + (i,), at_ends, dtype, parts)
    if count > 2 * at_ends:
        _dim_spacing(dim, value.ndim, parts)
        parts.append("...")
    for i in range(max(at_ends, count - at_ends), count):
        _dim_spacing(dim, value.ndim, parts)
        _one_dim_v2(value, index + (i,), at_ends, dtype, parts)
    parts.append("]")
