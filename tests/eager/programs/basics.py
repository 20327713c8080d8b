"""Eager tensors: values at once, printing, NumPy interop, Python control flow, and
TF1's errors for graph-only APIs."""
import numpy as np

import tensorflux as tf
import tensorflux.contrib.eager as tfe

assert not tf.executing_eagerly()
tfe.enable_eager_execution()
assert tf.executing_eagerly()
tf.enable_eager_execution()  # a second call is a no-op

a, b = tf.constant(2), tf.constant(3)
print("sum %i product %i" % (a + b, a * b))
m = tf.constant([[2., 1.], [1., 0.]])
print("str", str(m).replace("\n", "|"))
print("matmul", tf.matmul(m, np.array([[3., 0.], [5., 1.]], np.float32)).numpy().tolist())
print("numpy_op", np.multiply(m, 2).tolist())
print("iterate", [float(x) for row in m for x in row])
print("index", [1, 2, 3][tf.constant(1)], int(tf.constant(7)), float(tf.constant(0.5)))
print("bool", bool(tf.constant(True)), "if", "yes" if tf.reduce_sum(m) > 3 else "no")
print("layers", tf.layers.dense(tf.ones([2, 3]), 4).shape.as_list())
print("cond", float(tf.cond(tf.constant(1.0) > 0, lambda: m[0, 0], lambda: m[1, 1])))
print("while", int(tf.while_loop(lambda i: i < 10, lambda i: i + 3, [tf.constant(0)])))
print("random_shape", tf.random_normal([3, 2]).shape.as_list())
print("unique", tf.unique(tf.constant([3, 1, 3, 2]))[0].numpy().tolist())
print("string", tf.strings.join([tf.constant("a"), tf.constant("b")]).numpy())
v = tf.Variable([1.0, 2.0], name="v")
v.assign_add([1.0, 1.0])
print("variable", v.numpy().tolist(), (v * 2).numpy().tolist())
try:
    tf.placeholder(tf.float32)
except RuntimeError as e:
    print("placeholder_error", e)
try:
    tf.Session().run(a)
except RuntimeError as e:
    print("session_error", e)
with tf.Graph().as_default():
    print("graph_inside", tf.executing_eagerly())
    g = tf.constant(1.0) + 1
    with tf.Session() as sess:
        print("graph_run", sess.run(g))
for x in tf.data.Dataset.range(3):
    print("dataset", int(x))

# Variables print and type as TF's eager (resource) variables: base dtype, scalar values.
scalar_var = tf.Variable(3.0, name="s")
print("var_repr", scalar_var.dtype.name, repr(scalar_var))
# Eager assigns return the new value as a plain tensor (TF: a read of the resource
# variable), or None with read_value=False.
added = scalar_var.assign_add(2.0)
print("assign_add", added.dtype.name, added.numpy(), scalar_var.assign(1.0, read_value=False),
      scalar_var.numpy())
