"""One worker of a multi-worker run: `python -m tensorflux.distribute.launch -n 2 --
multi_worker_programs.py OUT_DIR` (test_multi_worker.py does this).

Trains a small MLP with SGD under MultiWorkerMirroredStrategy, feeding this worker's
rows of a global batch that every worker generates alike, and writes what it saw to
OUT_DIR/worker_<index>.json: initial and final variables, the fetched losses and
logits, and a few checks of how inputs are placed. The test compares the workers with
each other and with NumPy on the whole batch."""

import json
import pathlib
import sys

import numpy as np

import tensorflux as tf
from tensorflux._src.runtime.config import run_plan

STEPS, GLOBAL_BATCH, FEATURES, HIDDEN, CLASSES = 3, 8, 4, 6, 3
LEARNING_RATE = 0.5


def global_batch(step):
    rng = np.random.default_rng(100 + step)
    x = rng.normal(size=(GLOBAL_BATCH, FEATURES)).astype(np.float32)
    y = np.eye(CLASSES, dtype=np.float32)[rng.integers(0, CLASSES, GLOBAL_BATCH)]
    return x, y


def main(out_dir):
    # First thing: jax.distributed starts before anything runs on JAX.
    strategy = tf.distribute.experimental.MultiWorkerMirroredStrategy(
        initialization_timeout=30)
    me, workers = strategy.worker_index, strategy.num_workers
    rows = GLOBAL_BATCH // workers

    with strategy.scope():
        x = tf.placeholder(tf.float32, [None, FEATURES])
        y = tf.placeholder(tf.float32, [None, CLASSES])
        lr = tf.placeholder(tf.float32, [])
        # Unseeded: every worker would draw its own; the chief's values must win.
        w1 = tf.get_variable("w1", [FEATURES, HIDDEN],
                             initializer=tf.glorot_uniform_initializer())
        b1 = tf.get_variable("b1", [HIDDEN], initializer=tf.random_normal_initializer())
        w2 = tf.get_variable("w2", [HIDDEN, CLASSES],
                             initializer=tf.glorot_uniform_initializer())
        b2 = tf.get_variable("b2", [CLASSES], initializer=tf.zeros_initializer())
        logits = tf.matmul(tf.tanh(tf.matmul(x, w1) + b1), w2) + b2
        loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=y,
                                                                          logits=logits))
        train_op = tf.train.GradientDescentOptimizer(lr).minimize(loss)
        init = tf.global_variables_initializer()

        # Placement checks: a host op on fed rows gives this worker's slice; a host op
        # on a global value gives the same on every worker; a scalar is the chief's.
        doubled = tf.py_func(lambda a: a * 2.0, [x], tf.float32, stateful=False)
        doubled.set_shape([None, FEATURES])
        rows_seen = tf.shape(doubled)[0]
        doubled_sum = tf.reduce_sum(doubled)
        sorted_logits = tf.py_func(lambda a: np.sort(a, axis=None), [logits], tf.float32,
                                   stateful=False)
        sorted_sum = tf.reduce_sum(sorted_logits * 1.0)
        lr_seen = lr * 1.0
    variables = [w1, b1, w2, b2]

    out = {"worker_index": me, "num_workers": workers, "is_chief": strategy.is_chief,
           "num_replicas_in_sync": strategy.num_replicas_in_sync,
           "devices": list(strategy.devices), "losses": [], "logits": []}
    with tf.Session() as sess:
        sess.run(init)
        out["initial"] = [v.tolist() for v in sess.run(variables)]
        for step in range(STEPS):
            xg, yg = global_batch(step)
            mine = slice(me * rows, (me + 1) * rows)
            meta = tf.RunMetadata()
            _, loss_value, logits_value = sess.run(
                [train_op, loss, logits], {x: xg[mine], y: yg[mine], lr: LEARNING_RATE},
                run_metadata=meta)
            out["losses"].append(float(loss_value))
            out["logits"].append(logits_value.tolist())
        out["plan"] = run_plan(meta)[0]
        out["final"] = [v.tolist() for v in sess.run(variables)]
        xg, yg = global_batch(0)
        checks = sess.run([rows_seen, doubled_sum, sorted_sum, lr_seen],
                          {x: xg[me * rows:(me + 1) * rows], lr: 0.1 * (me + 1)})
        out["rows_seen"], out["doubled_sum"] = int(checks[0]), float(checks[1])
        out["sorted_sum"], out["lr_seen"] = float(checks[2]), float(checks[3])
        # A plain run (no variables written, no host ops): the fast path.
        out["eval_loss"] = float(sess.run(loss, {x: xg[me * rows:(me + 1) * rows],
                                                 y: yg[me * rows:(me + 1) * rows]}))
        out["variable_devices"] = sess._state.variables[w1.op].sharding.num_devices
    pathlib.Path(out_dir, f"worker_{me}.json").write_text(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1])
