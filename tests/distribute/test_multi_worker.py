"""Many hosts: MultiWorkerMirroredStrategy over 2 processes on this machine.

`python -m tensorflux.distribute.launch` starts 2 workers of multi_worker_programs.py
(TF_CONFIG on free loopback ports, jax.distributed with gloo CPU collectives); each
feeds its half of a global batch to a small MLP trained with SGD. Both workers must
fetch the same losses and end with the same variables, equal to NumPy's forward and
backward pass on the whole batch. The launcher gets a timeout, so a hang fails the test
instead of blocking it."""

import json
import os
import pathlib
import subprocess
import sys
import time

import numpy as np
import pytest

import tensorflux as tf
from tensorflux.distribute import launch, multi_worker

HERE = pathlib.Path(__file__).parent
PROGRAM = HERE / "multi_worker_programs.py"
sys.path.insert(0, str(HERE))
import multi_worker_programs as program  # noqa: E402

TOLERANCE = 1e-5  # float32 against float64, sums in another order
_ENV_KEYS = ("TF_CONFIG", "JAX_COORDINATOR_ADDRESS", "JAX_NUM_PROCESSES", "JAX_PROCESS_ID")


def _launch(out_dir, devices_per_process=None, timeout=75):
    env = {k: v for k, v in os.environ.items() if k not in _ENV_KEYS + ("XLA_FLAGS",)}
    env["JAX_PLATFORMS"] = "cpu"
    args = [sys.executable, "-m", "tensorflux.distribute.launch", "-n", "2",
            "--timeout", str(timeout), "--grace", "2"]
    if devices_per_process:
        args += ["--devices_per_process", str(devices_per_process)]
    proc = subprocess.run(args + ["--", str(PROGRAM), str(out_dir)], env=env,
                          capture_output=True, text=True, timeout=timeout + 20,
                          cwd=HERE.parent.parent)
    assert proc.returncode == 0, proc.stderr[-4000:]
    workers = [json.loads((out_dir / f"worker_{i}.json").read_text()) for i in range(2)]
    return workers


@pytest.fixture(scope="module", params=[1, 2], ids=["1-device-each", "2-devices-each"])
def workers(request, tmp_path_factory):
    out_dir = tmp_path_factory.mktemp(f"workers{request.param}")
    found = _launch(out_dir, devices_per_process=request.param)
    return request.param, found


def _numpy_sgd(initial):
    """What one device computes on the whole batch: (losses, logits per step, final)."""
    w1, b1, w2, b2 = (np.asarray(v, np.float64) for v in initial)
    losses, logits_seen = [], []
    for step in range(program.STEPS):
        x, y = (a.astype(np.float64) for a in program.global_batch(step))
        h = np.tanh(x @ w1 + b1)
        logits = h @ w2 + b2
        shifted = logits - logits.max(axis=1, keepdims=True)
        p = np.exp(shifted) / np.exp(shifted).sum(axis=1, keepdims=True)
        losses.append(float(np.mean(-np.sum(y * np.log(p), axis=1))))
        logits_seen.append(logits)
        d_logits = (p - y) / len(x)
        d_w2, d_b2 = h.T @ d_logits, d_logits.sum(axis=0)
        d_pre = (d_logits @ w2.T) * (1.0 - h ** 2)
        d_w1, d_b1 = x.T @ d_pre, d_pre.sum(axis=0)
        lr = program.LEARNING_RATE
        w1, b1, w2, b2 = w1 - lr * d_w1, b1 - lr * d_b1, w2 - lr * d_w2, b2 - lr * d_b2
    return losses, logits_seen, [w1, b1, w2, b2]


def test_two_workers_train_as_one_device_on_the_global_batch(workers):
    devices_each, (first, second) = workers
    assert [first["worker_index"], second["worker_index"]] == [0, 1]
    assert first["is_chief"] and not second["is_chief"]
    assert first["num_workers"] == 2
    assert first["num_replicas_in_sync"] == 2 * devices_each
    assert first["plan"].startswith(f"cluster_0 on cpu x{2 * devices_each} replicas (SPMD)")
    assert first["variable_devices"] == 2 * devices_each  # replicated on every device
    last = f"/job:worker/replica:0/task:1/device:CPU:{devices_each - 1}"
    assert second["devices"][-1] == last

    losses, logits, final = _numpy_sgd(first["initial"])
    for worker in (first, second):
        np.testing.assert_allclose(worker["losses"], losses, rtol=0, atol=TOLERANCE)
        for got, want in zip(worker["logits"], logits):  # the global batch's 8 rows
            np.testing.assert_allclose(got, want, rtol=0, atol=TOLERANCE)
        for got, want in zip(worker["final"], final):
            np.testing.assert_allclose(got, want, rtol=0, atol=TOLERANCE)


def test_both_workers_hold_identical_variables_from_the_chiefs_initial_values(workers):
    _, (first, second) = workers
    # Unseeded initializers: each worker would draw its own; the chief's are used.
    assert first["initial"] == second["initial"]
    assert first["final"] == second["final"]
    assert first["losses"] == second["losses"]


def test_how_worker_inputs_are_placed(workers):
    _, (first, second) = workers
    x, _ = program.global_batch(0)
    for worker in (first, second):
        # A host op on fed rows gives this worker's slice; the step sees all 8 rows.
        assert worker["rows_seen"] == program.GLOBAL_BATCH
        assert worker["doubled_sum"] == pytest.approx(2 * x.sum(), abs=1e-4)
        # A scalar feed is the chief's value (worker 1 fed 0.2).
        assert worker["lr_seen"] == pytest.approx(0.1)
    # A host op on a global value (the logits) is the same on both workers.
    _, _, final = _numpy_sgd(first["initial"])
    w1, b1, w2, b2 = final
    expected = float((np.tanh(x @ w1 + b1) @ w2 + b2).sum())
    assert first["sorted_sum"] == second["sorted_sum"]
    assert first["sorted_sum"] == pytest.approx(expected, abs=1e-4)


def test_an_evaluation_run_gives_the_global_batch_loss(workers):
    _, (first, second) = workers
    _, _, final = _numpy_sgd(first["initial"])
    w1, b1, w2, b2 = final
    x, y = program.global_batch(0)
    logits = np.tanh(x @ w1 + b1) @ w2 + b2
    log_p = logits - logits.max(1, keepdims=True)
    log_p -= np.log(np.exp(log_p).sum(1, keepdims=True))
    expected = float(np.mean(-np.sum(y * log_p, axis=1)))
    assert first["eval_loss"] == second["eval_loss"]
    assert first["eval_loss"] == pytest.approx(expected, abs=TOLERANCE)


# -- configuration errors (raised before jax.distributed starts) -----------------------

@pytest.fixture
def clean_env(monkeypatch):
    for key in _ENV_KEYS:
        monkeypatch.delenv(key, raising=False)

    def must_not_start(*args, **kwargs):
        raise AssertionError(f"jax.distributed would start with {args}")

    monkeypatch.setattr(multi_worker, "_start", must_not_start)
    return monkeypatch


def _set_tf_config(monkeypatch, config):
    monkeypatch.setenv("TF_CONFIG", json.dumps(config))


CLUSTER = {"worker": ["127.0.0.1:20000", "127.0.0.1:20001"]}


def test_tf_config_without_a_task_names_what_is_missing(clean_env):
    _set_tf_config(clean_env, {"cluster": CLUSTER})
    with pytest.raises(ValueError) as info:
        tf.distribute.experimental.MultiWorkerMirroredStrategy()
    message = str(info.value)
    assert "TF_CONFIG" in message and "no task for this process" in message
    assert "127.0.0.1:20000" in message  # what was received
    assert '"task": {"type": one of [\'worker\'], "index": ...}' in message  # expected


def test_process_count_mismatch_says_received_and_expected(clean_env):
    _set_tf_config(clean_env, {"cluster": CLUSTER, "task": {"type": "worker", "index": 1}})
    with pytest.raises(ValueError) as info:
        tf.distribute.experimental.MultiWorkerMirroredStrategy(num_processes=3)
    message = str(info.value)
    assert message.startswith("num_processes=3 was given, but TF_CONFIG (")
    assert "says 2 (2 worker process(es): 2 worker" in message
    assert "expected num_processes=2 or no num_processes argument" in message


def test_task_outside_the_cluster_and_other_jobs_are_errors(clean_env):
    _set_tf_config(clean_env, {"cluster": CLUSTER, "task": {"type": "worker", "index": 5}})
    with pytest.raises(ValueError, match=r"this process is task 'worker' 5, which is not "
                                         r"in the cluster; expected one of \['worker 0', "
                                         r"'worker 1'\]"):
        tf.distribute.experimental.MultiWorkerMirroredStrategy()
    _set_tf_config(clean_env, {"cluster": dict(CLUSTER, ps=["127.0.0.1:20002"]),
                               "task": {"type": "worker", "index": 0}})
    with pytest.raises(ValueError, match=r"has the job\(s\) \['ps'\], but "
                                         r"MultiWorkerMirroredStrategy runs only"):
        tf.distribute.experimental.MultiWorkerMirroredStrategy()


def test_incomplete_environment_settings_name_the_missing_variables(clean_env):
    clean_env.setenv("JAX_COORDINATOR_ADDRESS", "127.0.0.1:20000")
    clean_env.setenv("JAX_NUM_PROCESSES", "2")
    with pytest.raises(ValueError) as info:
        tf.distribute.experimental.MultiWorkerMirroredStrategy()
    assert str(info.value) == (
        "Multi-worker settings are incomplete: coordinator_address='127.0.0.1:20000', "
        "num_processes=2 was set, but process_id is missing; expected all three from the "
        "arguments, TF_CONFIG, or the environment (JAX_PROCESS_ID).")
    with pytest.raises(ValueError, match=r"process_id=2; expected an integer in \[0, 1\]"):
        tf.distribute.experimental.MultiWorkerMirroredStrategy(process_id=2)


def test_chief_is_process_zero_and_its_address_the_coordinator(clean_env):
    config = {"cluster": {"chief": ["10.0.0.1:2222"], "worker": ["10.0.0.2:2222"]},
              "task": {"type": "worker", "index": 0}}
    _set_tf_config(clean_env, config)
    settings, tasks = multi_worker.resolve(tf.distribute.cluster_resolver
                                           .TFConfigClusterResolver())
    assert settings == ("10.0.0.1:2222", 2, 1)
    assert tasks == [("chief", 0), ("worker", 0)]


def test_without_a_cluster_one_worker_trains_alone(clean_env):
    strategy = tf.distribute.experimental.MultiWorkerMirroredStrategy()
    assert strategy.num_workers == 1 and strategy.is_chief
    with tf.Graph().as_default():
        with strategy.scope():
            x = tf.placeholder(tf.float32, [None, 2])
            w = tf.Variable([[1.0], [2.0]])
            loss = tf.reduce_mean(tf.matmul(x, w))
            train_op = tf.train.GradientDescentOptimizer(1.0).minimize(loss)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(train_op, {x: [[1.0, 0.0], [3.0, 2.0]]})
            np.testing.assert_allclose(sess.run(w), [[-1.0], [1.0]])


# -- the launcher ----------------------------------------------------------------------

def test_launcher_stops_the_others_when_one_worker_fails(tmp_path):
    script = tmp_path / "fails.py"
    script.write_text(
        "import json, os, sys, time\n"
        "index = json.loads(os.environ['TF_CONFIG'])['task']['index']\n"
        "sys.exit(3) if index == 1 else time.sleep(60)\n")
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "tensorflux.distribute.launch", "-n", "2",
                           "--grace", "2", "--", str(script)], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 3
    assert "worker 1 exited with status 3; stopping the others." in proc.stderr
    assert time.monotonic() - start < 30  # worker 0 was stopped, not waited for


def test_launcher_gives_each_worker_its_task_on_loopback_ports():
    envs = launch.worker_environments(3, devices_per_process=2, base={})
    configs = [json.loads(env["TF_CONFIG"]) for env in envs]
    addresses = configs[0]["cluster"]["worker"]
    assert len(set(addresses)) == 3 and all(a.startswith("127.0.0.1:") for a in addresses)
    assert [c["task"] for c in configs] == [{"type": "worker", "index": i}
                                            for i in range(3)]
    assert all(c["cluster"] == configs[0]["cluster"] for c in configs)
    assert envs[2]["XLA_FLAGS"] == "--xla_force_host_platform_device_count=2"
