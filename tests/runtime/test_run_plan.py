"""The run plan: compiled clusters interleaved with host steps, and how a user sees it."""

import numpy as np
import pytest

import tensorflux as tf
from tensorflux._src.ops.array.host_ops import where_indices
from tensorflux._src.runtime.config import run_plan, step_kind


def test_run_metadata_lists_each_step_and_where_it_ran():
    x = tf.placeholder(tf.float32, [None], name="x")
    idx = where_indices(x * 2.0 > 1.0)
    total = tf.reduce_sum(tf.cast(idx, tf.float32) + 0.5, name="total")
    metadata = tf.RunMetadata()
    with tf.Session() as sess:
        got = sess.run(total, {x: [1.0, 0.0, 3.0]}, run_metadata=metadata)
    assert got == (0 + 0.5) + (2 + 0.5)
    kinds = [step_kind(d) for d in metadata.step_stats.dev_stats]
    assert kinds == ["xla:cluster_0", "host", "xla:cluster_1"]
    names = [[n.node_name for n in d.node_stats] for d in metadata.step_stats.dev_stats]
    assert names[1] == ["Where"]
    assert "Greater" in names[0] and "total" in names[2]
    assert run_plan(metadata)[1] == "host: Where (Where)"


def test_a_graph_without_host_ops_is_one_cluster():
    x = tf.placeholder(tf.float32, [2])
    y = tf.reduce_sum(tf.sin(x) * 3.0)
    metadata = tf.RunMetadata()
    with tf.Session() as sess:
        sess.run(y, {x: [0.1, 0.2]}, run_metadata=metadata)
    assert [step_kind(d) for d in metadata.step_stats.dev_stats] == ["xla:cluster_0"]


def test_variables_written_before_a_host_op_are_seen_after_it():
    v = tf.Variable(np.array([1.0, -1.0, 2.0], np.float32))
    bumped = tf.assign_add(v, [1.0, 1.0, 1.0])  # cluster 0 writes v
    positive = where_indices(bumped > 1.0)  # host
    with tf.control_dependencies([positive]):
        reread = tf.reduce_sum(v.read_value()) + tf.cast(tf.size(positive), tf.float32)
    with tf.Session() as sess:
        sess.run(v.initializer)
        # v becomes [2, 0, 3]; two entries are > 1; the read after the host step sees v's
        # new value: 5 + 2
        assert sess.run(reread) == 7.0


def test_a_variable_read_runs_with_its_consumers_after_a_host_step():
    # The read of a variable used only after a host step joins that cluster instead of
    # being a cluster-0 output (a copy of the whole variable every run); it still reads
    # the value the run started with when the same cluster then writes the variable.
    table = tf.Variable(np.arange(12, dtype=np.float32).reshape(4, 3), name="table")
    x = tf.placeholder(tf.float32, [None], name="x")
    idx = where_indices(x > 1.0)  # host
    total = tf.reduce_sum(tf.gather(table, tf.cast(idx[:, 0], tf.int32)), name="total")
    with tf.control_dependencies([total]):
        update = tf.assign_add(table, tf.ones([4, 3]))
    metadata = tf.RunMetadata()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got = [sess.run([total, update], {x: [0.0, 2.0, 3.0]}, run_metadata=metadata)[0]
               for _ in range(2)]
    assert got == [(3 + 4 + 5) + (6 + 7 + 8), (3 + 4 + 5) + (6 + 7 + 8) + 6]
    assert "table/read" not in run_plan(metadata)[0]
    assert "table/read" in run_plan(metadata)[-1]


def test_fed_and_host_computed_shapes_compile_in_as_constants():
    x = tf.placeholder(tf.float32, [None])
    shape = tf.placeholder(tf.int32, [2])
    reshaped = tf.reshape(x, shape) * 2.0  # Reshape needs `shape` at compile time
    z = tf.placeholder(tf.float32, [None, 2])
    uniques = tf.reshape(tf.unique(x).y, tf.shape(z))  # the shape crosses clusters
    xv = np.arange(6, dtype=np.float32)
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(reshaped, {x: xv, shape: [2, 3]}),
                                   xv.reshape(2, 3) * 2)
        np.testing.assert_allclose(sess.run(reshaped, {x: xv, shape: [3, 2]}),
                                   xv.reshape(3, 2) * 2)
        traces = sess.compile_stats.traces
        sess.run(reshaped, {x: xv + 1, shape: [3, 2]})  # a shape seen before: no tracing
        assert sess.compile_stats.traces == traces
        got = sess.run(uniques, {x: [1.0, 2.0, 3.0, 4.0, 1.0], z: np.zeros((2, 2))})
        np.testing.assert_allclose(got, [[1.0, 2.0], [3.0, 4.0]])


def test_compiled_math_interleaved_with_unique_py_func_and_an_assert():
    x = tf.placeholder(tf.float32, [None])
    doubled = x * 2.0  # cluster 0
    values, _ = tf.unique(doubled)  # host
    shifted = values + 1.0  # cluster 1
    sorted_desc = tf.py_func(lambda v: np.sort(v)[::-1].copy(), [shifted], tf.float32)  # host
    check = tf.Assert(tf.reduce_all(sorted_desc > 0.0), [sorted_desc])  # cluster 2
    with tf.control_dependencies([check]):
        total = tf.reduce_sum(sorted_desc * 10.0)
    with tf.Session() as sess:
        for xv in ([1.0, 2.0, 1.0, 3.0], [4.0, 4.0, 5.0, 6.0], [0.5, 0.25, 0.5, 3.0]):
            expected = np.sum((np.unique(np.array(xv) * 2.0) + 1.0) * 10.0)
            assert sess.run(total, {x: xv}) == np.float32(expected)
        # three clusters, each compiled once for these shapes; repeated runs trace nothing
        compiled = sess.compile_stats.executables
        traces = sess.compile_stats.traces
        for _ in range(3):
            sess.run(total, {x: [7.0, 8.0, 7.0, 9.0]})
        assert sess.compile_stats.traces == traces
        assert sess.compile_stats.executables == compiled
        with pytest.raises(tf.errors.InvalidArgumentError, match="assertion failed"):
            sess.run(total, {x: [-5.0, 1.0, 1.0, 1.0]})
    metadata = tf.RunMetadata()
    with tf.Session() as sess:
        sess.run(total, {x: [1.0, 2.0, 1.0, 3.0]}, run_metadata=metadata)
    kinds = [step_kind(d) for d in metadata.step_stats.dev_stats]
    assert kinds == ["xla:cluster_0", "host", "xla:cluster_1", "host", "xla:cluster_2"]


def test_pure_work_waits_for_the_last_cluster_instead_of_splitting_one():
    x = tf.placeholder(tf.float32, [None], name="x")
    scaled = tf.multiply(x, 3.0, name="scaled")  # needed only by the fetch: runs late
    noise = tf.random_uniform([], seed=1, name="noise")  # likewise; its stream is per op
    idx = where_indices(x > 1.0)  # host, on the feed
    total = tf.add(tf.reduce_sum(tf.cast(idx, tf.float32)), noise, name="total")
    metadata = tf.RunMetadata()
    with tf.Session() as sess:
        got_scaled, got_total = sess.run([scaled, total], {x: [2.0, 0.0, 5.0]},
                                         run_metadata=metadata)
    np.testing.assert_allclose(got_scaled, [6.0, 0.0, 15.0])
    assert 2.0 <= got_total < 3.0  # indices 0 and 2, plus a draw in [0, 1)
    # Greater must run before Where; the rest goes with the sum after it.
    assert run_plan(metadata)[0] == "cluster_0 on cpu: Greater"
    assert run_plan(metadata)[1] == "host: Where (Where)"
    assert len(run_plan(metadata)) == 3
    assert all(name in run_plan(metadata)[2] for name in ("scaled", "noise", "total"))


def test_variable_updates_stay_before_the_host_step_that_follows_them():
    v = tf.Variable(1.0)
    bump = tf.assign_add(v, 1.0)
    x = tf.placeholder(tf.float32, [None])
    idx = where_indices(x > 0.0)  # host, unrelated to v
    with tf.control_dependencies([bump]):
        seen = tf.py_func(lambda i: np.float32(len(i)), [idx], tf.float32)
    metadata = tf.RunMetadata()
    with tf.Session() as sess:
        sess.run(v.initializer)
        assert sess.run(seen, {x: [1.0, -1.0]}, run_metadata=metadata) == 1.0
        assert sess.run(v) == 2.0
    plan = run_plan(metadata)
    assert plan[0].startswith("cluster_0") and "AssignAdd" in plan[0]
