"""TF1's premade-estimator tutorial (examples/premade_estimator), unchanged but for the
import: iris CSVs through tf.keras.utils.get_file and pandas -> DNNClassifier with
feature columns -> train / evaluate / predict -> export -> `tensorflux serve` answering
TF Serving's :classify and :predict."""

import base64
import os
import re

import numpy as np
import pytest

import tensorflux as tf
from tensorflux.datasets import load_iris
from tests.platform import helpers
from tests.serving.server_process import http, start_server

pytest.importorskip("pandas")

TUTORIAL = os.path.join(helpers.ROOT, "examples", "premade_estimator", "premade_estimator.py")
KEYS = ["SepalLength", "SepalWidth", "PetalLength", "PetalWidth"]


def _seed_keras_cache(home):
    """The tutorial's two files, in TF's layout ("N,4,setosa,versicolor,virginica" then
    rows), where get_file looks before downloading: the built-in iris split 120/30."""
    datasets = home / ".keras" / "datasets"
    datasets.mkdir(parents=True)
    (train_x, train_y), (test_x, test_y) = load_iris()
    for name, x, y in (("iris_training.csv", train_x, train_y),
                       ("iris_test.csv", test_x, test_y)):
        rows = [f"{len(x)},4,setosa,versicolor,virginica"]
        rows += [",".join(f"{v:g}" for v in features) + f",{label}"
                 for features, label in zip(x, y)]
        (datasets / name).write_text("\n".join(rows) + "\n")


def _example(flower):
    return tf.train.Example(features=tf.train.Features(feature={
        k: tf.train.Feature(float_list=tf.train.FloatList(value=[v]))
        for k, v in zip(KEYS, flower)})).SerializeToString()


def test_premade_estimator_tutorial_then_served(tmp_path, monkeypatch):
    home = tmp_path / "home"
    _seed_keras_cache(home)
    monkeypatch.setenv("HOME", str(home))
    export_base = tmp_path / "export"
    rc, out, err = helpers.run([TUTORIAL, "--model_dir", str(tmp_path / "model"),
                                "--export_dir", str(export_base)], timeout=240)
    assert rc == 0, err
    accuracy = float(re.search(r"Test set accuracy: ([0-9.]+)", out).group(1))
    assert accuracy >= 0.9, out
    predicted = re.findall(r'Prediction is "(\w+)" \(([0-9.]+)%\), expected "(\w+)"', out)
    assert [p[0] for p in predicted] == [p[2] for p in predicted] == [
        "Setosa", "Versicolor", "Virginica"], out
    assert "Downloading" not in out          # get_file read the cache
    assert (tmp_path / "model" / "checkpoint").exists()

    # `tensorflux eval` reads the model_dir's layout: the evaluation the tutorial ran.
    rc, eval_out, err = helpers.run(["-m", "tensorflux", "eval", "--logdir",
                                     str(tmp_path / "model")], timeout=120)
    assert rc == 0, err
    assert "eval at step 1,000" in eval_out and "model.ckpt-1000" in eval_out
    recorded = float(re.search(r"accuracy\s*│\s*([0-9.]+)", eval_out).group(1))
    assert abs(recorded - accuracy) < 1e-3, eval_out

    server, url = start_server("iris", export_base, helpers.ROOT)
    try:
        flowers = [[5.1, 3.3, 1.7, 0.5], [5.9, 3.0, 4.2, 1.5], [6.9, 3.1, 5.4, 2.1]]
        status, doc = http("POST", url + ":classify", {
            "signature_name": "classification",
            "examples": [dict(zip(KEYS, flower)) for flower in flowers]})
        assert status == 200, doc
        scores = np.array([[score for _, score in result] for result in doc["results"]])
        assert [label for label, _ in doc["results"][0]] == ["0", "1", "2"]
        np.testing.assert_allclose(scores.sum(axis=1), 1.0, rtol=1e-5)
        assert scores.argmax(axis=1).tolist() == [0, 1, 2]
        # The tutorial printed the winning class's probability (to 0.1%).
        np.testing.assert_allclose(scores.max(axis=1) * 100,
                                   [float(p[1]) for p in predicted], atol=0.051)

        status, doc = http("POST", url + ":predict", {
            "signature_name": "predict",
            "instances": [{"b64": base64.b64encode(_example(f)).decode()}
                          for f in flowers]})
        assert status == 200, doc
        np.testing.assert_allclose([row["probabilities"] for row in doc["predictions"]],
                                   scores, rtol=1e-5, atol=1e-6)
        assert [row["class_ids"] for row in doc["predictions"]] == [[0], [1], [2]]
    finally:
        server.terminate()
        server.wait(timeout=30)
