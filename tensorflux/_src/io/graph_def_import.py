"""`tf.import_graph_def`: builds a GraphDef's nodes in the default graph (TF 1.15's
importer semantics).

Every NodeDef becomes an op through the op registry (`apply_op`), so shape inference,
dtype checks and the run plan treat imported ops like any others. Its attrs are
converted from AttrValue to the Python values the records hold (type -> DType, shape
-> TensorShape, tensor -> numpy, list -> list, s -> str unless the record's default
is bytes) and missing ones take the record's defaults. Nodes are built in dependency
order, so a GraphDef need not be sorted. Functional control flow (If/StatelessIf/
While/StatelessWhile with FunctionDef bodies in `library`) becomes tensorflux's If/While
constructs (io/function_def_import.py).

TF's rules kept: names get the prefix `name` ("import" by default, uniquified like a
name scope; "" for none), `input_map` replaces tensors (`"x:0"`, `"x"`) or control
inputs (`"^x"`) of the GraphDef by tensors of this graph, `return_elements` names ops
(`"x"`) or tensors (`"x:0"`), NodeDef devices are applied under the current device
scope, `_class` colocation attrs are kept. Differences: attrs TF's OpDef has and the
tensorflux record lacks (`MatMul`'s `grad_a`, `FusedBatchNormV3`'s
`exponential_avg_factor`...) are ignored rather than refused, and every op type the
registry lacks is named in one error rather than the first only.
"""

from __future__ import annotations

import contextlib

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework import tensor_shape, tensor_util
from tensorflux._src.framework.operation import Operation, Tensor
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.io import resource_variables
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.registry import REQUIRED, all_ops


def import_graph_def(graph_def, input_map=None, return_elements=None, name=None,
                     op_dict=None, producer_op_list=None):
    """Imports `graph_def` into the default graph; returns the ops and tensors named by
    `return_elements` (None when it is None)."""
    graph_def = resource_variables.as_ref_variables(_as_graph_def(graph_def))
    if input_map is None:
        input_map = {}
    elif not (isinstance(input_map, dict)
              and all(isinstance(k, (str, bytes)) for k in input_map)):
        raise TypeError("input_map must be a dictionary mapping strings to Tensor objects.")
    if return_elements is not None:
        if isinstance(return_elements, (str, bytes)) or not all(
                isinstance(x, (str, bytes)) for x in return_elements):
            raise TypeError("return_elements must be a list of strings.")
        return_elements = [_as_str(x) for x in return_elements]
    nodes = {}
    for node in graph_def.node:
        if node.name in nodes:
            raise ValueError(f"graph_def is invalid at node '{node.name}': the node name "
                             f"is used twice (nodes need unique names).")
        nodes[node.name] = node
    registry = all_ops()
    from tensorflux._src.io import function_def_import
    library = function_def_import.library_of(graph_def, registry)
    _check_op_types(graph_def.node, registry)
    order = _topological_order(graph_def.node, nodes)

    graph = _graph.get_default_graph()
    with graph.name_scope(name or "import") if name != "" else _no_scope(graph) as scope:
        prefix = scope
        mapped = _canonical_input_map(input_map, name)
        library.reserved = frozenset(prefix + n.name for n in order)
        _check_map_keys(mapped, nodes, registry)
        built = {}  # node name -> Operation
        for node in order:
            built[node.name] = _import_node(graph, node, prefix, registry, built, mapped,
                                            library)
    _apply_colocation(order, built, prefix)
    if return_elements is None:
        return None
    return [_return_element(x, built, nodes) for x in return_elements]


class _no_scope:  # a context manager used like `name_scope`
    """`name=""`: no prefix, names kept as they are (TF uniquifies clashes; so do we
    not: a clash raises, as creating an op with a used name does)."""

    def __init__(self, graph):
        self._graph = graph

    def __enter__(self):
        stack = self._graph.get_name_scope()
        return stack + "/" if stack else ""

    def __exit__(self, *exc):
        return False


def _as_graph_def(graph_def):
    if not hasattr(graph_def, "node") or not hasattr(graph_def, "SerializeToString"):
        raise TypeError(f"graph_def must be a GraphDef proto, got "
                        f"{type(graph_def).__name__}.")
    return graph_def


def _as_str(value):
    return value.decode("utf-8") if isinstance(value, bytes) else value


def _parse_tensor_name(text):
    """'x' -> ('x', 0), 'x:1' -> ('x', 1); TF's ValueError for anything else."""
    parts = text.split(":")
    if len(parts) == 1:
        return parts[0], 0
    if len(parts) == 2:
        try:
            return parts[0], int(parts[1])
        except ValueError:
            pass
    raise ValueError(f"Cannot convert {text!r} to a tensor name.")


def _check_op_types(node_defs, registry):
    from tensorflux._src.io.function_def_import import FUNCTIONAL
    missing = {}
    for node in node_defs:
        if node.op not in registry and node.op not in FUNCTIONAL:
            missing.setdefault(node.op, []).append(node.name)
    if missing:
        first = min(missing)
        listed = "; ".join(f"{op} (nodes: {', '.join(names[:5])}"
                           f"{', ...' if len(names) > 5 else ''})"
                           for op, names in sorted(missing.items()))
        raise ValueError(f"No op named {first} in defined operations. The graph_def uses "
                         f"{len(missing)} op type(s) tensorflux does not define: {listed}")


def _input_names(node):
    """(op name, is_control) of each input of a NodeDef."""
    out = []
    for text in node.input:
        if text.startswith("^"):
            out.append((text[1:], True))
        else:
            out.append((_parse_tensor_name(text)[0], False))
    return out


def _topological_order(node_defs, nodes):
    """NodeDefs with every node after its inputs (graph_def order among ready nodes)."""
    pending = {}
    users = {}
    for node in node_defs:
        deps = set()
        for src, _ in _input_names(node):
            if src not in nodes:
                kind = "Control input" if f"^{src}" in node.input else "Input"
                raise ValueError(f"graph_def is invalid at node '{node.name}': {kind} "
                                 f"'{src}' not found in graph_def.")
            deps.add(src)
        pending[node.name] = len(deps)
        for src in deps:
            users.setdefault(src, []).append(node.name)
    ready = [n.name for n in node_defs if pending[n.name] == 0]
    ready.reverse()
    order = []
    while ready:
        name = ready.pop()
        order.append(nodes[name])
        for user in reversed(users.get(name, [])):
            pending[user] -= 1
            if pending[user] == 0:
                ready.append(user)
    if len(order) != len(nodes):
        cyclic = sorted(n for n, count in pending.items() if count > 0)
        raise ValueError(f"graph_def contains a cycle through nodes {cyclic[:10]}: "
                         f"tensorflux imports only acyclic graphs (TF1 while loops, "
                         f"Enter/Merge/NextIteration, are not supported)")
    return order


def _canonical_input_map(input_map, name):
    out = {}
    for key, value in input_map.items():
        key = _as_str(key)
        if not key.startswith("^"):
            src, index = _parse_tensor_name(key)
            key = f"{src}:{index}"
            if not isinstance(value, Tensor):
                if name == "":
                    raise ValueError(
                        "tf.import_graph_def() requires a non-empty `name` if `input_map` "
                        "contains non-Tensor values. Try calling tf.convert_to_tensor() on "
                        "`input_map` values before calling tf.import_graph_def().")
                value = convert_to_tensor(value, name="_inputs/" + key.replace(":", "_"))
        out[key] = value
    return out


def _check_map_keys(mapped, nodes, registry):
    missing = []
    for key in mapped:
        src, _, index = key.lstrip("^").partition(":")
        node = nodes.get(src)
        if node is None or (index and int(index) >= _num_outputs(node, registry.get(node.op))):
            missing.append(key)
    if missing:
        raise ValueError("Attempted to map inputs that were not found in graph_def: "
                         f"[{', '.join(missing)}]")


def _num_outputs(node, record):
    if node.op in ("If", "StatelessIf"):
        return len(node.attr["Tout"].list.type)
    if node.op in ("While", "StatelessWhile"):
        return len(node.attr["T"].list.type)
    count = 0
    for arg in record.output_args:
        if arg.type_list_attr is not None:
            count += len(node.attr[arg.type_list_attr].list.type)
        elif arg.number_attr is not None:
            count += node.attr[arg.number_attr].i
        else:
            count += 1
    return count


def _import_node(graph, node, prefix, registry, built, mapped, library=None):
    data, controls = [], []
    for text in node.input:
        if text.startswith("^"):
            target = mapped.get(text)
            op = target if target is not None else built[text[1:]]
            controls.append(op.op if isinstance(op, Tensor) else op)
            continue
        src, index = _parse_tensor_name(text)
        tensor = mapped.get(f"{src}:{index}")
        if tensor is None:
            outputs = built[src].outputs
            if index >= len(outputs):
                raise ValueError(f"graph_def is invalid at node '{node.name}': Input "
                                 f"'{text}' refers to output {index} of '{src}', which "
                                 f"has {len(outputs)} output(s).")
            tensor = outputs[index]
        data.append(tensor)
    return build_op(graph, node, prefix + node.name, registry, data, controls, library)


def build_op(graph, node, full_name, registry, data, controls, library=None):
    """The op for one NodeDef whose inputs are resolved: `data` tensors and `controls`
    ops. Functional control flow (If, While, with FunctionDef bodies from `library`)
    goes through io/function_def_import.py."""
    from tensorflux._src.io import function_def_import
    if node.op in function_def_import.FUNCTIONAL:
        with graph.device(node.device) if node.device else contextlib.nullcontext():
            op = function_def_import.import_functional(
                graph, node, full_name, data, library or {}, registry)
    else:
        record = registry[node.op]
        kwargs = _input_kwargs(node, record, data)
        kwargs.update(_attr_kwargs(node, record))
        with graph.device(node.device) if node.device else contextlib.nullcontext():
            try:
                out = apply_op(node.op, name=full_name + "/", **kwargs)
            except (TypeError, ValueError) as e:
                raise ValueError(f"graph_def is invalid at node '{node.name}' (op: "
                                 f"'{node.op}'): {e}") from e
        op = out if isinstance(out, Operation) else (
            out.op if isinstance(out, Tensor) else graph._nodes_by_name[full_name])
    graph._names_in_use.setdefault(full_name.lower(), 1)  # later ops get `name_1`
    for control in controls:
        op._add_control_input(control)
    return op


def _input_kwargs(node, record, data):
    """Data inputs grouped by the record's input args (lists sized by N / list(T))."""
    kwargs = {}
    pos = 0
    for arg in record.input_args:
        if arg.type_list_attr is not None:
            count = len(node.attr[arg.type_list_attr].list.type)
        elif arg.number_attr is not None:
            count = node.attr[arg.number_attr].i
        else:
            count = None
        if count is None:
            if pos >= len(data):
                raise ValueError(f"graph_def is invalid at node '{node.name}': {node.op} "
                                 f"needs input '{arg.name}', got {len(data)} input(s).")
            kwargs[arg.name] = data[pos]
            pos += 1
        else:
            kwargs[arg.name] = list(data[pos:pos + count])
            pos += count
    if pos != len(data):
        raise ValueError(f"graph_def is invalid at node '{node.name}': {node.op} takes "
                         f"{pos} input(s), got {len(data)}.")
    return kwargs


def _attr_kwargs(node, record):
    derived = {a.number_attr for a in record.input_args if a.number_attr}
    derived |= {a.type_list_attr for a in record.input_args if a.type_list_attr}
    out = {}
    for key in node.attr:
        if key.startswith("_") or key in derived or key not in record.attrs:
            continue  # internal attrs, input-derived ones, and TF attrs we do not have
        default = record.attrs[key]
        value = attr_to_python(node.attr[key], default)
        if value is not _UNSET:
            out[key] = value
    return out


_UNSET = object()


def attr_to_python(attr, default=REQUIRED):
    """The Python value of an AttrValue, in the form the record's `default` has."""
    which = attr.WhichOneof("value")
    if which is None:
        return _UNSET
    if which == "type":
        return _dtypes.as_dtype(attr.type)
    if which == "shape":
        return shape_from_proto(attr.shape)
    if which == "tensor":
        return tensor_util.make_ndarray(attr.tensor)
    if which == "s":
        return _string(attr.s, default)
    if which in ("i", "f", "b"):
        return getattr(attr, which)
    if which == "list":
        return _list(attr.list, default)
    raise ValueError(f"attr of kind '{which}' (functions, placeholders) is not supported "
                     f"by tensorflux's import_graph_def")


def _string(value, default):
    if isinstance(default, bytes):
        return bytes(value)
    try:
        return bytes(value).decode("utf-8")
    except UnicodeDecodeError:
        return bytes(value)


def _list(listed, default):
    sample = default[0] if isinstance(default, (list, tuple)) and default else default
    for field in ("s", "i", "f", "b", "type", "shape", "tensor", "func"):
        values = list(getattr(listed, field))
        if not values:
            continue
        if field == "type":
            return tuple(_dtypes.as_dtype(v) for v in values)
        if field == "shape":
            values = [shape_from_proto(v) for v in values]
        elif field == "tensor":
            values = [tensor_util.make_ndarray(v) for v in values]
        elif field == "s":
            values = [_string(v, sample) for v in values]
        elif field == "func":
            raise ValueError("list(func) attrs are not supported by tensorflux's "
                             "import_graph_def")
        return tuple(values) if isinstance(default, tuple) else values
    return () if isinstance(default, tuple) else []


def shape_from_proto(proto) -> tensor_shape.TensorShape:
    if proto.unknown_rank:
        return tensor_shape.unknown_shape()
    return tensor_shape.TensorShape([None if d.size < 0 else d.size for d in proto.dim])


def _apply_colocation(order, built, prefix):
    """TF's `_class: ["loc:@x"]` colocation, renamed under the import prefix."""
    for node in order:
        if "_class" not in node.attr:
            continue
        groups = [_as_str(bytes(v)) for v in node.attr["_class"].list.s]
        names = [g[len("loc:@"):] for g in groups if g.startswith("loc:@")]
        if names:
            built[node.name]._colocation_groups = [
                b"loc:@" + (prefix + n).encode() for n in names]


def _return_element(name, built, nodes):
    if ":" in name:
        src, index = _parse_tensor_name(name)
        op = built.get(src)
        if op is not None and index < len(op.outputs):
            return op.outputs[index]
    elif name in built:
        return built[name]
    raise ValueError(f"Requested return_element {name!r} not found in graph_def.")


__all__ = ["import_graph_def"]
