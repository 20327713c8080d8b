"""One compiled run: the pruned, simplified graph for (fetches, feeds) as a jitted function.

Built once per run signature by the Session; calling it does no tracing:

    feeds (numpy) ──► jax.jit(traced part) ──► fetch values
                      static (folded) fetches are returned from the plan directly
"""

from __future__ import annotations

from dataclasses import dataclass

import jax
import numpy as np

from tensorflux._src.compiler import lowering, options, passes, state
from tensorflux._src.framework import errors
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

        known = fed | static.keys()

        def needs_tracing(op):
            # Skip ops already known (folded or fed) and CSE duplicates of earlier ops.
            return not op.outputs or not (op.outputs[0] in canonical
                                          or all(t in known for t in op.outputs))

        resolved = [canonical.get(t, t) for t in fetch_tensors]
        run_ops = [op for op in passes.prune([r for r in resolved if r not in known],
                                             target_ops, known, canonical)
                   if needs_tracing(op)]
        # Host ops, and everything downstream of them, run after the compiled part.
        self.host_ops = _host_tail(run_ops, canonical)
        in_tail = set(self.host_ops)

        # Where each fetched value comes from: a feed, the folded plan, XLA, or the host.
        self._sources = []
        traced_fetches = []

        def traced_index(r):
            if r not in traced_fetches:
                traced_fetches.append(r)
            return traced_fetches.index(r)

        for t, r in zip(fetch_tensors, resolved):
            if t in feed_index:
                self._sources.append(("feed", feed_index[t]))
            elif r in static:
                self._sources.append(("static", static[r]))
            elif r.op in in_tail:
                self._sources.append(("host", r))
            else:
                self._sources.append(("traced", traced_index(r)))
        for op in self.host_ops:  # what the host part needs from the compiled part
            for t in op.inputs:
                r = canonical.get(t, t)
                if r not in known and r.op not in in_tail:
                    traced_index(r)
        self._host_inputs = {r: i for i, r in enumerate(traced_fetches)}

        traced_ops = [op for op in passes.prune(traced_fetches,
                                                [op for op in target_ops if op not in in_tail],
                                                known, canonical)
                      if needs_tracing(op)]
        self.state = state.plan_state(traced_ops, traced_fetches)
        self.random_ops = [op for op in traced_ops if op.op_def.random]
        const_args = sorted({r for op in traced_ops for r in (canonical.get(t, t)
                                                              for t in op.inputs)
                             if r in static and static[r].size >= _CONST_ARG_MIN_ELEMENTS
                             and static[r].dtype != object},
                            key=lambda t: (t.op._id, t.value_index))
        self._const_values = [jax.device_put(static[t]) for t in const_args]
        self.traced_ops = traced_ops

        self._jitted = None
        self._options_tried = [{}]
        if traced_fetches or traced_ops:
            run_graph = _graph_function(traced_ops, traced_fetches, feed_tensors, const_args,
                                        static, canonical, self.state, self.random_ops, stats)
            # A variable read at its start value and then overwritten by the run has a
            # dead input buffer: donating it lets XLA update the variable in place.
            written = set(self.state.written_vars)
            first_var_arg = len(feed_tensors)
            donate = tuple(first_var_arg + i for i, v in enumerate(self.state.start_vars)
                           if v in written)
            device = devices.device_for_ops(traced_ops)
            self._options_tried = options.candidates(traced_ops, device, compiler_options)
            jitted = [devices.jit_on(run_graph, device, opts, donate)
                      for opts in self._options_tried]
            self._jitted = (jitted[0] if len(jitted) == 1
                            else options.Autotuner(jitted, self._options_tried))
            stats.executables += 1

        self._feed_tensors, self._static, self._canonical = feed_tensors, static, canonical
        self.run = self._make_runner()

    @property
    def compiler_options(self):
        """The XLA options of the executable in use (the autotuner's pick once made)."""
        jitted = self._jitted
        if isinstance(jitted, options.Autotuner):
            return jitted.options
        return dict(self._options_tried[0])

    def _make_runner(self):
        """The function `Session.run` calls: (feed values, SessionState) -> fetched values.

        Specialised once here so the per-run path is a jitted call and a conversion.
        """
        jitted, consts, sources = self._jitted, tuple(self._const_values), self._sources
        plan, random_ops = self.state, self.random_ops
        start_vars, checked, written = plan.start_vars, plan.checked_vars, plan.written_vars
        stateless = not (start_vars or checked or written or random_ops or self.host_ops)
        if stateless and jitted is not None and all(kind == "traced" and where == i
                                                    for i, (kind, where) in enumerate(sources)):
            if consts:
                return lambda feeds, _: [_to_numpy(v) for v in jitted(*feeds, *consts)]
            return lambda feeds, _: [_to_numpy(v) for v in jitted(*feeds)]
        n_fetched = len(self._host_inputs)
        host_ops, host_inputs, feed_tensors = self.host_ops, self._host_inputs, self._feed_tensors
        static, canonical = self._static, self._canonical

        def run(feeds, session_state):
            store = session_state.variables
            outs = ()
            if jitted is not None:
                try:
                    starts = [store[v] for v in start_vars]
                except KeyError:
                    raise _uninitialized(plan, store) from None
                flags = [np.bool_(v in store) for v in checked]
                if random_ops:
                    flags.append(session_state.draw_keys(random_ops))
                outs = jitted(*feeds, *starts, *flags, *consts)
                for var, value in zip(written, outs[n_fetched:]):
                    store[var] = value
            host_values = {}
            if host_ops:
                env = dict(static)
                env.update(zip(feed_tensors, feeds))
                env.update((r, np.asarray(outs[i])) for r, i in host_inputs.items())
                host_values = _run_host_ops(host_ops, env, canonical)
            results = []
            for kind, where in sources:
                if kind == "traced":
                    results.append(_to_numpy(outs[where]))
                elif kind == "host":
                    results.append(_to_numpy(host_values[where]))
                elif kind == "static":
                    results.append(where[()] if where.ndim == 0 else where.copy())
                else:
                    results.append(_to_numpy(feeds[where]))
            return results

        return run


def _host_tail(ops, canonical):
    """Host ops and the ops downstream of them, in order; they run after the XLA part."""
    tail, tail_set = [], set()
    for op in ops:
        if op.op_def.host is not None or any(canonical.get(t, t).op in tail_set
                                             for t in op.inputs):
            if op.op_def.stateful and op.op_def.host is None:
                raise errors.UnimplementedError(
                    None, op, f"{op.type} op '{op.name}' is stateful and consumes the output "
                    f"of a host op; runs that mix them this way are not supported yet.")
            tail.append(op)
            tail_set.add(op)
    return tail


def _run_host_ops(ops, env, canonical):
    """Evaluates the host part of a run: NumPy kernels, and eager lowerings after them."""
    for op in ops:
        inputs = [env[canonical.get(t, t)] for t in op.inputs]
        if op.op_def.host is not None:
            outs = lowering.run_host_kernel(op, inputs)
        else:
            outs = lowering.fold_op(op, inputs, max_elements=None)
        env.update(zip(op.outputs, outs))
    return env


def _prng_key(row):
    """A JAX key from (seed, seed2, run count): fresh per run, reproducible per seed."""
    key = jax.random.key(row[0])
    return jax.random.fold_in(jax.random.fold_in(key, row[1]), row[2])


def _uninitialized(plan, store):
    var = next(v for v in plan.start_vars if v not in store)
    reader = plan.first_reader[var]
    return errors.FailedPreconditionError(
        None, reader, f"Attempting to use uninitialized value {var.name}\n\t "
        f"[[{{{{node {reader.name}}}}}]]")


def _graph_function(ops, fetches, feed_tensors, const_args, static, canonical, plan,
                    random_ops, stats):
    """The Python function jax traces: evaluates `ops` in order, threading variables.

    Arguments: feeds, variables' start values, is-initialized flags, the random ops'
    (seed, seed2, run count) rows (when there are random ops), big constants.
    Returns: the fetched values, then the final value of every written variable.
    """
    n_feeds, n_starts = len(feed_tensors), len(plan.start_vars)
    n_flags = len(plan.checked_vars) + (1 if random_ops else 0)
    random_index = {op: i for i, op in enumerate(random_ops)}

    def run_graph(*args):
        stats.traces += 1
        env = dict(static)
        env.update(zip(feed_tensors, args))
        start = dict(zip(plan.start_vars, args[n_feeds:]))
        flags = dict(zip(plan.checked_vars, args[n_feeds + n_starts:]))
        key_rows = args[n_feeds + n_starts + n_flags - 1] if random_ops else None
        env.update(zip(const_args, args[n_feeds + n_starts + n_flags:]))
        written = {}  # (writer op, variable) -> value
        for op in ops:
            op_def = op.op_def
            if op_def.is_variable:
                if op in start:  # fetched directly: its value at the start of the run
                    env[op.outputs[0]] = start[op]
                continue
            inputs = []
            for i, t in enumerate(op.inputs):
                if not t.dtype._is_ref_dtype:
                    inputs.append(env[canonical.get(t, t)])
                elif op_def.checks_initialized:
                    inputs.append(flags[state.variable_of(t)])
                elif (op, i) in plan.reads:
                    writer = plan.reads[(op, i)]
                    var = state.variable_of(t)
                    inputs.append(start[var] if writer is None else written[(writer, var)])
                else:
                    inputs.append(None)  # overwritten without being read
            if op_def.random:
                inputs.insert(0, _prng_key(key_rows[random_index[op]]))
            if op_def.writes:
                refs = state._written_inputs(op)
                values = lowering.lower_writer(op, inputs, refs)
                for ref, value in zip(refs, values):
                    written[(op, state.variable_of(ref))] = value
                env[op.outputs[0]] = values[0]
            else:
                env.update(zip(op.outputs, lowering.lower_op(op, inputs)))
        finals = [written[(plan.final_writer[v], v)] for v in plan.written_vars]
        return tuple(env[t] for t in fetches) + tuple(finals)

    return run_graph


def _to_numpy(value):
    """numpy array for a result; 0-d results become numpy scalars, as TF1 returns them."""
    value = np.asarray(value)
    return value[()] if value.ndim == 0 else value
