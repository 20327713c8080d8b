"""Conv2D and its backprop ops through oneDNN (ops/nn/conv_onednn.py, native/): that
the kernel is really called where it should be, its results against NumPy written in
the tests (cases_conv.py), its JAX gradients, and what happens without it.
(test_conv2d_im2col.py also runs its whole case list with the "onednn" choice.)"""

import os
import subprocess
import sys

import jax
import numpy as np
import pytest

import tensorflux as tf
from tensorflux._src.native import onednn
from tensorflux._src.ops.nn import conv_lowering, conv_onednn
from tensorflux._src.runtime.config import compiler_options_config
from tests.ops.cases_conv import (
    np_conv,
    np_conv_backprop_filter,
    np_conv_backprop_input,
)

needs_onednn = pytest.mark.skipif(not onednn.available(),
                                  reason=f"oneDNN kernel unavailable: "
                                         f"{onednn.unavailable_reason()}")

# (x NHWC, filter, strides, padding, dilations, the ops oneDNN runs): shapes a CNN has,
# all three ops through oneDNN (on AVX2 and AVX-512 alike), and an odd one whose
# backprops oneDNN only has GEMM-based kernels for, so they stay on XLA.
ALL = ["backprop_filter", "backprop_input", "forward"]
CASES = [
    ((4, 9, 9, 3), (3, 3, 3, 8), (1, 1), "SAME", (1, 1), ALL),
    ((2, 8, 8, 16), (3, 3, 16, 32), (2, 2), "SAME", (1, 1), ALL),
    ((2, 7, 9, 8), (1, 1, 8, 16), (1, 1), "VALID", (1, 1), ALL),
    ((1, 11, 10, 4), (3, 2, 4, 5), (2, 3), "VALID", (2, 1), ["forward"]),
]


def _window(x_shape, w_shape, strides, padding, dilations):
    from tensorflux._src.ops.nn import conv_defs

    return conv_defs._shifted_window(x_shape, w_shape, [1, *strides, 1], padding, (),
                                     "NHWC", [1, *dilations, 1])


def _run(build, mode="onednn"):
    """Runs the fetches `build()` returns in a session forced to `mode`, counting the
    oneDNN calls its lowering made."""
    calls = []
    originals = {k: getattr(conv_onednn, k) for k in
                 ("forward", "backprop_input", "backprop_filter", "backprop_pair")}

    def spy(name):
        def call(*args, **kwargs):
            calls.append(name)
            return originals[name](*args, **kwargs)
        return call

    mp = pytest.MonkeyPatch()
    for name in originals:
        mp.setattr(conv_onednn, name, spy(name))
    try:
        with tf.Graph().as_default():
            fetches, feeds = build()
            config = compiler_options_config({conv_lowering.CONV2D: mode})
            with tf.Session(config=config) as sess:
                sess.run(tf.global_variables_initializer())
                return sess.run(fetches, feeds), calls
    finally:
        mp.undo()


# x, filter, strides, padding of a strided layer, for the tests that call the kernels
STRIDED = ((2, 7, 7, 3), (3, 3, 3, 4), (2, 2), "SAME")


def _strided_problem(seed):
    """(rng, x, w, dy, the kernels' window kwargs) for STRIDED, drawn from `seed`."""
    rng = np.random.default_rng(seed)
    x_shape, w_shape, strides, padding = STRIDED
    x = rng.uniform(-1, 1, x_shape).astype(np.float32)
    w = rng.uniform(-1, 1, w_shape).astype(np.float32)
    window, out = _window(x_shape, w_shape, strides, padding, (1, 1))
    dy = rng.uniform(-1, 1, (x_shape[0], *out, w_shape[3])).astype(np.float32)
    return rng, x, w, dy, dict(out=out, data_format="NHWC", **window)


def _through_onednn(ops):
    """The calls the lowerings make for `ops`: a layer's two backprops are one paired
    call where the kernel runs them side by side (two OpenMP threads)."""
    ops = sorted(ops)
    if conv_onednn.pairs() and {"backprop_filter", "backprop_input"} <= set(ops):
        ops = sorted([o for o in ops if not o.startswith("backprop")] + ["backprop_pair"])
    return ops


def _assert_backprops(got_dx, got_dw, x, w, dy, strides, padding, dilations=None):
    """dx and dw against the NumPy backprops of the NHWC convolution of x and w."""
    np.testing.assert_allclose(
        got_dx, np_conv_backprop_input(x.shape, w, dy, strides, padding, dilations, "NHWC"),
        rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(
        got_dw, np_conv_backprop_filter(x, w.shape, dy, strides, padding, dilations, "NHWC"),
        rtol=1e-4, atol=1e-4)


@needs_onednn
@pytest.mark.parametrize("case", CASES)
def test_the_session_calls_onednn_and_matches_numpy(case):
    x_shape, w_shape, strides, padding, dilations, through_onednn = case
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, x_shape).astype(np.float32)
    w = rng.uniform(-1, 1, w_shape).astype(np.float32)
    y = np_conv(x, w, strides, padding, dilations, "NHWC")
    dy = rng.uniform(-1, 1, y.shape).astype(np.float32)
    st, dl = [1, *strides, 1], [1, *dilations, 1]

    def build():
        px, pw, pdy = (tf.placeholder(tf.float32, v.shape) for v in (x, w, dy))
        return [tf.nn.conv2d(px, pw, st, padding, dilations=dl),
                tf.nn.conv2d_backprop_input(list(x_shape), pw, pdy, st, padding,
                                            dilations=dl),
                tf.nn.conv2d_backprop_filter(px, list(w_shape), pdy, st, padding,
                                             dilations=dl)], {px: x, pw: w, pdy: dy}

    (got_y, got_dx, got_dw), calls = _run(build)
    assert sorted(calls) == _through_onednn(through_onednn)
    np.testing.assert_allclose(got_y, y, rtol=1e-4, atol=1e-4)
    _assert_backprops(got_dx, got_dw, x, w, dy, strides, padding, dilations)


@needs_onednn
def test_training_step_gradients_match_numpy():
    """tf.gradients of a conv layer's loss: the graph's backprop ops run through oneDNN
    and give NumPy's dL/dx and dL/dw."""
    rng = np.random.default_rng(2)
    x = rng.uniform(-1, 1, (3, 6, 6, 4)).astype(np.float32)
    w = rng.uniform(-1, 1, (3, 3, 4, 5)).astype(np.float32)
    v = rng.uniform(-1, 1, (3, 6, 6, 5)).astype(np.float32)

    def build():
        px, pw = tf.placeholder(tf.float32, x.shape), tf.placeholder(tf.float32, w.shape)
        loss = tf.reduce_sum(v * tf.nn.conv2d(px, pw, [1, 1, 1, 1], "SAME"))
        return tf.gradients(loss, [px, pw]), {px: x, pw: w}

    (gx, gw), calls = _run(build)
    # y itself is not needed
    assert sorted(calls) == _through_onednn(["backprop_filter", "backprop_input"])
    _assert_backprops(gx, gw, x, w, v, (1, 1), "SAME")


@needs_onednn
def test_a_layers_two_gradients_are_paired_only_when_both_run():
    """Two conv layers on variables (read through Identity ops, as TF1's tf.Variable):
    the second layer's dx and dw go into one call, the first layer has only dw (its
    input is fed); fetching the second layer's dw alone leaves it on its own."""
    rng = np.random.default_rng(5)
    x = rng.uniform(-1, 1, (3, 8, 8, 3)).astype(np.float32)
    w1 = rng.uniform(-1, 1, (3, 3, 3, 6)).astype(np.float32)
    w2 = rng.uniform(-1, 1, (3, 3, 6, 4)).astype(np.float32)
    v = rng.uniform(-1, 1, (3, 8, 8, 4)).astype(np.float32)

    def build(fetch_all=True):
        px = tf.placeholder(tf.float32, x.shape)
        k1, k2 = tf.Variable(w1), tf.Variable(w2)
        h = tf.nn.conv2d(px, k1, [1, 1, 1, 1], "SAME")
        loss = tf.reduce_sum(v * tf.nn.conv2d(h, k2, [1, 1, 1, 1], "SAME"))
        grads = tf.gradients(loss, [k1, k2])
        return grads if fetch_all else grads[1], {px: x}

    (g1, g2), calls = _run(build)
    assert sorted(calls) == sorted(["forward"] + _through_onednn(
        ["backprop_filter", "backprop_input"]) + ["backprop_filter"])
    h = np_conv(x, w1, (1, 1), "SAME", None, "NHWC")
    dh = np_conv_backprop_input(h.shape, w2, v, (1, 1), "SAME", None, "NHWC")
    np.testing.assert_allclose(
        g2, np_conv_backprop_filter(h, w2.shape, v, (1, 1), "SAME", None, "NHWC"),
        rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(
        g1, np_conv_backprop_filter(x, w1.shape, dh, (1, 1), "SAME", None, "NHWC"),
        rtol=1e-4, atol=1e-3)

    g2_alone, calls = _run(lambda: build(fetch_all=False))
    assert sorted(calls) == ["backprop_filter", "forward"]
    np.testing.assert_allclose(g2_alone, g2, rtol=1e-5, atol=1e-5)


@needs_onednn
def test_the_paired_call_matches_numpy_and_differentiates_as_convolutions():
    rng, x, w, dy, kwargs = _strided_problem(6)
    x_shape, w_shape, strides, padding = x.shape, w.shape, STRIDED[2], STRIDED[3]

    pair = jax.jit(lambda x_, w_, dy_: conv_onednn.backprop_pair(x_, w_, dy_, **kwargs))
    assert onednn.PAIR_TARGET in pair.lower(x, w, dy).as_text()
    _assert_backprops(*pair(x, w, dy), x, w, dy, strides, padding)

    # d/dw sum(dx^2) = backprop_filter(2 dx, dy); d/dx sum(dw * c) = backprop_input(c, dy)
    c = rng.uniform(-1, 1, w_shape).astype(np.float32)

    def objective(x_, w_):
        dx, dw = conv_onednn.backprop_pair(x_, w_, dy, **kwargs)
        return (dx ** 2).sum() + (dw * c).sum()

    gx, gw = jax.grad(objective, argnums=(0, 1))(x, w)
    dx = np_conv_backprop_input(x_shape, w, dy, strides, padding, None, "NHWC")
    np.testing.assert_allclose(
        gw, np_conv_backprop_filter(2 * dx, w_shape, dy, strides, padding, None, "NHWC"),
        rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(
        gx, np_conv_backprop_input(x_shape, c, dy, strides, padding, None, "NHWC"),
        rtol=1e-4, atol=1e-3)


@needs_onednn
@pytest.mark.parametrize("threads", ["1", "2", "3"])
def test_the_paired_call_is_right_with_any_thread_count(threads):
    """Side by side with OpenMP's two threads, in turn with any other count (nested
    parallel regions in oneDNN gave wrong filter gradients with 3 and more)."""
    code = """
import numpy as np, jax
from tensorflux._src.native import onednn
from tensorflux._src.ops.nn import conv_defs, conv_onednn
from tests.ops.cases_conv import np_conv_backprop_filter, np_conv_backprop_input
rng = np.random.default_rng(7)
xs, ws = (4, 12, 12, 16), (3, 3, 16, 24)
window, out = conv_defs._shifted_window(xs, ws, [1, 1, 1, 1], "SAME", (), "NHWC", [1] * 4)
x = rng.uniform(-1, 1, xs).astype(np.float32)
w = rng.uniform(-1, 1, ws).astype(np.float32)
dy = rng.uniform(-1, 1, (4, *out, 24)).astype(np.float32)
dx, dw = jax.jit(lambda *a: conv_onednn.backprop_pair(*a, out=out, data_format="NHWC",
                                                      **window))(x, w, dy)
ex = np.abs(dx - np_conv_backprop_input(xs, w, dy, (1, 1), "SAME", None, "NHWC")).max()
ew = np.abs(dw - np_conv_backprop_filter(x, ws, dy, (1, 1), "SAME", None, "NHWC")).max()
print(onednn.pairs(), ex < 1e-3 and ew < 1e-3)
"""
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    got = _fresh_process({"OMP_NUM_THREADS": threads, "PYTHONPATH": repo}, code)
    assert got == f"{threads == '2'} True"


@needs_onednn
def test_jax_differentiates_the_calls_as_convolutions():
    """Inside a function body the compiler differentiates lowerings with jax.vjp: each
    oneDNN call's VJP is its convolution's (first and second order, against NumPy)."""
    _, x, w, v, kwargs = _strided_problem(3)
    x_shape, w_shape, strides, padding = x.shape, w.shape, STRIDED[2], STRIDED[3]

    def loss(x_, w_):
        return (v * conv_onednn.forward(x_, w_, **kwargs)).sum()

    text = jax.jit(loss).lower(x, w).as_text()
    assert onednn.TARGET in text
    _assert_backprops(*jax.grad(loss, argnums=(0, 1))(x, w), x, w, v, strides, padding)

    # second order: sum(dx^2) with dx = backprop_input(w, v) has d/dw = backprop_filter(2 dx, v)
    def dx_norm(w_):
        return (conv_onednn.backprop_input(x_shape, w_, v, **kwargs) ** 2).sum()

    dx = np_conv_backprop_input(x_shape, w, v, strides, padding, None, "NHWC")
    want = np_conv_backprop_filter(2 * dx, w_shape, v, strides, padding, None, "NHWC")
    np.testing.assert_allclose(jax.grad(dx_norm)(w), want, rtol=1e-4, atol=1e-3)


@needs_onednn
def test_calls_from_many_threads_at_once_each_get_their_own_result():
    """Programs running at once on several threads, each with two calls XLA may run
    concurrently, all get their own answers. With oneDNN's default (library)
    scratchpad, shared by all primitives and tied to the creating thread, this gave
    wrong filter gradients or hung; the kernel passes each call its own scratchpad."""
    import concurrent.futures

    x_shape, w_shape = (2, 8, 8, 4), (3, 3, 4, 6)
    window, out = _window(x_shape, w_shape, (1, 1), "SAME", (1, 1))
    kwargs = dict(out=out, data_format="NHWC", **window)

    @jax.jit
    def both(x, w, dy):  # two independent calls XLA may run at once
        return (conv_onednn.forward(x, w, **kwargs),
                conv_onednn.backprop_filter(x, w_shape, dy, **kwargs))

    rng = np.random.default_rng(4)
    problems = [tuple(rng.uniform(-1, 1, s).astype(np.float32)
                      for s in (x_shape, w_shape, (2, *out, 6))) for _ in range(6)]

    def solve(problem):
        return [both(*problem) for _ in range(20)]

    with concurrent.futures.ThreadPoolExecutor(6) as pool:
        answers = list(pool.map(solve, problems))
    for (x, w, dy), repeats in zip(problems, answers):
        want_y = np_conv(x, w, (1, 1), "SAME", None, "NHWC")
        want_dw = np_conv_backprop_filter(x, w_shape, dy, (1, 1), "SAME", None, "NHWC")
        for y, dw in repeats:
            np.testing.assert_allclose(y, want_y, rtol=1e-4, atol=1e-4)
            np.testing.assert_allclose(dw, want_dw, rtol=1e-4, atol=1e-4)


@needs_onednn
def test_ops_it_cannot_run_fast_keep_xla():
    window, out = _window((1, 5, 5, 4), (3, 3, 4, 4), (1, 1), "SAME", (1, 1))
    args = dict(out=out, data_format="NHWC", **window)
    assert conv_onednn.usable(0, (1, 5, 5, 4), (3, 3, 4, 4), np.float32, **args)
    assert not conv_onednn.usable(0, (1, 5, 5, 4), (3, 3, 4, 4), np.float64, **args)
    assert not conv_onednn.usable(0, (1, 5, 5, 4), (3, 3, 2, 4), np.float32, **args)  # grouped
    assert not conv_onednn.usable(0, (0, 5, 5, 4), (3, 3, 4, 4), np.float32, **args)  # empty
    ok, reason = onednn.plan(0, 0, (1, 5, 5, 4), (3, 3, 4, 4), (1, 9, 9, 4), (1, 1), (1, 1),
                             (1, 1), (1, 1))  # an output size the window cannot make
    assert not ok and "no forward convolution" in reason


def test_a_float64_graph_forced_to_onednn_runs_on_xla():
    x = np.arange(2 * 5 * 5 * 2, dtype=np.float64).reshape(2, 5, 5, 2) / 10
    w = np.linspace(-1, 1, 3 * 3 * 2 * 3).reshape(3, 3, 2, 3)

    def build():
        px, pw = tf.placeholder(tf.float64, x.shape), tf.placeholder(tf.float64, w.shape)
        return tf.nn.conv2d(px, pw, [1, 1, 1, 1], "SAME"), {px: x, pw: w}

    got, calls = _run(build)
    assert calls == []  # float64: XLA's convolution
    np.testing.assert_allclose(got, np_conv(x, w, (1, 1), "SAME", None, "NHWC"),
                               rtol=1e-12)


def _fresh_process(env, code):
    env = {**os.environ, **env}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_turned_off_or_unbuildable_means_not_offered(tmp_path):
    code = ("from tensorflux._src.native import onednn\n"
            "from tensorflux._src.ops.nn import conv_lowering as c\n"
            "print(onednn.available(), c.alternatives(c.CONV2D), '|', "
            "onednn.unavailable_reason())")
    off = _fresh_process({"TENSORFLUX_ONEDNN": "0"}, code)
    assert off == "False ('im2col', 'conv') | turned off by TENSORFLUX_ONEDNN"
    # a fresh build directory (the cache's, so on) and a compiler that fails
    broken = _fresh_process({"TENSORFLUX_CACHE_DIR": str(tmp_path),
                             "TENSORFLUX_COMPILATION_CACHE": "1", "CXX": "false"}, code)
    assert broken.startswith("False ('im2col', 'conv') |")
    if onednn.library_path() is not None:
        assert "failed" in broken
        assert not [p for p in (tmp_path / "native").iterdir() if p.suffix == ".so"]
    # a "library" that is not one: the link fails, and nothing is raised
    fake = tmp_path / "libdnnl.so.3"
    fake.write_text("not a shared library")
    bogus = _fresh_process({"TENSORFLUX_CACHE_DIR": str(tmp_path / "other"),
                            "TENSORFLUX_COMPILATION_CACHE": "1",
                            "TENSORFLUX_ONEDNN_LIBRARY": str(fake)}, code)
    assert bogus.startswith("False ('im2col', 'conv') |")


def test_a_library_that_cannot_be_loaded_only_loses_the_alternative(tmp_path, monkeypatch):
    """A built kernel whose dependencies are missing (ctypes raises OSError)."""
    monkeypatch.setattr(onednn, "_build", lambda library: (str(tmp_path / "missing.so"), None))
    monkeypatch.setattr(onednn, "library_path", lambda: str(tmp_path / "libdnnl.so.3"))
    monkeypatch.setenv("TENSORFLUX_ONEDNN", "1")
    lib, reason = onednn._load()
    assert lib is None and "could not be loaded" in reason and "missing.so" in reason
