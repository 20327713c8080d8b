"""tf.gradients machinery: overrides, custom gradients, second order, training."""

import numpy as np
import pytest

import tensorflux as tf


def run(fetches, feed=None):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(fetches, feed)


def test_unconnected_and_integer_inputs_get_none():
    x = tf.constant(2.0)
    unrelated = tf.constant(3.0)
    i = tf.constant(4)
    y = x * x + tf.cast(i, tf.float32)
    gx, gu, gi = tf.gradients(y, [x, unrelated, i])
    assert gu is None and gi is None
    assert run(gx) == 4.0


def test_grad_ys_and_multiple_ys():
    x = tf.constant([1.0, 2.0])
    (g,) = tf.gradients([x * 3.0, x * x], x, grad_ys=[tf.constant([1.0, 1.0]),
                                                      tf.constant([2.0, 0.5])])
    np.testing.assert_allclose(run(g), [3.0 + 4.0, 3.0 + 2.0])


def test_gradient_ops_are_named_under_gradients_scope():
    x = tf.constant(1.0, name="x")
    y = tf.square(x, name="sq")
    (g,) = tf.gradients(y, x)
    assert g.op.name.startswith("gradients/sq_grad/")


def test_stop_gradient_op_and_argument():
    x = tf.constant(3.0)
    y = x * tf.stop_gradient(x)
    assert run(tf.gradients(y, x)[0]) == 3.0
    a = x * 2.0
    b = a * x
    assert run(tf.gradients(b, x, stop_gradients=[a])[0]) == 6.0  # a treated as constant


def test_missing_gradient_raises_lookup_error():
    import jax.numpy as jnp

    from tensorflux._src.ops import registry
    from tensorflux._src.ops.op_builder import apply_op
    registry.register(registry.OpDef(
        "TestOpWithoutGradient", inputs=("x: T",), outputs=("y: T",),
        attrs={"T": (tf.float32,)}, shape=lambda op: op.inputs[0].shape, lower=jnp.negative))
    try:
        x = tf.constant(1.0)
        y = apply_op("TestOpWithoutGradient", x=x, name="nograd")
        with pytest.raises(LookupError, match="No gradient defined for operation 'nograd' "
                                              r"\(op type: TestOpWithoutGradient\)"):
            tf.gradients(y, x)
    finally:
        registry._REGISTRY.pop("TestOpWithoutGradient")  # keep the registry walk clean


def test_register_gradient_and_override_map():
    @tf.RegisterGradient("DoubledIdentityGrad")
    def _double(op, dy):
        return [dy * 2.0]

    x = tf.constant(5.0)
    with tf.get_default_graph().gradient_override_map({"Identity": "DoubledIdentityGrad"}):
        y = tf.identity(x)
    assert run(tf.gradients(y, x)[0]) == 2.0
    with pytest.raises(KeyError, match="Registering two gradient with name"):
        tf.RegisterGradient("DoubledIdentityGrad")(_double)


def test_custom_gradient():
    @tf.custom_gradient
    def clipped_identity(x):
        def grad(dy):
            return tf.clip_by_value(dy, -0.5, 0.5)
        return tf.identity(x), grad

    x = tf.constant([1.0, 2.0])
    y = clipped_identity(x) * tf.constant([3.0, 0.1])
    value, g = run([y, tf.gradients(y, x)[0]])
    np.testing.assert_allclose(value, [3.0, 0.2])
    np.testing.assert_allclose(g, [0.5, 0.1])


def test_second_order_and_hessians():
    x = tf.constant([1.0, 2.0], dtype=tf.float64)
    y = tf.reduce_sum(x ** 3)
    (g,) = tf.gradients(y, x)
    (gg,) = tf.gradients(g, x)
    (h,) = tf.hessians(y, x)
    got_g, got_gg, got_h = run([g, gg, h])
    np.testing.assert_allclose(got_g, 3 * np.array([1.0, 4.0]))
    np.testing.assert_allclose(got_gg, 6 * np.array([1.0, 2.0]))
    np.testing.assert_allclose(got_h, np.diag([6.0, 12.0]))


def test_hessian_of_quadratic_form():
    a = np.array([[2.0, 1.0], [1.0, 3.0]])
    x = tf.constant([[0.5], [-1.0]], dtype=tf.float64)
    y = 0.5 * tf.matmul(tf.matmul(x, tf.constant(a), transpose_a=True), x)
    (h,) = tf.hessians(y, x)
    np.testing.assert_allclose(run(h).reshape(2, 2), a)


def test_gradient_wrt_variable():
    w = tf.Variable([1.0, -2.0])
    loss = tf.reduce_sum(w * w)
    (g,) = tf.gradients(loss, w)
    np.testing.assert_allclose(run(g), [2.0, -4.0])


def test_linear_regression_converges_to_least_squares():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(64, 3))
    true_w = np.array([[1.5], [-2.0], [0.5]])
    y = x @ true_w + 0.3 + rng.normal(scale=0.01, size=(64, 1))
    xs = tf.placeholder(tf.float64, [None, 3])
    ys = tf.placeholder(tf.float64, [None, 1])
    w = tf.Variable(np.zeros((3, 1)))
    b = tf.Variable(0.0, dtype=tf.float64)
    loss = tf.reduce_mean(tf.square(tf.matmul(xs, w) + b - ys))
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(500):
            sess.run(train, {xs: x, ys: y})
        got_w, got_b, got_loss = sess.run([w, b, loss], {xs: x, ys: y})
    design = np.hstack([x, np.ones((64, 1))])
    solution, residual, *_ = np.linalg.lstsq(design, y, rcond=None)
    np.testing.assert_allclose(got_w, solution[:3], atol=1e-6)
    assert got_b == pytest.approx(solution[3, 0], abs=1e-6)
    assert got_loss == pytest.approx(residual[0] / 64, rel=1e-6)


def test_two_layer_mlp_matches_numpy_backprop():
    """Three SGD steps of a tanh MLP from a fixed start, against backprop in NumPy."""
    rng = np.random.default_rng(1)
    x = rng.normal(size=(8, 4))
    labels = rng.integers(0, 3, 8)
    w1, b1 = rng.normal(size=(4, 5)) * 0.5, np.zeros(5)
    w2, b2 = rng.normal(size=(5, 3)) * 0.5, np.zeros(3)
    lr = 0.5

    def numpy_step(w1, b1, w2, b2):
        h = np.tanh(x @ w1 + b1)
        logits = h @ w2 + b2
        p = np.exp(logits - logits.max(1, keepdims=True))
        p /= p.sum(1, keepdims=True)
        loss = -np.log(p[np.arange(8), labels]).mean()
        d_logits = p.copy()
        d_logits[np.arange(8), labels] -= 1
        d_logits /= 8
        d_w2, d_b2 = h.T @ d_logits, d_logits.sum(0)
        d_h = d_logits @ w2.T * (1 - h * h)
        d_w1, d_b1 = x.T @ d_h, d_h.sum(0)
        return loss, (w1 - lr * d_w1, b1 - lr * d_b1, w2 - lr * d_w2, b2 - lr * d_b2)

    expected_losses, params = [], (w1, b1, w2, b2)
    for _ in range(3):
        loss, params = numpy_step(*params)
        expected_losses.append(loss)

    tw1, tb1, tw2, tb2 = (tf.Variable(v) for v in (w1, b1, w2, b2))
    h = tf.tanh(tf.matmul(tf.constant(x), tw1) + tb1)
    logits = tf.matmul(h, tw2) + tb2
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=tf.constant(labels), logits=logits))
    train = tf.train.GradientDescentOptimizer(lr).minimize(loss)
    losses = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(3):
            losses.append(sess.run([loss, train])[0])
        final = sess.run([tw1, tb1, tw2, tb2])
    np.testing.assert_allclose(losses, expected_losses, rtol=1e-10)
    for got, want in zip(final, params):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
