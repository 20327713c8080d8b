"""tf.test.assert_equal_graph_def and Graph.as_graph_def."""

import pytest

import tensorflux as tf


def _build(order):
    graph = tf.Graph()
    with graph.as_default():
        made = {}
        for name in order:
            if name == "a":
                made["a"] = tf.constant(1.0, name="a")
            elif name == "b":
                made["b"] = tf.constant(2.0, name="b")
        with tf.control_dependencies([made["b"]]):
            tf.add(made["a"], 3.0, name="sum")
    return graph.as_graph_def()


def test_node_order_does_not_matter_and_differences_are_named():
    first, second = _build("ab"), _build("ba")
    assert [n.name for n in first.node][:2] != [n.name for n in second.node][:2]
    tf.test.assert_equal_graph_def(first, second)
    with tf.Graph().as_default() as other:
        tf.constant(1.0, name="a")
        tf.constant(5.0, name="b")
        with tf.control_dependencies([other.get_tensor_by_name("b:0")]):
            tf.add(other.get_tensor_by_name("a:0"), 3.0, name="sum")
    with pytest.raises(AssertionError, match="Node named 'b' has attr 'value'"):
        tf.test.assert_equal_graph_def(other.as_graph_def(), first)
    with tf.Graph().as_default() as smaller:
        tf.constant(1.0, name="a")
    with pytest.raises(AssertionError, match="Did not find expected node 'b'"):
        tf.test.assert_equal_graph_def(smaller.as_graph_def(), first)
    with pytest.raises(TypeError, match="Expected tf.GraphDef"):
        tf.test.assert_equal_graph_def("graph", first)


def test_as_graph_def_holds_nodes_inputs_and_versions():
    graph_def = _build("ab")
    nodes = {n.name: n for n in graph_def.node}
    # As in TF1, the constant made inside the block takes the control input, and `sum`
    # needs none of its own because its input already implies it.
    assert nodes["sum"].op == "Add" and list(nodes["sum"].input) == ["a", "sum/y"]
    assert list(nodes["sum/y"].input) == ["^b"]
    assert graph_def.versions.producer == tf.GRAPH_DEF_VERSION
