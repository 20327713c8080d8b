"""GradientTape: watch, persistent, nested tapes, stop_recording, output_gradients,
unconnected_gradients, variables, and tfe's function transformations."""
import numpy as np

import tensorflux as tf

tf.enable_eager_execution()
tfe = tf.contrib.eager
x = tf.constant(3.0)
with tf.GradientTape() as t:
    t.watch(x)
    y = x * x
print("square", float(t.gradient(y, x)))
try:
    t.gradient(y, x)
except RuntimeError as e:
    print("reuse_error", e)
with tf.GradientTape() as outer:
    outer.watch(x)
    with tf.GradientTape() as inner:
        inner.watch(x)
        y = x * x * x
    dy = inner.gradient(y, x)
print("nested", float(dy), float(outer.gradient(dy, x)))
with tf.GradientTape(persistent=True) as t:
    t.watch(x)
    y = tf.sin(x)
    with t.stop_recording():
        z = y * 2
    w = y * y
print("persistent", round(float(t.gradient(w, x)), 5), t.gradient(z, x))
print("output_gradients", t.gradient(y, x, output_gradients=tf.constant(2.0)).numpy())
u = tf.constant(1.0)
print("unconnected", t.gradient(y, u), float(t.gradient(y, u, unconnected_gradients="zero")))
W = tfe.Variable(np.float32(2.0))
b = tfe.Variable(np.float32(1.0))
with tf.GradientTape() as t:
    loss = tf.reduce_sum(tf.square(W * np.array([1., 2.], np.float32) + b))
print("variables", [float(g) for g in t.gradient(loss, [W, b])], len(t.watched_variables()))
with tf.GradientTape(watch_accessed_variables=False) as t:
    loss = W * 3.0
print("not_watched", t.gradient(loss, W))
grads = tfe.implicit_gradients(lambda: tf.square(W - 5.0))()
print("implicit", float(grads[0][0]), grads[0][1] is W)
print("gradients_function", float(tfe.gradients_function(lambda a: a * a * a)(2.0)[0]))
opt = tf.train.GradientDescentOptimizer(0.1)
opt.minimize(lambda: tf.square(W - 5.0))
print("minimize", round(float(W.numpy()), 5))
opt.apply_gradients([(tf.constant(1.0), b)])
print("apply_gradients", round(float(b.numpy()), 5))
# A defun'd function under a tape: its ops are recorded (d/dx x^2 w, d/dw x^2 w).
scaled_square = tfe.defun(lambda a: a * a * b)
x = tf.constant(3.0)
with tf.GradientTape(persistent=True) as t:
    t.watch(x)
    y = scaled_square(x)
print("defun_tape", float(t.gradient(y, x)), float(t.gradient(y, b)), float(b.numpy()))
