"""tf.saved_model export/load, the Servable contract and `tensorflux export`."""

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tensorflux as tf
from tensorflux.serving import InvalidInput, NotFound, load_servable

W = np.array([[1.0, -2.0, 0.5], [0.0, 1.0, 1.0], [2.0, 0.0, -1.0], [1.0, 1.0, 1.0]],
             dtype=np.float32)
B = np.array([0.1, -0.2, 0.3], dtype=np.float32)


def _expected(x):
    """NumPy: softmax(relu(x @ W + b) * 2), computed independently of tensorflux."""
    h = np.maximum(x @ W + B, 0) * 2
    e = np.exp(h - h.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _build():
    """A small model with a tf.cond (a control-flow body) in the path to the output."""
    x = tf.placeholder(tf.float32, [None, 4], name="x")
    w = tf.Variable(tf.zeros([4, 3]), name="w")
    b = tf.Variable(tf.zeros([3]), name="b")
    double = tf.placeholder_with_default(True, [], name="double")
    h = tf.nn.relu(tf.matmul(x, w) + b)
    h = tf.cond(double, lambda: h * 2.0, lambda: h)
    y = tf.nn.softmax(h, name="y")
    return x, w, b, y


def _simple_export(path):
    with tf.Graph().as_default():
        x, w, b, y = _build()
        with tf.Session() as sess:
            sess.run([w.assign(W), b.assign(B)])
            tf.saved_model.simple_save(sess, path, {"x": x}, {"y": y})


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("export") / "7")
    _simple_export(path)
    return path


def test_simple_save_round_trip(exported):
    assert sorted(os.listdir(exported)) == ["saved_model.pb", "variables"]
    assert tf.saved_model.loader.maybe_saved_model_directory(exported)
    x_value = np.random.RandomState(0).randn(5, 4).astype(np.float32)
    with tf.Session(graph=tf.Graph()) as sess:
        meta = tf.saved_model.loader.load(sess, [tf.saved_model.tag_constants.SERVING],
                                          exported)
        assert meta.meta_info_def.tags == ["serve"]
        sig = meta.signature_def["serving_default"]  # TF's SignatureDef message
        assert sig.method_name == "tensorflow/serving/predict"
        assert sig.inputs["x"].name == "x:0"
        assert sig.inputs["x"].dtype == tf.float32.as_datatype_enum
        assert [d.size for d in sig.inputs["x"].tensor_shape.dim] == [-1, 4]
        assert sig.outputs["y"].name == "y:0"
        assert [d.size for d in sig.outputs["y"].tensor_shape.dim] == [-1, 3]
        np.testing.assert_allclose(sess.run("w:0"), W)
        np.testing.assert_allclose(sess.run("b:0"), B)
        y = sess.run(sig.outputs["y"].name, {sig.inputs["x"].name: x_value})
        np.testing.assert_allclose(y, _expected(x_value), rtol=1e-5)
        assert sorted(v.op.name for v in tf.global_variables()) == ["b", "w"]


def test_load_in_a_fresh_process(exported):
    script = textwrap.dedent(f"""
        import json, sys
        import numpy as np
        import tensorflux as tf
        x = np.array(json.loads(sys.argv[1]), dtype=np.float32)
        with tf.Session(graph=tf.Graph()) as sess:
            meta = tf.saved_model.loader.load(sess, ["serve"], {exported!r})
            sig = meta.signature_def["serving_default"]
            y = sess.run(sig.outputs["y"].name, {{sig.inputs["x"].name: x}})
        print(json.dumps(y.tolist()))
    """)
    x_value = np.array([[1, 2, 3, 4], [-1, 0.5, 0, 2]], dtype=np.float32)
    result = subprocess.run([sys.executable, "-c", script, json.dumps(x_value.tolist())],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    y = np.array(json.loads(result.stdout.strip().splitlines()[-1]))
    np.testing.assert_allclose(y, _expected(x_value), rtol=1e-5)


def test_builder_two_tag_sets_assets_and_signature_kinds(tmp_path):
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("a\nb\n")
    export_dir = str(tmp_path / "model")
    with tf.Graph().as_default():
        x, w, b, y = _build()
        examples = tf.placeholder(tf.string, [None], name="examples")
        classes = tf.as_string(tf.argmax(y, 1), name="classes")
        score = tf.reduce_max(y, 1, name="score")
        asset = tf.constant(str(vocab), name="vocab_path")
        tf.add_to_collection(tf.GraphKeys.ASSET_FILEPATHS, asset)
        classify = tf.saved_model.signature_def_utils.classification_signature_def(
            examples, classes, y)
        regress = tf.saved_model.signature_def_utils.regression_signature_def(examples, score)
        assert classify.method_name == "tensorflow/serving/classify"
        assert set(classify.inputs) == {"inputs"} and set(classify.outputs) == {"classes",
                                                                                "scores"}
        assert regress.method_name == "tensorflow/serving/regress"
        assert set(regress.inputs) == {"inputs"} and set(regress.outputs) == {"outputs"}
        assert regress.outputs["outputs"].name == "score:0"
        assert tf.saved_model.signature_def_utils.is_valid_signature(classify)
        assert tf.saved_model.signature_def_utils.is_valid_signature(regress)
        with pytest.raises(ValueError, match="must be of type string"):
            tf.saved_model.signature_def_utils.classification_signature_def(x, classes, y)
        with pytest.raises(ValueError, match="must be of type float"):
            tf.saved_model.signature_def_utils.regression_signature_def(examples, classes)
        predict = tf.saved_model.signature_def_utils.predict_signature_def({"x": x}, {"y": y})
        built = tf.saved_model.signature_def_utils.build_signature_def(
            {"x": tf.saved_model.utils.build_tensor_info(x)}, {}, "custom")
        assert not tf.saved_model.signature_def_utils.is_valid_signature(built)
        with tf.Session() as sess:
            sess.run([w.assign(W), b.assign(B)])
            builder = tf.saved_model.builder.SavedModelBuilder(export_dir)
            with pytest.raises(AssertionError, match="has not been saved yet"):
                builder.add_meta_graph(["gpu"])
            builder.add_meta_graph_and_variables(
                sess, ["serve"], signature_def_map={"serving_default": predict,
                                                    "classify": classify, "regress": regress},
                assets_collection=tf.get_collection(tf.GraphKeys.ASSET_FILEPATHS))
            with pytest.raises(AssertionError, match="already been saved"):
                builder.add_meta_graph_and_variables(sess, ["x"])
            builder.add_meta_graph(["serve", "gpu"], signature_def_map={"other": predict})
            builder.save()
    assert (tmp_path / "model" / "assets" / "vocab.txt").read_text() == "a\nb\n"
    with tf.Session(graph=tf.Graph()) as sess:
        meta = tf.saved_model.loader.load(sess, ["gpu", "serve"], export_dir)
        assert sorted(meta.signature_def) == ["other"]
        np.testing.assert_allclose(sess.run("w:0"), W)  # the shared variables file
    with tf.Session(graph=tf.Graph()) as sess:
        meta = tf.saved_model.loader.load(sess, ["serve"], export_dir, import_scope="m")
        assert sorted(meta.signature_def) == ["classify", "regress", "serving_default"]
        got = meta.signature_def["classify"]
        assert got.outputs["classes"].dtype == tf.string.as_datatype_enum
        assert got.outputs["scores"].name == "y:0"
        assert sess.run("m/vocab_path:0").decode() == os.path.join(export_dir, "assets",
                                                                   "vocab.txt")
        y = sess.run("m/y:0", {"m/x:0": np.ones((1, 4), np.float32)})
        np.testing.assert_allclose(y, _expected(np.ones((1, 4), np.float32)), rtol=1e-5)


def test_errors_existing_dir_unknown_tags_missing_dir(exported, tmp_path):
    with pytest.raises(AssertionError, match="Export directory already exists, and isn't "
                                             "empty. Please choose a different export "
                                             "directory, or delete all the contents"):
        tf.saved_model.builder.SavedModelBuilder(exported)
    with tf.Session(graph=tf.Graph()) as sess:
        with pytest.raises(RuntimeError, match="MetaGraphDef associated with tags 'train' "
                                               "could not be found in SavedModel. To inspect "
                                               "available tag-sets"):
            tf.saved_model.loader.load(sess, ["train"], exported)
        with pytest.raises(IOError, match="SavedModel file does not exist at"):
            tf.saved_model.loader.load(sess, ["serve"], str(tmp_path / "nothing"))
    # An existing empty directory is fine (TF allows it too).
    (tmp_path / "empty").mkdir()
    _simple_export(str(tmp_path / "empty"))
    assert tf.saved_model.loader.maybe_saved_model_directory(str(tmp_path / "empty"))


def test_a_failed_save_leaves_no_export_dir(tmp_path, monkeypatch):
    from tensorflux._src.serving import saved_model

    def fail(prefix, values):
        open(prefix + ".data-00000-of-00001", "wb").write(b"partial")
        raise OSError("disk full")

    monkeypatch.setattr(saved_model.checkpoint_format, "write", fail)
    with pytest.raises(OSError, match="disk full"):
        _simple_export(str(tmp_path / "model"))
    assert os.listdir(tmp_path) == []


def test_servable_runs_and_validates(exported):
    servable = load_servable(exported)
    try:
        assert servable.version == 7 and servable.export_dir == exported
        sig = servable.signatures["serving_default"]
        assert sig.inputs["x"].shape == [None, 4] and sig.inputs["x"].dtype == tf.float32
        x_value = [[1, 2, 3, 4], [0.5, 0, 0, 1]]  # JSON-like: ints and floats
        out = servable.run("serving_default", {"x": x_value})
        assert list(out) == ["y"] and out["y"].dtype == np.float32
        np.testing.assert_allclose(out["y"], _expected(np.array(x_value, np.float32)),
                                   rtol=1e-5)
        with pytest.raises(NotFound, match="unknown signature 'foo'; available: "
                                           "serving_default"):
            servable.run("foo", {"x": x_value})
        with pytest.raises(InvalidInput, match="missing input 'x'"):
            servable.run("serving_default", {})
        with pytest.raises(InvalidInput, match="unknown input 'z'"):
            servable.run("serving_default", {"x": x_value, "z": 1})
        with pytest.raises(InvalidInput, match=r"input 'x' has shape \[2, 3\] but the "
                                               r"signature expects \[-1, 4\]"):
            servable.run("serving_default", {"x": [[1, 2, 3], [4, 5, 6]]})
        with pytest.raises(InvalidInput, match="input 'x' expects float32 values, got str"):
            servable.run("serving_default", {"x": [["a", "b", "c", "d"]]})
        with pytest.raises(InvalidInput, match="not a rectangular array"):
            servable.run("serving_default", {"x": [[1, 2, 3, 4], [1, 2]]})
        assert issubclass(NotFound, KeyError) and issubclass(InvalidInput, ValueError)
    finally:
        servable.close()


def test_export_a_trained_run(tmp_path, monkeypatch):
    from tensorflux import cli

    monkeypatch.chdir(tmp_path)
    cli.main(["train", "--dataset", "iris", "--epochs", "1", "--logdir", "run"])
    cli.main(["export", "--logdir", "run", "--export_dir", "exports", "--version", "3"])
    servable = load_servable(os.path.join("exports", "3"))
    try:
        assert servable.version == 3
        predict = servable.signatures["serving_default"]
        assert sorted(predict.inputs) == ["features"]
        assert sorted(predict.outputs) == ["classes", "probabilities"]
        classify = servable.signatures["classify"]
        assert classify.method_name == "tensorflow/serving/classify"
        assert tf.saved_model.is_valid_signature(classify)
        features = np.random.RandomState(1).rand(3, 4).astype(np.float32)
        out = servable.run("serving_default", {"features": features})
        assert out["probabilities"].shape == (3, 3)
        np.testing.assert_allclose(out["probabilities"].sum(1), 1, rtol=1e-5)
        np.testing.assert_array_equal(out["classes"], out["probabilities"].argmax(1))
        examples = [tf.train.Example(features=tf.train.Features(feature={
            "features": tf.train.Feature(float_list=tf.train.FloatList(value=row))}))
            .SerializeToString() for row in features.tolist()]
        scored = servable.run("classify", {"inputs": examples})
        np.testing.assert_allclose(scored["scores"], out["probabilities"], rtol=1e-5)
        assert scored["classes"][0].tolist() == [b"0", b"1", b"2"]
    finally:
        servable.close()
    with pytest.raises(SystemExit):  # the same version again: one line, exit status 2
        cli.main(["export", "--logdir", "run", "--export_dir", "exports", "--version", "3"])
