"""Each optimizer's first steps against a NumPy re-implementation of TF1's update rule.

Problem: loss(w) = 0.5 * sum((A w - b)^2) in float64, so grad = A^T (A w - b).
As in TF1, Python hyperparameters become float32 tensors that are cast to the
variable's dtype (and Adam's beta powers are float32 variables), so the references
round them through float32 (`f32`) exactly where TF1 does.
"""

import numpy as np
import pytest

import tensorflux as tf

RNG = np.random.default_rng(0)
A = RNG.normal(size=(6, 3))
B = RNG.normal(size=(6, 1))
W0 = RNG.normal(size=(3, 1))
STEPS = 5


def grad(w):
    return A.T @ (A @ w - B)


def f32(value):
    return float(np.float32(value))


def numpy_sgd(lr=0.1):
    lr = f32(lr)
    w = W0.copy()
    for _ in range(STEPS):
        w = w - lr * grad(w)
    return w


def numpy_momentum(lr=0.05, momentum=0.9, nesterov=False):
    lr, momentum = f32(lr), f32(momentum)
    w, accum = W0.copy(), np.zeros_like(W0)
    for _ in range(STEPS):
        g = grad(w)
        accum = accum * momentum + g
        w = w - (lr * g + lr * momentum * accum if nesterov else lr * accum)
    return w


def numpy_adam(lr=0.1, b1=0.9, b2=0.999, eps=1e-8):
    lr, b1, b2, eps = f32(lr), f32(b1), f32(b2), f32(eps)
    w, m, v = W0.copy(), np.zeros_like(W0), np.zeros_like(W0)
    b1p, b2p = b1, b2
    for _ in range(STEPS):
        g = grad(w)
        lr_t = lr * np.sqrt(1 - b2p) / (1 - b1p)
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        w = w - lr_t * m / (np.sqrt(v) + eps)
        b1p, b2p = f32(b1p * b1), f32(b2p * b2)  # float32 variables in TF1
    return w


def numpy_adagrad(lr=0.1, init=0.1):
    lr = f32(lr)  # the accumulator starts at `init` exactly: a float64 constant slot
    w, acc = W0.copy(), np.full_like(W0, init)
    for _ in range(STEPS):
        g = grad(w)
        acc = acc + g * g
        w = w - lr * g / np.sqrt(acc)
    return w


def numpy_adadelta(lr=1.0, rho=0.95, eps=1e-6):
    lr, rho, eps = f32(lr), f32(rho), f32(eps)
    w, acc, acc_up = W0.copy(), np.zeros_like(W0), np.zeros_like(W0)
    for _ in range(STEPS):
        g = grad(w)
        acc = rho * acc + (1 - rho) * g * g
        update = np.sqrt(acc_up + eps) / np.sqrt(acc + eps) * g
        acc_up = rho * acc_up + (1 - rho) * update * update
        w = w - lr * update
    return w


def numpy_rmsprop(lr=0.01, decay=0.9, momentum=0.5, eps=1e-10, centered=False):
    lr, decay, momentum, eps = f32(lr), f32(decay), f32(momentum), f32(eps)
    w, ms, mom, mg = W0.copy(), np.ones_like(W0), np.zeros_like(W0), np.zeros_like(W0)
    for _ in range(STEPS):
        g = grad(w)
        ms = decay * ms + (1 - decay) * g * g
        denom = ms + eps
        if centered:
            mg = decay * mg + (1 - decay) * g
            denom = ms - mg * mg + eps
        mom = momentum * mom + lr * g / np.sqrt(denom)
        w = w - mom
    return w


def numpy_ftrl(lr=0.5, power=-0.5, init=0.1, l1=0.01, l2=0.02):
    lr, power, l1, l2 = f32(lr), f32(power), f32(l1), f32(l2)  # `init`: float64 slot
    w, acc, lin = W0.copy(), np.full_like(W0, init), np.zeros_like(W0)
    for _ in range(STEPS):
        g = grad(w)
        new_acc = acc + g * g
        lin = lin + g - (new_acc ** -power - acc ** -power) / lr * w
        quad = new_acc ** -power / lr + 2 * l2
        w = np.where(np.abs(lin) > l1, (np.sign(lin) * l1 - lin) / quad, 0.0)
        acc = new_acc
    return w


def numpy_proximal(lr=0.1, l1=0.05, l2=0.1):
    lr, l1, l2 = f32(lr), f32(l1), f32(l2)
    w = W0.copy()
    for _ in range(STEPS):
        prox = w - lr * grad(w)
        w = np.sign(prox) / (1 + lr * l2) * np.maximum(np.abs(prox) - lr * l1, 0)
    return w


CASES = [
    ("sgd", lambda: tf.train.GradientDescentOptimizer(0.1), numpy_sgd),
    ("momentum", lambda: tf.train.MomentumOptimizer(0.05, 0.9), numpy_momentum),
    ("nesterov", lambda: tf.train.MomentumOptimizer(0.05, 0.9, use_nesterov=True),
     lambda: numpy_momentum(nesterov=True)),
    ("adam", lambda: tf.train.AdamOptimizer(0.1), numpy_adam),
    ("adagrad", lambda: tf.train.AdagradOptimizer(0.1), numpy_adagrad),
    ("adadelta", lambda: tf.train.AdadeltaOptimizer(1.0, epsilon=1e-6), numpy_adadelta),
    ("rmsprop", lambda: tf.train.RMSPropOptimizer(0.01, momentum=0.5), numpy_rmsprop),
    ("rmsprop_centered", lambda: tf.train.RMSPropOptimizer(0.01, momentum=0.5, centered=True),
     lambda: numpy_rmsprop(centered=True)),
    ("ftrl", lambda: tf.train.FtrlOptimizer(0.5, l1_regularization_strength=0.01,
                                            l2_regularization_strength=0.02), numpy_ftrl),
    ("proximal", lambda: tf.train.ProximalGradientDescentOptimizer(0.1, 0.05, 0.1),
     numpy_proximal),
]


@pytest.mark.parametrize("name, make, reference", CASES, ids=[c[0] for c in CASES])
def test_first_steps_match_numpy(name, make, reference):
    w = tf.Variable(W0, name="w")
    loss = 0.5 * tf.reduce_sum(tf.square(tf.matmul(tf.constant(A), w) - tf.constant(B)))
    train = make().minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(STEPS):
            sess.run(train)
        got = sess.run(w)
    np.testing.assert_allclose(got, reference(), rtol=1e-10, atol=1e-12)


def test_slot_names_global_step_and_collections():
    w = tf.Variable(np.zeros((2, 2)), name="w")
    loss = tf.reduce_sum(w * w)
    step = tf.train.get_or_create_global_step()
    assert step.name == "global_step:0" and step.dtype.base_dtype == tf.int64
    opt = tf.train.AdamOptimizer()
    train = opt.minimize(loss, global_step=step)
    assert opt.get_slot_names() == ["m", "v"]
    assert opt.get_slot(w, "m").name == "w/Adam:0" and opt.get_slot(w, "v").name == "w/Adam_1:0"
    names = {v.name for v in tf.global_variables()}
    assert {"beta1_power:0", "beta2_power:0", "global_step:0"} <= names
    assert train.name == "Adam" and train in tf.get_collection(tf.GraphKeys.TRAIN_OP)
    assert tf.train.get_global_step() is step
    with pytest.raises(ValueError, match='"global_step" already exists.'):
        tf.train.create_global_step()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train)
        sess.run(train)
        assert sess.run(step) == 2


def test_no_gradients_error():
    w = tf.Variable(1.0, name="w")
    unrelated = tf.Variable(2.0, name="u")
    with pytest.raises(ValueError, match="No gradients provided for any variable"):
        tf.train.GradientDescentOptimizer(0.1).minimize(unrelated * 1.0, var_list=[w])


def test_learning_rate_as_tensor_and_compute_apply():
    w = tf.Variable([1.0, 2.0])
    lr = tf.placeholder(tf.float32, [])
    opt = tf.train.GradientDescentOptimizer(lr)
    grads_and_vars = opt.compute_gradients(tf.reduce_sum(w * w))
    assert grads_and_vars[0][1] is w
    train = opt.apply_gradients(grads_and_vars)
    with tf.Session() as sess:
        sess.run(w.initializer)
        sess.run(train, {lr: 0.25})
        np.testing.assert_allclose(sess.run(w), [0.5, 1.0])
