"""Runs that end in host ops (data-dependent shapes) after the compiled part."""

import numpy as np

import tensorflux as tf
from tensorflux._src.ops.array.host_ops import where_indices


def test_where_indices_then_more_math_on_the_host():
    x = tf.placeholder(tf.float32, [None])
    doubled = x * 2.0  # compiled
    idx = where_indices(doubled > 1.0)  # host: output shape depends on the data
    scaled = tf.cast(idx, tf.float32) + 0.5  # runs on the host after `idx`
    with tf.Session() as sess:
        for values in ([1.0, 0.1, 3.0], [0.0, 0.0, 0.0, 9.0]):
            got_idx, got_scaled, got_doubled = sess.run([idx, scaled, doubled], {x: values})
            expected = np.argwhere(np.array(values) * 2.0 > 1.0)
            np.testing.assert_array_equal(got_idx, expected)
            np.testing.assert_allclose(got_scaled, expected + 0.5)
            np.testing.assert_allclose(got_doubled, np.array(values, np.float32) * 2.0)
        # Two clusters (before and after the host op), each traced once per input shape:
        sess.run(scaled, {x: [5.0, 6.0, 7.0]})
        traces = sess.compile_stats.traces
        sess.run(scaled, {x: [5.0, 6.0, 8.0]})  # same shapes everywhere: no tracing
        assert sess.compile_stats.traces == traces
        sess.run(scaled, {x: [5.0, -6.0, 7.0]})  # where's output shrinks: cluster 1 only
        assert sess.compile_stats.traces == traces + 1

def test_where_indices_of_a_constant_matrix():
    idx = where_indices(tf.constant([[True, False], [False, True]]))
    assert idx.shape.as_list() == [None, 2]
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(idx), [[0, 0], [1, 1]])
