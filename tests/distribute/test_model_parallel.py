"""Model parallelism: ops placed with tf.device on different devices run there, values
and variables move between devices, and training gives the one-device result.

JAX fixes its device count when it starts, so the programs run in a subprocess
(model_parallel_programs.py) with XLA_FLAGS=--xla_force_host_platform_device_count=2."""

import json
import os
import pathlib
import subprocess
import sys

import jax
import numpy as np
import pytest

import tensorflux as tf
from tensorflux._src.runtime.config import run_plan

PROGRAMS = pathlib.Path(__file__).with_name("model_parallel_programs.py")
TOLERANCE = 1e-6
CPU = "/job:localhost/replica:0/task:0/device:CPU:{}"


@pytest.fixture(scope="module")
def out():
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=2",
               JAX_PLATFORMS="cpu")
    proc = subprocess.run([sys.executable, str(PROGRAMS)], env=env, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_mlp_split_over_two_devices_trains_as_on_one(out):
    case = out["mlp"]["colocated"]
    assert case["loss_diff"] < TOLERANCE and case["var_diff"] < TOLERANCE
    # Layer 1 forward, then layer 2 forward + backward + its updates, then layer 1's
    # backward + updates (colocate_gradients_with_ops=True puts each gradient op on
    # its forward op's device).
    assert case["plan"] == ["cluster_0 on cpu:0", "cluster_1 on cpu:1", "cluster_2 on cpu:0"]
    assert case["step_devices"] == [CPU.format(0), CPU.format(1), CPU.format(0)]
    # Variables and their Momentum slots live (and are updated) on their layer's device.
    assert case["homes"] == {"w1": [0], "b1": [0], "w1/Momentum": [0], "b1/Momentum": [0],
                             "w2": [1], "b2": [1], "w2/Momentum": [1], "b2/Momentum": [1]}


def test_gradients_without_colocation_still_match(out):
    case = out["mlp"]["not_colocated"]
    assert case["loss_diff"] < TOLERANCE and case["var_diff"] < TOLERANCE
    assert {line.split(" on ")[1] for line in case["plan"]} == {"cpu:0", "cpu:1"}
    assert case["homes"]["w2"] == [1] and case["homes"]["w1"] == [0]


def test_no_device_or_one_device_is_one_cluster(out):
    assert len(out["mlp"]["reference_plan"]) == 1
    assert out["mlp"]["reference_plan"][0].startswith("cluster_0 on cpu: ")
    assert out["mlp"]["one_device"] == ["cluster_0 on cpu:1"]


def test_variable_on_device_1_used_by_ops_on_device_0(out):
    case = out["variable_elsewhere"]
    v = np.array([1.0, 2.0, 3.0])
    assert case["y"] == (v * 2.0 + 1.0).tolist()
    assert case["after"] == (v + v * 2.0 + 1.0).tolist()
    assert case["home"] == [1]  # the update ran with the variable, on device 1
    assert case["plan"] == ["cluster_0 on cpu:1: v, v/read", "cluster_1 on cpu:0: mul, add",
                            "cluster_2 on cpu:1: AssignAdd"]


def test_host_op_between_clusters_on_two_devices(out):
    case = out["host_between"]
    assert case["value"] == 2 * (1.5 + 2.0 + 3.0) + 1.0
    assert case["plan"] == ["cluster_0 on cpu:0: mul, Greater", "host: Where (Where)",
                            "cluster_1 on cpu:1: strided_slice, GatherV2, Sum, add"]


@pytest.mark.skipif(len(jax.devices()) > 1 or jax.default_backend() != "cpu",
                    reason="needs a machine with one CPU device and no accelerator")
def test_devices_that_do_not_exist_here_are_one_cluster():
    """In this process (one CPU device), /cpu:1 and /gpu:0 fall back to the default
    device: the run is one cluster, as before."""
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2])
        with tf.device("/cpu:0"):
            a = x * 2.0
        with tf.device("/cpu:1"):
            b = a + 1.0
        with tf.device("/gpu:0"):
            c = b * b
        meta = tf.RunMetadata()
        with tf.Session() as sess:
            value = sess.run(c, {x: [1.0, 2.0]}, run_metadata=meta)
    np.testing.assert_allclose(value, [9.0, 25.0])
    assert run_plan(meta) == ["cluster_0 on cpu: mul, add, mul_1"]
