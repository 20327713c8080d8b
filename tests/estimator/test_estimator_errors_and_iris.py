"""TF's errors for bad EstimatorSpecs / input_fns / checkpoints, RunConfig, and the
iris tutorial shape (feature columns + a hand-written DNN model_fn)."""

import numpy as np
import pytest

import tensorflux as tf
from tensorflux.datasets import load_iris

ModeKeys = tf.estimator.ModeKeys


def test_mode_keys():
    assert (ModeKeys.TRAIN, ModeKeys.EVAL, ModeKeys.PREDICT) == ("train", "eval", "infer")


def test_estimator_spec_errors():
    with tf.Graph().as_default():
        loss = tf.constant(1.0)
        with pytest.raises(ValueError, match="^Missing loss.$"):
            tf.estimator.EstimatorSpec(ModeKeys.EVAL)
        with pytest.raises(ValueError, match="^Missing train_op.$"):
            tf.estimator.EstimatorSpec(ModeKeys.TRAIN, loss=loss)
        with pytest.raises(ValueError, match="^Missing predictions.$"):
            tf.estimator.EstimatorSpec(ModeKeys.PREDICT)
        with pytest.raises(ValueError, match="Loss must be scalar"):
            tf.estimator.EstimatorSpec(ModeKeys.EVAL, loss=tf.constant([1.0, 2.0]))
        with pytest.raises(TypeError, match=r"Values of eval_metric_ops must be "
                           r"\(metric_value, update_op\) tuples, given: .* for key: acc"):
            tf.estimator.EstimatorSpec(ModeKeys.EVAL, loss=loss, eval_metric_ops={"acc": loss})
        spec = tf.estimator.EstimatorSpec(ModeKeys.PREDICT, predictions={"p": loss})
        assert set(spec.export_outputs) == {"serving_default"}
        with pytest.raises(ValueError, match="mode of EstimatorSpec cannot be changed."):
            spec._replace(mode=ModeKeys.TRAIN)
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="must be from the default graph"):
            tf.estimator.EstimatorSpec(ModeKeys.EVAL, loss=loss)


def test_model_fn_and_input_fn_errors(tmp_path):
    with pytest.raises(ValueError, match="must include features argument"):
        tf.estimator.Estimator(lambda x, labels: None)
    with pytest.raises(ValueError, match="does not include params argument"):
        tf.estimator.Estimator(lambda features, labels: None, params={"a": 1})

    def model_fn(features, labels, mode):
        return "not a spec"
    est = tf.estimator.Estimator(model_fn, model_dir=str(tmp_path))
    with pytest.raises(ValueError, match="input_fn should return \\(features, labels\\) "
                       "as a len 2 tuple."):
        est.train(lambda: (tf.constant([1.0]), tf.constant([1.0]), tf.constant(2)), steps=1)
    with pytest.raises(ValueError, match="model_fn should return an EstimatorSpec"):
        est.train(lambda: (tf.constant([1.0]), tf.constant([1.0])), steps=1)


def _model_fn_with(var_shape):
    def model_fn(features, labels, mode):
        w = tf.get_variable("w", var_shape)
        loss = tf.reduce_sum(w) * tf.reduce_sum(features)
        train_op = tf.assign_add(tf.train.get_global_step(), 1)
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)
    return model_fn


def test_incompatible_checkpoint(tmp_path):
    def input_fn():
        return tf.constant([[1.0]]), tf.constant([[1.0]])
    tf.estimator.Estimator(_model_fn_with([2]), model_dir=str(tmp_path)).train(input_fn,
                                                                                steps=1)
    est = tf.estimator.Estimator(_model_fn_with([3]), model_dir=str(tmp_path))
    with pytest.raises(tf.errors.InvalidArgumentError, match="Restoring from checkpoint "
                       "failed"):
        est.train(input_fn, steps=1)


def test_run_config(monkeypatch):
    c = tf.estimator.RunConfig()
    assert (c.save_checkpoints_secs, c.save_checkpoints_steps, c.save_summary_steps,
            c.keep_checkpoint_max, c.log_step_count_steps) == (600, None, 100, 5, 100)
    assert (c.task_type, c.task_id, c.is_chief, c.num_worker_replicas) == ("worker", 0,
                                                                           True, 1)
    r = c.replace(save_checkpoints_steps=7)
    assert (r.save_checkpoints_steps, r.save_checkpoints_secs) == (7, None)
    with pytest.raises(ValueError, match="Can not provide both save_checkpoints_steps"):
        tf.estimator.RunConfig(save_checkpoints_steps=1, save_checkpoints_secs=1)
    with pytest.raises(ValueError, match="Replacing cluster_spec is not supported"):
        c.replace(cluster_spec=None)
    monkeypatch.setenv("TF_CONFIG", '{"cluster": {"chief": ["c:1"], "worker": ["w0:1", '
                       '"w1:1"], "ps": ["p:1"]}, "task": {"type": "worker", "index": 1}}')
    c = tf.estimator.RunConfig()
    assert (c.task_type, c.task_id, c.is_chief, c.num_worker_replicas,
            c.num_ps_replicas, c.master, c.global_id_in_cluster) == (
        "worker", 1, False, 3, 1, "grpc://w1:1", 2)
    assert c.cluster_spec.as_dict()["worker"] == ["w0:1", "w1:1"]


def iris_model_fn(features, labels, mode, params):
    cols = [tf.feature_column.numeric_column(k) for k in params["keys"]]
    net = tf.feature_column.input_layer(features, cols)
    for units in params["hidden"]:
        net = tf.layers.dense(net, units, activation=tf.nn.relu)
    logits = tf.layers.dense(net, 3)
    classes = tf.argmax(logits, 1)
    if mode == ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions={
            "class_ids": classes, "probabilities": tf.nn.softmax(logits)})
    loss = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
    metrics = {"accuracy": tf.metrics.accuracy(labels, classes)}
    if mode == ModeKeys.EVAL:
        return tf.estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops=metrics)
    train_op = tf.train.AdamOptimizer(0.05).minimize(loss, tf.train.get_global_step())
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def test_iris_dnn_with_feature_columns(tmp_path):
    (xtr, ytr), (xte, yte) = load_iris()
    keys = ["sl", "sw", "pl", "pw"]

    def feats(x):
        return {k: x[:, i] for i, k in enumerate(keys)}
    est = tf.estimator.Estimator(
        iris_model_fn, model_dir=str(tmp_path), params={"keys": keys, "hidden": [10, 10]},
        config=tf.estimator.RunConfig(tf_random_seed=1, save_checkpoints_steps=200))
    est.train(lambda: tf.data.Dataset.from_tensor_slices((feats(xtr), ytr)).shuffle(
        120, seed=1).repeat().batch(32), steps=200)
    result = est.evaluate(lambda: tf.data.Dataset.from_tensor_slices(
        (feats(xte), yte)).batch(30))
    preds = np.array([p["class_ids"] for p in est.predict(
        lambda: tf.data.Dataset.from_tensor_slices(feats(xte)).batch(30))])
    assert result["accuracy"] >= 0.9
    np.testing.assert_allclose(result["accuracy"], np.mean(preds == yte), rtol=1e-6)
