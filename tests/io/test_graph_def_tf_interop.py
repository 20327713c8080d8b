"""Real TensorFlow imports tensorflux's GraphDefs (runs where `tensorflow` is importable;
skipped in the main venv). Ran with TF 2.21 in /work/tfvenv."""

import numpy as np
import pytest

import tensorflux as tf

tf_real = pytest.importorskip("tensorflow")
op_def_registry = pytest.importorskip("tensorflow.python.framework.op_def_registry")


def _frozen_model():
    rng = np.random.RandomState(3)
    image = rng.rand(2, 8, 8, 3).astype(np.float32)
    with tf.Graph().as_default() as graph:
        x = tf.placeholder(tf.float32, [None, 8, 8, 3], name="x")
        k = tf.Variable(rng.randn(3, 3, 3, 4).astype(np.float32), name="k")
        b = tf.Variable(rng.randn(4).astype(np.float32), name="b")
        w = tf.Variable(rng.randn(4, 5).astype(np.float32), name="w")
        h = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(x, k, [1, 1, 1, 1], "SAME"), b))
        h = tf.nn.max_pool(h, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
        pooled = tf.reduce_mean(h, axis=[1, 2])
        logits = tf.matmul(pooled, w)
        probs = tf.nn.softmax(logits, name="probs")
        flat = tf.reshape(tf.concat([probs, logits], axis=1), [-1], name="flat")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            ours = sess.run([probs, flat], {x: image})
            frozen = tf.graph_util.convert_variables_to_constants(
                sess, graph.as_graph_def(), ["probs", "flat"])
    return frozen, image, ours


def test_tensorflow_imports_a_frozen_tensorflux_graph():
    frozen, image, ours = _frozen_model()
    v1 = tf_real.compat.v1
    graph_def = v1.GraphDef.FromString(frozen.SerializeToString())
    with tf_real.Graph().as_default() as graph:
        v1.import_graph_def(graph_def, name="")
        with v1.Session(graph=graph) as sess:
            theirs = sess.run(["probs:0", "flat:0"], {"x:0": image})
    for a, b in zip(theirs, ours):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_tensorflow_imports_an_unfrozen_graph_and_runs_its_initializers():
    with tf.Graph().as_default() as graph:
        v = tf.Variable([1.0, 2.0], name="v")
        out = tf.multiply(v, 3.0, name="out")
        init = tf.global_variables_initializer()
        graph_def = graph.as_graph_def()
    v1 = tf_real.compat.v1
    with tf_real.Graph().as_default() as g:
        v1.import_graph_def(v1.GraphDef.FromString(graph_def.SerializeToString()), name="")
        with v1.Session(graph=g) as sess:
            sess.run(init.name)
            np.testing.assert_allclose(sess.run(out.name), [3.0, 6.0])


# Ops exported by common TF1 programs: their attrs must be names TF's OpDef knows.
def _common_graph():
    with tf.Graph().as_default() as graph:
        x = tf.placeholder(tf.float32, [None, 8, 8, 3], name="x")
        k = tf.get_variable("k", [3, 3, 3, 4])
        h = tf.nn.conv2d(x, k, [1, 1, 1, 1], "SAME")
        h = tf.nn.depthwise_conv2d(h, tf.ones([3, 3, 4, 1]), [1, 1, 1, 1], "SAME")
        h = tf.layers.batch_normalization(h, training=False)
        h = tf.nn.relu6(tf.nn.avg_pool(h, [1, 2, 2, 1], [1, 2, 2, 1], "VALID"))
        h = tf.layers.dense(tf.layers.flatten(h), 10)
        y = tf.placeholder(tf.int64, [None])
        loss = tf.losses.sparse_softmax_cross_entropy(y, h)
        tf.train.GradientDescentOptimizer(0.1).minimize(loss)
        tf.argmax(h, 1)
        tf.cast(tf.shape(h)[0], tf.float32)
    return graph.as_graph_def()


def test_exported_attr_names_exist_in_tensorflows_op_defs():
    mismatches = []
    for node in _common_graph().node:
        op_def = op_def_registry.get(node.op)
        if op_def is None:
            mismatches.append(f"{node.name}: no op {node.op} in TensorFlow")
            continue
        known = {a.name for a in op_def.attr}
        extra = {k for k in node.attr if not k.startswith("_")} - known
        required = {a.name for a in op_def.attr if not a.HasField("default_value")}
        lacking = required - set(node.attr)
        if extra or lacking:
            mismatches.append(f"{node.name} ({node.op}): extra {sorted(extra)}, "
                              f"lacking {sorted(lacking)}")
    assert mismatches == []


def test_tensorflow_imports_the_whole_training_graph():
    graph_def = tf_real.compat.v1.GraphDef.FromString(_common_graph().SerializeToString())
    with tf_real.Graph().as_default():
        tf_real.compat.v1.import_graph_def(graph_def, name="")
