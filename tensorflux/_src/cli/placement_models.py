"""The graphs `tensorflux place` and benchmarks/placement.py place: a training step of
each model, deterministic op names (so a placement found in one process applies in the
subprocess that measures it), feeds, and the model's hand placement.

lstm4:    a 4-layer LSTM language model, statically unrolled (the paper's LSTM/NMT
          setting), trained with SGD on next-token cross-entropy.
resnet20: the zoo's CIFAR ResNet-20 (batch norm in training mode), Momentum.
"""

from __future__ import annotations

import dataclasses
import re

import numpy as np

import tensorflux as tf
from tensorflux import models


@dataclasses.dataclass
class PlacementModel:
    graph: object
    fetches: list           # the training step
    feeds: dict             # placeholder -> numpy value
    init: object
    hand: object            # (op_graph, num_devices) -> device index per op


def lstm4(batch=32, steps=16, vocab=2000, hidden=512, layers=4):
    graph = tf.Graph()
    with graph.as_default():
        tf.set_random_seed(0)
        tokens = tf.placeholder(tf.int32, [batch, steps + 1], name="tokens")
        embedding = tf.get_variable("embedding", [vocab, hidden])
        x = tf.nn.embedding_lookup(embedding, tokens[:, :-1])
        inputs = tf.unstack(x, axis=1)
        for layer in range(layers):
            with tf.variable_scope(f"layer{layer}"):
                cell = tf.nn.rnn_cell.LSTMCell(hidden)
                inputs, _ = tf.nn.static_rnn(cell, inputs, dtype=tf.float32)
        with tf.variable_scope("softmax"):
            logits = tf.layers.dense(tf.stack(inputs, axis=1), vocab, name="logits")
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
                labels=tokens[:, 1:], logits=logits))
        train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
        init = tf.global_variables_initializer()
    feeds = {tokens: np.random.default_rng(0).integers(0, vocab, (batch, steps + 1))
             .astype(np.int32)}

    def hand(op_graph, devices):
        # Layer-wise, as the paper's human experts: layer i on device i (mod count), the
        # embedding with the first layer and the softmax with the last; each op's
        # gradient and update with the op (their names contain the layer's scope).
        out = np.zeros(op_graph.size, np.int64)
        for i, name in enumerate(op_graph.names):
            found = re.search(r"layer(\d+)/", name)
            if found:
                out[i] = int(found.group(1)) * devices // layers
            elif "softmax/" in name:
                out[i] = devices - 1
        return out

    return PlacementModel(graph, [train, loss], feeds, init, hand)


def resnet20(batch=32, image_size=32):
    graph = tf.Graph()
    with graph.as_default():
        tf.set_random_seed(0)
        images = tf.placeholder(tf.float32, [batch, image_size, image_size, 3], name="images")
        labels = tf.placeholder(tf.int32, [batch], name="labels")
        logits = models.build("resnet20", images, num_classes=10, training=True)
        loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
        update_ops = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
        with tf.control_dependencies(update_ops):
            train = tf.train.MomentumOptimizer(0.1, 0.9).minimize(loss)
        init = tf.global_variables_initializer()
    rng = np.random.default_rng(0)
    feeds = {images: rng.normal(size=(batch, image_size, image_size, 3)).astype(np.float32),
             labels: rng.integers(0, 10, batch).astype(np.int32)}
    return PlacementModel(graph, [train, loss], feeds, init, stage_split)


def stage_split(op_graph, devices):
    """A pipeline-style hand placement: the forward ops, in topological order, cut into
    `devices` consecutive stages of equal FLOPs; a gradient or update op goes with the
    forward op (or variable) its name derives from."""
    names = op_graph.names
    forward = [i for i, n in enumerate(names) if not _is_training_op(n)]
    flops = op_graph.flops[forward]
    cumulative = np.cumsum(flops) / max(flops.sum(), 1e-30)
    home = {}
    for i, c in zip(forward, cumulative):
        home[names[i]] = min(devices - 1, int(c * devices - 1e-9))
    out = np.zeros(op_graph.size, np.int64)
    for i, name in enumerate(names):
        if name in home:
            out[i] = home[name]
            continue
        stripped = re.sub(r"^(gradients(_\d+)?/|[^/]*/update_)", "", name)
        parts = stripped.split("/")
        for cut in range(len(parts), 0, -1):
            prefix = "/".join(parts[:cut])
            if prefix in home:
                out[i] = home[prefix]
                break
    return out


def _is_training_op(name):
    return "/update_" in name or name.startswith(("gradients", "Momentum",
                                                   "GradientDescent"))


MODELS = {"lstm4": lstm4, "resnet20": resnet20}


def build(name):
    if name not in MODELS:
        from tensorflux._src.cli.errors import UsageError
        raise UsageError(f"--model: expected one of {', '.join(MODELS)}, got {name!r}")
    return MODELS[name]()
