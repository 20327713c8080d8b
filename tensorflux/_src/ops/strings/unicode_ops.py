"""Unicode ops: UnicodeDecode, UnicodeDecodeWithOffsets, UnicodeEncode,
UnicodeTranscode and UnicodeScript (host records after TF's ICU-based kernels; the
codecs are in unicode_codecs.py, the script numbers in unicode_scripts.py).

Error policies, as TF: "replace" puts `replacement_char` for each ill-formed sequence
(and, with replace_control_characters, for U+0000..U+001F), "ignore" drops them, and
"strict" fails with "Invalid formatting on input string".

Public wrappers, tf.strings.*: unicode_decode, unicode_decode_with_offsets,
unicode_split, unicode_split_with_offsets, unicode_encode, unicode_transcode,
unicode_script, bytes_split. As in TF, the decode/split results of a rank-N input
(N >= 1, dense or ragged) are RaggedTensors [D1...DN, (chars)] built from the records'
(values, row_splits); a scalar gives dense vectors. unicode_encode takes dense or
ragged code points.
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
from tensorflux._src.ops.shape_fns import unchanged
from tensorflux._src.ops.strings import parsing_ops  # noqa: F401 - its _UnbatchOne record
from tensorflux._src.ops.strings import unicode_codecs, unicode_scripts
from tensorflux._src.ops.strings.string_ops import string_split
from tensorflux._src.ops.sparse.ragged_tensor import RaggedTensor
from tensorflux._src.ops.strings.string_util import (
    as_bytes, as_text, check_choice, map_strings, ragged_elementwise,
    ragged_from_value_rowids, ragged_rows, strings_like, to_tensor_or_ragged, with_ragged_rank,
)

__all__ = ["bytes_split", "unicode_decode", "unicode_decode_with_offsets", "unicode_encode",
           "unicode_script", "unicode_split", "unicode_split_with_offsets",
           "unicode_transcode"]

_ERRORS = ("strict", "replace", "ignore")
_OUTPUT_ENCODINGS = ("UTF-8", "UTF-16-BE", "UTF-32-BE")
_SPLITS = (_dtypes.int32, _dtypes.int64)
_NO_GRAD = dict(not_differentiable=True)
_FORMAT_ERROR = "Invalid formatting on input string"


class _Policy:
    """TF's ErrorOptions, checked when the kernel starts."""

    def __init__(self, errors, replacement_char, replace_control_characters=False):
        if not 0 <= replacement_char <= unicode_codecs.MAX_CODE_POINT:
            raise kernel_error("replacement_char out of unicode codepoint range")
        self.subst = replacement_char
        self.ignore = errors == "ignore"
        self.strict = errors == "strict"
        self.control = replace_control_characters

    def handles(self, ch, format_error):
        return format_error or (self.control and ch <= 0x1F)


def _check_input_encoding(name):
    try:
        unicode_codecs.check_encoding(name)
    except LookupError:
        raise kernel_error(f"Could not create converter for input encoding: {name}") from None


# -- UnicodeDecode / UnicodeDecodeWithOffsets -------------------------------------------------
def _decode_all(strings, input_encoding, policy):
    """(row_splits, char values, byte offsets) of every string, flattened."""
    splits, chars, offsets, failed = [0], [], [], False
    for s in np.asarray(strings, object).reshape(-1):
        offset = 0
        for ch, size, format_error in unicode_codecs.iter_chars(as_bytes(s), input_encoding):
            failed |= policy.strict and format_error
            if policy.handles(ch, format_error):
                if policy.ignore:
                    offset += size
                    continue
                ch = policy.subst
            chars.append(ch)
            offsets.append(offset)
            offset += size
        splits.append(len(chars))
    if failed:
        raise kernel_error(_FORMAT_ERROR)
    return splits, chars, offsets


def _decode_kernel(with_offsets):
    def kernel(input, input_encoding, errors, replacement_char,  # noqa: A002
               replace_control_characters, Tsplits):  # noqa: N803
        _check_input_encoding(input_encoding)
        policy = _Policy(errors, replacement_char, replace_control_characters)
        splits, chars, offsets = _decode_all(input, input_encoding, policy)
        out = [np.array(splits, Tsplits.as_numpy_dtype), np.array(chars, np.int32)]
        if with_offsets:
            out.append(np.array(offsets, np.int64))
        return tuple(out)
    return kernel


def _decode_shape(with_offsets):
    def shape(op):
        n = op.inputs[0].shape.num_elements()
        shapes = [TensorShape([None if n is None else n + 1]), TensorShape([None])]
        return shapes + [TensorShape([None])] if with_offsets else shapes
    return shape


_DECODE_ATTRS = {"input_encoding": "", "errors": "replace", "replacement_char": 0xFFFD,
                 "replace_control_characters": False, "Tsplits": _SPLITS}
register(OpDef("UnicodeDecode", inputs=("input: string",),
               outputs=("row_splits: Tsplits", "char_values: int32"), attrs=_DECODE_ATTRS,
               type_defaults={"Tsplits": _dtypes.int64}, shape=_decode_shape(False),
               host=_decode_kernel(False), **_NO_GRAD))
register(OpDef("UnicodeDecodeWithOffsets", inputs=("input: string",),
               outputs=("row_splits: Tsplits", "char_values: int32",
                        "char_to_byte_starts: int64"),
               attrs=_DECODE_ATTRS, type_defaults={"Tsplits": _dtypes.int64},
               shape=_decode_shape(True), host=_decode_kernel(True), **_NO_GRAD))


# -- UnicodeEncode ----------------------------------------------------------------------------
def _encode_kernel(input_values, input_splits, errors, output_encoding, replacement_char):
    policy = _Policy(errors, replacement_char)
    values, splits = np.asarray(input_values).reshape(-1), np.asarray(input_splits)
    out = []
    for i in range(1, len(splits)):
        code_points = []
        for cp in values[int(splits[i - 1]):int(splits[i])].tolist():
            if not 0 <= cp <= unicode_codecs.MAX_CODE_POINT:
                if policy.strict:
                    raise kernel_error("Code point value out of valid Unicode range.")
                if not policy.ignore:
                    cp = policy.subst
            code_points.append(cp)
        out.append(unicode_codecs.encode(unicode_codecs.to_units(code_points),
                                         output_encoding))
    return strings_like((max(len(splits) - 1, 0),), out)


def _encode_shape(op):
    with_rank(op.inputs[0].shape, 1)
    splits = with_rank(op.inputs[1].shape, 1)
    n = splits.dims[0].value
    return TensorShape([None if n is None else n - 1])


register(OpDef("UnicodeEncode", inputs=("input_values: int32", "input_splits: Tsplits"),
               outputs=("output: string",),
               attrs={"errors": "replace", "output_encoding": "UTF-8",
                      "replacement_char": 0xFFFD, "Tsplits": _SPLITS},
               type_defaults={"Tsplits": _dtypes.int64}, shape=_encode_shape,
               host=_encode_kernel, **_NO_GRAD))


# -- UnicodeTranscode -------------------------------------------------------------------------
def _transcode_kernel(input, input_encoding, output_encoding, errors,  # noqa: A002
                      replacement_char, replace_control_characters):
    _check_input_encoding(input_encoding)
    policy = _Policy(errors, replacement_char, replace_control_characters)
    found_error = [False]

    def one(s):
        code_points = []
        for ch, _, format_error in unicode_codecs.iter_chars(s, input_encoding):
            if policy.handles(ch, format_error):
                # TF counts a replaced control character as a format error too.
                found_error[0] = True
                if policy.ignore:
                    continue
                ch = policy.subst
            code_points.append(ch)
        return unicode_codecs.encode(unicode_codecs.to_units(code_points), output_encoding)

    out = map_strings(one, input)
    if policy.strict and found_error[0]:
        raise kernel_error(_FORMAT_ERROR)
    return out


register(OpDef("UnicodeTranscode", inputs=("input: string",), outputs=("output: string",),
               attrs={"input_encoding": "", "output_encoding": "UTF-8", "errors": "replace",
                      "replacement_char": 0xFFFD, "replace_control_characters": False},
               shape=unchanged, host=_transcode_kernel, **_NO_GRAD))


# -- UnicodeScript ----------------------------------------------------------------------------
def _script_kernel(input):  # noqa: A002
    values = np.asarray(input)
    flat = [unicode_scripts.script_code(int(v)) for v in values.reshape(-1)]
    return np.array(flat, np.int32).reshape(values.shape)


register(OpDef("UnicodeScript", inputs=("input: int32",), outputs=("output: int32",),
               shape=unchanged, host=_script_kernel, **_NO_GRAD))


# -- public wrappers --------------------------------------------------------------------------
def _decode(input, input_encoding, errors, replacement_char,  # noqa: A002
            replace_control_characters, with_offsets):
    """TF's recipe: the op decodes the flat strings; a scalar gives vectors, any other
    input RaggedTensors [D1...DN, (chars)] keeping a ragged input's row partitions."""
    check_choice("UnicodeDecodeWithOffsets" if with_offsets else "UnicodeDecode", "errors",
                 errors, _ERRORS)
    input = to_tensor_or_ragged(input, dtype=_dtypes.string, name="input")  # noqa: A001
    ndims = input.shape.ndims
    if ndims is None:
        raise ValueError("Rank of `input` must be statically known.")
    if ndims > 1:
        input = with_ragged_rank(input, ndims)  # noqa: A001
    ragged = isinstance(input, RaggedTensor)
    flat = array_ops.reshape(input.flat_values if ragged else input, [-1])
    outs = apply_op("UnicodeDecodeWithOffsets" if with_offsets else "UnicodeDecode",
                    input=flat, input_encoding=input_encoding, errors=errors,
                    replacement_char=int(replacement_char),
                    replace_control_characters=bool(replace_control_characters),
                    Tsplits=input.row_splits.dtype if ragged else _dtypes.int64)
    if ndims == 0:
        return (outs[1], outs[2]) if with_offsets else outs[1]
    parts = [ragged_rows(values, outs[0]) for values in outs[1:]]
    if ragged:
        parts = [input.with_flat_values(part) for part in parts]
    return tuple(parts) if with_offsets else parts[0]


def unicode_decode(input, input_encoding, errors="replace",  # noqa: A002
                   replacement_char=0xFFFD, replace_control_characters=False, name=None):
    """The Unicode code points (int32) of each string decoded from `input_encoding`:
    a vector for a scalar input."""
    with _graph.name_scope(name, "UnicodeDecode", [input]):
        return _decode(input, input_encoding, errors, replacement_char,
                       replace_control_characters, False)


def unicode_decode_with_offsets(input, input_encoding, errors="replace",  # noqa: A002
                                replacement_char=0xFFFD, replace_control_characters=False,
                                name=None):
    """(code points, start byte offset of each character) of each string."""
    with _graph.name_scope(name, "UnicodeDecodeWithOffsets", [input]):
        return _decode(input, input_encoding, errors, replacement_char,
                       replace_control_characters, True)


def _encode_rows(values, splits, output_encoding, errors, replacement_char):
    check_choice("UnicodeEncode", "output_encoding", output_encoding, _OUTPUT_ENCODINGS)
    check_choice("UnicodeEncode", "errors", errors, _ERRORS)
    return apply_op("UnicodeEncode", input_values=values, input_splits=splits,
                    output_encoding=output_encoding, errors=errors,
                    replacement_char=int(replacement_char))


def _row_splits(rows, row_length):
    """[0, n, 2n, ..., rows * n] as int64 (RaggedTensor.from_tensor's splits)."""
    rows = math_ops.cast(rows, _dtypes.int64)
    row_length = math_ops.cast(row_length, _dtypes.int64)
    return math_ops.range(rows + 1, dtype=_dtypes.int64) * row_length


def unicode_encode(input, output_encoding, errors="replace",  # noqa: A002
                   replacement_char=65533, name=None):
    """Encodes each innermost row of code points ([D1...DN, chars], int32, dense or
    ragged) as one string [D1...DN] in UTF-8, UTF-16-BE or UTF-32-BE."""
    with _graph.name_scope(name, "UnicodeEncode", [input]):
        input = to_tensor_or_ragged(input, dtype=_dtypes.int32)  # noqa: A001
        ndims = input.shape.ndims
        if ndims is None:
            raise ValueError("Rank of input_tensor must be statically known.")
        if isinstance(input, RaggedTensor):
            return _encode_ragged(input, output_encoding, errors, replacement_char)
        if ndims == 0:
            raise ValueError("input_tensor's rank must be at least 1.")
        if ndims == 1:
            splits = array_ops.stack([0, array_ops.shape(input, out_type=_dtypes.int64)[0]])
            out = _encode_rows(input, splits, output_encoding, errors, replacement_char)
            # The one string as a scalar. A host step rather than Reshape: scalar strings
            # from the compiled string path come back as numpy bytes_, which drop
            # trailing NUL bytes (common in UTF-16/32 output).
            return apply_op("_UnbatchOne", name="Reshape", input=out)
        shape = array_ops.shape(input, out_type=_dtypes.int64)
        rows = reduce_ops.reduce_prod(shape[:-1]) if ndims > 2 else shape[0]
        out = _encode_rows(array_ops.reshape(input, [-1]), _row_splits(rows, shape[-1]),
                           output_encoding, errors, replacement_char)
        if ndims == 2:
            return out
        return array_ops.reshape(out, shape[:-1])


def _encode_ragged(rt, output_encoding, errors, replacement_char):
    """TF's cases: inner dense dimensions are encoded as a dense tensor under the same
    partitions; otherwise the innermost ragged rows are the strings."""
    if rt.flat_values.shape.ndims > 1:
        return rt.with_flat_values(unicode_encode(rt.flat_values, output_encoding, errors,
                                                  replacement_char))
    if rt.ragged_rank > 1:
        return rt.with_values(unicode_encode(rt.values, output_encoding, errors,
                                             replacement_char))
    return _encode_rows(rt.values, rt.row_splits, output_encoding, errors, replacement_char)


def _split(input, input_encoding, errors, replacement_char, with_offsets):  # noqa: A002
    decoded = _decode(input, input_encoding, errors, replacement_char, False, with_offsets)
    codepoints = decoded[0] if with_offsets else decoded
    # Each character encoded on its own: code points [..., n] -> [..., n, 1].
    flat = codepoints.flat_values if isinstance(codepoints, RaggedTensor) else codepoints
    chars = unicode_encode(array_ops.expand_dims(flat, -1), input_encoding, errors,
                           replacement_char)
    if isinstance(codepoints, RaggedTensor):
        chars = codepoints.with_flat_values(chars)
    return (chars, decoded[1]) if with_offsets else chars


def unicode_split(input, input_encoding, errors="replace",  # noqa: A002
                  replacement_char=0xFFFD, name=None):
    """The substring of each character of each string (a vector for a scalar input)."""
    with _graph.name_scope(name, "UnicodeSplit", [input]):
        return _split(input, input_encoding, errors, replacement_char, False)


def unicode_split_with_offsets(input, input_encoding, errors="replace",  # noqa: A002
                               replacement_char=0xFFFD, name=None):
    """(character substrings, their start byte offsets) of each string."""
    with _graph.name_scope(name, "UnicodeSplitWithOffsets", [input]):
        return _split(input, input_encoding, errors, replacement_char, True)


def unicode_transcode(input, input_encoding, output_encoding, errors="replace",  # noqa: A002
                      replacement_char=65533, replace_control_characters=False, name=None):
    """Each string decoded from `input_encoding` and encoded in `output_encoding`."""
    check_choice("UnicodeTranscode", "output_encoding", output_encoding, _OUTPUT_ENCODINGS)
    check_choice("UnicodeTranscode", "errors", errors, _ERRORS)
    return apply_op("UnicodeTranscode", name=name, input=input,
                    input_encoding=as_text(input_encoding), output_encoding=output_encoding,
                    errors=errors, replacement_char=int(replacement_char),
                    replace_control_characters=bool(replace_control_characters))


@ragged_elementwise
def unicode_script(input, name=None):  # noqa: A002
    """ICU's UScriptCode of each code point (int32): 0 Common, 25 Latin, 17 Han, ...;
    -1 for values that are not code points."""
    return apply_op("UnicodeScript", name=name, input=input)


def bytes_split(input, name=None):  # noqa: A002
    """The single bytes of each string: a vector for a scalar, else a RaggedTensor
    [D1...DN, (bytes)] (a ragged input keeps its row partitions)."""
    with _graph.name_scope(name, "StringsByteSplit", [input]):
        input = to_tensor_or_ragged(input, dtype=_dtypes.string, name="input")  # noqa: A001
        if isinstance(input, RaggedTensor):
            return input.with_flat_values(bytes_split(input.flat_values))
        ndims = input.shape.ndims
        if ndims is None:
            raise ValueError("input must have a statically-known rank.")
        if ndims > 1:
            return bytes_split(RaggedTensor.from_tensor(input))
        sp = string_split(array_ops.reshape(input, [-1]) if ndims == 0 else input, sep="",
                          skip_empty=False)
        if ndims == 0:
            return sp.values
        return ragged_from_value_rowids(sp.values, sp.indices[:, 0], sp.dense_shape[0])
