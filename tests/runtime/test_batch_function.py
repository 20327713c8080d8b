"""tf.nondifferentiable_batch_function: concurrent Session.run calls share one batch."""

import threading
import time

import numpy as np
import pytest

import tensorflux as tf


def _run_concurrently(sess, fetch, feeds):
    results, threads = {}, []
    for k, feed in enumerate(feeds):
        def work(k=k, feed=feed):
            results[k] = sess.run(fetch, feed)
        threads.append(threading.Thread(target=work))
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    return [results[k] for k in range(len(feeds))]


def test_concurrent_callers_get_their_rows_from_batched_calls():
    sizes = []
    w_value = np.array([[2.0, -1.0, 0.5], [0.0, 3.0, 1.0]], np.float32)
    g = tf.Graph()
    with g.as_default():
        w = tf.Variable(w_value)

        def record(a):
            sizes.append(a.shape[0])
            return np.int32(a.shape[0])

        @tf.nondifferentiable_batch_function(num_batch_threads=1, max_batch_size=12,
                                             batch_timeout_micros=300000)
        def layer(a, b):
            n = tf.py_func(record, [a], tf.int32)
            with tf.control_dependencies([n]):
                return [tf.matmul(a, w) + b[:, None], tf.reduce_sum(a, axis=1)]

        x = tf.placeholder(tf.float32, [None, 2])
        bias = tf.placeholder(tf.float32, [None])
        y = layer(x, bias)
        assert isinstance(y, list) and len(y) == 2
        assert y[0].op.type == "BatchFunction" and y[0].op.name == "batch/BatchFunction"
        rng = np.random.RandomState(0)
        feeds = [{x: rng.randn(2, 2).astype(np.float32),
                  bias: rng.randn(2).astype(np.float32)} for _ in range(6)]
        with tf.Session() as sess:
            sess.run(w.initializer)
            got = _run_concurrently(sess, y, feeds)
    for feed, (out, total) in zip(feeds, got):
        np.testing.assert_allclose(out, feed[x] @ w_value + feed[bias][:, None], rtol=1e-5)
        np.testing.assert_allclose(total, feed[x].sum(axis=1), rtol=1e-5)
    assert sum(sizes) == 12 and len(sizes) < 6  # rows of several callers per call
    assert max(sizes) <= 12


def test_padding_to_allowed_sizes_and_timeout_for_a_single_caller():
    sizes = []
    g = tf.Graph()
    with g.as_default():
        @tf.nondifferentiable_batch_function(1, 8, 200000, allowed_batch_sizes=[2, 4, 8])
        def double(a):
            n = tf.py_func(lambda v: sizes.append(v.shape[0]) or np.int32(0), [a], tf.int32)
            with tf.control_dependencies([n]):
                return a * 2

        x = tf.placeholder(tf.int32, [None])
        y = double(x)
        with tf.Session() as sess:
            start = time.monotonic()
            out = sess.run(y, {x: [1, 2, 3]})
            elapsed = time.monotonic() - start
    np.testing.assert_array_equal(out, [2, 4, 6])
    assert sizes == [4]  # 3 rows padded to the next allowed size
    assert elapsed >= 0.2  # a lone caller waits out batch_timeout_micros


def test_errors():
    g = tf.Graph()
    with g.as_default():
        with pytest.raises(ValueError, match="All arguments to functions decorated with "
                                             "`batch_function`  are supposed to be Tensors"):
            tf.nondifferentiable_batch_function(1, 4, 10)(lambda a: a)(np.ones(2))
        x = tf.placeholder(tf.float32, [None])
        z = tf.placeholder(tf.float32, [None])
        bad_order = tf.nondifferentiable_batch_function(
            1, 4, 10, allowed_batch_sizes=[2, 2, 4])(lambda a: a)(x)
        bad_last = tf.nondifferentiable_batch_function(
            1, 4, 10, allowed_batch_sizes=[1, 2])(lambda a: a)(x)
        ok = tf.nondifferentiable_batch_function(1, 4, 10)(lambda a, b: a + b)(x, z)
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match="allowed_batch_sizes entries must be monotonically "
                                     "increasing"):
                sess.run(bad_order, {x: [1.0]})
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match="final entry in allowed_batch_sizes must equal "
                                     "max_batch_size"):
                sess.run(bad_last, {x: [1.0]})
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match="Task size 5 is larger than maximum batch size 4"):
                sess.run(ok, {x: np.ones(5), z: np.ones(5)})
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match="Batching input tensors must have equal 0th-dimension"):
                sess.run(ok, {x: np.ones(2), z: np.ones(3)})
            np.testing.assert_allclose(sess.run(ok, {x: [1.0, 2.0], z: [3.0, 4.0]}), [4, 6])
