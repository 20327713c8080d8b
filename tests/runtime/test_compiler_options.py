"""Per-cluster XLA compiler options: the rule and the session's override."""

import types

import jax
import numpy as np

import tensorflux as tf
from tensorflux._src.compiler import options

CPU = jax.devices("cpu")[0]


def _op(library_fusion):
    return types.SimpleNamespace(op_def=types.SimpleNamespace(
        xla_cpu_library_fusion=library_fusion))


def test_rule_picks_library_fusion_only_for_marked_ops():
    assert options.choose([_op(False), _op(False)], CPU) == {}
    assert options.choose([_op(False), _op(True)], CPU) == options.LIBRARY_DOT_FUSION


def test_user_options_win_and_none_removes():
    key = "xla_cpu_experimental_ynn_fusion_type"
    assert options.choose([_op(True)], CPU, {key: None}) == {}
    assert options.choose([_op(False)], CPU, {"xla_cpu_enable_fast_math": True}) == {
        "xla_cpu_enable_fast_math": True}


def test_session_config_reaches_the_executable():
    key = "xla_cpu_experimental_ynn_fusion_type"
    config = tf.ConfigProto(compiler_options={key: "LIBRARY_FUSION_TYPE_DOT"})
    x = tf.placeholder(tf.float32, [2, 2])
    y = tf.matmul(x, x)
    with tf.Session(config=config) as sess:
        got = sess.run(y, {x: np.eye(2, dtype=np.float32)})
        (run,) = sess._runs.values()
        assert run.executable.compiler_options == {key: "LIBRARY_FUSION_TYPE_DOT"}
    np.testing.assert_array_equal(got, np.eye(2))
