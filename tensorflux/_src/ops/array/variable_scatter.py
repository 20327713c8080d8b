"""Scatter updates of a variable's buffer: scatter_{mul,div,min,max}, scatter_nd_{update,
add,sub}, batch_scatter_update, and the matching `tf.Variable` methods.

Like state_ops' ScatterUpdate/ScatterAdd, each record takes the variable's Ref and
`writes` it: the lowering gets the current value and returns the new one, which the
compiler threads through the run (docs/architecture.md, "Variables and state"). Repeated
indices combine as TF's kernels do: Mul/Div multiply/divide once per occurrence, Min/Max
keep the extreme, ScatterNdAdd/Sub accumulate, ScatterNdUpdate keeps one of the values.
Out-of-range indices raise TF's CPU error and leave the variable unchanged.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.ops.array import array_ops, generator_ops
from tensorflux._src.ops.array.gather_ops import scatter_nd_shape_helper
from tensorflux._src.ops.array.tensor_scatter import scatter_nd_into
from tensorflux._src.ops.math import math_ops
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.op_helpers import ANY, with_rank_at_least
from tensorflux._src.ops.registry import OpDef, register
from tensorflux._src.ops.state.state_ops import _ref, register_scatter

__all__ = ["batch_scatter_update", "scatter_div", "scatter_max", "scatter_min",
           "scatter_mul", "scatter_nd_add", "scatter_nd_sub", "scatter_nd_update"]

_MINMAX_TYPES = (_dtypes.float16, _dtypes.bfloat16, _dtypes.float32, _dtypes.float64,
                 _dtypes.int32, _dtypes.int64)


# -- Scatter{Mul,Div,Min,Max}: indices into dimension 0, as state_ops' ScatterUpdate --------
def _div(ref, indices, updates):
    # Dividing once per occurrence is dividing by the product of a row's updates (exact
    # for integers, whose division truncates as in C++).
    divisor = jnp.ones_like(ref).at[indices].multiply(updates, mode="drop")
    if jnp.issubdtype(ref.dtype, jnp.integer):
        return jax.lax.div(ref, divisor)
    return ref / divisor


register_scatter("ScatterMul", lambda ref, i, u: ref.at[i].multiply(u, mode="drop"),
                 use_locking=False)
register_scatter("ScatterDiv", _div, use_locking=False)
register_scatter("ScatterMin", lambda ref, i, u: ref.at[i].min(u, mode="drop"),
                 _MINMAX_TYPES, use_locking=False)
register_scatter("ScatterMax", lambda ref, i, u: ref.at[i].max(u, mode="drop"),
                 _MINMAX_TYPES, use_locking=False)


def scatter_mul(ref, indices, updates, use_locking=False, name=None):
    """ref[indices, ...] *= updates (repeated indices multiply)."""
    return apply_op("ScatterMul", name=name, ref=_ref(ref), indices=indices, updates=updates,
                    use_locking=use_locking)


def scatter_div(ref, indices, updates, use_locking=False, name=None):
    """ref[indices, ...] /= updates (repeated indices divide)."""
    return apply_op("ScatterDiv", name=name, ref=_ref(ref), indices=indices, updates=updates,
                    use_locking=use_locking)


def scatter_max(ref, indices, updates, use_locking=False, name=None):
    """ref[indices, ...] = max(ref[indices, ...], updates)."""
    return apply_op("ScatterMax", name=name, ref=_ref(ref), indices=indices, updates=updates,
                    use_locking=use_locking)


def scatter_min(ref, indices, updates, use_locking=False, name=None):
    """ref[indices, ...] = min(ref[indices, ...], updates)."""
    return apply_op("ScatterMin", name=name, ref=_ref(ref), indices=indices, updates=updates,
                    use_locking=use_locking)


# -- ScatterNd{Update,Add,Sub}: index rows into the first k dimensions ------------------------
def _scatter_nd_shape(op):
    ref = op.inputs[0].shape
    indices = with_rank_at_least(op.inputs[1].shape, 1)
    updates = with_rank_at_least(op.inputs[2].shape, 1)
    return scatter_nd_shape_helper(indices, updates, ref)


def _register_nd(op_type, how, types, use_locking):
    register(OpDef(
        op_type, inputs=("ref: Ref(T)", "indices: Tindices", "updates: T"),
        outputs=("output_ref: Ref(T)",),
        attrs={"T": types, "Tindices": _dtypes.INDEX, "use_locking": use_locking},
        shape=_scatter_nd_shape,
        lower=lambda ref, indices, updates: scatter_nd_into(ref, indices, updates, how),
        writes=("ref",)))


_register_nd("ScatterNdUpdate", "update", ANY, True)
_register_nd("ScatterNdAdd", "add", _dtypes.NUMBERS, False)
_register_nd("ScatterNdSub", "sub", _dtypes.NUMBERS, False)


def scatter_nd_update(ref, indices, updates, use_locking=True, name=None):
    """ref[indices[i]] = updates[i] for each index row (a slice of ref's first k dims)."""
    return apply_op("ScatterNdUpdate", name=name, ref=_ref(ref), indices=indices,
                    updates=updates, use_locking=use_locking)


def scatter_nd_add(ref, indices, updates, use_locking=False, name=None):
    """ref[indices[i]] += updates[i] (repeated rows accumulate)."""
    return apply_op("ScatterNdAdd", name=name, ref=_ref(ref), indices=indices,
                    updates=updates, use_locking=use_locking)


def scatter_nd_sub(ref, indices, updates, use_locking=False, name=None):
    """ref[indices[i]] -= updates[i] (repeated rows accumulate)."""
    return apply_op("ScatterNdSub", name=name, ref=_ref(ref), indices=indices,
                    updates=updates, use_locking=use_locking)


def batch_scatter_update(ref, indices, updates, use_locking=True, name=None):
    """scatter_update along the last dimension of `indices`, per batch row:
    ref[i1, ..., in, indices[i1, ..., in, j]] = updates[i1, ..., in, j].

    Built as TF builds it: the leading coordinates come from ranges over indices' shape
    and are joined with `indices` into the index rows of one scatter_nd_update.
    """
    with _graph.name_scope(name):
        indices = convert_to_tensor(indices, name="indices")
        indices_shape = array_ops.shape(indices)
        ndims = indices.shape.ndims
        if ndims is None:
            raise ValueError("batch_gather does not allow indices with unknown shape.")
        nd_indices = array_ops.expand_dims(indices, axis=-1)
        parts = []
        for dimension in range(ndims - 1):
            size = indices_shape[dimension]
            broadcast = [1] * (ndims + 1)
            broadcast[dimension] = size
            coords = array_ops.reshape(math_ops.range(0, size, 1), broadcast)
            if coords.dtype.base_dtype != nd_indices.dtype.base_dtype:
                coords = math_ops.cast(coords, nd_indices.dtype)
            parts.append(coords * generator_ops.ones_like(nd_indices))
        parts.append(nd_indices)
        final_indices = array_ops.concat(parts, axis=-1)
        return scatter_nd_update(ref, final_indices, updates, use_locking=use_locking)
