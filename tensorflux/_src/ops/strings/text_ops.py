"""String editing and joining: StringStrip, Substr, ReduceJoin, UnsortedSegmentJoin and
StringFormat (host records, after TF1.15's CPU kernels and their error texts).

Public names: tf.strings.strip / tf.string_strip, tf.strings.substr / tf.substr,
tf.strings.reduce_join / tf.reduce_join, tf.strings.unsorted_segment_join,
tf.strings.format. None of these ops is differentiable.
"""

from __future__ import annotations

import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import errors
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.operation import Tensor
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.framework.tensor_shape import TensorShape, unknown_shape
from tensorflux._src.ops.array import array_ops
from tensorflux._src.ops.debug.tensor_format import summarize_v2
from tensorflux._src.ops.array import generator_ops
from tensorflux._src.ops.array.gather_ops import gather
from tensorflux._src.ops.math import math_ops, reduce_ops
from tensorflux._src.ops.math.segment_reductions import unsorted_segment_max
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.op_helpers import (
    deprecated_argument_lookup, dims_str, kernel_error, scalar_input_dim, with_rank,
)
from tensorflux._src.ops.registry import OpDef, register
from tensorflux._src.ops.shape_fns import broadcast, static_value, unchanged
from tensorflux._src.ops.sparse.ragged_ops import range as ragged_range
from tensorflux._src.ops.sparse.ragged_tensor import RaggedTensor, segment_ids_from_splits
from tensorflux._src.ops.strings.string_util import (
    as_bytes, check_choice, is_ragged, is_trail_byte, map_strings, ragged_elementwise,
    strings_like, to_tensor_or_ragged,
)

__all__ = ["reduce_join", "string_format", "string_strip", "substr",
           "unsorted_segment_join"]

_NO_GRAD = dict(not_differentiable=True)
_INDEX_TYPES = (_dtypes.int32, _dtypes.int64)


# -- StringStrip ------------------------------------------------------------------------------
_ASCII_SPACE = b" \t\n\v\f\r"  # absl::StripAsciiWhitespace: C's isspace



def _strip_kernel(input):  # noqa: A002 - TF's argument name
    return map_strings(lambda s: s.strip(_ASCII_SPACE), input)


register(OpDef("StringStrip", inputs=("input: string",), outputs=("output: string",),
               shape=unchanged, host=_strip_kernel, **_NO_GRAD))


@ragged_elementwise
def string_strip(input, name=None):  # noqa: A002 - TF's argument name
    """Strips leading and trailing ASCII whitespace from each string."""
    return apply_op("StringStrip", name=name, input=input)


# -- Substr -----------------------------------------------------------------------------------
_UNITS = ("BYTE", "UTF8_CHAR")


def _substr_shape(op):
    pos, length = op.inputs[1].shape, op.inputs[2].shape
    if length.ndims is not None:
        with_rank(pos, length.ndims)
    if pos.ndims is not None and length.ndims is not None:
        if any(a != b for a, b in zip(pos.as_list(), length.as_list())):
            raise ValueError(f"pos and len shapes must match: {pos._bracket_str()} vs. "
                             f"{length._bracket_str()}")
    return broadcast(op.inputs[0].shape, pos)


def _forward_chars(data: bytes, count, start):
    """TF's ForwardNUTF8CharPositions: (ok, byte position `count` characters on)."""
    pos, counted = start, 0
    while counted < count and pos < len(data):
        pos += 1
        while pos < len(data) and is_trail_byte(data[pos]):
            pos += 1
        counted += 1
    return counted == count, pos


def _back_chars(data: bytes, count, start):
    """TF's BackNUTF8CharPositions."""
    pos, counted = start, 0
    while counted < count and pos > 0:
        pos -= 1
        while pos > 0 and is_trail_byte(data[pos]):
            pos -= 1
        counted += 1
    return counted == count, pos


def _utf8_span(data: bytes, pos, length):
    """(start, end) bytes of `length` characters from character `pos`, or None when `pos`
    is out of range. A negative length gives an empty string here (TF's kernel counts
    no characters forward for it), unlike unit BYTE."""
    if pos >= 0:
        ok, start = _forward_chars(data, pos, 0)
        if not ok:
            return None
        _, end = _forward_chars(data, length, start)
        return start, end
    skip = max(0, -pos - length)
    ok, end = _back_chars(data, skip, len(data))
    if not ok:
        return None
    ok, start = _back_chars(data, -pos - skip, end)
    return (start, end) if ok else None


def _substr_one(data: bytes, pos, length, unit, where):
    pos, length = int(pos), int(length)
    if unit == "UTF8_CHAR":
        span = _utf8_span(data, pos, length)
        if span is None:
            raise kernel_error(f"pos {pos} out of range for string at index {where[0]}")
        return data[span[0]:span[1]]
    start = len(data) + pos if pos < 0 else pos
    if not 0 <= start <= len(data):
        index = where[0] if len(where) == 1 else f"({where[0]}, {where[1]})"
        text = data.decode("latin-1")
        raise kernel_error(f"pos {pos} out of range for string b'{text}' at index {index}")
    # StringPiece::substr: a negative length (as size_t, huge) takes the rest.
    return data[start:] if length < 0 else data[start:start + length]


def _substr_kernel(input, pos, length, unit):  # noqa: A002 - TF's argument name
    strings, pos, length = np.asarray(input, object), np.asarray(pos), np.asarray(length)
    if pos.shape != length.shape:
        raise kernel_error(f"pos and len should have the same shape, got: "
                           f"{dims_str(pos.shape)} vs. {dims_str(length.shape)}")
    if pos.ndim == 0 or strings.shape == pos.shape:
        flat = strings.reshape(-1)
        pos_b = np.broadcast_to(pos, strings.shape).reshape(-1)
        len_b = np.broadcast_to(length, strings.shape).reshape(-1)
        out = [_substr_one(as_bytes(s), p, n, unit, (i,))
               for i, (s, p, n) in enumerate(zip(flat, pos_b, len_b))]
        return strings_like(strings.shape, out)
    try:
        shape = np.broadcast_shapes(strings.shape, pos.shape)
    except ValueError:
        raise kernel_error(f"Incompatible shapes: {dims_str(strings.shape)} vs. "
                           f"{dims_str(pos.shape)}") from None
    if len(shape) not in (1, 2):
        raise errors.UnimplementedError(None, None, f"Substr broadcast not implemented for "
                                                    f"{len(shape)} dimensions")
    s_b = np.broadcast_to(strings, shape)
    p_b, n_b = np.broadcast_to(pos, shape), np.broadcast_to(length, shape)
    out = np.empty(shape, object)
    for index in np.ndindex(*shape):
        out[index] = _substr_one(as_bytes(s_b[index]), p_b[index], n_b[index], unit, index)
    return out


register(OpDef("Substr", inputs=("input: string", "pos: T", "len: T"),
               outputs=("output: string",), attrs={"T": _INDEX_TYPES, "unit": "BYTE"},
               shape=_substr_shape, host=_substr_kernel, **_NO_GRAD))


@ragged_elementwise
def substr(input, pos, len, name=None, unit="BYTE"):  # noqa: A002 - TF's argument names
    """Substrings of `len` units (bytes or UTF-8 characters) from `pos` (negative: from
    the end); pos and len broadcast against `input` up to two dimensions. A `pos` past
    the end of a string is an InvalidArgumentError."""
    check_choice("Substr", "unit", unit, _UNITS)
    return apply_op("Substr", name=name, input=input, pos=pos, len=len, unit=unit)


# -- ReduceJoin -------------------------------------------------------------------------------
def _reduce_join_shape(op):
    """TF's ReductionShape."""
    input_shape, indices = op.inputs[0].shape, op.inputs[1]
    if indices.shape.ndims is not None and indices.shape.ndims > 1:
        raise ValueError(f"Shape must be at most rank 1 but is rank {indices.shape.ndims}")
    keep_dims = op.get_attr("keep_dims")
    axes = static_value(indices)
    if axes is None or input_shape.ndims is None:
        if keep_dims and input_shape.ndims is not None:
            return unknown_shape(input_shape.ndims)
        return unknown_shape()
    rank, reduced = input_shape.ndims, set()
    for axis in np.reshape(axes, -1).tolist():
        if not -rank <= axis < rank:
            raise ValueError(f"Invalid reduction dimension {axis} for input with {rank} "
                             f"dimensions.")
        reduced.add(axis % rank)
    return TensorShape([1 if i in reduced else d for i, d in enumerate(input_shape.dims)
                        if keep_dims or i not in reduced])


def _reduce_join_kernel(inputs, reduction_indices, keep_dims, separator):
    strings = np.asarray(inputs, object)
    rank = strings.ndim
    axes = []
    for axis in np.reshape(reduction_indices, -1).tolist():
        if not -rank <= axis < rank:
            raise errors.OutOfRangeError(None, None, f"Invalid reduction dimension {axis} "
                                                     f"for input with {rank} dimension(s)")
        if axis % rank in axes:
            raise kernel_error(f"Duplicate reduction dimension {axis}")
        axes.append(axis % rank)
    kept = [d for d in range(rank) if d not in axes]
    # TF walks the reduced dimensions with the first listed varying fastest: in numpy
    # order, the reversed list.
    order = kept + axes[::-1]
    moved = np.transpose(strings, order) if rank else strings
    out_shape = [1 if d in axes else strings.shape[d] for d in range(rank)
                 if keep_dims or d not in axes]
    rows = moved.reshape(int(np.prod([strings.shape[d] for d in kept], dtype=np.int64)), -1) \
        if strings.size else np.empty((int(np.prod(out_shape, dtype=np.int64)), 0), object)
    sep = as_bytes(separator)
    return strings_like(out_shape, [sep.join(as_bytes(s) for s in row) for row in rows])


register(OpDef("ReduceJoin", inputs=("inputs: string", "reduction_indices: int32"),
               outputs=("output: string",), attrs={"keep_dims": False, "separator": ""},
               shape=_reduce_join_shape, host=_reduce_join_kernel, **_NO_GRAD))


def reduce_join(inputs, axis=None, keep_dims=None, separator="", name=None,
                reduction_indices=None, keepdims=None):
    """Joins the strings along `axis` (default: all of them, in row-major order) with
    `separator`; `keepdims` keeps reduced dimensions as 1. With several axes, the first
    listed varies fastest, as in TF's kernel. A RaggedTensor joins as TF's ragged
    reduction does (see _ragged_reduce_join)."""
    keepdims = deprecated_argument_lookup("keepdims", keepdims, "keep_dims", keep_dims)
    axis = deprecated_argument_lookup("axis", axis, "reduction_indices", reduction_indices)
    if is_ragged(inputs):
        with _graph.name_scope(name, "RaggedSegmentJoin", [inputs, axis]):
            return _ragged_reduce_join(to_tensor_or_ragged(inputs, dtype=_dtypes.string),
                                       axis, bool(keepdims), separator)
    with _graph.name_scope(None, "ReduceJoin", [inputs, axis]):
        inputs = convert_to_tensor(inputs, dtype=_dtypes.string)
        if axis is None:
            ndims = inputs.shape.ndims
            if ndims is not None:
                axis = convert_to_tensor(np.arange(ndims - 1, -1, -1, dtype=np.int32))
            else:
                axis = math_ops.range(array_ops.rank(inputs) - 1, -1, -1)
        return apply_op("ReduceJoin", name=name, inputs=inputs, reduction_indices=axis,
                        keep_dims=bool(keepdims), separator=separator)


def _ragged_reduce_join(rt, axis, keepdims, separator):
    """TF's ragged_reduce_aggregate with ReduceJoin / UnsortedSegmentJoin: a ragged axis
    joins the values of each row (axis 1) or the i-th values of all rows (axis 0) as
    segments; several axes are joined one at a time, the last first."""
    if not isinstance(rt, RaggedTensor):
        return reduce_join(rt, axis, keepdims=keepdims, separator=separator)
    if isinstance(axis, Tensor):
        axis = static_value(axis)
        if axis is None:
            raise ValueError("axis must be known at graph construction time.")
    if isinstance(axis, np.ndarray):
        axis = axis.tolist()
    if axis is None:
        # As TF: all axes join the flat values, and TF drops the separator here.
        result = reduce_join(rt.flat_values, None, keepdims=keepdims)
        for _ in range(rt.shape.ndims - 1 if keepdims else 0):
            result = array_ops.expand_dims(result, 0)
        return result
    ndims = rt.shape.ndims
    if isinstance(axis, (list, tuple)):
        if not axis:
            return rt
        if len(axis) > 1:
            axes = sorted(_positive_axis(a, ndims) for a in axis)
            inner = _ragged_reduce_join(rt, axes[-1], keepdims, separator)
            return _ragged_reduce_join(inner, axes[:-1], keepdims, separator)
        axis = axis[0]
    axis = _positive_axis(axis, ndims)
    if axis > 1:
        return rt.with_values(_ragged_reduce_join(rt.values, axis - 1, keepdims, separator))
    splits = rt.row_splits
    if axis == 0:
        lengths = splits[1:] - splits[:-1]
        num_segments = math_ops.maximum(reduce_ops.reduce_max(lengths), 0)
        segment_ids = ragged_range(lengths).values
    else:
        num_segments = array_ops.shape(splits)[0] - 1
        segment_ids = segment_ids_from_splits(splits)
    result = _segment_join(rt.values, segment_ids, num_segments, separator)
    if keepdims:
        result = _expand_dims(result, axis)
    return result


def _positive_axis(axis, ndims):
    if not -ndims <= axis < ndims:
        raise ValueError(f"axis={axis} out of bounds: expected {-ndims}<=axis<{ndims}")
    return axis % ndims


def _segment_join(data, segment_ids, num_segments, separator):
    """TF's _ragged_segment_aggregate: ragged data joins each output row's positions,
    the output row as long as its longest input row."""
    if not isinstance(data, RaggedTensor):
        return unsorted_segment_join(data, segment_ids, num_segments, separator)
    lengths = data.row_splits[1:] - data.row_splits[:-1]
    segment_ids = math_ops.cast(segment_ids, lengths.dtype)
    out_lengths = math_ops.maximum(
        unsorted_segment_max(lengths, segment_ids, num_segments), 0)
    out_splits = array_ops.concat([generator_ops.zeros([1], out_lengths.dtype),
                                   reduce_ops.cumsum(out_lengths)], axis=0)
    starts = gather(out_splits, segment_ids)
    positions = ragged_range(starts, starts + lengths).values
    values = _segment_join(data.values, positions, out_splits[-1], separator)
    return RaggedTensor.from_row_splits(values, out_splits, validate=False)


def _expand_dims(value, axis):
    """keepdims for a ragged reduction's result (axis 0 or 1)."""
    if not isinstance(value, RaggedTensor):
        return array_ops.expand_dims(value, axis)
    nrows = value.nrows()
    if axis == 0:
        splits = array_ops.stack([generator_ops.zeros([], nrows.dtype), nrows])
    else:
        splits = math_ops.range(nrows + 1, dtype=nrows.dtype)
    return RaggedTensor.from_row_splits(value, splits, validate=False)


# -- UnsortedSegmentJoin ----------------------------------------------------------------------
def _segment_join_shape(op):
    data, ids = op.inputs[0].shape, op.inputs[1].shape
    with_rank(op.inputs[2].shape, 0)
    if ids.ndims is None:
        return unknown_shape()
    if data.ndims is not None:
        if data.ndims < ids.ndims:
            raise ValueError(f"Shape must be at least rank {ids.ndims} but is rank "
                             f"{data.ndims}")
        for i, (a, b) in enumerate(zip(data.as_list(), ids.as_list())):
            if a is not None and b is not None and a != b:
                raise ValueError(f"Dimension {i} in both shapes must be equal, but are {a} "
                                 f"and {b}. Shapes are {data._bracket_str()} and "
                                 f"{ids._bracket_str()}.")
        suffix = data.dims[ids.ndims:]
    else:
        return unknown_shape()
    return TensorShape([scalar_input_dim(op, 2)]).concatenate(TensorShape(suffix))


def _segment_join_kernel(inputs, segment_ids, num_segments, separator):
    strings, ids = np.asarray(inputs, object), np.asarray(segment_ids)
    num_segments = np.asarray(num_segments)
    if num_segments.size == 0:
        raise kernel_error("Number of segments cannot be empty.")
    n = int(num_segments.reshape(-1)[0])
    if ids.ndim == 0:
        raise kernel_error("Segment_id cannot have rank 0")
    if ids.ndim > strings.ndim:
        raise errors.OutOfRangeError(None, None, f"Invalid segment_id rank {ids.ndim} for "
                                                 f"input with {strings.ndim} dimension(s)")
    for i in range(ids.ndim):
        if ids.shape[i] != strings.shape[i]:
            raise kernel_error(f"Segment dimension is {ids.shape[i]} while input dimension "
                               f"is {strings.ndim} in rank {i}")
    flat_ids = ids.reshape(-1)
    if flat_ids.size and (flat_ids.min() < 0 or flat_ids.max() >= n):
        raise kernel_error("segment_ids are not allowed to exceed num_segments or to have "
                           "negative values.")
    inner = strings.shape[ids.ndim:]
    rows = strings.reshape((flat_ids.size,) + inner)
    out = np.full((n,) + inner, b"", object)
    sep = as_bytes(separator)
    for k, segment in enumerate(flat_ids.tolist()):
        for index in np.ndindex(*inner):
            joined = out[(segment,) + index]
            # TF adds the separator only after a non-empty string, so empty inputs
            # collapse.
            out[(segment,) + index] = ((joined + sep if joined else b"")
                                       + as_bytes(rows[(k,) + index]))
    return out


register(OpDef("UnsortedSegmentJoin",
               inputs=("inputs: string", "segment_ids: Tindices",
                       "num_segments: Tnumsegments"),
               outputs=("output: string",),
               attrs={"Tindices": _INDEX_TYPES, "Tnumsegments": _INDEX_TYPES,
                      "separator": ""},
               type_defaults={"Tnumsegments": _dtypes.int32}, shape=_segment_join_shape,
               host=_segment_join_kernel, **_NO_GRAD))


def unsorted_segment_join(inputs, segment_ids, num_segments, separator="", name=None):
    """Joins the strings of each segment (rows of `inputs` by `segment_ids`, a prefix of
    its shape) with `separator`; empty segments give ""."""
    return apply_op("UnsortedSegmentJoin", name=name, inputs=inputs, segment_ids=segment_ids,
                    num_segments=num_segments, separator=separator)


# -- StringFormat -----------------------------------------------------------------------------
def _dtype_of(value):
    value = np.asarray(value)
    return _dtypes.string if value.dtype == object else _dtypes.as_dtype(value.dtype)


def _string_format_kernel(*inputs, template, placeholder, summarize):
    pieces = template.split(placeholder)
    if len(pieces) - 1 != len(inputs):
        raise kernel_error(f"num placeholders in template and num inputs must match: "
                           f"{len(pieces) - 1} vs. {len(inputs)}")
    text = [pieces[0]]
    for value, piece in zip(inputs, pieces[1:]):
        text.append(summarize_v2(value, _dtype_of(value), summarize))
        text.append(piece)
    return np.array(as_bytes("".join(text)), object)


register(OpDef("StringFormat", inputs=("inputs: list(T)",), outputs=("output: string",),
               attrs={"template": "%s", "placeholder": "%s", "summarize": 3},
               shape=lambda op: TensorShape([]), host=_string_format_kernel, **_NO_GRAD))


def string_format(template, inputs, placeholder="{}", summarize=3, name=None):
    """A string scalar: `template` with each `placeholder` replaced by the next tensor of
    `inputs` as tf.print shows it (the first and last `summarize` entries per
    dimension; -1: all)."""
    if isinstance(inputs, Tensor):
        inputs = [inputs]
    if template.count(placeholder) != len(inputs):
        raise ValueError(f"{template.count(placeholder)} placeholder(s) in template does not "
                         f"match {len(inputs)} tensor(s) provided as input")
    return apply_op("StringFormat", name=name, inputs=list(inputs), template=template,
                    placeholder=placeholder, summarize=summarize)
