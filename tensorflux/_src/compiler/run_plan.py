"""The run plan: a pruned graph split into compiled clusters and host steps.

XLA compiles only static shapes and has no strings, so ops whose output shape depends
on the data (`Where`, `Unique`, ...), string ops and Python callbacks run on the host.
Everything else is compiled, in as few clusters as the host ops allow:

    host_depth(op) = the most host ops on any path from the run's inputs to `op`

The run executes cluster 0, the host ops of depth 0, cluster 1, the host ops of depth 1,
and so on. A host op runs at its depth. A compiled op could run in the cluster of its
depth, but a pure one (no variables, no effects) goes in the latest cluster its
consumers allow: a host op of depth d needs it by cluster d, a compiled op by its own
cluster, a fetch by the last one. Pulling work late merges clusters that would
otherwise hold a lone cast or a random draw between host ops (every call costs a
dispatch); random ops keep their streams, which are per op, not per cluster. Every
op's inputs come from an earlier step or its own cluster, and a program without host
ops is one cluster.
Values stay device buffers between clusters; only host ops' inputs are copied to the
host.

Model parallelism: when the run's ops are placed (`tf.device`) on more than one device,
each compiled op gets a device (`assign_devices`) and an edge between compiled ops on
different devices counts like a host op in the depth, so every cluster holds the ops of
one (depth, device) and takes its inputs from earlier steps: the run executes, per
depth, one cluster per device, then the host ops. A cluster's arguments on another
device are copied to its device when it is called (cluster.py). A run naming one
device (or none) is planned exactly as before: one cluster per depth, on that device.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field

from tensorflux._src.compiler import state
from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import errors
from tensorflux._src.runtime import devices


@dataclass
class ClusterStep:
    ops: list = field(default_factory=list)
    device: object = None  # its JAX device; None: that of its first placed op


@dataclass
class HostStep:
    op: object


def runs_on_host(op) -> bool:
    """Ops with a NumPy kernel, ops touching strings (XLA has no string type), loops
    whose variables change shape across iterations (XLA's loops keep shapes fixed), and
    data-dependent sizes outside bodies (OpDef.host_outside_bodies)."""
    if op.op_def.host is not None:
        return True
    if op.op_def.host_outside_bodies:
        return op._body is None
    if op.op_def.functional:
        return bool(op._attrs.get("host_loop"))
    # Resource handles (queue keys) are host objects too; compiled handles are not.
    return any(t.dtype.base_dtype == _dtypes.string
               or (t.dtype.base_dtype == _dtypes.resource and not _is_compiled_handle(t))
               for t in op.inputs + tuple(op.outputs))


# A compiled handle (OpDef.compiled_handle, e.g. a TensorArray's) may reach its users
# through pass-through ops.
_PASS_THROUGH = ("Identity", "Enter", "Exit", "Switch", "Merge", "NextIteration")


def _is_compiled_handle(t) -> bool:
    op = t.op
    while op.type in _PASS_THROUGH and op.inputs:
        op = op.inputs[0].op
    return op.op_def.compiled_handle


def partition(ops, canonical):
    """The run's steps in order: ClusterStep and HostStep entries (empty ones skipped).

    `ops` is topologically ordered. Variables (VariableV2) are not steps: a cluster
    reads and writes them through the session's variable store.
    """
    ops, after = serial_edges(ops, canonical)
    place = assign_devices(ops, canonical)  # {} unless the run spans several devices
    depth, on_host = {}, {op for op in ops if runs_on_host(op)}
    for op in ops:
        d = 0
        producers = ([canonical.get(t, t).op for t in op.inputs] + list(op._control_inputs)
                     + after.get(op, []))
        for p in producers:
            if p in depth:
                d = max(d, depth[p] + (1 if _is_cut(p, op, on_host, place) else 0))
        depth[op] = d
    levels = max(depth.values(), default=-1) + 1
    level = _latest_levels(ops, depth, on_host, canonical, levels, place)
    clusters = {}  # (level, device) -> ClusterStep, in the order they are first needed
    hosts = [[] for _ in range(levels)]
    variables = []
    for op in ops:
        if op in on_host:
            hosts[depth[op]].append(HostStep(op))
        elif op.op_def.is_variable:
            variables.append(op)
        else:
            key = (level[op], place.get(op))
            clusters.setdefault(key, ClusterStep(device=key[1])).ops.append(op)
    for var in variables:  # only matters when the variable itself is fetched
        # Cluster 0 as ever; across devices the first cluster on its device (so a
        # variable only written later, as by an initializer, adds no cluster).
        device = place.get(var)
        first = min((lv for lv, d in clusters if d == device), default=0) if place else 0
        clusters.setdefault((first, device), ClusterStep(device=device)).ops.insert(0, var)
    steps = []
    for lv, host_steps in enumerate(hosts):
        steps.extend(step for (at, _), step in clusters.items() if at == lv)
        steps.extend(host_steps)
    return steps


def serial_edges(ops, canonical):
    """Critical sections executed twice in one run (tf.CriticalSection): the second
    execution's lock (an op with `_serial_section = (key, release op)`) runs after the
    first's release. Steps of a run are sequential, so two holders of one mutex must not
    overlap. Returns the ops reordered to respect those edges, and {op: [ops before]}."""
    sections = {}
    for op in ops:
        section = getattr(op, "_serial_section", None)
        if section is not None:
            sections.setdefault(section[0], []).append((op, section[1]))
    after = {}
    in_run = set(ops)
    for chain in sections.values():
        for (_, release), (lock, _) in zip(chain, chain[1:]):
            if release in in_run:
                after.setdefault(lock, []).append(release)
    if not after:
        return ops, after
    # A stable topological sort with the extra edges (Kahn's, by original position).
    position = {op: i for i, op in enumerate(ops)}
    consumers, missing = {}, {}
    for op in ops:
        preds = {canonical.get(t, t).op for t in op.inputs} | set(op._control_inputs) | set(after.get(op, ()))
        preds &= in_run
        missing[op] = len(preds)
        for p in preds:
            consumers.setdefault(p, []).append(op)
    ready = [position[op] for op in ops if not missing[op]]
    heapq.heapify(ready)
    ordered = []
    while ready:
        op = ops[heapq.heappop(ready)]
        ordered.append(op)
        for c in consumers.get(op, ()):
            missing[c] -= 1
            if not missing[c]:
                heapq.heappush(ready, position[c])
    if len(ordered) != len(ops):
        raise errors.InvalidArgumentError(
            None, None, "Two executions of one CriticalSection in this run depend on each "
                        "other's results in both directions; they cannot run serially.")
    return ordered, after


def assign_devices(ops, canonical):
    """The JAX device of each op of a run whose ops name (with a device type) more than
    one existing device; {} for other runs, which run on one device as before.

    TF's placer, simplified:
      - an op with a Ref input runs with that variable (assigns and optimizer updates
        happen where the variable lives, so its buffer stays there and is donated);
      - an op placed with a device type runs there (soft placement: a device that
        does not exist is the default device);
      - any other op joins its first input whose producer has a device by these rules
        (transitively), else the run's default device: that of its first placed op.
    Ops built for SPMD `Replicas` make the whole run one mesh-wide cluster: not split.
    """
    explicit = {op: devices.explicit_device(op) for op in ops}
    named = [d for d in explicit.values() if d is not None]
    if len(set(named)) < 2 or any(getattr(op, "_replicas", None) is not None for op in ops):
        return {}
    place, placed = {}, set()  # placed: has a device from a placement, not the default
    for op in ops:
        ref = next((t for t in op.inputs if t.dtype._is_ref_dtype), None)
        if ref is not None and ref.op in place:
            source = ref.op
        elif explicit[op] is not None:
            place[op] = explicit[op]
            placed.add(op)
            continue
        else:
            source = next((p for p in (canonical.get(t, t).op for t in op.inputs)
                           if p in placed), None)
        place[op] = place[source] if source is not None else named[0]
        if source is not None and source in placed:
            placed.add(op)
    # Shape arithmetic (unplaced pure ops with integer outputs: Shape, BroadcastGradient-
    # Args, ...) runs with its consumers when they share a device: next to its use it
    # stays a compile-time constant, which XLA's static shapes need (reduction axes).
    consumers = {}
    for op in ops:
        for t in op.inputs:
            consumers.setdefault(canonical.get(t, t).op, []).append(op)
    for op in reversed(ops):  # consumers first, so chains of shape ops move together
        if (explicit[op] is None and op.outputs and _may_run_late(op)
                and all(t.dtype.is_integer for t in op.outputs)):
            where = {place[c] for c in consumers.get(op, ())}
            if len(where) == 1:
                place[op] = where.pop()
    return place


def _is_cut(producer, op, on_host, place):
    """Whether `op` must run in a later step than `producer`: after a host op, or in
    another device's cluster (variables are not steps: their readers run with them)."""
    if producer in on_host:
        return True
    return (place.get(producer) != place.get(op) and op not in on_host
            and not producer.op_def.is_variable)


def _may_run_late(op) -> bool:
    """Pure compiled ops: no variables, no effects, no bodies (which might hold either);
    random draws count as pure here because their keys are per op."""
    op_def = op.op_def
    if op_def.is_variable or op_def.writes or op_def.checks_initialized or op_def.functional:
        return False
    if op_def.stateful and not op_def.random:
        return False
    return not any(t.dtype._is_ref_dtype for t in op.inputs)


def _variable_read(op):
    """The variable `op` only reads through a Ref input (an Identity such as `v/read`),
    or None."""
    op_def = op.op_def
    refs = [t for t in op.inputs if t.dtype._is_ref_dtype]
    if (len(refs) != 1 or op_def.is_variable or op_def.writes or op_def.checks_initialized
            or op_def.functional or op_def.stateful or not refs[0].op.op_def.is_variable):
        return None
    return refs[0].op


def _latest_levels(ops, depth, on_host, canonical, levels, place):
    """Each compiled op's cluster: its depth, or for a pure op the latest cluster that
    still feeds every consumer in time (never earlier than its depth; a consumer on
    another device needs it a depth earlier)."""
    consumers = {}
    for op in ops:
        for t in op.inputs:
            consumers.setdefault(canonical.get(t, t).op, []).append(op)
        for c in op._control_inputs:
            consumers.setdefault(c, []).append(op)
    # A variable's snapshot read (`v/read`) may also run late, in the cluster of its
    # consumers rather than one of its own, but not after a step that writes the variable
    # (it must see the value as of the start of the run). Otherwise a host step before
    # the consumers (a sparse lookup's row count, an iterator) leaves the read alone in
    # cluster 0, whose output is then a copy of the whole variable every run.
    reads = {op: _variable_read(op) for op in ops}
    first_write = {}
    for op in ops:
        if state.writes_variables(op):
            for var in state.written_variables(op):
                first_write[var] = min(first_write.get(var, levels), depth[op])
    level = {}
    for op in reversed(ops):
        read = reads.get(op)
        if op in on_host or not (read is not None or _may_run_late(op)):
            level[op] = depth[op]
            continue
        latest = levels - 1 if read is None else first_write.get(read, levels - 1)
        for consumer in consumers.get(op, ()):
            if consumer in level:  # consumers outside the run (pruned) impose nothing
                latest = min(latest, level[consumer] - _is_cut(op, consumer, on_host, place))
        level[op] = max(depth[op], latest)
    return level
