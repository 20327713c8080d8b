"""tensor_scatter_nd_{update,add,sub,max,min}: a copy of `tensor` with scattered updates.

`indices[..., k]` addresses a slice of `tensor`'s first k dimensions; updates has shape
`indices.shape[:-1] + tensor.shape[k:]`. Repeated indices: Add/Sub accumulate, Max/Min
combine, Update keeps one of the values (TF leaves which one unspecified). Indices out
of range raise TF's CPU error ("indices[1] = [7] does not index into shape [4,2]"),
when the graph is compiled if known then, else when the run reaches the op.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.ops.array.array_ops import identity, shape
from tensorflux._src.ops.array.gather_ops import gather_nd, scatter_nd, scatter_nd_shape_helper
from tensorflux._src.ops.array.generator_ops import zeros_like
from tensorflux._src.ops.index_checks import check_rows, dims_str, dropping
from tensorflux._src.ops.math.math_ops import cast, equal, negative
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.op_helpers import ANY, kernel_error, with_rank_at_least
from tensorflux._src.ops.registry import OpDef, register

__all__ = ["tensor_scatter_add", "tensor_scatter_nd_add", "tensor_scatter_nd_max",
           "tensor_scatter_nd_min", "tensor_scatter_nd_sub", "tensor_scatter_nd_update",
           "tensor_scatter_sub", "tensor_scatter_update"]


def _tensor_scatter_shape(op):
    out = with_rank_at_least(op.inputs[0].shape, 1)
    indices = with_rank_at_least(op.inputs[1].shape, 1)
    updates = with_rank_at_least(op.inputs[2].shape, 1)
    return scatter_nd_shape_helper(indices, updates, out)


def validate_update_shape(params_shape, indices, updates):
    """TF's ValidateUpdateShape (scatter_nd_op.cc), for shapes only known at run time."""
    slice_dim = indices.shape[-1] if indices.ndim > 1 else 1
    batch_dim = indices.ndim - 1 if indices.ndim > 1 else 1
    u = updates.shape
    ok = (len(u) >= batch_dim and len(u) == batch_dim + len(params_shape) - slice_dim
          and u[:batch_dim] == indices.shape[:batch_dim]
          and u[batch_dim:] == tuple(params_shape[slice_dim:]))
    if not ok:
        raise kernel_error(f"Must have updates.shape = indices.shape[:batch_dim] + "
                           f"params_shape[slice_dim:], got updates.shape: {dims_str(u)}, "
                           f"indices.shape: {dims_str(indices.shape)}, params_shape: "
                           f"{dims_str(params_shape)}, slice_dim: {slice_dim}, and "
                           f"batch_dim: {batch_dim}")


def scatter_nd_into(target, indices, updates, how):
    """`target` with `updates` scattered at the index rows of `indices` (checked)."""
    validate_update_shape(target.shape, indices, updates)
    k = indices.shape[-1]
    limits = np.array(target.shape[:k], np.int64)
    check_rows(indices, limits, target.shape)
    rows = tuple(jnp.moveaxis(dropping(indices, limits), -1, 0))
    at = jnp.asarray(target).at[rows]
    updates = jnp.asarray(updates, target.dtype)
    if how == "update":
        return at.set(updates, mode="drop")
    if how == "add":
        return at.add(updates, mode="drop")
    if how == "sub":
        return at.add(-updates, mode="drop")
    if how == "max":
        return at.max(updates, mode="drop")
    return at.min(updates, mode="drop")


def _update_grad(op, grad):
    indices = op.inputs[1]
    return [tensor_scatter_nd_update(identity(grad), indices, zeros_like(op.inputs[2])),
            None, gather_nd(grad, indices)]


def _add_grad(op, grad):
    return [identity(grad), None, gather_nd(grad, op.inputs[1])]


def _sub_grad(op, grad):
    return [identity(grad), None, negative(gather_nd(grad, op.inputs[1]))]


def _min_max_grad(op, grad):
    # TF's rule: the gradient is shared equally among the elements that tie for the result.
    x, indices, y = op.inputs
    out = op.outputs[0]
    x_hit = cast(equal(x, out), grad.dtype)
    y_hit = cast(equal(y, gather_nd(out, indices)), grad.dtype)
    hits = x_hit + scatter_nd(indices, y_hit, shape(x, out_type=indices.dtype))
    return [grad * x_hit / hits, None, gather_nd(grad / hits, indices) * y_hit]


def _register(op_type, how, types, grad):
    register(OpDef(
        op_type, inputs=("tensor: T", "indices: Tindices", "updates: T"),
        outputs=("output: T",), attrs={"T": types, "Tindices": _dtypes.INDEX},
        shape=_tensor_scatter_shape,
        lower=lambda tensor, indices, updates: scatter_nd_into(tensor, indices, updates, how),
        grad=grad))


_register("TensorScatterUpdate", "update", ANY, _update_grad)
_register("TensorScatterAdd", "add", _dtypes.NUMBERS, _add_grad)
_register("TensorScatterSub", "sub", _dtypes.NUMBERS, _sub_grad)
_register("TensorScatterMax", "max", _dtypes.REAL, _min_max_grad)
_register("TensorScatterMin", "min", _dtypes.REAL, _min_max_grad)


def tensor_scatter_nd_update(tensor, indices, updates, name=None):
    """A copy of `tensor` with the slices at `indices` replaced by `updates`."""
    return apply_op("TensorScatterUpdate", name=name, tensor=tensor, indices=indices,
                    updates=updates)


def tensor_scatter_nd_add(tensor, indices, updates, name=None):
    """A copy of `tensor` with `updates` added at `indices` (repeats accumulate)."""
    return apply_op("TensorScatterAdd", name=name, tensor=tensor, indices=indices,
                    updates=updates)


def tensor_scatter_nd_sub(tensor, indices, updates, name=None):
    """A copy of `tensor` with `updates` subtracted at `indices` (repeats accumulate)."""
    return apply_op("TensorScatterSub", name=name, tensor=tensor, indices=indices,
                    updates=updates)


def tensor_scatter_nd_max(tensor, indices, updates, name=None):
    """A copy of `tensor` with the elementwise max of it and `updates` at `indices`."""
    return apply_op("TensorScatterMax", name=name, tensor=tensor, indices=indices,
                    updates=updates)


def tensor_scatter_nd_min(tensor, indices, updates, name=None):
    """A copy of `tensor` with the elementwise min of it and `updates` at `indices`."""
    return apply_op("TensorScatterMin", name=name, tensor=tensor, indices=indices,
                    updates=updates)


# TF1's older names are the same functions.
tensor_scatter_update = tensor_scatter_nd_update
tensor_scatter_add = tensor_scatter_nd_add
tensor_scatter_sub = tensor_scatter_nd_sub
