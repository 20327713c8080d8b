"""Canned heads and estimators against formulas written here: metric values of a tiny
fixed problem (untrained and trained), least squares, label vocabularies, weights,
TF 1.15's variable names and errors."""

import numpy as np
import pytest

import tensorflux as tf
from tensorflux.datasets import load_breast_cancer

LOG2 = np.log(2.0)


def _cfg():
    return tf.estimator.RunConfig(tf_random_seed=1)


def _ds(features, labels=None, batch=None):
    def input_fn():
        data = features if labels is None else (features, labels)
        n = len(next(iter(features.values())))
        return tf.data.Dataset.from_tensor_slices(data).batch(batch or n)
    return input_fn


def _sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


X4 = np.array([[0.5, -1.0], [1.0, 2.0], [-2.0, 0.5], [0.0, 1.0]], np.float32)
Y4 = np.array([1, 0, 1, 1], np.int64)
W4 = np.array([1.0, 2.0, 0.5, 3.0], np.float32)


def test_untrained_binary_metrics_with_weights(tmp_path):
    # Zero weights: logits 0, logistic 0.5, class_ids argmax([0, 0]) = 0 for every row.
    est = tf.estimator.LinearClassifier([tf.feature_column.numeric_column("x", (2,))],
                                        model_dir=str(tmp_path), weight_column="w",
                                        config=_cfg())
    r = est.evaluate(_ds({"x": X4, "w": W4}, Y4))
    sw = W4.sum()
    np.testing.assert_allclose(r["accuracy"], (W4 * (Y4 == 0)).sum() / sw, rtol=1e-6)
    np.testing.assert_allclose(r["average_loss"], LOG2, rtol=1e-5)
    np.testing.assert_allclose(r["label/mean"], (W4 * Y4).sum() / sw, rtol=1e-6)
    np.testing.assert_allclose(r["prediction/mean"], 0.5, rtol=1e-6)
    np.testing.assert_allclose(r["accuracy_baseline"], max(r["label/mean"],
                                                           1 - r["label/mean"]), rtol=1e-6)
    # v1 canned heads reduce with SUM: the batch loss is the weighted sum.
    np.testing.assert_allclose(r["loss"], LOG2 * sw, rtol=1e-5)
    assert r["precision"] == 0.0 and r["recall"] == 0.0
    np.testing.assert_allclose(r["auc"], 0.5, atol=1e-3)


def test_untrained_regression_metrics(tmp_path):
    y = np.array([[1.0, -2.0], [3.0, 0.5], [0.0, 4.0], [2.0, 2.0]], np.float32)
    est = tf.estimator.LinearRegressor([tf.feature_column.numeric_column("x", (2,))],
                                       label_dimension=2, model_dir=str(tmp_path),
                                       config=_cfg())
    r = est.evaluate(_ds({"x": X4}, y))
    np.testing.assert_allclose(r["average_loss"], np.mean(y ** 2), rtol=1e-6)
    np.testing.assert_allclose(r["label/mean"], y.mean(), rtol=1e-6)
    np.testing.assert_allclose(r["prediction/mean"], 0.0, atol=1e-7)
    np.testing.assert_allclose(r["loss"], np.sum(y ** 2), rtol=1e-6)


def test_linear_regressor_recovers_least_squares(tmp_path):
    rng = np.random.RandomState(0)
    x = rng.randn(200, 3).astype(np.float32)
    y = (x @ np.array([1.5, -2.0, 0.5]) + 0.7 + 0.1 * rng.randn(200)).astype(np.float32)
    est = tf.estimator.LinearRegressor(
        [tf.feature_column.numeric_column("x", (3,))], model_dir=str(tmp_path),
        optimizer=tf.train.GradientDescentOptimizer(0.002), config=_cfg())
    est.train(lambda: tf.data.Dataset.from_tensor_slices(({"x": x}, y)).repeat().batch(200),
              steps=200)
    a = np.hstack([x, np.ones((200, 1), np.float32)])
    coef = np.linalg.lstsq(a, y, rcond=None)[0]
    np.testing.assert_allclose(est.get_variable_value("linear/linear_model/x/weights")[:, 0],
                               coef[:3], atol=2e-3)
    np.testing.assert_allclose(est.get_variable_value("linear/linear_model/bias_weights"),
                               coef[3:], atol=2e-3)
    preds = np.array([p["predictions"][0] for p in est.predict(_ds({"x": x[:5]}))])
    np.testing.assert_allclose(preds, a[:5] @ coef, atol=1e-2)


def test_linear_classifier_breast_cancer_metrics_match_formulas(tmp_path):
    (xtr, ytr), (xte, yte) = load_breast_cancer()
    mu, sd = xtr.mean(0), xtr.std(0) + 1e-6
    xtr, xte = ((xtr - mu) / sd).astype(np.float32), ((xte - mu) / sd).astype(np.float32)
    est = tf.estimator.LinearClassifier([tf.feature_column.numeric_column("x", (30,))],
                                        model_dir=str(tmp_path), config=_cfg())
    est.train(lambda: tf.data.Dataset.from_tensor_slices(
        ({"x": xtr}, ytr.astype(np.int64))).shuffle(500, seed=1).repeat().batch(32),
        steps=200)
    r = est.evaluate(_ds({"x": xte}, yte.astype(np.int64)))
    preds = list(est.predict(_ds({"x": xte})))
    assert set(preds[0]) == {"logits", "logistic", "probabilities", "class_ids", "classes",
                             "all_class_ids", "all_classes"}
    z = np.array([p["logits"][0] for p in preds], np.float64)
    p = _sigmoid(z)
    c = (z > 0).astype(np.int64)
    y = yte.astype(np.float64)
    tp = np.sum((c == 1) & (y == 1))
    np.testing.assert_allclose(r["accuracy"], np.mean(c == y), rtol=1e-5)
    ce = np.maximum(z, 0) - z * y + np.log1p(np.exp(-np.abs(z)))
    np.testing.assert_allclose(r["average_loss"], ce.mean(), rtol=1e-4)
    np.testing.assert_allclose(r["label/mean"], y.mean(), rtol=1e-6)
    np.testing.assert_allclose(r["prediction/mean"], p.mean(), rtol=1e-4)
    np.testing.assert_allclose(r["precision"], tp / c.sum(), rtol=1e-5)
    np.testing.assert_allclose(r["recall"], tp / y.sum(), rtol=1e-5)
    np.testing.assert_allclose(r["accuracy_baseline"], max(y.mean(), 1 - y.mean()),
                               rtol=1e-6)
    assert r["accuracy"] >= 0.93 and r["accuracy"] > r["accuracy_baseline"] + 0.2
    assert r["auc"] > 0.95 and r["auc_precision_recall"] > 0.95
    np.testing.assert_allclose([q["probabilities"][1] for q in preds], p, rtol=1e-4)
    # TF 1.15's names, Ftrl's two slots (accumulator, linear) included.
    assert est.get_variable_names() == [
        "global_step", "linear/linear_model/bias_weights",
        "linear/linear_model/bias_weights/Ftrl", "linear/linear_model/bias_weights/Ftrl_1",
        "linear/linear_model/x/weights", "linear/linear_model/x/weights/Ftrl",
        "linear/linear_model/x/weights/Ftrl_1"]


def test_label_vocabulary_binary_and_multiclass(tmp_path):
    labels = np.array([b"pos", b"neg", b"pos", b"pos"])
    est = tf.estimator.BaselineClassifier(model_dir=str(tmp_path / "b"),
                                          label_vocabulary=["neg", "pos"], config=_cfg())
    est.train(_ds({"x": X4}, labels), steps=1)
    r = est.evaluate(_ds({"x": X4}, labels))
    np.testing.assert_allclose(r["label/mean"], 0.75, rtol=1e-6)
    pred = next(est.predict(_ds({"x": X4})))
    assert pred["classes"][0] == b"pos"  # one step moves the bias towards the prior
    assert list(pred["all_classes"]) == [b"neg", b"pos"]
    assert est.get_variable_value("baseline/bias").shape == (1,)

    y3 = np.array([b"c", b"a", b"b", b"c"])
    est3 = tf.estimator.LinearClassifier(
        [tf.feature_column.numeric_column("x", (2,))], n_classes=3,
        label_vocabulary=("a", "b", "c"), model_dir=str(tmp_path / "m"), config=_cfg())
    r3 = est3.evaluate(_ds({"x": X4}, y3))
    np.testing.assert_allclose(r3["average_loss"], np.log(3.0), rtol=1e-5)
    np.testing.assert_allclose(r3["accuracy"], 0.25, rtol=1e-6)  # argmax of ties -> "a"
    with pytest.raises(ValueError, match="Labels dtype should be string"):
        est3.evaluate(_ds({"x": X4}, Y4))
    with pytest.raises(ValueError, match="label_vocabulary should be a list or a tuple"):
        tf.estimator.LinearClassifier([tf.feature_column.numeric_column("x")],
                                      n_classes=3, label_vocabulary="abc")


def test_weight_column_changes_the_trained_baseline(tmp_path):
    # The regression baseline learns the weighted label mean.
    y = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    w = np.array([1.0, 0.0, 0.0, 3.0], np.float32)
    est = tf.estimator.BaselineRegressor(
        model_dir=str(tmp_path), weight_column="w", config=_cfg(),
        optimizer=tf.train.GradientDescentOptimizer(0.1))
    est.train(lambda: tf.data.Dataset.from_tensor_slices(
        ({"x": X4[:, 0], "w": w}, y)).repeat().batch(4), steps=100)
    np.testing.assert_allclose(est.get_variable_value("baseline/bias"),
                               [(w * y).sum() / w.sum()], rtol=1e-3)


def test_dnn_linear_combined_and_batch_norm_variable_names(tmp_path):
    x = X4
    cols = [tf.feature_column.numeric_column("x", (2,))]
    est = tf.estimator.DNNLinearCombinedClassifier(
        model_dir=str(tmp_path / "c"), linear_feature_columns=cols,
        dnn_feature_columns=cols, dnn_hidden_units=[3], config=_cfg())
    est.train(lambda: tf.data.Dataset.from_tensor_slices(({"x": x}, Y4)).repeat().batch(4),
              steps=2)
    names = set(est.get_variable_names())
    assert {"dnn/hiddenlayer_0/kernel", "dnn/hiddenlayer_0/bias", "dnn/logits/kernel",
            "dnn/logits/bias", "linear/linear_model/x/weights",
            "linear/linear_model/bias_weights", "global_step"} <= names
    assert est.get_variable_value("global_step") == 2  # one step per train op
    reg = tf.estimator.DNNRegressor([4], cols, model_dir=str(tmp_path / "r"),
                                    batch_norm=True, dropout=0.1, config=_cfg())
    reg.train(_ds({"x": x}, W4), steps=2)
    names = set(reg.get_variable_names())
    assert {"dnn/hiddenlayer_0/batchnorm_0/gamma", "dnn/hiddenlayer_0/batchnorm_0/beta",
            "dnn/hiddenlayer_0/batchnorm_0/moving_mean",
            "dnn/hiddenlayer_0/batchnorm_0/moving_variance"} <= names
    # TRAIN ran the batch-norm update ops: the moving mean left its zero start.
    assert np.any(reg.get_variable_value("dnn/hiddenlayer_0/batchnorm_0/moving_mean") != 0)


def test_tf_errors(tmp_path):
    col = tf.feature_column.numeric_column("x", (2,))
    with pytest.raises(ValueError, match=r"n_classes must be > 2: 1\."):
        tf.estimator.DNNClassifier([2], [col], n_classes=1)
    with pytest.raises(ValueError, match="Items of feature_columns must be a"):
        tf.estimator.LinearClassifier(["x"])
    with pytest.raises(ValueError, match="Unsupported optimizer name: Sgd"):
        est = tf.estimator.LinearRegressor([col], optimizer="Sgd",
                                           model_dir=str(tmp_path / "o"))
        est.train(_ds({"x": X4}, W4), steps=1)
    with pytest.raises(ValueError, match="Either linear_feature_columns or "
                                         "dnn_feature_columns must be defined."):
        tf.estimator.DNNLinearCombinedRegressor()
    with pytest.raises(ValueError, match="dnn_hidden_units must be defined"):
        tf.estimator.DNNLinearCombinedRegressor(dnn_feature_columns=[col])
    with pytest.raises(ValueError, match="Invalid loss_reduction: none"):
        tf.estimator.LinearRegressor([col], loss_reduction=tf.losses.Reduction.NONE)
    est = tf.estimator.LinearClassifier([col], n_classes=3, model_dir=str(tmp_path / "m"))
    with pytest.raises(tf.errors.InvalidArgumentError, match="Labels must <= n_classes - 1"):
        est.train(_ds({"x": X4}, np.array([0, 1, 5, 2], np.int64)), steps=1)
    with pytest.raises(ValueError, match="Labels dtype should be integer"):
        est.train(_ds({"x": X4}, W4), steps=1)
    with pytest.raises(ValueError, match="features should be a dictionary"):
        est.train(lambda: (tf.constant(X4), tf.constant(Y4)), steps=1)
    with pytest.raises(ValueError, match="Mismatched label shape"):
        est.train(_ds({"x": X4}, np.zeros((4, 3), np.int64)), steps=1)


def test_optimizer_names_and_defaults():
    from tensorflux._src.estimator.canned import optimizers
    for name, cls in [("Adagrad", tf.train.AdagradOptimizer), ("Adam", tf.train.AdamOptimizer),
                      ("Ftrl", tf.train.FtrlOptimizer), ("RMSProp", tf.train.RMSPropOptimizer),
                      ("SGD", tf.train.GradientDescentOptimizer)]:
        assert type(optimizers.get_optimizer_instance(name, 0.1)) is cls
    opt = tf.train.AdamOptimizer(0.5)
    assert optimizers.get_optimizer_instance(opt) is opt
    assert optimizers.get_optimizer_instance(lambda: opt) is opt
    with pytest.raises(ValueError, match="learning_rate must be specified"):
        optimizers.get_optimizer_instance("Adam")
    with pytest.raises(ValueError, match="The given object is not an Optimizer instance"):
        optimizers.get_optimizer_instance(3)
