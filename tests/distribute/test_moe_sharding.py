"""Expert parallelism: a mixture-of-experts layer under MirroredStrategy over 4 devices
(tokens split by group, experts by the expert axis) computes what it does on one device,
and XLA moves tokens to their experts with all-to-alls.

JAX fixes its devices at start, so moe_programs.py runs in a subprocess with
XLA_FLAGS=--xla_force_host_platform_device_count=4, dumping the optimized HLO."""

import json
import os
import pathlib
import subprocess
import sys

import pytest

PROGRAM = pathlib.Path(__file__).with_name("moe_programs.py")
TOLERANCE = 1e-5  # float32 sums in a different order


@pytest.fixture(scope="module")
def sharded(tmp_path_factory):
    dump = tmp_path_factory.mktemp("hlo")
    env = dict(os.environ, JAX_PLATFORMS="cpu", XLA_FLAGS=(
        f"--xla_force_host_platform_device_count=4 --xla_dump_to={dump}"))
    proc = subprocess.run([sys.executable, str(PROGRAM), "4"], env=env, capture_output=True,
                          text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    optimized = [p.read_text() for p in dump.glob("*after_optimizations.txt")]
    return json.loads(proc.stdout.strip().splitlines()[-1]), optimized


def test_sharded_experts_match_one_device(sharded):
    out, _ = sharded
    assert out["plan"] == "cluster_0 on cpu x4 replicas (SPMD)"
    assert out["zero_rows"] >= 1  # capacity 1.0 dropped a token, the same way on both
    assert out["output_diff"] < TOLERANCE
    assert out["loss_diff"] < TOLERANCE and out["var_diff"] < TOLERANCE


def test_dispatch_is_an_all_to_all(sharded):
    _, optimized = sharded
    step = [text for text in optimized if "all-to-all(" in text]
    assert step, "no compiled module moves tokens with an all-to-all"
