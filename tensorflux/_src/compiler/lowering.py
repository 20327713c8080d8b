"""Evaluating one op through its OpDef's `lower`: statically (folding) or traced by JAX.

Values flowing through a lowering are either numpy arrays (statically known: constants,
shapes of traced arrays, anything computed only from those) or JAX tracers. An op whose
inputs are all static is evaluated right away, so shape-like values never become
traced and XLA sees only static shapes, as it requires.
"""

from __future__ import annotations

import jax
import numpy as np

from tensorflux._src.compiler import effects, handoff
from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import errors

# Static results up to this many elements are folded into constants; larger ones are
# computed inside XLA (a broadcast is cheaper than embedding a big literal).
FOLD_MAX_ELEMENTS = 1 << 16


def _call_lower(op, inputs):
    op_def = op.op_def
    effects.set_current_op(op)
    kwargs = {k: op._attrs[k] for k in op_def.lower_attrs}
    if op_def.strings_by_rank and any(_is_strings(v) for v in inputs):
        return _lower_on_ranks(op, inputs, kwargs)
    out = op_def.lower(*inputs, **kwargs)
    if len(op_def.output_args) == 1 and not op_def.output_args[0].is_list:
        return [out]
    return list(out)


def _is_strings(value) -> bool:
    return isinstance(value, np.ndarray) and value.dtype == object


def _lower_on_ranks(op, inputs, kwargs):
    """A `strings_by_rank` op on string tensors (numpy object arrays of bytes, on the
    host): each string becomes its rank in the sorted strings of all string inputs, with
    b"" (TF's zero string: padding, zeros_like) at rank 0, so moving, selecting and
    comparing ranks is doing it to the strings; string outputs are mapped back."""
    strings = [v for v in inputs if _is_strings(v)]
    # Resource handles (queue keys, str) are moved the same way; their zero is "".
    zero = "" if any(t.dtype.base_dtype == _dtypes.resource for t in op.outputs) else b""
    table = np.unique(np.concatenate([np.array([zero], dtype=object)]
                                     + [v.reshape(-1) for v in strings]))
    ranked = [np.searchsorted(table, v).astype(np.int32) if _is_strings(v) else v
              for v in inputs]
    # Type attrs naming the string dtype (T, dtype) now describe the int32 ranks.
    kwargs = {k: (_dtypes.int32 if isinstance(v, _dtypes.DType) and v.base_dtype in
                  _OBJECT_DTYPES else v) for k, v in kwargs.items()}
    out = op.op_def.lower(*ranked, **kwargs)
    outs = [out] if len(op.op_def.output_args) == 1 and not op.op_def.output_args[0].is_list \
        else list(out)
    # np.asarray(..., object): indexing with a 0-d array gives a bare bytes object, which
    # numpy would turn into a bytes_ scalar that drops trailing NUL bytes.
    return [np.asarray(table[np.asarray(v)], dtype=object)
            if t.dtype.base_dtype in _OBJECT_DTYPES else v for v, t in zip(outs, op.outputs)]


_OBJECT_DTYPES = (_dtypes.string, _dtypes.resource)


def _check_outputs(op, outs):
    """Casts to the op's declared dtypes and checks shapes against shape inference."""
    if len(outs) != len(op.outputs):
        raise errors.InternalError(None, op, f"Lowering of {op.type} op '{op.name}' returned "
                                   f"{len(outs)} values for {len(op.outputs)} outputs.")
    checked = []
    for tensor, value in zip(op.outputs, outs):
        want = np.dtype(tensor.dtype.as_numpy_dtype)
        if value.dtype != want and want != np.object_:
            value = value.astype(want)
        if not tensor.shape.is_compatible_with(value.shape):
            raise errors.InternalError(
                None, op, f"Lowering of {op.type} op '{op.name}' produced shape "
                f"{tuple(value.shape)}, but shape inference gave {tensor.shape}.")
        checked.append(value)
    return checked


def _static_outputs_small(op) -> bool:
    for t in op.outputs:
        n = t.shape.num_elements()
        if n is not None and n > FOLD_MAX_ELEMENTS:
            return False
    return True


def can_fold(op, inputs) -> bool:  # random and stateful ops never fold
    return (not op.op_def.stateful and op.op_def.lower is not None
            and all(isinstance(v, np.ndarray) for v in inputs) and _static_outputs_small(op))


def fold_op(op, inputs, max_elements=FOLD_MAX_ELEMENTS):
    """Evaluates `op` on static inputs now; returns numpy outputs, or None if too big."""
    try:
        with jax.ensure_compile_time_eval():
            outs = [np.asarray(v) for v in _call_lower(op, inputs)]
    except errors.OpError as e:
        raise _with_node(op, e) from None
    except Exception as e:  # noqa: BLE001 - report which op failed, as TF does
        raise _invalid_argument(op, e) from e
    if max_elements is not None and any(v.size > max_elements for v in outs):
        return None
    return _check_outputs(op, outs)


def lower_op(op, inputs):
    """Lowers `op` inside a JAX trace; folds it instead when its inputs are static. An
    op whose outputs an earlier op's lowering computed (handoff.py) takes those."""
    handed = handoff.take(op)
    if handed is not None:
        return _check_outputs(op, handed)
    if can_fold(op, inputs):
        folded = fold_op(op, inputs)
        if folded is not None:
            return folded
    try:
        outs = _call_lower(op, inputs)
    except errors.OpError as e:
        raise _with_node(op, e) from None
    except Exception as e:  # noqa: BLE001
        raise _invalid_argument(op, e) from e
    return _check_outputs(op, outs)


def _with_node(op, exc):
    """An OpError raised by a lowering, completed with the op it came from, as TF does."""
    if exc.op is not None:
        return exc
    return type(exc)(None, op, f"{exc.message}\n\t [[{{{{node {op.name}}}}}]]")


# JAX raises these when a lowering needs a concrete value (a shape) but got a traced one.
_NEEDS_CONCRETE = (jax.errors.TracerArrayConversionError, jax.errors.ConcretizationTypeError,
                   jax.errors.TracerIntegerConversionError, jax.errors.TracerBoolConversionError)


def _invalid_argument(op, exc):
    if isinstance(exc, _NEEDS_CONCRETE):
        return errors.StaticValueRequired(
            None, op, f"{op.type} needs a value known when the graph is compiled (XLA "
            f"requires static shapes), but one of its inputs depends on a fed, variable or "
            f"random value.\n\t [[{{{{node {op.name}}}}}]]")
    # Lowerings raise ValueError with TF's wording on purpose; anything else is reported
    # with its type, since it comes from JAX/XLA rather than from the op's rules.
    message = str(exc) if isinstance(exc, ValueError) else f"{type(exc).__name__}: {exc}"
    return errors.InvalidArgumentError(None, op, f"{message}\n\t [[{{{{node {op.name}}}}}]]")


def lower_writer(op, inputs, written_refs):
    """Lowers an op that updates variables; returns the new value of each written ref."""
    effects.set_current_op(op)
    try:
        out = op.op_def.lower(*inputs, **{k: op._attrs[k] for k in op.op_def.lower_attrs})
    except errors.OpError as e:
        raise _with_node(op, e) from None
    except Exception as e:  # noqa: BLE001
        raise _invalid_argument(op, e) from e
    # A writer whose output is not its ref (CountUpTo returns the old value) returns
    # (new ref values..., output); the output then comes last in the returned list.
    # An op with no outputs (SdcaShrinkL1) returns the new values only.
    outputs = op.op_def.output_args
    extra = 0 if not outputs or outputs[0].is_ref else 1
    values = (out,) if len(written_refs) + extra == 1 else tuple(out)
    checked = []
    for ref, value in zip(written_refs, values):
        want = np.dtype(ref.dtype.as_numpy_dtype)
        checked.append(value if value.dtype == want else value.astype(want))
    return checked + list(values[len(written_refs):])


def writer_output(new_values, written_refs):
    """Output 0 of a writer op, from what `lower_writer` returned."""
    return new_values[-1] if len(new_values) > len(written_refs) else new_values[0]


def run_host_kernel(op, inputs, session_state=None):
    """Runs a host op's NumPy kernel; returns its outputs checked like a lowering's."""
    op_def = op.op_def
    effects.set_current_op(op)
    attrs = {k: op._attrs[k] for k in op_def.lower_attrs}
    if op_def.uses_session:
        attrs["session_state"] = session_state
    try:
        out = op_def.host(*inputs, **attrs)
    except errors.OpError as e:
        raise _with_node(op, e) from None
    except Exception as e:  # noqa: BLE001
        raise _invalid_argument(op, e) from e
    outs = [out] if len(op_def.output_args) == 1 and not op_def.output_args[0].is_list \
        else list(out)
    return _check_outputs(op, [np.asarray(v) for v in outs])
