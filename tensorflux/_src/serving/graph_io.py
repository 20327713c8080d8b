"""A whole graph as JSON, rebuilt in another process without the code that built it.

`train/meta_graph.py` describes a graph next to a checkpoint (constants abbreviated);
this module keeps everything a run needs, for SavedModel exports (saved_model.py):

    {"node": [{"name": "dense/MatMul", "op": "MatMul", "input": ["x", "dense/kernel/read"],
               "control_input": [], "device": "", "body": null,
               "attr": {"T": {"type": "float32"}, "transpose_a": false, ...},
               "output": [["float32", [null, 4]], ...]}, ...],
     "body": [{"kind": "cond", "parent": null, "params": [...], "results": [...],
               "captures": [...], "refs": [...], "ref_tensors": [[var, tensor], ...],
               "written": [...], "control_inputs": [...]}],
     "collection": {"variables": [{"variable": {...}}, {"tensor": "x:0"}, ...]},
     "seed": null, "dropped": ["py_func_op", ...]}

Nodes are in creation order, so a node's inputs always come before it. Output dtypes
and static shapes are stored, so no shape function runs on import. Attr values are
JSON where they have a plain form and a one-key object otherwise: `{"type": dtype}`,
`{"shape": dims | null}`, `{"tensor": {"dtype", "shape", "data": base64}}` (strings:
`"strings"`, a list of base64 items), `{"tuple": [...]}` (a JSON list is a Python
list), `{"bytes": base64}`, `{"float": "nan" | "inf" | "-inf"}`, `{"op": name}`,
`{"tensor_ref": name}`, `{"body": index}`, `{"dict": [[key, value], ...]}`. Control-flow
bodies (cond branches, loop bodies) are listed once and referred to by index.

An op whose attrs hold something with no JSON form (a `py_func`'s Python function, a
dataset, a queue) cannot be rebuilt elsewhere: it is dropped, with every op that
depends on it, and its name listed under "dropped"; exporting a signature that needs
it fails with ValueError naming it.
"""

from __future__ import annotations

import base64
import math

import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import tensor_shape
from tensorflux._src.framework.operation import Operation, Tensor

FORMAT = "tensorflux.graph"


class Unserializable(Exception):
    """An attr value without a JSON form."""


# -- writing --------------------------------------------------------------------------------

def serialize(graph, clear_devices=False):
    """The JSON-ready dict of `graph` (see the module docstring)."""
    bodies = {}  # Body -> index
    body_list = []
    dropped = set()
    nodes = []

    def body_index(body):
        if body not in bodies:
            if body.parent is not None:
                body_index(body.parent)
            bodies[body] = len(body_list)
            body_list.append(body)
        return bodies[body]

    encoder = _Encoder(body_index)
    for op in graph.get_operations():
        if any(t.op.name in dropped for t in op.inputs) or any(
                c.name in dropped for c in op.control_inputs):
            dropped.add(op.name)
            continue
        try:
            attrs = {key: encoder.encode(op._attrs[key]) for key in sorted(op._attrs)}
        except Unserializable:
            dropped.add(op.name)
            continue
        nodes.append({
            "name": op.name, "op": op.type,
            "input": [t.name for t in op.inputs],
            "control_input": [c.name for c in op.control_inputs],
            "device": "" if clear_devices else op.device,
            "body": None if op._body is None else body_index(op._body),
            "attr": attrs,
            "output": [[t.dtype.name, _dims(t.shape)] for t in op.outputs],
        })
    # A functional op whose body lost an op cannot run either.
    changed = True
    while changed:
        changed = False
        for node in nodes:
            if node["name"] in dropped:
                continue
            if _body_refs_dropped(node, body_list, dropped) or any(
                    i.rpartition(":")[0] in dropped for i in node["input"]) or any(
                    c in dropped for c in node["control_input"]):
                dropped.add(node["name"])
                changed = True
    nodes = [n for n in nodes if n["name"] not in dropped]
    return {
        "format": FORMAT,
        "node": nodes,
        "body": [_body_record(b, bodies) for b in body_list],
        "collection": _collections(graph, dropped),
        "seed": graph.seed,
        "dropped": sorted(dropped),
    }


def _body_refs_dropped(node, body_list, dropped):
    found = []

    def walk(value):
        if isinstance(value, dict):
            if set(value) == {"body"}:
                found.append(value["body"])
            else:
                for v in value.values():
                    walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)

    walk(node["attr"])
    return any(op.name in dropped for i in found for op in body_list[i].ops)


def _dims(shape):
    return shape.as_list() if shape.ndims is not None else None


def _body_record(body, bodies):
    return {
        "kind": body.kind,
        "parent": None if body.parent is None else bodies[body.parent],
        "params": [t.name for t in body.params],
        "results": [t.name for t in body.results],
        "captures": [t.name for t in body.captures],
        "refs": [op.name for op in body.refs],
        "ref_tensors": [[op.name, t.name] for op, t in body.ref_tensors.items()],
        "written": [op.name for op in body.written],
        "control_inputs": [op.name for op in body.control_inputs],
    }


class _Encoder:
    def __init__(self, body_index):
        self._body_index = body_index

    def encode(self, value):
        from tensorflux._src.ops.control.bodies import Body

        if value is None or isinstance(value, (bool, str)):
            return value
        if isinstance(value, int):
            return value
        if isinstance(value, float):
            return value if math.isfinite(value) else {"float": repr(value)}
        if isinstance(value, _dtypes.DType):
            return {"type": value.name}
        if isinstance(value, tensor_shape.TensorShape):
            return {"shape": _dims(value)}
        if isinstance(value, np.ndarray):
            return {"tensor": encode_array(value)}
        if isinstance(value, np.generic):
            return {"scalar": encode_array(np.asarray(value))}
        if isinstance(value, bytes):
            return {"bytes": base64.b64encode(value).decode("ascii")}
        if isinstance(value, list):
            return [self.encode(v) for v in value]
        if isinstance(value, tuple) and not hasattr(value, "_fields"):
            return {"tuple": [self.encode(v) for v in value]}
        if isinstance(value, dict):
            return {"dict": [[self.encode(k), self.encode(v)] for k, v in value.items()]}
        if isinstance(value, Operation):
            return {"op": value.name}
        if isinstance(value, Tensor):
            return {"tensor_ref": value.name}
        if isinstance(value, Body):
            return {"body": self._body_index(value)}
        raise Unserializable(type(value).__name__)


def encode_array(array):
    array = np.asarray(array)
    dtype = _dtypes.as_dtype(array.dtype)
    record = {"dtype": dtype.name, "shape": list(array.shape)}
    if array.dtype == object or array.dtype.kind in "SU":
        items = [v.encode("utf-8") if isinstance(v, str) else bytes(v)
                 for v in array.reshape(-1)]
        record["strings"] = [base64.b64encode(v).decode("ascii") for v in items]
    else:
        data = np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("<"))
        record["data"] = base64.b64encode(data.tobytes()).decode("ascii")
    return record


def decode_array(record):
    dtype = _dtypes.as_dtype(record["dtype"])
    shape = tuple(record["shape"])
    if "strings" in record:
        items = [base64.b64decode(s) for s in record["strings"]]
        array = np.empty(len(items), dtype=object)
        array[:] = items
        return array.reshape(shape)
    np_dtype = np.dtype(dtype.as_numpy_dtype).newbyteorder("<")
    raw = np.frombuffer(base64.b64decode(record["data"]), dtype=np_dtype)
    return raw.astype(np.dtype(dtype.as_numpy_dtype)).reshape(shape)


def _collections(graph, dropped):
    from tensorflux._src.train.variables import Variable

    out = {}
    for key in graph.get_all_collection_keys():
        if not isinstance(key, str):
            continue
        items = []
        for item in graph.get_collection(key):
            if isinstance(item, Variable):
                names = (item.op.name, item.initializer.name, item.value().op.name,
                         item.initial_value.op.name)
                if not any(n in dropped for n in names):
                    items.append({"variable": {
                        "variable_name": item.name, "initializer_name": item.initializer.name,
                        "snapshot_name": item.value().name,
                        "initial_value_name": item.initial_value.name,
                        "trainable": item.trainable}})
            elif isinstance(item, Tensor):
                if item.op.name not in dropped:
                    items.append({"tensor": item.name})
            elif isinstance(item, Operation):
                if item.name not in dropped:
                    items.append({"operation": item.name})
            elif isinstance(item, (bool, int, float, str)):
                items.append({"value": item})
        if items:
            out[key] = items
    return out


# -- reading ----------------------------------------------------------------------------

def import_graph(record, graph, import_scope=None):
    """Rebuilds the ops of `record` (serialize's output) in `graph`, names prefixed by
    `import_scope/` when given. Returns {original op name: new Operation}."""
    from tensorflux._src.ops.control.bodies import Body
    from tensorflux._src.ops.registry import lookup

    if record.get("format") != FORMAT:
        raise ValueError(f"not a serialized tensorflux graph (format {record.get('format')!r})")
    prefix = f"{import_scope.rstrip('/')}/" if import_scope else ""
    ops = {}

    def op_named(name):
        try:
            return ops[name]
        except KeyError:
            raise ValueError(f"the serialized graph refers to op {name!r} before defining "
                             f"it") from None

    def tensor_named(name):
        op_name, _, index = name.rpartition(":")
        return op_named(op_name).outputs[int(index)]

    bodies = []
    for b in record.get("body", []):
        body = Body(graph, b["kind"])
        body.parent = None if b["parent"] is None else bodies[b["parent"]]
        bodies.append(body)
    decoder = _Decoder(op_named, tensor_named, bodies)
    graph._check_not_finalized()
    saved_stack = list(graph._body_stack)
    try:
        for node in record["node"]:
            op_def = lookup(node["op"])
            name = prefix + node["name"]
            inputs = [tensor_named(n) for n in node["input"]]
            attrs = {k: decoder.decode(v) for k, v in node["attr"].items()}
            out_dtypes = [_dtypes.as_dtype(dt) for dt, _ in node["output"]]
            out_shapes = [tensor_shape.TensorShape(dims) for _, dims in node["output"]]
            op = Operation(graph, op_def, name, inputs, attrs, out_dtypes, out_shapes)
            op._control_inputs = [op_named(c) for c in node["control_input"]]
            op._device = node["device"]
            op._gradient_override = None
            graph._body_stack[:] = _body_chain(
                None if node["body"] is None else bodies[node["body"]])
            graph._add_op(op)
            _mark_names_used(graph, name)
            ops[node["name"]] = op
    finally:
        graph._body_stack[:] = saved_stack
    for body, b in zip(bodies, record.get("body", [])):
        body.params = [tensor_named(n) for n in b["params"]]
        body.results = [tensor_named(n) for n in b["results"]]
        body.captures = [tensor_named(n) for n in b["captures"]]
        body.refs = [op_named(n) for n in b["refs"]]
        body.ref_tensors = {op_named(v): tensor_named(t) for v, t in b["ref_tensors"]}
        body.written = [op_named(n) for n in b["written"]]
        body.control_inputs = [op_named(n) for n in b["control_inputs"]]
    _import_collections(record.get("collection", {}), graph, op_named, tensor_named)
    if graph.seed is None and record.get("seed") is not None:
        graph.seed = record["seed"]
    return ops


def _body_chain(body):
    chain = []
    while body is not None:
        chain.insert(0, body)
        body = body.parent
    return chain


def _mark_names_used(graph, name):
    parts = name.split("/")
    for i in range(1, len(parts) + 1):
        key = "/".join(parts[:i]).lower()
        graph._names_in_use[key] = max(graph._names_in_use.get(key, 0), 1)


class _Decoder:
    def __init__(self, op_named, tensor_named, bodies):
        self._op_named = op_named
        self._tensor_named = tensor_named
        self._bodies = bodies

    def decode(self, value):
        if isinstance(value, list):
            return [self.decode(v) for v in value]
        if not isinstance(value, dict):
            return value
        (kind, content), = value.items()
        if kind == "type":
            return _dtypes.as_dtype(content)
        if kind == "shape":
            return tensor_shape.TensorShape(content)
        if kind == "tensor":
            return decode_array(content)
        if kind == "scalar":
            return decode_array(content)[()]
        if kind == "bytes":
            return base64.b64decode(content)
        if kind == "float":
            return float(content)
        if kind == "tuple":
            return tuple(self.decode(v) for v in content)
        if kind == "dict":
            return {self.decode(k): self.decode(v) for k, v in content}
        if kind == "op":
            return self._op_named(content)
        if kind == "tensor_ref":
            return self._tensor_named(content)
        if kind == "body":
            return self._bodies[content]
        raise ValueError(f"unknown attr encoding {kind!r} in a serialized graph")


def _import_collections(collections, graph, op_named, tensor_named):
    from tensorflux._src.train.variables import Variable

    variables = {}
    for key, items in collections.items():
        for item in items:
            (kind, content), = item.items()
            if kind == "variable":
                name = content["variable_name"]
                if name not in variables:
                    variables[name] = Variable._from_graph_elements(
                        variable=tensor_named(name),
                        initializer=op_named(content["initializer_name"]),
                        snapshot=tensor_named(content["snapshot_name"]),
                        initial_value=tensor_named(content["initial_value_name"]),
                        trainable=content["trainable"])
                graph.add_to_collection(key, variables[name])
            elif kind == "tensor":
                graph.add_to_collection(key, tensor_named(content))
            elif kind == "operation":
                graph.add_to_collection(key, op_named(content))
            else:
                graph.add_to_collection(key, content)
