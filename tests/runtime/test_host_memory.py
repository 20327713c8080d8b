"""Big host buffers are reused between runs instead of page-faulted in afresh
(runtime/host_memory.py): counted with the kernel's page-fault counter, in child
processes with the setting on (the default) and off."""

import json
import os
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

glibc_only = pytest.mark.skipif(
    not (hasattr(os, "confstr") and os.confstr("CS_GNU_LIBC_VERSION") or "").startswith(
        "glibc"), reason="the setting is glibc's malloc")

# A run whose temporary buffer holds a loop's 64 MB state, done again and again as a
# training loop does: the faults of a run once the heap has grown to its working size
# are what every step pays.
CHILD = """
import json, resource
import numpy as np
import tensorflux as tf
from tensorflux._src.runtime import host_memory
x = tf.placeholder(tf.float32, [4096, 4096])
_, doubled = tf.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v * 2.0), [0, x])
y = tf.reduce_sum(doubled[:, :8])
data = np.ones((4096, 4096), np.float32)
WARMUP, RUNS = 4, 8
with tf.Session() as sess:
    for _ in range(WARMUP):
        sess.run(y, {x: data})
    per_run = []
    for _ in range(RUNS):
        before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        value = sess.run(y, {x: data})
        per_run.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
# The median run: the heap sometimes still grows by one buffer in a run after the
# warm-up (fragmentation settling), which is not what a step pays once it has.
print(json.dumps({"installed": host_memory.INSTALLED, "faults": float(np.median(per_run)),
                  "value": float(value)}))
"""


def _run(setting):
    env = dict(os.environ, TENSORFLUX_COMPILATION_CACHE="0")
    env.pop("TENSORFLUX_REUSE_HOST_MEMORY", None)
    if setting is not None:
        env["TENSORFLUX_REUSE_HOST_MEMORY"] = setting
    env["PYTHONPATH"] = REPO + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True,
                          text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@glibc_only
def test_a_second_run_reuses_its_temporary_buffer():
    kept, returned = _run(None), _run("off")
    assert kept["installed"] and not returned["installed"]
    assert kept["value"] == returned["value"] == 4096 * 8 * 8.0
    pages = 64 * 2**20 // 4096
    # Off, the temporary buffer and the fed array's copy are mapped afresh at every
    # run: a fault per page of each.
    assert returned["faults"] > pages * 3 // 2, returned
    # On, they come back from the heap.
    assert kept["faults"] < pages // 10, kept


def test_off_values_turn_it_off(monkeypatch):
    from tensorflux._src.runtime import host_memory
    for value in ("0", "false", "OFF", " no "):
        monkeypatch.setenv("TENSORFLUX_REUSE_HOST_MEMORY", value)
        assert not host_memory.wanted() and not host_memory.install()
    monkeypatch.setenv("TENSORFLUX_REUSE_HOST_MEMORY", "1")
    assert host_memory.wanted()
