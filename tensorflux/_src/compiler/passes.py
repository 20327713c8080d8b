"""Graph passes run before lowering: pruning (DCE), common subexpressions, folding."""

from __future__ import annotations

import numpy as np

from tensorflux._src.compiler import lowering
from tensorflux._src.framework import errors
from tensorflux._src.framework.tensor_shape import TensorShape


def prune(fetch_tensors, target_ops, known, canonical=None):
    """Ops needed to compute the fetches and run the targets, in topological order.

    A known tensor (fed, or already folded) cuts the graph: its producer is needed only
    for its other outputs or as a target/control dependency. With `canonical` (from
    common_subexpressions), inputs are followed to their representatives.
    """
    canonical = canonical or {}
    needed = set()
    stack = [t.op for t in fetch_tensors if t not in known] + list(target_ops)
    while stack:
        op = stack.pop()
        if op in needed:
            continue
        needed.add(op)
        for t in op.inputs:
            t = canonical.get(t, t)
            if t not in known and t.op not in needed:
                stack.append(t.op)
        stack.extend(c for c in op._control_inputs if c not in needed)
    return sorted(needed, key=lambda op: op._id)  # creation order is topological


def check_feeds(ops, fed):
    """Placeholders that a run needs but nobody fed raise TF's InvalidArgumentError."""
    for op in ops:
        if op.op_def.lower is None and op.type == "Placeholder" and op.outputs[0] not in fed:
            t = op.outputs[0]
            shape = t.shape
            message = (f"You must feed a value for placeholder tensor '{op.name}' with dtype "
                       f"{t.dtype._tf_name}")
            if shape.ndims is not None:
                message += f" and shape {shape._bracket_str()}"
            raise errors.InvalidArgumentError(
                None, op, f"{message}\n\t [[{{{{node {op.name}}}}}]]")


def _hashable(value):
    if isinstance(value, np.ndarray):
        return (value.dtype.str, value.shape, value.tobytes() if value.dtype != object
                else tuple(value.reshape(-1)))
    if isinstance(value, TensorShape):
        return ("shape", value.as_tuple_or_none())
    if isinstance(value, (list, tuple)):
        return tuple(_hashable(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((k, _hashable(v)) for k, v in value.items()))
    hash(value)
    return value


def common_subexpressions(ops, fed):
    """Maps each tensor to a representative computing the same value (stateless ops only)."""
    canonical = {}  # tensor -> tensor
    seen = {}
    for op in ops:
        if (op.op_def.stateful or op.op_def.lower is None or any(t in fed for t in op.outputs)
                or any(t.dtype._is_ref_dtype for t in op.inputs)):
            continue  # reads of variables differ by where they sit in the run
        try:
            key = (op.type, op.device,
                   tuple(canonical.get(t, t) for t in op.inputs),
                   tuple(op._control_inputs),
                   _hashable(op._attrs))
            hash(key)
        except TypeError:
            continue
        twin = seen.setdefault(key, op)
        if twin is not op:
            for mine, theirs in zip(op.outputs, twin.outputs):
                canonical[mine] = theirs
    return canonical


def fold_constants(ops, fed, canonical):
    """Static values of every tensor computable from constants alone (before any feed).

    An op downstream of a control dependency is not folded: it must still run after
    what it depends on (an assign, say), so it stays in the compiled run.
    """
    static = {}
    controlled = set()
    for op in ops:
        if op._control_inputs or any(t.op in controlled for t in op.inputs):
            controlled.add(op)
            continue
        if not op.outputs or op.outputs[0] in canonical or any(t in fed for t in op.outputs):
            continue  # nothing to fold, folded through its twin, or replaced by a feed
        inputs = [static.get(canonical.get(t, t)) for t in op.inputs]
        if any(v is None for v in inputs) or not lowering.can_fold(op, inputs):
            continue
        outs = lowering.fold_op(op, inputs)
        if outs is not None:
            static.update(zip(op.outputs, outs))
    return static
