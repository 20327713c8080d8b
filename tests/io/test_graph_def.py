"""GraphDef interchange: tf.import_graph_def of TensorFlow's and our own GraphDefs,
Graph.as_graph_def's TF attr names.

The frozen fixture (tests/fixtures/tf1/frozen, written by TF 2.21 in
make_fixtures.py) is a MobileNet-style CNN; expected.json holds TF's output on a fixed
input. Other expectations are computed with NumPy.
"""

import json
import os

import numpy as np
import pytest

import tensorflux as tf

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                        "fixtures", "tf1")
with open(os.path.join(FIXTURES, "expected.json")) as _f:
    FROZEN = json.load(_f)["frozen"]


def _frozen_graph_def():
    with open(os.path.join(FIXTURES, FROZEN["file"]), "rb") as f:
        return tf.GraphDef.FromString(f.read())


def _node(name, op, inputs=(), **attrs):
    node = tf.NodeDef(name=name, op=op)
    node.input.extend(inputs)
    for key, value in attrs.items():
        node.attr[key].CopyFrom(value)
    return node


def _type(dtype):
    return tf.AttrValue(type=dtype.as_datatype_enum)


def _const(name, value):
    return _node(name, "Const", dtype=_type(tf.as_dtype(value.dtype)),
                 value=tf.AttrValue(tensor=tf.make_tensor_proto(value)))


def _graph_def(*nodes):
    graph_def = tf.GraphDef()
    graph_def.node.extend(nodes)
    return graph_def


# -- TensorFlow's frozen graph ------------------------------------------------------------
def test_tf_frozen_mobilenet_matches_tf_output():
    graph_def = _frozen_graph_def()
    assert sorted({n.op for n in graph_def.node}) == FROZEN["op_types"]
    image = np.array(FROZEN["input_value"], np.float32).reshape(FROZEN["input_shape"])
    expected = np.array(FROZEN["output_value"], np.float32).reshape(FROZEN["output_shape"])
    with tf.Graph().as_default() as graph:
        out, = tf.import_graph_def(graph_def, return_elements=[FROZEN["output"]])
        images = graph.get_tensor_by_name("import/" + FROZEN["input"])
        assert out.name == "import/" + FROZEN["output"]
        assert out.shape.as_list() == [None, 5]
        with tf.Session() as sess:
            got = sess.run(out, {images: image})
    np.testing.assert_allclose(got, expected, atol=1e-5)


def test_input_map_replaces_the_placeholder():
    image = np.array(FROZEN["input_value"], np.float32).reshape(FROZEN["input_shape"])
    expected = np.array(FROZEN["output_value"], np.float32).reshape(FROZEN["output_shape"])
    with tf.Graph().as_default():
        fed = tf.constant(image)
        out, = tf.import_graph_def(_frozen_graph_def(), input_map={"input": fed},
                                   return_elements=["output:0"], name="frozen")
        assert out.name == "frozen/output:0"
        with tf.Session() as sess:
            np.testing.assert_allclose(sess.run(out), expected, atol=1e-5)


# -- TF's errors --------------------------------------------------------------------------
def test_unknown_op_types_are_all_named():
    graph_def = _graph_def(_node("a", "NoSuchOp"), _node("b", "AlsoMissing", ["a"]),
                           _const("c", np.float32(1)), _node("d", "NoSuchOp"))
    with tf.Graph().as_default() as graph:
        with pytest.raises(ValueError, match="No op named AlsoMissing in defined "
                                             "operations") as e:
            tf.import_graph_def(graph_def)
        assert "NoSuchOp (nodes: a, d)" in str(e.value)
        assert "AlsoMissing (nodes: b)" in str(e.value)
        assert graph.get_operations() == []  # nothing half-imported


def test_input_map_and_return_element_errors():
    graph_def = _graph_def(_const("a", np.float32(2)))
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match=r"Attempted to map inputs that were not "
                                             r"found in graph_def: \[B:0\]"):
            tf.import_graph_def(graph_def, input_map={"B:0": tf.constant(5.0)})
        with pytest.raises(ValueError, match="Requested return_element 'B' not found"):
            tf.import_graph_def(graph_def, return_elements=["B"])
        with pytest.raises(ValueError, match="Requested return_element 'a:1' not found"):
            tf.import_graph_def(graph_def, return_elements=["a:1"])
        with pytest.raises(TypeError, match="input_map must be a dictionary"):
            tf.import_graph_def(graph_def, input_map={1: tf.constant(1.0)})
        with pytest.raises(TypeError, match="return_elements must be a list of strings"):
            tf.import_graph_def(graph_def, return_elements=[1])
        with pytest.raises(ValueError, match="Input 'zz' not found in graph_def"):
            tf.import_graph_def(_graph_def(_node("i", "Identity", ["zz"],
                                                 T=_type(tf.float32))))


# -- names, order, control inputs, devices ------------------------------------------------
def test_prefixes_unsorted_nodes_control_inputs_and_devices():
    # Nodes listed before their inputs, a control input and a device.
    graph_def = _graph_def(
        _node("sum", "Add", ["x", "y:0", "^init"], T=_type(tf.float32)),
        _node("init", "NoOp"),
        _const("x", np.array([1.0, 2.0], np.float32)),
        _node("y", "Placeholder", dtype=_type(tf.float32),
              shape=tf.AttrValue(shape=tf.TensorShape([2]).as_proto())),
    )
    graph_def.node[0].device = "/device:CPU:0"
    with tf.Graph().as_default() as graph:
        ops = tf.import_graph_def(graph_def, return_elements=["sum", "sum:0", "init"])
        assert [type(o).__name__ for o in ops] == ["Operation", "Tensor", "Operation"]
        total, init = ops[0], ops[2]
        assert total.name == "import/sum" and init.name == "import/init"
        assert [c.name for c in total.control_inputs] == ["import/init"]
        assert "CPU:0" in total.device
        assert graph.get_tensor_by_name("import/y:0").shape.as_list() == [2]
        # A second import gets a fresh prefix; name="" keeps the names as they are.
        again = tf.import_graph_def(graph_def, return_elements=["sum"])[0]
        assert again.name == "import_1/sum"
        plain = tf.import_graph_def(graph_def, return_elements=["sum:0"], name="")[0]
        assert plain.name == "sum:0"
        # A Python value in input_map becomes a constant; "^init" remaps the control input.
        other = tf.no_op(name="other")
        with tf.name_scope("outer"):
            mapped = tf.import_graph_def(
                graph_def, input_map={"y:0": [10.0, 20.0], "^init": other},
                return_elements=["sum:0"], name="m")[0]
        assert mapped.name == "outer/m/sum:0"
        assert [c.name for c in mapped.op.control_inputs] == ["other"]
        with tf.Session() as sess:
            got = sess.run(mapped)
    np.testing.assert_allclose(got, [11.0, 22.0])


def test_import_without_return_elements_returns_none():
    with tf.Graph().as_default():
        assert tf.import_graph_def(_graph_def(_const("a", np.float32(1)))) is None


# -- as_graph_def -> import_graph_def round trip -------------------------------------------
def _build_model():
    rng = np.random.RandomState(0)
    kernel = rng.randn(3, 3, 2, 4).astype(np.float32)
    bias = rng.randn(4).astype(np.float32)
    dense = rng.randn(4, 3).astype(np.float32)
    x = tf.placeholder(tf.float32, [None, 6, 6, 2], name="x")
    with tf.variable_scope("net"):
        k = tf.get_variable("kernel", initializer=kernel)
        b = tf.get_variable("bias", initializer=bias)
        w = tf.get_variable("dense", initializer=dense)
    h = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(x, k, [1, 2, 2, 1], "SAME"), b))
    pooled = tf.reduce_mean(h, axis=[1, 2])
    logits = tf.matmul(pooled, w, name="logits")
    probs = tf.nn.softmax(logits, name="probs")
    return probs, (kernel, bias, dense)


def _numpy_model(image, kernel, bias, dense):
    # SAME padding with stride 2 on 6x6: output 3x3, pad 0 before and 1 after.
    padded = np.pad(image, [(0, 0), (0, 1), (0, 1), (0, 0)])
    out = np.zeros((image.shape[0], 3, 3, kernel.shape[3]), np.float64)
    for i in range(3):
        for j in range(3):
            patch = padded[:, 2 * i:2 * i + 3, 2 * j:2 * j + 3, :]
            out[:, i, j, :] = np.tensordot(patch, kernel, axes=([1, 2, 3], [0, 1, 2]))
    h = np.maximum(out + bias, 0)
    logits = h.mean(axis=(1, 2)) @ dense
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def test_round_trip_with_variables_matches_numpy():
    image = np.random.RandomState(1).rand(2, 6, 6, 2).astype(np.float32)
    with tf.Graph().as_default() as graph:
        _, params = _build_model()
        graph_def = graph.as_graph_def()
    serialized = graph_def.SerializeToString()
    nodes = {n.name: n for n in graph_def.node}
    assert nodes["Conv2D"].op == "Conv2D"
    assert bytes(nodes["Conv2D"].attr["padding"].s) == b"SAME"
    assert list(nodes["Conv2D"].attr["strides"].list.i) == [1, 2, 2, 1]
    assert nodes["net/kernel"].op == "VariableV2"
    assert list(nodes["net/kernel/read"].input) == ["net/kernel"]
    with tf.Graph().as_default() as fresh:
        tf.import_graph_def(tf.GraphDef.FromString(serialized), name="copy")
        probs = fresh.get_tensor_by_name("copy/probs:0")
        inits = [fresh.get_operation_by_name(f"copy/net/{v}/Assign")
                 for v in ("kernel", "bias", "dense")]
        with tf.Session() as sess:
            sess.run(inits)
            got = sess.run(probs, {fresh.get_tensor_by_name("copy/x:0"): image})
    np.testing.assert_allclose(got, _numpy_model(image, *params), rtol=1e-4, atol=1e-6)


def test_as_graph_def_uses_tf_attr_names_and_drops_bookkeeping():
    with tf.Graph().as_default() as graph:
        s = tf.constant([1.0, 2.0], name="s")
        tf.Assert(tf.reduce_all(s > 0), [s], name="check")
        tf.squeeze(tf.expand_dims(s, 0), [0], name="sq")
        graph_def = graph.as_graph_def(add_shapes=True)
    nodes = {n.name: n for n in graph_def.node}
    asserts = [n for n in graph_def.node if n.op == "Assert"]
    assert asserts and all(set(n.attr) == {"T", "summarize", "_output_shapes"}
                           for n in asserts)
    assert list(nodes["sq"].attr["squeeze_dims"].list.i) == [0]
    assert nodes["s"].attr["_output_shapes"].list.shape[0].dim[0].size == 2
    assert graph_def.versions.producer == tf.GRAPH_DEF_VERSION


def test_strict_export_names_ops_without_a_graph_def_form():
    from tensorflux._src.io.graph_def import NotExpressible, graph_def
    with tf.Graph().as_default() as graph:
        x = tf.placeholder(tf.float32, [2], name="x")
        tf.scan(lambda a, e: a + e, x, name="total")
        graph.as_graph_def()  # for display: no error
        with pytest.raises(NotExpressible, match="'total/Scan' .*no TensorFlow counterpart"):
            graph_def(graph, strict=True)
    with tf.Graph().as_default() as graph:
        v = tf.Variable(1.0, name="v")
        x = tf.placeholder(tf.float32, [], name="x")
        tf.cond(x > 0, lambda: tf.assign(v, x), lambda: tf.identity(x), name="choose")
        with pytest.raises(NotExpressible, match="'choose/If' .*through their Ref \\(v: "):
            graph_def(graph, strict=True)
