"""Learning-rate schedules and clipping against the formulas written out in NumPy."""

import math

import numpy as np
import pytest

import tensorflux as tf

STEPS = [0, 1, 4, 5, 9, 10, 11, 25, 40]


def run_schedule(build):
    step = tf.placeholder(tf.int64, [])
    lr = build(step)
    with tf.Session() as sess:
        return [float(sess.run(lr, {step: s})) for s in STEPS]


def cosine_restarts_np(lr, s, first, t_mul, m_mul, alpha):
    frac, i = s / first, 0
    period = 1.0
    while frac >= period:
        frac -= period
        period *= t_mul
        i += 1
    frac /= period
    return lr * ((1 - alpha) * 0.5 * m_mul ** i * (1 + math.cos(math.pi * frac)) + alpha)


SCHEDULES = [
    ("exponential", lambda s: tf.train.exponential_decay(0.1, s, 10, 0.5),
     lambda s: 0.1 * 0.5 ** (s / 10)),
    ("exponential_staircase", lambda s: tf.train.exponential_decay(0.1, s, 10, 0.5, True),
     lambda s: 0.1 * 0.5 ** (s // 10)),
    ("piecewise", lambda s: tf.train.piecewise_constant(s, [5, 10], [1.0, 0.5, 0.1]),
     lambda s: 1.0 if s <= 5 else (0.5 if s <= 10 else 0.1)),
    ("polynomial", lambda s: tf.train.polynomial_decay(0.1, s, 10, 0.01, power=2.0),
     lambda s: (0.1 - 0.01) * (1 - min(s, 10) / 10) ** 2 + 0.01),
    ("polynomial_cycle", lambda s: tf.train.polynomial_decay(0.1, s, 10, 0.01, cycle=True),
     lambda s: (0.1 - 0.01) * (1 - s / (10 * max(1, math.ceil(s / 10)))) + 0.01),
    ("natural_exp", lambda s: tf.train.natural_exp_decay(0.1, s, 10, 0.5),
     lambda s: 0.1 * math.exp(-0.5 * s / 10)),
    ("inverse_time", lambda s: tf.train.inverse_time_decay(0.1, s, 10, 0.5, staircase=True),
     lambda s: 0.1 / (1 + 0.5 * (s // 10))),
    ("cosine", lambda s: tf.train.cosine_decay(0.1, s, 20, alpha=0.1),
     lambda s: 0.1 * (0.9 * 0.5 * (1 + math.cos(math.pi * min(s, 20) / 20)) + 0.1)),
    ("cosine_restarts", lambda s: tf.train.cosine_decay_restarts(0.1, s, 5, 2.0, 0.5),
     lambda s: cosine_restarts_np(0.1, s, 5, 2.0, 0.5, 0.0)),
    ("warmup_then_cosine",
     lambda s: tf.train.linear_warmup(tf.train.cosine_decay(0.1, s, 40), s, 5),
     lambda s: (0.1 * 0.5 * (1 + math.cos(math.pi * min(s, 40) / 40))) * min(1.0, s / 5)),
]


@pytest.mark.parametrize("name, build, reference", SCHEDULES, ids=[s[0] for s in SCHEDULES])
def test_schedule_matches_formula(name, build, reference):
    np.testing.assert_allclose(run_schedule(build), [reference(s) for s in STEPS], rtol=1e-5,
                               atol=1e-7)


def test_piecewise_constant_validates():
    with pytest.raises(ValueError, match="1 less than"):
        tf.train.piecewise_constant(tf.constant(1), [1, 2], [0.1, 0.2])


def _run(t):
    with tf.Session() as sess:
        return sess.run(t)


def test_clip_by_norm():
    t = np.array([[3.0, 4.0], [0.0, 0.0]])
    got = _run(tf.clip_by_norm(tf.constant(t), 2.0))
    np.testing.assert_allclose(got, t * 2.0 / 5.0)
    np.testing.assert_allclose(_run(tf.clip_by_norm(tf.constant(t), 10.0)), t)
    per_row = _run(tf.clip_by_norm(tf.constant(t), 1.0, axes=[1]))
    np.testing.assert_allclose(per_row, [[0.6, 0.8], [0.0, 0.0]])


def test_global_norm_and_clip_by_global_norm():
    a, b = np.array([3.0, 0.0]), np.array([[0.0, 4.0]])
    clipped, norm = tf.clip_by_global_norm([tf.constant(a), None, tf.constant(b)], 1.0)
    assert clipped[1] is None
    got_a, got_b, got_norm = _run([clipped[0], clipped[2], norm])
    assert got_norm == pytest.approx(5.0)
    np.testing.assert_allclose(got_a, a / 5.0)
    np.testing.assert_allclose(got_b, b / 5.0)
    assert _run(tf.global_norm([tf.constant(a), tf.constant(b)])) == pytest.approx(5.0)
    with pytest.raises(TypeError, match="t_list should be a sequence"):
        tf.clip_by_global_norm(tf.constant(a), 1.0)


def test_clip_by_average_norm():
    t = np.array([3.0, 4.0])  # norm 5, 2 elements: average norm 2.5
    np.testing.assert_allclose(_run(tf.clip_by_average_norm(tf.constant(t), 1.0)),
                               t * 1.0 / 2.5)
