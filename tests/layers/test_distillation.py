"""tensorflux.distillation against Hinton et al.'s formula written in NumPy."""

import numpy as np
import pytest

import tensorflux as tf
from tensorflux import distillation


def np_log_softmax(z):
    z = z - z.max(-1, keepdims=True)
    return z - np.log(np.exp(z).sum(-1, keepdims=True))


def np_distillation(labels, student, teacher, t, soft_weight):
    """Per example: (1 - w) CE(labels, softmax(s)) + w T^2 KL(softmax(t/T) || softmax(s/T))."""
    log_p = np_log_softmax(teacher / t)
    kl = (np.exp(log_p) * (log_p - np_log_softmax(student / t))).sum(-1)
    hard = -np_log_softmax(student)[np.arange(len(labels)), labels]
    return (1 - soft_weight) * hard + soft_weight * t * t * kl


@pytest.mark.parametrize("t,soft_weight", [(1.0, 0.5), (4.0, 0.7), (2.5, 1.0), (3.0, 0.0)])
def test_matches_the_formula(t, soft_weight):
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 5, size=8)
    student, teacher = rng.normal(size=(8, 5)) * 2, rng.normal(size=(8, 5)) * 3
    weights = rng.uniform(0.5, 2.0, size=8)
    loss = distillation.distillation_loss(
        None if soft_weight == 1.0 else tf.constant(labels), tf.constant(student),
        tf.constant(teacher), temperature=t, soft_weight=soft_weight)
    per_example = distillation.distillation_loss(
        labels, student, teacher, temperature=t, soft_weight=soft_weight, weights=weights,
        reduction=tf.losses.Reduction.NONE)
    with tf.Session() as sess:
        got, got_each = sess.run([loss, per_example])
    want = np_distillation(labels, student, teacher, t, soft_weight)
    # TF1's losses reduce in float32 (losses_impl), whatever the losses' dtype.
    np.testing.assert_allclose(got, want.mean(), rtol=1e-6)
    np.testing.assert_allclose(got_each, want * weights, rtol=1e-6)
    assert loss in tf.get_collection(tf.GraphKeys.LOSSES)


def test_a_student_equal_to_its_teacher_has_no_soft_loss():
    z = np.random.default_rng(1).normal(size=(4, 3))
    with tf.Session() as sess:
        value = sess.run(distillation.distillation_loss(None, z, z, temperature=5.0,
                                                        soft_weight=1.0))
    assert abs(value) < 1e-12


def test_gradient_is_the_papers_and_matches_finite_differences():
    rng = np.random.default_rng(2)
    labels = rng.integers(0, 4, size=5)
    student, teacher = rng.normal(size=(5, 4)), rng.normal(size=(5, 4))
    t, w = 3.0, 0.6
    s = tf.placeholder(tf.float64, [5, 4])
    te = tf.placeholder(tf.float64, [5, 4])
    # tf.losses' weighting runs in float32 (as TF1's), so the differences are taken with
    # a step float32 resolves.
    loss = distillation.distillation_loss(labels, s, te, temperature=t, soft_weight=w,
                                          reduction=tf.losses.Reduction.SUM)
    grad_s, grad_t = tf.gradients(loss, [s, te])
    assert grad_t is None  # the teacher is a constant target
    with tf.Session() as sess:
        got = sess.run(grad_s, {s: student, te: teacher})
        eps = 1e-3
        numeric = np.zeros_like(student)
        for idx in np.ndindex(student.shape):
            plus, minus = student.copy(), student.copy()
            plus[idx] += eps
            minus[idx] -= eps
            numeric[idx] = (sess.run(loss, {s: plus, te: teacher})
                            - sess.run(loss, {s: minus, te: teacher})) / (2 * eps)
    np.testing.assert_allclose(got, numeric, rtol=1e-3, atol=1e-3)
    # Hinton et al.'s closed form: dC/dz = T (q_T - p_T) for the T^2-scaled soft term.
    q = np.exp(np_log_softmax(student / t))
    p = np.exp(np_log_softmax(teacher / t))
    hard = np.exp(np_log_softmax(student)) - np.eye(4)[labels]
    np.testing.assert_allclose(got, w * t * (q - p) + (1 - w) * hard, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("kwargs,message", [
    ({"temperature": 0.0}, "temperature must be a positive number. Received: temperature=0.0"),
    ({"soft_weight": 1.5}, r"soft_weight must be in \[0, 1\]. Received: soft_weight=1.5"),
    ({"labels": None}, "labels are required unless soft_weight=1"),
])
def test_bad_arguments(kwargs, message):
    args = {"labels": [0], "logits": [[1.0, 2.0]], "teacher_logits": [[0.0, 1.0]], **kwargs}
    with pytest.raises(ValueError, match=message):
        distillation.distillation_loss(**args)
