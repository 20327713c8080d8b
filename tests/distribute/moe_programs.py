"""Run as `python moe_programs.py N` with XLA_FLAGS forcing N host devices (and dumping
HLO to --xla_dump_to); test_moe_sharding.py runs it in a subprocess.

Trains a mixture-of-experts layer two SGD steps on one device and again under
MirroredStrategy over N devices (tokens split by group, experts split by the expert
axis) from the same weights and data, and prints one JSON object: the largest
differences of outputs, losses and updated variables, and the run plan."""

import json
import sys

import numpy as np

import tensorflux as tf
from tensorflux._src.runtime.config import run_plan
from tensorflux.layers import moe

N = int(sys.argv[1])
TOKENS, DEPTH, EXPERTS = 8 * N, 6, 2 * N


def train(strategy):
    graph = tf.Graph()
    with graph.as_default():
        tf.set_random_seed(7)
        scope = strategy.scope() if strategy else _null()
        with scope:
            x = tf.placeholder(tf.float32, [None, DEPTH])
            target = tf.placeholder(tf.float32, [None, DEPTH])
            layer = moe.MixtureOfExperts(EXPERTS, 5, k=2, capacity_factor=1.0,
                                         group_size=8, seed=3)
            y = layer.apply(x, training=True)
            loss = tf.reduce_mean((y - target) ** 2) + layer.aux_loss
            train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
        init = tf.global_variables_initializer()
        variables = tf.trainable_variables()
    rng = np.random.default_rng(0)
    gate = rng.normal(size=(DEPTH, EXPERTS)).astype(np.float32)
    outputs, losses = [], []
    with tf.Session(graph=graph) as sess:
        sess.run(init)
        layer.w_gate.load(gate, sess)
        for step in range(2):
            data = np.random.default_rng(step + 1)
            feed = {x: data.normal(size=(TOKENS, DEPTH)).astype(np.float32),
                    target: data.normal(size=(TOKENS, DEPTH)).astype(np.float32)}
            meta = tf.RunMetadata()
            out, value, _ = sess.run([y, loss, train_op], feed, run_metadata=meta)
            outputs.append(out)
            losses.append(value)
        values = sess.run(variables)
    return outputs, losses, values, run_plan(meta)[0].split(":")[0]


class _null:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


ref = train(None)
got = train(tf.distribute.MirroredStrategy(num_replicas=N))
print(json.dumps({
    "output_diff": max(float(np.abs(a - b).max()) for a, b in zip(ref[0], got[0])),
    "loss_diff": max(abs(float(a - b)) for a, b in zip(ref[1], got[1])),
    "var_diff": max(float(np.abs(a - b).max()) for a, b in zip(ref[2], got[2])),
    "zero_rows": int((np.abs(got[0][0]).sum(1) == 0).sum()),
    "plan": got[3],
}))
