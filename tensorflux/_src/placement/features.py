"""Per-op features the grouper reads (the paper's: op type, output shape, adjacency).

type:      one-hot over the graph's most common op types (the rest share a column).
size:      log of FLOPs, output bytes and variable bytes, scaled to [0, 1].
position:  topological depth and creation index, scaled to [0, 1].
adjacency: random vectors smoothed over the undirected graph (each round averages an
           op's vector with its neighbours'): ops close in the graph get close vectors,
           ops in different components (independent chains) get different ones. It is
           a cheap stand-in for the paper's neighbour-index features.
"""

from __future__ import annotations

import collections

import numpy as np

MAX_TYPES = 24
ADJACENCY_DIMS = 8
SMOOTHING_ROUNDS = 8


def _scaled_log(values):
    logs = np.log1p(np.asarray(values, np.float64))
    top = logs.max() if logs.size else 0.0
    return logs / top if top > 0 else logs


def op_features(op_graph, seed=0) -> np.ndarray:
    n = op_graph.size
    common = [t for t, _ in collections.Counter(op_graph.types).most_common(MAX_TYPES - 1)]
    column = {t: i for i, t in enumerate(common)}
    types = np.zeros((n, MAX_TYPES))
    types[np.arange(n), [column.get(t, MAX_TYPES - 1) for t in op_graph.types]] = 1.0
    depth = op_graph.depths().astype(np.float64)
    position = np.stack([depth / max(1.0, depth.max()),
                         np.arange(n) / max(1, n - 1)], axis=1)
    size = np.stack([_scaled_log(op_graph.flops), _scaled_log(op_graph.output_bytes),
                     _scaled_log(op_graph.param_bytes)], axis=1)
    rng = np.random.default_rng(seed)
    walk = rng.normal(size=(n, ADJACENCY_DIMS))
    src = np.array([e[0] for e in op_graph.edges], np.int64)
    dst = np.array([e[1] for e in op_graph.edges], np.int64)
    degree = np.bincount(np.concatenate([src, dst]), minlength=n) + 1.0
    for _ in range(SMOOTHING_ROUNDS):
        total = walk.copy()
        np.add.at(total, src, walk[dst])
        np.add.at(total, dst, walk[src])
        walk = total / degree[:, None]
    walk /= np.maximum(np.abs(walk).max(axis=0, keepdims=True), 1e-12)
    return np.concatenate([types, size, position, walk], axis=1).astype(np.float32)
