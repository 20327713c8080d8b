"""Sparse optimizer updates (SparseApplyAdagrad, SparseApplyMomentum, ...): TF1's fused
updates of the rows of a variable and its slots that an IndexedSlices gradient names.

Each record reads the touched rows of the variable and its slots, applies TF1's per-row
formula (that of TF's CPU kernel) and scatters the new rows back, so a step costs time
and memory in proportion to the rows touched: with the variable's buffer donated, XLA
updates it in place (`effects.scatter` keeps that true when the run also has run-time
checks). Repeated indices are summed first and their row updated once, which is what
TF1's optimizers do before they call these kernels (`_deduplicate_indexed_slices`); TF's
kernels themselves apply repeats one after another, or race on them. An index outside
[0, rows) is TF's InvalidArgumentError "Index 7 at offset 2 in indices is out of range"
(when the graph is compiled for constant indices, else when the run ends; the run then
writes nothing).

`_DeduplicateIndexedSlices` is the static-shape deduplication AdamOptimizer's sparse path
needs: TF's Unique has a data-dependent size, which would recompile a run per count.
"""

from __future__ import annotations

import inspect

import jax
import jax.numpy as jnp
import numpy as np

from tensorflux._src.compiler import effects
from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework.tensor_shape import TensorShape
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.op_helpers import dims_str, kernel_error, merge_shapes, with_rank
from tensorflux._src.ops.registry import OpDef, register

_T = _dtypes.FLOAT_COMPLEX


def _sparse_shape(op):
    """TF's shape function of the SparseApply* ops: the variable and its slots agree,
    hyperparameters are scalars, indices a vector as long as grad, and grad's rows have
    the variable's row shape."""
    names = [a.name for a in op.op_def.input_args]
    var = op.inputs[0].shape
    for name, t in zip(names, op.inputs):
        if name in ("grad", "indices"):
            continue
        if t.dtype._is_ref_dtype:
            var = merge_shapes(var, t.shape)
        else:
            with_rank(t.shape, 0)
    grad = op.inputs[names.index("grad")].shape
    indices = with_rank(op.inputs[names.index("indices")].shape, 1)
    merge_shapes(TensorShape(grad.dims[:1]) if grad.ndims else TensorShape([None]), indices)
    if grad.ndims is not None:
        var = merge_shapes(var, TensorShape([None]).concatenate(grad[1:]))
    return var


def _check_indices(indices, n):
    """TF's sparse kernels' error for an index outside [0, n)."""
    if np.size(indices) == 0:
        return
    xp = np if isinstance(indices, np.ndarray) else jnp
    ok = xp.all((indices >= 0) & (indices < n))

    def message(values):
        bad = int(np.flatnonzero((values < 0) | (values >= n))[0])
        return f"Index {int(values[bad])} at offset {bad} in indices is out of range"

    effects.check(ok, message, data=(indices,))


def deduplicate(values, indices, fill):
    """(unique indices, summed values), both as long as `indices`: the first ones are the
    distinct indices in increasing order with the sum of their values, the rest are
    `fill` (an index; None for the smallest index) with zero values."""
    n = indices.shape[0]
    if fill is None:
        unique, inverse = jnp.unique(indices, size=n, return_inverse=True)
    else:
        unique, inverse = jnp.unique(indices, size=n, fill_value=fill, return_inverse=True)
    summed = jax.ops.segment_sum(values, jnp.reshape(inverse, (-1,)), num_segments=n)
    return unique, summed.astype(values.dtype)


def _rows_update(op_type, refs, grad, indices, rule):
    """New values of `refs` (the variable, then its slots) after `rule` updated the rows
    named by `indices`: rule(*rows, g) -> new rows, g their summed gradient rows."""
    var = refs[0]
    if var.ndim < 1:
        raise kernel_error("var must be at least 1 dimensional")
    if indices.ndim != 1:
        raise kernel_error("indices must be one-dimensional")
    for d in range(1, var.ndim):
        if grad.ndim <= d or grad.shape[d] != var.shape[d]:
            raise kernel_error(f"var and grad must match in dimension {d}")
    if grad.shape[0] != indices.shape[0]:
        raise kernel_error("grad must be the same size as indices in the first dimension.")
    for r in refs[1:]:
        if r.shape != var.shape:
            raise kernel_error(f"var and its slots do not have the same shape"
                               f"{dims_str(var.shape)} {dims_str(r.shape)}")
    if indices.shape[0] == 0:
        return tuple(refs)
    n = var.shape[0]
    _check_indices(indices, n)
    # Rows past the end (the padding of the unique indices) read zeros and are dropped.
    unique, g = deduplicate(grad, indices, n)
    rows = [r.at[unique].get(mode="fill", fill_value=0) for r in refs]
    new_rows = rule(*rows, g)
    return tuple(effects.scatter(r, unique, new.astype(r.dtype))
                 for r, new in zip(refs, new_rows))


def _register(op_type, inputs, writes, rule, **attrs):
    """A SparseApply* record: inputs in TF's order; `rule(*rows, g, **scalars)` gets the
    rows of the written refs (in `writes` order), the summed gradient rows and the
    other inputs by name (plus the record's attrs it names)."""
    names = [i.split(":")[0] for i in inputs]
    scalar_names = [n for n in names if n not in writes and n not in ("grad", "indices")]

    def lower(*args, **attr_values):
        by_name = dict(zip(names, args))
        refs = [jnp.asarray(by_name[n]) for n in writes]
        scalars = {n: by_name[n] for n in scalar_names}
        new = _rows_update(op_type, refs, jnp.asarray(by_name["grad"]), by_name["indices"],
                           lambda *rows: rule(*rows, **scalars, **attr_values))
        return new if len(new) > 1 else new[0]

    lower.__signature__ = _lower_signature(names, attrs)
    register(OpDef(op_type, inputs=inputs, outputs=("out: Ref(T)",),
                   attrs={"T": _T, "Tindices": _dtypes.INDEX, "use_locking": False, **attrs},
                   shape=_sparse_shape, lower=lower, writes=tuple(writes)))


def _lower_signature(names, attrs):
    # The registry passes a lowering the attrs its signature names.
    params = [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in names]
    params += [inspect.Parameter(a, inspect.Parameter.KEYWORD_ONLY) for a in attrs]
    return inspect.Signature(params)


# -- the per-row formulas of TF's CPU kernels (training_ops.cc) -------------------------------
def _proximal(prox, step, l1, l2):
    """TF's Fobos step: shrink |prox| by step * l1, then scale by 1 / (1 + step * l2)."""
    return jnp.sign(prox) * jnp.maximum(jnp.abs(prox) - step * l1, 0) / (1 + l2 * step)


def _gd_proximal(var, g, alpha, l1, l2):
    return (_proximal(var - alpha * g, alpha, l1, l2),)


def _momentum(var, accum, g, lr, momentum, use_nesterov):
    accum = accum * momentum + g
    step = g * lr + accum * momentum * lr if use_nesterov else accum * lr
    return var - step, accum


def _adagrad(var, accum, g, lr, update_slots):
    if update_slots:
        accum = accum + g * g
    return var - lr * g / jnp.sqrt(accum), accum


def _proximal_adagrad(var, accum, g, lr, l1, l2):
    accum = accum + g * g
    step = lr / jnp.sqrt(accum)
    return _proximal(var - g * step, step, l1, l2), accum


def _adagrad_da(var, g_acc, gg_acc, g, lr, l1, l2, global_step):
    g_acc = g_acc + g
    gg_acc = gg_acc + g * g
    step = jnp.asarray(global_step).astype(var.dtype)
    # w = -sign(g_acc) * lr * max(|g_acc| - l1 * T, 0) / (l2 * T * lr + sqrt(gg_acc))
    numerator = -jnp.sign(g_acc) * jnp.maximum(jnp.abs(g_acc) - l1 * step, 0) * lr
    return numerator / (l2 * step * lr + jnp.sqrt(gg_acc)), g_acc, gg_acc


def _ftrl_rows(var, accum, linear, g, lr, l1, l2, lr_power, l2_shrinkage=0.0):
    shrunk = g + 2 * l2_shrinkage * var
    new_accum = accum + g * g
    linear = linear + shrunk - (new_accum ** -lr_power - accum ** -lr_power) / lr * var
    quadratic = new_accum ** -lr_power / lr + 2 * l2
    var = jnp.where(jnp.abs(linear) > l1, (jnp.sign(linear) * l1 - linear) / quadratic, 0)
    return var, new_accum, linear


def _rmsprop(var, ms, mom, g, lr, rho, momentum, epsilon):
    ms = ms * rho + g * g * (1 - rho)
    mom = mom * momentum + lr * g / jnp.sqrt(ms + epsilon)
    return var - mom, ms, mom


def _centered_rmsprop(var, mg, ms, mom, g, lr, rho, momentum, epsilon):
    ms = ms * rho + g * g * (1 - rho)
    mg = mg * rho + g * (1 - rho)
    mom = mom * momentum + lr * g / jnp.sqrt(ms + epsilon - mg * mg)
    return var - mom, mg, ms, mom


def _adadelta(var, accum, accum_update, g, lr, rho, epsilon):
    accum = accum * rho + g * g * (1 - rho)
    update = jnp.sqrt(accum_update + epsilon) / jnp.sqrt(accum + epsilon) * g
    accum_update = accum_update * rho + update * update * (1 - rho)
    return var - update * lr, accum, accum_update


_G = ("grad: T", "indices: Tindices")
_register("SparseApplyProximalGradientDescent",
          ("var: Ref(T)", "alpha: T", "l1: T", "l2: T") + _G, ("var",), _gd_proximal)
_register("SparseApplyMomentum", ("var: Ref(T)", "accum: Ref(T)", "lr: T") + _G
          + ("momentum: T",), ("var", "accum"), _momentum, use_nesterov=False)
_register("SparseApplyAdagrad", ("var: Ref(T)", "accum: Ref(T)", "lr: T") + _G,
          ("var", "accum"), _adagrad, update_slots=True)
_register("SparseApplyProximalAdagrad",
          ("var: Ref(T)", "accum: Ref(T)", "lr: T", "l1: T", "l2: T") + _G,
          ("var", "accum"), _proximal_adagrad)
_register("SparseApplyAdagradDA",
          ("var: Ref(T)", "gradient_accumulator: Ref(T)",
           "gradient_squared_accumulator: Ref(T)") + _G
          + ("lr: T", "l1: T", "l2: T", "global_step: int64"),
          ("var", "gradient_accumulator", "gradient_squared_accumulator"), _adagrad_da)
_register("SparseApplyFtrl", ("var: Ref(T)", "accum: Ref(T)", "linear: Ref(T)") + _G
          + ("lr: T", "l1: T", "l2: T", "lr_power: T"), ("var", "accum", "linear"),
          _ftrl_rows)
_register("SparseApplyFtrlV2", ("var: Ref(T)", "accum: Ref(T)", "linear: Ref(T)") + _G
          + ("lr: T", "l1: T", "l2: T", "l2_shrinkage: T", "lr_power: T"),
          ("var", "accum", "linear"), _ftrl_rows)
_register("SparseApplyRMSProp", ("var: Ref(T)", "ms: Ref(T)", "mom: Ref(T)", "lr: T",
                                 "rho: T", "momentum: T", "epsilon: T") + _G,
          ("var", "ms", "mom"), _rmsprop)
_register("SparseApplyCenteredRMSProp",
          ("var: Ref(T)", "mg: Ref(T)", "ms: Ref(T)", "mom: Ref(T)", "lr: T", "rho: T",
           "momentum: T", "epsilon: T") + _G, ("var", "mg", "ms", "mom"), _centered_rmsprop)
_register("SparseApplyAdadelta", ("var: Ref(T)", "accum: Ref(T)", "accum_update: Ref(T)",
                                  "lr: T", "rho: T", "epsilon: T") + _G,
          ("var", "accum", "accum_update"), _adadelta)


# -- static-shape deduplication ---------------------------------------------------------------
def _dedup_shape(op):
    values, indices = op.inputs
    indices = with_rank(indices.shape, 1)
    if values.shape.ndims is not None:
        merge_shapes(TensorShape(values.shape.dims[:1]), indices)
    return [values.shape, indices]


register(OpDef(
    "_DeduplicateIndexedSlices", inputs=("values: T", "indices: Tindices"),
    outputs=("summed_values: T", "unique_indices: Tindices"),
    attrs={"T": _dtypes.NUMBERS, "Tindices": _dtypes.INDEX},
    shape=_dedup_shape,
    lower=lambda values, indices: deduplicate(values, indices, None)[::-1],
    not_differentiable=True,
))


def deduplicate_indexed_slices_padded(values, indices, name=None):
    """(summed values, unique indices) as long as the inputs: past the distinct indices
    come copies of the smallest index with zero values, harmless to scatter_add."""
    return apply_op("_DeduplicateIndexedSlices", name=name, values=values, indices=indices)
