"""PriorityQueue, QueueBase.from_list, the conditional accumulators, the maybe_batch
family, match_filenames_once and string variables: values against hand-worked
expectations, blocking behaviour, TF's errors."""

import threading
import time

import numpy as np
import pytest

import tensorflux as tf


def _in_thread(fn):
    out = {}

    def target():
        try:
            out["value"] = fn()
        except Exception as e:  # noqa: BLE001 - reported to the test
            out["error"] = e

    t = threading.Thread(target=target, daemon=True)
    t.start()
    return t, out


def test_priority_queue_order_shapes_and_errors():
    assert tf.queue.PriorityQueue is tf.PriorityQueue is tf.io.PriorityQueue
    q = tf.PriorityQueue(10, [tf.string, tf.float32], shapes=[[], [2]])
    assert q.dtypes == [tf.int64, tf.string, tf.float32]
    assert [s.as_list() for s in q.shapes] == [[], [], [2]]
    enq = q.enqueue_many([[5, 1, 3, 1], [b"e", b"a", b"c", b"a2"],
                          np.arange(8, dtype=np.float32).reshape(4, 2)])
    prio, name, value = q.dequeue_many(3)
    assert prio.shape.as_list() == [3] and value.shape.as_list() == [3, 2]
    one = q.dequeue()
    unshaped = tf.PriorityQueue(5, [tf.int32])
    bad = unshaped.enqueue([tf.constant([1, 2], tf.int64), 7])
    with tf.Session() as sess:
        sess.run(enq)
        p, n, v = sess.run([prio, name, value])
        # Smallest priority first; equal priorities in arrival order.
        np.testing.assert_array_equal(p, [1, 1, 3])
        assert list(n) == [b"a", b"a2", b"c"]
        np.testing.assert_array_equal(v, [[2, 3], [6, 7], [4, 5]])
        assert sess.run(q.size()) == 1
        # dequeue_many waits for the whole batch (TF's kernel keeps batches sorted).
        t, out = _in_thread(lambda: sess.run(q.dequeue_many(2)))
        time.sleep(0.2)
        assert t.is_alive()
        sess.run(q.enqueue([0, b"z", [9.0, 9.0]]))
        t.join(5)
        np.testing.assert_array_equal(out["value"][0], [0, 5])
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="Expected the priority element to be a scalar, but received "
                                 "shape: \\[2\\]"):
            sess.run(bad)
        sess.run(q.close())
        with pytest.raises(tf.errors.OutOfRangeError,
                           match="PriorityQueue '_0_priority_queue' is closed and has "
                                 "insufficient elements \\(requested 1, current size 0\\)"):
            sess.run(one)


def test_queue_from_list_selects_a_queue_at_run_time():
    q1 = tf.FIFOQueue(5, tf.int32, shapes=[[2]])
    q2 = tf.FIFOQueue(5, tf.int32, shapes=[[None]] and [[2]])
    index = tf.placeholder(tf.int32, [])
    chosen = tf.QueueBase.from_list(index, [q1, q2])
    assert chosen.dtypes == [tf.int32] and chosen.shapes[0].as_list() == [2]
    enq = chosen.enqueue([[1, 2]])
    with tf.Session() as sess:
        sess.run(enq, {index: 1})
        sess.run(enq, {index: 1})
        sess.run(enq, {index: 0})
        assert sess.run([q1.size(), q2.size()]) == [1, 2]
        np.testing.assert_array_equal(sess.run(chosen.dequeue(), {index: 1}), [1, 2])
    with pytest.raises(TypeError, match="A list of queues expected"):
        tf.QueueBase.from_list(0, (q1, q2))
    with pytest.raises(TypeError, match="Queues do not have matching component dtypes"):
        tf.QueueBase.from_list(0, [q1, tf.FIFOQueue(5, tf.float32)])


def test_conditional_accumulator_mean_staleness_and_blocking():
    acc = tf.ConditionalAccumulator(tf.float32, shape=[2])
    assert isinstance(acc, tf.ConditionalAccumulatorBase) and acc.name == \
        "conditional_accumulator"
    grad = tf.placeholder(tf.float32, [2])
    local_step = tf.placeholder(tf.int64, [])
    apply = acc.apply_grad(grad, local_step=local_step)
    take = acc.take_grad(2)
    count = acc.num_accumulated()
    summed = tf.ConditionalAccumulator(tf.float32, shape=[2], reduction_type="SUM")
    with tf.Session() as sess:
        sess.run(apply, {grad: [1.0, 2.0], local_step: 0})
        assert sess.run(count) == 1
        t, out = _in_thread(lambda: sess.run(take))
        time.sleep(0.2)
        assert t.is_alive()  # blocks until num_required gradients arrived
        sess.run(apply, {grad: [3.0, 5.0], local_step: 0})
        t.join(5)
        np.testing.assert_allclose(out["value"], [2.0, 3.5])
        # The take incremented the global step to 1: a local step 0 gradient is stale.
        sess.run(apply, {grad: [100.0, 100.0], local_step: 0})
        assert sess.run(count) == 0
        sess.run(acc.set_global_step(5))
        sess.run(apply, {grad: [1.0, 1.0], local_step: 4})
        sess.run(apply, {grad: [1.0, 1.0], local_step: 5})
        sess.run(apply, {grad: [3.0, 2.0], local_step: 9})
        np.testing.assert_allclose(sess.run(take), [2.0, 1.5])
        sess.run([summed.apply_grad([1.0, 1.0]), summed.apply_grad([2.0, 0.5])])
        np.testing.assert_allclose(sess.run(summed.take_grad(2)), [3.0, 1.5])
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="Argument num_required must be positive, but was 0"):
            sess.run(acc.take_grad(0))
        unknown = tf.ConditionalAccumulator(tf.float32, shape=[None])
        any_grad = tf.placeholder(tf.float32)
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="Shape mismatch: expected \\[\\?\\], got \\[2,2\\]"):
            sess.run(unknown.apply_grad(any_grad), {any_grad: np.ones((2, 2))})
    with pytest.raises(ValueError, match="are incompatible"):
        acc.apply_grad([1.0, 2.0, 3.0])
    # Closing the Session cancels a blocked take.
    sess = tf.Session()
    t, out = _in_thread(lambda: sess.run(take))
    time.sleep(0.2)
    sess.close()
    t.join(5)
    assert isinstance(out["error"], tf.errors.CancelledError)
    assert "TakeGrad operation was cancelled" in str(out["error"])


def test_sparse_conditional_accumulator_averages_each_row():
    acc = tf.SparseConditionalAccumulator(tf.float32, shape=[4, 2])
    a = acc.apply_grad([0, 2], [[1.0, 1.0], [2.0, 2.0]], grad_shape=[4, 2])
    b = acc.apply_indexed_slices_grad(
        type("Slices", (), {"indices": tf.constant([2, 3], tf.int64),
                            "values": tf.constant([[4.0, 4.0], [6.0, 6.0]]),
                            "dense_shape": tf.constant([4, 2], tf.int64)}))
    indices, values, shape = acc.take_grad(2)
    with tf.Session() as sess:
        sess.run(a)
        sess.run(b)
        i, v, s = sess.run([indices, values, shape])
        # Each row averages over the gradients holding that index.
        np.testing.assert_array_equal(i, [0, 2, 3])
        np.testing.assert_allclose(v, [[1, 1], [3, 3], [6, 6]])
        np.testing.assert_array_equal(s, [4, 2])
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="Shape mismatch: index of slice 0 exceeded limits of shape; "
                                 "index is 7 exceeded 4"):
            sess.run(acc.apply_grad([7], [[1.0, 1.0]], local_step=1))
        # A stale gradient is dropped before any check, as TF's kernel does.
        sess.run(acc.apply_grad([7], [[1.0, 1.0]], local_step=0))


def test_maybe_batch_keeps_only_selected_elements():
    x = tf.constant(np.arange(10.0))
    rows = tf.train.maybe_batch([x], x % 2 < 1, 3, enqueue_many=True)
    i = tf.train.range_input_producer(100, shuffle=False).dequeue()
    single = tf.train.maybe_batch(i, i % 3 > 0, 4)
    joined = tf.train.maybe_batch_join([[i]], tf.constant(True), 2)
    with pytest.raises(ValueError, match="cannot be a vector when `enqueue_many=False`"):
        tf.train.maybe_batch([x], x > 0, 3)
    with pytest.raises(ValueError, match="must be 0 or 1 dimensions"):
        tf.train.maybe_batch([x], tf.ones([2, 2], tf.bool), 3, enqueue_many=True)
    with tf.Session() as sess:
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        np.testing.assert_array_equal(sess.run(rows), [0, 2, 4])
        kept = np.concatenate([sess.run(single) for _ in range(3)])
        # The producer feeds 0, 1, 2, ... to both batchers; every kept id is not a
        # multiple of 3, in increasing order.
        assert all(k % 3 for k in kept) and np.all(np.diff(kept) > 0)
        assert sess.run(joined).shape == (2,)
        coord.request_stop()
        coord.join(threads)


def test_maybe_shuffle_batch_with_constant_false_enqueues_nothing():
    x = tf.constant([1.0, 2.0])
    batch = tf.train.maybe_shuffle_batch([x], 1, capacity=10, min_after_dequeue=0,
                                         keep_input=False, enqueue_many=True)
    joined = tf.train.maybe_shuffle_batch_join([[x]], 2, capacity=10, min_after_dequeue=0,
                                               keep_input=[True, True], enqueue_many=True)
    with tf.Session() as sess:
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        # The runner enqueues both rows again and again; a shuffled batch draws from them.
        assert set(sess.run(joined)) <= {1.0, 2.0}
        size = [op for op in tf.get_default_graph().get_operations()
                if op.type == "QueueSizeV2"][0].outputs[0]
        time.sleep(0.1)
        assert sess.run(size) == 0  # the first batcher's queue never gets an element
        coord.request_stop()
        sess.close()
        coord.join(threads)
    assert batch.shape.as_list() == [1]


def test_match_filenames_once_and_string_variables(tmp_path):
    for name in ("b.txt", "a.txt", "c.csv"):
        (tmp_path / name).write_text(f"line of {name}\n")
    files = tf.train.match_filenames_once(str(tmp_path / "*.txt"))
    assert tf.io.match_filenames_once is tf.train.match_filenames_once
    assert files.op.name == "matching_filenames" and files in tf.local_variables()
    queue = tf.train.string_input_producer(files, shuffle=False, num_epochs=1)
    key, line = tf.TextLineReader().read(queue)
    names = tf.Variable(["x", "y"], name="names")
    with tf.Session() as sess:
        assert list(sess.run(tf.report_uninitialized_variables())) == [
            b"names", b"matching_filenames", b"input_producer/limit_epochs/epochs"]
        with pytest.raises(tf.errors.FailedPreconditionError,
                           match="Attempting to use uninitialized value names"):
            sess.run(names.value())
        sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
        expected = [str(tmp_path / n).encode() for n in ("a.txt", "b.txt")]
        assert list(sess.run(files)) == expected
        sess.run(tf.assign(names, ["p", "q"]))
        assert list(sess.run(names.value())) == [b"p", b"q"]
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        assert [sess.run(line) for _ in range(2)] == [b"line of a.txt", b"line of b.txt"]
        with pytest.raises(tf.errors.OutOfRangeError):
            sess.run(line)
        coord.request_stop()
        coord.join(threads)
