"""tf.nn.raw_rnn: TF1's loop_fn protocol against a NumPy RNN, gradients against finite
differences, custom emit structures and a loop state holding a TensorArray."""

import numpy as np
import pytest

import tensorflux as tf


def _numpy_rnn(x, lengths, kernel, bias):
    """BasicRNNCell (tanh(W [x, h] + b)) over time-major x; finished rows emit zeros and
    keep their state; the loop stops once every row finished."""
    steps = int(np.max(lengths))
    h = np.zeros((x.shape[1], kernel.shape[1]))
    outs = []
    for t in range(steps):
        new = np.tanh(np.concatenate([x[t], h], 1) @ kernel + bias)
        done = (t >= lengths)[:, None]
        outs.append(np.where(done, 0.0, new))
        h = np.where(done, h, new)
    return np.array(outs), h


def _loop_fn(cell, inputs_ta, lengths, batch, depth, dtype):
    def loop_fn(time, cell_output, cell_state, loop_state):
        state = cell.zero_state(batch, dtype) if cell_output is None else cell_state
        finished = time >= lengths
        next_input = tf.cond(tf.reduce_all(finished), lambda: tf.zeros([batch, depth], dtype),
                             lambda: inputs_ta.read(time))
        return finished, next_input, state, cell_output, None
    return loop_fn


def test_raw_rnn_matches_numpy_and_finite_differences():
    steps, batch, depth, units = 5, 3, 2, 4
    x = tf.placeholder(tf.float64, [steps, batch, depth])
    lengths = tf.placeholder(tf.int32, [batch])
    cell = tf.nn.rnn_cell.BasicRNNCell(units, dtype=tf.float64)
    inputs_ta = tf.TensorArray(tf.float64, size=steps).unstack(x)
    emit_ta, final_state, final_loop_state = tf.nn.raw_rnn(
        cell, _loop_fn(cell, inputs_ta, lengths, batch, depth, tf.float64))
    assert final_loop_state is None and isinstance(emit_ta, tf.TensorArray)
    assert [v.name for v in tf.trainable_variables()] == ["rnn/basic_rnn_cell/kernel:0",
                                                          "rnn/basic_rnn_cell/bias:0"]
    outputs = emit_ta.stack()
    assert outputs.shape.as_list() == [None, batch, units]
    loss = tf.reduce_sum(outputs ** 2) + tf.reduce_sum(tf.sin(final_state))
    grad = tf.gradients(loss, x)[0]
    rng = np.random.RandomState(1)
    xv = rng.randn(steps, batch, depth)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        kernel, bias = sess.run(cell.weights)
        for lv in ([2, 4, 3], [5, 1, 5]):
            feed = {x: xv, lengths: lv}
            out, state, g = sess.run([outputs, final_state, grad], feed)
            want_out, want_state = _numpy_rnn(xv, np.array(lv), kernel, bias)
            np.testing.assert_allclose(out, want_out, rtol=1e-10, atol=1e-12)
            np.testing.assert_allclose(state, want_state, rtol=1e-10)
        numeric = np.zeros_like(xv)
        for i in np.ndindex(xv.shape):
            hi, lo = xv.copy(), xv.copy()
            hi[i] += 1e-6
            lo[i] -= 1e-6
            numeric[i] = (sess.run(loss, {x: hi, lengths: lv})
                          - sess.run(loss, {x: lo, lengths: lv})) / 2e-6
        np.testing.assert_allclose(g, numeric, rtol=1e-5, atol=1e-8)


def test_raw_rnn_emit_structure_and_loop_state():
    """emit_output's first value sets the emitted structure; loop_state carries a
    TensorArray of the times each step saw; finished rows emit zeros."""
    batch, units = 2, 3
    lengths = tf.constant([2, 3])
    cell = tf.nn.rnn_cell.BasicRNNCell(units)

    def loop_fn(time, cell_output, cell_state, loop_state):
        if cell_output is None:
            emit = (tf.zeros([units]), tf.zeros([], tf.int32))  # structure only
            log = tf.TensorArray(tf.int32, size=0, dynamic_size=True)
            return (time >= lengths, tf.ones([batch, 1]), cell.zero_state(batch, tf.float32),
                    emit, log)
        emit = (cell_output * 2.0, tf.fill([batch], time * 10))
        return (time >= lengths, tf.ones([batch, 1]), cell_state, emit,
                loop_state.write(time - 1, time))

    (out_ta, time_ta), state, log = tf.nn.raw_rnn(cell, loop_fn, scope="custom")
    assert isinstance(log, tf.TensorArray) and time_ta.dtype == tf.int32
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        outs, times, logged, kernel, bias = sess.run(
            [out_ta.stack(), time_ta.stack(), log.stack()] + cell.weights)
    np.testing.assert_array_equal(times, [[10, 10], [20, 20], [0, 30]])
    np.testing.assert_array_equal(logged, [1, 2, 3])
    want, _ = _numpy_rnn(np.ones((3, batch, 1)), np.array([2, 3]), kernel, bias)
    np.testing.assert_allclose(outs, want * 2.0, rtol=1e-5, atol=1e-6)


def test_raw_rnn_argument_errors():
    cell = tf.nn.rnn_cell.BasicRNNCell(2)
    with pytest.raises(TypeError, match="loop_fn must be a callable"):
        tf.nn.raw_rnn(cell, 3)
    with pytest.raises(TypeError, match="is not an RNNCell"):
        tf.nn.raw_rnn(object(), lambda *a: None)
