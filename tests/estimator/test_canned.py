"""Canned estimators (TF 1.15 v1): the premade-estimator tutorial on iris, least squares,
breast cancer, metric values against formulas written here, TF's variable names, label
vocabularies, weights and TF's errors."""


import numpy as np

import tensorflux as tf
from tensorflux.datasets import load_iris

IRIS_KEYS = ["SepalLength", "SepalWidth", "PetalLength", "PetalWidth"]


def _cfg(**kw):
    return tf.estimator.RunConfig(tf_random_seed=1, **kw)


def _iris_feats(x):
    return {k: x[:, i].astype(np.float32) for i, k in enumerate(IRIS_KEYS)}


def test_iris_premade_dnn_tutorial(tmp_path):
    (xtr, ytr), (xte, yte) = load_iris()
    cols = [tf.feature_column.numeric_column(k) for k in IRIS_KEYS]
    est = tf.estimator.DNNClassifier(hidden_units=[10, 10], feature_columns=cols,
                                     n_classes=3, model_dir=str(tmp_path / "m"),
                                     optimizer=tf.train.AdamOptimizer(0.03), config=_cfg())
    est.train(lambda: tf.data.Dataset.from_tensor_slices(
        (_iris_feats(xtr), ytr.astype(np.int64))).shuffle(120, seed=1).repeat().batch(32),
        steps=300)
    result = est.evaluate(lambda: tf.data.Dataset.from_tensor_slices(
        (_iris_feats(xte), yte.astype(np.int64))).batch(30))
    assert {"accuracy", "average_loss", "loss", "global_step"} <= set(result)
    assert result["accuracy"] >= 0.9 and result["global_step"] == 300
    preds = list(est.predict(lambda: tf.data.Dataset.from_tensor_slices(
        _iris_feats(xte)).batch(30)))
    assert set(preds[0]) == {"logits", "probabilities", "class_ids", "classes",
                             "all_class_ids", "all_classes"}
    ids = np.array([p["class_ids"][0] for p in preds])
    np.testing.assert_allclose(result["accuracy"], np.mean(ids == yte), rtol=1e-6)
    assert preds[0]["classes"][0] == str(ids[0]).encode()
    np.testing.assert_allclose(preds[0]["probabilities"].sum(), 1.0, rtol=1e-5)
    assert list(preds[0]["all_classes"]) == [b"0", b"1", b"2"]

    names = set(est.get_variable_names())
    assert {"dnn/hiddenlayer_0/kernel", "dnn/hiddenlayer_0/bias",
            "dnn/hiddenlayer_1/kernel", "dnn/hiddenlayer_1/bias", "dnn/logits/kernel",
            "dnn/logits/bias", "global_step"} <= names
    assert est.get_variable_value("dnn/hiddenlayer_0/kernel").shape == (4, 10)
    assert est.get_variable_value("dnn/logits/kernel").shape == (10, 3)

    # Export with a parsing receiver: classify + predict signatures, as TF's tutorial.
    spec = tf.feature_column.make_parse_example_spec(cols)
    path = est.export_saved_model(
        str(tmp_path / "exp"),
        tf.estimator.export.build_parsing_serving_input_receiver_fn(spec)).decode()
    from tensorflux.serving import load_servable
    servable = load_servable(path)
    assert {"serving_default", "classification", "predict"} <= set(servable.signatures)
    examples = [tf.train.Example(features=tf.train.Features(feature={
        k: tf.train.Feature(float_list=tf.train.FloatList(value=[float(x[i])]))
        for i, k in enumerate(IRIS_KEYS)})).SerializeToString() for x in xte[:5]]
    out = servable.run("predict", {"examples": np.array(examples, dtype=object)})
    np.testing.assert_array_equal(out["class_ids"][:, 0], ids[:5])
    cls = servable.run("classification", {"inputs": np.array(examples, dtype=object)})
    np.testing.assert_allclose(cls["scores"], np.stack([p["probabilities"]
                                                        for p in preds[:5]]), rtol=1e-4)
    assert cls["classes"].shape == (5, 3)
    servable.close()
