"""The eager per-op fast path: repeated ops hit learned entries and still give NumPy's
values, TF's dtype errors naming the op, value-dependent shapes, and tape gradients."""
import time

import numpy as np

import tensorflux as tf
from tensorflux._src.eager import fast_path

tf.enable_eager_execution()
rng = np.random.RandomState(0)
a_np = rng.rand(4, 4).astype(np.float32)
b_np = rng.rand(4, 4).astype(np.float32)
a, b = tf.constant(a_np), tf.constant(b_np)

hits = fast_path.stats.hits
errors = []
for i in range(3):  # the first call learns, the next ones hit
    s = tf.add(a, b)
    m = tf.matmul(a, b, transpose_b=True)
    r = tf.nn.relu(a - 0.5)
    errors.append(float(np.abs(s.numpy() - (a_np + b_np)).max()))
    errors.append(float(np.abs(m.numpy() - a_np @ b_np.T).max()))
    errors.append(float(np.abs(r.numpy() - np.maximum(a_np - np.float32(0.5), 0)).max()))
print("values", max(errors), fast_path.stats.hits - hits)

# Python scalars of different types and values are different keys.
print("scalars", (a * 2).numpy()[0, 0] == a_np[0, 0] * 2,
      (a * 3.0).numpy()[0, 0] == a_np[0, 0] * 3, (a * 2).numpy()[0, 0] == a_np[0, 0] * 2)

# Shapes that depend on input values (Reshape's shape, reduction axes).
shapes = [tf.reshape(a, s).shape.as_list() for s in ([2, 8], [8, 2], [2, 8], [16], [8, 2])]
sums = [tf.reduce_sum(a, axis=ax).numpy().tolist() for ax in (0, 1, 0, 1)]
print("shapes", shapes, np.allclose(sums[2], a_np.sum(0)), np.allclose(sums[3], a_np.sum(1)))

# TF's dtype rules still raise, every time, naming the op.
i32 = tf.constant([[1, 2], [3, 4]])
messages = []
for _ in range(2):
    try:
        tf.add(i32, tf.constant([[1.0, 2.0], [3.0, 4.0]]))
    except TypeError as e:
        messages.append(str(e))
print("dtype_error", len(messages), messages[0] == messages[1], messages[0])
try:
    tf.matmul(a, tf.constant(np.ones((3, 2), np.float32)))
except ValueError as e:
    print("shape_error", e)

# Names follow name scopes on the fast path as on the full path.
with tf.name_scope("scope"):
    names = [tf.add(a, b, name="sum").op.name for _ in range(2)]
    names += [tf.matmul(a, b).op.name for _ in range(2)]  # wrapper passes name=scope
print("names", names)

# A GradientTape records fast-path ops: d/dx sum(relu(x @ w)) against NumPy.
w_np = rng.randn(4, 3).astype(np.float32)
w = tf.constant(w_np)
grads = []
for _ in range(3):
    with tf.GradientTape() as tape:
        tape.watch(w)
        loss = tf.reduce_sum(tf.nn.relu(tf.matmul(a, w)))
    grads.append(tape.gradient(loss, w).numpy())
expected = a_np.T @ (a_np @ w_np > 0).astype(np.float32)
print("tape", max(float(np.abs(g - expected).max()) for g in grads))


def per_op_us(fn, n=500):
    fn()
    t = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - t) / n * 1e6


print("timing", per_op_us(lambda: tf.add(a, b)), per_op_us(lambda: tf.matmul(a, b)))
