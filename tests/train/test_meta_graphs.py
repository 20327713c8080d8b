"""MetaGraphs: TensorFlow's `.meta` imported with its collections and Saver, and
tensorflux's own exported and imported again; values checked against NumPy and against
what TensorFlow recorded (tests/fixtures/tf1/expected.json)."""

import os

import numpy as np
import pytest

import tensorflux as tf
from tests.train.test_tf_checkpoints import CKPT, expected_value


def _numpy_loss(params, x, y):
    """The fixture CNN's loss (make_fixtures.py): conv 3x3 SAME, relu, 2x2 max pool,
    dense over a [64, 3] kernel, mean sparse softmax cross-entropy."""
    kernel, bias = params["conv1/kernel"], params["conv1/bias"]
    padded = np.pad(x, [(0, 0), (1, 1), (1, 1), (0, 0)])
    conv = np.zeros(x.shape[:3] + (4,))
    for i in range(3):
        for j in range(3):
            conv += padded[:, i:i + 8, j:j + 8, :] @ kernel[i, j]
    h = np.maximum(conv + bias, 0)
    h = h.reshape(-1, 4, 2, 4, 2, 4).max(axis=(2, 4)).reshape(-1, 64)
    logits = h @ params["dense/kernel"] + params["dense/bias"]
    logits = logits - logits.max(axis=1, keepdims=True)
    log_probs = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
    return -log_probs[np.arange(len(y)), y].mean()


def test_import_tensorflows_meta_graph_restore_and_train():
    rng = np.random.RandomState(0)
    x = rng.rand(5, 8, 8, 1).astype(np.float32)
    y = rng.randint(0, 3, 5)
    with tf.Graph().as_default() as graph:
        saver = tf.train.import_meta_graph(CKPT + ".meta")
        names = sorted(v.op.name for v in tf.trainable_variables())
        assert names == ["conv1/bias", "conv1/kernel", "dense/bias", "dense/kernel/part_0",
                         "dense/kernel/part_1"]
        assert len(tf.global_variables()) == 19  # + Adam slots, beta powers, step, label
        (train_op,) = tf.get_collection("train_op")
        (step,) = tf.get_collection(tf.GraphKeys.GLOBAL_STEP)
        loss = graph.get_tensor_by_name("Mean:0")
        with tf.Session() as sess:
            saver.restore(sess, CKPT)
            assert sess.run(step) == expected_value("global_step")
            params = {n: expected_value(n) for n in
                      ("conv1/kernel", "conv1/bias", "dense/kernel", "dense/bias")}
            before = sess.run(loss, {"x:0": x, "y:0": y})
            np.testing.assert_allclose(before, _numpy_loss(params, x, y), rtol=1e-5)
            sess.run(train_op, {"x:0": x, "y:0": y})
            assert sess.run(step) == expected_value("global_step") + 1
            assert sess.run(loss, {"x:0": x, "y:0": y}) < before


def _model():
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    w = tf.get_variable("w", initializer=tf.constant([[1.0, -2.0], [0.5, 0.0], [3.0, 1.0]]))
    b = tf.get_variable("b", initializer=tf.constant([0.25, -0.5]))
    out = tf.nn.relu(tf.matmul(x, w) + b, name="out")
    tf.add_to_collection("outputs", out)
    tf.add_to_collection("hyper", 0.5)
    tf.add_to_collection("steps", 7)
    tf.add_to_collection("labels", "cat")
    return x, w, b, out


def test_export_then_import_meta_graph_round_trip(tmp_path):
    prefix = str(tmp_path / "model.ckpt")
    w_value = np.array([[1.0, -2.0], [0.5, 0.0], [3.0, 1.0]], np.float32)
    with tf.Graph().as_default():
        x, w, b, out = _model()
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(w.assign(w_value * 2))
            saver.save(sess, prefix)
    with tf.Graph().as_default() as graph:
        saver = tf.train.import_meta_graph(prefix + ".meta")
        assert [v.name for v in tf.global_variables()] == ["w:0", "b:0"]
        assert tf.get_collection("hyper") == [0.5] and tf.get_collection("steps") == [7]
        assert tf.get_collection("labels") == [b"cat"]
        (out,) = tf.get_collection("outputs")
        assert out is graph.get_tensor_by_name("out:0")
        feed = np.array([[1.0, 2.0, -1.0]], np.float32)
        with tf.Session() as sess:
            saver.restore(sess, prefix)
            expect = np.maximum(feed @ (w_value * 2) + [0.25, -0.5], 0)
            np.testing.assert_allclose(sess.run(out, {"x:0": feed}), expect, rtol=1e-6)
            # The imported variables' initializers are the exported ones.
            sess.run(tf.global_variables_initializer())
            np.testing.assert_allclose(sess.run("w:0"), w_value)


def test_export_meta_graph_as_text_scope_and_errors(tmp_path):
    with tf.Graph().as_default():
        with tf.name_scope("tower"):
            x = tf.placeholder(tf.float32, [2], name="x")
            tf.identity(x * 3.0, name="y")
        path = str(tmp_path / "g.pbtxt")
        meta = tf.train.export_meta_graph(path, as_text=True, export_scope="tower")
        assert sorted(n.name for n in meta.graph_def.node) == ["mul", "mul/y", "x", "y"]
    text = open(path).read()
    assert 'name: "mul"' in text and "tensorflow_version" in text
    with tf.Graph().as_default() as graph:
        tf.train.import_meta_graph(path, import_scope="copy")
        with tf.Session() as sess:
            np.testing.assert_allclose(sess.run("copy/y:0", {"copy/x:0": [1.0, 2.0]}),
                                       [3.0, 6.0])
        assert graph.get_operation_by_name("copy/mul").type == "Mul"
    with pytest.raises(IOError, match="does not exist"):
        tf.train.import_meta_graph(str(tmp_path / "missing.meta"))
    (tmp_path / "bad.meta").write_bytes(b"\xff\xfe not a proto")
    with pytest.raises(IOError, match="Cannot parse file"):
        tf.train.import_meta_graph(str(tmp_path / "bad.meta"))


def test_tensorflow_imports_our_meta_graph_and_restores(tmp_path):
    real_tf = pytest.importorskip("tensorflow")
    v1 = real_tf.compat.v1
    prefix = str(tmp_path / "model.ckpt")
    w_value = np.array([[1.0, -2.0], [0.5, 0.0], [3.0, 1.0]], np.float32)
    with tf.Graph().as_default():
        _model()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            tf.train.Saver().save(sess, prefix)
    feed = np.array([[1.0, 2.0, -1.0]], np.float32)
    graph = real_tf.Graph()
    with graph.as_default():
        saver = v1.train.import_meta_graph(prefix + ".meta")
        with v1.Session(graph=graph) as sess:
            saver.restore(sess, prefix)
            got = sess.run("out:0", {"x:0": feed})
            assert os.path.exists(prefix + ".index")
    np.testing.assert_allclose(got, np.maximum(feed @ w_value + [0.25, -0.5], 0), rtol=1e-6)
