"""The hierarchical placement policy (Mirhoseini et al., ICLR 2018), as a tensorflux
graph trained in a tensorflux Session.

The policy places colocation units (units.py: an op with its gradient ops, a variable
with its reads, slots and updates), as both papers place co-located ops together.

Grouper: a feed-forward network over each unit's features (features.py: op types,
    output sizes, FLOPs, adjacency, position) with a softmax over `groups` groups; each
    unit's group is sampled from it. A fixed prior adds `-order_prior * (g * distance)^2`
    to a unit's logit for group k, distance being between the unit's position in the
    topological order and group k's centre, so untrained groups are about contiguous
    runs of the order rather than random scatterings (with 16 groups and 1,000 units a
    random grouping sends nearly every edge across devices, and every sample is bad).
Placer: a sequence-to-sequence model over the groups' embeddings (the mean features of
    the group's units, the log of its size and FLOPs): an LSTM encoder reads the groups
    in order and an autoregressive LSTM decoder, with attention over the encoder's
    outputs, picks one device per group, fed the device it picked for the previous group
    (sampled step by step; trained on the sampled devices fed back).
Training: REINFORCE on both samples' log-probabilities. Reward -sqrt(step time /
    single-device step time) (the paper's -sqrt(runtime), scaled so it does not depend
    on the model); invalid (out-of-memory) placements get the reward of a step
    `invalid_penalty` x single-device. The advantage is the reward minus an exponential
    moving average of past mean rewards (the baseline), divided by a moving average of
    the rewards' spread so the step size does not depend on how far apart step times
    are; an entropy bonus keeps both softmaxes from collapsing early. Adam.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

import tensorflux as tf
from tensorflux._src.placement import units as units_lib


@dataclasses.dataclass
class PolicyConfig:
    groups: int = 8
    hidden: int = 64
    samples: int = 16           # placements sampled per policy update
    updates: int = 150
    learning_rate: float = 0.01
    baseline_decay: float = 0.9
    entropy_weight: float = 0.1
    invalid_penalty: float = 4.0
    order_prior: float = 200.0  # strength of the contiguous-groups prior (0: none)
    seed: int = 0

    def __post_init__(self):
        for field in ("groups", "hidden", "samples", "updates"):
            value = getattr(self, field)
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"PolicyConfig {field}: expected a positive int, got "
                                 f"{value!r}")
        if not self.learning_rate > 0:
            raise ValueError(f"PolicyConfig learning_rate: expected a positive number, "
                             f"got {self.learning_rate!r}")


def unit_features(op_features, op_graph, unit_of):
    """[units, f + 3]: the mean features of each unit's ops, the log of its op count and
    FLOPs (scaled to [0, 1]) and its position (units.unit_positions)."""
    count = int(unit_of.max()) + 1
    sizes = np.bincount(unit_of, minlength=count).astype(np.float64)
    mean = np.zeros((count, op_features.shape[1]))
    np.add.at(mean, unit_of, op_features)
    mean /= sizes[:, None]
    flops = np.bincount(unit_of, weights=op_graph.flops, minlength=count)
    # Ranks (not the first op's index, which crowds the units into the forward half
    # since the gradient ops joined them) spread the units evenly over the groups.
    position = units_lib.unit_positions(op_graph, unit_of)

    def scaled(v):
        v = np.log1p(v)
        return v / v.max() if v.max() > 0 else v
    extra = np.stack([scaled(sizes), scaled(flops), position], axis=1)
    return np.concatenate([mean, extra], axis=1).astype(np.float32), position


class _PolicyGraph:
    """One graph, two uses of the same variables: `sample` draws `samples` placements
    (groups per unit, then devices group by group, each step fed the device it drew for
    the previous group); `train_op` scores fed placements (the drawn devices fed back as
    the previous-device inputs) and takes a REINFORCE step."""

    def __init__(self, features, position, num_devices, config):
        u = features.shape[0]
        g, m, h, k = config.groups, config.samples, config.hidden, num_devices
        self.graph = tf.Graph()
        with self.graph.as_default():
            tf.set_random_seed(config.seed)
            feats = tf.constant(features, name="unit_features")
            with tf.variable_scope("grouper"):
                hidden = tf.layers.dense(feats, h, tf.nn.tanh, name="hidden")
                group_logits = tf.layers.dense(hidden, g, name="logits")
            centers = (np.arange(g, dtype=np.float64)[None, :] + 0.5) / g
            prior = -config.order_prior * (g * (position[:, None] - centers)) ** 2
            group_logits = group_logits + tf.constant(prior.astype(np.float32))
            group_probs = tf.nn.softmax(group_logits)                         # [u, g]
            group_logp = tf.nn.log_softmax(group_logits)
            drawn_groups = tf.transpose(tf.multinomial(group_logits, m))      # [m, u]
            self.groups = tf.placeholder(tf.int64, [m, u], "groups")
            self.devices = tf.placeholder(tf.int64, [m, g], "devices")
            self.advantage = tf.placeholder(tf.float32, [m], "advantage")

            # Cells and layers are objects, so the drawing and the scoring use the same
            # weights. The scoring runs the RNNs as while loops (dynamic_rnn): XLA
            # compiles an unrolled LSTM's gradient for minutes on a CPU.
            encoder_cell = tf.nn.rnn_cell.LSTMCell(h, name="placer/encoder")
            decoder_cell = tf.nn.rnn_cell.LSTMCell(h, name="placer/decoder")
            output_layer = tf.layers.Dense(k, name="placer/devices")

            def attend(out, enc):
                """Luong attention: each decoder output looks at every group."""
                scores = tf.matmul(out, enc, transpose_b=True) / math.sqrt(h)  # [m, s, g]
                context = tf.matmul(tf.nn.softmax(scores), enc)
                return output_layer(tf.concat([out, context], -1))

            def encode(groups):
                onehot = tf.one_hot(groups, g)                                # [m, u, g]
                members = tf.reduce_sum(onehot, axis=1)                       # [m, g]
                summed = tf.matmul(onehot, tf.tile(feats[None], [m, 1, 1]),
                                   transpose_a=True)                          # [m, g, f]
                embed = tf.concat([summed / (members[..., None] + 1e-6),
                                   tf.log1p(members)[..., None] / math.log1p(u)], -1)
                return tf.nn.dynamic_rnn(encoder_cell, embed, dtype=tf.float32,
                                         scope="placer_encoder")

            def draw(groups):
                enc, state = encode(groups)
                previous, picks = tf.zeros([m, k]), []
                for j in range(g):
                    out, state = decoder_cell(tf.concat([enc[:, j], previous], -1), state)
                    logits = attend(out[:, None], enc)[:, 0]
                    picks.append(tf.multinomial(logits, 1)[:, 0])
                    previous = tf.one_hot(picks[-1], k)
                return tf.stack(picks, 1)                                     # [m, g]

            def score(groups, devices):
                enc, state = encode(groups)
                previous = tf.concat([tf.zeros([m, 1, k]),
                                      tf.one_hot(devices[:, :-1], k)], 1)
                out, _ = tf.nn.dynamic_rnn(decoder_cell, tf.concat([enc, previous], -1),
                                           initial_state=state, scope="placer_decoder")
                return attend(out, enc)                                       # [m, g, k]

            self.sample = (drawn_groups, draw(drawn_groups))
            device_logits = score(self.groups, self.devices)
            device_logp = tf.nn.log_softmax(device_logits)
            device_probs = tf.nn.softmax(device_logits)
            logp = (tf.reduce_sum(tf.one_hot(self.groups, g) * group_logp[None], [1, 2])
                    + tf.reduce_sum(tf.one_hot(self.devices, k) * device_logp, [1, 2]))
            # Summed over decisions like logp (a mean would shrink the bonus per
            # decision as groups and units grow).
            entropy = (-tf.reduce_sum(group_probs * group_logp)
                       - tf.reduce_mean(tf.reduce_sum(device_probs * device_logp, [1, 2])))
            loss = -tf.reduce_mean(self.advantage * logp) - config.entropy_weight * entropy
            self.train_op = tf.train.AdamOptimizer(config.learning_rate).minimize(loss)
            self.init = tf.global_variables_initializer()


@dataclasses.dataclass
class TrainResult:
    assignment: np.ndarray       # best placement found (device index per op)
    step_time: float
    # per update: (mean reward, best step time so far, mean valid step time, invalid
    # fraction, mean reward of the policy's most likely placement is not sampled)
    curve: list
    evaluations: int


def train(op_graph, simulator, features, config=None, measure=None) -> TrainResult:
    """Trains the policy against `measure(assignment) -> step seconds` (default: the
    simulator, math.inf for invalid placements) and returns the best placement seen.

    features: per-op features (features.op_features)."""
    config = config or PolicyConfig()
    devices = simulator.devices
    measure = measure or (lambda a: simulator.run(a).step_time)
    unit_of = units_lib.colocation_units(op_graph)
    feats, position = unit_features(np.asarray(features), op_graph, unit_of)
    reference = float(simulator.compute[:, 0].sum()) or 1.0
    m, k = config.samples, len(devices)
    policy = _PolicyGraph(feats, position, k, config)
    baseline, spread, best, best_time, curve = None, None, None, math.inf, []
    cache = {}
    with tf.Session(graph=policy.graph) as sess:
        sess.run(policy.init)
        for _ in range(config.updates):
            groups, placed = sess.run(policy.sample)
            times, rewards = [], []
            for s in range(m):
                assignment = placed[s][groups[s]][unit_of]
                key = assignment.tobytes()
                if key not in cache:
                    cache[key] = measure(assignment)
                t = cache[key]
                times.append(t)
                if t < best_time:
                    best, best_time = assignment.copy(), t
                relative = t / reference if math.isfinite(t) else config.invalid_penalty
                rewards.append(-math.sqrt(relative))
            rewards = np.array(rewards, np.float64)
            decay = config.baseline_decay
            if baseline is None:
                baseline, spread = rewards.mean(), rewards.std() + 1e-6
            advantage = (rewards - baseline) / spread
            baseline = decay * baseline + (1 - decay) * rewards.mean()
            spread = decay * spread + (1 - decay) * (rewards.std() + 1e-6)
            sess.run(policy.train_op, {policy.groups: groups, policy.devices: placed,
                                       policy.advantage: advantage.astype(np.float32)})
            finite = [t for t in times if math.isfinite(t)]
            curve.append((float(rewards.mean()), best_time,
                          float(np.mean(finite)) if finite else math.inf,
                          1.0 - len(finite) / m))
    return TrainResult(best, best_time, curve, len(cache))
