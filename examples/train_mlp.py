"""Trains a one-hidden-layer MLP on the UCI digits, the way TF1 scripts were written.

Flags choose the model and the run; progress goes through tf.logging; the checkpoint
directory is created with tf.gfile; main() is run by tf.app.run().

    python examples/train_mlp.py --train_dir=/tmp/mlp --max_steps=500
    python examples/train_mlp.py --help
"""

import numpy as np

import tensorflux as tf
from tensorflux import datasets

flags = tf.app.flags
flags.DEFINE_string("train_dir", "/tmp/tensorflux_mlp", "Where checkpoints are written.")
flags.DEFINE_integer("hidden_units", 64, "Units of the hidden layer.")
flags.DEFINE_integer("batch_size", 64, "Examples per training step.")
flags.DEFINE_integer("max_steps", 300, "Training steps.")
flags.DEFINE_float("learning_rate", 0.1, "Learning rate of gradient descent.")
flags.DEFINE_integer("log_every", 100, "Log the loss every this many steps.")
flags.DEFINE_boolean("fresh", False, "Delete train_dir first.")
FLAGS = flags.FLAGS


def build_model(images, hidden_units):
    """Logits for a batch of flattened 8x8 images."""
    with tf.variable_scope("hidden"):
        w = tf.get_variable("weights", [64, hidden_units],
                            initializer=tf.truncated_normal_initializer(stddev=0.1))
        b = tf.get_variable("biases", [hidden_units], initializer=tf.zeros_initializer())
        hidden = tf.nn.relu(tf.matmul(images, w) + b)
    with tf.variable_scope("softmax_linear"):
        w = tf.get_variable("weights", [hidden_units, 10],
                            initializer=tf.truncated_normal_initializer(stddev=0.1))
        b = tf.get_variable("biases", [10], initializer=tf.zeros_initializer())
        return tf.matmul(hidden, w) + b


def main(argv):
    del argv  # unused
    tf.logging.set_verbosity(tf.logging.INFO)
    if FLAGS.fresh and tf.gfile.Exists(FLAGS.train_dir):
        tf.gfile.DeleteRecursively(FLAGS.train_dir)
    tf.gfile.MakeDirs(FLAGS.train_dir)

    (x_train, y_train), (x_test, y_test) = datasets.load_digits()
    x_train = x_train.reshape(-1, 64).astype(np.float32) / 16.0
    x_test = x_test.reshape(-1, 64).astype(np.float32) / 16.0

    tf.set_random_seed(0)
    images = tf.placeholder(tf.float32, [None, 64], name="images")
    labels = tf.placeholder(tf.int64, [None], name="labels")
    logits = build_model(images, FLAGS.hidden_units)
    loss = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
    global_step = tf.train.get_or_create_global_step()
    train_op = tf.train.GradientDescentOptimizer(FLAGS.learning_rate).minimize(
        loss, global_step=global_step)
    accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), labels), tf.float32))
    saver = tf.train.Saver()

    rng = np.random.RandomState(0)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for step in range(1, FLAGS.max_steps + 1):
            idx = rng.randint(0, len(x_train), FLAGS.batch_size)
            _, loss_value = sess.run([train_op, loss],
                                     {images: x_train[idx], labels: y_train[idx]})
            if step % FLAGS.log_every == 0 or step == FLAGS.max_steps:
                tf.logging.info("step %d: loss = %.4f", step, loss_value)
        path = saver.save(sess, tf.io.gfile.join(FLAGS.train_dir, "model.ckpt"),
                          global_step=global_step)
        test_accuracy = sess.run(accuracy, {images: x_test, labels: y_test})
    tf.logging.info("saved %s", path)
    print("test accuracy: %.4f" % test_accuracy)
    print("checkpoint files: %s" % " ".join(sorted(tf.gfile.ListDirectory(FLAGS.train_dir))))


if __name__ == "__main__":
    tf.app.run()
