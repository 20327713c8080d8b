"""Queues, queue runners, the Coordinator and the queue-based input pipeline."""

import threading
import time

import numpy as np
import pytest

import tensorflux as tf


def _run_in_thread(fn):
    out = {}

    def target():
        try:
            out["value"] = fn()
        except Exception as e:  # noqa: BLE001 - reported to the test
            out["error"] = e

    t = threading.Thread(target=target, daemon=True)
    t.start()
    return t, out


# -- FIFOQueue ----------------------------------------------------------------------------
def test_fifo_order_size_and_names():
    q = tf.FIFOQueue(10, [tf.int32, tf.string], shapes=[[], []])
    assert q.name == "fifo_queue" and q.dtypes == [tf.int32, tf.string]
    enq = q.enqueue_many([[1, 2, 3], [b"a", b"b", b"c"]])
    n, s = q.dequeue()
    assert n.op.name == "fifo_queue_Dequeue" and n.shape == []
    with tf.Session() as sess:
        sess.run(enq)
        assert sess.run(q.size()) == 3
        assert [tuple(sess.run([n, s])) for _ in range(3)] == [(1, b"a"), (2, b"b"), (3, b"c")]


def test_named_queue_enqueue_and_dequeue_dicts():
    q = tf.FIFOQueue(5, [tf.float32, tf.int64], shapes=[[2], []], names=["x", "label"])
    enq = q.enqueue({"x": [1.0, 2.0], "label": 7})
    out = q.dequeue()
    with tf.Session() as sess:
        sess.run(enq)
        got = sess.run(out)
    assert set(got) == {"x", "label"}
    np.testing.assert_array_equal(got["x"], [1.0, 2.0])
    assert got["label"] == 7
    with pytest.raises(ValueError, match="must enqueue a dictionary"):
        q.enqueue([[1.0, 2.0], 3])


def test_dequeue_many_and_up_to_shapes_and_values():
    q = tf.FIFOQueue(10, tf.float32, shapes=[[2]])
    enq = q.enqueue_many([np.arange(10, dtype=np.float32).reshape(5, 2)])
    many, up_to = q.dequeue_many(2), q.dequeue_up_to(4)
    assert many.shape.as_list() == [2, 2] and up_to.shape.as_list() == [None, 2]
    with tf.Session() as sess:
        sess.run(enq)
        np.testing.assert_array_equal(sess.run(many), [[0, 1], [2, 3]])
        sess.run(q.close())
        np.testing.assert_array_equal(sess.run(up_to), [[4, 5], [6, 7], [8, 9]])
        with pytest.raises(tf.errors.OutOfRangeError,
                           match=r"FIFOQueue '_0_fifo_queue' is closed and has insufficient "
                                 r"elements \(requested 4, current size 0\)"):
            sess.run(up_to)


def test_closed_queue_messages():
    q = tf.FIFOQueue(3, tf.float32)
    enq, deq, close = q.enqueue(1.0), q.dequeue(), q.close()
    with tf.Session() as sess:
        sess.run(enq)
        sess.run(close)
        assert sess.run(q.is_closed())
        assert sess.run(deq) == 1.0  # what is left is still dequeued
        with pytest.raises(tf.errors.OutOfRangeError) as info:
            sess.run(deq)
        assert ("FIFOQueue '_0_fifo_queue' is closed and has insufficient elements "
                "(requested 1, current size 0)") in str(info.value)
        with pytest.raises(tf.errors.CancelledError, match="FIFOQueue '_0_fifo_queue' is "
                                                           "closed."):
            sess.run(enq)
        with pytest.raises(tf.errors.CancelledError, match="is already closed"):
            sess.run(close)
        sess.run(q.close(cancel_pending_enqueues=True))  # closing with cancel: no error


def test_dequeue_many_needs_shapes_and_shape_checks():
    q = tf.FIFOQueue(3, tf.float32)
    many = q.dequeue_many(2)
    q2 = tf.FIFOQueue(3, tf.float32, shapes=[[2]])
    with pytest.raises(ValueError):
        q2.enqueue([[1.0, 2.0, 3.0]])
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="require the components to have specified shapes"):
            sess.run(many)
    with pytest.raises(ValueError, match="fully defined"):
        tf.FIFOQueue(3, tf.float32, shapes=[[None]])


def test_two_sessions_have_independent_queues():
    q = tf.FIFOQueue(3, tf.int32, shapes=[[]])
    enq, deq = q.enqueue_many([[1, 2]]), q.dequeue()
    with tf.Session() as a, tf.Session() as b:
        a.run(enq)
        assert a.run(q.size()) == 2 and b.run(q.size()) == 0
        b.run(q.enqueue(9))
        assert a.run(deq) == 1 and b.run(deq) == 9


def test_capacity_blocks_enqueue_until_a_dequeue():
    q = tf.FIFOQueue(2, tf.int32, shapes=[[]])
    enq, deq = q.enqueue_many([[1, 2]]), q.dequeue()
    third = q.enqueue(3)
    with tf.Session() as sess:
        sess.run(enq)
        t, out = _run_in_thread(lambda: sess.run(third))
        time.sleep(0.2)
        assert t.is_alive()  # full: the enqueue waits
        assert sess.run(deq) == 1
        t.join(5)
        assert not t.is_alive() and "error" not in out
        assert [sess.run(deq) for _ in range(2)] == [2, 3]


def test_dequeue_blocks_until_enqueue_from_several_threads():
    q = tf.FIFOQueue(10, tf.int32, shapes=[[]])
    deq, enq = q.dequeue(), q.enqueue_many([[5, 6, 7]])
    with tf.Session() as sess:
        waiting = [_run_in_thread(lambda: sess.run(deq)) for _ in range(3)]
        time.sleep(0.2)
        assert all(t.is_alive() for t, _ in waiting)
        sess.run(enq)
        for t, _ in waiting:
            t.join(5)
        assert sorted(out["value"] for _, out in waiting) == [5, 6, 7]


def test_dequeue_many_larger_than_capacity_takes_elements_as_they_come():
    q = tf.FIFOQueue(2, tf.int32, shapes=[[]])
    many = q.dequeue_many(5)
    enq = q.enqueue_many([[0, 1, 2, 3, 4]])
    with tf.Session() as sess:
        t, out = _run_in_thread(lambda: sess.run(many))
        sess.run(enq)
        t.join(5)
        np.testing.assert_array_equal(out["value"], [0, 1, 2, 3, 4])


def test_close_cancels_pending_enqueues():
    q = tf.FIFOQueue(1, tf.int32, shapes=[[]])
    first, second = q.enqueue(1), q.enqueue(2)
    with tf.Session() as sess:
        sess.run(first)
        t, out = _run_in_thread(lambda: sess.run(second))
        time.sleep(0.1)
        sess.run(q.close(cancel_pending_enqueues=True))
        t.join(5)
        assert isinstance(out["error"], tf.errors.CancelledError)
        assert "Enqueue operation was cancelled" in str(out["error"])
        assert sess.run(q.dequeue()) == 1


def test_session_close_cancels_blocked_dequeue():
    q = tf.FIFOQueue(1, tf.int32, shapes=[[]])
    deq = q.dequeue()
    sess = tf.Session()
    sess.run(q.size())
    t, out = _run_in_thread(lambda: sess.run(deq))
    time.sleep(0.2)
    sess.close()
    t.join(5)
    assert not t.is_alive()
    assert isinstance(out["error"], tf.errors.CancelledError)


# -- PaddingFIFOQueue and RandomShuffleQueue ----------------------------------------------
def test_padding_queue_pads_to_the_largest_element():
    q = tf.PaddingFIFOQueue(5, [tf.int32, tf.string], shapes=[[None], []])
    enqs = [q.enqueue([v, s]) for v, s in (([1], b"a"), ([2, 3, 4], b"b"), ([5, 6], b"c"))]
    values, strings = q.dequeue_many(3)
    assert values.shape.as_list() == [3, None]
    with tf.Session() as sess:
        sess.run(enqs)
        got, names = sess.run([values, strings])
    np.testing.assert_array_equal(got, [[1, 0, 0], [2, 3, 4], [5, 6, 0]])
    assert list(names) == [b"a", b"b", b"c"]
    with pytest.raises(ValueError, match="partial shapes"):
        tf.PaddingFIFOQueue(5, tf.int32, shapes=None)


def test_random_shuffle_queue_is_a_seeded_permutation():
    def draw():
        tf.reset_default_graph()
        q = tf.RandomShuffleQueue(50, 0, tf.int32, shapes=[[]], seed=7)
        enq, close, many = q.enqueue_many([np.arange(20)]), q.close(), q.dequeue_many(20)
        with tf.Session() as sess:
            sess.run([enq])
            sess.run(close)
            return list(sess.run(many))

    first, second = draw(), draw()
    assert sorted(first) == list(range(20)) and first != list(range(20))
    assert first == second


def test_random_shuffle_queue_keeps_min_after_dequeue_until_closed():
    q = tf.RandomShuffleQueue(10, 3, tf.int32, shapes=[[]], seed=1)
    enq, deq = q.enqueue_many([[1, 2, 3, 4]]), q.dequeue()
    with tf.Session() as sess:
        sess.run(enq)
        first = sess.run(deq)
        t, out = _run_in_thread(lambda: sess.run(deq))
        time.sleep(0.2)
        assert t.is_alive()  # only 3 left: must wait
        sess.run(q.close())
        t.join(5)
        rest = [out["value"], sess.run(deq), sess.run(deq)]
        assert sorted([first] + rest) == [1, 2, 3, 4]
        with pytest.raises(tf.errors.OutOfRangeError, match="RandomShuffleQueue"):
            sess.run(deq)


# -- QueueRunner and Coordinator ----------------------------------------------------------
def test_queue_runner_fills_and_closes_at_end_of_input():
    x = tf.train.range_input_producer(5, num_epochs=2, shuffle=False).dequeue()
    assert tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS)
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        got = []
        with pytest.raises(tf.errors.OutOfRangeError,
                           match="FIFOQueue '_0_input_producer' is closed"):
            while True:
                got.append(sess.run(x))
        coord.request_stop()
        coord.join(threads)
    assert got == [0, 1, 2, 3, 4] * 2


def test_coordinator_reports_a_thread_exception():
    coord = tf.train.Coordinator()

    def worker():
        with coord.stop_on_exception():
            raise ValueError("boom")

    t = threading.Thread(target=worker)
    t.start()
    assert coord.wait_for_stop(5)
    with pytest.raises(ValueError, match="boom"):
        coord.join([t])
    clean = tf.train.Coordinator()
    clean.request_stop(tf.errors.OutOfRangeError(None, None, "end"))
    clean.join([])  # OutOfRangeError is a clean stop
    clean.raise_requested_exception()


def test_closing_the_session_stops_blocked_runners_without_tracebacks():
    q = tf.FIFOQueue(2, tf.int32, shapes=[[]])
    runner = tf.train.QueueRunner(q, [q.enqueue(1)] * 2)
    errors_seen = []
    old_hook = threading.excepthook
    threading.excepthook = lambda args: errors_seen.append(args)
    try:
        sess = tf.Session()
        threads = runner.create_threads(sess, start=True)
        time.sleep(0.3)  # the queue is full: both runners block in enqueue
        assert all(t.is_alive() for t in threads)
        sess.close()
        for t in threads:
            t.join(5)
        assert not any(t.is_alive() for t in threads)
    finally:
        threading.excepthook = old_hook
    assert not errors_seen and not runner.exceptions_raised


# -- batching -----------------------------------------------------------------------------
def test_batch_dynamic_pad_and_smaller_final_batch():
    q = tf.FIFOQueue(10, tf.int32, shapes=[[]])
    n = q.dequeue()
    seq = tf.range(n)
    batch = tf.train.batch([seq], batch_size=2, dynamic_pad=True,
                           allow_smaller_final_batch=True)
    assert batch.shape.as_list() == [None, None]
    with tf.Session() as sess:
        sess.run(q.enqueue_many([[1, 3, 2]]))
        sess.run(q.close())
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        np.testing.assert_array_equal(sess.run(batch), [[0, 0, 0], [0, 1, 2]])
        np.testing.assert_array_equal(sess.run(batch), [[0, 1]])
        with pytest.raises(tf.errors.OutOfRangeError):
            sess.run(batch)
        coord.request_stop()
        coord.join(threads)


def test_batch_join_and_shuffle_batch_join_enqueue_many():
    a = tf.constant(np.arange(6).reshape(3, 2), tf.int64)
    b = tf.constant(np.arange(6, 12).reshape(3, 2), tf.int64)
    joined = tf.train.batch_join([[a], [b]], batch_size=6, enqueue_many=True)
    shuffled = tf.train.shuffle_batch_join([{"v": a}, {"v": b}], batch_size=4, capacity=20,
                                           min_after_dequeue=2, enqueue_many=True, seed=3)
    assert joined.shape.as_list() == [6, 2] and set(shuffled) == {"v"}
    with tf.Session() as sess:
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        rows = sess.run(joined)
        got = sess.run(shuffled)["v"]
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=5)
    # The runners enqueue their inputs again and again; every row stays whole.
    assert all(r[0] in (0, 2, 4, 6, 8, 10) and r[1] == r[0] + 1 for r in rows)
    assert got.shape == (4, 2) and all(r[1] == r[0] + 1 for r in got)


def test_end_to_end_training_on_digits_sees_every_example_each_epoch():
    from tensorflux.datasets import load_digits
    (x_all, y_all), _ = load_digits()
    n, epochs, batch_size = 200, 2, 40  # 10 full batches
    x_np = x_all[:n].reshape(n, 64).astype(np.float32) / 16.0
    y_np = y_all[:n].astype(np.int32)
    before = set(threading.enumerate())
    tf.set_random_seed(0)
    x, y, index = tf.train.slice_input_producer(
        [tf.constant(x_np), tf.constant(y_np), tf.range(n)], num_epochs=epochs, seed=1)
    xb, yb, ib = tf.train.shuffle_batch([x, y, index], batch_size=batch_size, capacity=64,
                                        min_after_dequeue=16, num_threads=2, seed=2)
    logits = tf.layers.dense(xb, 10)
    loss = tf.losses.sparse_softmax_cross_entropy(yb, logits)
    train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
    seen, losses = [], []
    with tf.Session() as sess:
        sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        try:
            while not coord.should_stop():
                _, value, labels, idx = sess.run([train, loss, yb, ib])
                np.testing.assert_array_equal(labels, y_np[idx])  # rows stay together
                seen.extend(idx)
                losses.append(value)
        except tf.errors.OutOfRangeError:
            pass
        finally:
            coord.request_stop()
        coord.join(threads, stop_grace_period_secs=10)
    assert len(seen) == n * epochs
    assert np.bincount(seen, minlength=n).tolist() == [epochs] * n
    assert np.mean(losses[-3:]) < np.mean(losses[:3])
    time.sleep(0.05)
    stray = [t for t in threading.enumerate() if t not in before and t.is_alive()]
    assert not stray, stray


def test_monitored_training_session_starts_and_joins_queue_runners():
    values = np.arange(10, dtype=np.int64)
    (item,) = tf.train.slice_input_producer([values], num_epochs=3, shuffle=False)
    batch = tf.train.batch([item], batch_size=4, allow_smaller_final_batch=True)
    before = set(threading.enumerate())
    seen = []
    # No start_queue_runners call: the monitored session starts them, as in TF1.
    with tf.train.MonitoredTrainingSession() as sess:
        while not sess.should_stop():
            seen.extend(sess.run(batch).tolist())
    assert seen == values.tolist() * 3
    time.sleep(0.1)
    assert not [t for t in threading.enumerate() if t not in before and t.is_alive()]
