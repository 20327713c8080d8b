"""Per-cluster XLA compiler options: candidates, autotuning, the session's override."""

import types

import jax
import numpy as np
import pytest

import tensorflux as tf
from tensorflux._src.compiler import options
from tensorflux._src.ops.nn import conv_lowering
from tensorflux._src.runtime.config import compiler_options_config

CPU = jax.devices("cpu")[0]
KEY = options.LIBRARY_FUSION_KEY


def cpu(*option_sets):
    """What the candidates on CPU are: each set over the CPU defaults."""
    return [{**options.CPU_DEFAULTS, **o} for o in option_sets]


def _op(library_fusion, lowering_choices=()):
    return types.SimpleNamespace(op_def=types.SimpleNamespace(
        xla_cpu_library_fusion=library_fusion, lowering_choices=lowering_choices))


def test_candidates_only_for_marked_ops():
    assert options.candidates([_op(False), _op(False)], CPU) == cpu({})
    assert options.candidates([_op(False), _op(True)], CPU) == cpu(options.LIBRARY_DOT_FUSION, {})


def test_library_fusion_candidate_keeps_reductions_in_the_library():
    # Naming DOT alone in the (list-valued) field takes reductions out of the library,
    # and XLA:CPU then rewrites a long sum into a slow reduce-window.
    bias_grad = jax.jit(lambda g: g.sum(axis=(0, 1, 2))).lower(
        jax.ShapeDtypeStruct((64, 8, 8, 16), np.float32))
    dot_only = bias_grad.compile({KEY: "LIBRARY_FUSION_TYPE_DOT"}).as_text()
    candidate = bias_grad.compile(options.LIBRARY_DOT_FUSION).as_text()
    assert "reduce-window" in dot_only
    assert "reduce-window" not in candidate and "ynn" in candidate


def test_user_setting_the_key_turns_tuning_off_and_none_removes():
    assert options.candidates([_op(True)], CPU, {KEY: None}) == cpu({})
    assert options.candidates([_op(True)], CPU, {KEY: "LIBRARY_FUSION_TYPE_DOT"}) == cpu(
        {KEY: "LIBRARY_FUSION_TYPE_DOT"})
    other = {"xla_cpu_enable_fast_math": True}
    assert options.candidates([_op(False)], CPU, other) == cpu(other)


def test_lowering_switches_multiply_the_candidates():
    dw = conv_lowering.DEPTHWISE
    ops = [_op(True, (dw,)), _op(True)]
    assert options.candidates(ops, CPU) == cpu(
        {dw: "shifted", KEY: options.LIBRARY_DOT_FUSION[KEY]}, {dw: "shifted"},
        {dw: "grouped_conv", KEY: options.LIBRARY_DOT_FUSION[KEY]}, {dw: "grouped_conv"})
    # the lowering switches are varied before library fusion
    assert options.candidate_axes(ops, CPU)[-1] == [options.LIBRARY_DOT_FUSION, {}]
    # a switch the user set is not tuned; None means the default lowering
    assert options.candidates(ops, CPU, {dw: "shifted", KEY: None}) == cpu({dw: "shifted"})
    assert options.candidates(ops, CPU, {dw: None}) == cpu(options.LIBRARY_DOT_FUSION, {})
    # off CPU nothing is tuned
    gpu = types.SimpleNamespace(platform="gpu")
    assert options.candidates(ops, gpu) == [{}]


def test_a_cpu_only_lowering_chosen_for_a_gpu_is_dropped():
    conv2d = conv_lowering.CONV2D
    gpu = types.SimpleNamespace(platform="gpu")
    seen = []

    def fn():
        seen.append(conv_lowering.choice(conv2d))

    for device, want in ((gpu, "conv"), (CPU, "onednn")):
        traced, _, xla_options = options.bind(fn, {conv2d: "onednn", "x": 1}, device)
        traced()
        assert seen.pop() == want and xla_options == {"x": 1}
    traced, _, _ = options.bind(fn, {conv2d: "im2col"}, gpu)  # portable choices stay
    traced()
    assert seen.pop() == "im2col"


def test_unknown_lowering_choice_names_the_alternatives():
    dw = conv_lowering.DEPTHWISE
    with pytest.raises(ValueError, match="tensorflux_depthwise_lowering.*'shifted', "
                                         "'grouped_conv'.*got 'fast'"):
        options.candidates([_op(True, (dw,))], CPU, {dw: "fast"})


def test_bind_takes_lowering_switches_out_of_xla_options():
    dw = conv_lowering.DEPTHWISE
    seen = []

    def fn(x):
        seen.append(conv_lowering.choice(dw))
        return x

    bound, device, xla = options.bind(fn, {dw: "shifted", KEY: "LIBRARY_FUSION_TYPE_DOT"},
                                      CPU)
    assert device is CPU and xla == {KEY: "LIBRARY_FUSION_TYPE_DOT"}
    bound(1)
    fn(1)
    assert seen == ["shifted", "grouped_conv"]  # only while the bound function runs


def test_autotuner_keeps_the_faster_candidate():
    import time

    def slow(x):
        time.sleep(0.02)
        return x + 1

    def fast(x):
        return x + 1

    tuner = options.Autotuner([slow, fast], [{"name": "slow"}, {"name": "fast"}])
    calls = (options.Autotuner.WARMUP + options.Autotuner.TIMED) * 2
    for i in range(calls):
        assert tuner(i) == i + 1
    assert tuner.chosen == 1 and tuner.options == {"name": "fast"}
    assert tuner(10) == 11


def test_autotuner_searches_one_axis_at_a_time():
    """Three two-way axes: 4 candidates are compared (1 + 1 + 1 + 1), not 8; each
    axis keeps the choice that made the step faster."""
    import time
    shape = (2, 2, 2)
    # seconds of candidate (a, b, c): axis 0 prefers 1, axis 1 prefers 0, axis 2 prefers 1
    cost = {combo: 0.004 * (combo[0] == 0) + 0.004 * combo[1] + 0.004 * (combo[2] == 0)
            for combo in np.ndindex(*shape)}
    called = set()

    def make(combo):
        def run(x):
            called.add(combo)
            time.sleep(cost[combo])
            return x + 1
        return run

    combos = list(np.ndindex(*shape))
    tuner = options.Autotuner([make(c) for c in combos], [{"c": c} for c in combos],
                              shape=shape)
    for i in range(3 * 2 * (options.Autotuner.WARMUP + options.Autotuner.TIMED)):
        assert tuner(i) == i + 1
    assert tuner.options == {"c": (1, 0, 1)}
    assert called == {(0, 0, 0), (1, 0, 0), (1, 1, 0), (1, 0, 1)}
    assert [o["c"] for o, _ in tuner.report] == [(0, 0, 0), (1, 0, 0), (1, 0, 0),
                                                 (1, 1, 0), (1, 0, 0), (1, 0, 1)]


def test_conv_training_step_is_autotuned_and_state_stays_consistent():
    x = tf.placeholder(tf.float32, [2, 6, 6, 3])
    w = tf.Variable(np.full((3, 3, 3, 4), 0.1, np.float32))
    loss = tf.reduce_sum(tf.square(tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME")))
    train = tf.train.GradientDescentOptimizer(1e-4).minimize(loss)
    feed = {x: np.ones((2, 6, 6, 3), np.float32)}
    losses = []
    with tf.Session() as sess:
        sess.run(w.initializer)
        for _ in range(30):  # the first runs alternate between the executables
            losses.append(sess.run([loss, train], feed)[0])
        run = [r for r in sess._runs.values()
               if any(op.type == "Conv2D" for op in r.executable.traced_ops)][0]
        assert run.executable.clusters[0].autotuner.chosen is not None
        assert not run.executable.tuning
        conv2d = conv_lowering.CONV2D
        # oneDNN's kernel is an alternative where it could be built (native/onednn.py)
        lowerings = conv_lowering.alternatives(conv2d)
        assert lowerings[:2] == ("im2col", "conv")
        assert run.executable.compiler_options in cpu(
            *({**options.LIBRARY_DOT_FUSION, conv2d: c} for c in lowerings),
            *({conv2d: c} for c in lowerings))
    # plain gradient descent on a convex loss: every step lowers it
    assert all(b < a for a, b in zip(losses, losses[1:]))


def test_session_config_reaches_the_executable():
    config = compiler_options_config({KEY: "LIBRARY_FUSION_TYPE_DOT"})
    x = tf.placeholder(tf.float32, [2, 2])
    y = tf.matmul(x, x)
    with tf.Session(config=config) as sess:
        got = sess.run(y, {x: np.eye(2, dtype=np.float32)})
        (run,) = sess._runs.values()
        assert run.executable.compiler_options == cpu({KEY: "LIBRARY_FUSION_TYPE_DOT"})[0]
    np.testing.assert_array_equal(got, np.eye(2))


def test_cpu_defaults_apply_and_a_session_can_remove_them():
    region = "xla_cpu_copy_insertion_use_region_analysis"
    assert options.CPU_DEFAULTS == {region: True}
    assert options.candidates([_op(False)], CPU, {region: None}) == [{}]
    assert options.candidates([_op(False)], CPU, {region: False}) == [{region: False}]
    gpu = types.SimpleNamespace(platform="gpu")
    assert options.candidates([_op(False)], gpu) == [{}]


def test_a_session_compiles_with_the_cpu_defaults():
    x = tf.placeholder(tf.float32, [2, 2])
    with tf.Session() as sess:
        sess.run(tf.matmul(x, x), {x: np.eye(2, dtype=np.float32)})
        (run,) = sess._runs.values()
        assert run.executable.compiler_options == options.CPU_DEFAULTS
