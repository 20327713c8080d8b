"""tf.estimator.train_and_evaluate in a TF_CONFIG cluster (chief + workers + ps +
evaluator), on the parameter-server machinery (Ray actors), against one process.

The classifier is a small MLP on the built-in breast-cancer data (456 train / 113 test
rows, standardized here with the training rows' mean and std), trained with Adam on an
exponentially decaying learning rate read from the global step, so the ps tasks must
run the model_fn's own optimizer and schedule. The expectations are independent of
tensorflux: NumPy's forward pass of the checkpointed weights, SGD/Momentum formulas,
TF 1.15's error messages.
"""

import glob
import json
import os
import threading
import warnings

import numpy as np
import pytest

import tensorflux as tf
from tensorflux import datasets

(_XTR, YTR), (_XTE, YTE) = datasets.load_breast_cancer()
_MU, _SD = _XTR.mean(0), _XTR.std(0)
XTR = ((_XTR - _MU) / _SD).astype(np.float32)
XTE = ((_XTE - _MU) / _SD).astype(np.float32)
MAX_STEPS = 300
CLUSTER = {"chief": ["localhost:2220"], "worker": ["localhost:2221", "localhost:2222"],
           "ps": ["localhost:2223"]}


def mlp_model_fn(features, labels, mode, params):
    net = tf.layers.dense(features["x"], 16, activation=tf.nn.relu)
    logits = tf.layers.dense(net, 2)
    classes = tf.argmax(logits, 1)
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions={"class_ids": classes})
    loss = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
    if mode == tf.estimator.ModeKeys.EVAL:
        return tf.estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops={
            "accuracy": tf.metrics.accuracy(labels, classes)})
    step = tf.train.get_global_step()
    lr = tf.train.exponential_decay(0.01, step, 100, 0.9)
    train_op = tf.train.AdamOptimizer(lr).minimize(loss, global_step=step)
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def train_input_fn(config):
    """Each training replica reads its own shard (TF's global ids: chief 0, workers 1..)."""
    ds = tf.data.Dataset.from_tensor_slices(({"x": XTR}, YTR))
    ds = ds.shard(config.num_worker_replicas, config.global_id_in_cluster)
    return ds.shuffle(500, seed=1).repeat().batch(32)


def eval_input_fn():
    return tf.data.Dataset.from_tensor_slices(({"x": XTE}, YTE)).batch(200)


def np_accuracy(checkpoint):
    """The test accuracy of the checkpointed MLP, computed in NumPy."""
    r = tf.train.NewCheckpointReader(checkpoint)
    h = np.maximum(XTE @ r.get_tensor("dense/kernel") + r.get_tensor("dense/bias"), 0)
    logits = h @ r.get_tensor("dense_1/kernel") + r.get_tensor("dense_1/bias")
    return float(np.mean(np.argmax(logits, 1) == YTE))


def _estimator(monkeypatch, model_dir, task=None, model_fn=mlp_model_fn, **config):
    """An Estimator whose RunConfig read TF_CONFIG for `task` (None: no cluster)."""
    if task is None:
        monkeypatch.delenv("TF_CONFIG", raising=False)
    else:
        monkeypatch.setenv("TF_CONFIG", json.dumps({"cluster": CLUSTER, "task": task}))
    cfg = tf.estimator.RunConfig(model_dir=str(model_dir), tf_random_seed=1,
                                 save_checkpoints_steps=100, **config)
    monkeypatch.delenv("TF_CONFIG", raising=False)
    return tf.estimator.Estimator(model_fn, config=cfg)


def _specs(throttle_secs=0):
    return (tf.estimator.TrainSpec(train_input_fn, max_steps=MAX_STEPS),
            tf.estimator.EvalSpec(eval_input_fn, steps=None, start_delay_secs=0,
                                  throttle_secs=throttle_secs))


def _scalars(directory, tag):
    found = {}
    for path in glob.glob(os.path.join(directory, "events.out.tfevents.*")):
        for event in tf.train.summary_iterator(path):
            for value in event.summary.value:
                if value.tag == tag:
                    found[event.step] = value.simple_value
    return found


@pytest.fixture(scope="module")
def ray_instance():
    ray = pytest.importorskip("ray")
    with warnings.catch_warnings():  # JAX warns of Ray's fork+exec of its processes
        warnings.simplefilter("ignore", RuntimeWarning)
        ray.init(num_cpus=4, include_dashboard=False, log_to_driver=False,
                 configure_logging=False)
    yield ray
    ray.shutdown()


# -- the cluster against one process ---------------------------------------------------------
def test_chief_workers_ps_evaluator_train_as_one_process(tmp_path, monkeypatch, ray_instance):
    # One process: the reference accuracy.
    local = _estimator(monkeypatch, tmp_path / "local")
    local_result, _ = tf.estimator.train_and_evaluate(local, *_specs())
    assert local_result["global_step"] == MAX_STEPS

    # The cluster: every task calls train_and_evaluate with its own TF_CONFIG (threads of
    # this process here; the chief's job runs the replicas and the ps as Ray actors).
    model_dir = tmp_path / "cluster"
    roles = [{"type": "worker", "index": 0}, {"type": "worker", "index": 1},
             {"type": "ps", "index": 0}, {"type": "evaluator", "index": 0}]
    estimators = [_estimator(monkeypatch, model_dir, task) for task in roles]
    chief = _estimator(monkeypatch, model_dir, {"type": "chief", "index": 0})
    assert (chief.config.num_ps_replicas, chief.config.num_worker_replicas) == (1, 3)
    returned, errors = {}, []

    def run(est):
        try:
            returned[est.config.task_type, est.config.task_id] = \
                tf.estimator.train_and_evaluate(est, *_specs(throttle_secs=1))
        except Exception as exc:  # noqa: BLE001 - reported by the main thread
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(est,), daemon=True) for est in estimators]
    for t in threads:
        t.start()
    assert tf.estimator.train_and_evaluate(chief, *_specs()) is None
    for t in threads:
        t.join(timeout=120)
    assert not errors, errors
    assert all(not t.is_alive() for t in threads)
    assert returned == {("worker", 0): None, ("worker", 1): None, ("ps", 0): None,
                        ("evaluator", 0): None}

    # The chief's model_dir: TF's layout, read by a fresh (local) Estimator.
    files = set(os.listdir(model_dir))
    assert {"checkpoint", "graph.pbtxt", "model.ckpt-300.index",
            "model.ckpt-300.data-00000-of-00001", "model.ckpt-100.index"} <= files
    checkpoint = tf.train.latest_checkpoint(str(model_dir))
    assert checkpoint.endswith("model.ckpt-300")
    reader = tf.train.NewCheckpointReader(checkpoint)
    local_names = {n for n, _ in tf.train.list_variables(local.latest_checkpoint())}
    assert {n for n, _ in tf.train.list_variables(checkpoint)} == local_names
    assert "dense/kernel/Adam" in local_names and "beta1_power" in local_names
    assert reader.get_tensor("global_step") == MAX_STEPS
    # Adam's beta1_power after 300 applied updates: 0.9 ** 301 (it starts at 0.9).
    np.testing.assert_allclose(reader.get_tensor("beta1_power"), 0.9 ** 301, rtol=1e-4)
    fresh = _estimator(monkeypatch, model_dir)
    result = fresh.evaluate(eval_input_fn)
    assert result["global_step"] == MAX_STEPS
    np.testing.assert_allclose(result["accuracy"], np_accuracy(checkpoint), atol=1e-6)
    np.testing.assert_allclose(local_result["accuracy"],
                               np_accuracy(local.latest_checkpoint()), atol=1e-6)
    # Same accuracy as one process: both >= 0.95, within 3 test rows (113 rows).
    print(f"accuracy: cluster {result['accuracy']:.4f}, one process "
          f"{local_result['accuracy']:.4f}")
    assert result["accuracy"] >= 0.95 and local_result["accuracy"] >= 0.95
    assert abs(result["accuracy"] - local_result["accuracy"]) <= 3 / len(YTE) + 1e-6

    # Summaries: the loss every 100 steps; the evaluator's eval/ events reach step 300.
    losses = _scalars(str(model_dir), "loss")
    assert len(losses) >= 2 and max(losses) >= 200
    assert losses[max(losses)] < losses[min(losses)]
    evaluated = _scalars(os.path.join(str(model_dir), "eval"), "accuracy")
    assert MAX_STEPS in evaluated
    np.testing.assert_allclose(evaluated[MAX_STEPS], result["accuracy"], atol=1e-6)

    # Run again: max_steps is reached, so the chief skips training and every task ends.
    assert tf.estimator.train_and_evaluate(chief, *_specs()) is None
    tf.estimator.train_and_evaluate(estimators[0], *_specs())  # a worker returns at once


# -- what the ps tasks and workers build from a model_fn (no Ray) ----------------------------
def clipped_model_fn(features, labels, mode, params):
    w = tf.get_variable("w", [3, 1], initializer=tf.ones_initializer())
    b = tf.get_variable("b", [1], initializer=tf.zeros_initializer())
    loss = tf.reduce_sum(tf.square(tf.matmul(features["x"], w) + b - labels))
    opt = tf.train.MomentumOptimizer(0.1, momentum=0.9)
    grads_and_vars = opt.compute_gradients(loss)
    clipped = [(tf.clip_by_value(g, -1.0, 1.0), v) for g, v in grads_and_vars]
    train_op = opt.apply_gradients(clipped, global_step=tf.train.get_global_step())
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def const_input_fn():
    x = np.array([[1.0, 2.0, 3.0], [0.5, -1.0, 0.0]], np.float32)
    return {"x": tf.constant(x)}, tf.constant([[2.0], [-1.0]])


def test_workers_push_the_model_fns_gradients_and_each_ps_applies_its_shard(
        tmp_path, monkeypatch):
    from tensorflux._src.distribute.ps import model_layout, ps_task

    monkeypatch.setenv("TF_CONFIG", json.dumps({
        "cluster": {"chief": ["c:1"], "ps": ["p0:1", "p1:1"]},
        "task": {"type": "chief", "index": 0}}))
    est = tf.estimator.Estimator(clipped_model_fn, model_dir=str(tmp_path))
    from tensorflux._src.estimator.ps_model_fn import EstimatorPsModel
    model = EstimatorPsModel(est, const_input_fn)
    layout, initial = model_layout.inspect_model(model, num_ps=2)
    # TF's replica_device_setter round-robin: global_step -> ps 0, w -> ps 1, b -> ps 0.
    assert layout.placement == {"global_step": 0, "w": 1, "b": 0}

    # The worker fetches the clipped gradients the model_fn built (not tf.gradients).
    worker = model_layout.ModelGraph(model.for_worker(0, 1))
    with tf.Session(graph=worker.graph) as sess:
        sess.run(tf.variables_initializer(worker.variables))
        g_w, g_b = sess.run([worker.gradients["w"], worker.gradients["b"]])
    x = np.array([[1.0, 2.0, 3.0], [0.5, -1.0, 0.0]])
    residual = x @ np.ones((3, 1)) - np.array([[2.0], [-1.0]])  # b = 0
    np.testing.assert_allclose(g_w, np.clip(2 * x.T @ residual, -1, 1), rtol=1e-6)
    np.testing.assert_allclose(g_b, np.clip(2 * residual.sum(0), -1, 1), rtol=1e-6)

    # ps 1 holds w: the model_fn's Momentum updates w only (its slot w/Momentum), twice.
    ps1 = ps_task.ParameterServerTask(1, layout, model, None, None, None, None, "t")
    assert set(ps1.variables) == {"w"}
    assert set(ps1.saved) == {"w", "w/Momentum"}
    feed_w = ps1.grad_feeds["w"]
    ps1.sess.run(ps1.init)
    ps1.sess.run(ps1.loads["w"][1], {ps1.loads["w"][0]: initial["w"]})
    grads = [np.full((3, 1), 0.5, np.float32), np.full((3, 1), -1.0, np.float32)]
    w, accum = np.ones((3, 1)), np.zeros((3, 1))
    for g in grads:
        ps1.sess.run(ps1.apply, {feed_w: g})
        accum = 0.9 * accum + g
        w = w - 0.1 * accum
    w_ps, step = ps1.sess.run([ps1.variables["w"].read_value(), ps1.read_step])
    np.testing.assert_allclose(w_ps, w, rtol=1e-6)
    assert step == 2
    # ps 0 holds b and the global step (the chief ps).
    ps0 = ps_task.ParameterServerTask(0, layout, model, None, None, None, None, "t")
    assert set(ps0.saved) == {"b", "b/Momentum", "global_step"}


def test_sync_replicas_optimizer_in_a_model_fn_is_refused(tmp_path, monkeypatch):
    def sync_model_fn(features, labels, mode):
        w = tf.get_variable("w", [3, 1])
        loss = tf.reduce_sum(tf.matmul(features["x"], w) - labels)
        opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.1), 2)
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=opt.minimize(
            loss, global_step=tf.train.get_global_step()))

    from tensorflux._src.distribute.ps import model_layout
    from tensorflux._src.estimator.ps_model_fn import EstimatorPsModel
    est = _estimator(monkeypatch, tmp_path, {"type": "chief", "index": 0},
                     model_fn=sync_model_fn)
    with pytest.raises(NotImplementedError, match="asynchronous SGD"):
        model_layout.ModelGraph(EstimatorPsModel(est, const_input_fn))


# -- TF_CONFIG errors, with TF 1.15's messages ----------------------------------------------
@pytest.mark.parametrize("tf_config, message", [
    ({"cluster": {"worker": ["w:1"], "ps": ["p:1"]}, "task": {"type": "worker", "index": 0}},
     'If "cluster" is set in TF_CONFIG, it must have one "chief" node.'),
    ({"cluster": {"chief": ["a:1", "b:1"]}, "task": {"type": "chief", "index": 0}},
     'The "cluster" in TF_CONFIG must have only one "chief" node.'),
    ({"cluster": CLUSTER, "task": {"index": 0}},
     'If "cluster" is set in TF_CONFIG, task type must be set.'),
    ({"cluster": CLUSTER, "task": {"type": "worker"}},
     'If "cluster" is set in TF_CONFIG, task index must be set.'),
    ({"cluster": CLUSTER, "task": {"type": "worker", "index": -1}},
     "Task index must be non-negative number."),
    ({"cluster": CLUSTER, "task": {"type": "worker", "index": 2}},
     "2 is not a valid task_id for task_type worker in the cluster_spec:"),
    ({"cluster": CLUSTER, "task": {"type": "trainer", "index": 0}},
     "trainer is not a valid task_type in the cluster_spec:"),
    ({"cluster": {"master": ["m:1"], "chief": ["c:1"]}, "task": {"type": "master",
                                                                 "index": 0}},
     "If `master` node exists in `cluster`, job `chief` is not supported."),
    ({"cluster": {"master": ["m:1"]}, "task": {"type": "evaluator", "index": 0}},
     "If `master` node exists in `cluster`, task_type `evaluator` is not supported."),
    ({"task": {"type": "ps", "index": 0}},
     'If "cluster" is not set in TF_CONFIG, task type must be WORKER.'),
    ({"task": {"type": "worker", "index": 1}},
     'If "cluster" is not set in TF_CONFIG, task index must be 0.'),
])
def test_invalid_tf_config(monkeypatch, tf_config, message):
    monkeypatch.setenv("TF_CONFIG", json.dumps(tf_config))
    with pytest.raises(ValueError) as info:
        tf.estimator.RunConfig()
    assert str(info.value).startswith(message)


def test_run_config_roles(monkeypatch):
    def config(task, cluster=CLUSTER):
        monkeypatch.setenv("TF_CONFIG", json.dumps({"cluster": cluster, "task": task}))
        return tf.estimator.RunConfig()

    c = config({"type": "chief", "index": 0})
    assert (c.is_chief, c.master, c.num_ps_replicas, c.num_worker_replicas,
            c.global_id_in_cluster) == (True, "grpc://localhost:2220", 1, 3, 0)
    c = config({"type": "ps", "index": 0})
    assert (c.is_chief, c.global_id_in_cluster) == (False, 3)
    c = config({"type": "evaluator", "index": 5})  # outside the training cluster
    assert (c.is_chief, c.cluster_spec.as_dict(), c.num_ps_replicas, c.num_worker_replicas,
            c.master, c.global_id_in_cluster) == (False, {}, 0, 0, "", None)
    c = config({"type": "master", "index": 0}, {"master": ["m:1"], "worker": ["w:1"]})
    assert (c.is_chief, c.num_worker_replicas) == (True, 2)
    c = config({"type": "chief", "index": 0}, {"chief": ["c:1"]})  # one node: local master
    assert (c.master, c.is_chief) == ("", True)


def test_train_and_evaluate_rejects_task_types(tmp_path, monkeypatch):
    specs = _specs()
    for task_type, message in [
            ("local", ("`task.type` in TF_CONFIG cannot be `local`. Leaving `cluster` and "
                       "`task` properties in TF_CONFIG absent triggers train and evaluate "
                       "`Estimator` locally (non-distributed).")),
            ("trainer", ("Task type trainer is not supported. Supported task types are "
                         "['chief', 'evaluator', 'master', 'ps', 'worker']"))]:
        monkeypatch.setenv("TF_CONFIG", json.dumps({
            "cluster": {"chief": ["c:1"], task_type: ["t:1"]},
            "task": {"type": task_type, "index": 0}}))
        est = tf.estimator.Estimator(mlp_model_fn, model_dir=str(tmp_path))
        with pytest.raises(ValueError) as info:
            tf.estimator.train_and_evaluate(est, *specs)
        assert str(info.value) == message
    monkeypatch.setenv("TF_CONFIG", json.dumps({
        "cluster": {"chief": ["c:1"], "worker": ["w:1"]},
        "task": {"type": "chief", "index": 0}}))
    est = tf.estimator.Estimator(mlp_model_fn, model_dir=str(tmp_path))
    with pytest.raises(NotImplementedError, match="no 'ps' job"):
        tf.estimator.train_and_evaluate(est, *specs)


def test_canned_estimators_partitioned_variables_are_saved_under_tfs_names(tmp_path,
                                                                         monkeypatch):
    """With ps tasks, canned estimators partition their variables (TF's
    min_max_variable_partitioner: small ones stay one piece, `.../part_0`); the ps tasks
    save them, and their slots, whole under the full names a local model reads."""
    from tensorflux._src.distribute.ps import model_layout, ps_task
    from tensorflux._src.estimator.ps_model_fn import EstimatorPsModel

    monkeypatch.setenv("TF_CONFIG", json.dumps({"cluster": CLUSTER,
                                                "task": {"type": "chief", "index": 0}}))
    est = tf.estimator.DNNClassifier([4], [tf.feature_column.numeric_column("x", [3])],
                                     n_classes=3, model_dir=str(tmp_path))

    def input_fn():
        return {"x": tf.constant(np.ones((2, 3), np.float32))}, tf.constant([0, 2])

    model = EstimatorPsModel(est, input_fn)
    layout, _ = model_layout.inspect_model(model, num_ps=1)
    assert "dnn/logits/kernel/part_0" in layout.placement
    ps = ps_task.ParameterServerTask(0, layout, model, None, None, None, None, "t")
    assert set(ps.saved) == {
        "global_step", "dnn/hiddenlayer_0/kernel", "dnn/hiddenlayer_0/bias",
        "dnn/logits/kernel", "dnn/logits/bias", "dnn/hiddenlayer_0/kernel/Adagrad",
        "dnn/hiddenlayer_0/bias/Adagrad", "dnn/logits/kernel/Adagrad",
        "dnn/logits/bias/Adagrad"}


def test_launcher_gives_each_estimator_task_its_tf_config():
    from tensorflux.distribute import launch

    tasks = launch.cluster_environments(2, num_ps=1, chief=True, evaluator=True, base={})
    assert [name for name, _ in tasks] == ["chief:0", "worker:0", "worker:1", "ps:0",
                                           "evaluator:0"]
    configs = [json.loads(env["TF_CONFIG"]) for _, env in tasks]
    cluster = configs[0]["cluster"]
    assert {job: len(a) for job, a in cluster.items()} == {"chief": 1, "worker": 2, "ps": 1}
    assert len({a for addresses in cluster.values() for a in addresses}) == 4
    assert all(c["cluster"] == cluster for c in configs)
    assert [c["task"] for c in configs] == [
        {"type": "chief", "index": 0}, {"type": "worker", "index": 0},
        {"type": "worker", "index": 1}, {"type": "ps", "index": 0},
        {"type": "evaluator", "index": 0}]
    with pytest.raises(ValueError, match="expected counts >= 0"):
        launch.cluster_environments(0, num_ps=1, chief=False)
