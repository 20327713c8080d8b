"""One compiled run: the pruned, simplified graph for (fetches, feeds) as a jitted function.

Built once per run signature by the Session; calling it does no tracing:

    feeds (numpy) ──► jax.jit(traced part) ──► fetch values
                      static (folded) fetches are returned from the plan directly
"""

from __future__ import annotations

from dataclasses import dataclass

import jax
import numpy as np

from tensorflux._src.compiler import lowering, passes
from tensorflux._src.runtime import devices

# Static values bigger than this enter the executable as device buffers instead of
# literals embedded in the HLO, which keeps compile times short for big constants.
_CONST_ARG_MIN_ELEMENTS = 4096


@dataclass
class CompileStats:
    """Counts what a Session compiled; tests use it to prove cached runs do no work."""

    traces: int = 0
    executables: int = 0


class Executable:
    """Computes `fetch_tensors` (and runs `target_ops`) given values for `feed_tensors`."""

    def __init__(self, fetch_tensors, target_ops, feed_tensors, stats: CompileStats,
                 compiler_options=None):
        fed = set(feed_tensors)
        ops = passes.prune(fetch_tensors, target_ops, fed)
        passes.check_feeds(ops, fed)
        canonical = passes.common_subexpressions(ops, fed)
        static = passes.fold_constants(ops, fed, canonical)
        feed_index = {t: i for i, t in enumerate(feed_tensors)}

        # Where each fetched value comes from: a feed, the folded plan, or XLA.
        self._sources = []
        traced_fetches = []
        for t in fetch_tensors:
            r = canonical.get(t, t)
            if t in feed_index:
                self._sources.append(("feed", feed_index[t]))
            elif r in static:
                self._sources.append(("static", static[r]))
            else:
                self._sources.append(("traced", len(traced_fetches)))
                traced_fetches.append(r)

        known = fed | static.keys()

        def needs_tracing(op):
            # Skip ops already known (folded or fed) and CSE duplicates of earlier ops.
            return not op.outputs or not (op.outputs[0] in canonical
                                          or all(t in known for t in op.outputs))

        traced_ops = [op for op in passes.prune(traced_fetches, target_ops, known, canonical)
                      if needs_tracing(op)]
        const_args = sorted({r for op in traced_ops for r in (canonical.get(t, t)
                                                              for t in op.inputs)
                             if r in static and static[r].size >= _CONST_ARG_MIN_ELEMENTS
                             and static[r].dtype != object},
                            key=lambda t: (t.op._id, t.value_index))
        self._const_values = [jax.device_put(static[t]) for t in const_args]
        self.traced_ops = traced_ops
        self.num_traced_fetches = len(traced_fetches)

        self._jitted = None
        if traced_fetches or traced_ops:
            def run_graph(*args):
                stats.traces += 1
                env = dict(static)
                env.update(zip(feed_tensors, args))
                env.update(zip(const_args, args[len(feed_tensors):]))
                for op in traced_ops:
                    inputs = [env[canonical.get(t, t)] for t in op.inputs]
                    env.update(zip(op.outputs, lowering.lower_op(op, inputs)))
                return tuple(env[t] for t in traced_fetches)

            device = devices.device_for_ops(traced_ops)
            self._jitted = devices.jit_on(run_graph, device, compiler_options)
            stats.executables += 1

        self.run = self._make_runner()

    def _make_runner(self):
        """The function `Session.run` calls: feed values -> list of fetched values.

        Specialised once here so the per-run path is a jitted call and a conversion.
        """
        jitted, consts, sources = self._jitted, tuple(self._const_values), self._sources
        if jitted is not None and all(kind == "traced" and where == i
                                      for i, (kind, where) in enumerate(sources)):
            if consts:
                return lambda feeds: [_to_numpy(v) for v in jitted(*feeds, *consts)]
            return lambda feeds: [_to_numpy(v) for v in jitted(*feeds)]

        def run(feeds):
            outs = jitted(*feeds, *consts) if jitted is not None else ()
            results = []
            for kind, where in sources:
                if kind == "traced":
                    results.append(_to_numpy(outs[where]))
                elif kind == "static":
                    results.append(where[()] if where.ndim == 0 else where.copy())
                else:
                    results.append(_to_numpy(feeds[where]))
            return results

        return run


def _to_numpy(value):
    """numpy array for a result; 0-d results become numpy scalars, as TF1 returns them."""
    value = np.asarray(value)
    return value[()] if value.ndim == 0 else value
