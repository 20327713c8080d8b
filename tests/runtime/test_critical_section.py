"""tf.CriticalSection: executions from concurrent Session.run calls never interleave."""

import threading

import numpy as np
import pytest

import tensorflux as tf


def _counter_graph():
    g = tf.Graph()
    with g.as_default():
        v = tf.Variable(0, name="v")
        cs = tf.CriticalSection(name="cs")
        events = []

        def record(tag, x):
            events.append((tag, threading.get_ident()))
            return x

        def fn():
            enter = tf.py_func(lambda x: record("enter", x), [tf.constant(0)], tf.int32)
            with tf.control_dependencies([enter]):
                up = v.assign_add(1)
            with tf.control_dependencies([up]):
                value = v.read_value() + 0  # a copy: ref reads alias the buffer
            leave = tf.py_func(lambda x: record("exit", x), [value], tf.int32)
            return leave

        out = cs.execute(fn)
    return g, v, cs, out, events


def test_concurrent_executions_never_interleave():
    g, v, cs, out, events = _counter_graph()
    assert cs.name == "cs"
    n_threads, n_runs = 3, 15
    with tf.Session(graph=g) as sess:
        sess.run(v.initializer)
        sess.run(out)  # compile once
        seen = [[] for _ in range(n_threads)]

        def worker(k):
            for _ in range(n_runs):
                seen[k].append(int(sess.run(out)))

        threads = [threading.Thread(target=worker, args=(k,)) for k in range(n_threads)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        total = n_threads * n_runs + 1
        assert sess.run(v) == total
    # Each run saw a distinct count: the increments were atomic.
    values = sorted(x for s in seen for x in s)
    assert values == list(range(2, total + 1))
    # enter/exit alternate and each pair comes from one thread.
    tags = [e[0] for e in events]
    assert tags == ["enter", "exit"] * (len(events) // 2)
    assert all(events[i][1] == events[i + 1][1] for i in range(0, len(events), 2))


def test_two_executions_in_one_run_are_serial_and_outputs_keep_structure():
    g = tf.Graph()
    with g.as_default():
        v = tf.Variable(10.0)
        cs = tf.CriticalSection()

        def count():
            with tf.control_dependencies([v.assign_add(1.0)]):
                return {"a": v.read_value() * 1.0, "b": (tf.constant(3),)}

        r1 = cs.execute(count)
        r2 = cs.execute(count, name="second")
        both = r1["a"] + r2["a"]
        with tf.Session() as sess:
            sess.run(v.initializer)
            got = sess.run([r1, r2, both])
    assert sorted([got[0]["a"], got[1]["a"]]) == [11.0, 12.0]
    assert got[2] == 23.0 and got[0]["b"] == (3,)
    assert r2["a"].op.name.startswith("second/")


def test_failed_run_releases_the_mutex():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32)
        cs = tf.CriticalSection()

        def checked():
            with tf.control_dependencies([tf.debugging.assert_positive(x)]):
                return x * 2.0

        out = cs.execute(checked)
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError):
                sess.run(out, {x: -1.0})
            assert sess.run(out, {x: 2.0}) == 4.0  # would block if the lock were held


def test_errors():
    g = tf.Graph()
    with g.as_default():
        cs = tf.CriticalSection(shared_name="m")
        with pytest.raises(ValueError, match="Attempting to lock a CriticalSection in which "
                                             "we are already running"):
            cs.execute(lambda: cs.execute(lambda: tf.constant(1)))
        v = tf.Variable(1.0, name="w")
        cs.execute(lambda: v.assign_add(1.0))
        other = tf.CriticalSection()
        with pytest.raises(ValueError, match=r"This execution would access resources: .*"
                                             r"requested exclusive resource access of this "
                                             r"resource"):
            other.execute(lambda: v.assign_add(1.0))
        with pytest.raises(ValueError, match="not supported"):
            tf.CriticalSection(critical_section_def=object())
        # Neither exclusive: allowed.
        cs2 = tf.CriticalSection()
        u = tf.Variable(2.0)
        cs2.execute(lambda: u.assign_add(1.0), exclusive_resource_access=False)
        tf.CriticalSection().execute(lambda: u.assign_add(1.0), exclusive_resource_access=False)
        assert len(g.get_collection("critical_sections")) == 4  # cs, other, cs2, and the last one


def test_operation_output_and_session_close_cancels_waiters():
    g = tf.Graph()
    with g.as_default():
        v = tf.Variable(0)
        cs = tf.CriticalSection()
        op = cs.execute(lambda: v.assign_add(5).op)
        assert isinstance(op, tf.Operation)
        inside, go_on = threading.Event(), threading.Event()

        def hold(x):
            inside.set()
            go_on.wait(10)
            return x

        held = cs.execute(lambda: tf.py_func(hold, [tf.constant(1)], tf.int32))
        sess = tf.Session()
        sess.run(v.initializer)
        sess.run(op)
        assert sess.run(v) == 5
        results = {}

        def run(key, fetch):
            try:
                results[key] = sess.run(fetch)
            except tf.errors.OpError as e:
                results[key] = e

        a = threading.Thread(target=run, args=("a", held))
        a.start()
        assert inside.wait(10)
        b = threading.Thread(target=run, args=("b", op))
        b.start()
        b.join(0.3)
        assert b.is_alive()  # waiting for the mutex
        sess.close()
        b.join(10)
        go_on.set()
        a.join(10)
        assert isinstance(results["b"], tf.errors.CancelledError)
        assert results["a"] == 1
