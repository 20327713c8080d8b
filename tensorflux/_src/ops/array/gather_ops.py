"""Indexing by tensors: gather, gather_nd, scatter_nd, one_hot, and where (select, or
with one argument the coordinates of true elements: the host record `Where`,
`where_indices`).

Out-of-range indices: TF's CPU kernels raise InvalidArgumentError ("indices[1] = 5 is
not in [0, 3)"), its GPU kernels write zeros (gather) or skip the update (scatter).
Here an index known when the graph is compiled (a constant, or computed from constants)
is checked and raises TF's CPU error. gather checks an index computed at run time in
the run (compiler/effects.py: the run fails with the same error and writes no
variable); inside loop bodies, where a check would be a host callback, it reads zeros
(TF's GPU gather). gather_nd and scatter_nd give run-time indices TF's GPU behaviour:
zeros / dropped updates.

Gradients: gather's along axis 0 is an IndexedSlices (TF's), the output gradient's
slices with the indices they were read from, so optimizers update only those rows;
along another axis it is dense, an unsorted segment sum of the output gradient into the
rows read, so repeated indices accumulate and indices that read zeros get nothing. It and
SelectV2's (which sums over broadcast axes) need segment sums and reductions, so
array_grads.py attaches them. gather_nd and scatter_nd are each other's gradients.
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
from tensorflux._src.ops.array.array_ops import shape as _shape_op
from tensorflux._src.ops.array.generator_ops import zeros_like
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.op_helpers import (ANY, dims_str, kernel_error, merge_shapes,
                                            scalar_input_dim, static_input, static_scalar,
                                            with_rank, with_rank_at_least)
from tensorflux._src.ops.registry import OpDef, register
from tensorflux._src.ops.shape_fns import broadcast, static_shape_from_tensor

__all__ = ["gather", "gather_nd", "one_hot", "scatter_nd", "where", "where_v2"]

_I = _dtypes.INDEX


def _index_str(shape, flat):
    """TF's SliceDebugString: where a flat position sits in `shape`, as [i,j] ('' for 0-d)."""
    if len(shape) == 0:
        return ""
    return "[" + ",".join(str(int(i)) for i in np.unravel_index(flat, shape)) + "]"


def _gather_out_of_range(indices, limit):
    """TF's CPU error for the first index outside [0, limit), or None."""
    flat = np.reshape(indices, -1)
    bad = np.flatnonzero((flat < 0) | (flat >= limit))
    if not bad.size:
        return None
    return f"indices{_index_str(indices.shape, bad[0])} = {flat[bad[0]]} is not in [0, {limit})"


def _is_static(value):
    return not isinstance(value, jax.core.Tracer)


def _check_nd_indices(indices, limits, target):
    """TF's CPU error for statically known index rows outside `limits` (gather/scatter_nd)."""
    k = indices.shape[-1]
    rows = np.reshape(indices, (-1, k))
    bad = np.flatnonzero(((rows < 0) | (rows >= limits)).any(axis=1))
    if bad.size:
        raise kernel_error(f"indices{_index_str(indices.shape[:-1], bad[0])} = "
                           f"[{', '.join(str(int(v)) for v in rows[bad[0]])}] does not "
                           f"index into {target}")


# -- GatherV2 -------------------------------------------------------------------------------
def _gather_shape(op):
    params_t, indices_t, axis_t = op.inputs
    params = with_rank_at_least(params_t.shape, 1)
    indices = indices_t.shape
    with_rank(axis_t.shape, 0)
    batch_dims = op.get_attr("batch_dims")
    axis = static_scalar(axis_t)
    if axis is None:
        if params.ndims is None or indices.ndims is None:
            return unknown_shape()
        return unknown_shape(params.ndims + indices.ndims - 1 - _batch_dims(batch_dims, indices))
    with_rank_at_least(params, -axis if axis < 0 else axis + 1)
    with_rank_at_least(indices, abs(batch_dims))
    if params.ndims is None or indices.ndims is None:
        return unknown_shape()
    batch_dims = _batch_dims(batch_dims, indices)
    axis %= params.ndims
    with_rank_at_least(params, batch_dims + 1)
    if batch_dims > axis:
        raise ValueError(f"batch_dims ({batch_dims}) must be less than or equal to axis "
                         f"({axis})")
    p, i = params.as_list(), indices.as_list()
    for b in range(batch_dims):
        if p[b] is not None and i[b] is not None and p[b] != i[b]:
            raise ValueError(f"params.shape[{b}]: {p[b]} should be equal to indices.shape"
                             f"[{b}]: {i[b]}")
    return TensorShape(p[:axis] + i[batch_dims:] + p[axis + 1:])


def _batch_dims(batch_dims, indices_shape):
    return batch_dims + indices_shape.ndims if batch_dims < 0 else batch_dims


def _gather_lower(params, indices, axis, batch_dims):
    axis = int(static_input(axis, "GatherV2", "axis")) % params.ndim
    batch_dims = batch_dims + indices.ndim if batch_dims < 0 else batch_dims
    limit = params.shape[axis]
    valid = (indices >= 0) & (indices < limit)
    if _is_static(indices):
        error = _gather_out_of_range(np.asarray(indices), limit)
        if error is not None:
            raise kernel_error(error)
    else:
        effects.check(jnp.all(valid),
                      lambda ids: _gather_out_of_range(np.asarray(ids), limit),
                      data=(indices,), in_loop_bodies=False)
    clipped = jnp.clip(indices, 0, max(limit - 1, 0))

    def take(p, i):
        return jnp.take(p, i, axis=axis - batch_dims)

    for _ in range(batch_dims):  # batch dimensions pair params and indices one to one
        take = jax.vmap(take)
    out = take(params, clipped)
    if _is_static(indices):
        return out
    # Zeros where the index is out of range (in loop bodies, unchecked: TF's GPU rule).
    # `valid` has the indices' shape; give it params' outer and inner dims as 1s.
    mask = valid.reshape(indices.shape[:batch_dims] + (1,) * (axis - batch_dims)
                         + indices.shape[batch_dims:] + (1,) * (params.ndim - axis - 1))
    return jnp.where(mask, out, jnp.zeros((), out.dtype))


register(OpDef("GatherV2", inputs=("params: Tparams", "indices: Tindices", "axis: Taxis"),
               outputs=("output: Tparams",),
               # resource: TF's QueueBase.from_list gathers queue handles.
               attrs={"Tparams": _dtypes.ALL + (_dtypes.resource,), "Tindices": _I,
                      "Taxis": _I, "batch_dims": 0},
               shape=_gather_shape, lower=_gather_lower, strings_by_rank=True))


def gather(params, indices, validate_indices=None, name=None, axis=None, batch_dims=0):
    """Slices of `params` along `axis` at `indices` (the output has indices' dims there)."""
    del validate_indices  # ignored, as in TF
    if axis is None:
        axis = batch_dims
    return apply_op("GatherV2", name=name, params=params, indices=indices, axis=axis,
                    batch_dims=batch_dims)


# -- GatherNd -------------------------------------------------------------------------------
def _gather_nd_shape(op):
    params = with_rank_at_least(op.inputs[0].shape, 1)
    indices = with_rank_at_least(op.inputs[1].shape, 1)
    if indices.ndims is None or indices.dims[-1].value is None:
        return unknown_shape()
    r = indices.dims[-1].value
    if params.ndims is not None and r > params.ndims:
        raise ValueError(f"indices.shape[-1] must be <= params.rank, but saw indices shape: "
                         f"{indices._bracket_str()} and params shape: {params._bracket_str()}")
    return TensorShape(indices.dims[:-1]).concatenate(params[r:])


def _gather_nd_lower(params, indices):
    k = indices.shape[-1]
    outer = indices.shape[:-1]
    if k == 0:  # every index selects all of params
        return jnp.broadcast_to(params, outer + params.shape)
    limits = np.array(params.shape[:k])
    if _is_static(indices):
        _check_nd_indices(indices, limits, f"param shape {dims_str(params.shape)}")
    clipped = jnp.clip(indices, 0, np.maximum(limits - 1, 0))
    # (outer..., params.shape[k:]...); jnp, as params may be a numpy constant
    out = jnp.asarray(params)[tuple(jnp.moveaxis(clipped, -1, 0))]
    if _is_static(indices):
        return out
    valid = ((indices >= 0) & (indices < limits)).all(axis=-1)
    mask = valid.reshape(outer + (1,) * (params.ndim - k))
    return jnp.where(mask, out, jnp.zeros((), out.dtype))


register(OpDef("GatherNd", inputs=("params: Tparams", "indices: Tindices"),
               outputs=("output: Tparams",), attrs={"Tparams": _dtypes.ALL, "Tindices": _I},
               shape=_gather_nd_shape, lower=_gather_nd_lower,
               grad=lambda op, dy: [scatter_nd(op.inputs[1], dy, _shape_op(
                   op.inputs[0], out_type=op.inputs[1].dtype)), None], strings_by_rank=True))


def gather_nd(params, indices, name=None, batch_dims=0):
    """Gathers slices of `params` addressed by the last dimension of `indices`."""
    if batch_dims != 0:
        raise NotImplementedError("tf.gather_nd with batch_dims != 0 is not supported yet; "
                                  "use tf.gather(..., batch_dims=...) or add the batch "
                                  "indices to `indices`.")
    return apply_op("GatherNd", name=name, params=params, indices=indices)


# -- ScatterNd ------------------------------------------------------------------------------
def _scatter_nd_shape(op):
    indices = with_rank_at_least(op.inputs[0].shape, 1)
    updates = with_rank_at_least(op.inputs[1].shape, 1)
    return scatter_nd_shape_helper(indices, updates, static_shape_from_tensor(op.inputs[2]))


def scatter_nd_shape_helper(indices, updates, out):
    """TF's ScatterNdShapeHelper (ScatterNd, TensorScatter*, ScatterNd* on variables):
    indices' outer dims match updates', out's inner dims match updates' inner dims.
    Returns `out`."""
    if out.num_elements() == 0 and (indices.num_elements() or updates.num_elements()):
        raise ValueError("Indices and updates specified for empty output shape")
    if indices.ndims is None or updates.ndims is None or indices.dims[-1].value is None:
        return out
    outer, ix = indices.ndims - 1, indices.dims[-1].value
    try:
        merge_shapes(indices[:outer], updates[:outer])
    except ValueError as e:
        raise ValueError(f"The outer {outer} dimensions of indices.shape="
                         f"{indices._bracket_str()} must match the outer {outer} dimensions "
                         f"of updates.shape={updates._bracket_str()}: {e}") from None
    if out.ndims is not None:
        try:
            merge_shapes(out[ix:], updates[outer:])
        except ValueError as e:
            raise ValueError(f"The inner {out.ndims - ix} dimensions of output.shape="
                             f"{out._bracket_str()} must match the inner "
                             f"{updates.ndims - outer} dimensions of updates.shape="
                             f"{updates._bracket_str()}: {e}") from None
    return out


def _scatter_nd_lower(indices, updates, shape):
    dims = tuple(int(d) for d in static_input(shape, "ScatterNd", "shape").reshape(-1))
    k = indices.shape[-1]
    limits = np.array(dims[:k], dtype=np.int64)
    if _is_static(indices):
        _check_nd_indices(indices, limits, f"shape {dims_str(dims)}")
    # Negative indices would wrap in JAX; make them out of range so they are dropped.
    safe = jnp.where(indices < 0, limits.astype(indices.dtype), indices)
    out = jnp.zeros(dims, updates.dtype)
    return out.at[tuple(jnp.moveaxis(safe, -1, 0))].add(updates, mode="drop")


register(OpDef("ScatterNd", inputs=("indices: Tindices", "updates: T", "shape: Tindices"),
               outputs=("output: T",), attrs={"T": _dtypes.NUMBERS, "Tindices": _I},
               shape=_scatter_nd_shape, lower=_scatter_nd_lower,
               grad=lambda op, dy: [None, gather_nd(dy, op.inputs[0]), None]))


def scatter_nd(indices, updates, shape, name=None):
    """Zeros of `shape` with `updates` added at `indices` (duplicates are summed)."""
    return apply_op("ScatterNd", name=name, indices=indices, updates=updates, shape=shape)


# -- OneHot ---------------------------------------------------------------------------------
def _one_hot_shape(op):
    indices = op.inputs[0].shape
    axis = op.get_attr("axis")
    if axis < -1:
        raise ValueError("axis must be >= -1")
    for t in op.inputs[1:]:  # depth, on_value and off_value are scalars
        with_rank(t.shape, 0)
    depth = scalar_input_dim(op, 1)
    if indices.ndims is None:
        return unknown_shape()
    new_rank = indices.ndims + 1
    if axis >= new_rank:
        raise ValueError(f"Expected axis to be -1 or between [0, {new_rank}).  But received: "
                         f"{axis}")
    at = axis % new_rank
    dims = indices.as_list()
    return TensorShape(dims[:at] + [depth] + dims[at:])


def _one_hot_lower(indices, depth, on_value, off_value, axis):
    depth = int(static_input(depth, "OneHot", "depth"))
    # indices outside [0, depth) match no position, so their row is all off_value
    hot = indices[..., None] == jnp.arange(depth)
    out = jnp.where(hot, on_value, off_value)
    return out if axis == -1 else jnp.moveaxis(out, -1, axis)


register(OpDef("OneHot", inputs=("indices: TI", "depth: int32", "on_value: T", "off_value: T"),
               outputs=("output: T",),
               attrs={"T": ANY, "TI": (_dtypes.uint8, _dtypes.int32, _dtypes.int64),
                      "axis": -1},
               shape=_one_hot_shape, lower=_one_hot_lower, not_differentiable=True))


def one_hot(indices, depth, on_value=None, off_value=None, axis=None, dtype=None, name=None):
    """One-hot vectors of length `depth` for `indices`, along `axis` (last by default).

    The dtype comes from `dtype`, else from on_value/off_value, else float32; given
    values must agree with it, as in TF.
    """
    with _graph.name_scope(name, "one_hot",
                           [indices, depth, on_value, off_value, axis, dtype]) as scope:
        dtype = None if dtype is None else _dtypes.as_dtype(dtype).base_dtype
        if on_value is not None:
            on_value = convert_to_tensor(on_value, dtype=None, name="on_value")
        if off_value is not None:
            off_value = convert_to_tensor(off_value, dtype=None, name="off_value")
        on_dtype = None if on_value is None else on_value.dtype.base_dtype
        off_dtype = None if off_value is None else off_value.dtype.base_dtype
        if on_value is not None or off_value is not None:
            if dtype is not None:
                if on_dtype is not None and on_dtype != dtype:
                    raise TypeError(f"dtype {on_dtype} of on_value does not match dtype "
                                    f"parameter {dtype}")
                if off_dtype is not None and off_dtype != dtype:
                    raise TypeError(f"dtype {off_dtype} of off_value does not match dtype "
                                    f"parameter {dtype}")
            else:
                dtype = on_dtype or off_dtype
        elif dtype is None:
            dtype = _dtypes.float32
        if on_value is None:
            on_value = convert_to_tensor(np.ones((), dtype.as_numpy_dtype), name="on_value")
            on_dtype = dtype
        if off_value is None:
            off_value = convert_to_tensor(np.zeros((), dtype.as_numpy_dtype), name="off_value")
            off_dtype = dtype
        if on_dtype != off_dtype:
            raise TypeError(f"dtype {on_dtype} of on_value does not match dtype {off_dtype} "
                            f"of off_value")
        return apply_op("OneHot", name=scope, indices=indices, depth=depth, on_value=on_value,
                        off_value=off_value, axis=-1 if axis is None else axis)


# -- Select (TF1 tf.where) and SelectV2 (tf.where_v2) -----------------------------------------
def _select_shape(op):
    cond, t, e = (x.shape for x in op.inputs)
    data = merge_shapes(t, e)
    if cond.ndims is None or data.ndims is None or cond.ndims == 0:
        return data  # a scalar condition picks one whole tensor
    if cond.ndims == 1 and data.ndims > 0:
        # a vector condition picks rows: its length is the first dimension
        merge_shapes(cond, TensorShape([data.dims[0]]))
        return data
    return merge_shapes(data, cond)


def _select_lower(condition, t, e):
    if t.shape != e.shape:
        raise kernel_error(f"'then' and 'else' must have the same size.  but received: "
                           f"{dims_str(t.shape)} vs. {dims_str(e.shape)}")
    if condition.ndim == 1 and t.ndim > 1:
        if t.shape[0] != condition.shape[0]:
            raise kernel_error(f"Number of batches of 'then' must match size of 'cond', but "
                               f"saw: {t.shape[0]} vs. {condition.shape[0]}")
        condition = condition.reshape(condition.shape + (1,) * (t.ndim - 1))
    elif condition.ndim != 0 and condition.shape != t.shape:
        raise kernel_error(f"Inputs to operation Select of type Select must have the same "
                           f"size and shape.  Input 0: {dims_str(condition.shape)} != input "
                           f"1: {dims_str(t.shape)}")
    return jnp.where(condition, t, e)


def _select_grad(op, dy):
    c, zeros = op.inputs[0], zeros_like(dy)
    return [None, where(c, dy, zeros), where(c, zeros, dy)]


register(OpDef("Select", inputs=("condition: bool", "t: T", "e: T"), outputs=("output: T",),
               attrs={"T": _dtypes.ALL}, shape=_select_shape, lower=_select_lower,
               grad=_select_grad, strings_by_rank=True))
register(OpDef("SelectV2", inputs=("condition: bool", "t: T", "e: T"), outputs=("output: T",),
               attrs={"T": _dtypes.ALL},
               shape=lambda op: broadcast(broadcast(op.inputs[0].shape, op.inputs[1].shape),
                                          op.inputs[2].shape),
               lower=jnp.where, strings_by_rank=True))  # grad: array_grads


# -- Where (a host record: its output shape depends on the data) -------------------------
register(OpDef(
    "Where", inputs=("input: T",), outputs=("index: int64",),
    attrs={"T": _dtypes.NUMBERS + (_dtypes.bool,)}, type_defaults={"T": _dtypes.bool},
    shape=lambda op: TensorShape([None, op.inputs[0].shape.ndims]),
    host=lambda input: np.argwhere(input).astype(np.int64),  # row-major order, as TF
    not_differentiable=True,
))


def where_indices(condition, name=None):
    """Coordinates of the true (non-zero) elements of `condition`: int64, [n, rank].

    TF1's `tf.where(condition)`; `tf.where` and `tf.where_v2` call this with one argument.
    """
    with _graph.name_scope(name, "Where", [condition]) as scope:
        condition = convert_to_tensor(condition, name="condition",
                                      preferred_dtype=_dtypes.bool)
        return apply_op("Where", name=scope, input=condition)


def _one_argument_form(x, y):
    """True for where(condition): the coordinates of its true elements (a host op)."""
    if (x is None) != (y is None):
        raise ValueError("x and y must both be non-None or both be None.")
    return x is None


def where(condition, x=None, y=None, name=None):
    """TF1's where: picks from x or y by `condition` (same shape, or a vector over rows).

    With only `condition`: the int64 coordinates [n, rank] of its true elements.
    """
    if _one_argument_form(x, y):
        return where_indices(condition, name=name)
    return apply_op("Select", name=name, condition=condition, t=x, e=y)


def where_v2(condition, x=None, y=None, name=None):
    """Picks from x or y by `condition`, broadcasting all three.

    With only `condition`: the int64 coordinates [n, rank] of its true elements.
    """
    if _one_argument_form(x, y):
        return where_indices(condition, name=name)
    return apply_op("SelectV2", name=name, condition=condition, t=x, e=y)


# RaggedTensor (and other composite) arguments dispatch to registered handlers
# (framework/dispatch.py; TF's ragged_dispatch list).
_dispatch.add_dispatch_support_to(globals(), [
    "gather", "gather_nd", "one_hot", "where",
])
