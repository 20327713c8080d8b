"""One run signature of a Session: the pruned, simplified graph as a run plan.

Built once per (fetches, feeds) by the Session; calling it does no tracing:

    feeds ──► cluster 0 (XLA) ──► host step(s) ──► cluster 1 (XLA) ──► ... ──► fetches
              static (folded) fetches are returned from the plan directly

Most runs are a single cluster; host ops (run_plan.py) split a run into several.
"""

from __future__ import annotations

import time

import jax
import numpy as np

from tensorflux._src.compiler import functional, lowering, passes, run_plan, state, ta_buffer
from tensorflux._src.compiler.cluster import Cluster
from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import errors
from tensorflux._src.runtime import host_memory


_HOST_DEVICE = "/job:localhost/replica:0/task:0/device:CPU:0"


class CompileStats:
    """Counts what a Session compiled; tests use it to prove cached runs do no work."""

    def __init__(self):
        self.traces = 0
        self.executables = 0

    def __repr__(self):
        return f"CompileStats(traces={self.traces}, executables={self.executables})"


class Executable:
    """Computes `fetch_tensors` (and runs `target_ops`) given values for `feed_tensors`."""

    def __init__(self, fetch_tensors, target_ops, feed_tensors, stats: CompileStats,
                 compiler_options=None):
        fed = set(feed_tensors)
        ops = passes.prune(fetch_tensors, target_ops, fed)
        passes.check_feeds(ops, fed)
        canonical = passes.common_subexpressions(ops, fed)
        static = passes.fold_constants(ops, fed, canonical)
        known = fed | static.keys()

        def needs_running(op):
            # Skip ops already known (folded or fed) and CSE duplicates of earlier ops.
            return not op.outputs or not (op.outputs[0] in canonical
                                          or all(t in known for t in op.outputs))

        resolved = [canonical.get(t, t) for t in fetch_tensors]
        run_ops = [op for op in passes.prune([r for r in resolved if r not in known],
                                             target_ops, known, canonical)
                   if needs_running(op)]
        _check_outside_bodies(run_ops)
        self.steps = run_plan.partition(run_ops, canonical)

        # Which values each step must hand on: those fetched or used by a later step.
        wanted = {r for r in resolved if r not in known}
        step_of = {op: i for i, step in enumerate(self.steps) for op in _step_ops(step)}
        for op, i in step_of.items():
            wanted.update(r for r in (canonical.get(t, t) for t in op.inputs)
                          if r not in known and not r.dtype._is_ref_dtype
                          and step_of.get(r.op, i) != i)
        # Variable reads that must happen at their consumer (compiler/state.py), over the
        # whole run so that orderings across clusters count.
        fresh = state.fresh_reads(run_ops, canonical)
        self.clusters = []
        for step in self.steps:
            if isinstance(step, run_plan.ClusterStep):
                step_ops = set(step.ops)
                inputs = _cluster_inputs(step.ops, fed, static, canonical, feed_tensors)
                exports = [t for op in step.ops for t in op.outputs if t in wanted]
                fetched_vars = [r for r in resolved if r.op in step_ops and
                                r.op.op_def.is_variable]
                step.cluster = Cluster(step.ops, inputs, exports, static, canonical, stats,
                                       compiler_options, extra_reads=fetched_vars,
                                       device=step.device, fresh_reads=fresh,
                                       fetched=resolved)
                self.clusters.append(step.cluster)
        self.traced_ops = [op for c in self.clusters for op in c.ops]
        self.host_ops = [s.op for s in self.steps if isinstance(s, run_plan.HostStep)]

        # Where each fetched value comes from: a feed, the folded plan, or a step.
        feed_index = {t: i for i, t in enumerate(feed_tensors)}
        self._sources = []
        for t, r in zip(fetch_tensors, resolved):
            if t in feed_index:
                self._sources.append(("feed", feed_index[t]))
            elif r in static:
                self._sources.append(("static", static[r]))
            else:
                self._sources.append(("step", r))
        self._feed_tensors, self._static, self._canonical = feed_tensors, static, canonical
        # `Session.run` calls `self.run`: the general path first, then maybe the fast one.
        self.run = self._first_run

    @property
    def compiler_options(self):
        """The XLA options of the (first) compiled cluster; {} when nothing compiles."""
        return self.clusters[0].compiler_options if self.clusters else {}

    @property
    def tuning(self):
        """Whether a cluster's autotuner is still timing candidate executables."""
        return any(cluster.tuning for cluster in self.clusters)

    def describe(self):
        """The run plan as lines of text: which ops each compiled cluster and host step ran."""
        lines, n = [], 0
        # Device numbers are shown when the run spans several devices or not the default.
        numbered = any(c.device != jax.devices()[0] and c.replicas is None
                       for c in self.clusters)
        for step in self.steps:
            if isinstance(step, run_plan.HostStep):
                lines.append(f"host: {step.op.name} ({step.op.type})")
            else:
                names = ", ".join(op.name for op in step.ops)
                device = step.cluster.device
                where = f"{device.platform}:{device.id}" if numbered else device.platform
                if step.cluster.replicas is not None:
                    where += f" x{step.cluster.replicas.num_replicas} replicas (SPMD)"
                lines.append(f"cluster_{n} on {where}: {names}")
                n += 1
        return lines

    def placements(self):
        """(op name, op type, full device name) of every op this run executes."""
        out = []
        for step in self.steps:
            if isinstance(step, run_plan.HostStep):
                out.append((step.op.name, step.op.type, _HOST_DEVICE))
                continue
            device = step.cluster.device
            name = (f"/job:localhost/replica:0/task:0/device:{device.platform.upper()}:"
                    f"{device.id}")
            out.extend((op.name, op.type, name) for op in step.ops)
        return out

    def run_traced(self, feeds, session_state, run_metadata):
        """`run`, also recording each step's ops and wall time into `run_metadata`."""
        from tensorflux._src.framework import protos
        if not isinstance(run_metadata, protos.RunMetadata):
            raise TypeError(f"run_metadata must be a tf.RunMetadata, but got "
                            f"{type(run_metadata)}")
        stats = protos.StepStats()
        # The step's line of the run plan names its executor, as thread 0 of the step
        # (runtime/config.py: run_plan, step_kind read it back).
        lines = {id(step): line for step, line in zip(self.steps, self.describe())}

        def on_step(step, start, end):
            if isinstance(step, run_plan.HostStep):
                device, ops = _HOST_DEVICE, [step.op]
            else:
                jax_device = step.cluster.device
                device = (f"/job:localhost/replica:0/task:0/device:"
                          f"{jax_device.platform.upper()}:{jax_device.id}")
                ops = step.ops
            stats.dev_stats.append(protos.DeviceStepStats(
                device=device, thread_names={0: lines[id(step)]}, node_stats=[
                    protos.NodeExecStats(node_name=op.name, timeline_label=op.type,
                                         all_start_micros=int(start * 1e6),
                                         all_end_rel_micros=int((end - start) * 1e6))
                    for op in ops]))

        results = self._run_steps(feeds, session_state, on_step)
        run_metadata.step_stats.CopyFrom(stats)
        return results

    def _first_run(self, feeds, session_state):
        """The first run goes the general way; then a plain run switches to the fast path
        (the first run is when a cluster learns whether it needs compile-time inputs)."""
        results = self._run_steps(feeds, session_state)
        self.run = self._fast_runner() or self._run_steps
        return results

    def _fast_runner(self):
        """For the common runs (one cluster computing exactly the fetches from exactly
        the feeds, writing no variables: inference, evaluation, benchmarks of an op): a
        jitted call and a conversion; None otherwise."""
        sources, steps = self._sources, self.steps
        if not (len(steps) == 1 and self.clusters
                and self.clusters[0].inputs == list(self._feed_tensors)
                and [w for _, w in sources] == self.clusters[0].exports
                and all(kind == "step" for kind, _ in sources)):
            return None
        cluster = self.clusters[0]
        if cluster.growable:  # its loops may recompile with more room (Cluster._call)
            return None
        jitted, consts, collector = cluster.jitted, cluster._const_values, cluster.effects
        device = cluster.device

        def finish(exports, effect_outputs):
            cluster.host_copies(exports, effect_outputs[0])
            if effect_outputs[0] or effect_outputs[1] or collector.uses_callbacks:
                cluster.finish_effects(effect_outputs)
            return [_to_numpy(v) for v in exports]

        if cluster.is_plain:
            def run_plain(feeds, _):
                feeds = host_memory.ready_inputs(feeds, device)
                exports, _, effect_outputs = jitted(*feeds, *consts)
                return finish(exports, effect_outputs)

            return run_plain
        if cluster.only_reads_variables:
            start_vars = cluster.state.start_vars

            def run_reading(feeds, session_state):
                feeds = host_memory.ready_inputs(feeds, device)
                store = session_state.variables
                # Under the lock: another thread's training step may donate (free) the
                # buffers read here once it has replaced them in the store.
                with session_state.variables_lock:
                    try:
                        starts = [store[v] for v in start_vars]
                    except KeyError:
                        raise cluster.uninitialized_error(store) from None
                    exports, _, effect_outputs = jitted(*feeds, *starts, *consts)
                return finish(exports, effect_outputs)

            return run_reading
        return None

    def run_batched(self, feed_sets, session_state):
        """The fetches for several sets of feed values (tf.data's map before batch).

        Host steps run set by set; a compiled cluster ending the plan runs once for all
        sets, vmapped over a new first axis (each set draws its own random keys, so the
        values are those of one `run` per set). Returns, per fetch, the sets' values
        stacked, or their list when shapes differ (the caller's batching reports that).
        None, with nothing run, when the plan has another form (a cluster before a host
        step, variables, checks): run the sets one by one then. Call after a first `run`.
        """
        steps = self.steps
        cluster = steps[-1].cluster if steps and isinstance(steps[-1], run_plan.ClusterStep) \
            else None
        if len(self.clusters) > (1 if cluster else 0) or (cluster and not cluster.is_batchable):
            return None
        static, canonical = self._static, self._canonical
        envs = []
        for feeds in feed_sets:
            env = dict(zip(self._feed_tensors, feeds))
            for op in self.host_ops:
                _run_host_step(op, env, static, canonical, session_state)
            envs.append(env)
        if cluster is not None:
            args = [[env[t] for env in envs] for t in cluster.inputs]
            if all(_same_shapes(values) for values in args):
                outs = cluster.call_batched([np.stack(v) for v in args], session_state,
                                            len(envs))
                batched = dict(zip(cluster.exports, outs))
            else:
                batched = {}
                for env in envs:
                    env.update(zip(cluster.exports,
                                   cluster.call([env[t] for t in cluster.inputs],
                                                session_state)))
        else:
            batched = {}
        results = []
        for kind, where in self._sources:
            if kind == "step" and where in batched:
                results.append(np.asarray(batched[where]))
                continue
            if kind == "step":
                values = [np.asarray(env[where]) for env in envs]
            elif kind == "static":
                values = [where] * len(envs)
            else:
                values = [np.asarray(feeds[where]) for feeds in feed_sets]
            results.append(np.stack(values) if _same_shapes(values) else values)
        return results

    def run_device(self, feeds, session_state):
        """The fetches as the run left them: device buffers, no host copies (a
        defun'd function's outputs become eager tensors over them). Feeds may be
        device buffers too."""
        return self._run_steps(feeds, session_state, keep_device=True)

    def _run_steps(self, feeds, session_state, on_step=None, keep_device=False):
        sources, feed_tensors = self._sources, self._feed_tensors
        static, canonical = self._static, self._canonical
        env = dict(zip(feed_tensors, feeds))
        try:
            for step in self.steps:
                start = time.perf_counter() if on_step else None
                if isinstance(step, run_plan.HostStep):
                    _run_host_step(step.op, env, static, canonical, session_state)
                else:
                    cluster = step.cluster
                    args = [env[t] for t in cluster.inputs]
                    outs = cluster.call(args, session_state, to_host=not keep_device)
                    if on_step:
                        jax.block_until_ready(outs)
                    env.update(zip(cluster.exports, outs))
                if on_step:
                    on_step(step, start, time.perf_counter())
        except BaseException:
            _release_run_scoped(env)
            raise
        results = []
        if keep_device:
            return [env[where] if kind == "step" else feeds[where] if kind == "feed" else where
                    for kind, where in sources]
        for kind, where in sources:
            if kind == "step":
                results.append(_to_numpy(env[where]))
            elif kind == "static":
                results.append(where[()] if where.ndim == 0 else where.copy())
            else:
                results.append(_to_numpy(feeds[where]))
        return results


def _release_run_scoped(env):
    """A failed run drops what it holds until its end, as TF's step does (a
    CriticalSection's lock token releases its mutex)."""
    for value in env.values():
        if isinstance(value, np.ndarray) and value.dtype == object and value.ndim == 0:
            release = getattr(value.item(), "release_at_run_end", None)
            if release is not None:
                release()


def _check_outside_bodies(ops):
    """Ops of a cond branch or loop body run only inside their construct."""
    for op in ops:
        if op._body is not None:
            raise errors.InvalidArgumentError(
                None, op, f"'{op.name}' is inside a {op._body.kind} body, so it has no value "
                f"outside it and cannot be fetched or run directly; return it from the "
                f"{op._body.kind} instead.")


def _step_ops(step):
    return step.ops if isinstance(step, run_plan.ClusterStep) else [step.op]


def _cluster_inputs(ops, fed, static, canonical, feed_tensors):
    """Values a cluster takes as arguments: feeds first (in feed order), then the
    outputs of earlier steps, in the order the cluster's ops first use them."""
    mine = {t for op in ops for t in op.outputs}
    used = []
    for op in ops:
        for t in op.inputs:
            r = canonical.get(t, t)
            if (r not in mine and r not in static and not r.dtype._is_ref_dtype
                    and r not in used):
                used.append(r)
    feeds_used = [t for t in feed_tensors if t in used]
    return feeds_used + [t for t in used if t not in fed]


def _string_variable_step(op, env, static, canonical, session_state):
    """Ops of a string variable (XLA has no strings, so it lives on the host): the
    VariableV2 itself, Assign, reads through Identity and IsVariableInitialized act on
    the session's store here. False for any other op."""
    if op.op_def.is_variable:
        # The ref: its users look the value up; fetching it gives the current value.
        with session_state.variables_lock:
            env[op.outputs[0]] = session_state.variables.get(op)
        return True
    refs = [t for t in op.inputs if t.dtype._is_ref_dtype]
    if not refs or refs[0].dtype.base_dtype != _dtypes.string:
        return False
    var_op = refs[0].op
    store = session_state.variables
    if op.type == "IsVariableInitialized":
        env[op.outputs[0]] = np.bool_(var_op in store)
    elif op.type == "Assign":
        r = canonical.get(op.inputs[1], op.inputs[1])
        value = np.array(static[r] if r in static else env[r], dtype=object)
        shape = var_op.outputs[0].shape
        if op._attrs.get("validate_shape", True) and shape.is_fully_defined() \
                and list(value.shape) != shape.as_list():
            raise errors.InvalidArgumentError(
                None, op, f"Assign requires shapes of both tensors to match. lhs shape= "
                          f"{shape.as_list()} rhs shape= {list(value.shape)}")
        with session_state.variables_lock:
            store[var_op] = value
        env[op.outputs[0]] = value
    elif op.type == "Identity":
        with session_state.variables_lock:
            if var_op not in store:
                raise errors.FailedPreconditionError(
                    None, op, f"Attempting to use uninitialized value {var_op.name}")
            env[op.outputs[0]] = store[var_op].copy()
    else:
        raise errors.UnimplementedError(
            None, op, f"{op.type} on the string variable {var_op.name} is not supported: "
                      f"string variables support assign, read and initialization checks")
    return True


def _run_host_step(op, env, static, canonical, session_state):
    """One host op: its NumPy kernel, its lowering evaluated eagerly (string ops), or a
    control-flow construct run on concrete values (a loop whose shapes change)."""
    if _string_variable_step(op, env, static, canonical, session_state):
        return
    values = []
    for t in op.inputs:
        if t.dtype._is_ref_dtype:
            continue  # a construct's variables: it reads them from the session's store
        r = canonical.get(t, t)
        value = static[r] if r in static else env[r]
        if ta_buffer.is_buffer(value):  # a TensorArray's flow: its arrays, concrete
            values.append(jax.tree_util.tree_map(np.asarray, value))
            continue
        values.append(value if isinstance(value, np.ndarray) else np.asarray(value))
    if op.op_def.random and op.op_def.host is None:  # e.g. random_shuffle of strings
        from tensorflux._src.compiler.cluster import prng_key
        values.insert(0, prng_key(session_state.draw_keys([op])[0]))
    # Values are concrete here, so run-time checks and prints act at once.
    if op.op_def.functional:
        outs = functional.run_on_host(op, values, session_state)
    elif op.op_def.host is not None:
        outs = lowering.run_host_kernel(op, values, session_state)
    else:
        outs = lowering.fold_op(op, values, max_elements=None)
    env.update(zip(op.outputs, outs))


def _same_shapes(values):
    first = np.shape(values[0])
    return all(np.shape(v) == first for v in values)


def _to_numpy(value):
    """numpy array for a result; 0-d results become numpy scalars, as TF1 returns them."""
    if ta_buffer.is_buffer(value):  # a TensorArray's flow fetched: TF's float scalar
        return value.fetch_value()
    value = np.asarray(value)
    return value[()] if value.ndim == 0 else value
