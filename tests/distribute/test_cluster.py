"""The TF1 cluster surface: ClusterSpec, Server, replica_device_setter, TF_CONFIG."""

import json
import socket
import threading

import numpy as np
import pytest

import tensorflux as tf
from tensorflux.distribute.cluster_resolver import TFConfigClusterResolver

CLUSTER = {"worker": ["w0:2222", "w1:2222"], "ps": ["ps0:2222", "ps1:2222", "ps2:2222"]}


# -- ClusterSpec -------------------------------------------------------------------------
def test_cluster_spec_dense():
    spec = tf.train.ClusterSpec(CLUSTER)
    assert spec.jobs == ["worker", "ps"]
    assert spec.num_tasks("ps") == 3 and spec.task_indices("worker") == [0, 1]
    assert spec.task_address("ps", 2) == "ps2:2222"
    assert spec.job_tasks("worker") == ["w0:2222", "w1:2222"]
    assert spec.as_dict() == CLUSTER
    assert [(j.name, j.tasks) for j in spec.as_cluster_def().job] == [
        ("ps", {0: "ps0:2222", 1: "ps1:2222", 2: "ps2:2222"}),
        ("worker", {0: "w0:2222", 1: "w1:2222"})]  # sorted by job name, as TF
    assert repr(spec) == ("ClusterSpec({'ps': ['ps0:2222', 'ps1:2222', 'ps2:2222'], "
                          "'worker': ['w0:2222', 'w1:2222']})")
    assert bool(spec) and not tf.train.ClusterSpec({})


def test_cluster_spec_sparse_and_equality():
    spec = tf.train.ClusterSpec({"worker": {1: "w1:2222", 3: "w3:2222"}, "ps": ["ps0:1"]})
    assert spec.num_tasks("worker") == 2 and spec.task_indices("worker") == [1, 3]
    assert spec.job_tasks("worker") == [None, "w1:2222", None, "w3:2222"]
    assert spec.as_dict() == {"worker": {1: "w1:2222", 3: "w3:2222"}, "ps": ["ps0:1"]}
    assert spec == tf.train.ClusterSpec(spec) == tf.train.ClusterSpec(spec.as_cluster_def())
    assert spec == {"worker": {1: "w1:2222", 3: "w3:2222"}, "ps": {0: "ps0:1"}}
    assert spec != tf.train.ClusterSpec(CLUSTER)
    # A dense dict written as {index: address} is the same cluster.
    assert tf.train.ClusterSpec({"a": ["x", "y"]}) == tf.train.ClusterSpec({"a": {0: "x", 1: "y"}})


def test_cluster_spec_errors():
    spec = tf.train.ClusterSpec(CLUSTER)
    with pytest.raises(ValueError, match="No such job in cluster: 'chief'"):
        spec.num_tasks("chief")
    with pytest.raises(ValueError, match="No task with index 5 in job 'ps'"):
        spec.task_address("ps", 5)
    with pytest.raises(TypeError, match="The tasks for job 'ps' must be a list or a "
                                        "dictionary from integers to strings."):
        tf.train.ClusterSpec({"ps": "ps0:2222"})
    with pytest.raises(TypeError, match="`cluster` must be a dictionary mapping"):
        tf.train.ClusterSpec(["ps0:2222"])
    with pytest.raises(TypeError, match="Task address 7 must be bytes or unicode"):
        tf.train.ClusterSpec({"ps": [7]})


# -- Server ------------------------------------------------------------------------------
def test_local_server_lifecycle_and_session_target():
    server = tf.train.Server.create_local_server()
    host, port = server.target[len("grpc://"):].split(":")
    assert server.target.startswith("grpc://localhost:") and int(port) > 0
    assert server.server_def.job_name == "localhost" and server.server_def.task_index == 0
    # The port is claimed: a second server on it fails as TF's does.
    with pytest.raises(tf.errors.UnknownError, match="Could not start gRPC server"):
        tf.train.Server({"local": [f"localhost:{port}"]})
    joined = threading.Event()
    thread = threading.Thread(target=lambda: (server.join(), joined.set()))
    thread.start()
    assert not joined.wait(0.05)  # join blocks while the server runs
    server.stop()
    thread.join(5)
    assert joined.is_set()
    with socket.create_server(("", int(port))):  # the port was released
        pass
    # A Session on the target runs the graph in this process.
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2])
        with tf.Session(server.target) as sess:
            assert sess.run(x * 2.0, {x: [1.0, 2.0]}).tolist() == [2.0, 4.0]


def test_server_definition_errors():
    with pytest.raises(ValueError, match="Must specify an explicit `job_name`."):
        tf.train.Server(CLUSTER, start=False)
    with pytest.raises(ValueError, match="Must specify an explicit `task_index`."):
        tf.train.Server(CLUSTER, job_name="ps", start=False)
    with pytest.raises(tf.errors.InvalidArgumentError, match='Task 4 was not defined in job "ps"'):
        tf.train.Server(CLUSTER, job_name="ps", task_index=4, start=False)
    with pytest.raises(TypeError, match="Could not convert `server_or_cluster_def`"):
        tf.train.Server(42)
    server = tf.train.Server(CLUSTER, job_name="worker", task_index=1, start=False)
    assert server.target == "grpc://w1:2222"
    assert server.join(timeout=0.01) is False  # never started: still "running"


# -- replica_device_setter ---------------------------------------------------------------
def test_round_robin_places_variables_on_ps_tasks():
    with tf.Graph().as_default():
        with tf.device(tf.train.replica_device_setter(ps_tasks=2)):
            w = tf.Variable(tf.ones([3, 2]), name="w")
            b = tf.Variable(tf.zeros([2]), name="b")
            x = tf.placeholder(tf.float32, [None, 3])
            with tf.device("/gpu:0"):
                y = tf.matmul(x, w)
            c = tf.Variable(1.0, name="c")
            with tf.device("/job:ps/task:3"):
                pinned = tf.Variable(2.0, name="pinned")   # ps job: own task kept
            with tf.device("/cpu:0"):
                on_cpu = tf.Variable(3.0, name="on_cpu")   # merged with the ps device
            with tf.device("/job:foo"):
                other_job = tf.Variable(4.0, name="other")  # another job: no ps task
            z = y + b * c
        assert [v.device for v in (w, b, c)] == ["/job:ps/task:0", "/job:ps/task:1",
                                                 "/job:ps/task:0"]
        assert pinned.device == "/job:ps/task:3"
        assert on_cpu.device == "/job:ps/task:0/device:CPU:0"  # task 1 went to `pinned`
        assert other_job.device == "/job:foo"
        assert w.value().device == "/job:ps/task:0"  # the snapshot sits with the variable
        assert x.device == "/job:worker" and z.device == "/job:worker"
        assert w.initializer.device == "/job:worker"
        assert y.device == "/job:worker/device:GPU:0"
        # The graph still runs in one process (ps and worker ops all local).
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            got = sess.run(z, {x: np.ones((2, 3), np.float32)})
        np.testing.assert_allclose(got, np.full((2, 2), 3.0))


def test_replica_device_setter_options():
    assert tf.train.replica_device_setter() is None  # no ps tasks
    assert tf.train.replica_device_setter(cluster={"worker": ["w:1"]}) is None
    with tf.Graph().as_default():
        setter = tf.train.replica_device_setter(cluster=tf.train.ClusterSpec(CLUSTER),
                                                worker_device="/job:worker/task:1")
        with tf.device(setter):
            vs = [tf.Variable(float(i)) for i in range(4)]
            s = tf.add_n(vs)
        assert [v.device for v in vs] == ["/job:ps/task:0", "/job:ps/task:1",
                                          "/job:ps/task:2", "/job:ps/task:0"]
        assert s.device == "/job:worker/task:1"
        with tf.device(tf.train.replica_device_setter(ps_tasks=2, merge_devices=False)):
            with tf.device("/job:worker/task:7"):
                kept = tf.constant(1.0)
        assert kept.device == "/job:worker/task:7"
    with pytest.raises(TypeError, match="ps_strategy must be callable"):
        tf.train.replica_device_setter(ps_tasks=2, ps_strategy=3)


def test_greedy_load_balancing_by_byte_size():
    training = tf.contrib.training
    with tf.Graph().as_default():
        strategy = training.GreedyLoadBalancingStrategy(3, training.byte_size_load_fn)
        with tf.device(tf.train.replica_device_setter(ps_tasks=3, ps_strategy=strategy)):
            # float32 sizes 400, 40, 80, 20, 200 bytes. Loads after each placement:
            # [400,0,0] [400,40,0] [400,40,80] [400,60,80] [400,260,80]
            vs = [tf.Variable(tf.zeros([n])) for n in (100, 10, 20, 5, 50)]
            big = tf.Variable(tf.zeros([4, 4], tf.float64))  # 128 bytes -> task 2
        assert [v.device for v in vs] == ["/job:ps/task:0", "/job:ps/task:1",
                                          "/job:ps/task:2", "/job:ps/task:1",
                                          "/job:ps/task:1"]
        assert big.device == "/job:ps/task:2"
        assert training.byte_size_load_fn(big.op) == 128
        with pytest.raises(ValueError, match="must have a single output"):
            training.byte_size_load_fn(tf.no_op())


# -- TF_CONFIG ---------------------------------------------------------------------------
TFJOB_CONFIG = {  # as Kubeflow's TFJob operator writes it
    "cluster": {"chief": ["job-chief-0.ns.svc:2222"],
                "worker": ["job-worker-0.ns.svc:2222", "job-worker-1.ns.svc:2222"],
                "ps": ["job-ps-0.ns.svc:2222"],
                "evaluator": ["job-evaluator-0.ns.svc:2222"]},
    "task": {"type": "worker", "index": 1},
    "environment": "cloud",
}


def test_tf_config_resolver(monkeypatch):
    monkeypatch.setenv("TF_CONFIG", json.dumps(TFJOB_CONFIG))
    resolver = TFConfigClusterResolver()
    assert resolver.task_type == "worker" and resolver.task_id == 1
    assert resolver.cluster_spec() == tf.train.ClusterSpec(TFJOB_CONFIG["cluster"])
    assert resolver.cluster_spec().num_tasks("worker") == 2
    assert resolver.master() == "job-worker-1.ns.svc:2222"
    assert resolver.master(rpc_layer="grpc") == "grpc://job-worker-1.ns.svc:2222"
    assert resolver.master("chief", 0, "grpc") == "grpc://job-chief-0.ns.svc:2222"
    overridden = TFConfigClusterResolver(task_type="ps", task_id=0, rpc_layer="grpc")
    assert overridden.master() == "grpc://job-ps-0.ns.svc:2222"
    # The chief reading the same cluster, with rpc_layer and session_master given.
    monkeypatch.setenv("TF_CONFIG", json.dumps(dict(TFJOB_CONFIG, rpc_layer="grpc",
                                                    task={"type": "chief", "index": 0})))
    assert TFConfigClusterResolver().master() == "grpc://job-chief-0.ns.svc:2222"
    monkeypatch.setenv("TF_CONFIG", json.dumps(dict(TFJOB_CONFIG, session_master="x:1")))
    assert TFConfigClusterResolver().master() == "x:1"


def test_tf_config_missing_or_single_task(monkeypatch):
    monkeypatch.delenv("TF_CONFIG", raising=False)
    resolver = TFConfigClusterResolver()
    assert resolver.task_type is None and resolver.task_id is None
    assert resolver.cluster_spec() == tf.train.ClusterSpec({}) and resolver.master() == ""
    monkeypatch.setenv("TF_CONFIG", json.dumps({"cluster": {"worker": ["a:1"]},
                                                "task": {"type": "worker", "index": 0}}))
    assert TFConfigClusterResolver().master() == ""  # a one-task cluster
