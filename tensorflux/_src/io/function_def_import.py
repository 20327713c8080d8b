"""TF's functional control flow (`If`, `StatelessIf`, `While`, `StatelessWhile`) imported
as tensorflux's tf.cond / tf.while_loop constructs.

TF 2.x graph code (and TF 1.15 under control_flow_v2) writes a cond or loop as one node
whose bodies are FunctionDefs in the GraphDef's `library`. Each function is rebuilt
here node by node through the op registry (`graph_def_import.build_op`, so shape
inference and dtype checks run as for any imported op) inside a `Body`
(ops/control/bodies.py), and the node becomes our `If` / `While` op over those bodies,
so it compiles to `lax.cond` / `lax.scan` / `lax.while_loop` like any tf.cond or
tf.while_loop built here:

- `If(cond, input)`: each branch function is built with its arguments bound to the
  node's inputs, which makes them captures of the branch, as tf.cond's are.
- `While(input)`: one loop body holds both functions; their arguments are the loop
  variables (body parameters); `cond`'s result is the condition and `body`'s the next
  loop variables. `output_shapes` are the shape invariants.

Inside a function, inputs are argument names or `node:output_arg:index`, resolved with
the record's output args (TF's names). The ops a function's nodes need are checked
before anything is built: one ValueError names each function, node and op type that
tensorflux lacks. Not supported: functions with attr placeholders (polymorphic
functions), resource variables captured by a body (TF passes their handles in;
tensorflux's variables are refs outside the body), and a function's `control_ret`
(stateful ops no result needs are not run; tensorflux bodies run what their results
need).
"""

from __future__ import annotations

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.io.function_def import output_arg_slices

FUNCTIONAL = frozenset({"If", "StatelessIf", "While", "StatelessWhile"})
_FUNC_ATTRS = {"If": ("then_branch", "else_branch"), "While": ("cond", "body")}


def _kind(op_type):
    return "If" if op_type in ("If", "StatelessIf") else "While"


class Library(dict):
    """{name: FunctionDef}, and the op names the import will give the GraphDef's nodes
    (`reserved`): body ops must not take them, though they are built first."""

    reserved = frozenset()


def library_of(graph_def, registry):
    """The Library of `graph_def.library`, after checking that every function the
    graph's control-flow nodes reach uses only ops tensorflux defines."""
    library = Library((f.signature.name, f) for f in graph_def.library.function)
    missing, seen = [], set()
    todo = [(n, None) for n in graph_def.node if n.op in FUNCTIONAL]
    while todo:
        node, where = todo.pop()
        for key in _FUNC_ATTRS[_kind(node.op)]:
            name = node.attr[key].func.name
            if name in seen:
                continue
            seen.add(name)
            fdef = library.get(name)
            if fdef is None:
                raise ValueError(
                    f"graph_def is invalid at node '{node.name}'{where or ''} (op: "
                    f"'{node.op}'): its {key} names function '{name}', which graph_def."
                    f"library does not define (it defines {sorted(library)[:10]}).")
            for inner in fdef.node_def:
                if inner.op in FUNCTIONAL:
                    todo.append((inner, f" in function '{name}'"))
                elif inner.op not in registry:
                    missing.append(f"function '{name}' node '{inner.name}' (op: "
                                   f"'{inner.op}')")
    if missing:
        raise ValueError(f"No op named {missing[0].split(chr(39))[-2]} in defined "
                         f"operations. The control-flow functions of the graph_def use op "
                         f"types tensorflux does not define: {'; '.join(missing)}")
    return library


def import_functional(graph, node, full_name, data, library, registry):
    """The If or While op named `full_name` for a functional NodeDef with inputs `data`."""
    if _kind(node.op) == "If":
        return _import_if(graph, node, full_name, data, library, registry)
    return _import_while(graph, node, full_name, data, library, registry)


def _fresh_scope(graph, library, base):
    """A name scope for a body's ops that no graph op and no GraphDef node uses (TF's
    function bodies have their own namespace; ours live in the graph)."""
    def taken(scope):
        inside = scope + "/"
        return any(n == scope or n.startswith(inside)
                   for names in (library.reserved, graph._nodes_by_name) for n in names)
    scope, k = base, 1
    while taken(scope):
        scope, k = f"{base}_{k}", k + 1
    return scope + "/"


def _invalid(node, text):
    return ValueError(f"graph_def is invalid at node '{node.name}' (op: '{node.op}'): "
                      f"{text}")


def _dtypes_of(node, key):
    return [_dtypes.as_dtype(t) for t in node.attr[key].list.type]


def _shapes_of(node, count):
    """The node's `output_shapes` when it has one per output, else None."""
    from tensorflux._src.io.graph_def_import import shape_from_proto
    shapes = [shape_from_proto(s) for s in node.attr["output_shapes"].list.shape] \
        if "output_shapes" in node.attr else []
    return shapes if len(shapes) == count else None


def _import_if(graph, node, full_name, data, library, registry):
    from tensorflux._src.ops.control.bodies import Body, body_bundle
    from tensorflux._src.ops.control.control_flow_ops import _merged_shape, make_functional
    if not data:
        raise _invalid(node, "If needs its condition as first input, got no inputs.")
    pred, inputs = data[0], data[1:]
    if pred.dtype.base_dtype != _dtypes.bool:
        raise _invalid(node, f"the condition '{pred.name}' is {pred.dtype.name}; tensorflux "
                             f"imports If with a bool condition only.")
    tout = _dtypes_of(node, "Tout")
    bodies, flats = [], []
    for role in _FUNC_ATTRS["If"]:
        body = Body(graph, "cond")
        with body:
            results = build_function(graph, node, node.attr[role].func.name, inputs,
                                     _fresh_scope(graph, library, f"{full_name}/{role}"),
                                     library, registry)
        body.finish(results)
        _check_results(node, role, results, tout)
        bodies.append(body)
        flats.append(results)
    shapes = _shapes_of(node, len(tout)) or [
        _merged_shape(t.shape, f.shape, i) for i, (t, f) in enumerate(zip(*flats))]
    captures = body_bundle(bodies)[0]
    return make_functional("If", [pred] + captures, bodies, tout, shapes,
                           {"branches": tuple(bodies)}, full_name + "/")


def _import_while(graph, node, full_name, data, library, registry):
    from tensorflux._src.ops.control.bodies import Body
    from tensorflux._src.ops.control.control_flow_ops import _changes_shape, make_functional
    dtypes = _dtypes_of(node, "T")
    if len(dtypes) != len(data):
        raise _invalid(node, f"attr T lists {len(dtypes)} loop variable types for "
                             f"{len(data)} input(s).")
    invariants = _shapes_of(node, len(data)) or [t.shape for t in data]
    loop = Body(graph, "while")
    with graph.name_scope(_fresh_scope(graph, library, f"{full_name}/loop_vars")):
        params = [loop.add_param(d.base_dtype, s, "Identity")
                  for d, s in zip(dtypes, invariants)]
    with loop:
        cond_name, body_name = (node.attr[k].func.name for k in _FUNC_ATTRS["While"])
        keep_going = build_function(graph, node, cond_name, params,
                                    _fresh_scope(graph, library, f"{full_name}/cond"),
                                    library, registry)
        results = build_function(graph, node, body_name, params,
                                 _fresh_scope(graph, library, f"{full_name}/body"),
                                 library, registry)
    if len(keep_going) != 1 or keep_going[0].dtype.base_dtype != _dtypes.bool:
        raise _invalid(node, f"its cond function '{cond_name}' must return one bool, got "
                             f"{[t.dtype.name for t in keep_going]}.")
    _check_results(node, "body", results, dtypes)
    loop.finish(keep_going + results)
    attrs = {"body": loop, "n_loop_vars": len(data), "has_maximum_iterations": False,
             "back_prop": True, "carries_arrays": False,
             "host_loop": any(_changes_shape(t.shape, r.shape, s)
                              for t, r, s in zip(data, results, invariants))}
    if "parallel_iterations" in node.attr:
        attrs["parallel_iterations"] = int(node.attr["parallel_iterations"].i)
    return make_functional("While", list(data) + loop.captures, [loop], dtypes, invariants,
                           attrs, full_name + "/")


def _check_results(node, role, results, dtypes):
    got = [t.dtype.base_dtype for t in results]
    if got != [d.base_dtype for d in dtypes]:
        raise _invalid(node, f"its {role} function returns {[d.name for d in got]}, but the "
                             f"node's attrs say {[d.name for d in dtypes]}.")


def build_function(graph, node, name, args, scope, library, registry):
    """Builds function `name` (named by `node`) in the current body with its arguments
    bound to the tensors `args`; ops are named `scope` + node name. Returns its results."""
    from tensorflux._src.io.graph_def_import import build_op
    fdef = library.get(name)
    if fdef is None:
        raise _invalid(node, f"it names function '{name}', which graph_def.library does "
                             f"not define.")
    signature = fdef.signature
    if len(signature.input_arg) != len(args):
        raise _invalid(node, f"function '{name}' takes {len(signature.input_arg)} "
                             f"argument(s), the node passes {len(args)}.")
    if signature.attr or any(a.type_attr or a.number_attr or a.type_list_attr
                        for a in signature.input_arg):
        raise _invalid(node, f"function '{name}' is polymorphic (attrs or type attrs in its "
                             f"signature), which tensorflux does not import.")
    values = {a.name: t for a, t in zip(signature.input_arg, args)}
    built = {}

    def resolve(text, user):
        parts = text.split(":")
        if len(parts) == 1:
            if text in values:
                return values[text]
            parts = [text, "", "0"]  # a node's first output, in GraphDef style
        if len(parts) == 2:
            parts.append("0")
        src, arg, index = parts[0], parts[1], int(parts[2])
        op = built.get(src)
        if op is None:
            raise ValueError(f"function '{name}' is invalid at node '{user}': input '{text}' "
                             f"names no argument or node of the function.")
        slices = output_arg_slices(op)
        for out_name, start, count in slices:
            if (out_name == arg or not arg or len(slices) == 1) and index < count:
                return op.outputs[start + index]
        raise ValueError(f"function '{name}' is invalid at node '{user}': input '{text}': "
                         f"'{src}' (op: '{op.type}') has output args "
                         f"{[(n, c) for n, _, c in slices]}.")

    for fnode in _function_order(fdef, name):
        data, controls = [], []
        for text in fnode.input:
            if text.startswith("^"):
                if text[1:] in built:
                    controls.append(built[text[1:]])
                continue  # a control input on an argument: arguments are always ready
            data.append(resolve(text, fnode.name))
        try:
            built[fnode.name] = build_op(graph, fnode, scope + fnode.name, registry, data,
                                         controls, library)
        except ValueError as e:
            raise ValueError(f"in function '{name}' (called by node '{node.name}'): {e}") \
                from e
    return [resolve(fdef.ret[a.name], f"ret {a.name}") for a in signature.output_arg]


def _function_order(fdef, name):
    """The function's NodeDefs with every node after its inputs (any order is allowed)."""
    nodes = {n.name: n for n in fdef.node_def}
    args = {a.name for a in fdef.signature.input_arg}
    order, state = [], {}

    def visit(n):
        stack = [(n, False)]
        while stack:
            cur, done = stack.pop()
            if done:
                state[cur.name] = 2
                order.append(cur)
                continue
            if state.get(cur.name) == 2:
                continue
            if state.get(cur.name) == 1:
                raise ValueError(f"function '{name}' has a cycle through node '{cur.name}'.")
            state[cur.name] = 1
            stack.append((cur, True))
            for text in cur.input:
                src = text.lstrip("^").split(":")[0]
                if src in nodes and src not in args and state.get(src) != 2:
                    stack.append((nodes[src], False))
    for n in fdef.node_def:
        if state.get(n.name) != 2:
            visit(n)
    return order
