"""A Graph as TF's `GraphDef` protocol buffer, for TensorBoard's graph dashboard.

`graph_def(graph, add_shapes=True)` returns a `protos.GraphDef` with one NodeDef per
op: name, op type, inputs in NodeDef notation (`x`, `x:1`, `^control`), device and
attrs. With `add_shapes` each node also gets TF's `_output_shapes` attr (what
`Graph.as_graph_def(add_shapes=True)` adds, and what TensorBoard draws on edges).

Attr values map to AttrValue as TF stores them: dtypes to `type`, TensorShapes to
`shape`, arrays (Const values) to `tensor`, Python scalars to `i`/`f`/`b`/`s`, lists
to `list`. Attrs with no GraphDef form (control-flow bodies, Python callables) are
left out: the graph is for display, not for re-import.
"""

from __future__ import annotations

import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import tensor_shape
from tensorflux._src.framework import protos, tensor_util


def graph_def(graph, add_shapes: bool = True) -> protos.GraphDef:
    out = protos.GraphDef()
    for op in graph.get_operations():
        out.node.append(_node_def(op, add_shapes))
    return out


def _node_def(op, add_shapes: bool) -> protos.NodeDef:
    view = op.node_def  # NodeDef notation for inputs, canonical device
    node = protos.NodeDef(name=view.name, op=view.op, input=list(view.input),
                          device=view.device)
    for key, value in view.attr.items():
        attr = attr_value(value)
        if attr is not None:
            node.attr[key].CopyFrom(attr)
    if add_shapes:
        node.attr["_output_shapes"].CopyFrom(protos.AttrValue(list=protos.AttrValue.ListValue(
            shape=[protos.shape_proto(t.shape) for t in op.outputs])))
    return node


def attr_value(value):
    """The AttrValue for one op attr, or None when it has no GraphDef form."""
    scalar = _scalar_attr(value)
    if scalar is not None:
        return protos.AttrValue(**scalar)
    if isinstance(value, np.ndarray):
        return protos.AttrValue(tensor=tensor_util.make_tensor_proto(value))
    if isinstance(value, (list, tuple)):
        return _list_attr(value)
    return None


def _scalar_attr(value):
    """{field: value} for a dtype, shape or Python/numpy scalar attr; None otherwise."""
    if isinstance(value, _dtypes.DType):
        return {"type": value.as_datatype_enum}
    if isinstance(value, tensor_shape.TensorShape):
        return {"shape": protos.shape_proto(value)}
    if isinstance(value, (bool, np.bool_)):
        return {"b": bool(value)}
    if isinstance(value, (int, np.integer)):
        return {"i": int(value)}
    if isinstance(value, (float, np.floating)):
        return {"f": float(value)}
    if isinstance(value, (str, bytes)):
        return {"s": value}
    return None


def _list_attr(values):
    """A `list` AttrValue when every element has one scalar form; None otherwise."""
    fields = [_scalar_attr(v) for v in values]
    if any(f is None for f in fields):
        return None
    names = {name for f in fields for name in f}
    if len(names) > 1:
        return None
    listed = protos.AttrValue.ListValue()
    if names:
        (name,) = names
        getattr(listed, name).extend(f[name] for f in fields)
    return protos.AttrValue(list=listed)
