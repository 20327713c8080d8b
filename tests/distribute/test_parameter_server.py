"""Parameter-server training on Ray: async and sync SGD, backup workers, restarts.

The model is softmax regression on the built-in digits (64 inputs, 10 classes) with
zero initial weights, so the loss starts at ln(10); every expectation is computed here
with NumPy (the loss of the trained weights, one SGD step from averaged gradients,
Adam's and Momentum's update formulas). One local Ray instance serves the module.
"""

import asyncio
import glob
import os
import sys
import threading
import time
import warnings

import numpy as np
import pytest

import tensorflux as tf
from tensorflux import datasets

LN10 = float(np.log(10.0))
(_X, _Y), _ = datasets.load_digits()
X = (_X.reshape(len(_X), -1) / 16.0).astype(np.float32)  # (1438, 64)
Y = _Y.astype(np.int64)


@pytest.fixture(scope="module")
def ray_instance():
    ray = pytest.importorskip("ray")
    with warnings.catch_warnings():  # JAX warns of Ray's fork+exec of its processes
        warnings.simplefilter("ignore", RuntimeWarning)
        ray.init(num_cpus=4, include_dashboard=False, log_to_driver=False,
                 configure_logging=False)
    yield ray
    ray.shutdown()


# -- the model, its input and NumPy references -------------------------------------------
def softmax_model():
    x = tf.placeholder(tf.float32, [None, 64], name="x")
    y = tf.placeholder(tf.int64, [None], name="y")
    w = tf.get_variable("w", [64, 10], initializer=tf.zeros_initializer())
    b = tf.get_variable("b", [10], initializer=tf.zeros_initializer())
    tf.train.get_or_create_global_step()
    logits = tf.matmul(x, w) + b
    return tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y,
                                                                         logits=logits))


def shard_input(worker_index, num_workers):
    """Each worker's shard of the digits as one full batch, every step."""
    feed = {"x": X[worker_index::num_workers], "y": Y[worker_index::num_workers]}
    while True:
        yield feed


def paced_input(worker_index, num_workers):
    time.sleep(0.5 if worker_index == 2 else 0.0)  # worker 2 also starts late
    for feed in shard_input(worker_index, num_workers):
        time.sleep(0.5 if worker_index == 2 else 0.01)  # worker 2 is the straggler
        yield feed


def np_softmax(w, b, x):
    z = x @ w + b
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def np_loss(w, b, x=X, y=Y):
    p = np_softmax(w.astype(np.float64), b.astype(np.float64), x.astype(np.float64))
    return float(-np.log(p[np.arange(len(y)), y]).mean())


def np_grads(w, b, x, y):
    p = np_softmax(w.astype(np.float64), b.astype(np.float64), x.astype(np.float64))
    p[np.arange(len(y)), y] -= 1.0
    p /= len(y)
    return x.T.astype(np.float64) @ p, p.sum(axis=0)


def job_for(optimizer, tmp_path=None, input_fn=shard_input, **kwargs):
    return tf.distribute.ParameterServerTraining(
        softmax_model, optimizer, input_fn,
        checkpoint_dir=str(tmp_path / "ckpt") if tmp_path is not None else None, **kwargs)


def assert_checkpoints_intact(directory, names):
    state = tf.train.get_checkpoint_state(directory)
    assert state is not None and state.all_model_checkpoint_paths
    for prefix in state.all_model_checkpoint_paths:
        reader = tf.train.NewCheckpointReader(prefix)
        for name in names:
            assert np.all(np.isfinite(reader.get_tensor(name)))
    files = os.listdir(directory)
    assert not [f for f in files if ".tmp" in f], files
    for data in glob.glob(os.path.join(directory, "*.data-*")):
        assert os.path.exists(data.split(".data-")[0] + ".index"), data


# -- training runs -----------------------------------------------------------------------
@pytest.mark.slow
def test_async_two_workers_one_ps_reduce_the_loss(ray_instance, tmp_path):
    with job_for(tf.train.GradientDescentOptimizer(1.0), tmp_path, num_workers=2,
                 save_checkpoint_steps=25) as job:
        result = job.train(max_steps=80)
        values = job.variables()
    assert result.global_step == 80 and values["global_step"] == 80
    assert result.gradients_applied == 80 and result.stale_gradients_dropped == 0
    assert sum(result.steps_by_worker.values()) == result.worker_steps >= 80
    # 650 float32 parameters pulled and pushed per worker step.
    assert result.bytes_pulled == result.bytes_pushed == 650 * 4 * result.worker_steps
    # Full-batch gradient descent at this rate reaches 0.30 after 80 steps.
    assert np_loss(values["w"], values["b"]) < 0.4 < LN10
    assert result.checkpoint.endswith("model.ckpt-80")
    assert_checkpoints_intact(str(tmp_path / "ckpt"), ["w", "b", "global_step"])


@pytest.mark.slow
def test_sync_one_step_is_the_averaged_sgd_update_then_reduces_the_loss(ray_instance):
    lr = 1.0
    opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(lr),
                                         replicas_to_aggregate=2, total_num_replicas=2)
    with job_for(opt, num_workers=2) as job:
        assert job.sync and job.replicas_to_aggregate == 2
        first = job.train(max_steps=1)
        one_step = job.variables()
        result = job.train(max_steps=60)
        values = job.variables()
    zeros_w, zeros_b = np.zeros((64, 10)), np.zeros(10)
    g = [np_grads(zeros_w, zeros_b, X[i::2], Y[i::2]) for i in range(2)]
    np.testing.assert_allclose(one_step["w"], -lr * (g[0][0] + g[1][0]) / 2, atol=1e-6)
    np.testing.assert_allclose(one_step["b"], -lr * (g[0][1] + g[1][1]) / 2, atol=1e-6)
    assert first.global_step == 1 and one_step["global_step"] == 1
    assert result.global_step == 60 and result.gradients_applied == 59
    assert result.stale_gradients_dropped == 0  # no backups: every gradient is awaited
    assert np_loss(values["w"], values["b"]) < 0.45  # full-batch descent: 0.35


@pytest.mark.slow
def test_backup_worker_keeps_a_slow_worker_off_the_critical_path(ray_instance):
    opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(1.0),
                                         replicas_to_aggregate=2, total_num_replicas=3)
    with job_for(opt, input_fn=paced_input, num_workers=3) as job:
        job.train(max_steps=2)  # compiles every worker's step
        result = job.train(max_steps=42)
        values = job.variables()
    per_step = result.seconds / 40
    # Worker 2 takes 0.5 s per gradient; the steps go at the fast workers' pace.
    assert per_step < 0.2, per_step
    assert result.steps_by_worker[2] < result.steps_by_worker[0] / 3
    assert result.stale_gradients_dropped >= 1  # the straggler's late gradients
    assert result.gradients_applied == 40
    assert np_loss(values["w"], values["b"]) < 0.6


@pytest.mark.slow
def test_killed_worker_and_ps_are_restarted_and_training_finishes(ray_instance, tmp_path):
    ckpt = tmp_path / "ckpt"
    outcome = {}

    def slow_input(worker_index, num_workers):
        for feed in shard_input(worker_index, num_workers):
            time.sleep(0.02)
            yield feed

    job = job_for(tf.train.MomentumOptimizer(0.2, 0.9), tmp_path, input_fn=slow_input,
                  num_workers=2, save_checkpoint_steps=10, max_to_keep=3)
    thread = threading.Thread(target=lambda: outcome.update(result=job.train(max_steps=200)))
    try:
        thread.start()
        _wait_for(lambda: job.global_step >= 20)
        ray_instance.kill(job.workers[0])
        _wait_for(lambda: job.global_step >= 60 and job.latest_checkpoint is not None)
        checkpoint_step = int(job.latest_checkpoint.rsplit("-", 1)[1])
        ray_instance.kill(job.ps_tasks[0])
        thread.join(timeout=120)
        assert not thread.is_alive()
        values = job.variables()
    finally:
        job.close()
    result = outcome["result"]
    assert result.worker_restarts >= 1 and result.ps_restarts == 1
    assert result.global_step == 200
    assert result.steps_by_worker[0] > 0  # the new worker 0 rejoined and trained
    # The ps restart returned every ps task to the latest checkpoint: the one seen
    # before the kill or a later one, never ahead of the step reached.
    [(step_seen, restored)] = result.restores
    restored_step = int(restored.rsplit("-", 1)[1])
    assert restored_step % 10 == 0 and checkpoint_step <= restored_step <= step_seen
    assert np_loss(values["w"], values["b"]) < 0.3  # full-batch momentum: 0.12
    assert_checkpoints_intact(str(ckpt), ["w", "b", "global_step", "w/Momentum"])
    assert tf.train.latest_checkpoint(str(ckpt)).endswith("model.ckpt-200")


def _wait_for(condition, timeout=60):
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


@pytest.mark.slow
def test_two_ps_shards_follow_the_device_setter(ray_instance, tmp_path):
    greedy = tf.contrib.training.GreedyLoadBalancingStrategy(2, tf.contrib.training
                                                             .byte_size_load_fn)
    placed = job_for(tf.train.GradientDescentOptimizer(0.1), num_ps=2, ps_strategy=greedy)
    # Greedy by bytes: w (2560 B) on ps 0, then b (40 B) and global_step on ps 1.
    assert placed.placement == {"w": 0, "b": 1, "global_step": 1}
    with job_for(tf.train.MomentumOptimizer(0.2, 0.9), tmp_path, num_workers=1,
                 num_ps=2) as job:
        # Round-robin in creation order, as replica_device_setter(ps_tasks=2) places.
        assert job.placement == {"w": 0, "b": 1, "global_step": 0}
        result = job.train(max_steps=30)
        shards = ray_instance.get([ps.values.remote() for ps in job.ps_tasks])
    assert sorted(shards[0]) == ["global_step", "w"] and sorted(shards[1]) == [
        "b", "global_step"]
    assert shards[0]["global_step"] == shards[1]["global_step"] == 30
    assert np_loss(shards[0]["w"], shards[1]["b"]) < 0.5  # full-batch momentum: 0.32
    prefix = result.checkpoint
    assert sorted(os.path.basename(p) for p in glob.glob(prefix + ".data-*")) == [
        "model.ckpt-30.data-00000-of-00002", "model.ckpt-30.data-00001-of-00002"]
    reader = tf.train.NewCheckpointReader(prefix)
    # TF's bundle: each entry records the data file (shard) that holds it.
    shard_of = {name: reader._bundle._entries[name].shard_id
                for name in reader.get_variable_to_shape_map()}
    assert sorted(n for n, s in shard_of.items() if s == 0) == ["global_step", "w",
                                                               "w/Momentum"]
    assert sorted(n for n, s in shard_of.items() if s == 1) == ["b", "b/Momentum"]
    reader = tf.train.NewCheckpointReader(prefix)
    np.testing.assert_array_equal(reader.get_tensor("w"), shards[0]["w"])


# -- the command line ---------------------------------------------------------------------------
@pytest.mark.slow
def test_cli_trains_the_classifier_on_ps_and_eval_reads_its_checkpoint(
        ray_instance, tmp_path, monkeypatch, capsys):
    from tensorflux import cli
    from tensorflux._src.cli import data_source

    monkeypatch.chdir(tmp_path)
    cli.main(["train", "--dataset", "iris", "--epochs", "8", "--workers", "2", "--ps", "1",
              "--logdir", "run"])
    out = capsys.readouterr().out
    assert "with 2 workers and 1 ps task on Ray (asynchronous SGD" in out
    assert "epoch   8/8" in out and "Test accuracy" in out
    history = (tmp_path / "run" / "history.json").read_text()
    assert '"epoch": 8' in history
    cli.main(["eval", "--logdir", "run"])
    assert "Test accuracy" in capsys.readouterr().out
    # The checkpoint, read independently: the MLP's forward pass in NumPy.
    reader = tf.train.NewCheckpointReader(tf.train.latest_checkpoint("run"))
    assert reader.get_tensor("global_step") == 8 * 7  # ceil(108 / 16) steps per epoch
    h = data_source.load("iris", seed=0).test.x.astype(np.float64)
    for layer in ("dense", "dense_1", "dense_2"):
        h = h @ reader.get_tensor(f"{layer}/kernel") + reader.get_tensor(f"{layer}/bias")
        h = np.maximum(h, 0) if layer != "dense_2" else h
    accuracy = (h.argmax(1) == data_source.load("iris", seed=0).test.y).mean()
    assert accuracy >= 0.8, accuracy


def test_cli_rejects_ps_options_that_do_not_fit(capsys):
    from tensorflux import cli

    for args, message in ((["--ps", "2"], "--ps belong to parameter-server training; add "
                                          "--workers N"),
                          (["--workers", "0"], "--workers must be at least 1, got 0"),
                          (["--workers", "2", "--backup-workers", "1"],
                           "--backup-workers needs --sync"),
                          (["--workers", "2", "--sync", "--backup-workers", "2"],
                           "--backup-workers must be between 0 and --workers - 1 = 1, "
                           "got 2")):
        with pytest.raises(SystemExit) as exit_info:
            cli.main(["train", "--dataset", "iris", *args])
        assert exit_info.value.code == 2
        assert message in capsys.readouterr().err


# -- the ps update rule, without actors ------------------------------------------------------
def test_ps_task_applies_the_optimizers_update_rule_and_drops_stale_gradients():
    from tensorflux._src.distribute.ps import model_layout
    from tensorflux._src.distribute.ps.ps_task import ParameterServerTask

    layout, init = model_layout.inspect_model(softmax_model, num_ps=1)
    g1 = {"w": np.full((64, 10), 0.5, np.float32), "b": np.arange(10, dtype=np.float32)}
    g2 = {"w": np.full((64, 10), -0.1, np.float32), "b": np.ones(10, np.float32)}
    metrics = {"loss": 1.0}

    async def adam_sync():
        ps = ParameterServerTask(0, layout, tf.train.AdamOptimizer(0.1), 2, None, None,
                                 None, "test")
        await ps.load(init, 0, 1)
        assert await ps.push(g1, {}, 0, 0, metrics) == (True, 0)
        assert await ps.push(g2, {}, 0, 1, metrics) == (True, 1)  # 2 of 2: applied
        assert await ps.push(g1, {}, 0, 2, metrics) == (False, 1)  # stale: dropped
        stats = await ps.stats()
        return await ps.values(), stats["counters"]

    values, counters = asyncio.run(adam_sync())
    assert counters["stale_dropped"] == 1 and counters["applied"] == 1
    for name in ("w", "b"):
        g = (g1[name].astype(np.float64) + g2[name]) / 2
        m, v = 0.1 * g, 0.001 * g * g
        lr_t = 0.1 * np.sqrt(1 - 0.999) / (1 - 0.9)
        np.testing.assert_allclose(values[name], -lr_t * m / (np.sqrt(v) + 1e-8), atol=1e-5)
    assert values["global_step"] == 1

    async def momentum_async():
        ps = ParameterServerTask(0, layout, lambda: tf.train.MomentumOptimizer(0.1, 0.9),
                                 None, None, None, None, "test")
        await ps.load(init, 0, 1)
        await ps.push(g1, {}, 0, 0, metrics)
        await ps.push(g2, {}, 0, 1, metrics)  # asynchronous: every push is applied
        return await ps.values()

    values = asyncio.run(momentum_async())
    accum = g1["b"].astype(np.float64)
    b = -0.1 * accum
    accum = 0.9 * accum + g2["b"]
    np.testing.assert_allclose(values["b"], b - 0.1 * accum, atol=1e-6)
    assert values["global_step"] == 2


def batch_norm_model():
    x = tf.placeholder(tf.float32, [None, 64], name="x")
    y = tf.placeholder(tf.int64, [None], name="y")
    h = tf.layers.batch_normalization(x, momentum=0.9, training=True)
    logits = tf.layers.dense(h, 10)
    return tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y,
                                                                         logits=logits))


def test_update_ops_run_on_the_ps_with_values_the_worker_computes():
    """Batch norm's moving averages: the worker computes each AssignSub's value from
    the pulled moving mean and its batch, the ps subtracts it, as TF1 runs the op."""
    from tensorflux._src.distribute.ps import model_layout
    from tensorflux._src.distribute.ps.ps_task import ParameterServerTask
    from tensorflux._src.distribute.ps.worker_task import WorkerTask

    layout, init = model_layout.inspect_model(batch_norm_model, num_ps=1)
    assert {s.name: s.update for s in layout.variables if s.update} == {
        "batch_normalization/moving_mean": "AssignSub",
        "batch_normalization/moving_variance": "AssignSub"}
    worker = WorkerTask(0, 1, layout, batch_norm_model, shard_input)

    async def one_step():
        ps = ParameterServerTask(0, layout, tf.train.GradientDescentOptimizer(0.1), None,
                                 None, None, None, "test")
        await ps.load(init, 0, 1)
        feeds = worker._next_feeds()
        for name, value in init.items():
            feeds[worker.snapshots[name]] = value
        [push] = worker._split(worker.sess.run(worker.fetches, feeds), [0])
        await ps.push(*push)
        return await ps.values()

    values = asyncio.run(one_step())
    # moving_mean -= (moving_mean - batch_mean) * (1 - momentum), from 0 and 1.
    np.testing.assert_allclose(values["batch_normalization/moving_mean"],
                               0.1 * X.mean(axis=0), atol=1e-6)
    np.testing.assert_allclose(values["batch_normalization/moving_variance"],
                               1 - 0.1 * (1 - X.var(axis=0)), atol=1e-5)


# -- SyncReplicasOptimizer in one process ---------------------------------------------------------
def test_sync_replicas_optimizer_in_one_process_applies_the_mean_of_r_runs():
    x = tf.placeholder(tf.float32, [None, 2])
    w = tf.Variable([[1.0], [2.0]])
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w)))
    step = tf.train.get_or_create_global_step()
    opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.1),
                                         replicas_to_aggregate=2, total_num_replicas=2)
    train_op = opt.minimize(loss, global_step=step)
    hook = opt.make_session_run_hook(is_chief=True)
    seen = []
    with tf.train.MonitoredTrainingSession(hooks=[hook]) as sess:
        for batch in ([[1.0, 0.0]], [[0.0, 1.0]], [[1.0, 1.0]]):
            sess.run(train_op, {x: np.array(batch, np.float32)})
            seen.append(sess.run([w, step]))
    # Gradients 2 (x.w) x: [2, 0] then [0, 4]; their mean [1, 2] is applied on run 2.
    np.testing.assert_allclose(seen[0][0].ravel(), [1.0, 2.0])
    np.testing.assert_allclose(seen[1][0].ravel(), [0.9, 1.8], rtol=1e-6)
    np.testing.assert_allclose(seen[2][0].ravel(), [0.9, 1.8], rtol=1e-6)
    assert [s for _, s in seen] == [0, 1, 1]


def test_sync_replicas_optimizer_errors_are_tf1s():
    opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.1), 2)
    assert opt.total_num_replicas == 2
    w = tf.Variable(1.0)
    with pytest.raises(ValueError, match="Global step is required to check staleness"):
        opt.apply_gradients([(tf.constant(1.0), w)])
    with pytest.raises(ValueError, match="Must supply at least one variable"):
        opt.apply_gradients([], global_step=tf.train.get_or_create_global_step())
    with pytest.raises(ValueError, match="apply_gradient should be called before"):
        opt.make_session_run_hook(True).begin()
    with pytest.raises(ValueError, match=r"replicas_to_aggregate=0"):
        tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.1), 0)


# -- arguments and errors ---------------------------------------------------------------------
def test_bad_arguments_name_what_was_received_and_expected(ray_instance, monkeypatch):
    sgd = tf.train.GradientDescentOptimizer(0.1)
    with pytest.raises(ValueError, match=r"num_workers must be an integer >= 1, received "
                                         r"num_workers=0"):
        job_for(sgd, num_workers=0)
    with pytest.raises(ValueError, match=r"num_ps must be .*received num_ps=-1"):
        job_for(sgd, num_ps=-1)
    too_many = tf.train.SyncReplicasOptimizer(sgd, replicas_to_aggregate=3,
                                              total_num_replicas=2)
    with pytest.raises(ValueError, match=r"replicas_to_aggregate=3\) is more than the 2 "
                                         r"workers"):
        job_for(too_many, num_workers=2)
    with pytest.raises(ValueError, match=r"total_num_replicas=3\) must equal num_workers=2"):
        job_for(tf.train.SyncReplicasOptimizer(sgd, 2, 3), num_workers=2)
    with pytest.raises(TypeError, match="optimizer must be a tf.train.Optimizer"):
        job_for("adam")
    job = job_for(sgd, address="127.0.0.1:1")
    monkeypatch.setattr(ray_instance, "is_initialized", lambda: False)
    with pytest.raises(ConnectionError, match=r"address='127.0.0.1:1' is unreachable"):
        job.start()


def test_missing_ray_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError
    with pytest.raises(ImportError, match=r'pip install "tensorflux\[distributed\]"'):
        job_for(tf.train.GradientDescentOptimizer(0.1))
