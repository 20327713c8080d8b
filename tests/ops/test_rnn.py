"""RNN cells and drivers against NumPy implementations of TF1's cell equations.

Gradients are checked against central finite differences of the NumPy forward pass in
float64. The last test trains an LSTM classifier on the built-in digits, read row by row.
"""

import time

import numpy as np
import pytest

import tensorflux as tf
from tensorflux import datasets

rnn_cell = tf.nn.rnn_cell


# -- NumPy references (TF1's equations, gate order i, j, f, o) ----------------------------------

def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def basic_lstm_step(p, x, state, forget_bias):
    c, h = state
    i, j, f, o = np.split(np.concatenate([x, h], 1) @ p["kernel"] + p["bias"], 4, axis=1)
    new_c = c * sigmoid(f + forget_bias) + sigmoid(i) * np.tanh(j)
    new_h = np.tanh(new_c) * sigmoid(o)
    return new_h, (new_c, new_h)


def lstm_cell_step(p, x, state, forget_bias, cell_clip, proj_clip):
    c_prev, m_prev = state
    z = np.concatenate([x, m_prev], 1) @ p["kernel"] + p["bias"]
    i, j, f, o = np.split(z, 4, axis=1)
    c = (sigmoid(f + forget_bias + p["w_f_diag"] * c_prev) * c_prev
         + sigmoid(i + p["w_i_diag"] * c_prev) * np.tanh(j))
    c = np.clip(c, -cell_clip, cell_clip)
    m = sigmoid(o + p["w_o_diag"] * c) * np.tanh(c)
    m = np.clip(m @ p["projection/kernel"], -proj_clip, proj_clip)
    return m, (c, m)


def gru_step(p, x, h):
    r, u = np.split(sigmoid(np.concatenate([x, h], 1) @ p["gates/kernel"] + p["gates/bias"]),
                    2, axis=1)
    c = np.tanh(np.concatenate([x, r * h], 1) @ p["candidate/kernel"] + p["candidate/bias"])
    new_h = u * h + (1 - u) * c
    return new_h, new_h


def np_rnn(step, xs, state, lengths=None):
    """xs: [batch, time, depth]. TF1's masking: zero output, state kept past the length."""
    outputs = []
    for t in range(xs.shape[1]):
        out, new_state = step(xs[:, t], state)
        if lengths is not None:
            done = (t >= lengths)[:, None]
            out = np.where(done, 0.0, out)
            new_state = tuple(np.where(done, s, n) for s, n in
                              zip(_tuple(state), _tuple(new_state)))
            new_state = new_state if isinstance(state, tuple) else new_state[0]
        outputs.append(out)
        state = new_state
    return np.stack(outputs, 1), state


def _tuple(s):
    return s if isinstance(s, tuple) else (s,)


def finite_difference(f, x, eps=1e-6):
    grad = np.zeros_like(x)
    flat, g = x.reshape(-1), grad.reshape(-1)
    for k in range(flat.size):
        old = flat[k]
        flat[k] = old + eps
        up = f()
        flat[k] = old - eps
        down = f()
        flat[k] = old
        g[k] = (up - down) / (2 * eps)
    return grad


def cell_params(sess, cell):
    """{short name: value} of the cell's variables, e.g. 'kernel', 'gates/bias'."""
    return weights_by_name(cell, sess.run(cell.weights))


def weights_by_name(cell, values):
    prefix = len(cell.scope_name) + 1
    return {v.op.name[prefix:]: value.astype(np.float64)
            for v, value in zip(cell.weights, values)}


def check_outputs_and_gradients(cell, np_step, state_np, batch=3, steps=4, depth=3,
                                lengths=None):
    """dynamic_rnn of `cell` vs np_rnn; gradients of a loss on outputs and final state."""
    rng = np.random.default_rng(0)
    x_val = rng.normal(size=(batch, steps, depth))
    x = tf.placeholder(tf.float64, [batch, steps, depth])
    # Random weights everywhere the cell does not fix an initializer (biases start at 0/1).
    with tf.variable_scope("rnn", initializer=tf.random_normal_initializer(stddev=0.5,
                                                                           seed=1)):
        out, state = tf.nn.dynamic_rnn(cell, x, sequence_length=lengths, dtype=tf.float64,
                                       scope="rnn")
    w_out = rng.normal(size=out.shape.as_list())
    last = state[-1] if isinstance(state, tuple) else state
    w_state = rng.normal(size=last.shape.as_list())
    loss = tf.reduce_sum(out * w_out) + tf.reduce_sum(last * w_state)
    variables = cell.weights
    grads = tf.gradients(loss, variables + [x])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got_out, got_state, got_grads, values = sess.run([out, state, grads, variables],
                                                         {x: x_val})
    params = weights_by_name(cell, values)

    def np_loss():
        o, s = np_rnn(lambda xt, st: np_step(params, xt, st), x_val, state_np, lengths)
        s_last = s[-1] if isinstance(s, tuple) else s
        return np.sum(o * w_out) + np.sum(s_last * w_state)

    want_out, want_state = np_rnn(lambda xt, st: np_step(params, xt, st), x_val, state_np,
                                  lengths)
    np.testing.assert_allclose(got_out, want_out, rtol=1e-10, atol=1e-10)
    for g, w in zip(_tuple(got_state), _tuple(want_state)):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-10)
    for v, g in zip(variables, got_grads[:-1]):
        short = v.op.name[len(cell.scope_name) + 1:]
        np.testing.assert_allclose(g, finite_difference(np_loss, params[short]),
                                   rtol=1e-5, atol=1e-6, err_msg=short)
    np.testing.assert_allclose(got_grads[-1], finite_difference(np_loss, x_val),
                               rtol=1e-5, atol=1e-6, err_msg="inputs")
    return got_out


@pytest.fixture(autouse=True)
def fresh_graph():
    tf.reset_default_graph()
    yield


# -- cells: values and gradients ---------------------------------------------------------

def test_basic_lstm_with_forget_bias_matches_numpy_and_finite_differences():
    cell = rnn_cell.BasicLSTMCell(4, forget_bias=0.7)
    zeros = (np.zeros((3, 4)), np.zeros((3, 4)))
    check_outputs_and_gradients(cell, lambda p, x, s: basic_lstm_step(p, x, s, 0.7), zeros)


def test_lstm_cell_peepholes_projection_and_clipping_match_numpy():
    cell = rnn_cell.LSTMCell(5, use_peepholes=True, num_proj=3, cell_clip=0.6, proj_clip=0.4,
                             forget_bias=0.5)
    assert cell.state_size == (5, 3) and cell.output_size == 3
    zeros = (np.zeros((3, 5)), np.zeros((3, 3)))
    out = check_outputs_and_gradients(
        cell, lambda p, x, s: lstm_cell_step(p, x, s, 0.5, 0.6, 0.4), zeros)
    assert np.abs(out).max() <= 0.4 + 1e-12


def test_gru_matches_numpy_and_finite_differences_with_sequence_length():
    cell = rnn_cell.GRUCell(4)
    check_outputs_and_gradients(cell, gru_step, np.zeros((3, 4)), lengths=np.array([4, 2, 0]))


def test_sequence_length_zeroes_outputs_and_freezes_state():
    lengths = np.array([5, 2, 0, 3])
    cell = rnn_cell.BasicLSTMCell(3)
    x_val = np.random.default_rng(1).normal(size=(4, 5, 2)).astype(np.float32)
    x = tf.placeholder(tf.float32, [None, None, 2])
    out, state = tf.nn.dynamic_rnn(cell, x, sequence_length=tf.constant(lengths, tf.int64),
                                   dtype=tf.float32)
    assert out.shape.as_list()[1:] == [None, 3]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got_out, got_state = sess.run([out, state], {x: x_val})
        params = cell_params(sess, cell)
    for b, n in enumerate(lengths):
        assert np.all(got_out[b, n:] == 0)
        zeros = (np.zeros((1, 3)), np.zeros((1, 3)))
        if n == 0:  # never stepped: the initial (zero) state
            assert np.all(got_state.c[b] == 0) and np.all(got_state.h[b] == 0)
            continue
        want_out, (c, h) = np_rnn(lambda xt, s: basic_lstm_step(params, xt, s, 1.0),
                                  x_val[b:b + 1, :n].astype(np.float64), zeros)
        np.testing.assert_allclose(got_out[b, :n], want_out[0], rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(got_state.c[b], c[0], rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(got_state.h[b], h[0], rtol=1e-5, atol=1e-6)


# -- drivers --------------------------------------------------------------------------------

def test_static_and_dynamic_rnn_agree_and_share_weights():
    cell = rnn_cell.GRUCell(5)
    x_val = np.random.default_rng(2).normal(size=(3, 6, 4)).astype(np.float32)
    lengths = [6, 1, 4]
    x = tf.constant(x_val)
    dyn_out, dyn_state = tf.nn.dynamic_rnn(cell, x, sequence_length=lengths, dtype=tf.float32)
    static_out, static_state = tf.contrib.rnn.static_rnn(
        cell, tf.unstack(x, axis=1), sequence_length=lengths, dtype=tf.float32)
    assert len(static_out) == 6 and len(tf.trainable_variables()) == 4
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        d_out, d_state, s_out, s_state = sess.run([dyn_out, dyn_state, static_out,
                                                   static_state])
    np.testing.assert_allclose(d_out, np.stack(s_out, 1), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(d_state, s_state, rtol=1e-5, atol=1e-6)


def test_dynamic_rnn_is_one_compiled_loop():
    cell = rnn_cell.BasicLSTMCell(8)
    x = tf.placeholder(tf.float32, [2, 50, 3])
    out, _ = tf.nn.dynamic_rnn(cell, x, dtype=tf.float32)
    grads = tf.gradients(tf.reduce_sum(out), tf.trainable_variables())
    ops = tf.get_default_graph().get_operations()
    assert [op.type for op in ops].count("Scan") == 1
    assert [op.type for op in ops].count("MatMul") == 1  # the body, recorded once
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        g = sess.run(grads, {x: np.ones((2, 50, 3), np.float32)})
    assert g[0].shape == (11, 32) and np.isfinite(g[0]).all()


def test_time_major_and_initial_state():
    cell = rnn_cell.BasicLSTMCell(4)
    x_val = np.random.default_rng(3).normal(size=(2, 5, 3)).astype(np.float32)
    init = rnn_cell.LSTMStateTuple(tf.constant(np.full((2, 4), 0.3, np.float32)),
                                   tf.constant(np.full((2, 4), -0.2, np.float32)))
    out_b, state_b = tf.nn.dynamic_rnn(cell, tf.constant(x_val), initial_state=init)
    out_t, state_t = tf.nn.dynamic_rnn(cell, tf.constant(x_val.transpose(1, 0, 2)),
                                       initial_state=init, time_major=True)
    assert out_t.shape.as_list() == [5, 2, 4]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        ob, sb, ot, st = sess.run([out_b, state_b, out_t, state_t])
        params = cell_params(sess, cell)
    np.testing.assert_allclose(ob, ot.transpose(1, 0, 2), rtol=1e-6)
    np.testing.assert_allclose(sb.h, st.h, rtol=1e-6)
    want, _ = np_rnn(lambda xt, s: basic_lstm_step(params, xt, s, 1.0), x_val.astype(float),
                     (np.full((2, 4), 0.3), np.full((2, 4), -0.2)))
    np.testing.assert_allclose(ob, want, rtol=1e-5, atol=1e-6)


def test_dynamic_rnn_needs_dtype_or_initial_state():
    with pytest.raises(ValueError, match="you must give a dtype"):
        tf.nn.dynamic_rnn(rnn_cell.GRUCell(2), tf.zeros([1, 2, 3]))


def test_bidirectional_dynamic_and_static_match_numpy():
    fw, bw = rnn_cell.GRUCell(3), rnn_cell.GRUCell(2)
    x_val = np.random.default_rng(4).normal(size=(3, 5, 2)).astype(np.float32)
    lengths = np.array([5, 3, 1])
    (out_fw, out_bw), (st_fw, st_bw) = tf.nn.bidirectional_dynamic_rnn(
        fw, bw, tf.constant(x_val), sequence_length=lengths, dtype=tf.float32)
    static_out, s_fw, s_bw = tf.nn.static_bidirectional_rnn(
        fw, bw, tf.unstack(tf.constant(x_val), axis=1), sequence_length=lengths,
        dtype=tf.float32)
    names = sorted(v.name for v in tf.global_variables())
    assert names == sorted(f"bidirectional_rnn/{d}/gru_cell/{part}/{kind}:0"
                           for d in ("fw", "bw") for part in ("gates", "candidate")
                           for kind in ("kernel", "bias"))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        ofw, obw, sfw, sbw, sout = sess.run([out_fw, out_bw, st_fw, st_bw, static_out])
        p_fw, p_bw = cell_params(sess, fw), cell_params(sess, bw)
    for b, n in enumerate(lengths):
        seq = x_val[b:b + 1, :n].astype(np.float64)
        want_fw, want_sfw = np_rnn(lambda xt, s: gru_step(p_fw, xt, s), seq, np.zeros((1, 3)))
        want_bw, want_sbw = np_rnn(lambda xt, s: gru_step(p_bw, xt, s), seq[:, ::-1],
                                   np.zeros((1, 2)))
        np.testing.assert_allclose(ofw[b, :n], want_fw[0], rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(obw[b, :n], want_bw[0, ::-1], rtol=1e-5, atol=1e-6)
        assert np.all(ofw[b, n:] == 0) and np.all(obw[b, n:] == 0)
        np.testing.assert_allclose(sfw[b], want_sfw[0], rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(sbw[b], want_sbw[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.stack(sout, 1), np.concatenate([ofw, obw], 2),
                               rtol=1e-5, atol=1e-6)


# -- names, stacks, wrappers --------------------------------------------------------------------

def test_variable_names_are_tf1s():
    x = tf.zeros([2, 3, 4])
    tf.nn.dynamic_rnn(rnn_cell.BasicLSTMCell(5), x, dtype=tf.float32)
    tf.nn.dynamic_rnn(rnn_cell.LSTMCell(5, use_peepholes=True, num_proj=2), x,
                      dtype=tf.float32, scope="proj")
    tf.nn.dynamic_rnn(rnn_cell.MultiRNNCell([rnn_cell.BasicLSTMCell(5),
                                             rnn_cell.GRUCell(3)]), x, dtype=tf.float32,
                      scope="stack")
    shapes = {v.name: v.shape.as_list() for v in tf.global_variables()}
    assert shapes == {
        "rnn/basic_lstm_cell/kernel:0": [9, 20], "rnn/basic_lstm_cell/bias:0": [20],
        "proj/lstm_cell/kernel:0": [6, 20], "proj/lstm_cell/bias:0": [20],
        "proj/lstm_cell/w_f_diag:0": [5], "proj/lstm_cell/w_i_diag:0": [5],
        "proj/lstm_cell/w_o_diag:0": [5], "proj/lstm_cell/projection/kernel:0": [5, 2],
        "stack/multi_rnn_cell/cell_0/basic_lstm_cell/kernel:0": [9, 20],
        "stack/multi_rnn_cell/cell_0/basic_lstm_cell/bias:0": [20],
        "stack/multi_rnn_cell/cell_1/gru_cell/gates/kernel:0": [8, 6],
        "stack/multi_rnn_cell/cell_1/gru_cell/gates/bias:0": [6],
        "stack/multi_rnn_cell/cell_1/gru_cell/candidate/kernel:0": [8, 3],
        "stack/multi_rnn_cell/cell_1/gru_cell/candidate/bias:0": [3],
    }
    gate_bias = [v for v in tf.global_variables() if v.name.endswith("gates/bias:0")][0]
    with tf.Session() as sess:
        sess.run(gate_bias.initializer)
        assert np.all(sess.run(gate_bias) == 1.0)  # TF1's GRU gate bias starts at 1


def test_multi_rnn_cell_state_and_zero_state():
    cell = rnn_cell.MultiRNNCell([rnn_cell.BasicLSTMCell(4), rnn_cell.BasicRNNCell(2)])
    assert cell.state_size == ((4, 4), 2) and cell.output_size == 2
    zero = cell.zero_state(tf.placeholder(tf.int32, []), tf.float32)
    assert zero[0].c.shape.as_list() == [None, 4] and zero[1].shape.as_list() == [None, 2]
    concat = rnn_cell.BasicLSTMCell(3, state_is_tuple=False)
    assert concat.state_size == 6 and concat.zero_state(5, tf.float32).shape == (5, 6)
    out, state = tf.nn.dynamic_rnn(cell, tf.ones([2, 3, 1]), dtype=tf.float32)
    assert out.shape.as_list() == [2, 3, 2] and state[0].h.shape.as_list() == [2, 4]


def test_dropout_wrapper_keep_prob_one_is_identity_and_dropout_drops():
    x = tf.constant(np.random.default_rng(5).normal(size=(8, 4, 3)).astype(np.float32))
    base = rnn_cell.BasicLSTMCell(6)
    out, _ = tf.nn.dynamic_rnn(base, x, dtype=tf.float32)
    same, _ = tf.nn.dynamic_rnn(rnn_cell.DropoutWrapper(base, 1.0, 1.0, 1.0), x,
                                dtype=tf.float32)
    dropped, _ = tf.nn.dynamic_rnn(rnn_cell.DropoutWrapper(base, output_keep_prob=0.5, seed=1),
                                   x, dtype=tf.float32)
    assert len(tf.trainable_variables()) == 2
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        a, b, d = sess.run([out, same, dropped])
    np.testing.assert_array_equal(a, b)
    kept = d != 0
    assert 0.3 < kept.mean() < 0.7
    np.testing.assert_allclose(d[kept], 2 * a[kept], rtol=1e-5)


def test_residual_wrapper_adds_inputs():
    x = tf.constant(np.random.default_rng(6).normal(size=(2, 3, 4)).astype(np.float32))
    base = rnn_cell.GRUCell(4)
    out, _ = tf.nn.dynamic_rnn(base, x, dtype=tf.float32)
    res, _ = tf.nn.dynamic_rnn(rnn_cell.ResidualWrapper(base), x, dtype=tf.float32)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        a, r, xv = sess.run([out, res, x])
    np.testing.assert_allclose(r, a + xv, rtol=1e-6)


def test_get_variable_inside_while_loop_is_created_outside():
    def body(i, acc):
        w = tf.get_variable("w", [], initializer=tf.constant_initializer(2.0))
        return i + 1, acc * w

    _, result = tf.while_loop(lambda i, acc: i < 3, body, [tf.constant(0), tf.constant(1.0)])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run(result) == 8.0


def test_contrib_rnn_names():
    assert tf.contrib.rnn.LSTMCell is rnn_cell.LSTMCell
    assert tf.contrib.rnn.static_bidirectional_rnn is tf.nn.static_bidirectional_rnn
    assert tf.contrib.rnn.LSTMStateTuple is rnn_cell.LSTMStateTuple


# -- integration: digits read row by row ---------------------------------------------------------

def test_lstm_classifies_digits_row_by_row():
    (x_train, y_train), (x_test, y_test) = datasets.load_digits()
    x_train, x_test = x_train.astype(np.float32) / 16.0, x_test.astype(np.float32) / 16.0
    tf.set_random_seed(0)
    x = tf.placeholder(tf.float32, [None, 8, 8])  # 8 steps (rows) of 8 features
    y = tf.placeholder(tf.int64, [None])
    _, state = tf.nn.dynamic_rnn(rnn_cell.BasicLSTMCell(64), x, dtype=tf.float32)
    logits = tf.layers.dense(state.h, 10)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y,
                                                                         logits=logits))
    train = tf.train.AdamOptimizer(0.01).minimize(loss)
    accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), y), tf.float32))
    rng = np.random.default_rng(0)
    start = time.perf_counter()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(12):
            order = rng.permutation(len(x_train))
            for k in range(0, len(order) - 63, 64):
                batch = order[k:k + 64]
                sess.run(train, {x: x_train[batch], y: y_train[batch]})
        test_accuracy = sess.run(accuracy, {x: x_test, y: y_test})
    elapsed = time.perf_counter() - start
    assert test_accuracy >= 0.90, test_accuracy
    assert elapsed < 30, elapsed
