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
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tensorflux._src.framework import dtypes as _dtypes


@dataclass
class ClusterStep:
    ops: list = field(default_factory=list)


@dataclass
class HostStep:
    op: object


def runs_on_host(op) -> bool:
    """Ops with a NumPy kernel, and ops touching strings (XLA has no string type)."""
    if op.op_def.host is not None:
        return True
    return any(t.dtype.base_dtype == _dtypes.string for t in op.inputs + tuple(op.outputs))


def partition(ops, canonical):
    """The run's steps in order: ClusterStep and HostStep entries (empty ones skipped).

    `ops` is topologically ordered. Variables (VariableV2) are not steps: a cluster
    reads and writes them through the session's variable store.
    """
    depth, on_host = {}, set()
    for op in ops:
        d = 0
        producers = [canonical.get(t, t).op for t in op.inputs] + list(op._control_inputs)
        for p in producers:
            if p in depth:
                d = max(d, depth[p] + (1 if p in on_host else 0))
        depth[op] = d
        if runs_on_host(op):
            on_host.add(op)
    levels = max(depth.values(), default=-1) + 1
    level = _latest_levels(ops, depth, on_host, canonical, levels)
    clusters = [ClusterStep() for _ in range(levels)]
    hosts = [[] for _ in range(levels)]
    for op in ops:
        if op in on_host:
            hosts[depth[op]].append(HostStep(op))
        elif op.op_def.is_variable:
            clusters[0].ops.append(op)  # only matters when the variable itself is fetched
        else:
            clusters[level[op]].ops.append(op)
    steps = []
    for cluster, host_steps in zip(clusters, hosts):
        if cluster.ops:
            steps.append(cluster)
        steps.extend(host_steps)
    return steps


def _may_run_late(op) -> bool:
    """Pure compiled ops: no variables, no effects, no bodies (which might hold either);
    random draws count as pure here because their keys are per op."""
    op_def = op.op_def
    if op_def.is_variable or op_def.writes or op_def.checks_initialized or op_def.functional:
        return False
    if op_def.stateful and not op_def.random:
        return False
    return not any(t.dtype._is_ref_dtype for t in op.inputs)


def _latest_levels(ops, depth, on_host, canonical, levels):
    """Each compiled op's cluster: its depth, or for a pure op the latest cluster that
    still feeds every consumer in time (never earlier than its depth)."""
    consumers = {}
    for op in ops:
        for t in op.inputs:
            consumers.setdefault(canonical.get(t, t).op, []).append(op)
        for c in op._control_inputs:
            consumers.setdefault(c, []).append(op)
    level = {}
    for op in reversed(ops):
        if op in on_host or not _may_run_late(op):
            level[op] = depth[op]
            continue
        latest = levels - 1
        for consumer in consumers.get(op, ()):
            if consumer in level:  # consumers outside the run (pruned) impose nothing
                latest = min(latest, level[consumer])
        level[op] = max(depth[op], latest)
    return level
