"""Grouping and ordering: NoOp, `tf.group`, `tf.tuple`, `tf.no_op`."""

from __future__ import annotations

from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.indexed_slices import IndexedSlices
from tensorflux._src.framework.operation import Operation, Tensor
from tensorflux._src.ops.array.array_ops import identity
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.registry import OpDef, register

__all__ = ["group", "no_op", "tuple"]

register(OpDef("NoOp", outputs=(), lower=lambda: (), not_differentiable=True))


def no_op(name=None):
    """An op that does nothing; useful as a target that carries control dependencies."""
    return apply_op("NoOp", name=name)


def _as_op(x):
    if hasattr(x, "_as_graph_element") and callable(x._as_graph_element):
        x = x._as_graph_element()
    if isinstance(x, Tensor):
        return x.op
    if isinstance(x, Operation):
        return x
    raise TypeError(f"Expected a tf.Operation or tf.Tensor in tf.group, got {x!r} of type "
                    f"{type(x).__name__}")


def _components(values):
    """The tensors of IndexedSlices (TF groups composites by their components)."""
    for x in values:
        if isinstance(x, IndexedSlices):
            yield from (t for t in (x.values, x.indices, x.dense_shape) if t is not None)
        else:
            yield x


def group(*inputs, **kwargs):
    """An op that runs all `inputs` (tensors or ops); it has no output."""
    name = kwargs.pop("name", None)
    if kwargs:
        raise TypeError(f"Unknown keyword arguments: {sorted(kwargs)}")
    ops = [_as_op(x) for x in _components(inputs) if x is not None]
    with _graph.name_scope(name, "group_deps", ops) as scope:
        with _graph.control_dependencies(ops):
            return no_op(name=scope)


def tuple(tensors, name=None, control_inputs=None):  # noqa: A001 - TF's public name
    """Tensors with the same values, each available only after all of them are computed."""
    tensors = list(tensors)
    with _graph.name_scope(name, "tuple", tensors):
        deps = [_as_op(t) for t in _components(tensors) if t is not None]
        deps += [_as_op(c) for c in (control_inputs or [])]
        gate = group(*deps, name="control_dependency")
        out = []
        for t in tensors:
            if t is None:
                out.append(None)
                continue
            with _graph.control_dependencies([gate]):
                if isinstance(t, IndexedSlices):  # TF's with_dependencies: gate the values
                    out.append(IndexedSlices(identity(t.values), t.indices, t.dense_shape))
                else:
                    out.append(identity(t))
        return out
