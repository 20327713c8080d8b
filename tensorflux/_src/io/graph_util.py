"""`tf.graph_util` (TF 1.15's graph_util_impl): freezing and pruning GraphDefs.

All functions work on GraphDef messages (never on the Graph), so they serve GraphDefs
written by TensorFlow as well as ours; the NodeDefs they return are copies.
"""

from __future__ import annotations

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import protos, tensor_util
from tensorflux._src.framework.operation import Operation
from tensorflux._src.io.graph_def_import import import_graph_def  # tf.graph_util's too
from tensorflux._src.platform import tf_logging as logging

# graph_util_impl's _VARIABLE_OPS: ops that must_run_on_cpu pins with the variables.
_VARIABLE_OPS = frozenset({"Assign", "AssignAdd", "AssignSub", "Queue", "ScatterAdd",
                           "ScatterSub", "ScatterUpdate", "TruncatedNormal", "Variable",
                           "VariableV2"})
_REF_VARIABLE_OPS = ("Variable", "VariableV2", "VarHandleOp")


def _node_name(text):
    """The op name of a NodeDef input: `^x` / `x:1` -> `x`."""
    return text[1:] if text.startswith("^") else text.split(":")[0]


def _check_graph_def(graph_def):
    if not (hasattr(graph_def, "node") and hasattr(graph_def, "SerializeToString")):
        raise TypeError("graph_def must be a graph_pb2.GraphDef proto.")


def _copy_node(node):
    out = protos.NodeDef()
    out.CopyFrom(node)
    return out


def _new_graph_def(like, nodes):
    out = protos.GraphDef()
    out.node.extend(nodes)
    if like.HasField("versions"):
        out.versions.CopyFrom(like.versions)
    if like.HasField("library"):  # control-flow bodies (If/While functions), as TF keeps
        out.library.CopyFrom(like.library)
    return out


def must_run_on_cpu(node, pin_variables_on_cpu=False):
    """True when `node` (a NodeDef or Operation) must run on the CPU: int32 and string
    constants, int32 DynamicStitch and Cast from int32, and (optionally) variable ops."""
    if isinstance(node, Operation):
        op_type, attrs = node.type, node._attrs

        def attr_type(key):
            value = attrs.get(key)
            return value.base_dtype if isinstance(value, _dtypes.DType) else None
    else:
        op_type = node.op

        def attr_type(key):
            return _dtypes.as_dtype(node.attr[key].type) if key in node.attr and \
                node.attr[key].WhichOneof("value") == "type" else None
    if pin_variables_on_cpu and op_type in _VARIABLE_OPS:
        return True
    if op_type == "Const":
        return attr_type("dtype") in (_dtypes.string, _dtypes.int32)
    if op_type in ("DynamicStitch", "ParallelDynamicStitch"):
        return attr_type("T") == _dtypes.int32
    if op_type == "Cast":
        return attr_type("SrcT") == _dtypes.int32
    return False


def extract_sub_graph(graph_def, dest_nodes):
    """The nodes `dest_nodes` need (data and control inputs), in graph_def order."""
    _check_graph_def(graph_def)
    if isinstance(dest_nodes, (str, bytes)):
        raise TypeError("dest_nodes must be a list.")
    by_name = {}
    inputs = {}
    for node in graph_def.node:
        by_name[node.name] = node
        inputs[node.name] = [_node_name(i) for i in node.input]
    for dest in dest_nodes:
        if dest not in by_name:
            raise AssertionError(f"{dest} is not in graph")
    keep = set()
    stack = list(dest_nodes)
    while stack:
        name = stack.pop()
        if name in keep:
            continue
        keep.add(name)
        stack.extend(inputs.get(name, ()))
    return _new_graph_def(graph_def, [_copy_node(n) for n in graph_def.node
                                      if n.name in keep])


def tensor_shape_from_node_def_name(graph, input_name):
    """The static shape of tensor `input_name` (`x` meaning `x:0`) in `graph`."""
    name = input_name if ":" in input_name else input_name + ":0"
    return graph.get_tensor_by_name(name).get_shape()


def convert_variables_to_constants(sess, input_graph_def, output_node_names,
                                   variable_names_whitelist=None,
                                   variable_names_blacklist=None):
    """Freezes a graph: keeps what `output_node_names` need and replaces the variables
    among it by Const nodes holding their values in `sess` (TF1's graph_util).

    The variables' `/read` Identity nodes stay (now reading the Const); a resource
    variable's ReadVariableOp becomes an Identity, as in TF.
    """
    inference = extract_sub_graph(input_graph_def, output_node_names)
    found = {}  # variable node name -> tensor name to evaluate
    for node in inference.node:
        if node.op not in _REF_VARIABLE_OPS:
            continue
        if variable_names_whitelist is not None and \
                node.name not in variable_names_whitelist:
            continue
        if variable_names_blacklist is not None and node.name in variable_names_blacklist:
            continue
        found[node.name] = (node.name + "/Read/ReadVariableOp:0"
                            if node.op == "VarHandleOp" else node.name + ":0")
    names = list(found)
    values = dict(zip(names, sess.run([found[n] for n in names]))) if names else {}
    resource_vars = {n.name for n in inference.node
                     if n.op == "VarHandleOp" and n.name in values}
    out_nodes = []
    for node in inference.node:
        if node.name in values:
            dtype = node.attr["dtype"]
            data = values[node.name]
            const = protos.NodeDef(name=node.name, op="Const")
            const.attr["dtype"].CopyFrom(dtype)
            const.attr["value"].CopyFrom(protos.AttrValue(
                tensor=tensor_util.make_tensor_proto(
                    data, dtype=_dtypes.as_dtype(dtype.type), shape=data.shape)))
            if node.device:
                const.device = node.device
            out_nodes.append(const)
        elif node.op == "ReadVariableOp" and node.input and \
                _node_name(node.input[0]) in resource_vars:
            ident = protos.NodeDef(name=node.name, op="Identity")
            ident.input.extend(node.input)
            if node.device:
                ident.device = node.device
            ident.attr["T"].CopyFrom(node.attr["dtype"])
            out_nodes.append(ident)
        else:
            out_nodes.append(_copy_node(node))
    logging.info("Froze %d variables.", len(values))
    logging.info("Converted %d variables to const ops.", len(values))
    return _new_graph_def(inference, out_nodes)


def remove_training_nodes(input_graph, protected_nodes=None):
    """Prunes nodes inference does not need: CheckNumerics nodes are removed (with the
    inputs that named them) and Identity nodes without control inputs are spliced out,
    unless protected or used as a control input (TF 1.15's rules)."""
    protected = set(protected_nodes or ())
    removed = {n.name for n in input_graph.node
               if n.op == "CheckNumerics" and n.name not in protected}
    after_removal = []
    for node in input_graph.node:
        if node.name in removed:
            continue
        new = _copy_node(node)
        del new.input[:]
        new.input.extend(i for i in node.input if _strip_control(i) not in removed)
        after_removal.append(new)
    control_targets = {i[1:] for n in after_removal for i in n.input if i.startswith("^")}
    splice = {}
    for node in after_removal:
        if node.op != "Identity" or node.name in protected or node.name in control_targets:
            continue
        if any(i.startswith("^") for i in node.input):
            continue
        splice[node.name] = node.input[0]
    out = []
    for node in after_removal:
        if node.name in splice:
            continue
        new = _copy_node(node)
        del new.input[:]
        for full in node.input:
            name = _strip_control(full)
            while name in splice:
                full = splice[name]
                name = _strip_control(full)
            new.input.append(full)
        out.append(new)
    return _new_graph_def(input_graph, out)


def _strip_control(text):
    return text.removeprefix("^")


__all__ = ["convert_variables_to_constants", "extract_sub_graph", "import_graph_def",
           "must_run_on_cpu", "remove_training_nodes", "tensor_shape_from_node_def_name"]
