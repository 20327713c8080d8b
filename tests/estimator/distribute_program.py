"""Estimator with RunConfig(train_distribute=MirroredStrategy(2), eval_distribute=...) on
2 forced CPU devices, for test_estimator_distribute.py (JAX fixes its device count at
start, hence a subprocess). Prints one JSON line."""

import json
import logging
import sys
import tempfile

import numpy as np

import tensorflux as tf

D, K, PER_REPLICA, STEPS, LR = 3, 4, 8, 20, 0.5


def data(n):
    rng = np.random.RandomState(0)
    x = rng.randn(n, D).astype(np.float32)
    y = np.argmax(x @ rng.randn(D, K), axis=1).astype(np.int64)
    return x, y


def model_fn(features, labels, mode):
    w = tf.get_variable("w", [D, K], initializer=tf.zeros_initializer())
    b = tf.get_variable("b", [K], initializer=tf.zeros_initializer())
    logits = tf.matmul(features, w) + b
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=labels, logits=logits))
    if mode == tf.estimator.ModeKeys.EVAL:
        return tf.estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops={
            "accuracy": tf.metrics.accuracy(labels, tf.argmax(logits, 1))})
    train_op = tf.train.GradientDescentOptimizer(LR).minimize(
        loss, global_step=tf.train.get_global_step())
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def run(replicas):
    x, y = data(STEPS * PER_REPLICA * 2)
    batch = PER_REPLICA if replicas > 1 else PER_REPLICA * 2   # the same global batch
    strategy = tf.distribute.MirroredStrategy(num_replicas=replicas) if replicas > 1 else None
    config = tf.estimator.RunConfig(model_dir=tempfile.mkdtemp(), train_distribute=strategy,
                                    eval_distribute=strategy)
    est = tf.estimator.Estimator(model_fn, config=config)
    est.train(lambda: tf.data.Dataset.from_tensor_slices((x, y)).batch(batch))
    result = est.evaluate(lambda: tf.data.Dataset.from_tensor_slices((x[:96], y[:96]))
                          .batch(batch))
    return {"w": est.get_variable_value("w").tolist(), "b": est.get_variable_value("b").tolist(),
            "eval": {k: float(v) for k, v in result.items()}}


if __name__ == "__main__":
    logging.disable(logging.WARNING)
    print(json.dumps({n: run(int(n)) for n in sys.argv[1].split(",")}))
