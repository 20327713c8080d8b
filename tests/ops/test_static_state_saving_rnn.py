"""tf.nn.static_state_saving_rnn: the initial state comes from a state saver, the final
state goes back to it, and fetching the last output performs the save (TF1's contract).
Expectations are NumPy's BasicRNNCell / BasicLSTMCell equations with constant weights."""

import numpy as np
import pytest

import tensorflux as tf


class VariableStateSaver:
    """The two methods static_state_saving_rnn calls, over one variable per state name."""

    def __init__(self, shapes):
        self.vars = {name: tf.Variable(np.zeros(shape, np.float32), name=name)
                     for name, shape in shapes.items()}

    def state(self, name):
        return self.vars[name].read_value()

    def save_state(self, name, value):
        return tf.assign(self.vars[name], value)


def rnn_numpy(xs, h, w=0.1):
    outputs = []
    for x in xs:
        h = np.tanh(w * (x.sum(1, keepdims=True) + h.sum(1, keepdims=True)) * np.ones_like(h))
        outputs.append(h)
    return outputs, h


def test_state_is_read_from_and_saved_to_the_saver_across_runs():
    xs = [(np.full((2, 3), t + 1) * [[1.0], [-0.5]]).astype(np.float32) for t in range(4)]
    saver = VariableStateSaver({"h": (2, 5)})
    with tf.variable_scope("s", initializer=tf.constant_initializer(0.1)):
        outputs, state = tf.nn.static_state_saving_rnn(
            tf.nn.rnn_cell.BasicRNNCell(5), [tf.constant(x) for x in xs], saver, "h")
    assert len(outputs) == 4 and state.shape.as_list() == [2, 5]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        h = np.zeros((2, 5), np.float32)
        for _ in range(2):  # the second run starts from the state the first one saved
            want_outputs, h = rnn_numpy(xs, h)
            got_last = sess.run(outputs[-1])
            np.testing.assert_allclose(got_last, want_outputs[-1], rtol=1e-5)
            np.testing.assert_allclose(sess.run(saver.vars["h"]), h, rtol=1e-5)


def test_tuple_states_take_a_tuple_of_names():
    saver = VariableStateSaver({"c": (1, 2), "h": (1, 2)})
    cell = tf.nn.rnn_cell.BasicLSTMCell(2)
    x = tf.constant(np.ones((1, 3), np.float32))
    with tf.variable_scope("lstm", initializer=tf.constant_initializer(0.2)):
        outputs, state = tf.nn.static_state_saving_rnn(cell, [x, x], saver, ("c", "h"))
    assert isinstance(state, tf.nn.rnn_cell.LSTMStateTuple)

    def sigmoid(v):
        return 1 / (1 + np.exp(-v))

    c = h = np.zeros((1, 2))
    for _ in range(2):  # TF1's gate order i, j, f, o; forget_bias 1.0; kernel 0.2, bias 0
        z = np.concatenate([np.ones((1, 3)), h], 1) @ np.full((5, 8), 0.2)
        i, j, f, o = np.split(z, 4, axis=1)
        c = c * sigmoid(f + 1.0) + sigmoid(i) * np.tanh(j)
        h = np.tanh(c) * sigmoid(o)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_allclose(sess.run(state.h), h, rtol=1e-5)
        np.testing.assert_allclose(sess.run(saver.vars["c"]), c, rtol=1e-5)
    with pytest.raises(ValueError, match="state_name should be the same type as "
                                         "cell.state_size"):
        tf.nn.static_state_saving_rnn(cell, [x], saver, "c")
    with pytest.raises(ValueError, match=r"#elems\(state_name\) != #elems\(state_size\): "
                                         r"3 vs. 2"):
        tf.nn.static_state_saving_rnn(cell, [x], saver, ("c", "h", "extra"))
    assert tf.contrib.rnn.static_state_saving_rnn is tf.nn.static_state_saving_rnn
