"""TF1's graph-level and op-level seeds (`tf.set_random_seed`, `get_seed`)."""

from __future__ import annotations

from tensorflux._src.framework import graph as _graph

DEFAULT_GRAPH_SEED = 87654321
_MAXINT32 = 2 ** 31 - 1


def _truncate(seed):
    return seed % _MAXINT32  # seeds are int64 attrs; keep them in int32 range as TF does


def get_seed(op_seed):
    """The (seed, seed2) pair an op gets, following TF1's rules.

    - graph seed and op seed unset: (None, None), the op draws differently every session;
    - graph seed set: op seed defaults to the graph's op count, so rebuilding the same
      program gives the same sequences;
    - only the op seed set: the graph seed defaults to DEFAULT_GRAPH_SEED.
    """
    graph = _graph.get_default_graph()
    graph_seed = graph.seed
    if graph_seed is not None:
        if op_seed is None:
            op_seed = len(graph._nodes_in_order)
        seeds = _truncate(graph_seed), _truncate(op_seed)
    elif op_seed is not None:
        seeds = DEFAULT_GRAPH_SEED, _truncate(op_seed)
    else:
        return None, None
    if seeds == (0, 0):  # (0, 0) means "unseeded" to the kernels
        return 0, _MAXINT32
    return seeds


def set_random_seed(seed):
    """Sets the graph-level seed of the default graph."""
    _graph.get_default_graph().seed = seed
