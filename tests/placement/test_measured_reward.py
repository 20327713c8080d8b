"""place(..., reward=step_timer(...)): the policy trained on steps measured on real
(forced host CPU) devices. JAX fixes its device count when it starts, so the program
runs in a subprocess with XLA_FLAGS=--xla_force_host_platform_device_count=2."""

import json
import os
import pathlib
import subprocess
import sys

import pytest

PROGRAM = pathlib.Path(__file__).with_name("measured_reward_program.py")

# A subprocess compiling up to 12 placements: about 15-30 s on the shared machine.
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def out():
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=2",
               JAX_PLATFORMS="cpu")
    proc = subprocess.run([sys.executable, str(PROGRAM)], env=env, capture_output=True,
                          text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_each_distinct_sampled_placement_is_measured_once(out):
    # 3 updates x 4 samples drawn; repeats come from the cache, not a new compile.
    assert 1 <= out["calls"] <= 12
    assert out["calls"] == out["distinct"] == out["evaluations"]
    assert len(out["curve"]) == 3 and out["finite"]


def test_measured_steps_are_real_times_on_the_named_devices(out):
    assert 0 < out["single_step"] < 5.0           # seconds: a few 256x256 matmuls
    assert set(out["learned_devices"]) <= {"/device:GPU:0", "/device:GPU:1"}
    # The timer set real device names on the graph's ops while measuring.
    assert out["devices_after"] in ("/device:CPU:0", "/device:CPU:1")
