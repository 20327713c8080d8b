"""Trains a small classifier on the breast-cancer table and keeps its best checkpoint.

After every evaluation the validation accuracy is compared with the best so far; a
better model's checkpoint files are copied (tf.gfile.Glob + tf.gfile.Copy) into
`--train_dir/best`, and a JSON summary of the run is written with tf.gfile.GFile.

    python examples/keep_best_checkpoint.py --train_dir=/tmp/bc --hidden=32,16 --epochs=20
"""

import json

import numpy as np

import tensorflux as tf
from tensorflux import datasets

flags = tf.app.flags
flags.DEFINE_string("train_dir", None, "Run directory (required).")
flags.DEFINE_list("hidden", ["16"], "Hidden layer sizes, comma-separated.")
flags.DEFINE_integer("epochs", 10, "Passes over the training data.")
flags.DEFINE_integer("batch_size", 32, "Examples per step.")
flags.DEFINE_float("learning_rate", 0.05, "Momentum optimizer learning rate.")
flags.mark_flag_as_required("train_dir")
FLAGS = flags.FLAGS


def main(_):
    tf.logging.set_verbosity(tf.logging.INFO)
    best_dir = tf.io.gfile.join(FLAGS.train_dir, "best")
    for d in (FLAGS.train_dir, best_dir):
        if not tf.gfile.IsDirectory(d):
            tf.gfile.MakeDirs(d)

    (x_train, y_train), (x_val, y_val) = datasets.load_breast_cancer()
    mean, std = x_train.mean(0), x_train.std(0) + 1e-6
    x_train = ((x_train - mean) / std).astype(np.float32)
    x_val = ((x_val - mean) / std).astype(np.float32)

    tf.set_random_seed(1)
    x = tf.placeholder(tf.float32, [None, x_train.shape[1]], name="x")
    y = tf.placeholder(tf.int64, [None], name="y")
    net = x
    for i, units in enumerate(int(u) for u in FLAGS.hidden):
        net = tf.layers.dense(net, units, activation=tf.nn.relu, name="hidden%d" % i)
    logits = tf.layers.dense(net, 2, name="logits")
    loss = tf.losses.sparse_softmax_cross_entropy(labels=y, logits=logits)
    step = tf.train.get_or_create_global_step()
    train_op = tf.train.MomentumOptimizer(FLAGS.learning_rate, 0.9).minimize(
        loss, global_step=step)
    accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), y), tf.float32))
    saver = tf.train.Saver(max_to_keep=2)

    best = {"accuracy": -1.0, "epoch": None}
    history = []
    rng = np.random.RandomState(1)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for epoch in range(1, FLAGS.epochs + 1):
            order = rng.permutation(len(x_train))
            for start in range(0, len(order), FLAGS.batch_size):
                idx = order[start:start + FLAGS.batch_size]
                sess.run(train_op, {x: x_train[idx], y: y_train[idx]})
            val_accuracy, val_loss = sess.run([accuracy, loss], {x: x_val, y: y_val})
            history.append({"epoch": epoch, "accuracy": float(val_accuracy),
                            "loss": float(val_loss)})
            prefix = saver.save(sess, tf.io.gfile.join(FLAGS.train_dir, "model.ckpt"),
                                global_step=epoch)
            tf.logging.info("epoch %d: validation accuracy %.4f, loss %.4f", epoch,
                            val_accuracy, val_loss)
            if val_accuracy > best["accuracy"]:
                for old in tf.gfile.Glob(tf.io.gfile.join(best_dir, "model.ckpt-*")):
                    tf.gfile.Remove(old)
                for src in tf.gfile.Glob(prefix + ".*"):
                    dst = tf.io.gfile.join(best_dir, src.rsplit("/", 1)[-1])
                    tf.gfile.Copy(src, dst, overwrite=True)
                best = {"accuracy": float(val_accuracy), "epoch": epoch}
                tf.logging.info("new best model, copied to %s", best_dir)

    with tf.gfile.GFile(tf.io.gfile.join(FLAGS.train_dir, "summary.json"), "w") as f:
        f.write(json.dumps({"best": best, "history": history}, indent=1))
    print("best epoch %d: validation accuracy %.4f" % (best["epoch"], best["accuracy"]))
    print("best checkpoint: %s" % " ".join(sorted(tf.gfile.ListDirectory(best_dir))))


if __name__ == "__main__":
    tf.app.run()
