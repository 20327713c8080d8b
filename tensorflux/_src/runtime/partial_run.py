"""`Session.partial_run_setup` / `partial_run`: one run of a graph, fed and fetched in
several steps.

The setup names every fetch and feed of the whole run. Each step feeds some of the
placeholders and fetches some of the tensors, and, as TF's executor does, computes
everything that has become computable for the fetches still to come: the values that
later steps need from this part of the graph (the frontier) are kept and fed to them,
so every op that feeds a later step through its data inputs executes once. (An op
that a later step reaches only through control dependencies runs again in that step:
control edges cannot be cut by feeding.) Each feed may be given once and each fetch
taken once.
"""

from __future__ import annotations

import itertools

from tensorflux._src.compiler.passes import prune
from tensorflux._src.framework import errors
from tensorflux._src.framework.operation import Operation, Tensor
from tensorflux._src.runtime import fetches as _fetches

_ids = itertools.count()


class PartialRun:
    """The state of one partial run: what was declared, fed, fetched and computed."""

    def __init__(self, session, fetches, feeds):
        graph = session.graph
        self.handle = f"partial_run;{next(_ids)}"
        self.fetch_tensors, self.target_ops, _ = _fetches.flatten(graph, fetches, session)
        self.feeds = set()
        for key in feeds or []:
            self.feeds.add(session._feed_tensor(key))
        self.fed = {}        # feed tensor -> value given
        self.known = {}      # tensor -> value computed in an earlier step (the frontier)
        self.fetched = set()
        self.targets_run = set()

    def step(self, session, fetches, feed_dict):
        graph = session.graph
        tensors, targets, rebuild = _fetches.flatten(graph, fetches, session)
        new_feeds = {}
        for key, value in (feed_dict or {}).items():
            tensor = session._feed_tensor(key)
            if tensor not in self.feeds:
                raise errors.InvalidArgumentError(
                    None, None, f"Input to feed not specified in partial_run_setup: "
                                f"{tensor.name}")
            if tensor in self.fed:
                raise errors.InvalidArgumentError(
                    None, None, f"The feed {tensor.name} has already been fed.")
            new_feeds[tensor] = value
        for t in tensors:
            if t not in self.fetch_tensors:
                raise errors.InvalidArgumentError(
                    None, None, f"Fetch not specified in partial_run_setup: {t.name}")
            if t in self.fetched:
                raise errors.InvalidArgumentError(
                    None, None, f"The fetch {t.name} has already been fetched.")
        for op in targets:
            if op not in self.target_ops:
                raise errors.InvalidArgumentError(
                    None, None, f"Fetch not specified in partial_run_setup: {op.name}")
        self.fed.update(new_feeds)  # checked: this step is valid
        frontier = self._frontier(tensors, targets)
        run_tensors = list(dict.fromkeys(tensors + frontier))
        feeds = {**self.fed, **self.known}
        values = session.run(run_tensors + targets, feeds)
        by_tensor = dict(zip(run_tensors, values))
        self.known.update({t: by_tensor[t] for t in frontier})
        self.fetched.update(tensors)
        self.targets_run.update(targets)
        return rebuild([by_tensor[t] for t in tensors])

    def _frontier(self, tensors, targets):
        """Tensors computable now whose values the remaining fetches will need."""
        cut = set(self.fed) | set(self.known)
        remaining = [t for t in self.fetch_tensors if t not in self.fetched and
                     t not in tensors]
        later_targets = [op for op in self.target_ops if op not in self.targets_run and
                         op not in targets]
        later = prune(remaining, later_targets, cut)
        unfed = {t.op for t in self.feeds if t not in self.fed}
        computable = {}
        # `later` is in topological order and holds every producer it needs.
        for op in later:
            computable[op] = op not in unfed and all(
                t in cut or computable.get(t.op, False) for t in op.inputs) and all(
                computable.get(c, False) for c in op._control_inputs)
        frontier = []
        for op in later:
            if computable[op]:
                continue
            for t in op.inputs:
                if t not in cut and computable.get(t.op) and not t.dtype._is_ref_dtype \
                        and t not in frontier:
                    frontier.append(t)
        return frontier


def check_setup_arguments(fetches, feeds):
    for leaf in _leaves(fetches):
        if not isinstance(leaf, (Tensor, Operation, str)) and not hasattr(
                leaf, "_as_graph_element"):
            raise TypeError(f"Fetch argument {leaf!r} has invalid type {type(leaf)}")
    if feeds is not None and not isinstance(feeds, (list, tuple)):
        raise TypeError(f"`feeds` must be a list or tuple of tensors, got {type(feeds)}")


def _leaves(value):
    if isinstance(value, (list, tuple)):
        return [leaf for v in value for leaf in _leaves(v)]
    if isinstance(value, dict):
        return [leaf for v in value.values() for leaf in _leaves(v)]
    return [value]
