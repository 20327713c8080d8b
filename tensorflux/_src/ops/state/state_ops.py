"""Variables and their updates: VariableV2, Assign*, Scatter*, IsVariableInitialized.

A variable's value lives in the Session, not in the graph. These records say which
Ref inputs an op reads or writes; the compiler threads the values through each
compiled run (see `compiler/state.py`).
"""

from __future__ import annotations

import jax.numpy as jnp

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.compiler import effects
from tensorflux._src.framework import errors, tensor_shape
from tensorflux._src.ops.index_checks import check_first_dim, dims_str, dropping
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.op_helpers import kernel_error, merge_shapes
from tensorflux._src.ops.registry import OpDef, REQUIRED, register

__all__ = ["assign", "assign_add", "assign_sub", "scatter_update", "scatter_add",
           "scatter_sub", "is_variable_initialized", "count_up_to"]

register(OpDef(
    "VariableV2",
    outputs=("ref: Ref(dtype)",),
    attrs={"dtype": _dtypes.ALL, "shape": REQUIRED, "container": "", "shared_name": ""},
    shape=lambda op: op.get_attr("shape"),
    is_variable=True,
    not_differentiable=True,
))


def variable_op(shape, dtype, name=None, container="", shared_name=""):
    """The raw variable op (its value is the Session's buffer for it)."""
    return apply_op("VariableV2", name=name, shape=tensor_shape.as_shape(shape),
                    dtype=_dtypes.as_dtype(dtype).base_dtype, container=container,
                    shared_name=shared_name)


def _assign_shape(op):
    ref, value = op.inputs[0].shape, op.inputs[1].shape
    if not op.get_attr("validate_shape"):
        return value
    if not ref.is_compatible_with(value):
        raise ValueError(f"Shapes must be equal rank, but are {ref.ndims} and {value.ndims}"
                         if ref.ndims != value.ndims else
                         f"Dimension mismatch: shapes {ref} and {value} are incompatible")
    return ref.merge_with(value)


def _same_as_ref(op):
    ref, value = op.inputs[0].shape, op.inputs[1].shape
    if not ref.is_compatible_with(value):
        raise ValueError(f"Shapes must be equal rank, but are {ref.ndims} and {value.ndims}"
                         if ref.ndims != value.ndims else
                         f"Dimensions must be equal: shapes {ref} and {value}")
    return ref


register(OpDef(
    "Assign",
    inputs=("ref: Ref(T)", "value: T"), outputs=("output_ref: Ref(T)",),
    attrs={"T": _dtypes.ALL, "validate_shape": True, "use_locking": True},
    shape=_assign_shape,
    lower=lambda ref, value: value,
    writes=("ref",), overwrites=True,
))
register(OpDef(
    "AssignAdd",
    inputs=("ref: Ref(T)", "value: T"), outputs=("output_ref: Ref(T)",),
    attrs={"T": _dtypes.NUMBERS, "use_locking": False},
    shape=_same_as_ref, lower=lambda ref, value: ref + value, writes=("ref",),
))
register(OpDef(
    "AssignSub",
    inputs=("ref: Ref(T)", "value: T"), outputs=("output_ref: Ref(T)",),
    attrs={"T": _dtypes.NUMBERS, "use_locking": False},
    shape=_same_as_ref, lower=lambda ref, value: ref - value, writes=("ref",),
))


def scatter_shape(op):
    """TF's ScatterUpdateShape: updates is indices.shape + ref.shape[1:], or a scalar."""
    ref, indices, updates = (t.shape for t in op.inputs)
    if updates.ndims != 0 and ref.ndims is not None and indices.ndims is not None:
        merge_shapes(updates, indices.concatenate(ref[1:]))
    return ref


def checked_first_dim(ref, indices, updates):
    """(indices, updates) for a scatter into dimension 0 of `ref`: TF's CPU errors for a
    bad updates shape or an index outside [0, len(ref)) (fed indices fail the run and
    write nothing), negative indices moved out of range so the scatter drops them, and
    a scalar `updates` broadcast."""
    if ref.ndim < 1:
        raise kernel_error(f"params must be at least 1-D, got shape {dims_str(ref.shape)}")
    expected = indices.shape + ref.shape[1:]
    if updates.ndim and updates.shape != expected:
        raise kernel_error(f"Must have updates.shape = indices.shape + params.shape[1:] or "
                           f"updates.shape = [], got updates.shape "
                           f"{dims_str(updates.shape)}, indices.shape "
                           f"{dims_str(indices.shape)}, params.shape {dims_str(ref.shape)}")
    check_first_dim(indices, ref.shape[0])
    updates = jnp.broadcast_to(jnp.asarray(updates, ref.dtype), expected)
    return dropping(indices, ref.shape[0]), updates


def register_scatter(op_type, update, types=_dtypes.NUMBERS, use_locking=True):
    """A record updating rows of a variable: `update(ref, indices, updates)` gets checked
    indices and broadcast updates (checked_first_dim)."""
    def lower(ref, indices, updates):
        indices, updates = checked_first_dim(ref, indices, updates)
        return update(jnp.asarray(ref), indices, updates)

    register(OpDef(
        op_type,
        inputs=("ref: Ref(T)", "indices: Tindices", "updates: T"),
        outputs=("output_ref: Ref(T)",),
        attrs={"T": types, "Tindices": _dtypes.INDEX, "use_locking": use_locking},
        shape=scatter_shape, lower=lower, writes=("ref",),
    ))


# Repeated indices: Update keeps one of the values, Add/Sub accumulate (as TF). Through
# effects.scatter, so a run failing a check keeps the variable without copying it whole.
register_scatter("ScatterUpdate", lambda ref, i, u: effects.scatter(ref, i, u))
register_scatter("ScatterAdd", lambda ref, i, u: effects.scatter(ref, i, u, add=True))
register_scatter("ScatterSub", lambda ref, i, u: effects.scatter(ref, i, -u, add=True))

register(OpDef(
    "IsVariableInitialized",
    inputs=("ref: Ref(dtype)",), outputs=("is_initialized: bool",),
    attrs={"dtype": _dtypes.ALL},
    shape=lambda op: tensor_shape.TensorShape([]),
    lower=lambda ref: ref,  # the runtime passes whether the variable has a value
    checks_initialized=True,
    not_differentiable=True,
))


def _ref(x):
    """The ref tensor of a Variable (or a ref tensor itself)."""
    return x._ref() if hasattr(x, "_ref") else x


def assign(ref, value, validate_shape=None, use_locking=None, name=None):
    """Sets `ref` to `value`; returns the updated ref (its value after the assignment)."""
    return apply_op("Assign", name=name, ref=_ref(ref), value=value,
                    validate_shape=True if validate_shape is None else validate_shape,
                    use_locking=True if use_locking is None else use_locking)


def assign_add(ref, value, use_locking=None, name=None):
    """Adds `value` to `ref`; returns the updated ref."""
    return apply_op("AssignAdd", name=name, ref=_ref(ref), value=value,
                    use_locking=bool(use_locking))


def assign_sub(ref, value, use_locking=None, name=None):
    """Subtracts `value` from `ref`; returns the updated ref."""
    return apply_op("AssignSub", name=name, ref=_ref(ref), value=value,
                    use_locking=bool(use_locking))


def scatter_update(ref, indices, updates, use_locking=True, name=None):
    """ref[indices, ...] = updates."""
    return apply_op("ScatterUpdate", name=name, ref=_ref(ref), indices=indices,
                    updates=updates, use_locking=use_locking)


def scatter_add(ref, indices, updates, use_locking=False, name=None):
    """ref[indices, ...] += updates (repeated indices accumulate)."""
    return apply_op("ScatterAdd", name=name, ref=_ref(ref), indices=indices,
                    updates=updates, use_locking=use_locking)


def scatter_sub(ref, indices, updates, use_locking=False, name=None):
    """ref[indices, ...] -= updates (repeated indices accumulate)."""
    return apply_op("ScatterSub", name=name, ref=_ref(ref), indices=indices,
                    updates=updates, use_locking=use_locking)


def is_variable_initialized(variable):
    """A bool tensor: whether `variable` has been assigned a value in the Session."""
    return apply_op("IsVariableInitialized", ref=_ref(variable))


def _count_up_to(ref, limit):
    # Fails the run with TF's OutOfRangeError once the variable reached `limit`; the
    # failed run keeps the variable as it was (see compiler/effects.py).
    effects.check(ref < limit, f"Reached limit of {limit}", error=errors.OutOfRangeError)
    return ref + 1, ref  # (new value of ref, output: the value before the increment)


register(OpDef(
    "CountUpTo",
    inputs=("ref: Ref(T)",), outputs=("output: T",),
    attrs={"T": _dtypes.INDEX, "limit": REQUIRED},
    shape=lambda op: op.inputs[0].shape, lower=_count_up_to, writes=("ref",),
    not_differentiable=True,
))


def count_up_to(ref, limit, name=None):
    """Increments `ref` until it reaches `limit`; returns its value before the increment.
    The run that would pass `limit` fails with OutOfRangeError."""
    return apply_op("CountUpTo", name=name, ref=_ref(ref), limit=int(limit))
