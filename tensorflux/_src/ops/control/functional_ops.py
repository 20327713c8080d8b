"""`tf.scan`, `tf.map_fn`, `tf.foldl`, `tf.foldr`: one `Scan` op lowered to `lax.scan`.

TF1 builds these from a while_loop over TensorArrays; here the function is recorded
once as a body (ops/control/bodies.py) and XLA runs it as a scan over the leading dimension
of `elems`, which reverse-mode differentiates without unrolling.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from tensorflux._src.compiler import functional, state
from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.framework.tensor_shape import TensorShape
from tensorflux._src.ops.array.array_ops import concat, expand_dims
from tensorflux._src.ops.control.bodies import Body
from tensorflux._src.ops.control.control_flow_ops import (flatten, functional_grad,
                                                          make_functional, pack, same_structure)
from tensorflux._src.ops.registry import OpDef, register

__all__ = ["scan", "map_fn", "foldl", "foldr"]


def _lower_scan(op, values, ref_values, key):
    body, n_acc, n_elems = op._attrs["body"], op._attrs["n_acc"], op._attrs["n_elems"]
    # "scan": stack every accumulator; "fold": the last; "map"; "loop" (dynamic_rnn): the
    # body returns the accumulators then per-step outputs, the op the final accumulators
    # then the stacked outputs.
    mode = op._attrs["mode"]
    accs = [jnp.asarray(v, dtype=p.dtype.base_dtype.as_numpy_dtype)
            for v, p in zip(values[:n_acc], body.params)]
    elems = [jnp.asarray(v) for v in values[n_acc:n_acc + n_elems]]
    captures = dict(zip(body.captures, values[n_acc + n_elems:]))
    refs, written = op._attrs["refs"], op._attrs["body_writes_ordered"]
    read_only = {v: x for v, x in zip(refs, ref_values) if v not in written}
    written_start = [x for v, x in zip(refs, ref_values) if v in written]
    state.check_initialized(op, written_start)  # a loop carries what it assigns
    length = elems[0].shape[0]

    def step(carry, x):
        acc, written_values = carry
        slices, i = x
        ref_env = dict(read_only)
        ref_env.update(zip(written, written_values))
        step_key = jax.random.fold_in(key, i) if key is not None else None
        outs, new_refs = functional.evaluate_body(body, list(acc) + list(slices), captures,
                                                  ref_env, step_key)
        outs = functional.cast_like(outs, body.results)
        new_acc = outs[:n_acc] if mode != "map" else []
        stacked = outs if mode in ("map", "scan") else outs[n_acc:] if mode == "loop" else []
        return (new_acc, [new_refs[v] for v in written]), stacked

    (acc, final_refs), stacked = jax.lax.scan(
        step, (accs, written_start), (elems, jnp.arange(length, dtype=jnp.int32)),
        reverse=op._attrs["reverse"])
    if mode == "loop":
        return list(acc) + list(stacked), final_refs
    return (acc if mode == "fold" else stacked), final_refs


register(OpDef("Scan", inputs=("input: list(Tin)",), outputs=("output: list(Tout)",),
               shape=lambda op: list(op.get_attr("output_shapes")), lower=_lower_scan,
               grad=functional_grad, functional=True))


def _elems(elems, what):
    leaves, treedef = flatten(elems)
    if not leaves:
        raise ValueError(f"{what}: elems must be a Tensor or a (possibly nested) sequence of "
                         f"Tensors, got {elems!r}")
    tensors = [convert_to_tensor(e, name="elems") for e in leaves]
    for t in tensors:
        if t.shape.ndims == 0:
            raise ValueError(f"{what}: elements in elems must be 1+ dimensional, got "
                             f"{t.name} with shape {t.shape}")
    lengths = {t.shape[0].value for t in tensors if t.shape.ndims is not None}
    lengths.discard(None)
    if len(lengths) > 1:
        raise ValueError(f"{what}: all elems must have the same first dimension, got "
                         f"{sorted(lengths)}")
    return tensors, treedef, (lengths.pop() if lengths else None)


def _build(fn, mode, accs, acc_treedef, elems, elems_treedef, reverse, back_prop, what,
           out_treedef=None, out_dtypes=None):
    """Records fn as a body over (accumulators, element slices) and adds the Scan op."""
    graph = _graph.get_default_graph()
    body = Body(graph, "scan")
    acc_params = [body.add_param(a.dtype.base_dtype, a.shape, "acc") for a in accs]
    elem_params = [body.add_param(e.dtype.base_dtype, e.shape[1:], "elem") for e in elems]
    packed_elems = pack(elems_treedef, elem_params)
    with body:
        if mode == "map":
            result = fn(packed_elems)
        else:
            result = fn(pack(acc_treedef, acc_params), packed_elems)
        leaves, result_treedef = flatten(result)
        results = [convert_to_tensor(r) for r in leaves]
    if mode != "map":
        if not same_structure(pack(acc_treedef, accs), result):
            raise ValueError(f"{what}: fn must return the structure of the accumulator "
                             f"{acc_treedef}, got {result_treedef}.")
        for a, r in zip(accs, results):
            if a.dtype.base_dtype != r.dtype.base_dtype:
                raise TypeError(f"{what}: fn returned {r.dtype.base_dtype.name} for an "
                                f"accumulator of type {a.dtype.base_dtype.name}.")
            if a.shape.is_fully_defined() and r.shape.is_fully_defined() and a.shape != r.shape:
                raise ValueError(f"{what}: fn returned shape {r.shape} for an accumulator of "
                                 f"shape {a.shape}; the shape must not change across steps.")
        out_treedef = acc_treedef
    elif out_dtypes is not None:
        for r, d in zip(results, out_dtypes):
            if r.dtype.base_dtype != d:
                raise TypeError(f"{what}: fn returned {r.dtype.base_dtype.name} where dtype "
                                f"says {d.name}.")
    else:
        out_treedef = result_treedef
    body.finish(results)
    length = elems[0].shape[0].value if elems[0].shape.ndims is not None else None
    if mode == "fold":
        shapes = [a.shape for a in accs]
    else:
        shapes = [TensorShape([length]).concatenate(r.shape) for r in results]
    op = make_functional("Scan", accs + elems + body.captures, [body],
                         [r.dtype.base_dtype for r in results], shapes,
                         {"body": body, "n_acc": len(accs), "n_elems": len(elems), "mode": mode,
                          "reverse": bool(reverse), "back_prop": bool(back_prop)}, "Scan")
    return op.outputs, out_treedef


def _first(tensors, reverse):
    """(first element of each elem, the remaining elements) for scans without initializer."""
    if reverse:  # the accumulation starts from the last element
        return [t[-1] for t in tensors], [t[:-1] for t in tensors]
    return [t[0] for t in tensors], [t[1:] for t in tensors]


def _accumulators(tensors, elems_treedef, initializer, reverse):
    """(initial accumulators, their treedef, elems left to scan): without an initializer
    the first element (the last, in reverse) starts the accumulation, as in TF1."""
    if initializer is None:
        accs, rest = _first(tensors, reverse)
        return accs, elems_treedef, rest
    leaves, acc_treedef = flatten(initializer)
    return [convert_to_tensor(a, name="initializer") for a in leaves], acc_treedef, tensors


def scan(fn, elems, initializer=None, parallel_iterations=10, back_prop=True,
         swap_memory=False, infer_shape=True, reverse=False, name=None):
    """Accumulates `fn(acc, x)` over the first dimension of elems; returns every acc."""
    if not callable(fn):
        raise TypeError("fn must be callable.")
    with _graph.name_scope(name, "scan", flatten(elems)[0]):
        tensors, elems_treedef, _ = _elems(elems, "scan")
        accs, acc_treedef, tensors = _accumulators(tensors, elems_treedef, initializer,
                                                   reverse)
        outs, treedef = _build(fn, "scan", accs, acc_treedef, tensors, elems_treedef, reverse,
                               back_prop, "scan")
        if initializer is None:  # TF1 includes the first element as the first result
            outs = [concat([o, expand_dims(a, 0)] if reverse else [expand_dims(a, 0), o], 0)
                    for a, o in zip(accs, outs)]
        return pack(treedef, outs)


def map_fn(fn, elems, dtype=None, parallel_iterations=None, back_prop=True,
           swap_memory=False, infer_shape=True, name=None):
    """`fn` applied to each element along the first dimension of elems, stacked."""
    if not callable(fn):
        raise TypeError("fn must be callable.")
    with _graph.name_scope(name, "map", flatten(elems)[0]):
        tensors, elems_treedef, _ = _elems(elems, "map_fn")
        out_dtypes, out_treedef = None, None
        if dtype is not None:
            leaves, out_treedef = jax.tree_util.tree_flatten(
                dtype, is_leaf=lambda d: isinstance(d, _dtypes.DType))
            out_dtypes = [_dtypes.as_dtype(d).base_dtype for d in leaves]
        outs, treedef = _build(fn, "map", [], None, tensors, elems_treedef, False, back_prop,
                               "map_fn", out_treedef, out_dtypes)
        return pack(out_treedef if out_treedef is not None else treedef, outs)


def _fold(fn, elems, initializer, back_prop, name, reverse, what):
    if not callable(fn):
        raise TypeError("fn must be callable.")
    with _graph.name_scope(name, what, flatten(elems)[0]):
        tensors, elems_treedef, _ = _elems(elems, what)
        accs, acc_treedef, tensors = _accumulators(tensors, elems_treedef, initializer,
                                                   reverse)
        outs, treedef = _build(fn, "fold", accs, acc_treedef, tensors, elems_treedef, reverse,
                               back_prop, what)
        return pack(treedef, outs)


def foldl(fn, elems, initializer=None, parallel_iterations=10, back_prop=True,
          swap_memory=False, name=None):
    """fn(acc, x) over elems from first to last; returns the final accumulator."""
    return _fold(fn, elems, initializer, back_prop, name, False, "foldl")


def foldr(fn, elems, initializer=None, parallel_iterations=10, back_prop=True,
          swap_memory=False, name=None):
    """fn(acc, x) over elems from last to first; returns the final accumulator."""
    return _fold(fn, elems, initializer, back_prop, name, True, "foldr")
