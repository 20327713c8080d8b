"""Softmax regression on a CSV file read and written through tf.gfile.

The iris table is exported to `--data_dir/iris.csv` (any tf.gfile path: a local
directory, or memory://... for a run that touches no disk), read back line by line with
tf.gfile.GFile, fitted, and the test predictions are written to `--output` as CSV.

    python examples/csv_softmax_regression.py --data_dir=/tmp/iris --steps=200
    python examples/csv_softmax_regression.py --data_dir=memory://iris --output=memory://iris/p.csv
"""

import numpy as np

import tensorflux as tf
from tensorflux import datasets

tf.flags.DEFINE_string("data_dir", "/tmp/tensorflux_iris", "Directory (or URL) for the CSV.")
tf.flags.DEFINE_string("output", "", "Where predictions go; default: data_dir/predictions.csv")
tf.flags.DEFINE_integer("steps", 200, "Full-batch gradient descent steps.")
tf.flags.DEFINE_float("learning_rate", 0.5, "Learning rate.")
tf.flags.DEFINE_enum("standardize", "yes", ["yes", "no"], "Standardize the features.")
FLAGS = tf.flags.FLAGS


def export_csv(path):
    """Writes the iris split as CSV rows `split,label,f1,...,f4`."""
    (x_train, y_train), (x_test, y_test) = datasets.load_iris()
    with tf.gfile.GFile(path, "w") as f:
        f.write("split,label,sepal_length,sepal_width,petal_length,petal_width\n")
        for split, xs, ys in (("train", x_train, y_train), ("test", x_test, y_test)):
            for x, y in zip(xs, ys):
                f.write("%s,%d,%s\n" % (split, y, ",".join("%g" % v for v in x)))


def read_csv(path):
    """{split: (features, labels)} read back through tf.gfile."""
    rows = {"train": ([], []), "test": ([], [])}
    with tf.gfile.GFile(path) as f:
        header = f.readline()
        assert header.startswith("split,label"), header
        for line in f:
            split, label, *features = line.strip().split(",")
            rows[split][0].append([float(v) for v in features])
            rows[split][1].append(int(label))
    return {k: (np.array(x, np.float32), np.array(y, np.int64)) for k, (x, y) in rows.items()}


def main(argv):
    tf.logging.set_verbosity(tf.logging.INFO)
    if len(argv) > 1:
        tf.logging.warn("ignoring extra arguments: %s", argv[1:])
    tf.gfile.MakeDirs(FLAGS.data_dir)
    csv_path = tf.io.gfile.join(FLAGS.data_dir, "iris.csv")
    export_csv(csv_path)
    tf.logging.info("wrote %s (%d bytes)", csv_path, tf.gfile.Stat(csv_path).length)
    data = read_csv(csv_path)
    x_train, y_train = data["train"]
    x_test, y_test = data["test"]
    if FLAGS.standardize == "yes":
        mean, std = x_train.mean(0), x_train.std(0)
        x_train, x_test = (x_train - mean) / std, (x_test - mean) / std

    x = tf.placeholder(tf.float32, [None, 4])
    y = tf.placeholder(tf.int64, [None])
    w = tf.Variable(tf.zeros([4, 3]), name="w")
    b = tf.Variable(tf.zeros([3]), name="b")
    logits = tf.matmul(x, w) + b
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y,
                                                                          logits=logits))
    train_op = tf.train.GradientDescentOptimizer(FLAGS.learning_rate).minimize(loss)
    predictions = tf.argmax(logits, 1)

    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for step in range(FLAGS.steps):
            _, loss_value = sess.run([train_op, loss], {x: x_train, y: y_train})
            tf.logging.log_every_n(tf.logging.INFO, "step %d: loss %.4f",
                                   max(FLAGS.steps // 4, 1), step, loss_value)
        predicted = sess.run(predictions, {x: x_test})

    output = FLAGS.output or tf.io.gfile.join(FLAGS.data_dir, "predictions.csv")
    with tf.gfile.GFile(output, "w") as f:
        f.write("label,predicted\n")
        for label, guess in zip(y_test, predicted):
            f.write("%d,%d\n" % (label, guess))
    accuracy = float(np.mean(predicted == y_test))
    print("final loss: %.4f" % loss_value)
    print("test accuracy: %.4f (%d examples) -> %s" % (accuracy, len(y_test), output))


if __name__ == "__main__":
    tf.app.run(main)
