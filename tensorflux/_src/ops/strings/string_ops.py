"""String ops: joining, splitting, number <-> string conversion, length and case.

String tensors are numpy object arrays of `bytes` (tensor_conversion turns str into
UTF-8 bytes), and XLA has no string type, so every op here is a `host` record: a NumPy
kernel that runs after the compiled part of a run. Kernels follow TF1.15's CPU kernels,
including their InvalidArgumentError messages. None of these ops is differentiable.

Public names as in TF1.15: `tf.string_join`, `tf.string_split`, `tf.as_string`,
`tf.string_to_number`, and the `tf.strings` namespace (join, split, as_string,
to_number, length, upper, lower) in tensorflux/strings.py.
"""

from __future__ import annotations

import re

import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.operation import Tensor
from tensorflux._src.framework.sparse_tensor import SparseTensor
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.framework.tensor_shape import TensorShape, unknown_shape
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.op_helpers import (
    deprecated_argument_lookup, dims_str, kernel_error, merge_shapes, with_rank,
)
from tensorflux._src.ops.registry import OpDef, register
from tensorflux._src.ops.shape_fns import unchanged
from tensorflux._src.ops.array.array_ops import expand_dims
from tensorflux._src.ops.sparse.ragged_tensor import RaggedTensor
from tensorflux._src.ops.strings.string_util import (
    as_bytes as _as_bytes, check_choice, map_strings as _map_strings, ragged_elementwise,
    ragged_from_value_rowids, strings_like as _strings_like, to_tensor_or_ragged,
)

__all__ = ["as_string", "string_join", "string_split", "string_to_number"]

_STRING = _dtypes.string


# -- StringJoin -------------------------------------------------------------------------------
def _string_join_shape(op):
    shapes = [t.shape for t in op.inputs]
    if all(s.ndims == 0 for s in shapes):
        return TensorShape([])
    # Scalars broadcast; every other input (unknown ranks aside) is the output's shape.
    out = unknown_shape()
    for s in shapes:
        if s.ndims not in (None, 0):
            out = merge_shapes(out, s)
    return out


def _string_join_kernel(*inputs, separator):
    shape = ()
    for t in inputs:
        if t.ndim:
            if shape == ():
                shape = t.shape
            elif t.shape != shape:
                raise kernel_error(f"Input shapes do not match: {dims_str(shape)} vs. "
                                   f"{dims_str(t.shape)}")
    columns = [np.broadcast_to(t, shape).reshape(-1) for t in inputs]
    sep = _as_bytes(separator)
    return _strings_like(shape, [sep.join(row) for row in zip(*columns)]
                         if columns else [b""] * int(np.prod(shape)))


register(OpDef("StringJoin", inputs=("inputs: N * string",), outputs=("output: string",),
               attrs={"separator": ""}, shape=_string_join_shape, host=_string_join_kernel,
               not_differentiable=True))


@ragged_elementwise
def string_join(inputs, separator="", name=None):
    """Joins the strings of the tensors in `inputs` elementwise with `separator`; scalars
    are repeated to the shape of the other inputs, which must all be the same."""
    return apply_op("StringJoin", name=name, inputs=inputs, separator=separator)


# -- StringSplit / StringSplitV2 -> SparseTensor ----------------------------------------------
def _string_split_shape(op):
    with_rank(op.inputs[0].shape, 1)
    with_rank(op.inputs[1].shape, 0)
    return [TensorShape([None, 2]), TensorShape([None]), TensorShape([2])]


def _check_split_inputs(input, sep, sep_name):  # noqa: A002 - TF's argument name
    if input.ndim != 1:
        raise kernel_error(f"input must be a vector, got shape: {dims_str(input.shape)}")
    if sep.ndim != 0:
        raise kernel_error(f"{sep_name} must be a scalar, got shape: {dims_str(sep.shape)}")
    return _as_bytes(sep[()])


def _split_on_any_byte(text, delimiters, skip_empty):
    """StringSplit's rule: every byte of `delimiters` is a split point; no delimiters
    splits into single bytes. An empty string has no tokens, as in TF1's str_util."""
    if not delimiters:
        return [text[i:i + 1] for i in range(len(text))]
    if not text:
        return []
    tokens = re.split(b"[" + re.escape(delimiters) + b"]", text)
    return [t for t in tokens if t] if skip_empty else tokens


_WHITESPACE = b" \t\n\v\f\r"  # C's isspace
_NON_WHITESPACE = re.compile(b"[^" + re.escape(_WHITESPACE) + b"]+")


def _split_on_whitespace(text, maxsplit):
    """StringSplitV2 without sep: runs of whitespace separate tokens (TF's loop, which
    after `maxsplit` splits keeps the rest, even when it is empty)."""
    tokens, rest = [], text.lstrip(_WHITESPACE)
    while rest:
        token = _NON_WHITESPACE.match(rest).group()
        tokens.append(token)
        rest = rest[len(token):].lstrip(_WHITESPACE)
        if maxsplit > 0 and len(tokens) == maxsplit:
            tokens.append(rest)
            break
    return tokens


def _split_v2(text, sep, maxsplit):
    """StringSplitV2's rule, Python's str.split: `sep` is a whole separator string."""
    if maxsplit == 0:
        return [text]
    if not sep:
        return _split_on_whitespace(text, maxsplit)
    return text.split(sep, maxsplit if maxsplit > 0 else -1)


def _sparse_outputs(rows):
    """(indices, values, dense_shape) of a [len(rows), longest row] sparse matrix."""
    indices = np.array([(i, j) for i, row in enumerate(rows) for j in range(len(row))],
                       np.int64).reshape(-1, 2)
    values = _strings_like((len(indices),), [t for row in rows for t in row])
    dense_shape = np.array([len(rows), max(map(len, rows), default=0)], np.int64)
    return indices, values, dense_shape


def _string_split_kernel(input, delimiter, skip_empty):  # noqa: A002
    delimiters = _check_split_inputs(input, delimiter, "delimiter")
    return _sparse_outputs([_split_on_any_byte(_as_bytes(s), delimiters, skip_empty)
                            for s in input])


def _string_split_v2_kernel(input, sep, maxsplit):  # noqa: A002
    sep = _check_split_inputs(input, sep, "sep")
    return _sparse_outputs([_split_v2(_as_bytes(s), sep, maxsplit) for s in input])


_SPLIT_OUTPUTS = ("indices: int64", "values: string", "shape: int64")
register(OpDef("StringSplit", inputs=("input: string", "delimiter: string"),
               outputs=_SPLIT_OUTPUTS, attrs={"skip_empty": True}, shape=_string_split_shape,
               host=_string_split_kernel, not_differentiable=True))
register(OpDef("StringSplitV2", inputs=("input: string", "sep: string"),
               outputs=_SPLIT_OUTPUTS, attrs={"maxsplit": -1}, shape=_string_split_shape,
               host=_string_split_v2_kernel, not_differentiable=True))


def _check_result_type(result_type):
    if result_type not in ("SparseTensor", "RaggedTensor"):
        raise ValueError("result_type must be 'RaggedTensor' or 'SparseTensor'.")


def _as_result(result_type, indices, values, shape):
    """A split op's sparse result, or (RaggedTensor) its rows: row ids are indices[:, 0]."""
    if result_type == "RaggedTensor":
        return ragged_from_value_rowids(values, indices[:, 0], shape[0])
    return SparseTensor(indices, values, shape)


def string_split(source, sep=None, skip_empty=True, delimiter=None,
                 result_type="SparseTensor", name=None):
    """TF1's `tf.string_split`: splits each string of the 1-D `source` at every byte of
    `sep` (default " "; empty: into single bytes), as a SparseTensor [batch, max tokens]
    or (result_type="RaggedTensor") a RaggedTensor [batch, (tokens)]. `delimiter` is
    the deprecated name of `sep`."""
    if sep is not None and delimiter is not None:
        raise ValueError("Cannot specify both 'sep' and 'delimiter'")
    sep = delimiter if sep is None else sep
    _check_result_type(result_type)
    with _graph.name_scope(name, "StringSplit", [source]):
        sep = convert_to_tensor(" " if sep is None else sep, dtype=_STRING)
        source = convert_to_tensor(source, dtype=_STRING)
        outs = apply_op("StringSplit", input=source, delimiter=sep, skip_empty=skip_empty)
        return _as_result(result_type, *outs)


def _split_v2_ragged(input, sep, maxsplit):  # noqa: A002
    """TF 2's tf.strings.split: a RaggedTensor of rank N + 1 (a scalar: a vector)."""
    if isinstance(input, RaggedTensor):
        return input.with_flat_values(_split_v2_ragged(input.flat_values, sep, maxsplit))
    rank = input.shape.ndims
    if rank is not None and rank > 1:
        return _split_v2_ragged(RaggedTensor.from_tensor(input), sep, maxsplit)
    outs = apply_op("StringSplitV2", input=input, sep=sep, maxsplit=maxsplit)
    return _as_result("RaggedTensor", *outs)


def strings_split(input=None, sep=None, maxsplit=-1,  # noqa: A002 - TF's argument name
                  result_type="SparseTensor", source=None, name=None):
    """TF1's `tf.strings.split`: Python's str.split on each string of `input` (`sep`
    None: runs of whitespace), as a SparseTensor or RaggedTensor of rank N + 1 (a
    scalar input counts as a vector of one). `source` is the deprecated name of
    `input`."""
    if input is not None and source is not None:
        raise ValueError("Cannot specify both 'input' and 'source'")
    source = input if source is None else source
    _check_result_type(result_type)
    with _graph.name_scope(name, "StringSplit", [source]):
        sep = convert_to_tensor("" if sep is None else sep, dtype=_STRING)
        source = to_tensor_or_ragged(source, dtype=_STRING, name="input")
        if source.shape.ndims == 0:
            source = expand_dims(source, 0)
        if result_type == "SparseTensor" and isinstance(source, Tensor) and \
                source.shape.ndims in (1, None):
            outs = apply_op("StringSplitV2", input=source, sep=sep, maxsplit=maxsplit)
            return SparseTensor(*outs)
        ragged = _split_v2_ragged(source, sep, maxsplit)
        return ragged.to_sparse() if result_type == "SparseTensor" else ragged


# -- AsString ---------------------------------------------------------------------------------
_FLOAT_LIKE = (_dtypes.float32, _dtypes.float64, _dtypes.complex64)
_PRINTF_FLAGS = ("", " ", "0", "-", "+", "#")


def _as_string_format(T, precision, scientific, shortest, width, fill):  # noqa: N803
    """TF's AsStringOp printf format for dtype T, with its attribute checks."""
    if T not in _FLOAT_LIKE:
        if scientific or shortest:
            raise kernel_error(f"scientific and shortest format not supported for datatype "
                               f"{T._tf_name}")
        if precision >= 0:
            raise kernel_error(f"precision not supported for datatype {T._tf_name}")
    fill = fill.decode() if isinstance(fill, bytes) else fill
    if len(fill) > 1:
        raise kernel_error("Fill string must be one or fewer characters")
    if scientific and shortest:
        raise kernel_error("Cannot select both scientific and shortest notation")
    if width > -1 and fill not in _PRINTF_FLAGS:
        # TF pastes fill into a printf format, where only flags mean anything.
        raise kernel_error(f"AsString: fill {fill!r} is not one of the printf flags "
                           f"{', '.join(repr(f) for f in _PRINTF_FLAGS[1:])}")
    fmt = "%"
    if width > -1:
        fmt += f"{fill}{width}"
    if precision > -1:
        fmt += f".{precision}"
    if T in _FLOAT_LIKE:
        fmt += "g" if shortest else "e" if scientific else "f"
    else:
        fmt += "d"
    return f"({fmt},{fmt})" if T == _dtypes.complex64 else fmt


def _as_string_kernel(input, T, precision, scientific, shortest, width, fill):  # noqa: A002,N803
    fmt = _as_string_format(T, precision, scientific, shortest, width, fill)
    if T == _dtypes.bool:
        def encode(v):
            return b"true" if v else b"false"
    elif T == _dtypes.complex64:
        def encode(v):
            return (fmt % (float(v.real), float(v.imag))).encode()
    else:
        # Python's % follows C's printf; a float32 is widened to double first, as in C.
        def encode(v):
            return (fmt % v).encode()
    flat = [encode(v) for v in input.reshape(-1).tolist()]
    return _strings_like(input.shape, flat)


register(OpDef("AsString", inputs=("input: T",), outputs=("output: string",),
               attrs={"T": (_dtypes.int8, _dtypes.int16, _dtypes.int32, _dtypes.int64,
                            _dtypes.complex64, _dtypes.float32, _dtypes.float64, _dtypes.bool),
                      "precision": -1, "scientific": False, "shortest": False, "width": -1,
                      "fill": ""},
               shape=unchanged, host=_as_string_kernel, not_differentiable=True))


@ragged_elementwise
def as_string(input, precision=-1, scientific=False, shortest=False, width=-1,  # noqa: A002
              fill="", name=None):
    """Each element formatted as a string: floats as printf's %f (6 decimals) unless
    `shortest` (%g) or `scientific` (%e); `width` pads with `fill` (a printf flag)."""
    return apply_op("AsString", name=name, input=input, precision=precision,
                    scientific=scientific, shortest=shortest, width=width, fill=fill)


# -- StringToNumber ---------------------------------------------------------------------------
_SPACE = rb"[ \t\n\v\f\r]*"
# TF's safe_strto32/64: optional '-' (no '+'), decimal digits, surrounding whitespace.
_INT = re.compile(_SPACE + rb"(-?[0-9]+)" + _SPACE)
# TF's double-conversion settings: surrounding whitespace, a sign, "inf"/"nan" in any
# case, hex integers, decimals with an optional exponent; nothing else ("1_0", "infinity").
_FLOAT = re.compile(_SPACE + rb"([+-]?)(?:(0x[0-9a-f]+)|(inf|nan|(?:[0-9]+\.?[0-9]*|\.[0-9]+)"
                    rb"(?:e[+-]?[0-9]+)?))" + _SPACE, re.IGNORECASE)


def parse_int(text, dtype):
    match = _INT.fullmatch(text)
    if match is None:
        return None
    value = int(match.group(1))
    info = np.iinfo(dtype)
    return value if info.min <= value <= info.max else None  # overflow fails, as in TF


def parse_float(text, dtype):
    match = _FLOAT.fullmatch(text)
    if match is None:
        return None
    sign, hex_digits, decimal = match.groups()
    value = float(int(hex_digits, 16)) if hex_digits else float(decimal)
    with np.errstate(over="ignore"):  # too large for float32 is inf, as in TF
        return dtype(-value if sign == b"-" else value)


def _string_to_number_kernel(string_tensor, out_type):
    dtype = out_type.as_numpy_dtype
    parse = parse_float if out_type.is_floating else parse_int

    def convert(s):
        value = parse(_as_bytes(s), dtype)
        if value is None:
            raise kernel_error(f"StringToNumberOp could not correctly convert string: "
                               f"{_as_bytes(s).decode('utf-8', 'replace')}")
        return value

    return _map_strings(convert, string_tensor, dtype)


register(OpDef("StringToNumber", inputs=("string_tensor: string",), outputs=("output: out_type",),
               attrs={"out_type": (_dtypes.float32, _dtypes.float64, _dtypes.int32,
                                   _dtypes.int64)},
               type_defaults={"out_type": _dtypes.float32}, shape=unchanged,
               host=_string_to_number_kernel, not_differentiable=True))


@ragged_elementwise
def string_to_number(string_tensor=None, out_type=_dtypes.float32, name=None,
                     input=None):  # noqa: A002 - TF1's alias of string_tensor
    """Parses each string as a number of `out_type` (float32, float64, int32, int64)."""
    string_tensor = deprecated_argument_lookup("input", input, "string_tensor", string_tensor)
    return apply_op("StringToNumber", name=name, string_tensor=string_tensor,
                    out_type=out_type)


# -- StringLength, StringUpper, StringLower ---------------------------------------------------
_UNITS = ("BYTE", "UTF8_CHAR")


def _string_length_kernel(input, unit):  # noqa: A002
    if unit == "BYTE":
        return _map_strings(len, input, np.int32)
    # UTF-8 characters: every byte that is not a continuation byte (10xxxxxx) starts one.
    return _map_strings(lambda s: sum((b & 0xC0) != 0x80 for b in s), input, np.int32)


register(OpDef("StringLength", inputs=("input: string",), outputs=("output: int32",),
               attrs={"unit": "BYTE"}, shape=unchanged, host=_string_length_kernel,
               not_differentiable=True))


@ragged_elementwise
def string_length(input, name=None, unit="BYTE"):  # noqa: A002
    """The length of each string, in bytes or (unit="UTF8_CHAR") UTF-8 characters."""
    check_choice("StringLength", "unit", unit, _UNITS)
    return apply_op("StringLength", name=name, input=input, unit=unit)


def _change_case(upper):
    def kernel(input, encoding):  # noqa: A002
        if encoding not in ("", "utf-8"):
            raise kernel_error(f"only utf-8 or '' (no encoding) is supported, received "
                               f"{encoding}")
        if encoding == "":  # ASCII letters only; other bytes are left as they are
            return _map_strings(bytes.upper if upper else bytes.lower, input)
        return _map_strings(lambda s: (s.decode().upper() if upper else s.decode().lower())
                            .encode(), input)
    return kernel


register(OpDef("StringUpper", inputs=("input: string",), outputs=("output: string",),
               attrs={"encoding": ""}, shape=unchanged, host=_change_case(upper=True),
               not_differentiable=True))
register(OpDef("StringLower", inputs=("input: string",), outputs=("output: string",),
               attrs={"encoding": ""}, shape=unchanged, host=_change_case(upper=False),
               not_differentiable=True))


@ragged_elementwise
def string_upper(input, encoding="", name=None):  # noqa: A002
    """Upper-cases each string: ASCII letters, or all of Unicode with encoding="utf-8"."""
    return apply_op("StringUpper", name=name, input=input, encoding=encoding)


@ragged_elementwise
def string_lower(input, encoding="", name=None):  # noqa: A002
    """Lower-cases each string: ASCII letters, or all of Unicode with encoding="utf-8"."""
    return apply_op("StringLower", name=name, input=input, encoding=encoding)
