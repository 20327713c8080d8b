"""Slicing: `Slice`, `StridedSlice`, `Split`/`SplitV` and `Tensor.__getitem__`.

A strided slice is described sparsely (`x[1:, ..., None, 3]`: one entry per index,
with bit masks saying which entries are ellipses, new axes, single indices, or have an
omitted begin/end). `_dense_spec` expands that to one entry per input dimension exactly
as TF's `ValidateStridedSliceOp` does; shape inference and the lowering both use it, so
they agree on every corner case. Begin/end/strides must be static for XLA, except that
single indices (`x[i]` with `i` a scalar tensor) may be computed at run time.

Gradients follow TF: a strided slice's is `StridedSliceGrad` (zeros with dy written
where the slice read, built from the same dense spec), a slice's pads dy back, and a
split's concatenates the outputs' gradients.
"""

from __future__ import annotations

import builtins
import sys
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import errors
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.operation import Tensor
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.framework.tensor_shape import Dimension, TensorShape, unknown_shape
from tensorflux._src.ops.array import array_ops as _array_ops
from tensorflux._src.ops.array.array_ops import stack
from tensorflux._src.ops.array.gather_ops import scatter_nd
from tensorflux._src.ops.array.generator_ops import ones_like
from tensorflux._src.ops.constant import constant
from tensorflux._src.ops.math import math_ops
from tensorflux._src.ops.math.math_ops import cast
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.op_helpers import (ANY, kernel_error, merge_shapes, static_input,
                                            static_scalar, with_rank, with_rank_at_least)
from tensorflux._src.ops.registry import OpDef, REQUIRED, register
from tensorflux._src.ops.shape_fns import static_shape_from_tensor, static_value

__all__ = ["newaxis", "slice", "split", "strided_slice"]

newaxis = None  # tf.newaxis: `x[:, tf.newaxis]` inserts a dimension of size 1

_I = _dtypes.INDEX
_PySlice = builtins.slice  # this module defines tf.slice


# -- Slice ----------------------------------------------------------------------------------
def _slice_shape(op):
    x, begin_t, size_t = op.inputs
    n = merge_shapes(with_rank(begin_t.shape, 1), with_rank(size_t.shape, 1)).dims[0].value
    x_shape = with_rank(x.shape, n) if n is not None else x.shape
    begin = static_shape_from_tensor(begin_t)  # partially known begin values
    sizes = static_value(size_t)
    if sizes is None:
        # size values may still be partly known; -1 entries read as unknown
        out = static_shape_from_tensor(size_t)
        return out if out.ndims is not None else unknown_shape(x_shape.ndims)
    dims = x_shape.dims if x_shape.ndims is not None else [Dimension(None)] * sizes.size
    begin_dims = begin.dims if begin.ndims is not None else [Dimension(None)] * sizes.size
    out = []
    for i, s in enumerate(int(s) for s in sizes.reshape(-1)):
        if s == -1:
            d, b = dims[i].value, begin_dims[i].value
            if d is not None and b is not None and d < b:
                raise ValueError(f"Negative dimension size caused by subtracting {b} from {d}")
            out.append(None if d is None or b is None else d - b)
        elif s < 0:
            raise ValueError(f"Out of bounds slicing on dimension {i} of length "
                             f"{dims[i].value}: sizes vector cannot be < -1, but was {s}")
        else:
            out.append(s)
    return TensorShape(out)


def _slice_lower(input, begin, size):  # noqa: A002
    sizes = [int(s) for s in static_input(size, "Slice", "size").reshape(-1)]
    if isinstance(begin, jax.core.Tracer):
        # A run-time begin is fine when every size is given: XLA's dynamic_slice
        # (which clamps the window into range instead of failing).
        if -1 in sizes:
            static_input(begin, "Slice", "begin (when a size is -1)")
        return jax.lax.dynamic_slice(input, [begin[i] for i in range(input.ndim)], sizes)
    starts = [int(b) for b in np.reshape(begin, -1)]
    if len(starts) != input.ndim or len(sizes) != input.ndim:
        raise kernel_error(f"Expected begin and size arguments to be 1-D tensors of size "
                           f"{input.ndim}, but got shapes [{len(starts)}] and [{len(sizes)}] "
                           f"instead.")
    index = []
    for i, (b, s, d) in enumerate(zip(starts, sizes, input.shape)):
        s = d - b if s == -1 else s
        if not 0 <= b <= d:
            raise kernel_error(f"Expected begin[{i}] in [0, {d}], but got {b}")
        if not 0 <= s <= d - b:
            raise kernel_error(f"Expected size[{i}] in [0, {d - b}], but got {s}")
        index.append(np.s_[b:b + s])
    return input[tuple(index)]


def _slice_grad(op, dy):
    x, begin = op.inputs[:2]
    x_shape = _array_ops.shape(x, out_type=begin.dtype)
    size = _array_ops.shape(op.outputs[0], out_type=begin.dtype)
    rank_ = begin.shape[0].value if begin.shape.ndims == 1 else x.shape.ndims
    if static_value(begin) is not None or rank_ is None:
        # As TF: pad dy back to the input's shape (begin before, the rest after).
        paddings = stack([begin, x_shape - size - begin], axis=1)
        return [_array_ops.pad(dy, paddings), None, None]
    # A run-time begin (XLA's dynamic_slice, which clamps the window into range): padding
    # needs static widths, so scatter dy to the positions the window read instead.
    start = math_ops.minimum(math_ops.maximum(begin, 0), x_shape - size)
    grids = []
    for k in builtins.range(rank_):
        line = math_ops.range(size[k]) + start[k]  # (size[k],)
        grids.append(_array_ops.broadcast_to(
            _array_ops.reshape(line, [-1 if j == k else 1 for j in builtins.range(rank_)]),
            size))
    return [scatter_nd(stack(grids, axis=-1), dy, x_shape), None, None]


register(OpDef("Slice", inputs=("input: T", "begin: Index", "size: Index"),
               outputs=("output: T",), attrs={"T": _dtypes.ALL, "Index": _I},
               shape=_slice_shape, lower=_slice_lower, grad=_slice_grad, strings_by_rank=True))


def slice(input_, begin, size, name=None):  # noqa: A001 - TF's public name
    """Extracts `size[i]` elements from `begin[i]` in each dimension (-1: all the rest)."""
    return apply_op("Slice", name=name, input=input_, begin=begin, size=size)


# -- StridedSlice ---------------------------------------------------------------------------
@dataclass
class _Dim:
    """One input dimension of a dense strided-slice spec."""

    begin: object  # int, or None when masked or not known statically
    end: object
    stride: int
    begin_masked: bool
    end_masked: bool
    shrink: bool
    sparse_index: int  # position in the begin/end vectors


_NEW_AXIS = "new axis"


def _dense_spec(rank_, n, strides, begin, end, masks, fail):
    """Expands the sparse spec to (dims, layout): one _Dim per input dimension, and the
    output layout as a list of input-dimension numbers and _NEW_AXIS markers (shrunk
    dimensions are left out). `begin`/`end` may be None when not known statically."""
    begin_mask, end_mask, ellipsis_mask, new_axis_mask, shrink_mask = masks
    if ellipsis_mask & (ellipsis_mask - 1):
        raise fail("Multiple ellipses in slice spec not allowed")
    entries = list(range(n))
    if not ellipsis_mask:
        entries.append("implicit ellipsis")  # an ellipsis is assumed at the end
    seen_ellipsis, new_after_ellipsis = False, 0
    for i in range(n):
        if seen_ellipsis and new_axis_mask & (1 << i) and not ellipsis_mask & (1 << i):
            new_after_ellipsis += 1
        if ellipsis_mask & (1 << i):
            seen_ellipsis = True
    dims, layout = [], []
    for pos, i in enumerate(entries):
        if i == "implicit ellipsis" or ellipsis_mask & (1 << i):
            # the ellipsis covers the dims the entries after it don't use
            stop = min(rank_ - (len(entries) - pos) + 1 + new_after_ellipsis, rank_)
            while len(dims) < stop:
                layout.append(len(dims))
                dims.append(_Dim(None, None, 1, True, True, False, -1))
        elif new_axis_mask & (1 << i):
            layout.append(_NEW_AXIS)
        else:
            if len(dims) == rank_:
                raise fail(f"Index out of range using input dim {len(dims)}; input has only "
                           f"{rank_} dims")
            shrink = bool(shrink_mask & (1 << i))
            if not shrink:
                layout.append(len(dims))
            dims.append(_Dim(None if begin is None else int(begin[i]),
                             None if end is None else int(end[i]), int(strides[i]),
                             bool(begin_mask & (1 << i)), bool(end_mask & (1 << i)), shrink, i))
    return dims, layout


def _dim_size(d: _Dim, size, index_name, fail):
    """The output length of one dense dimension (None if unknown); checks single indices."""
    if d.stride == 0:
        raise fail(f"strides[{index_name}] must be non-zero")
    if d.shrink:
        if d.stride <= 0:
            raise fail("only stride 1 allowed on non-range indexing.")
        if size is not None and d.begin is not None:
            i = d.begin + size if d.begin < 0 else d.begin
            if not 0 <= i < size:
                raise fail(f"slice index {i} of dimension {index_name} out of bounds.")
        return 1
    if size is None:
        return None
    if d.begin_masked and d.end_masked:
        return len(range(*_PySlice(None, None, d.stride).indices(size)))
    if (d.begin is None and not d.begin_masked) or (d.end is None and not d.end_masked):
        return None
    return len(range(*_python_slice(d).indices(size)))


def _python_slice(d: _Dim):
    # Python's slice clamps out-of-range bounds exactly as TF's canonicalization does.
    return _PySlice(None if d.begin_masked else d.begin, None if d.end_masked else d.end,
                    d.stride)


def _masks(attrs):
    return tuple(attrs[k] for k in ("begin_mask", "end_mask", "ellipsis_mask",
                                    "new_axis_mask", "shrink_axis_mask"))


def _strided_slice_shape(op):
    x, begin_t, end_t, strides_t = op.inputs
    spec = with_rank(begin_t.shape, 1)
    spec = merge_shapes(merge_shapes(spec, with_rank(end_t.shape, 1)),
                        with_rank(strides_t.shape, 1))
    n = spec.dims[0].value
    strides = static_value(strides_t)
    if x.shape.ndims is None or n is None or strides is None:
        return unknown_shape()
    masks = _masks(op._attrs)
    dims, layout = _dense_spec(x.shape.ndims, n, strides.reshape(-1), _value(begin_t),
                               _value(end_t), masks, ValueError)
    sizes = [_dim_size(d, x.shape.dims[i].value, i, ValueError) for i, d in enumerate(dims)]
    return TensorShape([1 if j is _NEW_AXIS else sizes[j] for j in layout])


def _value(tensor):
    v = static_value(tensor)
    return None if v is None else v.reshape(-1)


def _strided_index(op_type, shape, begin, end, strides, masks):
    """The dense index tuple (slices and single indices) for `x[spec]` of an x of `shape`,
    and the output layout. Single indices may be traced (computed at run time)."""
    strides = static_input(strides, op_type, "strides").reshape(-1)
    dynamic = isinstance(begin, jax.core.Tracer)
    static_begin = None if dynamic else np.reshape(begin, -1)
    static_end = None if isinstance(end, jax.core.Tracer) else np.reshape(end, -1)
    dims, layout = _dense_spec(len(shape), strides.size, strides, static_begin, static_end,
                               masks, kernel_error)
    index = []
    for k, d in enumerate(dims):
        _dim_size(d, shape[k], k, kernel_error)  # checks single indices
        if d.shrink:
            # A run-time single index is gathered by XLA (clamped into range).
            index.append(begin[d.sparse_index] if dynamic else
                         d.begin + shape[k] if d.begin < 0 else d.begin)
        elif (d.begin is None and not d.begin_masked) or (d.end is None and not d.end_masked):
            raise errors.StaticValueRequired(None, None,
                f"{op_type} needs the bounds of a range (x[a:b]) when the graph is compiled "
                "(XLA requires static shapes), but its begin/end vector depends on a fed, "
                "variable or random value. Only single indices (x[i]) may be computed at "
                "run time; note that x[1:, i] packs 1 and i into one begin vector, so write "
                "x[1:][:, i] instead.")
        else:
            index.append(_python_slice(d))
    return tuple(index), layout


def _strided_slice_lower(input, begin, end, strides, begin_mask, end_mask,  # noqa: A002
                         ellipsis_mask, new_axis_mask, shrink_axis_mask):
    masks = (begin_mask, end_mask, ellipsis_mask, new_axis_mask, shrink_axis_mask)
    index, layout = _strided_index("StridedSlice", input.shape, begin, end, strides, masks)
    if any(isinstance(i, jax.core.Tracer) for i in index):
        input = jnp.asarray(input)  # noqa: A001 - numpy can't take a traced index
    out = input[index]
    # Indexing dropped the shrunk dims; the new axes go in where the layout says.
    return jnp.reshape(out, [1 if j is _NEW_AXIS else out.shape[sum(
        1 for m in layout[:p] if m is not _NEW_AXIS)] for p, j in enumerate(layout)])


def _strided_slice_grad_lower(shape, begin, end, strides, dy, begin_mask, end_mask,
                              ellipsis_mask, new_axis_mask, shrink_axis_mask):
    # Zeros of the input's shape with dy written where the slice read (a slice never
    # reads one element twice, so writing is enough).
    masks = (begin_mask, end_mask, ellipsis_mask, new_axis_mask, shrink_axis_mask)
    dims = tuple(int(d) for d in static_input(shape, "StridedSliceGrad", "shape").reshape(-1))
    index, _ = _strided_index("StridedSliceGrad", dims, begin, end, strides, masks)
    index = tuple(i if isinstance(i, _PySlice) else _clamped(i, n)
                  for i, n in zip(index, dims))
    sliced = [len(range(*i.indices(n))) for i, n in zip(index, dims)
              if isinstance(i, _PySlice)]
    out = jnp.zeros(dims, dy.dtype)
    return out.at[index].set(jnp.reshape(dy, sliced))


def _clamped(i, n):
    """A run-time single index as the forward gather read it: wrapped once, then clamped."""
    if not isinstance(i, jax.core.Tracer):
        return i
    return jnp.clip(jnp.where(i < 0, i + n, i), 0, n - 1)


def _strided_slice_grad(op, dy):
    x, begin, end, strides = op.inputs
    return [apply_op("StridedSliceGrad", shape=_array_ops.shape(x, out_type=begin.dtype),
                     begin=begin, end=end, strides=strides, dy=dy, **_mask_attrs(op)),
            None, None, None]


def _strided_slice_grad_grad(op, ddx):
    begin, end, strides = op.inputs[1:4]
    return [None, None, None, None, strided_slice(ddx, begin, end, strides, **_mask_attrs(op))]


_MASKS = ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask")


def _mask_attrs(op):
    return {k: op.get_attr(k) for k in _MASKS}


register(OpDef(
    "StridedSlice",
    inputs=("input: T", "begin: Index", "end: Index", "strides: Index"),
    outputs=("output: T",),
    attrs={"T": _dtypes.ALL, "Index": _I, "begin_mask": 0, "end_mask": 0, "ellipsis_mask": 0,
           "new_axis_mask": 0, "shrink_axis_mask": 0},
    shape=_strided_slice_shape,
    lower=_strided_slice_lower,
    grad=_strided_slice_grad, strings_by_rank=True))
register(OpDef(
    "StridedSliceGrad",
    inputs=("shape: Index", "begin: Index", "end: Index", "strides: Index", "dy: T"),
    outputs=("output: T",),
    attrs={"T": ANY, "Index": _I, "begin_mask": 0, "end_mask": 0, "ellipsis_mask": 0,
           "new_axis_mask": 0, "shrink_axis_mask": 0},
    shape=lambda op: static_shape_from_tensor(op.inputs[0]),
    lower=_strided_slice_grad_lower,
    grad=_strided_slice_grad_grad,
))


def strided_slice(input_, begin, end, strides=None, begin_mask=0, end_mask=0,
                  ellipsis_mask=0, new_axis_mask=0, shrink_axis_mask=0, var=None, name=None):
    """TF's strided slice: `input_[begin:end:strides]` per dimension, controlled by masks."""
    del var  # variable slice assignment arrives with variables
    if strides is None:
        strides = ones_like(begin)
    return apply_op("StridedSlice", name=name, input=input_, begin=begin, end=end,
                    strides=strides, begin_mask=begin_mask, end_mask=end_mask,
                    ellipsis_mask=ellipsis_mask, new_axis_mask=new_axis_mask,
                    shrink_axis_mask=shrink_axis_mask)


# -- Split / SplitV -------------------------------------------------------------------------
def _split_axis(axis_t, rank_):
    """TF's MakeDimForScalarInputWithNegativeIndexing: the split axis, or None."""
    axis = static_scalar(axis_t)
    if axis is None or (axis < 0 and rank_ is None):
        return None
    if rank_ is not None and not -rank_ <= axis < rank_:
        raise ValueError(f"Dimension size, given by scalar input {axis} must be in range "
                         f"[-{rank_}, {rank_})")
    return axis % rank_ if axis < 0 else axis


def _split_shape(op):
    value, num = op.inputs[1].shape, op.get_attr("num_split")
    axis = _split_axis(op.inputs[0], value.ndims)
    if axis is None:
        return [unknown_shape(value.ndims)] * num
    value = with_rank_at_least(value, axis + 1)
    if value.ndims is None:
        return [unknown_shape()] * num
    dims = value.as_list()
    if dims[axis] is not None:
        if dims[axis] % num:
            raise ValueError(f"Dimension size must be evenly divisible by {num} but is "
                             f"{dims[axis]}\n\tNumber of ways to split should evenly divide "
                             f"the split dimension")
        dims[axis] //= num
    return [TensorShape(dims)] * num


def _split_lower(split_dim, value, num_split):
    axis = int(static_input(split_dim, "Split", "split_dim"))
    if not -value.ndim <= axis < value.ndim:
        raise kernel_error(f"-input rank(-{value.ndim}) <= split_dim < input rank "
                           f"({value.ndim}), but got {axis}")
    axis %= value.ndim
    if value.shape[axis] % num_split:
        raise kernel_error(f"Number of ways to split should evenly divide the split "
                           f"dimension, but got split_dim {axis} (size = {value.shape[axis]}) "
                           f"and num_split {num_split}")
    return jnp.split(value, num_split, axis)


register(OpDef("Split", inputs=("split_dim: int32", "value: T"), outputs=("output: num_split * T",),
               attrs={"T": _dtypes.ALL, "num_split": REQUIRED}, shape=_split_shape,
               lower=_split_lower,
               grad=lambda op, *dys: [None, _array_ops.concat(list(dys), op.inputs[0])],
               strings_by_rank=True))


def _resolve_sizes(sizes, total, fail):
    """Size splits with at most one -1, resolved against the split dimension's size."""
    if sum(s == -1 for s in sizes) > 1:
        raise fail("size_splits can only have one -1")
    known = sum(s for s in sizes if s != -1)
    if total is None:
        return [None if s == -1 else s for s in sizes]
    if (-1 in sizes and known > total) or (-1 not in sizes and known != total):
        raise fail(f"can't split axis of size {total} into pieces of size "
                   f"[{','.join(map(str, sizes))}]")
    return [total - known if s == -1 else s for s in sizes]


def _split_v_shape(op):
    value, num = op.inputs[0].shape, op.get_attr("num_split")
    if value.ndims is None:
        return [unknown_shape()] * num
    if value.ndims == 0:
        raise ValueError("Can't split scalars")
    axis = _split_axis(op.inputs[2], value.ndims)
    sizes = static_value(op.inputs[1])
    if axis is None:
        return [unknown_shape(value.ndims)] * num
    dims = value.as_list()
    if sizes is None:
        return [TensorShape(dims[:axis] + [None] + dims[axis + 1:])] * num
    sizes = [int(s) for s in sizes.reshape(-1)]
    if len(sizes) != num:
        raise ValueError("Length of size_splits should be equal to num_outputs")
    sizes = _resolve_sizes(sizes, dims[axis], ValueError)
    return [TensorShape(dims[:axis] + [s] + dims[axis + 1:]) for s in sizes]


def _split_v_lower(value, size_splits, split_dim):
    axis = int(static_input(split_dim, "SplitV", "split_dim")) % value.ndim
    sizes = [int(s) for s in static_input(size_splits, "SplitV", "size_splits").reshape(-1)]
    sizes = _resolve_sizes(sizes, value.shape[axis], kernel_error)
    return jnp.split(value, np.cumsum(sizes)[:-1].tolist(), axis)


register(OpDef("SplitV", inputs=("value: T", "size_splits: Tlen", "split_dim: int32"),
               outputs=("output: num_split * T",),
               attrs={"T": _dtypes.ALL, "Tlen": _I, "num_split": REQUIRED}, shape=_split_v_shape,
               lower=_split_v_lower,
               grad=lambda op, *dys: [_array_ops.concat(list(dys), op.inputs[2]), None, None],
               strings_by_rank=True))


def split(value, num_or_size_splits, axis=0, num=None, name="split"):
    """Splits `value` into `num_or_size_splits` equal parts, or parts of the given sizes."""
    if isinstance(num_or_size_splits, (int, np.integer, Dimension)) and \
            not isinstance(num_or_size_splits, bool):
        return apply_op("Split", name=name, split_dim=axis, value=value,
                        num_split=int(num_or_size_splits))
    size_splits = convert_to_tensor(num_or_size_splits)
    if size_splits.shape.ndims == 0:
        raise ValueError(f"Rank-0 tensors are not supported as the num_or_size_splits "
                         f"argument to split. Argument provided: {num_or_size_splits}")
    if num is None:
        if size_splits.shape.ndims:
            num = size_splits.shape.dims[0].value
        if num is None:
            raise ValueError(f"Cannot infer num from shape {num_or_size_splits}")
    return apply_op("SplitV", name=name, value=value, size_splits=size_splits, split_dim=axis,
                    num_split=num)


# -- Tensor.__getitem__ ---------------------------------------------------------------------
_SLICE_TYPE_ERROR = ("Only integers, slices (`:`), ellipsis (`...`), tf.newaxis (`None`) and "
                     "scalar tf.int32/tf.int64 tensors are valid indices")


def _check_index(idx):
    if isinstance(idx, (int, np.integer, Dimension)) and not isinstance(idx, bool):
        return
    # Anything else must be a scalar int32/int64 tensor or array.
    dtype = getattr(idx, "dtype", None)
    try:
        ok = dtype is not None and _dtypes.as_dtype(dtype).base_dtype in _I
    except TypeError:
        ok = False
    shape = getattr(idx, "shape", None)
    ndims = shape.ndims if isinstance(shape, TensorShape) else np.ndim(idx)
    if not ok or ndims not in (None, 0):
        raise TypeError(f"{_SLICE_TYPE_ERROR}, got {idx!r}")


def _as_index(idx):
    return idx.value if isinstance(idx, Dimension) else idx


def slice_helper(tensor, slice_spec):
    """`tensor[slice_spec]` with TF1's rules; builds one StridedSlice named strided_slice."""
    if isinstance(slice_spec, bool) or \
            (isinstance(slice_spec, Tensor) and slice_spec.dtype == _dtypes.bool) or \
            (isinstance(slice_spec, np.ndarray) and slice_spec.dtype == bool):
        raise NotImplementedError("Indexing with a boolean mask (tf.boolean_mask) gives a "
                                  "data-dependent shape; tensorflux does not support it yet.")
    if not isinstance(slice_spec, (list, tuple)):
        slice_spec = [slice_spec]
    begin, end, strides = [], [], []
    begin_mask = end_mask = ellipsis_mask = new_axis_mask = shrink_axis_mask = 0
    for index, s in enumerate(slice_spec):
        bit = 1 << index
        if isinstance(s, _PySlice):
            # Python fills in sys.maxsize for some omitted stops (`a[:]` on old types).
            if s.start is not None and (isinstance(s.start, Tensor) or s.start != sys.maxsize):
                _check_index(s.start)
                begin.append(_as_index(s.start))
            else:
                begin.append(0)
                begin_mask |= bit
            if s.stop is not None and (isinstance(s.stop, Tensor) or s.stop != sys.maxsize):
                _check_index(s.stop)
                end.append(_as_index(s.stop))
            else:
                end.append(0)
                end_mask |= bit
            if s.step is not None:
                _check_index(s.step)
                strides.append(_as_index(s.step))
            else:
                strides.append(1)
        elif s is Ellipsis or s is None:  # None is tf.newaxis
            begin.append(0)
            end.append(0)
            strides.append(1)
            if s is None:
                new_axis_mask |= bit
            else:
                ellipsis_mask |= bit
        else:
            _check_index(s)
            s = _as_index(s)
            begin.append(s)
            end.append(s + 1)
            strides.append(1)
            shrink_axis_mask |= bit
    with _graph.name_scope(None, "strided_slice", [tensor] + begin + end + strides) as name:
        if begin:
            packed = [stack(begin), stack(end), stack(strides)]
            if any(p.dtype == _dtypes.int64 for p in packed):
                packed = [cast(p, _dtypes.int64) for p in packed]
        else:
            empty = constant([], dtype=_dtypes.int32)
            packed = [empty, empty, empty]
        return strided_slice(tensor, *packed, begin_mask=begin_mask, end_mask=end_mask,
                             shrink_axis_mask=shrink_axis_mask, new_axis_mask=new_axis_mask,
                             ellipsis_mask=ellipsis_mask, name=name)
