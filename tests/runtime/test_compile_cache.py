"""The persistent compilation cache (compiler/compile_cache.py): a second process running
the same program compiles nothing, the cache can be turned off, and a broken cache
directory costs only compile time. Each case runs fresh Python processes with their own
tmp cache directory (the suite itself runs with the cache off, see conftest.py)."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from tensorflux._src.compiler import compile_cache

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# A small conv net trained for 30 steps: the initializer and the training step are
# compiled, and the step (a convolution) goes through the compiler-option autotuner,
# which settles after at most 25 calls. Prints what JAX's cache did as one JSON line.
CHILD = r"""
import json, os
from jax import monitoring
counts = {}
monitoring.register_event_listener(
    lambda name, **kw: counts.__setitem__(name, counts.get(name, 0) + 1))
import numpy as np
import tensorflux as tf
from tensorflux._src.compiler import persistent

if os.environ.get("FAIL_AFRESH"):  # the fresh compile for storing runs out of memory
    def fail(lowered):
        raise __import__("jax").errors.JaxRuntimeError("RESOURCE_EXHAUSTED: simulated")
    persistent._compile_afresh = fail

tf.set_random_seed(1)
x = tf.constant(np.linspace(-1, 1, 2 * 8 * 8 * 3, dtype=np.float32).reshape(2, 8, 8, 3))
w = tf.get_variable("w", [3, 3, 3, 4], initializer=tf.glorot_uniform_initializer())
loss = tf.reduce_mean(tf.square(tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME")))
train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    # the autotuner compares the conv lowerings (3 with oneDNN's, 5 calls each), then
    # library fusion (10 calls)
    losses = [float(sess.run([train, loss])[1])
              for _ in range(int(os.environ.get("STEPS", "30")))]
    clusters = [c for e in sess._executables.values() for c in e.clusters]
    tuners = [c.autotuner for c in clusters if c.autotuner is not None]
    loaded = [isinstance(c.jitted, persistent.Persistent) and c.jitted.loaded
              for c in clusters]
requests = counts.get("/jax/compilation_cache/compile_requests_use_cache", 0)
hits = counts.get("/jax/compilation_cache/cache_hits", 0)
print(json.dumps({"requests": requests, "hits": hits, "losses": losses,
                  "remembered": [t.remembered for t in tuners], "loaded": loaded}))
"""


# A check in a compiled step whose executable a second process loads without tracing:
# a good run, then a NaN that must fail with the check's own message and leave the
# variable as it was. SCALE (a constant compiled into the step) changes the graph.
CHECK_CHILD = r"""
import json, os
import numpy as np
import tensorflux as tf
from tensorflux._src.compiler import persistent

x = tf.placeholder(tf.float32, [3])
v = tf.Variable(np.zeros(3, np.float32))
step = tf.assign_add(v, tf.check_numerics(x * float(os.environ["SCALE"]), "x had bad values"))
out = {}
with tf.Session() as sess:
    sess.run(v.initializer)
    out["value"] = sess.run(step, {x: np.array([1, 2, 3], np.float32)}).tolist()
    try:
        sess.run(step, {x: np.array([1, np.nan, 3], np.float32)})
        out["error"] = None
    except tf.errors.InvalidArgumentError as e:
        out["error"] = e.message
    out["after"] = sess.run(v).tolist()
    clusters = [c for e in sess._executables.values() for c in e.clusters
                if isinstance(c.jitted, persistent.Persistent)]
    out["loaded"] = [c.jitted.loaded for c in clusters]
    out["step_loaded"] = [c.jitted.loaded for c in clusters
                          if any(op.type == "AssignAdd" for op in c.ops)]
print(json.dumps(out))
"""


def _run(env_updates, tmp_path, child=CHILD):
    env = dict(os.environ)
    env.pop("TENSORFLUX_COMPILATION_CACHE", None)
    env.update(env_updates)
    env["PYTHONPATH"] = REPO + os.pathsep + env.get("PYTHONPATH", "")
    env["HOME"] = str(tmp_path / "home")  # never the user's ~/.cache, whatever happens
    env.pop("XDG_CACHE_HOME", None)
    proc = subprocess.run([sys.executable, "-c", child], env=env, capture_output=True,
                          text=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1]), proc.stderr


def _entries(path):
    return sorted(os.listdir(path)) if os.path.isdir(path) else []


def test_second_process_compiles_nothing(tmp_path):
    cache = tmp_path / "cache"
    first, _ = _run({"TENSORFLUX_CACHE_DIR": str(cache)}, tmp_path)
    assert first["requests"] > 0 and first["hits"] == 0
    written = _entries(cache / "xla")
    assert written, "no executable was written to the cache"
    assert len(_entries(cache / "autotune")) >= 1  # the conv step's option choice

    second, _ = _run({"TENSORFLUX_CACHE_DIR": str(cache)}, tmp_path)
    # Every executable the second process needed came from disk: nothing compiled.
    assert second["requests"] > 0 and second["hits"] == second["requests"]
    assert _entries(cache / "xla") == written
    assert second["remembered"] and all(second["remembered"])  # no timing again
    # ... and no tracing: the executables were stored by the graph (persistent.py).
    assert not any(first["loaded"]) and second["loaded"] and all(second["loaded"])
    assert _entries(cache / "executables")
    # The same training; a tuning process's steps alternate between candidate
    # executables (XLA's conv and im2col dots among them), which round differently, so
    # only the last bits may differ.
    np.testing.assert_allclose(second["losses"], first["losses"], rtol=1e-5)


def test_stored_after_a_process_that_ended_while_tuning(tmp_path):
    # A first process that stops before the autotuner has chosen leaves JAX's cache
    # holding every candidate but stores no executable. The next one chooses, from
    # executables JAX's cache served; it must still store the chosen one (compiled
    # again) so that a third process loads it without tracing.
    env = {"TENSORFLUX_CACHE_DIR": str(tmp_path / "cache")}
    short, _ = _run({**env, "STEPS": "3"}, tmp_path)
    assert not any(short["loaded"])
    assert not _entries(tmp_path / "cache" / "autotune")  # still tuning when it ended
    # A failed fresh compile costs the store, not the run.
    failed, _ = _run({**env, "FAIL_AFRESH": "1"}, tmp_path)
    assert failed["hits"] > 0 and not all(failed["loaded"])  # the step was traced
    assert len(failed["losses"]) == 30 and np.all(np.isfinite(failed["losses"]))
    tuned, _ = _run(env, tmp_path)
    assert tuned["hits"] > 0 and not all(tuned["loaded"])  # not stored by the failed one
    third, _ = _run(env, tmp_path)
    assert third["loaded"] and all(third["loaded"])
    assert third["remembered"] and all(third["remembered"])
    np.testing.assert_allclose(third["losses"], tuned["losses"], rtol=1e-5)


def test_disabled_by_environment(tmp_path):
    cache = tmp_path / "cache"
    for _ in range(2):
        result, _ = _run({"TENSORFLUX_CACHE_DIR": str(cache),
                          "TENSORFLUX_COMPILATION_CACHE": "0"}, tmp_path)
        assert result["hits"] == 0
    assert not cache.exists()


def test_unwritable_directory_falls_back_to_compiling(tmp_path):
    blocker = tmp_path / "a_file"
    blocker.write_text("not a directory")
    reference, _ = _run({"TENSORFLUX_COMPILATION_CACHE": "0"}, tmp_path)
    result, stderr = _run({"TENSORFLUX_CACHE_DIR": str(blocker / "cache")}, tmp_path)
    assert "compilation cache disabled" in stderr
    assert result["hits"] == 0
    # The same training, compiled again. Each process tunes its conv step on its own:
    # timing noise may keep a different candidate (XLA's conv or the im2col dots), and
    # those round differently, so only the last bits may differ.
    np.testing.assert_allclose(result["losses"], reference["losses"], rtol=1e-5)


def test_corrupt_entries_are_compiled_again(tmp_path):
    cache = tmp_path / "cache"
    first, _ = _run({"TENSORFLUX_CACHE_DIR": str(cache)}, tmp_path)
    for folder in ("xla", "autotune", "executables"):
        for name in _entries(cache / folder):
            path = cache / folder / name
            if path.is_file():
                path.write_bytes(b"\x00garbage")
    second, stderr = _run({"TENSORFLUX_CACHE_DIR": str(cache)}, tmp_path)
    assert second["hits"] == 0
    assert "persistent compilation cache" in stderr  # JAX's warning per bad entry
    # The same training; a tuning process's steps alternate between candidate
    # executables (XLA's conv and im2col dots among them), which round differently, so
    # only the last bits may differ.
    np.testing.assert_allclose(second["losses"], first["losses"], rtol=1e-5)
    assert second["remembered"] == [False] * len(second["remembered"])  # timed again
    assert not any(second["loaded"])


def test_loaded_step_reports_a_failed_check(tmp_path):
    cache = {"TENSORFLUX_CACHE_DIR": str(tmp_path / "cache"), "SCALE": "2"}
    first, _ = _run(cache, tmp_path, CHECK_CHILD)
    second, _ = _run(cache, tmp_path, CHECK_CHILD)
    assert not any(first["loaded"]) and second["loaded"] and all(second["loaded"])
    for result in (first, second):
        assert result["value"] == [2.0, 4.0, 6.0]
        assert "x had bad values : Tensor had NaN values" in result["error"]
        assert "CheckNumerics" in result["error"]  # the node that failed
        assert result["after"] == [2.0, 4.0, 6.0]  # the failed step wrote nothing


def test_a_changed_graph_is_not_served_a_stored_executable(tmp_path):
    cache = str(tmp_path / "cache")
    _run({"TENSORFLUX_CACHE_DIR": cache, "SCALE": "2"}, tmp_path, CHECK_CHILD)
    other, _ = _run({"TENSORFLUX_CACHE_DIR": cache, "SCALE": "3"}, tmp_path, CHECK_CHILD)
    # The initializer and the read are the same graphs; the step is another.
    assert other["step_loaded"] == [False] and other["value"] == [3.0, 6.0, 9.0]
    again, _ = _run({"TENSORFLUX_CACHE_DIR": cache, "SCALE": "2"}, tmp_path, CHECK_CHILD)
    assert all(again["loaded"]) and again["value"] == [2.0, 4.0, 6.0]


def test_default_directory(monkeypatch, tmp_path):
    monkeypatch.delenv("TENSORFLUX_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert compile_cache.default_dir() == str(tmp_path / "xdg" / "tensorflux")
    monkeypatch.setenv("TENSORFLUX_CACHE_DIR", str(tmp_path / "mine"))
    assert compile_cache.default_dir() == str(tmp_path / "mine")


@pytest.mark.parametrize("value, off", [("0", True), ("off", True), ("1", False), ("", False)])
def test_switch_values(monkeypatch, value, off):
    monkeypatch.setenv("TENSORFLUX_COMPILATION_CACHE", value)
    assert compile_cache.disabled_by_env() is off


def test_initializers_compile_as_one_executable():
    import tensorflux as tf
    for i, init in enumerate([tf.glorot_uniform_initializer(), tf.truncated_normal_initializer(),
                              tf.random_uniform_initializer(), tf.zeros_initializer()]):
        tf.get_variable(f"v{i}", [3, 4], initializer=init)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.compile_stats.executables == 1


def test_manifest_is_kept_per_toolchain(monkeypatch, tmp_path):
    # A graph's manifest lists the stored entries its sessions used, for a later
    # process to prefetch. After the toolchain changes (an upgrade, an edit) none of
    # them is ever looked up again; prefetching them would only delay the ones needed.
    import jax

    import tensorflux as tf
    from tensorflux._src.compiler import graph_key, persistent

    monkeypatch.setattr(persistent, "_path",
                        lambda name, suffix=".bin": str(tmp_path / (name + suffix)))
    prefetched = []
    monkeypatch.setattr(persistent, "load", lambda key, device: prefetched.append(key))
    graph = tf.Graph()
    with graph.as_default():
        tf.constant(1.0, name="c")
    device = jax.devices()[0]
    try:
        monkeypatch.setattr(graph_key, "toolchain_version", lambda: "before")
        persistent.open_manifest(graph, device).note("entry-before")
        assert persistent.open_manifest(graph, device).entries == ["entry-before"]
        persistent._prefetched["entry-before"].result()  # its prefetch ran
        monkeypatch.setattr(graph_key, "toolchain_version", lambda: "after")
        assert persistent.open_manifest(graph, device).entries == []
        assert prefetched == ["entry-before"]  # once, under its own toolchain only
    finally:
        persistent._prefetched.pop("entry-before", None)


# A step whose AddN goes behind the fusion barrier (native/fusion_barrier.py): a second
# process loads its stored executable without tracing, so without lowering AddN.
BARRIER_CHILD = r"""
import json
import numpy as np
import tensorflux as tf
from tensorflux._src.compiler import persistent

v = tf.Variable(np.linspace(-1, 1, 300 * 300, dtype=np.float32).reshape(300, 300))
total = tf.add_n([v, v * 2.0, tf.sin(v)])  # several consumers, 90,000 elements
step = tf.assign(v, total * 0.5 + tf.reduce_mean(total, axis=0))
with tf.Session() as sess:
    sess.run(v.initializer)
    values = [sess.run(step)[:2, :3].tolist() for _ in range(3)]
    loaded = [c.jitted.loaded for e in sess._executables.values() for c in e.clusters
              if isinstance(c.jitted, persistent.Persistent)
              and any(op.type == "AddN" for op in c.ops)]
print(json.dumps({"values": values, "loaded": loaded}))
"""


def test_a_stored_step_with_a_fusion_barrier_loads_in_a_new_process(tmp_path):
    from tensorflux._src.native import fusion_barrier
    if not fusion_barrier.available():
        pytest.skip(fusion_barrier.unavailable_reason())
    cache = tmp_path / "cache"
    first, _ = _run({"TENSORFLUX_CACHE_DIR": str(cache)}, tmp_path, BARRIER_CHILD)
    second, _ = _run({"TENSORFLUX_CACHE_DIR": str(cache)}, tmp_path, BARRIER_CHILD)
    assert first["loaded"] == [False] and second["loaded"] == [True]
    v = np.linspace(-1, 1, 300 * 300, dtype=np.float64).reshape(300, 300)
    expected = []
    for _ in range(3):
        total = v + v * 2.0 + np.sin(v)
        v = total * 0.5 + total.mean(axis=0)
        expected.append(v[:2, :3])
    np.testing.assert_allclose(second["values"], expected, rtol=1e-5)
    np.testing.assert_allclose(first["values"], expected, rtol=1e-5)
