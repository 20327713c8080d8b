"""tf.graph_util (freezing, pruning) and tf.train.write_graph.

Text GraphDefs are read back with the `protobuf` package's text_format into
TensorBoard's compiled GraphDef class, an independent reader of TF's format.
"""

import os

import numpy as np
import pytest

import tensorflux as tf


def _build():
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    w = tf.Variable(np.arange(6, dtype=np.float32).reshape(3, 2), name="w")
    b = tf.Variable(np.array([0.5, -1.0], np.float32), name="b")
    unused = tf.Variable(np.zeros(4, np.float32), name="unused")
    y = tf.nn.relu(tf.matmul(x, w) + b, name="y")
    return x, y, (w, b, unused)


def _values():
    return np.arange(6, dtype=np.float32).reshape(3, 2), np.array([0.5, -1.0], np.float32)


def test_convert_variables_to_constants_then_import_matches_numpy():
    feed = np.array([[1.0, 2.0, 3.0], [-1.0, 0.0, 1.0]], np.float32)
    w, b = _values()
    with tf.Graph().as_default() as graph:
        _build()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            frozen = tf.graph_util.convert_variables_to_constants(
                sess, graph.as_graph_def(), ["y"])
    ops = {n.name: n.op for n in frozen.node}
    assert ops["w"] == "Const" and ops["b"] == "Const"
    assert ops["w/read"] == "Identity"  # the /read Identity stays, reading the Const
    assert "unused" not in ops and "w/Assign" not in ops  # pruned to what y needs
    with tf.Graph().as_default():
        y, = tf.import_graph_def(frozen, return_elements=["y:0"], name="")
        x = tf.get_default_graph().get_tensor_by_name("x:0")
        assert tf.global_variables() == []
        with tf.Session() as sess:
            got = sess.run(y, {x: feed})
    np.testing.assert_allclose(got, np.maximum(feed @ w + b, 0))


def test_whitelist_and_blacklist_choose_the_variables():
    with tf.Graph().as_default() as graph:
        _build()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            gd = graph.as_graph_def()
            only_w = tf.graph_util.convert_variables_to_constants(
                sess, gd, ["y"], variable_names_whitelist=["w"])
            not_w = tf.graph_util.convert_variables_to_constants(
                sess, gd, ["y"], variable_names_blacklist=["w"])
    assert {n.name: n.op for n in only_w.node}["b"] == "VariableV2"
    assert {n.name: n.op for n in only_w.node}["w"] == "Const"
    assert {n.name: n.op for n in not_w.node}["w"] == "VariableV2"
    assert {n.name: n.op for n in not_w.node}["b"] == "Const"


def test_extract_sub_graph_and_its_errors():
    with tf.Graph().as_default() as graph:
        a = tf.constant(1.0, name="a")
        b = tf.constant(2.0, name="b")
        with tf.control_dependencies([b]):
            tf.identity(a, name="c")
        tf.constant(3.0, name="d")
        gd = graph.as_graph_def()
    sub = tf.graph_util.extract_sub_graph(gd, ["c"])
    assert [n.name for n in sub.node] == ["a", "b", "c"]
    with pytest.raises(TypeError, match="dest_nodes must be a list"):
        tf.graph_util.extract_sub_graph(gd, "c")
    with pytest.raises(AssertionError, match="zz is not in graph"):
        tf.graph_util.extract_sub_graph(gd, ["zz"])
    with pytest.raises(TypeError, match="graph_def must be a graph_pb2.GraphDef proto"):
        tf.compat.v1.graph_util.extract_sub_graph("gd", ["c"])


def test_remove_training_nodes_splices_identities():
    with tf.Graph().as_default() as graph:
        a = tf.constant([1.0], name="a")
        i = tf.identity(a, name="i")
        j = tf.identity(i, name="j")
        tf.add(j, 1.0, name="out")
        gd = graph.as_graph_def()
    pruned = tf.graph_util.remove_training_nodes(gd)
    nodes = {n.name: n for n in pruned.node}
    assert "i" not in nodes and "j" not in nodes
    assert list(nodes["out"].input) == ["a", "out/y"]
    kept = tf.graph_util.remove_training_nodes(gd, protected_nodes=["j"])
    assert {n.name: list(n.input) for n in kept.node}["j"] == ["a"]


def test_tensor_shape_and_must_run_on_cpu():
    with tf.Graph().as_default() as graph:
        tf.placeholder(tf.float32, [None, 7], name="p")
        c = tf.constant([1, 2], name="ints")
        f = tf.constant([1.0], name="floats")
        gd = graph.as_graph_def()
    assert tf.graph_util.tensor_shape_from_node_def_name(graph, "p").as_list() == [None, 7]
    assert tf.graph_util.tensor_shape_from_node_def_name(graph, "p:0").as_list() == [None, 7]
    nodes = {n.name: n for n in gd.node}
    assert tf.graph_util.must_run_on_cpu(nodes["ints"])
    assert not tf.graph_util.must_run_on_cpu(nodes["floats"])
    assert tf.graph_util.must_run_on_cpu(c.op) and not tf.graph_util.must_run_on_cpu(f.op)


def test_write_graph_text_and_binary_read_back(tmp_path):
    graph_pb2 = pytest.importorskip("tensorboard.compat.proto.graph_pb2")
    text_format = pytest.importorskip("google.protobuf.text_format")
    with tf.Graph().as_default() as graph:
        _build()
    logdir = str(tmp_path / "new" / "dir")
    path = tf.train.write_graph(graph, logdir, "graph.pbtxt")
    assert path == os.path.join(logdir, "graph.pbtxt")
    with open(path) as f:
        parsed = text_format.Parse(f.read(), graph_pb2.GraphDef())
    names = [n.name for n in parsed.node]
    assert names == [op.name for op in graph.get_operations()]
    assert parsed.versions.producer == tf.GRAPH_DEF_VERSION
    binary = tf.io.write_graph(graph.as_graph_def(), logdir, "graph.pb", as_text=False)
    with open(binary, "rb") as f:
        reread = tf.GraphDef.FromString(f.read())
    assert [n.name for n in reread.node] == names
    # What TF's reader parsed from the text is the same GraphDef as the binary file.
    assert tf.GraphDef.FromString(parsed.SerializeToString()) == reread
    assert not [p for p in os.listdir(logdir) if ".tmp" in p]  # atomic writes left nothing
