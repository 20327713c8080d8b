"""PNG pictures: the op graph coloured by device, and the policy's learning curve."""

from __future__ import annotations

import numpy as np


def _pyplot():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def graph_png(op_graph, assignment, device_names, path, title=""):
    """Ops at (topological depth, rank within the depth), edges as grey lines, each op
    a dot in its device's colour."""
    plt = _pyplot()
    depth = op_graph.depths()
    rank = np.zeros(op_graph.size)
    seen = {}
    for i, d in enumerate(depth):
        rank[i] = seen.get(d, 0)
        seen[d] = rank[i] + 1
    fig, ax = plt.subplots(figsize=(12, 6))
    if op_graph.edges:
        src = np.array([e[0] for e in op_graph.edges])
        dst = np.array([e[1] for e in op_graph.edges])
        segments = np.stack([np.stack([depth[src], rank[src]], 1),
                             np.stack([depth[dst], rank[dst]], 1)], 1)
        from matplotlib.collections import LineCollection
        ax.add_collection(LineCollection(segments, colors="0.8", linewidths=0.3, zorder=1))
    colours = plt.get_cmap("tab10")
    assignment = np.asarray(assignment)
    for d, name in enumerate(device_names):
        mask = assignment == d
        ax.scatter(depth[mask], rank[mask], s=6, color=colours(d % 10), label=name, zorder=2)
    ax.set_xlabel("topological depth")
    ax.set_ylabel("op")
    ax.set_title(title)
    ax.legend(loc="upper right", markerscale=3, fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def curve_png(curve, path, title="", references=None):
    """Mean reward per policy update, and the best step time found so far."""
    plt = _pyplot()
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    updates = np.arange(1, len(curve) + 1)
    left.plot(updates, [c[0] for c in curve])
    left.set_xlabel("policy update")
    left.set_ylabel("mean reward  -sqrt(step / single-device step)")
    right.plot(updates, [c[1] * 1e3 for c in curve], label="learned: best so far")
    right.plot(updates, [c[2] * 1e3 for c in curve], label="learned: mean of samples",
               alpha=0.6)
    # Fixed colours (after the two curves'): the baselines stay told apart.
    for i, (name, seconds) in enumerate((references or {}).items()):
        right.axhline(seconds * 1e3, linestyle="--", linewidth=1.0, label=name,
                      color=plt.get_cmap("tab10")(2 + i % 8))
    right.set_xlabel("policy update")
    right.set_ylabel("predicted step time (ms)")
    right.legend(fontsize=8)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
