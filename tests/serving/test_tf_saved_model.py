"""SavedModels in TensorFlow's format, both ways: TensorFlow's fixture (written by TF 2.21's
tf.compat.v1 builder, tests/fixtures/tf1/saved_model, outputs TF recorded in
expected.json) loaded, served over TF Serving's REST API and checked against TF's
predictions; and (where TensorFlow is importable) TF loading a tensorflux export."""

import json
import os
import shutil

import numpy as np
import pytest

import tensorflux as tf
from tensorflux.serving import load_servable
from tests.serving.test_server import _http, start_server

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                        "fixtures", "tf1")
with open(os.path.join(FIXTURES, "expected.json")) as _f:
    EXPECTED = json.load(_f)["saved_model"]
EXPORT = os.path.join(FIXTURES, EXPECTED["dir"])
FEATURES = np.array(EXPECTED["predict_inputs"]["features"],
                    np.float32).reshape(EXPECTED["features_shape"])
PROBS = np.array(EXPECTED["predict_outputs"]["probabilities"]).reshape(len(FEATURES), -1)
EXAMPLES = [bytes.fromhex(h) for h in EXPECTED["classify_examples_hex"]]
SCORES = np.array(EXPECTED["classify_scores"]).reshape(len(EXAMPLES), -1)


def test_loader_loads_tensorflows_saved_model():
    with tf.Session(graph=tf.Graph()) as sess:
        meta = tf.saved_model.loader.load(sess, ["serve"], EXPORT)
        assert sorted(meta.signature_def) == EXPECTED["signatures"]
        predict = meta.signature_def["predict"]
        out = sess.run({k: v.name for k, v in predict.outputs.items()},
                       {predict.inputs["features"].name: FEATURES})
        np.testing.assert_allclose(out["probabilities"], PROBS, rtol=1e-5, atol=1e-7)
        np.testing.assert_array_equal(out["classes"],
                                      EXPECTED["predict_outputs"]["classes"])
        classify = meta.signature_def["classify"]
        scores, classes = sess.run([classify.outputs["scores"].name,
                                    classify.outputs["classes"].name],
                                   {classify.inputs["inputs"].name: EXAMPLES})
        np.testing.assert_allclose(scores, SCORES, rtol=1e-5, atol=1e-7)
        assert [c.decode() for c in classes[0]] == EXPECTED["classify_classes"]
        # TF's resource variables, run as tensorflux variables under their names.
        assert sorted(v.op.name for v in tf.global_variables()) == ["model/b", "model/w"]


def test_missing_tag_and_damaged_file(tmp_path):
    with tf.Session(graph=tf.Graph()) as sess:
        with pytest.raises(RuntimeError, match="MetaGraphDef associated with tags 'train' "
                                               "could not be found in SavedModel"):
            tf.saved_model.loader.load(sess, ["train"], EXPORT)
    broken = tmp_path / "broken"
    shutil.copytree(EXPORT, broken)
    data = (broken / "saved_model.pb").read_bytes()
    (broken / "saved_model.pb").write_bytes(data[:len(data) // 2])
    with tf.Session(graph=tf.Graph()) as sess:
        with pytest.raises(IOError, match="Cannot parse file .*saved_model.pb"):
            tf.saved_model.loader.load(sess, ["serve"], str(broken))


def test_servable_classifies_like_tensorflow():
    with load_servable(EXPORT) as servable:
        out = servable.run("predict", {"features": FEATURES})
        np.testing.assert_allclose(out["probabilities"], PROBS, rtol=1e-5, atol=1e-7)
        scored = servable.run("classify", {"inputs": EXAMPLES})
        np.testing.assert_allclose(scored["scores"], SCORES, rtol=1e-5, atol=1e-7)


@pytest.mark.slow
def test_tensorflux_serve_answers_predict_for_tensorflows_export(tmp_path):
    base = tmp_path / "models"
    shutil.copytree(EXPORT, base / "1")
    repo = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
    server, url = start_server("tfm", base, repo)
    try:
        status, doc = _http("POST", url + ":predict",
                            {"signature_name": "predict", "instances": FEATURES.tolist()})
        assert status == 200, doc
        served = np.array([row["probabilities"] for row in doc["predictions"]])
        np.testing.assert_allclose(served, PROBS, rtol=1e-5, atol=1e-7)
        assert [row["classes"] for row in doc["predictions"]] == \
            EXPECTED["predict_outputs"]["classes"]
    finally:
        server.terminate()
        server.wait(timeout=20)


def test_tensorflow_loads_a_tensorflux_saved_model(tmp_path):
    real_tf = pytest.importorskip("tensorflow")
    v1 = real_tf.compat.v1
    export_dir = str(tmp_path / "model")
    w = np.array([[1.0, -2.0, 0.5], [0.0, 1.0, 1.0]], np.float32)
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 2], name="x")
        kernel = tf.get_variable("kernel", initializer=tf.zeros([2, 3]))
        y = tf.nn.softmax(tf.matmul(x, kernel) + 0.5, name="y")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(kernel.assign(w))
            tf.saved_model.simple_save(sess, export_dir, {"x": x}, {"y": y})
    feed = np.array([[1.0, 2.0], [-1.0, 0.5]], np.float32)
    logits = feed @ w + 0.5
    expect = np.exp(logits) / np.exp(logits).sum(1, keepdims=True)
    graph = real_tf.Graph()
    with v1.Session(graph=graph) as sess:
        meta = v1.saved_model.loader.load(sess, ["serve"], export_dir)
        sig = meta.signature_def["serving_default"]
        got = sess.run(sig.outputs["y"].name, {sig.inputs["x"].name: feed})
    np.testing.assert_allclose(got, expect, rtol=1e-6)


def test_method_name_updater_rewrites_tensorflows_saved_model(tmp_path):
    shutil.copytree(EXPORT, tmp_path / "m")
    updater = tf.saved_model.signature_def_utils.MethodNameUpdater(str(tmp_path / "m"))
    updater.replace_method_name("predict", "tensorflow/serving/regress", tags="serve")
    with pytest.raises(ValueError, match="does not have a signature_def with key: 'nope'"):
        updater.replace_method_name("nope", "x")
    with pytest.raises(ValueError, match=r"tags \['gpu'\] could not be found"):
        updater.replace_method_name("predict", "x", tags=["gpu"])
    with pytest.raises(ValueError, match="`method_name` must be defined"):
        updater.replace_method_name("predict", "")
    updater.save()
    with tf.Session(graph=tf.Graph()) as sess:
        sigs = tf.saved_model.loader.load(sess, ["serve"], str(tmp_path / "m")).signature_def
    assert sigs["predict"].method_name == "tensorflow/serving/regress"
    assert sigs["classify"].method_name == "tensorflow/serving/classify"


def test_main_op_initializes_local_variables_and_tables():
    with tf.Graph().as_default():
        counter = tf.Variable(5, name="counter", collections=[tf.GraphKeys.LOCAL_VARIABLES])
        table = tf.lookup.StaticHashTable(
            tf.lookup.KeyValueTensorInitializer(["a", "b"], [1, 2]), -1)
        init = tf.saved_model.main_op.main_op()
        with tf.Session() as sess:
            sess.run(init)
            assert sess.run(counter) == 5
            assert list(sess.run(table.lookup(tf.constant(["b", "z"])))) == [2, -1]
            assign = counter.assign(9)
            restore = tf.saved_model.main_op_with_restore(assign.op.name)
            sess.run(restore)
            assert sess.run(counter) == 9


def test_freeze_tensorflows_saved_model_into_a_graph_def():
    # TF's SavedModel -> a frozen GraphDef (variables as Consts) -> a fresh graph.
    with tf.Session(graph=tf.Graph()) as sess:
        tf.saved_model.loader.load(sess, ["serve"], EXPORT)
        frozen = tf.graph_util.convert_variables_to_constants(
            sess, sess.graph.as_graph_def(), ["probabilities"])
    assert not [n.name for n in frozen.node if n.op in ("VariableV2", "VarHandleOp")]
    with tf.Graph().as_default():
        (probs,) = tf.import_graph_def(frozen, name="", return_elements=["probabilities:0"])
        with tf.Session() as sess:
            got = sess.run(probs, {"features:0": FEATURES})
    np.testing.assert_allclose(got, PROBS, rtol=1e-5, atol=1e-7)
