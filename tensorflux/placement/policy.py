"""The hierarchical placement policy (Mirhoseini et al., ICLR 2018), as a tensorflux
graph trained in a tensorflux Session.

Grouper: a feed-forward network over each op's features (features.py) with a softmax
    over `groups` groups; each op's group is sampled from it.
Placer: a sequence model over the groups' embeddings (the mean features of the group's
    ops and the log of its size): an LSTM reads the groups in order, an attention layer
    lets each group see all the others, and a softmax over devices is sampled per group.
    Unlike the paper's decoder it is not autoregressive (a group's device is not fed to
    the next step); the attention gives every decision the whole sequence instead.
Training: REINFORCE on both samples' log-probabilities with reward -sqrt(step time /
    single-device time), a moving-average baseline, and invalid (out-of-memory)
    placements given the step time `invalid_penalty` x single-device.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

import tensorflux as tf


@dataclasses.dataclass
class PolicyConfig:
    groups: int = 16
    hidden: int = 64
    samples: int = 8            # placements sampled per policy update
    updates: int = 150
    learning_rate: float = 0.02
    baseline_decay: float = 0.9
    entropy_weight: float = 0.01
    invalid_penalty: float = 4.0
    order_prior: float = 1.0    # strength of the contiguous-groups prior (0: none)
    seed: int = 0


class _PolicyGraph:
    def __init__(self, features, devices, config):
        n = features.shape[0]
        g, m, h = config.groups, config.samples, config.hidden
        self.graph = tf.Graph()
        with self.graph.as_default():
            tf.set_random_seed(config.seed)
            self.features = tf.constant(features, name="op_features")
            with tf.variable_scope("grouper"):
                hidden = tf.layers.dense(self.features, h, tf.nn.tanh, name="hidden")
                group_logits = tf.layers.dense(hidden, g, name="logits")
            # A fixed prior: before training, groups are about contiguous runs of the
            # topological order (ops near each other in the order tend to share one).
            order = np.arange(n, dtype=np.float32)[:, None] / max(1, n - 1)
            centers = (np.arange(g, dtype=np.float32)[None, :] + 0.5) / g
            prior = -config.order_prior * g * g * (order - centers) ** 2
            group_logits = group_logits + tf.constant(prior.astype(np.float32))
            self.group_probs = tf.nn.softmax(group_logits)
            group_logp = tf.nn.log_softmax(group_logits)                     # [n, g]
            self.group_onehot = tf.placeholder(tf.float32, [m, n, g], "groups")
            members = tf.reduce_sum(self.group_onehot, axis=1)                # [m, g]
            summed = tf.matmul(self.group_onehot, tf.tile(self.features[None], [m, 1, 1]),
                               transpose_a=True)                              # [m, g, f]
            embed = tf.concat([summed / (members[..., None] + 1.0),
                               tf.log1p(members)[..., None]], axis=-1)
            with tf.variable_scope("placer"):
                cell = tf.nn.rnn_cell.LSTMCell(h)
                steps = tf.unstack(embed, axis=1)
                outputs, _ = tf.nn.static_rnn(cell, steps, dtype=tf.float32)
                enc = tf.stack(outputs, axis=1)                                # [m, g, h]
                scores = tf.matmul(enc, enc, transpose_b=True) / math.sqrt(h)
                context = tf.matmul(tf.nn.softmax(scores), enc)
                device_logits = tf.layers.dense(tf.concat([enc, context], -1),
                                                len(devices), name="devices")
            self.device_probs = tf.nn.softmax(device_logits)                  # [m, g, d]
            device_logp = tf.nn.log_softmax(device_logits)
            self.device_onehot = tf.placeholder(tf.float32, [m, g, len(devices)], "devices")
            self.advantage = tf.placeholder(tf.float32, [m], "advantage")
            logp = (tf.reduce_sum(self.group_onehot * group_logp[None], axis=[1, 2])
                    + tf.reduce_sum(self.device_onehot * device_logp, axis=[1, 2]))
            entropy = (-tf.reduce_mean(tf.reduce_sum(self.group_probs * group_logp, -1))
                       - tf.reduce_mean(tf.reduce_sum(self.device_probs * device_logp, -1)))
            loss = -tf.reduce_mean(self.advantage * logp) - config.entropy_weight * entropy
            self.train_op = tf.train.AdamOptimizer(config.learning_rate).minimize(loss)
            self.init = tf.global_variables_initializer()


def _sample(rng, probs):
    """One category per row of `probs` [..., k], as indices."""
    cumulative = np.cumsum(probs, axis=-1)
    u = rng.random(probs.shape[:-1] + (1,)) * cumulative[..., -1:]
    return np.minimum((u > cumulative).sum(-1), probs.shape[-1] - 1)


@dataclasses.dataclass
class TrainResult:
    assignment: np.ndarray       # best placement found (device index per op)
    step_time: float
    curve: list                  # per update: (mean reward, best step time so far, mean step time)
    evaluations: int


def train(op_graph, simulator, features, config=None, measure=None) -> TrainResult:
    """Trains the policy against `measure(assignment) -> step time` (default: the
    simulator, math.inf for invalid placements) and returns the best placement seen."""
    config = config or PolicyConfig()
    devices = simulator.devices
    measure = measure or (lambda a: simulator.run(a).step_time)
    reference = float(simulator.compute[:, 0].sum()) or 1.0
    g, m = config.groups, config.samples
    policy = _PolicyGraph(features, devices, config)
    rng = np.random.default_rng(config.seed)
    eye_g, eye_d = np.eye(g, dtype=np.float32), np.eye(len(devices), dtype=np.float32)
    baseline, best, best_time, curve = None, None, math.inf, []
    with tf.Session(graph=policy.graph) as sess:
        sess.run(policy.init)
        for _ in range(config.updates):
            group_probs = sess.run(policy.group_probs)
            groups = _sample(rng, np.broadcast_to(group_probs, (m,) + group_probs.shape))
            group_onehot = eye_g[groups]
            device_probs = sess.run(policy.device_probs, {policy.group_onehot: group_onehot})
            placed = _sample(rng, device_probs)                                # [m, g]
            times, rewards = [], []
            for s in range(m):
                assignment = placed[s][groups[s]]
                t = measure(assignment)
                times.append(t)
                if t < best_time:
                    best, best_time = assignment.copy(), t
                relative = t / reference if math.isfinite(t) else config.invalid_penalty
                rewards.append(-math.sqrt(relative))
            rewards = np.array(rewards, np.float32)
            baseline = rewards.mean() if baseline is None else (
                config.baseline_decay * baseline + (1 - config.baseline_decay) * rewards.mean())
            # Advantages scaled by the batch's spread, so the step size does not depend
            # on how far apart step times are (a common REINFORCE stabilizer).
            advantage = (rewards - baseline) / (rewards.std() + 1e-3)
            sess.run(policy.train_op, {policy.group_onehot: group_onehot,
                                       policy.device_onehot: eye_d[placed],
                                       policy.advantage: advantage})
            finite = [t for t in times if math.isfinite(t)]
            curve.append((float(rewards.mean()), best_time,
                          float(np.mean(finite)) if finite else math.inf))
    return TrainResult(best, best_time, curve, config.updates * m)
