"""The classic first TF1 program: build a graph, then run it in a Session."""

import numpy as np

import tensorflux as tf

a = tf.constant([1, 2], name="a")
b = tf.constant([2, 4], name="b")
result = a + b
print(result)  # Tensor("add:0", shape=(2,), dtype=int32)

with tf.Session() as sess:
    print(sess.run(tf.constant([1, 2, 3, 4]) + tf.constant([1, 2, 3, 4])))  # [2 4 6 8]

# A placeholder with an unknown batch dimension, fed at run time.
x = tf.placeholder(tf.float32, shape=[None, 3], name="x")
row_sums = tf.reduce_sum(x * 2.0 + 1.0, axis=1)
print(row_sums)  # Tensor("Sum:0", shape=(?,), dtype=float32)

# A linear model trained with gradient descent.
rng = np.random.default_rng(0)
features = rng.normal(size=(100, 3)).astype(np.float32)
targets = features @ np.array([[2.0], [-1.0], [0.5]], np.float32) + 0.25
y = tf.placeholder(tf.float32, shape=[None, 1], name="y")
w = tf.get_variable("w", shape=[3, 1], initializer=tf.zeros_initializer())
bias = tf.get_variable("bias", shape=[1], initializer=tf.zeros_initializer())
loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + bias - y))
train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)

with tf.Session() as sess:
    print(sess.run(row_sums, feed_dict={x: [[1, 2, 3], [4, 5, 6]]}))  # [15. 33.]
    sess.run(tf.global_variables_initializer())
    for step in range(200):
        _, current = sess.run([train, loss], feed_dict={x: features, y: targets})
    print("loss after 200 steps: %.6f" % current)
    print("w =", sess.run(w).ravel().round(3), "bias =", sess.run(bias).round(3))
