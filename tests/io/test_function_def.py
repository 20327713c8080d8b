"""tf.cond / tf.while_loop through a GraphDef: If/While nodes with FunctionDef bodies,
exported and imported into a fresh graph; values checked against NumPy."""

import numpy as np
import pytest

import tensorflux as tf
from tensorflux._src.framework import protos
from tensorflux._src.io.graph_def import graph_def as _graph_def

X = np.array([1.0, -2.0, 3.0], np.float32)


def _numpy_expectations(x, limit):
    y = x * 2.0 if x.sum() > 0 else x - 1.0
    i, acc = 0, np.zeros(3, np.float32)
    while i < 4:  # nested cond in the loop body
        acc = acc + x if i < 2 else acc * 1.5
        i += 1
    j, k = 1, 0
    while j < 100 and k < 5:  # maximum_iterations=5
        j, k = j + 3, k + 1
    n, total = 0, 0.0
    while n < limit:  # trip count known only when run
        total += float(np.sum(x)) * n
        n += 1
    inner = x.copy()
    if x[0] > 0:  # a while loop inside a cond branch
        for _ in range(3):
            inner = inner * 2.0
    else:
        inner = -inner
    return [y, i, acc, j, total, inner]


def _build():
    x = tf.placeholder(tf.float32, [3], name="x")
    limit = tf.placeholder(tf.int32, [], name="limit")
    y = tf.cond(tf.reduce_sum(x) > 0, lambda: x * 2.0, lambda: x - 1.0, name="c")

    def body(i, acc):
        return i + 1, tf.cond(i < 2, lambda: acc + x, lambda: acc * 1.5)

    i, acc = tf.while_loop(lambda i, acc: i < 4, body, [tf.constant(0), tf.zeros([3])],
                           name="w")
    j = tf.while_loop(lambda j: j < 100, lambda j: j + 3, [tf.constant(1)],
                      maximum_iterations=5, name="m")
    s = tf.reduce_sum(x)
    _, total = tf.while_loop(lambda n, t: n < limit,
                             lambda n, t: (n + 1, t + s * tf.cast(n, tf.float32)),
                             [tf.constant(0), tf.constant(0.0)], name="dyn")

    def doubled():
        return tf.while_loop(lambda k, v: k < 3, lambda k, v: (k + 1, v * 2.0),
                             [tf.constant(0), x])[1]

    inner = tf.cond(x[0] > 0, doubled, lambda: -x, name="outer")
    return [y, i, acc, j, total, inner]


@pytest.mark.parametrize("x,limit", [(X, 4), (-X, 0)])
def test_control_flow_round_trips_through_a_graph_def(x, limit):
    with tf.Graph().as_default() as graph:
        fetches = _build()
        graph_def = _graph_def(graph, strict=True)  # everything has a GraphDef form
    names = [t.name for t in fetches]
    assert {n.op for n in graph_def.node} >= {"If", "While"}
    assert not any("/" in f.signature.name for f in graph_def.library.function)
    wire = protos.GraphDef.FromString(graph_def.SerializeToString())
    with tf.Graph().as_default():
        tf.import_graph_def(wire, name="imported")
        with tf.Session() as sess:
            got = sess.run(["imported/" + n for n in names],
                           {"imported/x:0": x, "imported/limit:0": limit})
    for value, want in zip(got, _numpy_expectations(x, limit)):
        np.testing.assert_allclose(value, want, rtol=1e-6)


def test_imported_loop_ops_are_one_construct_each():
    with tf.Graph().as_default() as graph:
        _build()
        graph_def = graph.as_graph_def()
    # Body ops live only in functions: the graph keeps the While/If nodes themselves.
    assert not any(n.name.startswith("w/cond/") for n in graph_def.node)
    functions = {f.signature.name: f for f in graph_def.library.function}
    (loop,) = [n for n in graph_def.node if n.name == "w/While"]
    body = functions[loop.attr["body"].func.name]
    nested = [n for n in body.node_def if n.op == "If"]
    assert nested and nested[0].attr["then_branch"].func.name in functions
    # FunctionDef notation: node:output_arg:index, arguments by name.
    assert any(":" in i and i.count(":") == 2 for n in body.node_def for i in n.input)
    with tf.Graph().as_default() as fresh:
        tf.import_graph_def(graph_def, name="")
        types = [op.type for op in fresh.get_operations()]
    assert types.count("While") == 4 and types.count("If") == 3


def _if_graph_def(branch_op):
    """A GraphDef with one If whose then branch uses `branch_op` (Neg otherwise)."""
    gd = protos.GraphDef()
    float_t = tf.float32.as_datatype_enum
    for name, op, inputs in (("p", "Placeholder", []), ("x", "Placeholder", [])):
        node = gd.node.add(name=name, op=op)
        node.attr["dtype"].type = tf.bool.as_datatype_enum if name == "p" else float_t
    node = gd.node.add(name="choose", op="StatelessIf", input=["p", "x"])
    node.attr["Tcond"].type = tf.bool.as_datatype_enum
    node.attr["Tin"].list.type.append(float_t)
    node.attr["Tout"].list.type.append(float_t)
    node.attr["then_branch"].func.name = "then_fn"
    node.attr["else_branch"].func.name = "else_fn"
    for fname, op in (("then_fn", branch_op), ("else_fn", "Neg")):
        f = gd.library.function.add()
        f.signature.name = fname
        f.signature.input_arg.add(name="a", type=float_t)
        f.signature.output_arg.add(name="out", type=float_t)
        inner = f.node_def.add(name="y", op=op, input=["a"])
        inner.attr["T"].type = float_t
        f.ret["out"] = "y:y:0"
    return gd


def test_hand_written_stateless_if_imports_and_runs():
    with tf.Graph().as_default():
        tf.import_graph_def(_if_graph_def("Square"), name="")
        with tf.Session() as sess:
            for pred, want in ((True, [4.0, 9.0]), (False, [-2.0, -3.0])):
                got = sess.run("choose:0", {"p:0": pred, "x:0": [2.0, 3.0]})
                np.testing.assert_allclose(got, want)


def test_function_using_an_unknown_op_is_named_before_anything_is_built():
    with tf.Graph().as_default() as graph:
        with pytest.raises(ValueError, match="function 'then_fn' node 'y' \\(op: "
                                             "'NoSuchOp'\\)"):
            tf.import_graph_def(_if_graph_def("NoSuchOp"), name="")
        assert graph.get_operations() == []


def test_missing_function_is_named_with_its_node():
    gd = _if_graph_def("Square")
    del gd.library.function[0]
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="'choose'.*then_branch names function "
                                             "'then_fn'"):
            tf.import_graph_def(gd, name="")


def test_frozen_graph_keeps_its_control_flow_functions():
    with tf.Graph().as_default() as graph:
        x = tf.placeholder(tf.float32, [3], name="x")
        w = tf.Variable([2.0, 3.0, 4.0], name="w")
        out = tf.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a * w),
                            [tf.constant(0), x])[1]
        tf.identity(out, name="out")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            frozen = tf.graph_util.convert_variables_to_constants(
                sess, graph.as_graph_def(), ["out"])
    assert len(frozen.library.function) == 2
    with tf.Graph().as_default():
        tf.import_graph_def(frozen, name="")
        with tf.Session() as sess:
            got = sess.run("out:0", {"x:0": [1.0, 1.0, 1.0]})
    np.testing.assert_allclose(got, np.array([2.0, 3.0, 4.0]) ** 3)
