"""Run as `python model_parallel_programs.py` with XLA_FLAGS forcing 2 host devices (the
flag must be set before JAX starts, so test_model_parallel.py runs this in a
subprocess). Prints one JSON object: per program, what it computed and what the run
plan / step stats say about placement."""

import json

import numpy as np

import tensorflux as tf
from tensorflux._src.runtime.config import run_plan

STEPS, BATCH = 3, 8


def data(step):
    rng = np.random.default_rng(step)
    x = rng.normal(size=(BATCH, 6)).astype(np.float32)
    y = np.eye(3, dtype=np.float32)[rng.integers(0, 3, BATCH)]
    return x, y


def train_mlp(first, second, colocate=True):
    """A 2-layer MLP, layer 1 under tf.device(first) and layer 2 + loss under
    tf.device(second) (None: no scope), trained with Momentum."""
    def scope(device):
        return tf.device(device) if device else tf.device(None)

    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [None, 6])
        y = tf.placeholder(tf.float32, [None, 3])
        with scope(first):
            w1 = tf.Variable(np.random.default_rng(1).normal(size=(6, 16)).astype(np.float32),
                             name="w1")
            b1 = tf.Variable(np.zeros(16, np.float32), name="b1")
            h = tf.nn.relu(tf.matmul(x, w1) + b1)
        with scope(second):
            w2 = tf.Variable(np.random.default_rng(2).normal(size=(16, 3)).astype(np.float32),
                             name="w2")
            b2 = tf.Variable(np.zeros(3, np.float32), name="b2")
            logits = tf.matmul(h, w2) + b2
            loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=y,
                                                                              logits=logits))
        train_op = tf.train.MomentumOptimizer(0.1, 0.9).minimize(
            loss, colocate_gradients_with_ops=colocate)
        init = tf.global_variables_initializer()
        variables = tf.global_variables()
    losses = []
    with tf.Session(graph=graph) as sess:
        sess.run(init)
        for step in range(STEPS):
            xv, yv = data(step)
            meta = tf.RunMetadata()
            _, value = sess.run([train_op, loss], {x: xv, y: yv}, run_metadata=meta)
            losses.append(float(value))
        values = sess.run(variables)
        # Where each variable's buffer (and its Momentum slot) lives in the store.
        homes = {op.name: sorted(d.id for d in buf.devices())
                 for op, buf in sess._state.variables.items()}
    plan = [line.split(":")[0] + ":" + line.split(":")[1] for line in run_plan(meta)]
    return {"losses": losses, "values": [v.tolist() for v in values], "plan": plan,
            "step_devices": [s.device for s in meta.step_stats.dev_stats],
            "homes": homes}


def mlp():
    reference = train_mlp(None, None)
    out = {}
    for name, kwargs in (("colocated", {}), ("not_colocated", {"colocate": False})):
        split = train_mlp("/cpu:0", "/cpu:1", **kwargs)
        out[name] = {
            "loss_diff": float(np.max(np.abs(np.subtract(split["losses"],
                                                         reference["losses"])))),
            "var_diff": max(float(np.max(np.abs(np.subtract(a, b))))
                            for a, b in zip(split["values"], reference["values"])),
            "plan": split["plan"], "step_devices": split["step_devices"],
            "homes": split["homes"]}
    out["reference_plan"] = reference["plan"]
    out["one_device"] = train_mlp("/cpu:1", "/cpu:1")["plan"]
    return out


def variable_elsewhere():
    """A variable on device 1 read and updated by ops on device 0."""
    with tf.Graph().as_default():
        with tf.device("/cpu:1"):
            v = tf.Variable([1.0, 2.0, 3.0], name="v")
        with tf.device("/cpu:0"):
            x = tf.placeholder(tf.float32, [3])
            y = v * x + 1.0
            step = tf.assign_add(v, y)  # placed on cpu:0, runs with v on cpu:1
        with tf.Session() as sess:
            sess.run(v.initializer)
            meta = tf.RunMetadata()
            y_value, _ = sess.run([y, step], {x: [2.0, 2.0, 2.0]}, run_metadata=meta)
            after = sess.run(v)
            home = sorted(d.id for d in sess._state.variables[v.op].devices())
    return {"y": y_value.tolist(), "after": after.tolist(), "home": home,
            "plan": run_plan(meta)}


def host_op_between_devices():
    """A host op (tf.where's data-dependent shape) between clusters on two devices."""
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [4])
        with tf.device("/cpu:0"):
            doubled = x * 2.0
        idx = tf.where(doubled > 2.0)
        with tf.device("/cpu:1"):
            out = tf.reduce_sum(tf.gather(doubled, idx[:, 0])) + 1.0
        meta = tf.RunMetadata()
        with tf.Session() as sess:
            value = sess.run(out, {x: [0.5, 1.5, 2.0, 3.0]}, run_metadata=meta)
    return {"value": float(value), "plan": run_plan(meta)}


print(json.dumps({"mlp": mlp(), "variable_elsewhere": variable_elsewhere(),
                  "host_between": host_op_between_devices()}))
