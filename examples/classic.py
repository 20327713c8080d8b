"""The classic first TF1 program: build a graph, then run it in a Session."""

import tensorflux as tf

a = tf.constant([1, 2], name="a")
b = tf.constant([2, 4], name="b")
result = a + b
print(result)  # Tensor("add:0", shape=(2,), dtype=int32)

with tf.Session() as sess:
    print(sess.run(tf.constant([1, 2, 3, 4]) + tf.constant([1, 2, 3, 4])))  # [2 4 6 8]

    # Placeholders are fed at run time; shapes may have unknown dimensions.
    x = tf.placeholder(tf.float32, shape=[None, 3], name="x")
    y = tf.reduce_sum(x * 2.0 + 1.0, axis=1) if hasattr(tf, "reduce_sum") else x * 2.0 + 1.0
    print(sess.run(y, feed_dict={x: [[1, 2, 3], [4, 5, 6]]}))
