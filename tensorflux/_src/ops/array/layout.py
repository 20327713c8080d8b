"""Rearranging elements: roll, repeat, meshgrid, parallel_stack, sequence_mask,
batch_gather, unravel_index.

Roll, ParallelConcat and UnravelIndex are records; the others are TF's compositions of
existing ops (their gradients come from those ops). `repeat` with repeats known when the
graph is built gathers with constant indices (one XLA gather, a fully known shape);
with repeats known only at run time it is TF's sequence_mask + boolean_mask recipe,
whose boolean_mask is a host op.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from tensorflux._src.compiler import effects
from tensorflux._src.framework import dispatch as _dispatch
from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.framework.tensor_shape import TensorShape, unknown_shape
from tensorflux._src.ops import constant
from tensorflux._src.ops.array import array_ops, gather_ops, generator_ops, host_ops
from tensorflux._src.ops.array.array_ops import expand_dims, reshape
from tensorflux._src.ops.index_checks import is_traced
from tensorflux._src.ops.math import math_ops, reduce_ops
from tensorflux._src.ops.math.math_ops import cast
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.op_helpers import (ANY, dims_str, kernel_error, merge_shapes,
                                            static_input, with_rank, with_rank_at_least)
from tensorflux._src.ops.registry import OpDef, REQUIRED, register
from tensorflux._src.ops.shape_fns import static_value

__all__ = ["batch_gather", "meshgrid", "parallel_stack", "repeat", "roll", "sequence_mask",
           "unravel_index"]

_I = _dtypes.INDEX


def _with_rank_at_most(shape, rank):
    if shape.ndims is not None and shape.ndims > rank:
        raise ValueError(f"Shape must be at most rank {rank} but is rank {shape.ndims}")
    return shape


# -- Roll -------------------------------------------------------------------------------------
def _roll_shape(op):
    x, shift, axis = (t.shape for t in op.inputs)
    with_rank_at_least(x, 1)
    _with_rank_at_most(shift, 1)
    _with_rank_at_most(axis, 1)
    merge_shapes(shift, axis)
    return x


def _roll_lower(input, shift, axis):  # noqa: A002
    axes = static_input(axis, "Roll", "axis")
    if input.ndim < 1:
        raise kernel_error("input must be 1-D or higher")
    if np.ndim(shift) > 1:
        raise kernel_error(f"shift must be a scalar or a 1-D vector. Found: "
                           f"{dims_str(np.shape(shift))}")
    if axes.ndim > 1:
        raise kernel_error(f"axis must be a scalar or a 1-D vector. Found: "
                           f"{dims_str(axes.shape)}")
    if np.shape(shift) != axes.shape:
        raise kernel_error("shift and axis must have the same size")
    shifts = jnp.reshape(jnp.asarray(shift), (-1,))
    total = {}  # repeated axes add their shifts, as the kernel's shift_mod_sum
    for i, a in enumerate(int(a) for a in axes.reshape(-1)):
        a = a + input.ndim if a < 0 else a
        if not 0 <= a < input.ndim:
            raise kernel_error(f"axis {a} is out of range")
        total[a] = total.get(a, 0) + shifts[i]
    out = jnp.asarray(input)
    for a, s in total.items():
        out = jnp.roll(out, s, axis=a)
    return out


register(OpDef(
    "Roll", inputs=("input: T", "shift: Tshift", "axis: Taxis"), outputs=("output: T",),
    attrs={"T": ANY, "Tshift": _I, "Taxis": _I}, shape=_roll_shape, lower=_roll_lower,
    grad=lambda op, dy: [roll(dy, -op.inputs[1], op.inputs[2]), None, None]))


def roll(input, shift, axis, name=None):  # noqa: A002
    """Rolls elements along `axis` by `shift` (scalars, or lists of the same length)."""
    return apply_op("Roll", name=name, input=input, shift=shift, axis=axis)


# -- repeat -----------------------------------------------------------------------------------
def _int_tensor(value, name):
    tensor = convert_to_tensor(value, name=name, preferred_dtype=_dtypes.int32)
    if not tensor.dtype.is_integer:
        raise TypeError(f"{name} must be an integer tensor; dtype={tensor.dtype}")
    return cast(tensor, _dtypes.int32)


def _positive_axis(axis, ndims):
    if not isinstance(axis, int):
        raise TypeError(f"axis must be an int; got {type(axis).__name__}")
    if ndims is not None:
        if 0 <= axis < ndims:
            return axis
        if -ndims <= axis < 0:
            return axis + ndims
        raise ValueError(f"axis={axis} out of bounds: expected {-ndims}<=axis<{ndims}")
    if axis < 0:
        raise ValueError("axis may only be negative if ndims is statically known.")
    return axis


def _tile_one_dimension(data, axis, multiple):
    if data.shape.ndims is not None:
        multiples = [1] * data.shape.ndims
        multiples[axis] = multiple
    else:
        ones = generator_ops.ones(array_ops.rank(data), _dtypes.int32)
        multiples = array_ops.concat([ones[:axis], [multiple], ones[axis + 1:]], axis=0)
    return array_ops.tile(data, multiples)


def _with_nonzero_rank(data):
    if data.shape.ndims is not None:
        return array_ops.stack([data]) if data.shape.ndims == 0 else data
    data_shape = array_ops.shape(data)
    data_ndims = array_ops.rank(data)
    return array_ops.reshape(data, array_ops.concat([[1], data_shape], axis=0)[-data_ndims:])


def _repeat_with_axis(data, repeats, axis, name):
    if not isinstance(axis, int):
        raise TypeError(f"axis must be an int; got {type(axis).__name__}")
    with _graph.name_scope(name, "Repeat", [data, repeats]):
        data = convert_to_tensor(data, name="data")
        repeats = _int_tensor(repeats, "repeats")
        _with_rank_at_most(repeats.shape, 1)
        data = _with_nonzero_rank(data)
        data_shape = array_ops.shape(data)
        axis = _positive_axis(axis, data.shape.ndims)
        if repeats.shape.ndims == 1:
            data.shape.dims[axis].assert_is_compatible_with(repeats.shape[0])
        if repeats.shape.ndims == 0:
            expanded = array_ops.expand_dims(data, axis + 1)
            tiled = _tile_one_dimension(expanded, axis + 1, repeats)
            return array_ops.reshape(tiled, array_ops.concat(
                [data_shape[:axis], [-1], data_shape[axis + 1:]], axis=0))
        known = static_value(repeats)
        if known is not None:
            # Constant indices: position i of the axis appears repeats[i] times.
            if (known < 0).any():
                raise ValueError(f"repeats must be non-negative, got {known.tolist()}")
            index = np.repeat(np.arange(known.size, dtype=np.int32), known)
            return gather_ops.gather(data, index, axis=axis)
        # Repeats known at run time only: TF's recipe (boolean_mask runs on the host).
        if repeats.shape.ndims != axis + 1:
            repeats_shape = array_ops.shape(repeats)
            repeats_ndims = array_ops.rank(repeats)
            repeats = array_ops.broadcast_to(repeats, array_ops.concat(
                [data_shape[:axis + 1 - repeats_ndims], repeats_shape], axis=0))
            repeats.set_shape([None] * (axis + 1))
        max_repeat = math_ops.maximum(0, reduce_ops.reduce_max(repeats))
        mask = sequence_mask(repeats, max_repeat)
        tiled = _tile_one_dimension(array_ops.expand_dims(data, axis + 1), axis + 1,
                                    max_repeat)
        masked = host_ops.boolean_mask(tiled, mask)
        result = masked if axis == 0 else array_ops.reshape(masked, array_ops.concat(
            [data_shape[:axis], [-1], data_shape[axis + 1:]], axis=0))
        if data.shape.ndims is not None:
            new_size = 0 if repeats.shape[0] == 0 else None
            result.set_shape(data.shape[:axis].concatenate([new_size]).concatenate(
                data.shape[axis + 1:]))
        return result


def repeat(input, repeats, axis=None, name=None):  # noqa: A002
    """np.repeat: each element (slice along `axis`) `repeats` times; with axis=None the
    flattened input."""
    if axis is None:
        input = reshape(input, [-1])  # noqa: A001
        axis = 0
    return _repeat_with_axis(input, repeats, axis, name)


# -- meshgrid, parallel_stack -----------------------------------------------------------------
def meshgrid(*args, **kwargs):
    """N-D coordinate arrays from N 1-D ones; indexing 'xy' (default) swaps the first two
    output dimensions, 'ij' keeps them in argument order."""
    indexing = kwargs.pop("indexing", "xy")
    name = kwargs.pop("name", "meshgrid")
    if kwargs:
        key = list(kwargs.keys())[0]
        raise TypeError(f"'{key}' is an invalid keyword argument for this function")
    if indexing not in ("xy", "ij"):
        raise ValueError("indexing parameter must be either 'xy' or 'ij'")
    with _graph.name_scope(name, "meshgrid", args):
        ndim = len(args)
        s0 = (1,) * ndim
        output = [array_ops.reshape(array_ops.stack(x), s0[:i] + (-1,) + s0[i + 1:])
                  for i, x in enumerate(args)]
        shapes = [array_ops.size(x) for x in args]
        output_dtype = convert_to_tensor(args[0]).dtype.base_dtype
        if indexing == "xy" and ndim > 1:
            output[0] = array_ops.reshape(output[0], (1, -1) + (1,) * (ndim - 2))
            output[1] = array_ops.reshape(output[1], (-1, 1) + (1,) * (ndim - 2))
            shapes[0], shapes[1] = shapes[1], shapes[0]
        mult_fact = generator_ops.ones(shapes, output_dtype)
        return [x * mult_fact for x in output]


def _parallel_concat_shape(op):
    shape = op.get_attr("shape")
    if not shape.is_fully_defined():
        raise ValueError("shape attr must be fully defined.")
    cur = TensorShape([1]).concatenate(shape[1:])
    for i, t in enumerate(op.inputs):
        if not t.shape.is_fully_defined():
            raise ValueError("All input shapes must be fully defined.")
        if t.shape.dims[0].value != 1:
            raise ValueError("Size of first dimension must be 1.")
        try:
            cur = merge_shapes(t.shape, cur)
        except ValueError as e:
            raise ValueError(f"{e}\n\tFrom merging shape {i} with other shapes.") from None
    return shape


register(OpDef(
    "ParallelConcat", inputs=("values: N * T",), outputs=("output: T",),
    attrs={"T": ANY, "shape": REQUIRED}, shape=_parallel_concat_shape,
    lower=lambda *values: jnp.concatenate(values, axis=0)))


def parallel_stack(values, name="parallel_stack"):
    """stack(values) along a new first axis; needs fully known input shapes, and (as in
    TF) has no gradient."""
    with _graph.name_scope(name):
        value_shape = convert_to_tensor(values[0]).shape
        output_shape = TensorShape([len(values)]).concatenate(value_shape)
        return apply_op("ParallelConcat", values=[expand_dims(v, 0) for v in values],
                        shape=output_shape)


# -- sequence_mask, batch_gather -------------------------------------------------------------
def sequence_mask(lengths, maxlen=None, dtype=_dtypes.bool, name=None):
    """mask[..., j] = j < lengths[...], with maxlen columns (default max(lengths))."""
    with _graph.name_scope(name, "SequenceMask", [lengths, maxlen]):
        lengths = convert_to_tensor(lengths)
        if maxlen is None:
            maxlen = reduce_ops.reduce_max(lengths)
            maxlen = math_ops.maximum(constant.constant(0, maxlen.dtype), maxlen)
        else:
            maxlen = convert_to_tensor(maxlen)
        if maxlen.shape.ndims is not None and maxlen.shape.ndims != 0:
            raise ValueError("maxlen must be scalar for sequence_mask")
        row_vector = apply_op("Range", start=constant.constant(0, maxlen.dtype), limit=maxlen,
                              delta=constant.constant(1, maxlen.dtype))
        matrix = math_ops.cast(array_ops.expand_dims(lengths, -1), maxlen.dtype)
        result = math_ops.less(row_vector, matrix)
        dtype = _dtypes.as_dtype(dtype) if dtype is not None else None
        if dtype is None or result.dtype.base_dtype == dtype.base_dtype:
            return result
        return math_ops.cast(result, dtype)


def batch_gather(params, indices, name=None):
    """gather within each batch row: indices' leading rank-1 dims are batch dims of params.

    TF1's recipe: batch offsets are added to the indices and one flat gather reads them,
    so an index past its row's end reads the next row, as in TF.
    """
    with _graph.name_scope(name, "BatchGather", [params, indices]):
        indices = convert_to_tensor(indices, name="indices")
        params = convert_to_tensor(params, name="params")
        ndims = indices.shape.ndims
        if ndims is None:
            raise ValueError("batch_gather does not allow indices with unknown shape.")
        batch_dims = ndims - 1
        if params.shape.ndims is not None and batch_dims >= params.shape.ndims:
            raise ValueError(f"batch_dims = {batch_dims} must be less than rank(params) = "
                             f"{params.shape.ndims}")
        indices_shape = array_ops.shape(indices)
        params_shape = array_ops.shape(params)
        dtype = indices.dtype.base_dtype
        batch_indices = indices
        accum = generator_ops.ones((), dtype=dtype)
        casted = math_ops.cast(params_shape, dtype)
        for dim in range(batch_dims, 0, -1):
            dim_value = casted[dim - 1]
            accum = accum * casted[dim]
            dim_indices = math_ops.range(generator_ops.zeros((), dtype=dtype), dim_value,
                                              generator_ops.ones((), dtype=dtype)) * accum
            dim_shape = array_ops.stack([1] * (dim - 1) + [dim_value] + [1] * (ndims - dim),
                                        axis=0)
            batch_indices = batch_indices + array_ops.reshape(dim_indices, dim_shape)
        flat_indices = array_ops.reshape(batch_indices, [-1])
        outer_shape = params_shape[batch_dims + 1:]
        flat_inner = reduce_ops.reduce_prod(params_shape[:batch_dims + 1], [0])
        flat_params = array_ops.reshape(params, array_ops.concat([[flat_inner], outer_shape],
                                                                 axis=0))
        result = array_ops.reshape(gather_ops.gather(flat_params, flat_indices),
                                   array_ops.concat([indices_shape, outer_shape], axis=0))
        final = indices.shape[:batch_dims].merge_with(params.shape[:batch_dims])
        final = final.concatenate(indices.shape[batch_dims:])
        result.set_shape(final.concatenate(params.shape[batch_dims + 1:]))
        return result


# -- UnravelIndex ---------------------------------------------------------------------------
def _unravel_shape(op):
    indices = op.inputs[0].shape
    dims = with_rank(op.inputs[1].shape, 1)
    if indices.ndims == 0:
        return TensorShape([dims.dims[0]])
    if indices.ndims is not None:
        return TensorShape([dims.dims[0], indices.num_elements()])
    return unknown_shape()


def _unravel_lower(indices, dims):
    if np.ndim(indices) > 1:
        raise kernel_error(f'The indices can only be scalar or vector, got '
                           f'"{dims_str(np.shape(indices))}"')
    if np.ndim(dims) != 1:
        raise kernel_error(f'The indices can only be 1-D, got "{dims_str(np.shape(dims))}"')
    xp = np if not (is_traced(indices) or is_traced(dims)) else jnp
    indices, dims = xp.asarray(indices), xp.asarray(dims)
    total = xp.prod(dims)
    effects.check(xp.all(indices < total), "index is out of bound as with dims")
    # strides[i] = prod(dims[i:]), shifted[i] = prod(dims[i+1:]); C++'s % and / truncate.
    rev = dims[::-1]
    strides = xp.cumprod(rev)[::-1]
    shifted = xp.concatenate([strides[1:], xp.ones((1,), dims.dtype)])
    column = indices if indices.ndim == 0 else indices[None, :]
    if indices.ndim == 1:
        strides, shifted = strides[:, None], shifted[:, None]
    out = jax.lax.div(jax.lax.rem(jnp.asarray(column) + jnp.zeros_like(jnp.asarray(strides)),
                                  jnp.asarray(strides)), jnp.asarray(shifted))
    return out.astype(dims.dtype)


register(OpDef(
    "UnravelIndex", inputs=("indices: Tidx", "dims: Tidx"), outputs=("output: Tidx",),
    attrs={"Tidx": _I}, shape=_unravel_shape, lower=_unravel_lower, not_differentiable=True,
    type_defaults={"Tidx": _dtypes.int32}))


def unravel_index(indices, dims, name=None):
    """The coordinates in an array of shape `dims` of flat `indices` (one column each)."""
    return apply_op("UnravelIndex", name=name, indices=indices, dims=dims)


# RaggedTensor (and other composite) arguments dispatch to registered handlers
# (framework/dispatch.py; TF's ragged_dispatch list).
_dispatch.add_dispatch_support_to(globals(), [
    "batch_gather",
])
