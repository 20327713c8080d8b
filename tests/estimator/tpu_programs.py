"""TPUEstimator runs for test_tpu_estimator.py, in a subprocess with forced CPU devices
(JAX fixes its device count at start). Prints one JSON line of results."""

import json
import logging
import sys
import tempfile

import numpy as np

import tensorflux as tf

D, K, BATCH, STEPS, LR = 3, 4, 8, 200, 0.5


def data(n):
    rng = np.random.RandomState(0)
    x = rng.randn(n, D).astype(np.float32)
    labels = np.argmax(x @ rng.randn(D, K) + 0.5 * rng.randn(n, K), axis=1).astype(np.int32)
    return x, labels


def train_input_fn(params):
    x, y = data(STEPS * BATCH)
    return tf.data.Dataset.from_tensor_slices((x, y)).batch(params["batch_size"],
                                                             drop_remainder=True)


def eval_input_fn(params):
    x, y = data(STEPS * BATCH)
    return tf.data.Dataset.from_tensor_slices((x[:64], y[:64])).batch(params["batch_size"],
                                                                      drop_remainder=True)


def predict_input_fn(params):
    x, _ = data(STEPS * BATCH)
    return tf.data.Dataset.from_tensor_slices(x[:16]).batch(params["batch_size"])


def run(num_shards, iterations_per_loop):
    host_rows, batch_sizes = [], {}

    def record(step, loss):
        host_rows.append([int(step[0]), float(loss[0])])
        return np.int64(0)

    def model_fn(features, labels, mode, params):
        batch_sizes.setdefault(mode, params.get("batch_size"))
        w = tf.get_variable("w", [D, K], initializer=tf.zeros_initializer())
        b = tf.get_variable("b", [K], initializer=tf.zeros_initializer())
        logits = tf.matmul(features, w) + b
        if mode == tf.estimator.ModeKeys.PREDICT:
            return tf.contrib.tpu.TPUEstimatorSpec(
                mode, predictions={"probabilities": tf.nn.softmax(logits),
                                   "class": tf.argmax(logits, 1)})
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
            labels=labels, logits=logits))
        if mode == tf.estimator.ModeKeys.EVAL:
            def metric_fn(labels, logits):
                return {"accuracy": tf.metrics.accuracy(labels, tf.argmax(logits, 1))}
            return tf.contrib.tpu.TPUEstimatorSpec(mode, loss=loss,
                                                   eval_metrics=(metric_fn, [labels, logits]))
        opt = tf.contrib.tpu.CrossShardOptimizer(tf.train.GradientDescentOptimizer(LR))
        train_op = opt.minimize(loss, global_step=tf.train.get_global_step())
        step = tf.reshape(tf.train.get_global_step(), [1])

        def host_call(step, loss):
            return [tf.py_func(record, [step, loss], tf.int64)]
        return tf.contrib.tpu.TPUEstimatorSpec(
            mode, loss=loss, train_op=train_op,
            host_call=(host_call, [step, tf.reshape(loss, [1])]))

    class CountRuns(tf.train.SessionRunHook):
        runs = 0

        def after_run(self, run_context, run_values):
            CountRuns.runs += 1

    config = tf.contrib.tpu.RunConfig(
        model_dir=tempfile.mkdtemp(), save_checkpoints_steps=100,
        tpu_config=tf.contrib.tpu.TPUConfig(iterations_per_loop=iterations_per_loop,
                                            num_shards=num_shards))
    est = tf.contrib.tpu.TPUEstimator(model_fn, config=config, train_batch_size=BATCH,
                                      eval_batch_size=BATCH, predict_batch_size=BATCH)
    est.train(train_input_fn, max_steps=STEPS, hooks=[CountRuns()])
    out = {"runs": CountRuns.runs, "host_call": host_rows,
           "w": est.get_variable_value("w").tolist(), "b": est.get_variable_value("b").tolist(),
           "global_step": int(est.get_variable_value("global_step")),
           "checkpoints": sorted(int(p.rsplit("-", 1)[1]) for p in
                                 tf.train.get_checkpoint_state(est.model_dir)
                                 .all_model_checkpoint_paths)}
    out["eval"] = {k: float(v) for k, v in est.evaluate(eval_input_fn, steps=8).items()}
    out["predict"] = [{k: v.tolist() for k, v in p.items()}
                      for p in est.predict(predict_input_fn)]
    out["batch_sizes"] = batch_sizes

    def serving_input_receiver_fn():
        x = tf.placeholder(tf.float32, [None, D], name="x")
        return tf.estimator.export.TensorServingInputReceiver(x, {"x": x})
    export_dir = est.export_saved_model(tempfile.mkdtemp(), serving_input_receiver_fn)
    with tf.Graph().as_default(), tf.Session() as sess:
        meta = tf.saved_model.loader.load(sess, ["serve"], export_dir.decode())
        sig = meta.signature_def["serving_default"]
        x, _ = data(STEPS * BATCH)
        out["served"] = sess.run(sig.outputs["probabilities"].name,
                                 {sig.inputs["x"].name: x[:2]}).tolist()
    return out


if __name__ == "__main__":
    logging.disable(logging.WARNING)
    shards = [int(s) for s in sys.argv[1].split(",")]
    loops = [int(s) for s in sys.argv[2].split(",")]
    print(json.dumps({f"{n}x{k}": run(n, k) for n in shards for k in loops}))
