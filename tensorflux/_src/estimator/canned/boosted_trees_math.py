"""The tree-building math of BoostedTrees* (host side, NumPy + one jitted histogram).

The ensemble is dense and of fixed size (a deviation from TF's serialized TreeEnsemble
resource, so it lives in plain variables that Saver and SavedModel handle): each of
`n_trees` trees is a complete binary tree of `max_depth` levels, nodes numbered
breadth-first (children of i are 2i+1, 2i+2).

- feature[t, i], threshold[t, i] for the 2^D - 1 internal nodes: an example goes right
  when its bucket of `feature` is > threshold. A node that did not split has
  threshold = n_buckets, so everything goes left.
- value[t, i] for all 2^(D+1) - 1 nodes: the tree's output at node i (learning rate
  included); a child's value is its parent's plus learning_rate * its own weight, as
  TF grows leaves. depth[t] is how many layers tree t has; it predicts value at that
  level, so a half-grown tree predicts from its current leaves.

Gains are TF's (boosted_trees CalculateBestGainsAndSplits): with G soft-thresholded by
l1, weight = -G / (H + l2) and gain = G^2 / (H + l2); a split's gain is
left + right - parent - tree_complexity; a child with hessian < min_node_weight (or 0)
is no candidate.
"""

import functools

import jax
import jax.numpy as jnp
import numpy as np


@functools.partial(jax.jit, static_argnums=(4,))
def _histogram(buckets, node, grad, hess, shape):
    """Per (node, feature, bucket) sums of gradients and hessians: one segment sum."""
    n_nodes, n_features, n_buckets = shape
    keys = (node[:, None] * n_features + jnp.arange(n_features)[None, :]) * n_buckets \
        + buckets
    size = n_nodes * n_features * n_buckets
    g = jax.ops.segment_sum(jnp.broadcast_to(grad[:, None], keys.shape).ravel(),
                            keys.ravel(), num_segments=size)
    h = jax.ops.segment_sum(jnp.broadcast_to(hess[:, None], keys.shape).ravel(),
                            keys.ravel(), num_segments=size)
    return jnp.stack([g, h], axis=-1).reshape(n_nodes, n_features, n_buckets, 2)


def histogram(buckets, node, grad, hess, n_nodes, n_buckets):
    buckets = np.asarray(buckets, np.int32)
    out = _histogram(buckets, np.asarray(node, np.int32), np.asarray(grad, np.float32),
                     np.asarray(hess, np.float32), (n_nodes, buckets.shape[1], n_buckets))
    return np.asarray(out)


def soft_threshold(g, l1):
    return np.sign(g) * np.maximum(np.abs(g) - l1, 0.0)


def weight_and_gain(g, h, l1, l2):
    gs = soft_threshold(g, l1)
    denom = h + l2
    safe = np.where(denom > 0, denom, 1.0)
    weight = np.where(denom > 0, -gs / safe, 0.0)
    gain = np.where(denom > 0, gs * gs / safe, 0.0)
    return weight, gain


def node_index(buckets, feature, threshold, level):
    """Breadth-first index of each example's node at `level` in one tree."""
    idx = np.zeros(buckets.shape[0], np.int64)
    rows = np.arange(buckets.shape[0])
    for _ in range(level):
        x = buckets[rows, feature[idx]]
        idx = 2 * idx + 1 + (x > threshold[idx])
    return idx


def best_splits(stats, hp):
    """For stats [nodes, features, buckets, 2] (grad, hess sums): per node the best
    (feature, threshold, gain, left weight, right weight, ok)."""
    g, h = stats[..., 0], stats[..., 1]
    gl, hl = np.cumsum(g, axis=2)[:, :, :-1], np.cumsum(h, axis=2)[:, :, :-1]
    gt, ht = g[:, 0, :].sum(axis=1), h[:, 0, :].sum(axis=1)
    gr, hr = gt[:, None, None] - gl, ht[:, None, None] - hl
    wl, gain_l = weight_and_gain(gl, hl, hp.l1, hp.l2)
    wr, gain_r = weight_and_gain(gr, hr, hp.l1, hp.l2)
    _, gain_p = weight_and_gain(gt, ht, hp.l1, hp.l2)
    gain = gain_l + gain_r - gain_p[:, None, None] - hp.tree_complexity
    valid = (hl > 0) & (hr > 0) & (hl >= hp.min_node_weight) & (hr >= hp.min_node_weight)
    gain = np.where(valid, gain, -np.inf)
    flat = gain.reshape(gain.shape[0], -1)
    best = np.argmax(flat, axis=1)
    n_thresholds = gain.shape[2]
    feat, thr = best // n_thresholds, best % n_thresholds
    rows = np.arange(gain.shape[0])
    best_gain = flat[rows, best]
    ok = np.isfinite(best_gain)
    if hp.pruning_mode != "none":
        ok &= best_gain > 0  # pre-pruning: no split without positive gain
    return (feat, thr, best_gain, wl[rows, feat, thr], wr[rows, feat, thr], ok)


def grow_layer(state, stats, hp, n_buckets):
    """Applies one layer of splits (stats averaged over the layer's batches) to the
    current tree; returns the new state dict."""
    t, d = int(state["cur_tree"]), int(state["depth"][state["cur_tree"]])
    first = 2 ** d - 1
    n = 2 ** d
    feat, thr, _, wl, wr, ok = best_splits(stats[:n], hp)
    for j in range(n):
        i = first + j
        parent = state["value"][t, i]
        if ok[j]:
            state["feature"][t, i] = feat[j]
            state["threshold"][t, i] = thr[j]
            state["value"][t, 2 * i + 1] = parent + hp.learning_rate * wl[j]
            state["value"][t, 2 * i + 2] = parent + hp.learning_rate * wr[j]
        else:
            state["feature"][t, i] = 0
            state["threshold"][t, i] = n_buckets
            state["value"][t, 2 * i + 1] = parent
            state["value"][t, 2 * i + 2] = parent
    state["depth"][t] = d + 1
    if d + 1 == hp.max_depth:
        state["cur_tree"] = t + 1
    return state


def quantile_boundaries(values, n_quantiles):
    """Boundaries at the k / n_quantiles quantiles of each column (TF's sketch gives
    1/epsilon buckets per float feature); duplicates are kept (searchsorted ignores
    empty buckets)."""
    levels = np.arange(1, n_quantiles) / n_quantiles
    return np.quantile(values, levels, axis=0).T.astype(np.float32)
