"""A LeNet-style CNN built with tf.layers trains on the built-in UCI digits to >= 97%.

Also checks the batch-norm contract: moving statistics change only when the
UPDATE_OPS run.
"""

import numpy as np
import pytest

import tensorflux as tf
from tensorflux.datasets import load_digits


EPOCHS, BATCH = 25, 64


def build(images, training):
    h = tf.layers.conv2d(images, 32, 3, padding="same", activation=None)  # (N, 8, 8, 32)
    h = tf.layers.batch_normalization(h, training=training)
    h = tf.nn.relu(h)
    h = tf.layers.max_pooling2d(h, 2, 2)  # (N, 4, 4, 32)
    h = tf.layers.conv2d(h, 64, 3, padding="same", activation=tf.nn.relu)
    h = tf.layers.max_pooling2d(h, 2, 2)  # (N, 2, 2, 64)
    h = tf.layers.flatten(h)
    h = tf.layers.dense(h, 128, activation=tf.nn.relu)
    h = tf.layers.dropout(h, rate=0.3, training=training)
    return tf.layers.dense(h, 10)


@pytest.mark.slow
def test_lenet_trains_on_digits_to_97_percent():
    (x_train, y_train), (x_test, y_test) = load_digits()
    x_train = (x_train / 16.0).astype(np.float32)[..., None]
    x_test = (x_test / 16.0).astype(np.float32)[..., None]
    tf.set_random_seed(0)
    images = tf.placeholder(tf.float32, [None, 8, 8, 1])
    labels = tf.placeholder(tf.int64, [None])
    training = tf.placeholder_with_default(False, [])
    logits = build(images, training)
    loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
    step = tf.train.get_or_create_global_step()
    steps_per_epoch = -(-len(x_train) // BATCH)
    learning_rate = tf.train.cosine_decay(3e-3, step, EPOCHS * steps_per_epoch)
    with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS)):
        train = tf.train.AdamOptimizer(learning_rate).minimize(loss, global_step=step)
    correct = tf.equal(tf.argmax(logits, 1), labels)
    accuracy = tf.reduce_mean(tf.cast(correct, tf.float32))
    moving_mean = [v for v in tf.global_variables() if "moving_mean" in v.name][0]

    rng = np.random.default_rng(0)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        before = sess.run(moving_mean)
        sess.run(loss, {images: x_train[:64], labels: y_train[:64], training: True})
        np.testing.assert_array_equal(sess.run(moving_mean), before)  # no update op ran
        for epoch in range(EPOCHS):
            order = rng.permutation(len(x_train))
            for start in range(0, len(order), BATCH):
                batch = order[start:start + BATCH]
                sess.run(train, {images: x_train[batch], labels: y_train[batch],
                                 training: True})
        assert not np.allclose(sess.run(moving_mean), before)
        test_accuracy = sess.run(accuracy, {images: x_test, labels: y_test})
    print(f"LeNet on UCI digits: test accuracy {test_accuracy:.4f}")
    assert test_accuracy >= 0.97, f"test accuracy {test_accuracy:.4f}"
