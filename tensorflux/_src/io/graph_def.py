"""A Graph as TF's `GraphDef` protocol buffer, importable by TensorFlow.

`graph_def(graph, add_shapes=False, strict=False)` returns a `protos.GraphDef` with
one NodeDef per op: name, op type (the registry uses TF's op type names), inputs in
NodeDef notation (`x`, `x:1`, `^control`), device, attrs under TF's names and the
graph's versions. With `add_shapes` each node also gets TF's `_output_shapes` attr
(what TensorBoard draws on edges).

Attr values map to AttrValue as TF stores them: dtypes to `type`, TensorShapes to
`shape`, arrays (Const values) to `tensor`, Python scalars to `i`/`f`/`b`/`s`, lists
to `list`. Attrs a tensorflux record carries that TF's OpDef for the op lacks (ours
for bookkeeping, `_NOT_IN_TF` below) are left out; attrs TF has and we lack all have
defaults in TF's OpDefs, which TF's importer fills in.

Functional control flow (`If`, `While`) becomes TF's functional ops with their bodies
as FunctionDefs in `library` (io/function_def.py); ops inside bodies are written there,
not as graph nodes. Some ops have no GraphDef form: `Scan`, bodies that use variables
through their Ref, and ops whose attrs hold Python values (py_func, datasets). For display (TensorBoard, `Graph.as_graph_def()`) their
inexpressible attrs are left out; with `strict=True` (freezing, anything meant for
TensorFlow) a ValueError names every such node.

The messages are built with the protobuf message API only (CopyFrom for
sub-messages, bytes for `s`), so the same code serves protowire's tables and the
`protobuf` package's classes.
"""

from __future__ import annotations

import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import protos, tensor_shape, tensor_util, versions
from tensorflux._src.io import function_def
from tensorflux._src.ops.registry import REQUIRED

# Attrs of tensorflux records with no counterpart in TF's OpDef of the same op:
# bookkeeping for our kernels. Names listed under "*" are dropped from every op.
_NOT_IN_TF = {
    "*": frozenset({"node_name", "_ta_info"}),
    "Assert": frozenset({"string_data"}),
    "Print": frozenset({"string_data"}),
}
# Ops that exist only in tensorflux (TF builds these from other ops or functions).
_TENSORFLUX_ONLY_PREFIX = "_"


class NotExpressible(ValueError):
    """An op or attr value with no GraphDef form."""


def graph_def(graph, add_shapes: bool = False, strict: bool = False,
              ops=None, strip_default_attrs: bool = False) -> protos.GraphDef:
    """The GraphDef of `graph` (or of `ops`, a subset of its ops in graph order);
    `strip_default_attrs` leaves out attrs that hold their op's default (TF's
    export_meta_graph option: an importer fills them back in)."""
    out = protos.GraphDef()
    problems = []
    library = {}  # FunctionDef name -> FunctionDef, for control-flow bodies
    for op in (graph.get_operations() if ops is None else ops):
        if op._body is not None:
            continue  # written inside its construct's FunctionDefs
        node, bad = node_def(op, add_shapes, strip_default_attrs, library=library)
        if bad:
            problems.append(f"'{op.name}' (op: '{op.type}'): {bad}")
        out.node.append(node)
    out.library.function.extend(library[name] for name in sorted(library))
    if strict and problems:
        raise NotExpressible(
            "Cannot express these ops in a GraphDef TensorFlow can import: "
            + "; ".join(problems))
    out.versions.CopyFrom(protos.VersionDef(
        producer=versions.GRAPH_DEF_VERSION,
        min_consumer=versions.GRAPH_DEF_VERSION_MIN_CONSUMER))
    return out


def exportable_graph_def(graph, add_shapes: bool = True, strip_default_attrs: bool = False):
    """(GraphDef, {dropped op name: why}) for files other programs load (MetaGraphs,
    SavedModels): ops with no GraphDef form are left out, and so is every op that
    depends on one (through a data or control input), so what is written imports and
    runs. Callers check that what they need (signatures, a main op) was kept."""
    out = protos.GraphDef()
    dropped = {}
    library = {}  # FunctionDef name -> FunctionDef, of the kept control-flow ops
    for op in graph.get_operations():
        if op._body is not None:
            continue  # written inside its construct's FunctionDefs
        lost = [t.op.name for t in op.inputs if t.op.name in dropped] + [
            c.name for c in op.control_inputs if c.name in dropped]
        if lost:
            dropped[op.name] = f"it depends on {lost[0]}"
            continue
        functions = {}
        node, bad = node_def(op, add_shapes, strip_default_attrs, library=functions)
        if bad:
            dropped[op.name] = bad
            continue
        library.update(functions)
        out.node.append(node)
    out.library.function.extend(library[name] for name in sorted(library))
    out.versions.CopyFrom(protos.VersionDef(
        producer=versions.GRAPH_DEF_VERSION,
        min_consumer=versions.GRAPH_DEF_VERSION_MIN_CONSUMER))
    return out, dropped


def node_def(op, add_shapes: bool = False, strip_default_attrs: bool = False,
             library=None, scope=None):
    """(NodeDef of `op`, text saying what has no GraphDef form or "").

    `library` ({name: FunctionDef}) collects the functions of control-flow bodies;
    `scope` names inputs (function_def.GraphScope for a graph node, a FunctionScope
    inside a function body)."""
    scope = scope or function_def.GraphScope
    library = {} if library is None else library
    node = protos.NodeDef(name=op.name, op=op.type)
    if op.device:
        node.device = op.device
    if op.op_def.functional:
        bad = function_def.functional_node(op, node, scope, library, node_def)
        if add_shapes:
            _add_shapes(node, op)
        return node, ", ".join(bad)
    bad = []
    for t in op.inputs:
        text = scope.input(t)
        if text is None:  # a Ref of a variable outside the function
            bad.append(f"input '{t.name}' comes from outside the function (a variable's "
                       f"Ref: FunctionDefs take resource handles)")
            text = t.name
        node.input.append(text)
    node.input.extend(text for text in (scope.control(c) for c in op.control_inputs)
                      if text is not None)
    if op.type.startswith(_TENSORFLUX_ONLY_PREFIX):
        bad.append("a tensorflux-only op with no TensorFlow counterpart")
    dropped = _NOT_IN_TF["*"] | _NOT_IN_TF.get(op.type, frozenset())
    for key in sorted(op._attrs):
        if key in dropped or (strip_default_attrs and _is_default(
                op._attrs[key], op.op_def.default_attrs.get(key, REQUIRED))):
            continue
        attr = attr_value(op._attrs[key])
        if attr is None:
            bad.append(f"attr '{key}' holds {type(op._attrs[key]).__name__}, which has no "
                       f"AttrValue form")
            continue
        node.attr[key].CopyFrom(attr)
    if op._colocation_groups:
        node.attr["_class"].CopyFrom(_list_attr(list(op._colocation_groups)))
    if add_shapes:
        _add_shapes(node, op)
    return node, ", ".join(bad)


def _add_shapes(node, op):
    listed = protos.AttrValue.ListValue()
    listed.shape.extend(protos.shape_proto(t.shape) for t in op.outputs)
    node.attr["_output_shapes"].CopyFrom(protos.AttrValue(list=listed))


def _is_default(value, default):
    if default is REQUIRED:
        return False
    try:
        return type(value) is type(default) and bool(value == default)
    except (TypeError, ValueError):  # arrays compare elementwise: never a default
        return False


def attr_value(value):
    """The AttrValue for one op attr, or None when it has no GraphDef form."""
    scalar = _scalar_attr(value)
    if scalar is not None:
        return _make_attr(scalar)
    if isinstance(value, np.ndarray):
        out = protos.AttrValue()
        out.tensor.CopyFrom(tensor_util.make_tensor_proto(value))
        return out
    if isinstance(value, (list, tuple)):
        return _list_attr(value)
    return None


def _make_attr(scalar):
    ((name, value),) = scalar.items()
    out = protos.AttrValue()
    if name == "shape":
        out.shape.CopyFrom(value)
    else:
        setattr(out, name, value)
    return out


def _scalar_attr(value):
    """{field: value} for a dtype, shape or Python/numpy scalar attr; None otherwise."""
    if isinstance(value, _dtypes.DType):
        return {"type": value.base_dtype.as_datatype_enum}
    if isinstance(value, tensor_shape.TensorShape):
        return {"shape": protos.shape_proto(value)}
    if isinstance(value, (bool, np.bool_)):
        return {"b": bool(value)}
    if isinstance(value, (int, np.integer)):
        return {"i": int(value)}
    if isinstance(value, (float, np.floating)):
        return {"f": float(value)}
    if isinstance(value, str):
        return {"s": value.encode("utf-8")}
    if isinstance(value, bytes):
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
    out = protos.AttrValue()
    out.list.CopyFrom(listed)
    return out
