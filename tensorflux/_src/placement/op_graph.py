"""The op DAG a placement is searched over: the ops a run of `fetches` needs, in
topological order, with their costs, the bytes each edge carries and what each op keeps
in device memory."""

from __future__ import annotations

import dataclasses

import numpy as np

from tensorflux._src.placement import op_costs


@dataclasses.dataclass
class OpGraph:
    """Ops 0..n-1 in topological order (an op's inputs come before it).

    edges:      (src, dst, bytes) for each data input (control inputs carry 0 bytes).
    flops, bytes_accessed: per-op cost (op_costs).
    output_bytes: bytes of all outputs of the op (they occupy its device's memory).
    param_bytes: bytes of the variable an op is (VariableV2), else 0.
    pinned:     the device string already on the op (tf.device), "" when free.
    colocation: each op's TF colocation groups ([b"loc:@name"], units.py).
    """
    names: list
    types: list
    edges: list
    flops: np.ndarray
    bytes_accessed: np.ndarray
    output_bytes: np.ndarray
    param_bytes: np.ndarray
    pinned: list
    cost_sources: list = dataclasses.field(default_factory=list)
    colocation: list = dataclasses.field(default_factory=list)  # op.colocation_groups()

    @property
    def size(self) -> int:
        return len(self.names)

    def preds(self):
        """For each op, its list of (src, bytes)."""
        out = [[] for _ in self.names]
        for s, d, b in self.edges:
            out[d].append((s, b))
        return out

    def succs(self):
        out = [[] for _ in self.names]
        for s, d, b in self.edges:
            out[s].append((d, b))
        return out

    def depths(self) -> np.ndarray:
        """Longest path (in ops) from a source, per op."""
        depth = np.zeros(self.size, np.int64)
        for s, d, _ in sorted(self.edges, key=lambda e: e[1]):
            depth[d] = max(depth[d], depth[s] + 1)
        return depth


def _needed_ops(fetches):
    """The ops a run of `fetches` executes (through data and control inputs)."""
    stack = [f.op if hasattr(f, "op") else f for f in fetches]
    seen = {}
    while stack:
        op = stack.pop()
        if op.name in seen:
            continue
        seen[op.name] = op
        stack.extend(t.op for t in op.inputs)
        stack.extend(op.control_inputs)
    return seen


def _topological(ops):
    order, state = [], {}
    for root in ops.values():
        if root.name in state:
            continue
        stack = [(root, False)]
        while stack:
            op, done = stack.pop()
            if done:
                state[op.name] = 2
                order.append(op)
                continue
            if state.get(op.name):
                continue
            state[op.name] = 1
            stack.append((op, True))
            for dep in reversed([t.op for t in op.inputs] + list(op.control_inputs)):
                if not state.get(dep.name):
                    stack.append((dep, False))
    return order


def build(graph, fetches, cost_cache=None) -> OpGraph:
    """The OpGraph of what running `fetches` (Tensors or Operations of `graph`) executes."""
    if not fetches:
        raise ValueError("fetches: expected at least one Tensor or Operation, got none")
    for f in fetches:
        if getattr(f, "graph", None) is not graph:
            raise ValueError(f"fetches: {f!r} is not an element of the given graph")
    ops = _needed_ops(fetches)
    # Topological order with creation order as the tie-break: graph order already is one.
    created = {op.name: i for i, op in enumerate(graph.get_operations())}
    order = sorted(_topological(ops), key=lambda op: created.get(op.name, 0))
    index = {op.name: i for i, op in enumerate(order)}
    if any(index[dep.name] >= index[op.name] for op in order
           for dep in [t.op for t in op.inputs] + list(op.control_inputs)):
        order = _topological(ops)  # creation order is not topological (rare: rewired ops)
        index = {op.name: i for i, op in enumerate(order)}
    cache = cost_cache or op_costs.CostCache()
    edges, flops, accessed, out_bytes, params, sources = [], [], [], [], [], []
    for i, op in enumerate(order):
        for t in op.inputs:
            edges.append((index[t.op.name], i, op_costs.tensor_bytes(t)))
        for c in op.control_inputs:
            edges.append((index[c.name], i, 0))
        cost = cache.cost(op)
        flops.append(cost.flops)
        accessed.append(cost.bytes_accessed)
        sources.append(cost.source)
        out = sum(op_costs.tensor_bytes(t) for t in op.outputs)
        is_var = op.op_def.is_variable
        out_bytes.append(0 if is_var else out)
        params.append(out if is_var else 0)
    return OpGraph(names=[op.name for op in order], types=[op.type for op in order],
                   edges=edges, flops=np.array(flops), bytes_accessed=np.array(accessed),
                   output_bytes=np.array(out_bytes, np.float64),
                   param_bytes=np.array(params, np.float64),
                   pinned=[op.device for op in order], cost_sources=sources,
                   colocation=[op.colocation_groups() for op in order])
