"""TensorFlow's resource variables, imported as the ref variables tensorflux runs.

Graphs that TF 2.x's `tf.compat.v1` code writes (and TF 1.x code with
`use_resource=True`) hold a variable as a handle: `VarHandleOp` makes it,
`ReadVariableOp` reads it, `AssignVariableOp` writes it, and optimizers apply through
`ResourceApply*`. tensorflux's variables are TF1's ref variables (`VariableV2`, read by
using its ref output, written by `Assign`), held in the Session's store. Both describe
the same program, so `import_graph_def` rewrites the first form into the second, node
for node and under the same names:

    VarHandleOp(dtype, shape)          -> VariableV2(dtype, shape)
    ReadVariableOp(v)                  -> Identity(v)
    AssignVariableOp(v, x)             -> Assign(v, x)          (validate_shape, as TF)
    AssignAddVariableOp / ...Sub...    -> AssignAdd / AssignSub
    VarIsInitializedOp(v)              -> IsVariableInitialized(v)
    DisableCopyOnRead(v)               -> NoOp after v          (a TF-internal hint)
    ResourceGather(v, i)               -> GatherV2(v, i, 0)     (batch_dims 0)
    ResourceScatter<Op>(v, i, u)       -> Scatter<Op>(v, i, u)
    ResourceApply<Opt> / ResourceSparseApply<Opt> -> Apply<Opt> / SparseApply<Opt>

So `model/w:0` names the variable, `model/w/Read/ReadVariableOp:0` its value, and a
SavedModel's VariableDefs and Saver ops (RestoreV2 -> AssignVariableOp) keep working.
A resource-typed output fetched by itself yields the variable's value rather than a
handle. The resource attr `dtype` becomes the ref ops' `T`.
"""

from __future__ import annotations

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import protos
from tensorflux._src.ops.registry import all_ops

_SIMPLE = {  # resource op -> the ref op of the same inputs (attr dtype -> T)
    "ReadVariableOp": "Identity",
    "AssignVariableOp": "Assign",
    "AssignAddVariableOp": "AssignAdd",
    "AssignSubVariableOp": "AssignSub",
}
_DROPPED_ATTRS = ("allowed_devices", "debug_name", "_has_manual_control_dependencies")


def has_resource_variables(graph_def) -> bool:
    return any(n.op == "VarHandleOp" for n in graph_def.node)


def as_ref_variables(graph_def):
    """A copy of `graph_def` with its resource-variable nodes rewritten (see the module
    docstring); `graph_def` itself when it has none."""
    if not has_resource_variables(graph_def):
        return graph_def
    registry = all_ops()
    handles = {n.name: n for n in graph_def.node if n.op == "VarHandleOp"}
    out = protos.GraphDef()
    out.CopyFrom(graph_def)
    extra = []
    for node in out.node:
        _rewrite(node, handles, registry, extra)
    out.node.extend(extra)
    return out


def _handle_dtype(node, handles):
    source = node.input[0].split(":")[0].lstrip("^") if node.input else ""
    handle = handles.get(source)
    return None if handle is None else handle.attr["dtype"].type


def _rename_attr(node, old, new):
    if old in node.attr:
        node.attr[new].CopyFrom(node.attr[old])
        del node.attr[old]


def _rewrite(node, handles, registry, extra):
    for key in _DROPPED_ATTRS:
        if key in node.attr:
            del node.attr[key]
    op = node.op
    if op == "VarHandleOp":
        node.op = "VariableV2"
    elif op in _SIMPLE:
        node.op = _SIMPLE[op]
        _rename_attr(node, "dtype", "T")
        if op == "AssignVariableOp":
            node.attr["use_locking"].b = True
            if "validate_shape" not in node.attr:
                node.attr["validate_shape"].b = True
    elif op == "VarIsInitializedOp":
        dtype = _handle_dtype(node, handles)
        if dtype is not None:
            node.op = "IsVariableInitialized"
            node.attr["dtype"].type = dtype
    elif op == "DisableCopyOnRead":
        node.op = "NoOp"
        inputs = [i if i.startswith("^") else "^" + i.split(":")[0] for i in node.input]
        del node.input[:]
        node.input.extend(inputs)
    elif op == "ResourceGather":
        _gather(node, extra)
    elif op.startswith("ResourceScatter") and op[len("Resource"):] in registry:
        node.op = op[len("Resource"):]
        _rename_attr(node, "dtype", "T")
    elif op.startswith(("ResourceApply", "ResourceSparseApply")) and \
            op[len("Resource"):] in registry:
        node.op = op[len("Resource"):]


def _gather(node, extra):
    if node.attr["batch_dims"].i if "batch_dims" in node.attr else 0:
        return  # batch_dims > 0: left for the importer to report as unknown
    int32 = _dtypes.int32.as_datatype_enum
    axis = protos.NodeDef(name=node.name + "/axis", op="Const", device=node.device)
    axis.attr["dtype"].type = int32
    axis.attr["value"].tensor.CopyFrom(protos.TensorProto(
        dtype=int32, tensor_shape=protos.TensorShapeProto(), int_val=[0]))
    extra.append(axis)
    node.op = "GatherV2"
    node.input.insert(2, axis.name)
    _rename_attr(node, "dtype", "Tparams")
    node.attr["Taxis"].type = int32
    for key in ("batch_dims", "validate_indices"):
        if key in node.attr:
            del node.attr[key]
