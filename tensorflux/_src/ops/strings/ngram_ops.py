"""tf.strings.ngrams: the StringNGrams host record (TF's kernel: n-grams of each row of
a ragged batch given as flat values + row splits, with optional padding) and TF's
wrapper: a dense input gives a dense result, [D1...DN, S] strings -> [D1...DN, number
of n-grams]; a RaggedTensor gives the n-grams of its innermost rows as a RaggedTensor.
"""

from __future__ import annotations

import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.tensor_shape import TensorShape
from tensorflux._src.ops.array import array_ops
from tensorflux._src.ops.math import math_ops, reduce_ops
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.op_helpers import kernel_error, with_rank
from tensorflux._src.ops.registry import OpDef, register
from tensorflux._src.ops.sparse.ragged_tensor import RaggedTensor
from tensorflux._src.ops.strings.string_util import (
    as_bytes, ragged_rows, strings_like, to_tensor_or_ragged,
)

__all__ = ["ngrams"]


def _pad_width(pad_width, width):
    # Never wider than width - 1; a negative pad_width means exactly that.
    return min(width - 1 if pad_width < 0 else pad_width, width - 1)


def _count(length, width, pad_width):
    return max(0, length + 2 * _pad_width(pad_width, width) - width + 1)


def _make_ngrams(tokens, count, width, pad_width, left_pad, right_pad, sep):
    """TF's CreateNgrams for one row."""
    pad = _pad_width(pad_width, width)
    out = []
    for k in range(count):
        left = max(0, pad - k)
        right = max(0, pad - (count - (k + 1)))
        used = width - (left + right)
        start = 0 if left > 0 else k - pad
        out.append(sep.join([left_pad] * left + tokens[start:start + used]
                            + [right_pad] * right))
    return out


def _string_ngrams_kernel(data, data_splits, separator, ngram_widths, left_pad, right_pad,
                          pad_width, preserve_short_sequences):
    if any(w <= 0 for w in ngram_widths):
        raise kernel_error("ngram_widths must contain positive values")
    tokens = [as_bytes(t) for t in np.asarray(data, object).reshape(-1)]
    splits = np.asarray(data_splits).reshape(-1)
    if splits.size:
        if splits[0] != 0:
            raise kernel_error(f"First split value must be 0, got {int(splits[0])}")
        for prev, cur in zip(splits[:-1].tolist(), splits[1:].tolist()):
            if not prev <= cur <= len(tokens):
                raise kernel_error(f"Invalid split value {cur}, must be in [{prev}, "
                                   f"{len(tokens)}]")
        if splits[-1] != len(tokens):
            raise kernel_error(f"Last split value must be data size. Expected {len(tokens)}, "
                               f"got {int(splits[-1])}")
    sep, lpad, rpad = as_bytes(separator), as_bytes(left_pad), as_bytes(right_pad)
    out, out_splits = [], [0]
    if tokens and splits.size:
        for row in range(splits.size - 1):
            row_tokens = tokens[int(splits[row]):int(splits[row + 1])]
            produced = []
            for width in ngram_widths:
                produced += _make_ngrams(row_tokens, _count(len(row_tokens), width, pad_width),
                                         width, pad_width, lpad, rpad, sep)
            if preserve_short_sequences and not produced and row_tokens:
                if pad_width < 0:
                    raise kernel_error(f"Pad width should be >= 0 when preserve_short_sequences "
                                       f"is True and ngram_widths are not provided, got "
                                       f"{pad_width}")
                width = len(row_tokens) + 2 * pad_width
                produced = _make_ngrams(row_tokens, 1, width, pad_width, lpad, rpad, sep)
            out += produced
            out_splits.append(len(out))
    else:  # no data or no rows: every split is 0
        out_splits = [0] * splits.size
    return (strings_like((len(out),), out),
            np.array(out_splits, np.asarray(data_splits).dtype).reshape(splits.shape))


def _string_ngrams_shape(op):
    with_rank(op.inputs[0].shape, 1)
    return [TensorShape([None]), with_rank(op.inputs[1].shape, 1)]


register(OpDef("StringNGrams", inputs=("data: string", "data_splits: Tsplits"),
               outputs=("ngrams: string", "ngrams_splits: Tsplits"),
               attrs={"separator": "", "ngram_widths": (), "left_pad": "", "right_pad": "",
                      "pad_width": 0, "preserve_short_sequences": False,
                      "Tsplits": (_dtypes.int32, _dtypes.int64)},
               type_defaults={"Tsplits": _dtypes.int64}, shape=_string_ngrams_shape,
               host=_string_ngrams_kernel, not_differentiable=True))


def _pads(pad_values):
    if pad_values is None:
        return "", ""
    if isinstance(pad_values, (list, tuple)):
        if not all(isinstance(p, (str, bytes)) for p in pad_values[:2]):
            raise TypeError("pad_values must be a string, tuple of strings, or None.")
        return pad_values[0], pad_values[1]
    if not isinstance(pad_values, (str, bytes)):
        raise TypeError("pad_values must be a string, tuple of strings, or None.")
    return pad_values, pad_values


def ngrams(data, ngram_width, separator=" ", pad_values=None, padding_width=None,
           preserve_short_sequences=False, name=None):
    """The n-grams of the innermost dimension of `data`: windows of `ngram_width`
    adjacent strings joined by `separator` (several widths: all of them, in order),
    padded with `pad_values` (`padding_width` on each side, default width - 1). A dense
    input gives a dense result, a RaggedTensor a RaggedTensor with the same outer rows."""
    with _graph.name_scope(name, "StringNGrams", [data]):
        left_pad, right_pad = _pads(pad_values)
        if padding_width is not None and padding_width < 1:
            raise ValueError("padding_width must be greater than 0.")
        if padding_width is not None and pad_values is None:
            raise ValueError("pad_values must be provided if padding_width is set.")
        data = to_tensor_or_ragged(data, name="data", dtype=_dtypes.string)
        ndims = data.shape.ndims
        if not isinstance(data, RaggedTensor):
            if ndims is None:
                raise ValueError("Rank of data must be known.")
            if ndims == 0:
                raise ValueError("Data must have rank>0")
        widths = list(ngram_width) if isinstance(ngram_width, (list, tuple)) else [ngram_width]
        for width in widths:
            if width < 1:
                raise ValueError(f"All ngram_widths must be greater than 0. Got {ngram_width}")
        if pad_values is None:
            padding_width = 0
        elif padding_width is None:
            padding_width = -1
        attrs = dict(separator=separator, ngram_widths=tuple(int(w) for w in widths),
                     left_pad=left_pad, right_pad=right_pad, pad_width=int(padding_width),
                     preserve_short_sequences=bool(preserve_short_sequences))
        if isinstance(data, RaggedTensor):
            return _ragged_ngrams(data, attrs)
        shape = array_ops.shape(data, out_type=_dtypes.int64)
        if ndims == 1:
            splits = array_ops.stack([np.int64(0), shape[0]])
        else:
            rows = reduce_ops.reduce_prod(shape[:-1])
            splits = math_ops.range(rows + 1, dtype=_dtypes.int64) * shape[-1]
        output, _ = apply_op("StringNGrams", data=array_ops.reshape(data, [-1]),
                             data_splits=splits, **attrs)
        if ndims == 1:
            return output
        return array_ops.reshape(output, array_ops.concat([shape[:-1], [-1]], axis=0))


def _ragged_ngrams(rt, attrs):
    """TF's ragged case: the innermost ragged rows are the sequences."""
    if rt.ragged_rank > 1:
        return rt.with_values(_ragged_ngrams(rt.values, attrs))
    output, splits = apply_op("StringNGrams", data=rt.values, data_splits=rt.row_splits,
                              **attrs)
    return ragged_rows(output, splits)
