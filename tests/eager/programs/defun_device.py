"""defun keeps device buffers end to end: eager inputs are fed as their buffers (never
copied to the host), outputs wrap the run's buffers, and a traced SGD step updates the
eager variables as NumPy's SGD does."""
import jax
import numpy as np

import tensorflux as tf

tf.enable_eager_execution()
rng = np.random.RandomState(1)
x_np = rng.randn(40, 3).astype(np.float32)
y_np = rng.randn(40, 1).astype(np.float32)
w = tf.Variable(np.zeros((3, 1), np.float32))
b = tf.Variable(np.zeros((1,), np.float32))
opt = tf.train.GradientDescentOptimizer(0.1)


@tf.contrib.eager.defun
def step(x, y):
    with tf.GradientTape() as tape:
        residual = tf.matmul(x, w) + b - y
        loss = tf.reduce_mean(tf.square(residual))
    grads = tape.gradient(loss, [w, b])
    opt.apply_gradients(zip(grads, [w, b]))
    return loss, {"residual": residual}


x, y = tf.constant(x_np), tf.constant(y_np)
w_np, b_np = np.zeros((3, 1), np.float32), np.zeros((1,), np.float32)
losses = []
for _ in range(5):
    loss, extra = step(x, y)
    r = x_np @ w_np + b_np - y_np
    losses.append(abs(float(loss) - float(np.mean(r ** 2))))
    last_residual = r
    w_np = w_np - 0.1 * 2 * x_np.T @ r / r.size
    b_np = b_np - 0.1 * 2 * r.sum(0) / r.size
print("losses", max(losses) < 1e-5, len(step._concrete))
print("variables", float(np.abs(w.numpy() - w_np).max()) < 1e-5,
      float(np.abs(b.numpy() - b_np).max()) < 1e-5)
print("residual", type(extra).__name__, extra["residual"].shape.as_list(),
      float(np.abs(extra["residual"].numpy() - last_residual).max()) < 1e-5)
# Inputs were fed as device buffers (x is too large for a constant to keep its host
# value: no host copy was made); outputs are device arrays.
print("device", "_numpy" not in x.__dict__, isinstance(loss._value, jax.Array),
      loss.dtype.name)
# A numpy argument is fed too (another signature), with NumPy's value.
loss_np, _ = step(x_np, y_np)
print("numpy_arg", len(step._concrete), float(loss_np) >= 0)
