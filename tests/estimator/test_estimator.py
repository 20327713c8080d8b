"""tf.estimator core against NumPy expectations written here."""

import os

import numpy as np
import pytest

import tensorflux as tf

RNG = np.random.default_rng(0)
X = RNG.normal(size=(64, 3)).astype(np.float32)
TRUE_W = np.array([[1.5], [-2.0], [0.5]], np.float32)
Y = (X @ TRUE_W + 0.3 + 0.01 * RNG.normal(size=(64, 1))).astype(np.float32)


def linear_model_fn(features, labels, mode, params):
    x = features["x"]
    w = tf.get_variable("w", [3, 1], initializer=tf.zeros_initializer())
    b = tf.get_variable("b", [1], initializer=tf.zeros_initializer())
    pred = tf.matmul(x, w) + b
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions={"y": pred, "x": x})
    loss = tf.reduce_mean(tf.square(pred - labels))
    opt = tf.train.GradientDescentOptimizer(params["lr"])
    train_op = opt.minimize(loss, global_step=tf.train.get_global_step())
    metrics = {"mae": tf.metrics.mean_absolute_error(labels, pred)}
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op,
                                      eval_metric_ops=metrics)


def train_input_fn():
    return tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).repeat().batch(64)


def eval_input_fn():
    return tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).batch(16)


def _est(tmp_path, **cfg):
    config = tf.estimator.RunConfig(save_checkpoints_steps=cfg.pop("ckpt", 50),
                                    log_step_count_steps=50, **cfg)
    return tf.estimator.Estimator(linear_model_fn, model_dir=str(tmp_path / "m"),
                                  config=config, params={"lr": 0.1})


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    est = _est(tmp_path_factory.mktemp("lin"))
    est.train(train_input_fn, steps=300)
    return est


def test_converges_to_least_squares(trained):
    a = np.hstack([X, np.ones((64, 1), np.float32)])
    sol, *_ = np.linalg.lstsq(a.astype(np.float64), Y.astype(np.float64), rcond=None)
    np.testing.assert_allclose(trained.get_variable_value("w"), sol[:3], atol=1e-3)
    np.testing.assert_allclose(trained.get_variable_value("b"), sol[3], atol=1e-3)
    assert set(trained.get_variable_names()) >= {"w", "b", "global_step"}


def test_tf1_file_layout(trained):
    d = trained.model_dir
    files = os.listdir(d)
    assert "checkpoint" in files and "graph.pbtxt" in files
    assert any(f.startswith("events.out.tfevents.") for f in files)
    assert trained.latest_checkpoint().endswith("model.ckpt-300")
    assert os.path.exists(trained.latest_checkpoint() + ".index")
    # keep_checkpoint_max=5 (default): steps 0..300 every 50 -> the last 5 remain.
    kept = sorted(f for f in files if f.endswith(".index"))
    assert len(kept) == 5


def test_evaluate_matches_numpy(trained):
    result = trained.evaluate(eval_input_fn, name="val")
    w, b = trained.get_variable_value("w"), trained.get_variable_value("b")
    pred = X @ w + b
    assert result["global_step"] == 300
    np.testing.assert_allclose(result["mae"], np.mean(np.abs(pred - Y)), rtol=1e-4)
    # loss is the mean of the per-batch losses (4 equal batches of 16).
    batch_losses = [np.mean((pred[i:i + 16] - Y[i:i + 16]) ** 2) for i in range(0, 64, 16)]
    np.testing.assert_allclose(result["loss"], np.mean(batch_losses), rtol=1e-4)
    eval_dir = os.path.join(trained.model_dir, "eval_val")
    assert any(f.startswith("events.out.tfevents.") for f in os.listdir(eval_dir))
    short = trained.evaluate(eval_input_fn, steps=1)
    np.testing.assert_allclose(short["mae"], np.mean(np.abs(pred[:16] - Y[:16])), rtol=1e-4)


def test_predict_per_example(trained):
    w, b = trained.get_variable_value("w"), trained.get_variable_value("b")
    preds = list(trained.predict(lambda: tf.data.Dataset.from_tensor_slices(
        {"x": X[:10]}).batch(4)))
    assert len(preds) == 10 and set(preds[0]) == {"y", "x"}
    np.testing.assert_allclose(np.stack([p["y"] for p in preds]), X[:10] @ w + b, rtol=1e-5)
    only = list(trained.predict(lambda: tf.data.Dataset.from_tensor_slices(
        {"x": X[:3]}).batch(3), predict_keys=["y"], yield_single_examples=False))
    assert len(only) == 1 and set(only[0]) == {"y"} and only[0]["y"].shape == (3, 1)
    with pytest.raises(ValueError, match="Expected to run at least one output"):
        list(trained.predict(lambda: {"x": tf.constant(X[:2])}, predict_keys=["nope"]))


def test_export_and_load(trained, tmp_path):
    fn = tf.estimator.export.build_raw_serving_input_receiver_fn(
        {"x": tf.placeholder(tf.float32, [None, 3], name="x")})
    path = trained.export_saved_model(str(tmp_path / "exp"), fn)
    assert isinstance(path, bytes) and os.path.basename(path).isdigit()
    from tensorflux.serving import load_servable
    servable = load_servable(path.decode())
    assert "serving_default" in servable.signatures
    out = servable.run("serving_default", {"x": X[:5]})
    w, b = trained.get_variable_value("w"), trained.get_variable_value("b")
    np.testing.assert_allclose(out["y"], X[:5] @ w + b, rtol=1e-5)
    servable.close()


def test_resume_and_max_steps(tmp_path):
    est = _est(tmp_path)
    est.train(train_input_fn, steps=20)
    assert est.get_variable_value("global_step") == 20
    est.train(train_input_fn, steps=10)  # resumes: global step continues
    assert est.get_variable_value("global_step") == 30
    est.train(train_input_fn, max_steps=25)  # already past: returns at once
    assert est.get_variable_value("global_step") == 30
    est.train(train_input_fn, max_steps=40)
    assert est.get_variable_value("global_step") == 40
    with pytest.raises(ValueError, match="Can not provide both steps and max_steps."):
        est.train(train_input_fn, steps=1, max_steps=2)
    with pytest.raises(ValueError, match=r"Must specify steps > 0, given: 0"):
        est.train(train_input_fn, steps=0)


def test_train_and_evaluate_with_exporters(tmp_path):
    est = _est(tmp_path, ckpt=10)
    fn = tf.estimator.export.build_raw_serving_input_receiver_fn(
        {"x": tf.placeholder(tf.float32, [None, 3], name="x")})
    exporters = [tf.estimator.export.LatestExporter("latest", fn, exports_to_keep=1),
                 tf.estimator.export.FinalExporter("final", fn)]
    result, exports = tf.estimator.train_and_evaluate(
        est, tf.estimator.TrainSpec(train_input_fn, max_steps=30),
        tf.estimator.EvalSpec(eval_input_fn, steps=None, exporters=exporters,
                              throttle_secs=0))
    assert result["global_step"] == 30 and "mae" in result
    assert len(exports) == 2 and all(isinstance(p, bytes) for p in exports)
    assert len(os.listdir(os.path.join(est.model_dir, "export", "latest"))) == 1
