"""compiler/graph_key.py: a cluster's key is the same for the same graph built again, and
differs whenever what the cluster computes could differ; a cluster it cannot describe
(a control-flow body) has no key, so it is never served a stored executable."""

import numpy as np
import pytest

import tensorflux as tf
from tensorflux._src.compiler import graph_key


def _keys(build):
    """The keys of the clusters a run of `build()`'s fetch compiles, in a fresh graph."""
    with tf.Graph().as_default():
        fetch = build()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(fetch)
            return [graph_key.cluster_key(c) for e in sess._executables.values()
                    for c in e.clusters if any(t is fetch or t.op is fetch
                                               for t in c.exports) or fetch in c.ops]


def _conv(strides=1, scale=2.0, shape=(2, 8, 8, 3)):
    def build():
        x = tf.constant(np.linspace(-1, 1, int(np.prod(shape)), dtype=np.float32)
                        .reshape(shape))
        w = tf.get_variable("w", [3, 3, shape[-1], 4],
                            initializer=tf.glorot_uniform_initializer(seed=1))
        loss = tf.reduce_mean(tf.nn.conv2d(x * scale, w, [1, strides, strides, 1], "SAME"))
        return tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    return build


def test_the_same_graph_built_twice_has_the_same_key():
    first, second = _keys(_conv()), _keys(_conv())
    assert len(first) == 1 and first[0] is not None and len(first[0]) == 64
    assert first == second


def test_what_the_cluster_computes_changes_the_key():
    base = _keys(_conv())
    assert _keys(_conv(strides=2)) != base  # an attribute
    assert _keys(_conv(scale=3.0)) != base  # a constant compiled in
    assert _keys(_conv(shape=(2, 8, 8, 2))) != base  # static shapes


def test_a_control_flow_body_has_no_key():
    def build():
        x = tf.get_variable("x", [], initializer=tf.ones_initializer())
        _, y = tf.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a * 2.0), [0, x])
        return tf.assign(x, y)
    assert _keys(build) == [None]


def test_an_op_named_outside_the_cluster_makes_it_unkeyable():
    # Named alone, an op elsewhere would stand for contents the key never saw.
    with tf.Graph().as_default():
        inside = tf.constant(1.0).op
        outside = tf.constant(2.0).op
        refs = {inside: "#0"}.get
        assert graph_key._value_text(inside, refs) == "#0"
        assert graph_key._value_text(inside.outputs[0], refs) == "#0:0"
        with pytest.raises(graph_key.Unkeyable):
            graph_key._value_text(outside, refs)


def test_renaming_ops_keeps_the_key():
    def scoped(name):
        def build():
            with tf.variable_scope(name):
                return _conv()()
        return build
    assert _keys(scoped("first")) == _keys(scoped("second"))


def test_xla_flags_and_jax_settings_change_the_toolchain(monkeypatch):
    import jax
    before = graph_key.toolchain_version()
    monkeypatch.setenv("XLA_FLAGS", "--xla_cpu_enable_fast_math=false")
    flagged = graph_key.toolchain_version()
    assert flagged != before
    jax.config.update("jax_numpy_rank_promotion", "warn")
    try:
        assert graph_key.toolchain_version() not in (before, flagged)
    finally:
        jax.config.update("jax_numpy_rank_promotion", "allow")
    assert graph_key.toolchain_version() == flagged
