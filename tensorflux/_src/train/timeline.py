"""Chrome trace (chrome://tracing, Perfetto) of a traced run, as TF's client/timeline.py.

`Timeline(run_metadata.step_stats, graph).generate_chrome_trace_format()` gives the JSON
TF writes: one process per device ("<device> Compute"), a complete event (`"ph": "X"`)
per op with its name and type, and with `show_dataflow` a flow arrow ("s"/"t") from
each producer to its consumers. Ops of one compiled cluster share the cluster's time
(XLA runs them as one program), so they are laid out one after another in that span.
"""

from __future__ import annotations

import json

__all__ = ["Timeline", "run_metadata_proto"]


class Timeline:
    """A run's step stats as a Chrome trace."""

    def __init__(self, step_stats, graph=None):
        self._step_stats = step_stats
        self._graph = graph

    def generate_chrome_trace_format(self, show_dataflow=True, show_memory=False):
        events = []
        pids = {}
        placed = {}  # op name -> (pid, tid, start, end) of its event
        for dev_stats in self._step_stats.dev_stats:
            device = dev_stats.device
            if device not in pids:
                pids[device] = len(pids)
                events.append({"name": "process_name", "ph": "M", "pid": pids[device],
                               "args": {"name": f"{device} Compute"}})
            pid = pids[device]
            nodes = list(dev_stats.node_stats)
            for i, node in enumerate(nodes):
                start, duration = node.all_start_micros, node.all_end_rel_micros
                if len(nodes) > 1:  # share the cluster's span, in order
                    duration = max(duration // len(nodes), 1)
                    start += i * duration
                args = {"name": node.node_name, "op": node.timeline_label}
                op = self._op(node.node_name)
                if op is not None:
                    for j, t in enumerate(op.inputs):
                        args[f"input{j}"] = t.op.name
                events.append({"ph": "X", "cat": "Op", "name": node.timeline_label,
                               "pid": pid, "tid": 0, "ts": start, "dur": duration,
                               "args": args})
                placed[node.node_name] = (pid, 0, start, start + duration)
        if show_dataflow and self._graph is not None:
            flow_id = 0
            for name, (pid, tid, start, _) in placed.items():
                op = self._op(name)
                for t in op.inputs if op is not None else ():
                    source = placed.get(t.op.name)
                    if source is None:
                        continue
                    src_pid, src_tid, _, src_end = source
                    events.append({"ph": "s", "cat": "DataFlow", "name": t.name,
                                   "pid": src_pid, "tid": src_tid, "ts": src_end,
                                   "id": flow_id})
                    events.append({"ph": "t", "cat": "DataFlow", "name": t.name,
                                   "pid": pid, "tid": tid, "ts": start, "id": flow_id})
                    flow_id += 1
        return json.dumps({"traceEvents": events}, separators=(",", ":"))

    def _op(self, name):
        if self._graph is None:
            return None
        try:
            return self._graph.get_operation_by_name(name)
        except (KeyError, ValueError):
            return None


def run_metadata_proto(run_metadata):
    """`tf.RunMetadata` as the RunMetadata message FileWriter.add_run_metadata
    serializes into the event file: it already is one (kept for callers)."""
    return run_metadata
