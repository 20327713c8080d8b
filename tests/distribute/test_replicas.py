"""Synchronous data parallelism: N replicas with global batch B train exactly as one
device with batch B (losses and updated variables equal up to float rounding).

JAX fixes its device count when it starts, so each case runs spmd_programs.py in a
subprocess with XLA_FLAGS=--xla_force_host_platform_device_count=N."""

import json
import os
import pathlib
import subprocess
import sys

import pytest

import tensorflux as tf

PROGRAMS = pathlib.Path(__file__).with_name("spmd_programs.py")
TOLERANCE = 1e-5  # float32 sums in a different order


@pytest.fixture(scope="module", params=[2, 4])
def results(request):
    n = request.param
    env = dict(os.environ, XLA_FLAGS=f"--xla_force_host_platform_device_count={n}",
               JAX_PLATFORMS="cpu")
    args = [str(n)] + (["all"] if n == 4 else [])
    proc = subprocess.run([sys.executable, str(PROGRAMS), *args], env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return n, json.loads(proc.stdout.strip().splitlines()[-1])


def _needs_all(results):
    n, out = results
    if "towers" not in out:
        pytest.skip("checked with 4 devices")
    return n, out


def test_cnn_with_batch_norm_replicated_after_building_matches_one_device(results):
    n, out = results
    case = out["cnn_bn_replicate"]
    assert case["plan"] == f"cluster_0 on cpu x{n} replicas (SPMD)"
    assert case["devices_holding_variables"] == [n]  # variables replicated on every device
    assert case["loss_diff"] < TOLERANCE and case["var_diff"] < TOLERANCE


def test_mlp_with_batch_norm_in_strategy_scope_matches_one_device(results):
    n, out = _needs_all(results)
    case = out["mlp_bn_scope"]
    assert case["plan"] == f"cluster_0 on cpu x{n} replicas (SPMD)"
    assert case["devices_holding_variables"] == [n]
    assert case["loss_diff"] < TOLERANCE and case["var_diff"] < TOLERANCE


def test_in_graph_towers_with_averaged_gradients_match_one_tower(results):
    _, out = _needs_all(results)
    case = out["towers"]
    assert case["num_variables"] == 4  # w, b and their momentum slots: shared by towers
    assert case["loss_diff"] < TOLERANCE and case["var_diff"] < TOLERANCE


def test_uneven_batch_is_replicated_not_split(results):
    _, out = _needs_all(results)
    assert out["uneven"] < TOLERANCE


def test_device_placement_and_allow_soft_placement(results):
    n, out = _needs_all(results)
    case = out["placement"]
    assert case["value"] == [3.0, 6.0]
    assert case["device"] == f"/job:localhost/replica:0/task:0/device:CPU:{n - 1}"
    assert case["soft"] == [2.0]  # a missing device falls back to the default one
    assert case["strict_existing"] == [3.0, 6.0]
    assert case["strict_error"].startswith(
        f"Cannot assign a device for operation Const: Operation was explicitly assigned "
        f"to /device:CPU:{n + 3} but available devices are [ "
        f"/job:localhost/replica:0/task:0/device:CPU:0, ")


def test_more_replicas_than_devices_is_an_error():
    # This process has the default single CPU device.
    with pytest.raises(ValueError, match="xla_force_host_platform_device_count"):
        tf.distribute.MirroredStrategy(num_replicas=64)
    with pytest.raises(ValueError, match=r"Device '/gpu:5' does not exist here"):
        tf.distribute.MirroredStrategy(devices=["/cpu:0", "/gpu:5"])


def test_one_replica_strategy_runs_in_process():
    strategy = tf.distribute.MirroredStrategy(devices=["/cpu:0"])
    assert strategy.num_replicas_in_sync == 1
    assert strategy.devices == ("/job:localhost/replica:0/task:0/device:CPU:0",)
    with tf.Graph().as_default():
        with strategy.scope():
            x = tf.placeholder(tf.float32, [None])
            total = tf.reduce_sum(x * 2.0)
        with tf.Session() as sess:
            assert sess.run(total, {x: [1.0, 2.0, 3.0]}) == 12.0
