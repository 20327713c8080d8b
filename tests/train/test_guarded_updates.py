"""Optimizer updates in a run that also checks its input (here tf.check_numerics):
a failing check leaves the variable and every slot at their old values, and passing
runs give TF1's update formulas, written out in NumPy below. The fused updates compute
their variable from slots already guarded by the run's checks (compiler/effects.py:
settle); these cases pin down that both the slots and the variable still are."""

import numpy as np
import pytest

import tensorflux as tf

DATA = np.array([[1.0, -2.0, 0.5], [4.0, 0.25, -3.0]], np.float32)
START = np.array([0.5, -1.0, 2.0], np.float32)


def _momentum(state, g, t):
    accum = 0.9 * state.get("momentum", 0.0) + g
    return {"momentum": accum}, -0.1 * accum


def _adam(state, g, t):
    m = 0.9 * state.get("m", 0.0) + 0.1 * g
    v = 0.999 * state.get("v", 0.0) + 0.001 * g * g
    lr_t = 0.1 * np.sqrt(1 - 0.999 ** t) / (1 - 0.9 ** t)
    return {"m": m, "v": v}, -lr_t * m / (np.sqrt(v) + 1e-8)


def _rmsprop(centered):
    def update(state, g, t):
        rms = 0.9 * state.get("rms", 1.0) + 0.1 * g * g  # TF1 starts rms at ones
        new = {"rms": rms}
        denominator = rms
        if centered:
            new["mg"] = 0.9 * state.get("mg", 0.0) + 0.1 * g
            denominator = rms - new["mg"] ** 2
        new["momentum"] = 0.5 * state.get("momentum", 0.0) + 0.1 * g / np.sqrt(
            denominator + 1e-10)
        return new, -new["momentum"]
    return update


def _adagrad(state, g, t):
    accum = state.get("accumulator", 0.1) + g * g
    return {"accumulator": accum}, -0.1 * g / np.sqrt(accum)


CASES = {
    "momentum": (lambda: tf.train.MomentumOptimizer(0.1, 0.9), _momentum),
    "adam": (lambda: tf.train.AdamOptimizer(0.1), _adam),
    "rmsprop": (lambda: tf.train.RMSPropOptimizer(0.1, momentum=0.5), _rmsprop(False)),
    "centered_rmsprop": (lambda: tf.train.RMSPropOptimizer(0.1, momentum=0.5, centered=True),
                         _rmsprop(True)),
    "adagrad": (lambda: tf.train.AdagradOptimizer(0.1), _adagrad),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_failed_check_keeps_variable_and_slots_and_passing_runs_follow_tf1(name):
    make_optimizer, reference = CASES[name]
    with tf.Graph().as_default():
        w = tf.Variable(START, name="w")
        x = tf.placeholder(tf.float32, [3], name="x")
        loss = tf.reduce_sum(w * tf.check_numerics(x, "bad input"))  # gradient: x
        optimizer = make_optimizer()
        train = optimizer.minimize(loss)
        slots = {slot: optimizer.get_slot(w, slot) for slot in optimizer.get_slot_names()}
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            before = sess.run([w, slots])
            with pytest.raises(tf.errors.InvalidArgumentError, match="bad input"):
                sess.run(train, {x: [1.0, np.nan, 2.0]})
            after = sess.run([w, slots])
            np.testing.assert_array_equal(after[0], before[0])
            for slot in slots:
                np.testing.assert_array_equal(after[1][slot], before[1][slot])

            want_w, want_slots = START.astype(np.float64), {}
            for t, r in enumerate([0, 1, 1], start=1):
                sess.run(train, {x: DATA[r]})
                want_slots, step = reference(want_slots, DATA[r].astype(np.float64), t)
                want_w = want_w + step
                got_w, got_slots = sess.run([w, slots])
                np.testing.assert_allclose(got_w, want_w, rtol=1e-5, atol=1e-6)
                assert set(got_slots) == set(want_slots)
                for slot, value in want_slots.items():
                    np.testing.assert_allclose(got_slots[slot], value, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["adam", "momentum"])
def test_a_check_traced_after_the_update_still_keeps_variable_and_slots(name):
    make_optimizer, _ = CASES[name]
    with tf.Graph().as_default():
        w = tf.Variable(START, name="w")
        x = tf.placeholder(tf.float32, [3], name="x")
        late = tf.placeholder(tf.float32, [], name="late")
        optimizer = make_optimizer()
        train = optimizer.minimize(tf.reduce_sum(w * tf.check_numerics(x, "bad input")))
        with tf.control_dependencies([train]):  # checked after the update is computed
            checked = tf.check_numerics(late, "late check")
        slots = {slot: optimizer.get_slot(w, slot) for slot in optimizer.get_slot_names()}
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            before = sess.run([w, slots])
            with pytest.raises(tf.errors.InvalidArgumentError, match="late check"):
                sess.run(checked, {x: DATA[0], late: np.nan})
            after = sess.run([w, slots])
            np.testing.assert_array_equal(after[0], before[0])
            for slot in slots:
                np.testing.assert_array_equal(after[1][slot], before[1][slot])
            sess.run(checked, {x: DATA[0], late: 1.0})
            assert not np.array_equal(sess.run(w), before[0])
