"""One compiled cluster of a run: its ops traced into a single jitted function.

    args: input values (feeds, earlier steps' outputs), variables' start values,
          random key rows (if any), big constants
    returns: (exports, final values of written variables, effects' flags and data)

Which variables are initialized is compiled in (one executable per such state, usually
one): IsVariableInitialized is a constant, and a variable missing from the store that
only a control-flow construct reads enters as `state.Uninitialized`, so the untaken
branch of `cond(is_variable_initialized(v), ...)` never needs its value.

Variables are read from and written back to the session's store around the call, so a
run of several clusters sees each cluster's updates in the next one. In a run spanning
several devices (model parallelism) a cluster is given its device, and arguments and
variables living on another device are copied to it at the call.
"""

from __future__ import annotations

import jax
import numpy as np

from tensorflux._src.compiler import (
    compile_cache,
    effects,
    functional,
    graph_key,
    handoff,
    lowering,
    options,
    persistent,
    region_analysis,
    state,
    ta_buffer,
)
from tensorflux._src.framework import errors
from tensorflux._src.runtime import devices, host_memory

# Static values bigger than this enter the executable as device buffers instead of
# literals embedded in the HLO, which keeps compile times short for big constants.
_CONST_ARG_MIN_ELEMENTS = 4096


class Cluster:
    """Computes `exports` from `inputs` (and the variable store) with one XLA executable."""

    def __init__(self, ops, inputs, exports, static, canonical, stats, compiler_options=None,
                 extra_reads=(), device=None, fresh_reads=None, fetched=()):
        self.ops, self.inputs, self.exports = ops, list(inputs), list(exports)
        # Positions of the exports that a run fetches to the host (see host_copies).
        fetched = set(fetched)
        self.fetched = tuple(i for i, t in enumerate(self.exports) if t in fetched)
        # fresh_reads: worked out over the whole run (state.fresh_reads), so an op ordered
        # after a write in an earlier cluster still reads the variable afresh.
        self.state = state.plan_state(ops, list(exports) + list(extra_reads), fresh_reads,
                                      canonical)
        self.random_ops = [op for op in ops if functional.needs_key(op)]
        self.effects = effects.Collector()
        const_args = sorted({r for op in ops for r in (canonical.get(t, t) for t in op.inputs)
                             if r in static and static[r].size >= _CONST_ARG_MIN_ELEMENTS
                             and static[r].dtype != object},
                            key=lambda t: (t.op._id, t.value_index))
        self.device = device or devices.device_for_ops(ops)
        self.replicas = devices.replicas_for_ops(ops)  # SPMD over a mesh, or None
        # Given a device (the run spans several): values from other devices move here.
        self._sharding = (jax.sharding.SingleDeviceSharding(self.device)
                          if device is not None and self.replicas is None else None)
        self._const_values = tuple(jax.device_put(static[t], self._sharding)
                                   for t in const_args)
        self._const_args, self._static, self._canonical = const_args, static, canonical
        self._stats, self._user_options = stats, compiler_options
        written = set(self.state.written_vars)
        self.donated = [v for v in self.state.start_vars if v in written]
        self._touches_variables = bool(self.state.start_vars or self.state.written_vars
                                       or self.state.checked_vars)
        self._option_axes = options.candidate_axes(ops, self.device, compiler_options)
        self._options_tried = options.combine(self._option_axes, compiler_options,
                                              options.defaults(self.device))
        # Inputs compiled in as constants (see _compile_time_inputs), and one executable
        # per distinct value of them. Data-dependent sizes computed by a host step (a
        # dynamic TensorArray's size) are compiled in from the start: they are why the
        # run was cut there, and baking in only them keeps fed data out of the key.
        self.static_positions = tuple(i for i, t in enumerate(self.inputs)
                                      if t.op.op_def.host_outside_bodies)
        self._variants = {}
        self._batched = None
        self._called = False  # see call()
        self._effects_untraced = False  # loaded from the store: see _first_failure
        # While ops carrying TensorArrays (themselves, or the forward op a gradient
        # recomputes): a run that needs more room than compiled grows them and reruns.
        self.growable = {o for o in (op._attrs.get("forward", op) for op in ops)
                         if o._attrs.get("carries_arrays")}
        # The usual state: every variable read exists and every one asked about too.
        self._all_initialized = (tuple(True for _ in self.state.checked_vars), ())
        self.jitted = self._build({}, self._all_initialized)

    def _build(self, static_inputs, facts):
        """A jitted function of the cluster; `static_inputs` ({tensor: value}) are baked in,
        and so are `facts`: (is-initialized flag per checked variable, missing variables)."""
        traced_inputs = [t for t in self.inputs if t not in static_inputs]
        static = dict(self._static)
        static.update(static_inputs)
        run_graph = _graph_function(self.ops, self.exports, traced_inputs, self._const_args,
                                    static, self._canonical, self.state, self.random_ops,
                                    self._stats, self.effects, facts)
        if not static_inputs and facts == self._all_initialized:
            self._run_graph = run_graph
        persist = self._persistable(static_inputs, facts)
        if persist:
            # The name is part of the HLO and so of JAX's cache key: its entries change
            # with tensorflux's source as the stored executables' keys do, so JAX's cache
            # never serves a cluster the store has no entry for (see Persistent._store).
            run_graph.__name__ = f"cluster_{graph_key.toolchain_version()[:16]}"
        # A variable read at its start value and then overwritten by the run has a dead
        # input buffer: donating it lets XLA update the variable in place.
        first_var_arg = len(traced_inputs)
        present = [v for v in self.state.start_vars if v not in facts[1]]
        donate = tuple(first_var_arg + i for i, v in enumerate(present) if v in self.donated)
        compile_cache.enable()  # executables persist across processes (once decided, free)
        # data_inputs: many-host replicas decide by the tensors which arguments are a
        # worker's own slice of the batch (tensorflux/distribute/multi_worker.py).
        jitted = [region_analysis.jit(*options.bind(run_graph, opts, self.device), donate,
                                      self.replicas, data_inputs=traced_inputs,
                                      user_options=self._user_options)
                  for opts in self._options_tried]
        self._stats.executables += 1
        inner = jitted[0] if len(jitted) == 1 else options.Autotuner(
            jitted, self._options_tried, self.device,
            shape=[len(axis) for axis in self._option_axes])
        if not persist:
            return inner
        return persistent.Persistent(
            inner, jitted, self.device,
            graph_key=lambda: graph_key.cluster_key(self),
            storable=lambda: not (self.effects.emits or self.effects.uses_callbacks),
            on_load=self._loaded_untraced)

    def _persistable(self, static_inputs, facts):
        """Whether the executable may be kept on disk by the graph (persistent.py): the
        usual state on the default device, with the cache on. Variants with values
        compiled in, SPMD replicas and loops that grow stay in JAX's cache only."""
        return (compile_cache.directory() is not None and not static_inputs
                and facts == self._all_initialized and self.replicas is None
                and self._sharding is None and self.device == jax.devices()[0]
                and not self.growable)

    def _loaded_untraced(self):
        self._effects_untraced = True

    def _select(self, args, facts):
        """The executable for these input values and initialization facts, and the values
        it takes as arguments."""
        if not self.static_positions and facts == self._all_initialized:
            return self.jitted, args
        values = [np.asarray(args[i]) for i in self.static_positions]
        key = (tuple((v.dtype.str, v.shape, v.tobytes()) for v in values), facts)
        jitted = self._variants.get(key)
        if jitted is None:
            jitted = self._variants[key] = self._build(
                {self.inputs[i]: v for i, v in zip(self.static_positions, values)}, facts)
        skip = set(self.static_positions)
        return jitted, [a for i, a in enumerate(args) if i not in skip]

    def _compile_time_inputs(self, args):
        """Inputs that may be compiled in when an op needs a static value: small integer
        arrays (shapes, sizes, slice bounds fed or computed by an earlier step).

        Computed ones come first: a shape an earlier cluster computed is the usual
        culprit, and compiling in fed integers (token ids, sequence lengths) too would
        make a new executable for every batch. Feeds join when that did not suffice."""
        computed, fed = [], []
        seen = {}
        for i, a in enumerate(args):
            dtype = getattr(a, "dtype", None)
            if dtype is not None and np.dtype(dtype).kind in "iu" and np.size(a) <= 64:
                (fed if _reads_data(self.inputs[i], seen) else computed).append(i)
        if computed and not set(computed) <= set(self.static_positions):
            return tuple(computed)
        return tuple(computed + fed)

    @property
    def autotuner(self):
        """The compiler-option autotuner of the usual executable, or None."""
        jitted = self.jitted
        if isinstance(jitted, persistent.Persistent):
            jitted = jitted.inner
        return jitted if isinstance(jitted, options.Autotuner) else None

    @property
    def compiler_options(self):
        """The XLA options of the executable in use (the autotuner's pick once made)."""
        tuner = self.autotuner
        return tuner.options if tuner is not None else dict(self._options_tried[0])

    @property
    def tuning(self):
        """Whether the compiler-option autotuner is still timing candidates."""
        tuner = self.autotuner
        return tuner is not None and tuner.chosen is None

    @property
    def is_plain(self):
        """No variables, randomness or compile-time inputs: a call is the jitted function."""
        plan = self.state
        return not (plan.start_vars or plan.checked_vars or plan.written_vars
                    or self.random_ops or self.static_positions)

    @property
    def only_reads_variables(self):
        """Like `is_plain`, but reading variables at their start values is allowed (an
        evaluation or inference run): a call is a store lookup and the jitted function."""
        plan = self.state
        return not (plan.checked_vars or plan.written_vars or self.random_ops
                    or self.static_positions or self._sharding is not None
                    or not plan.strict_vars.issuperset(plan.start_vars))

    def uninitialized_error(self, store):
        """The error a run reading a variable missing from `store` raises."""
        return _uninitialized(self.state, store)

    @property
    def is_batchable(self):
        """Pure once traced (no variables, checks or host callbacks; see `call_batched`)."""
        if self._effects_untraced:
            self._trace_effects()
        plan, collector = self.state, self.effects
        return not (plan.start_vars or plan.checked_vars or plan.written_vars
                    or self.static_positions or collector.checks or collector.emits
                    or collector.uses_callbacks)

    def call_batched(self, stacked_args, session_state, count):
        """Runs the cluster for `count` sets of inputs at once (`stacked_args`: each input's
        values stacked on a new first axis), as `jax.vmap` of the traced function. Each
        set draws its own random keys, in order, so the result is what `count` calls of
        `call` would give. Only for clusters that are `is_batchable` after a first call."""
        if self._batched is None:
            axes = (0,) * (len(self.inputs) + (1 if self.random_ops else 0))
            mapped = jax.vmap(self._run_graph,
                              in_axes=axes + (None,) * len(self._const_values))
            self._batched = region_analysis.jit(
                *options.bind(mapped, self.compiler_options, self.device),
                user_options=self._user_options)
        keys = ()
        if self.random_ops:
            keys = (session_state.draw_keys(self.random_ops, times=count),)
        exports, _, _ = self._batched(*stacked_args, *keys, *self._const_values)
        return exports

    def call(self, args, session_state, to_host=False):
        """Runs the cluster on `args` (its inputs' values); returns the export values.
        `to_host`: the run fetches `self.fetched` to the host (see host_copies).

        Runs may come from several threads (queue runners): a first call (it traces,
        filling this cluster's effects collector) and any call touching variables
        (another thread could be donating a buffer this one reads) hold the session's
        lock; other calls run concurrently."""
        if not self._called or self._touches_variables:
            with session_state.variables_lock:
                if not self._called and isinstance(self.jitted, persistent.Persistent):
                    self.jitted.manifest = session_state.manifest
                exports = self._call(args, session_state, to_host)
            self._called = True
            return exports
        return self._call(args, session_state, to_host)

    def host_copies(self, exports, check_outputs, to_host=True):
        """Starts the device-to-host copies a run will wait for (its check flags, and
        the fetched exports when `to_host`) all at once, right after it was enqueued.

        Reading them one by one instead waits for each copy in turn: on a GPU the
        flags' read waited for the step and the loss's copy was only issued then,
        another round trip (~0.7 ms of a 44 ms ResNet-50 step on an H200, profiled).
        Not on CPUs, where a fetched array is read in place and a copy would only
        cost."""
        if getattr(self.device, "platform", "cpu") == "cpu":
            return
        values = [flag for flag, _ in check_outputs]
        if to_host:
            values += [exports[i] for i in self.fetched]
        for value in values:
            start = getattr(value, "copy_to_host_async", None)  # not a TensorArray's
            if start is not None:
                start()

    def _call(self, args, session_state, to_host=False):
        plan, store = self.state, session_state.variables
        missing = ()
        try:
            starts = [store[v] for v in plan.start_vars]
        except KeyError:  # allowed only where control flow alone reads the variable
            missing = tuple(v for v in plan.start_vars if v not in store)
            if any(v in plan.strict_vars for v in missing):
                raise _uninitialized(plan, store) from None
            starts = [store[v] for v in plan.start_vars if v not in missing]
        if self._sharding is not None:  # Send/Recv: copies of values held elsewhere
            args = [devices.on_device(a, self._sharding) for a in args]
            starts = [devices.on_device(a, self._sharding) for a in starts]
        facts = (tuple(v in store for v in plan.checked_vars), missing)
        keys = [session_state.draw_keys(self.random_ops)] if self.random_ops else []
        jitted, traced_args = self._select(args, facts)
        traced_args = host_memory.ready_inputs(traced_args, self.device)
        try:
            exports, finals, (check_outputs, emit_outputs) = jitted(
                *traced_args, *starts, *keys, *self._const_values)
        except errors.StaticValueRequired:
            # Raised while tracing (nothing ran, nothing was donated): compile the small
            # integer inputs in as constants and try again, once.
            positions = tuple(sorted(set(self.static_positions)
                                     | set(self._compile_time_inputs(args))))
            if positions == self.static_positions:
                raise
            self.static_positions = positions
            self._variants.clear()
            return self._call(args, session_state, to_host)
        self.host_copies(exports, check_outputs, to_host)
        failure = self._first_failure(check_outputs)
        if failure is not None:
            # The written values were computed as the old ones (see _graph_function);
            # donated inputs are gone, so their old values come back from the outputs.
            for var, value in zip(plan.written_vars, finals):
                if var in self.donated:
                    store[var] = value
            if (issubclass(failure.error, ta_buffer.CapacityExceeded)
                    and failure.op in self.growable and ta_buffer.bump_growth(failure.op)):
                # Every variable is back at its old value: recompile with twice the
                # room for the loop's arrays (and iterations) and run again.
                self._variants.clear()
                self._batched = None
                self.jitted = self._build({}, self._all_initialized)
                return self._call(args, session_state, to_host)
            raise failure.exception()
        for var, value in zip(plan.written_vars, finals):
            store[var] = value
        if emit_outputs:
            self.effects.run_emits(emit_outputs)
        return exports

    def _first_failure(self, check_outputs):
        """The first check of this run that failed, or None.

        A cluster whose executable came from the store (persistent.py) was never traced,
        so its collector does not know which op each check belongs to: the flags are
        read first, and the cluster is traced (nothing runs) only if one failed."""
        collector = self.effects
        if not (check_outputs or collector.uses_callbacks):
            return None
        if self._effects_untraced:
            if all(bool(np.asarray(flag)) for flag, _ in check_outputs):
                return None
            self._trace_effects()
        return collector.first_failure(check_outputs)

    def _trace_effects(self):
        """Fills the effects collector of a cluster loaded untraced, by tracing it as
        the stored executable was (abstractly: nothing runs, nothing compiles)."""
        fn, _, _ = options.bind(self._run_graph, self.compiler_options, self.device)
        jax.eval_shape(fn, *self.jitted.specs)
        self._effects_untraced = False

    def finish_effects(self, effect_outputs):
        """For plain clusters (nothing to write back): fail or print as the effects say."""
        check_outputs, emit_outputs = effect_outputs
        failure = self._first_failure(check_outputs)
        if failure is not None:
            raise failure.exception()
        if emit_outputs:
            self.effects.run_emits(emit_outputs)


# Ops whose outputs depend only on their inputs' shapes, not on their values.
_SHAPE_OPS = frozenset(("Shape", "ShapeN", "Size", "Rank"))


def _reads_data(tensor, seen):
    """Whether `tensor`'s value depends on fed values, variables or randomness (rather
    than only on shapes and constants)."""
    stack, path = [tensor.op], []
    while stack:
        op = stack.pop()
        if op in seen:
            if seen[op]:
                break
            continue
        if op.type in _SHAPE_OPS:
            seen[op] = False
            continue
        if op.type in ("Placeholder", "PlaceholderWithDefault") or op.op_def.is_variable \
                or op.op_def.random or (op.op_def.stateful and not op.op_def.host_outside_bodies
                                        and op.type != "TensorArrayV3"):
            seen[op] = True
            break
        seen[op] = False
        path.append(op)
        stack.extend(t.op for t in op.inputs)
    else:
        return False
    for op in path:  # everything on the way to a data-dependent op depends on data
        seen[op] = True
    return True


def _uninitialized(plan, store):
    var = next((v for v in plan.start_vars if v not in store and v in plan.strict_vars),
               None) or next(v for v in plan.start_vars if v not in store)
    reader = plan.first_reader[var]
    return errors.FailedPreconditionError(
        None, reader, f"Attempting to use uninitialized value {var.name}\n\t "
        f"[[{{{{node {reader.name}}}}}]]")


def prng_key(row):
    """A JAX key from (seed, seed2, run count): fresh per run, reproducible per seed."""
    key = jax.random.key(row[0])
    return jax.random.fold_in(jax.random.fold_in(key, row[1]), row[2])


def _graph_function(ops, exports, inputs, const_args, static, canonical, plan, random_ops,
                    stats, collector, facts):
    """The Python function jax traces: evaluates `ops` in order, threading variables.
    facts: (is-initialized flag per checked variable, variables missing from the store)."""
    flag_values, missing = facts
    flags = {v: np.bool_(f) for v, f in zip(plan.checked_vars, flag_values)}
    present = [v for v in plan.start_vars if v not in missing]
    n_inputs, n_starts = len(inputs), len(present)
    n_keys = 1 if random_ops else 0
    random_index = {op: i for i, op in enumerate(random_ops)}

    def run_graph(*args):
        stats.traces += 1
        collector.reset()
        env = dict(static)
        env.update(zip(inputs, args))
        start = dict(zip(present, args[n_inputs:]))
        start.update((v, state.Uninitialized(v)) for v in missing)
        key_rows = args[n_inputs + n_starts] if random_ops else None
        env.update(zip(const_args, args[n_inputs + n_starts + n_keys:]))
        written = {}  # (writer op, variable) -> value

        def computed_inputs(op):  # for handoff.later_inputs: no variable reads
            if any((op, i) in plan.reads or t.dtype._is_ref_dtype
                   for i, t in enumerate(op.inputs)):
                return None
            return [env.get(canonical.get(t, t)) for t in op.inputs]

        with (effects.collecting(collector), functional.trace_scope(ops),
              handoff.scope(ops, computed_inputs)):
            for op in ops:
                op_def = op.op_def
                if op_def.is_variable:
                    if op in start:  # fetched directly: its value at the start of the run
                        env[op.outputs[0]] = start[op]
                    continue
                values = []
                for i, t in enumerate(op.inputs):
                    if (op, i) in plan.reads:  # a Ref input, or a fresh read of a variable
                        values.append(state.input_value(plan, op, i, start, written))
                    elif not t.dtype._is_ref_dtype:
                        values.append(env[canonical.get(t, t)])
                    elif op_def.checks_initialized:  # a constant: compiled per state
                        values.append(np.bool_(True) if (op, i) in plan.initialized_by_run
                                      else flags[state.variable_of(t)])
                    else:
                        values.append(None)  # overwritten without being read
                key = prng_key(key_rows[random_index[op]]) if op in random_index else None
                if op_def.functional:
                    n = op._attrs["n_values"]
                    outs, new_refs = functional.run(op, values[:n], values[n:], key)
                    for var, value in zip(op._attrs["body_writes_ordered"], new_refs):
                        written[(op, var)] = value
                    env.update(zip(op.outputs, outs))
                    continue
                if op_def.random:
                    values.insert(0, key)
                if op_def.writes:
                    refs = state.written_inputs(op)
                    new_values = lowering.lower_writer(op, values, refs)
                    for ref, value in zip(refs, new_values):
                        written[(op, state.variable_of(ref))] = value
                    if op.outputs:  # SdcaShrinkL1 has none
                        env[op.outputs[0]] = lowering.writer_output(new_values, refs)
                else:
                    env.update(zip(op.outputs, lowering.lower_op(op, values)))
        finals = [written[(plan.final_writer[v], v)] for v in plan.written_vars]
        ok = collector.all_ok()
        if ok is not None:  # a failed check keeps every variable it can at its old value
            finals = [collector.guarded(new, start[v], ok) if v in start and v not in missing
                      else new for v, new in zip(plan.written_vars, finals)]
        collector.forget_values()  # tracers of this trace: keep none alive
        return tuple(env[t] for t in exports), tuple(finals), collector.outputs()

    return run_graph
