"""Run as `python spmd_programs.py N [all]` with XLA_FLAGS forcing N host devices (the flag
must be set before JAX starts, so test_replicas.py runs this in a subprocess).

Each program trains a few steps once on one device and once replicated over N
devices from the same initial values and data, and prints one JSON object: per
program, the largest difference in losses and in final variable values, plus what
the run plan says about placement."""

import contextlib
import json
import sys

import numpy as np

import tensorflux as tf
from tensorflux._src.runtime.config import compiler_options_config, run_plan

N = int(sys.argv[1])
STEPS, BATCH = 2, 4 * N
# One executable per cluster (no autotuning of XLA:CPU's conv fusion): keeps it quick.
CONFIG = compiler_options_config({"xla_cpu_experimental_ynn_fusion_type": None})


def data(step, features, classes):
    rng = np.random.default_rng(step)
    x = rng.normal(size=(BATCH,) + features).astype(np.float32)
    y = np.eye(classes, dtype=np.float32)[rng.integers(0, classes, BATCH)]
    return x, y


def mlp_with_batch_norm(x, classes):
    h = tf.layers.dense(x, 32, activation=tf.nn.relu,
                        kernel_initializer=tf.glorot_uniform_initializer(seed=1))
    h = tf.layers.batch_normalization(h, training=True)
    return tf.layers.dense(h, classes, kernel_initializer=tf.glorot_uniform_initializer(seed=2))


def small_cnn(x, classes):
    h = tf.layers.conv2d(x, 8, 3, padding="same",
                         kernel_initializer=tf.glorot_uniform_initializer(seed=3))
    h = tf.nn.relu(tf.layers.batch_normalization(h, training=True))
    h = tf.layers.max_pooling2d(h, 2, 2)
    h = tf.reduce_mean(h, axis=[1, 2])
    return tf.layers.dense(h, classes, kernel_initializer=tf.glorot_uniform_initializer(seed=4))


def train(model, features, classes, mode):
    """mode: None (one device), "scope" (MirroredStrategy.scope), "replicate"."""
    graph = tf.Graph()
    with graph.as_default():
        strategy = tf.distribute.MirroredStrategy(num_replicas=N) if mode else None
        with strategy.scope() if mode == "scope" else contextlib.nullcontext():
            x = tf.placeholder(tf.float32, (None,) + features)
            y = tf.placeholder(tf.float32, [None, classes])
            logits = model(x, classes)
            loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=y,
                                                                              logits=logits))
            with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS)):
                train_op = tf.train.MomentumOptimizer(0.1, 0.9).minimize(loss)
        if mode == "replicate":
            tf.distribute.replicate([train_op, loss], num_replicas=N)
        init = tf.global_variables_initializer()
        variables = tf.global_variables()
    losses = []
    with tf.Session(graph=graph, config=CONFIG) as sess:
        sess.run(init)
        for step in range(STEPS):
            xv, yv = data(step, features, classes)
            meta = tf.RunMetadata()
            _, value = sess.run([train_op, loss], {x: xv, y: yv}, run_metadata=meta)
            losses.append(value)
        values = sess.run(variables)
        devices_holding = {v.op.name: sess._state.variables[v.op].sharding.num_devices
                           for v in variables}
    return losses, values, run_plan(meta)[0].split(":")[0], devices_holding


def compare(model, features, classes, mode):
    ref_losses, ref_values, _, _ = train(model, features, classes, None)
    losses, values, plan, holding = train(model, features, classes, mode)
    return {"loss_diff": float(np.max(np.abs(np.subtract(losses, ref_losses)))),
            "var_diff": max(float(np.max(np.abs(a - b))) for a, b in zip(values, ref_values)),
            "plan": plan, "devices_holding_variables": sorted(set(holding.values()))}


def towers():
    """TF1's in-graph replication: one tower per device, shared variables, averaged
    gradients; compared with the same model on the whole batch."""
    def build(num_towers):
        graph = tf.Graph()
        with graph.as_default():
            x = tf.placeholder(tf.float32, [None, 4])
            y = tf.placeholder(tf.float32, [None, 3])
            opt = tf.train.MomentumOptimizer(0.1, 0.9)
            grads, losses = [], []
            for i, (xs, ys) in enumerate(zip(tf.split(x, num_towers), tf.split(y, num_towers))):
                with tf.device(f"/cpu:{i}"), tf.variable_scope("model", reuse=i > 0):
                    w = tf.get_variable("w", [4, 3], initializer=tf.constant_initializer(0.1))
                    b = tf.get_variable("b", [3], initializer=tf.zeros_initializer())
                    loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(
                        labels=ys, logits=tf.matmul(xs, w) + b))
                    losses.append(loss)
                    grads.append(opt.compute_gradients(loss))
            averaged = [(tf.add_n([g for g, _ in pairs]) / num_towers, pairs[0][1])
                        for pairs in zip(*grads)]
            train_op = opt.apply_gradients(averaged)
            mean_loss = tf.reduce_mean(tf.stack(losses))
            init = tf.global_variables_initializer()
            variables = tf.global_variables()
        rng = np.random.default_rng(0)
        xv = rng.normal(size=(8, 4)).astype(np.float32)
        yv = np.eye(3, dtype=np.float32)[rng.integers(0, 3, 8)]
        with tf.Session(graph=graph) as sess:
            sess.run(init)
            out = [sess.run([train_op, mean_loss], {x: xv, y: yv})[1] for _ in range(3)]
            return out, sess.run(variables), len(variables)

    one, one_values, _ = build(1)
    many, many_values, count = build(N)
    return {"loss_diff": float(np.max(np.abs(np.subtract(one, many)))),
            "var_diff": max(float(np.max(np.abs(a - b))) for a, b in zip(one_values,
                                                                         many_values)),
            "num_variables": count}


def placement():
    """An op placed on the last device runs there; a device that does not exist is an
    error only with allow_soft_placement=False."""
    out = {}
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2])
        with tf.device(f"/cpu:{N - 1}"):
            z = x * 3.0
        meta = tf.RunMetadata()
        with tf.Session() as sess:
            out["value"] = sess.run(z, {x: [1.0, 2.0]}, run_metadata=meta).tolist()
        out["device"] = meta.step_stats.dev_stats[0].device
        with tf.device(f"/cpu:{N + 3}"):
            missing = tf.constant([1.0]) + 1.0
        with tf.Session() as sess:
            out["soft"] = sess.run(missing).tolist()
        strict = tf.ConfigProto(allow_soft_placement=False)
        with tf.Session(config=strict) as sess:
            out["strict_existing"] = sess.run(z, {x: [1.0, 2.0]}).tolist()
            try:
                sess.run(missing)
            except tf.errors.InvalidArgumentError as e:
                out["strict_error"] = e.message
    return out


def uneven_batch():
    """A batch that does not divide by N is replicated rather than split: same result."""
    results = []
    for mode in (None, "replicate"):
        with tf.Graph().as_default():
            x = tf.placeholder(tf.float32, [None, 3])
            w = tf.Variable(np.arange(6, dtype=np.float32).reshape(3, 2))
            loss = tf.reduce_mean(tf.square(tf.matmul(x, w)))
            step = tf.train.GradientDescentOptimizer(0.01).minimize(loss)
            if mode:
                tf.distribute.replicate(step, num_replicas=N)
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                sess.run(step, {x: np.ones((N + 1, 3), np.float32)})
                results.append(sess.run(w))
    return float(np.max(np.abs(results[0] - results[1])))


results = {"cnn_bn_replicate": compare(small_cnn, (6, 6, 3), 4, "replicate")}
if sys.argv[2:] == ["all"]:  # the rest once (N=4) keeps the suite quick on 2 cores
    results.update(mlp_bn_scope=compare(mlp_with_batch_norm, (12,), 5, "scope"),
                   towers=towers(), placement=placement(), uneven=uneven_batch())
print(json.dumps(results))
