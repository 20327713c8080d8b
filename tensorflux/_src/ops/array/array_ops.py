"""Structural ops: shape queries, reshaping, transposing, joining, padding, diagonals.

One OpDef record per op. Inputs that decide an output shape (a reshape's `shape`, a
tile's `multiples`, paddings, axes) must be known when XLA compiles the graph; the
lowerings read them through `static_input`, which names the op and input when they are
not. Shape functions follow TF's C++ shape functions, including their messages.

More of TF's array_ops lives in sibling families: slice/strided_slice/split/getitem in
slicing_ops, gather/one_hot/where in gather_ops, fill/zeros/ones in generator_ops (range
is math_ops', as in TF). Also here: stop_gradient and invert_permutation.
The records' gradients are attached by array_grads.py (they use slices and reductions,
which sit above this module).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from tensorflux._src.framework import dispatch as _dispatch
from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.operation import Tensor
from tensorflux._src.framework.tensor_conversion import (_contains_tensor, convert_to_tensor,
                                                         register_tensor_conversion_function)
from tensorflux._src.framework.tensor_shape import TensorShape, unknown_shape
from tensorflux._src.ops.math import math_ops
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.op_helpers import (deprecated_argument_lookup, dims_str, kernel_error,
                                            merge_shapes, shape_arg,
                                            static_input, static_scalar, with_rank,
                                            with_rank_at_least)
from tensorflux._src.ops.registry import OpDef, REQUIRED, register
from tensorflux._src.ops.shape_fns import static_shape_from_tensor, static_value, unchanged

__all__ = [
    "broadcast_to", "concat", "diag", "diag_part", "expand_dims", "identity",
    "invert_permutation", "matrix_transpose", "pad", "rank", "reshape", "reverse",
    "reverse_v2", "shape", "size", "squeeze", "stack", "stop_gradient", "tile", "transpose",
    "unstack",
]

_I = _dtypes.INDEX


# -- the existing structural ops --------------------------------------------------------
register(OpDef("Identity", inputs=("input: T",), outputs=("output: T",),
               attrs={"T": _dtypes.ALL}, shape=unchanged, lower=lambda x: x))


def identity(input, name=None):  # noqa: A002 - TF's argument name
    """Returns a tensor with the same value as `input` (a new node in the graph)."""
    return apply_op("Identity", name=name, input=input)


register(OpDef("StopGradient", inputs=("input: T",), outputs=("output: T",),
               attrs={"T": _dtypes.ALL}, shape=unchanged, lower=lambda input: input,
               not_differentiable=True))


def stop_gradient(input, name=None):  # noqa: A002 - TF's argument name
    """Identity in the forward pass; blocks gradients in the backward pass."""
    return apply_op("StopGradient", name=name, input=input)


# -- InvertPermutation ------------------------------------------------------------------------
def _invert_permutation_lower(x):
    if isinstance(x, np.ndarray):  # static: stays numpy, so a transpose's perm stays static
        n = x.size
        out = np.full(n, -1, x.dtype)
        for i, d in enumerate(x.reshape(-1)):
            if not 0 <= d < n:
                raise kernel_error(f"{d} is not between 0 and {n}")
            if out[d] != -1:
                raise kernel_error(f"{d} is duplicated in the input.")
            out[d] = i
        return out
    return jnp.zeros_like(x).at[x].set(jnp.arange(x.shape[0], dtype=x.dtype))


def _rank1(op):
    s = op.inputs[0].shape
    if s.ndims not in (None, 1):
        raise ValueError(f"Shape must be rank 1 but is rank {s.ndims}")
    return s if s.ndims is not None else unknown_shape(1)


register(OpDef("InvertPermutation", inputs=("x: T",), outputs=("y: T",),
               attrs={"T": _dtypes.INDEX}, shape=_rank1, lower=_invert_permutation_lower,
               not_differentiable=True))


def invert_permutation(x, name=None):
    """The inverse permutation: y[x[i]] = i."""
    return apply_op("InvertPermutation", name=name, x=x)


# Shapes are static inside XLA, so these lower to numpy values that fold further.
register(OpDef("Shape", inputs=("input: T",), outputs=("output: out_type",),
               attrs={"T": _dtypes.ALL, "out_type": _dtypes.INDEX},
               shape=lambda op: TensorShape([op.inputs[0].shape.ndims]),
               lower=lambda x, out_type: np.array(x.shape, out_type.as_numpy_dtype),
               not_differentiable=True))
register(OpDef("Size", inputs=("input: T",), outputs=("output: out_type",),
               attrs={"T": _dtypes.ALL, "out_type": _dtypes.INDEX},
               shape=lambda op: TensorShape([]),
               lower=lambda x, out_type: np.array(int(np.prod(x.shape)), out_type.as_numpy_dtype),
               not_differentiable=True))
register(OpDef("Rank", inputs=("input: T",), outputs=("output: int32",),
               attrs={"T": _dtypes.ALL}, shape=lambda op: TensorShape([]),
               lower=lambda x: np.array(len(x.shape), np.int32), not_differentiable=True))


def shape(input, name=None, out_type=_dtypes.int32):  # noqa: A002
    """The shape of `input` as a 1-D tensor."""
    return apply_op("Shape", name=name, input=input, out_type=out_type)


def size(input, name=None, out_type=_dtypes.int32):  # noqa: A002
    """The number of elements of `input`."""
    return apply_op("Size", name=name, input=input, out_type=out_type)


def rank(input, name=None):  # noqa: A002
    """The number of dimensions of `input`."""
    return apply_op("Rank", name=name, input=input)


def _pack_shape(op):
    axis = op.get_attr("axis")
    shape = unknown_shape()
    for t in op.inputs:
        if not shape.is_compatible_with(t.shape):
            raise ValueError(f"Shapes must be equal rank, but are {shape.ndims} and "
                             f"{t.shape.ndims}" if shape.ndims != t.shape.ndims else
                             f"Shapes {shape} and {t.shape} are not compatible")
        shape = shape.merge_with(t.shape)
    if shape.ndims is None:
        return unknown_shape()
    rank_out = shape.ndims + 1
    if not -rank_out <= axis < rank_out:
        raise ValueError(f"Invalid axis: {axis}; must be in [{-rank_out},{rank_out})")
    axis %= rank_out
    dims = shape.as_list()
    return TensorShape(dims[:axis] + [len(op.inputs)] + dims[axis:])


register(OpDef("Pack", inputs=("values: N * T",), outputs=("output: T",),
               # resource: TF's QueueBase.from_list stacks queue handles.
               attrs={"T": _dtypes.ALL + (_dtypes.resource,), "axis": 0}, shape=_pack_shape,
               lower=lambda *values, axis: jnp.stack(values, axis),
               strings_by_rank=True))


def stack(values, axis=0, name="stack"):
    """Stacks a list of rank-R tensors into one rank-(R+1) tensor along `axis`.

    As in TF, a list of plain values stacked on axis 0 becomes one constant.
    """
    if axis == 0:
        try:
            return convert_to_tensor(values, name=name)
        except (TypeError, ValueError):
            pass  # holds tensors of different types, or ragged values: use Pack
    ndims = _static_ndims(values[0]) if values else None
    if ndims is not None and not -(ndims + 1) <= axis < ndims + 1:
        raise ValueError(f"axis = {axis} not in [{-(ndims + 1)}, {ndims + 1})")
    return apply_op("Pack", name=name, values=list(values), axis=axis)


def _static_ndims(value):
    if isinstance(value, Tensor):
        return value.shape.ndims
    try:
        return np.ndim(value)
    except (NotImplementedError, TypeError, ValueError):  # a nested list holding Tensors
        return None


def _autopacking_helper(values, dtype, name):
    """Packs a nested list holding Tensors (TF's auto-packing in convert_to_tensor)."""
    with _graph.name_scope(name) as scope:
        elems = []
        for i, v in enumerate(values):
            if isinstance(v, (list, tuple)):
                elems.append(_autopacking_helper(v, dtype, str(i)))
            else:
                elems.append(convert_to_tensor(v, dtype=dtype) if dtype is not None
                             else v)
        return apply_op("Pack", name=scope, values=elems)


def _autopacking_conversion(value, dtype=None, name=None, as_ref=False):
    """Lists and tuples that hold Tensors become a Pack op, as in TF (whose array_ops
    registers this conversion too; convert_to_tensor lives below the ops)."""
    if not _contains_tensor(value):
        return NotImplemented
    return _autopacking_helper(value, dtype, name or "packed")


register_tensor_conversion_function((list, tuple), _autopacking_conversion, priority=99)


# -- Unpack -------------------------------------------------------------------------------
def _unpack_shape(op):
    s, num, axis = op.inputs[0].shape, op.get_attr("num"), op.get_attr("axis")
    if s.ndims is None:
        return [unknown_shape()] * num
    if not -s.ndims <= axis < s.ndims:
        raise ValueError(f"Invalid axis: {axis}; must be in [{-s.ndims},{s.ndims})")
    dims = s.as_list()
    axis %= s.ndims
    if dims[axis] is not None and dims[axis] != num:
        raise ValueError(f"Dimension must be {num} but is {dims[axis]}")
    return [TensorShape(dims[:axis] + dims[axis + 1:])] * num


def _unpack_lower(value, num, axis):
    if value.shape[axis] != num:
        raise kernel_error(f"Input shape axis {axis} must equal {num}, got shape "
                           f"{dims_str(value.shape)}")
    moved = jnp.moveaxis(value, axis, 0)
    return [moved[i] for i in range(num)]


register(OpDef("Unpack", inputs=("value: T",), outputs=("output: num * T",),
               attrs={"T": _dtypes.ALL, "num": REQUIRED, "axis": 0}, shape=_unpack_shape,
               lower=_unpack_lower, strings_by_rank=True))


def unstack(value, num=None, axis=0, name="unstack"):
    """Unpacks the `axis` dimension of `value` into a list of `num` tensors."""
    if num is None:
        value = convert_to_tensor(value)
        value_shape = value.shape
        if value_shape.ndims is not None:
            if axis < -value_shape.ndims or axis >= value_shape.ndims:
                raise ValueError(f"axis = {axis} not in [{-value_shape.ndims}, "
                                 f"{value_shape.ndims})")
            num = value_shape.dims[axis].value
        if num is None:
            raise ValueError(f"Cannot infer num from shape {value_shape}")
    return apply_op("Unpack", name=name, value=value, num=num, axis=axis)


# -- Reshape ------------------------------------------------------------------------------
def _reshape_shape(op):
    x, shape_t = op.inputs
    with_rank(shape_t.shape, 1)
    value = static_value(shape_t)
    if value is not None and value.size and value.min() < -1:
        raise ValueError(f"Invalid value in tensor used for shape: {value.min()}")
    out = static_shape_from_tensor(shape_t)
    if out.ndims is None or x.shape.ndims is None:
        return out
    in_dims, out_dims = x.shape.as_list(), out.as_list()
    in_unknown = [i for i, d in enumerate(in_dims) if d is None]
    out_unknown = [i for i, d in enumerate(out_dims) if d is None]
    if len(in_unknown) > 1 or len(out_unknown) > 1:
        return out
    known_in = int(np.prod([d for d in in_dims if d is not None]))
    known_out = int(np.prod([d for d in out_dims if d is not None]))
    if not in_unknown and not out_unknown and known_in != known_out:
        raise ValueError(f"Cannot reshape a tensor with {known_in} elements to shape "
                         f"{out._bracket_str()} ({known_out} elements)")
    if not in_unknown and out_unknown and known_out > 0:
        if known_in % known_out:
            raise ValueError(f"Dimension size must be evenly divisible by {known_out} but "
                             f"is {known_in}")
        out_dims[out_unknown[0]] = known_in // known_out
    elif in_unknown and not out_unknown and known_in != 0 and known_out % known_in:
        raise ValueError(f"Dimension size must be evenly divisible by {known_in} but is "
                         f"{known_out}")
    return TensorShape(out_dims)


def _reshape_lower(tensor, shape):
    dims = [int(d) for d in static_input(shape, "Reshape", "shape").reshape(-1)]
    n = int(np.prod(tensor.shape))
    wild = [i for i, d in enumerate(dims) if d == -1]
    if len(wild) > 1:
        raise kernel_error(f"Only one input size may be -1, not both {wild[0]} and {wild[1]}")
    known = int(np.prod([d for d in dims if d != -1]))
    if wild:
        if known == 0 or n % known:
            raise kernel_error(f"Input to reshape is a tensor with {n} values, but the "
                               f"requested shape requires a multiple of {known}")
    elif known != n:
        raise kernel_error(f"Input to reshape is a tensor with {n} values, but the requested "
                           f"shape has {known}")
    return jnp.reshape(tensor, dims)


register(OpDef("Reshape", inputs=("tensor: T", "shape: Tshape"), outputs=("output: T",),
               attrs={"T": _dtypes.ALL, "Tshape": _I}, shape=_reshape_shape, lower=_reshape_lower,
               strings_by_rank=True))


def reshape(tensor, shape, name=None):
    """Gives `tensor` a new shape with the same elements; one dimension may be -1."""
    return apply_op("Reshape", name=name, tensor=tensor, shape=shape_arg(shape))


# -- Transpose ----------------------------------------------------------------------------
def _transpose_shape(op):
    x, perm_t = op.inputs
    perm = static_value(perm_t)
    n = perm_t.shape.num_elements() if perm_t.shape.ndims == 1 else None
    rank_ = x.shape.ndims
    if rank_ is None:
        rank_ = n if n is not None else (perm.size if perm is not None else None)
        if rank_ is None:
            return unknown_shape()
        if rank_ < 2:
            return x.shape  # a 1-element perm is ambiguous: scalar or vector, both unchanged
    with_rank(perm_t.shape, 1)
    if n is not None and n != rank_:
        raise ValueError(f"Dimension must be {rank_} but is {n}")
    if perm is None:
        return unknown_shape(rank_)
    dims = x.shape.dims if x.shape.ndims is not None else [None] * rank_
    for p in perm.reshape(-1):
        if p >= rank_:
            raise ValueError(f"perm dim {p} is out of range of input rank {rank_}")
    return TensorShape([dims[int(p)] for p in perm.reshape(-1)])


def _make_transpose_lower(op_type, conjugate):
    def lower(x, perm):
        perm = [int(p) for p in static_input(perm, op_type, "perm").reshape(-1)]
        if len(perm) != x.ndim:
            raise kernel_error(f"transpose expects a vector of size {x.ndim}. But input(1) is "
                               f"a vector of size {len(perm)}")
        for p in perm:
            if not 0 <= p < x.ndim:
                raise kernel_error(f"{p} is out of range [0 .. {x.ndim})")
        for i in range(x.ndim):
            if i not in perm:
                raise kernel_error(f"{i} is missing from {{{','.join(map(str, perm))}}}.")
        y = jnp.transpose(x, perm)
        return jnp.conj(y) if conjugate else y
    return lower


for _op_type, _conjugate in (("Transpose", False), ("ConjugateTranspose", True)):
    register(OpDef(_op_type, inputs=("x: T", "perm: Tperm"), outputs=("y: T",),
                   attrs={"T": _dtypes.ALL, "Tperm": _I}, shape=_transpose_shape,
                   lower=_make_transpose_lower(_op_type, _conjugate),
                   strings_by_rank=True))


def transpose(a, perm=None, name="transpose", conjugate=False):
    """Permutes the dimensions of `a` (reversed when `perm` is None); conjugates if asked."""
    with _graph.name_scope(name, "transpose", [a]) as scope:
        a = convert_to_tensor(a, name="a")
        op_type = "ConjugateTranspose" if conjugate and a.dtype.is_complex else "Transpose"
        if perm is None:
            if a.shape.ndims is not None:
                perm = np.arange(a.shape.ndims - 1, -1, -1, dtype=np.int32)
            else:
                perm = math_ops.range(math_ops.subtract(rank(a), 1), -1, -1)
        return apply_op(op_type, name=scope, x=a, perm=perm)


def matrix_transpose(a, name="matrix_transpose", conjugate=False):
    """Transposes the last two dimensions of a (batch of) matrix."""
    with _graph.name_scope(name, values=[a]):
        a = convert_to_tensor(a, name="a")
        ndims = a.shape.ndims
        if ndims is not None:
            if ndims < 2:
                raise ValueError(f"Argument 'a' should be a (batch) matrix, with rank >= 2.  "
                                 f"Found: {a.shape}")
            perm = list(range(ndims - 2)) + [ndims - 1, ndims - 2]
        else:
            a_rank = rank(a)
            perm = concat([math_ops.range(0, math_ops.subtract(a_rank, 2), 1),
                           stack([math_ops.subtract(a_rank, 1),
                                  math_ops.subtract(a_rank, 2)])], 0)
        return transpose(a, perm=perm, conjugate=conjugate)


# -- ExpandDims / Squeeze -------------------------------------------------------------------
def _expand_dims_shape(op):
    x, dim_t = op.inputs
    dim = static_value(dim_t)
    if dim is not None and dim.size != 1:
        raise ValueError("'dim' input must be a tensor with a single value")
    if dim is None or x.shape.ndims is None:
        return unknown_shape()
    rank_, d = x.shape.ndims, int(dim.reshape(-1)[0])
    if not -rank_ - 1 <= d <= rank_:
        raise ValueError(f"dim {d} not in the interval [{-rank_ - 1}, {rank_}].")
    d = d + rank_ + 1 if d < 0 else d
    dims = x.shape.as_list()
    return TensorShape(dims[:d] + [1] + dims[d:])


def _expand_dims_lower(input, dim):  # noqa: A002
    d = int(static_input(dim, "ExpandDims", "dim").reshape(-1)[0])
    if not -input.ndim - 1 <= d <= input.ndim:
        raise kernel_error(f"Tried to expand dim index {d} for tensor with {input.ndim} "
                           f"dimensions.")
    return jnp.expand_dims(input, d)


register(OpDef("ExpandDims", inputs=("input: T", "dim: Tdim"), outputs=("output: T",),
               attrs={"T": _dtypes.ALL, "Tdim": _I}, shape=_expand_dims_shape,
               lower=_expand_dims_lower, strings_by_rank=True))


def expand_dims(input, axis=None, name=None, dim=None):  # noqa: A002
    """Inserts a dimension of size 1 at `axis` (`dim` is the deprecated name)."""
    axis = deprecated_argument_lookup("axis", axis, "dim", dim)
    if axis is None:
        raise ValueError("Must specify an axis argument to tf.expand_dims()")
    return apply_op("ExpandDims", name=name, input=input, dim=axis)


def _squeeze_dims(rank_, squeeze_dims, fail):
    out = []
    for i, d in enumerate(squeeze_dims):
        if not -rank_ <= d < rank_:
            raise fail(f"squeeze_dims[{i}] not in [{-rank_},{rank_}).")
        out.append(d % rank_)
    return out


def _squeeze_shape(op):
    s = op.inputs[0].shape
    if s.ndims is None:
        return unknown_shape()
    wanted = _squeeze_dims(s.ndims, op.get_attr("squeeze_dims"), ValueError)
    dims = []
    for i, d in enumerate(s.as_list()):
        if d is None:
            if i in wanted:
                continue  # assumed to be 1 at run time
            if not wanted:
                return unknown_shape()  # squeezing every 1: can't tell which dims go
        elif d == 1:
            if i in wanted or not wanted:
                continue
        elif i in wanted:
            raise ValueError(f"Can not squeeze dim[{i}], expected a dimension of 1, got {d}")
        dims.append(d)
    return TensorShape(dims)


def _squeeze_lower(input, squeeze_dims):  # noqa: A002
    wanted = _squeeze_dims(input.ndim, squeeze_dims, kernel_error)
    for i in wanted:
        if input.shape[i] != 1:
            raise kernel_error(f"Can not squeeze dim[{i}], expected a dimension of 1, got "
                               f"{input.shape[i]}")
    if not wanted:
        wanted = [i for i, d in enumerate(input.shape) if d == 1]
    return jnp.squeeze(input, tuple(wanted))


register(OpDef("Squeeze", inputs=("input: T",), outputs=("output: T",),
               attrs={"T": _dtypes.ALL, "squeeze_dims": ()}, shape=_squeeze_shape,
               lower=_squeeze_lower, strings_by_rank=True))


def squeeze(input, axis=None, name=None, squeeze_dims=None):  # noqa: A002
    """Removes dimensions of size 1 (all of them, or those listed in `axis`)."""
    if squeeze_dims is not None:
        if axis is not None:
            raise ValueError("Cannot specify both 'squeeze_dims' and 'axis'")
        axis = squeeze_dims
    if axis is None:
        axis = []
    elif np.isscalar(axis):
        axis = [axis]
    return apply_op("Squeeze", name=name, input=input,
                    squeeze_dims=tuple(int(a) for a in axis))


# -- ConcatV2 -------------------------------------------------------------------------------
def _concat_shape(op):
    values, axis_t = op.inputs[:-1], op.inputs[-1]
    with_rank(axis_t.shape, 0)
    axis = static_scalar(axis_t)
    ranks = [v.shape.ndims for v in values if v.shape.ndims is not None]
    if axis is None:
        if not ranks:
            return unknown_shape()
        if ranks[0] == 0:
            raise ValueError("Can't concatenate scalars (use tf.stack instead)")
        for v in values:
            with_rank(v.shape, ranks[0])
        return unknown_shape(ranks[0])
    min_rank = -axis if axis < 0 else axis + 1
    before = after = unknown_shape()
    middle = 0
    for v in reversed(values):  # TF merges from the last input backwards
        with_rank_at_least(v.shape, min_rank)
        if v.shape.ndims is None:
            middle = None
            continue
        dims = v.shape.as_list()
        a = axis % len(dims)
        before = merge_shapes(TensorShape(dims[:a]), before)
        after = merge_shapes(TensorShape(dims[a + 1:]), after)
        middle = None if middle is None or dims[a] is None else middle + dims[a]
    if before.ndims is None:
        return unknown_shape()
    return before.concatenate([middle]).concatenate(after)


def _concat_lower(*args):
    values, axis = args[:-1], int(static_input(args[-1], "ConcatV2", "axis"))
    rank_ = values[0].ndim
    if not -rank_ <= axis < rank_:
        raise kernel_error(f"ConcatOp : Expected concatenating dimensions in the range "
                           f"[{-rank_}, {rank_}), but got {axis}")
    axis %= rank_
    for i, v in enumerate(values[1:], 1):
        if v.ndim != rank_:
            raise kernel_error(f"ConcatOp : Ranks of all input tensors should match: shape[0] "
                               f"= {dims_str(values[0].shape)} vs. shape[{i}] = "
                               f"{dims_str(v.shape)}")
        if any(a != b for j, (a, b) in enumerate(zip(values[0].shape, v.shape)) if j != axis):
            raise kernel_error(f"ConcatOp : Dimensions of inputs should match: shape[0] = "
                               f"{dims_str(values[0].shape)} vs. shape[{i}] = "
                               f"{dims_str(v.shape)}")
    return jnp.concatenate(values, axis)


register(OpDef("ConcatV2", inputs=("values: N * T", "axis: Tidx"), outputs=("output: T",),
               attrs={"T": _dtypes.ALL, "Tidx": _I}, shape=_concat_shape, lower=_concat_lower,
               strings_by_rank=True))


def concat(values, axis, name="concat"):
    """Joins tensors along `axis`; a single tensor is returned through an Identity."""
    if not isinstance(values, (list, tuple)):
        values = [values]
    if len(values) == 1:
        with _graph.name_scope(name):  # TF names the Identity "concat/concat"
            axis_t = convert_to_tensor(axis, name="concat_dim", dtype=_dtypes.int32)
            axis_t.shape.assert_has_rank(0)
            return identity(values[0], name=name)
    return apply_op("ConcatV2", name=name, values=list(values), axis=axis)


# -- Tile / Pad / ReverseV2 / BroadcastTo -----------------------------------------------------
def _tile_shape(op):
    x, multiples_t = op.inputs
    with_rank(multiples_t.shape, 1)
    multiples = static_shape_from_tensor(multiples_t)
    if x.shape.ndims is not None:
        multiples = with_rank(multiples, x.shape.ndims)
    if multiples.ndims is None:
        return unknown_shape()
    x_shape = with_rank(x.shape, multiples.ndims)
    return TensorShape([d * m for d, m in zip(x_shape.dims, multiples.dims)])


def _tile_lower(input, multiples):  # noqa: A002
    reps = [int(m) for m in static_input(multiples, "Tile", "multiples").reshape(-1)]
    if len(reps) != input.ndim:
        raise kernel_error(f"Expected multiples argument to be a vector of length "
                           f"{input.ndim} but got length {len(reps)}")
    for i, m in enumerate(reps):
        if m < 0:
            raise kernel_error(f"Expected multiples[{i}] >= 0, but got {m}")
    return jnp.tile(input, reps)


register(OpDef("Tile", inputs=("input: T", "multiples: Tmultiples"), outputs=("output: T",),
               attrs={"T": _dtypes.ALL, "Tmultiples": _I}, shape=_tile_shape, lower=_tile_lower,
               strings_by_rank=True))


def tile(input, multiples, name=None):  # noqa: A002
    """Repeats `input` `multiples[i]` times along dimension i."""
    return apply_op("Tile", name=name, input=input, multiples=shape_arg(multiples))


def _pad_shape(op):
    x, paddings_t = op.inputs[:2]
    p_shape = with_rank(paddings_t.shape, 2)
    if p_shape.dims[1].value not in (None, 2):
        raise ValueError(f"Dimension must be 2 but is {p_shape.dims[1].value}")
    n = p_shape.dims[0].value
    x_shape = with_rank(x.shape, n) if n is not None else x.shape
    paddings = static_value(paddings_t)
    if paddings is None:
        return unknown_shape(x_shape.ndims)
    x_shape = with_rank(x_shape, paddings.shape[0])
    if (paddings < 0).any():
        raise ValueError("Paddings must be non-negative")
    return TensorShape([d + int(p.sum()) for d, p in zip(x_shape.dims, paddings)])


def _paddings(paddings, op_type, x):
    pads = static_input(paddings, op_type, "paddings").astype(np.int64)
    if pads.shape != (x.ndim, 2):
        raise kernel_error(f"The first dimension of paddings must be the rank of inputs"
                           f"{dims_str(pads.shape)} {dims_str(x.shape)}")
    if (pads < 0).any():
        raise kernel_error("Paddings must be non-negative")
    return [(int(lo), int(hi)) for lo, hi in pads]


def _mirror_pad_lower(input, paddings, mode):  # noqa: A002
    pads = _paddings(paddings, "MirrorPad", input)
    for d, (lo, hi) in enumerate(pads):
        size_ = input.shape[d]
        if mode == "REFLECT" and (lo >= size_ or hi >= size_):
            raise kernel_error(f"paddings must be less than the dimension size: {lo}, {hi} "
                               f"not less than {size_}")
        if mode == "SYMMETRIC" and (lo > size_ or hi > size_):
            raise kernel_error(f"paddings must be no greater than the dimension size: {lo}, "
                               f"{hi} greater than {size_}")
    return jnp.pad(input, pads, mode=mode.lower())


register(OpDef("Pad", inputs=("input: T", "paddings: Tpaddings"), outputs=("output: T",),
               attrs={"T": _dtypes.ALL, "Tpaddings": _I}, shape=_pad_shape,
               lower=lambda input, paddings: jnp.pad(input, _paddings(paddings, "Pad", input)),
               strings_by_rank=True))
register(OpDef("PadV2", inputs=("input: T", "paddings: Tpaddings", "constant_values: T"),
               outputs=("output: T",), attrs={"T": _dtypes.ALL, "Tpaddings": _I}, shape=_pad_shape,
               # lax.pad takes the fill value as a (possibly traced) scalar
               lower=lambda input, paddings, constant_values: jax.lax.pad(
                   input, jnp.asarray(constant_values, input.dtype).reshape(()),
                   [(lo, hi, 0) for lo, hi in _paddings(paddings, "PadV2", input)]),
               strings_by_rank=True))
register(OpDef("MirrorPad", inputs=("input: T", "paddings: Tpaddings"), outputs=("output: T",),
               attrs={"T": _dtypes.ALL, "Tpaddings": _I, "mode": REQUIRED}, shape=_pad_shape,
               lower=_mirror_pad_lower, strings_by_rank=True))


def pad(tensor, paddings, mode="CONSTANT", name=None, constant_values=0):
    """Pads `tensor` by `paddings[i] = [before, after]` in CONSTANT, REFLECT or SYMMETRIC mode."""
    mode = mode.upper()
    if mode == "CONSTANT":
        # A tensor or a string ("z") value needs PadV2; a Python/numpy zero is Pad.
        if not isinstance(constant_values, Tensor) and \
                np.asarray(constant_values).dtype.kind in "biufc" and \
                np.all(np.asarray(constant_values) == 0):
            return apply_op("Pad", name=name, input=tensor, paddings=paddings)
        return apply_op("PadV2", name=name, input=tensor, paddings=paddings,
                        constant_values=constant_values)
    if mode in ("REFLECT", "SYMMETRIC"):
        return apply_op("MirrorPad", name=name, input=tensor, paddings=paddings, mode=mode)
    raise ValueError(f"Unknown padding mode: {mode}")


def _reverse_shape(op):
    x, axis_t = op.inputs
    with_rank(axis_t.shape, 1)
    if x.shape.ndims is not None and x.shape.ndims > 8:
        raise ValueError("reverse does not work on tensors with more than 8 dimensions")
    axes = static_value(axis_t)
    if axes is not None and x.shape.ndims is not None:
        _canonical_axes(axes, x.shape.ndims, ValueError)
    return x.shape


def _canonical_axes(axes, rank_, fail):
    seen = []
    for i, a in enumerate(int(a) for a in np.reshape(axes, -1)):
        c = a + rank_ if a < 0 else a
        if not 0 <= c < rank_:
            raise fail(f"'axis'[{i}] = {a} is out of valid range [0, {rank_ - 1}]")
        if c in seen:
            raise fail(f"axis {c} specified more than once.")
        seen.append(c)
    return tuple(seen)


register(OpDef("ReverseV2", inputs=("tensor: T", "axis: Tidx"), outputs=("output: T",),
               attrs={"T": _dtypes.ALL, "Tidx": _I}, shape=_reverse_shape,
               lower=lambda tensor, axis: jnp.flip(tensor, _canonical_axes(
                   static_input(axis, "ReverseV2", "axis"), tensor.ndim, kernel_error)),
               strings_by_rank=True))


def reverse(tensor, axis, name=None):
    """Reverses `tensor` along the dimensions listed in `axis` (TF1's reverse_v2)."""
    return apply_op("ReverseV2", name=name, tensor=tensor, axis=shape_arg(axis))


reverse_v2 = reverse


def _broadcast_to_shape(op):
    x, shape_t = op.inputs
    with_rank(shape_t.shape, 1)
    out = static_shape_from_tensor(shape_t)
    if out.ndims is None or x.shape.ndims is None:
        return out
    if x.shape.ndims > out.ndims:
        raise ValueError(f"Shape must be at most rank {out.ndims} but is rank {x.shape.ndims}")
    dims = out.as_list()
    for i, d in enumerate(reversed(x.shape.as_list())):
        j = len(dims) - 1 - i
        if d is not None and d > 1:  # only dims of size 1 broadcast, left to right
            if dims[j] is not None and dims[j] != d:
                raise ValueError(f"Dimensions must be equal, but are {d} and {dims[j]}")
            dims[j] = d
    return TensorShape(dims)


def _broadcast_to_lower(input, shape):  # noqa: A002
    dims = tuple(int(d) for d in static_input(shape, "BroadcastTo", "shape").reshape(-1))
    try:
        ok = np.broadcast_shapes(input.shape, dims) == dims
    except ValueError:
        ok = False
    if not ok:
        raise kernel_error(f"Unable to broadcast tensor of shape {dims_str(input.shape)} to "
                           f"tensor of shape {dims_str(dims)}")
    return jnp.broadcast_to(input, dims)


register(OpDef("BroadcastTo", inputs=("input: T", "shape: Tidx"), outputs=("output: T",),
               attrs={"T": _dtypes.ALL, "Tidx": _I}, shape=_broadcast_to_shape,
               lower=_broadcast_to_lower, strings_by_rank=True))


def broadcast_to(input, shape, name=None):  # noqa: A002
    """Broadcasts `input` to `shape` with NumPy's rules."""
    return apply_op("BroadcastTo", name=name, input=input, shape=shape_arg(shape))


# -- Diag / DiagPart ---------------------------------------------------------------------------
_DIAG_TYPES = (_dtypes.bfloat16, _dtypes.float16, _dtypes.float32, _dtypes.float64,
               _dtypes.int32, _dtypes.int64) + _dtypes.COMPLEX


def _diag_part_shape(op):
    s = op.inputs[0].shape
    if s.ndims is None:
        return unknown_shape()
    if s.ndims % 2 or s.ndims == 0:
        raise ValueError(f"Input must have even and non-zero rank, input rank is {s.ndims}")
    half = s.ndims // 2
    dims = []
    for a, b in zip(s.as_list()[:half], s.as_list()[half:]):
        if a is not None and b is not None and a != b:
            raise ValueError(f"Dimensions must be equal, but are {a} and {b}")
        dims.append(a if a is not None else b)
    return TensorShape(dims)


def _diag_lower(diagonal):
    # (D1..Dk) -> (D1..Dk, D1..Dk): a flat n x n diagonal matrix has the same layout.
    n = int(np.prod(diagonal.shape))
    return jnp.diag(jnp.reshape(diagonal, (n,))).reshape(diagonal.shape * 2)


def _diag_part_lower(input):  # noqa: A002
    half = input.ndim // 2
    if input.ndim % 2 or input.shape[:half] != input.shape[half:]:
        raise kernel_error(f"Invalid shape {dims_str(input.shape)}: dimensions must match "
                           f"pairwise (i and i + rank/2)")
    n = int(np.prod(input.shape[:half]))
    return jnp.diagonal(jnp.reshape(input, (n, n))).reshape(input.shape[:half])


register(OpDef("Diag", inputs=("diagonal: T",), outputs=("output: T",),
               attrs={"T": _DIAG_TYPES},
               shape=lambda op: with_rank_at_least(op.inputs[0].shape, 1).concatenate(
                   op.inputs[0].shape),
               lower=_diag_lower))
register(OpDef("DiagPart", inputs=("input: T",), outputs=("diagonal: T",),
               attrs={"T": _DIAG_TYPES}, shape=_diag_part_shape, lower=_diag_part_lower))


def diag(diagonal, name=None):
    """A tensor with `diagonal` on its diagonal: shape (D1..Dk) gives (D1..Dk, D1..Dk)."""
    return apply_op("Diag", name=name, diagonal=diagonal)


def diag_part(input, name=None):  # noqa: A002
    """The diagonal of a (D1..Dk, D1..Dk) tensor, of shape (D1..Dk); the inverse of diag."""
    return apply_op("DiagPart", name=name, input=input)


# RaggedTensor (and other composite) arguments dispatch to registered handlers
# (framework/dispatch.py; TF's ragged_dispatch list).
_dispatch.add_dispatch_support_to(globals(), [
    "identity", "size", "rank", "stack", "expand_dims", "squeeze", "concat", "tile",
])
