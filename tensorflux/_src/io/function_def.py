"""Functional control flow (`If`, `While`) as TF's functional ops with FunctionDef bodies.

tensorflux's `tf.cond` / `tf.while_loop` keep their branches and loop bodies as `Body`
objects (ops/control/bodies.py) in Python attrs; TF 2.x (and TF 1.15 under
control_flow_v2) keeps them as FunctionDefs in the GraphDef's `library`. Export maps
one onto the other:

- `If(cond, input: Tin) -> output: Tout`, attrs `then_branch` / `else_branch` (func),
  `Tcond`, `Tin`, `Tout`, `output_shapes`. Our If's inputs are the predicate and the
  tensors its branches capture; TF's branch functions take exactly those as arguments
  (TF passes captures as extra inputs too), so both branches get one signature.
- `While(input: T) -> output: T`, attrs `cond` / `body` (func), `T`, `output_shapes`,
  `parallel_iterations`. TF's loop carries every value its functions read, so the loop
  variables are ours followed by the body's captures (passed through unchanged). A
  `maximum_iterations` becomes one more loop variable counting down (the cond function
  ands `remaining > 0` into the condition, the body subtracts one), which needs no
  extra node outside the function.

A FunctionDef is the body's ops in FunctionDef notation: arguments by name (`arg0`),
other nodes' outputs as `node:output_arg:index` (TF's output arg names, which the op
registry shares), `^node` control inputs; `ret` maps each output arg to a tensor. Only
the ops the results need are written (what TF's functions run too). Nested control
flow nests functions.

What has no counterpart is reported, never guessed: variables the body uses through
their Ref (TF's functions take resource handles; our refs live outside the function),
`Scan` (tf.scan / map_fn / dynamic_rnn: TF builds these from While + TensorArrays) and
`FunctionalGrad`.
"""

from __future__ import annotations

import re

import numpy as np

from tensorflux._src.compiler.functional import ops_needed
from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import protos, tensor_util

# Node names inside generated functions for the maximum_iterations counter; function
# node names live in their own namespace, apart from the body's op names (which are
# full graph names, so they never start like these).
_REMAINING_ZERO = "maximum_iterations_zero"
_REMAINING_ONE = "maximum_iterations_one"
_REMAINING_POSITIVE = "maximum_iterations_remaining_positive"
_REMAINING_AND = "maximum_iterations_and_cond"
_REMAINING_NEXT = "maximum_iterations_remaining_next"


class GraphScope:
    """NodeDef input names of a top-level graph node."""

    @staticmethod
    def input(t):
        return t._as_node_def_input()

    @staticmethod
    def control(op):
        return "^" + op.name


class FunctionScope:
    """NodeDef input names inside a FunctionDef: arguments by name, other nodes as
    `node:output_arg:index`. None for a tensor the function cannot see."""

    def __init__(self, args, ops):
        self.args = args  # {tensor: arg name}
        self.ops = ops  # the ops written as nodes of this function

    def input(self, t):
        if t in self.args:
            return self.args[t]
        if t.op in self.ops:
            arg, index = output_arg_of(t)
            return f"{t.op.name}:{arg}:{index}"
        return None

    def control(self, op):
        return "^" + op.name if op in self.ops else None


def output_arg_slices(op):
    """[(output arg name, first flat output index, count)] of an op, from its record's
    output args (list args sized by the op's attrs; one unsized list takes the rest)."""
    args = op.op_def.output_args
    counts = []
    for arg in args:
        if arg.type_list_attr is not None and arg.type_list_attr in op._attrs:
            counts.append(len(op._attrs[arg.type_list_attr]))
        elif arg.number_attr is not None and arg.number_attr in op._attrs:
            counts.append(int(op._attrs[arg.number_attr]))
        elif arg.is_list:
            counts.append(None)
        else:
            counts.append(1)
    if None in counts:
        counts[counts.index(None)] = len(op.outputs) - sum(c for c in counts if c)
    out, start = [], 0
    for arg, count in zip(args, counts):
        out.append((arg.name, start, count))
        start += count
    return out


def output_arg_of(t):
    """(output arg name, index within it) of a tensor, for `node:arg:index` names."""
    for name, start, count in output_arg_slices(t.op):
        if start <= t.value_index < start + count:
            return name, t.value_index - start
    raise ValueError(f"'{t.name}': output {t.value_index} of '{t.op.name}' (op: "
                     f"'{t.op.type}') matches none of its record's output args")


def function_name(library, op_name, role):
    """A fresh FunctionDef name for one body of `op_name` (TF's function names are
    identifiers; graph op names have '/')."""
    base = re.sub(r"[^A-Za-z0-9_]", "_", f"{op_name}_{role}")
    name, k = base, 1
    while name in library:
        name, k = f"{base}_{k}", k + 1
    return name


def _func_attr(name):
    out = protos.AttrValue()
    out.func.CopyFrom(protos.NameAttrList(name=name))
    return out


def _type_list(dtypes):
    listed = protos.AttrValue.ListValue()
    listed.type.extend(d.base_dtype.as_datatype_enum for d in dtypes)
    return protos.AttrValue(list=listed)


def _shape_list(shapes):
    listed = protos.AttrValue.ListValue()
    listed.shape.extend(protos.shape_proto(s) for s in shapes)
    return protos.AttrValue(list=listed)


def functional_node(op, node, scope, library, node_def):
    """Fills `node` (name, op type and device set) for one functional op in `scope`;
    adds its bodies to `library` ({name: FunctionDef}). Returns a list of problems."""
    n = op._attrs["n_values"]
    problems = []
    if op.type not in ("If", "While"):
        return [{"Scan": "tf.scan/map_fn/foldl/dynamic_rnn's Scan op has no TensorFlow "
                         "counterpart (TF builds it from While and TensorArrays)",
                 "FunctionalGrad": "a gradient of functional control flow, which TF "
                                   "computes with its own gradient functions"}.get(
                     op.type, "a tensorflux-only functional op")]
    if len(op.inputs) > n:
        names = ", ".join(v.name for v in op._attrs["refs"])
        problems.append(f"its bodies use variables through their Ref ({names}: "
                        f"tf.assign or a ref read inside the construct), which a FunctionDef "
                        f"cannot take (TensorFlow passes resource handles)")
    values = list(op.inputs[:n])
    for t in values:
        name = scope.input(t)
        if name is None:
            problems.append(f"input '{t.name}' is not visible where the op is written")
            name = t.name
        node.input.append(name)
    for c in op.control_inputs:
        text = scope.control(c)
        if text is not None:
            node.input.append(text)
    if op.type == "If":
        problems += _if_node(op, node, values, library, node_def)
    else:
        problems += _while_node(op, node, values, library, node_def)
    return problems


def _if_node(op, node, values, library, node_def):
    captures = values[1:]
    problems = []
    for role, body in zip(("then_branch", "else_branch"), op._attrs["branches"]):
        name = function_name(library, op.name, role)
        library[name] = None  # reserved while nested bodies pick their names
        fdef, bad = body_function(name, body, captures, body.results, library, node_def)
        library[name] = fdef
        problems += bad
        node.attr[role].CopyFrom(_func_attr(name))
    node.attr["Tcond"].CopyFrom(protos.AttrValue(type=_dtypes.bool.as_datatype_enum))
    node.attr["Tin"].CopyFrom(_type_list([t.dtype for t in captures]))
    node.attr["Tout"].CopyFrom(_type_list(op._attrs["Tout"]))
    node.attr["output_shapes"].CopyFrom(_shape_list(op._attrs["output_shapes"]))
    return problems


def _while_node(op, node, values, library, node_def):
    loop, n = op._attrs["body"], op._attrs["n_loop_vars"]
    captures = list(loop.captures)
    max_iter = values[-1] if op._attrs["has_maximum_iterations"] else None
    # Loop variables: ours, the body's captures (passed through), the remaining count.
    args = list(loop.params) + captures + ([max_iter] if max_iter is not None else [])
    dtypes = [t.dtype for t in args]
    shapes = list(op._attrs["output_shapes"]) + [t.shape for t in args[n:]]
    extra = max_iter is not None
    problems = []
    cond_name = function_name(library, op.name, "cond")
    library[cond_name] = None
    fdef, bad = body_function(cond_name, loop, args, loop.results[:1], library, node_def,
                              counter=("cond", max_iter.dtype) if extra else None)
    library[cond_name] = fdef
    problems += bad
    body_name = function_name(library, op.name, "body")
    library[body_name] = None
    fdef, bad = body_function(body_name, loop, args, loop.results[1:] + captures, library,
                              node_def, counter=("body", max_iter.dtype) if extra else None)
    library[body_name] = fdef
    problems += bad
    node.attr["T"].CopyFrom(_type_list(dtypes))
    node.attr["cond"].CopyFrom(_func_attr(cond_name))
    node.attr["body"].CopyFrom(_func_attr(body_name))
    node.attr["output_shapes"].CopyFrom(_shape_list(shapes))
    node.attr["parallel_iterations"].CopyFrom(
        protos.AttrValue(i=int(op._attrs.get("parallel_iterations", 10))))
    return problems


def _needed_ops(body, results):
    """The body's ops the results need, in creation order, without its parameters."""
    return [op for op in ops_needed(body, results) if op.type != "_BodyParameter"]


def body_function(name, body, args, results, library, node_def, counter=None):
    """(FunctionDef `name` computing `results` of `body` from `args`, problems).

    `args` are tensors the function takes (body parameters and captures); `counter`,
    for a While with maximum_iterations, is ("cond" | "body", dtype): the last arg is
    the remaining trip count (see the module docstring)."""
    fdef = protos.FunctionDef()
    fdef.signature.name = name
    arg_names = {}
    for k, t in enumerate(args):
        arg_names.setdefault(t, f"arg{k}")
        fdef.signature.input_arg.add(name=f"arg{k}", type=t.dtype.base_dtype.as_datatype_enum)
    ops = _needed_ops(body, results)
    scope = FunctionScope(arg_names, set(ops))
    problems = []
    for op in ops:
        fnode, bad = node_def(op, library=library, scope=scope)
        if bad:
            problems.append(f"in function '{name}', node '{op.name}' (op: '{op.type}'): {bad}")
        fdef.node_def.append(fnode)
    rets = []
    for t in results:
        text = scope.input(t)
        if text is None:
            problems.append(f"function '{name}' returns '{t.name}', which it cannot see")
            text = t.name
        rets.append((text, t.dtype))
    if counter is not None:
        rets = _counter_rets(fdef, counter, f"arg{len(args) - 1}", rets)
    for k, (text, dtype) in enumerate(rets):
        fdef.signature.output_arg.add(name=f"output{k}",
                                      type=dtype.base_dtype.as_datatype_enum)
        fdef.ret[f"output{k}"] = text
    return fdef, problems


def _const_node(name, dtype, value):
    node = protos.NodeDef(name=name, op="Const")
    node.attr["dtype"].CopyFrom(protos.AttrValue(type=dtype.as_datatype_enum))
    tensor = protos.AttrValue()
    tensor.tensor.CopyFrom(tensor_util.make_tensor_proto(
        np.asarray(value, dtype.as_numpy_dtype)))
    node.attr["value"].CopyFrom(tensor)
    return node


def _binary_node(name, op_type, x, y, dtype_attr=None):
    node = protos.NodeDef(name=name, op=op_type, input=[x, y])
    if dtype_attr is not None:
        node.attr["T"].CopyFrom(protos.AttrValue(type=dtype_attr.as_datatype_enum))
    return node


def _counter_rets(fdef, counter, remaining, rets):
    """Adds the maximum_iterations countdown to a While's cond or body function."""
    role, dtype = counter
    dtype = dtype.base_dtype
    if role == "cond":  # keep going while the condition holds and iterations remain
        fdef.node_def.extend([
            _const_node(_REMAINING_ZERO, dtype, 0),
            _binary_node(_REMAINING_POSITIVE, "Greater", remaining,
                         f"{_REMAINING_ZERO}:output:0", dtype),
            _binary_node(_REMAINING_AND, "LogicalAnd", f"{_REMAINING_POSITIVE}:z:0",
                         rets[0][0])])
        return [(f"{_REMAINING_AND}:z:0", _dtypes.bool)]
    fdef.node_def.extend([
        _const_node(_REMAINING_ONE, dtype, 1),
        _binary_node(_REMAINING_NEXT, "Sub", remaining, f"{_REMAINING_ONE}:output:0", dtype)])
    return rets + [(f"{_REMAINING_NEXT}:z:0", dtype)]
