"""BoostedTreesClassifier / BoostedTreesRegressor (TF 1.15 semantics)."""

import numpy as np
import pytest

import tensorflux as tf
from tensorflux import datasets


def _input(x, y, keys, epochs=None):
    def fn():
        feats = {k: x[:, i].astype(np.float32) for i, k in enumerate(keys)}
        d = tf.data.Dataset.from_tensors((feats, y.astype(np.float32).reshape(-1, 1)))
        return d.repeat(epochs)
    return fn


def _predict_input(x, keys):
    def fn():
        return tf.data.Dataset.from_tensors(
            {k: x[:, i].astype(np.float32) for i, k in enumerate(keys)})
    return fn


@pytest.fixture(scope="module")
def cancer():
    (xtr, ytr), (xte, yte) = datasets.load_breast_cancer()
    keys = [f"f{i:02d}" for i in range(xtr.shape[1])]
    return xtr, ytr, xte, yte, keys


def test_breast_cancer_accuracy_checkpoint_resume_export(cancer, tmp_path):
    xtr, ytr, xte, yte, keys = cancer
    cols = [tf.feature_column.numeric_column(k) for k in keys]
    kw = {"n_batches_per_layer": 1, "n_trees": 20, "max_depth": 3, "learning_rate": 0.3,
          "model_dir": str(tmp_path / "m")}
    est = tf.estimator.BoostedTreesClassifier(cols, **kw)
    est.train(_input(xtr, ytr, keys), max_steps=31)  # 1 quantile step + 10 trees
    assert est.get_variable_value("boosted_trees/num_finalized_trees") == 10
    half = est.evaluate(_input(xtr, ytr, keys, 1))
    # Resume from the checkpoint in a fresh estimator; training stops when all
    # 20 trees are grown even though max_steps allows more.
    est = tf.estimator.BoostedTreesClassifier(cols, **kw)
    est.train(_input(xtr, ytr, keys), max_steps=1000)
    assert est.get_variable_value("boosted_trees/num_finalized_trees") == 20
    assert list(est.get_variable_value("boosted_trees/tree_depth")) == [3] * 20
    result = est.evaluate(_input(xte, yte, keys, 1))
    assert result["accuracy"] >= 0.94
    assert est.evaluate(_input(xtr, ytr, keys, 1))["average_loss"] < half["average_loss"]
    for key in ("auc", "precision", "recall", "accuracy_baseline", "label/mean",
                "prediction/mean", "loss"):
        assert key in result
    preds = list(est.predict(_predict_input(xte, keys)))
    probs = np.array([p["logistic"][0] for p in preds])
    np.testing.assert_allclose(result["accuracy"],
                               np.mean((probs > 0.5).astype(int) == yte), rtol=1e-6)

    receiver = tf.estimator.export.build_raw_serving_input_receiver_fn(
        {k: tf.placeholder(tf.float32, [None], name=k) for k in keys})
    path = est.export_saved_model(str(tmp_path / "exp"), receiver).decode()
    from tensorflux.serving import load_servable
    servable = load_servable(path)
    out = servable.run("predict", {k: xte[:, i].astype(np.float32)
                                   for i, k in enumerate(keys)})
    np.testing.assert_allclose(out["logistic"][:, 0], probs, rtol=1e-5, atol=1e-6)
    servable.close()


def test_one_split_leaf_values_are_newton_steps(tmp_path):
    # x in two buckets (boundary 2.5); one tree of depth 1 splits there.
    x = np.array([[1.0], [2.0], [3.0], [4.0]], np.float32)
    y = np.array([1.0, 2.0, 5.0, 7.0], np.float32)
    l2, lr = 1.0, 0.1
    col = tf.feature_column.bucketized_column(tf.feature_column.numeric_column("x"), [2.5])
    est = tf.estimator.BoostedTreesRegressor(
        [col], n_batches_per_layer=1, n_trees=1, max_depth=1, learning_rate=lr,
        l2_regularization=l2, model_dir=str(tmp_path))
    est.train(_input(x, y, ["x"]), max_steps=10)
    # Squared error averaged over the batch (TF's SUM_OVER_BATCH_SIZE head), at f = 0:
    g = 2.0 * (0.0 - y) / len(y)
    h = np.full_like(y, 2.0 / len(y))
    left, right = x[:, 0] < 2.5, x[:, 0] >= 2.5
    expect = [-g[m].sum() / (h[m].sum() + l2) * lr for m in (left, right)]
    preds = np.array([p["predictions"][0] for p in est.predict(_predict_input(x, ["x"]))])
    np.testing.assert_allclose(preds, [expect[0]] * 2 + [expect[1]] * 2, rtol=1e-5)
    values = est.get_variable_value("boosted_trees/node_value")
    np.testing.assert_allclose(values[0, 1:3], expect, rtol=1e-5)


def test_l1_and_min_node_weight():
    import tensorflux._src.estimator.canned.boosted_trees_math as btm
    w, gain = btm.weight_and_gain(np.array([-3.0, 0.5]), np.array([1.0, 1.0]), 1.0, 1.0)
    np.testing.assert_allclose(w, [1.0, 0.0])   # G soft-thresholded by l1
    np.testing.assert_allclose(gain, [2.0, 0.0])


def test_bad_arguments():
    col = tf.feature_column.numeric_column("x")
    with pytest.raises(ValueError, match="n_batches_per_layer"):
        tf.estimator.BoostedTreesClassifier([col], n_batches_per_layer=0)
    with pytest.raises(ValueError, match="only binary classification is supported"):
        tf.estimator.BoostedTreesClassifier([col], n_batches_per_layer=1, n_classes=3)
    with pytest.raises(ValueError, match="only 1 dimension regression"):
        tf.estimator.BoostedTreesRegressor([col], n_batches_per_layer=1, label_dimension=2)
    emb = tf.feature_column.embedding_column(
        tf.feature_column.categorical_column_with_identity("c", 4), 2)
    with pytest.raises(ValueError, match="is supported but got"):
        tf.estimator.BoostedTreesClassifier([emb], n_batches_per_layer=1)
    with pytest.raises(ValueError, match="pruning_mode"):
        tf.estimator.BoostedTreesClassifier([col], n_batches_per_layer=1,
                                            pruning_mode="bad")


def test_pruning_needs_tree_complexity(tmp_path):
    x = np.array([[1.0], [2.0]], np.float32)
    y = np.array([0.0, 1.0], np.float32)
    col = tf.feature_column.numeric_column("x")
    est = tf.estimator.BoostedTreesClassifier([col], n_batches_per_layer=1, n_trees=1,
                                              pruning_mode="pre", model_dir=str(tmp_path))
    with pytest.raises(ValueError, match="tree_complexity must be positive"):
        est.train(_input(x, y, ["x"]), max_steps=1)
