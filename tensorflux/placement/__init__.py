"""`tensorflux.placement`: learned device placement (Mirhoseini et al., ICML 2017 and
ICLR 2018), scored by a cost model.

    import tensorflux as tf
    from tensorflux import placement

    assignment, report = placement.place(graph, [train_op], devices=4)
    print(report.table())             # predicted step time per method
    placement.apply_placement(graph, assignment)

`devices` is a count of simulated devices (K40-like GPUs joined by PCIe-like links) or
a list of `Device`s. See docs/architecture.md, "Learned device placement".
"""

from __future__ import annotations

import dataclasses
import math
import time

import numpy as np

from tensorflux._src.placement import baselines, features, op_graph
from tensorflux._src.placement.cost_model import (
    Device,
    Link,
    SimResult,
    Simulator,
    simulated_devices,
)
from tensorflux.placement.measure import step_timer
from tensorflux.placement.policy import PolicyConfig, TrainResult, train

METHODS = ("single_device", "default_placer", "greedy", "hand", "learned")


@dataclasses.dataclass
class PlacementReport:
    devices: list
    op_graph: object
    assignments: dict          # method -> device index per op (op_graph order)
    results: dict              # method -> SimResult
    curve: list = dataclasses.field(default_factory=list)   # learned: per update
    evaluations: int = 0        # learned: distinct placements scored
    policy_seconds: float = 0.0  # learned: wall time of training the policy

    def step_time(self, method) -> float:
        return self.results[method].step_time

    def table(self) -> str:
        single = self.results.get("single_device")
        lines = [f"{'method':<16}{'predicted step (ms)':>20}{'speedup':>10}  notes"]
        for method, result in self.results.items():
            ms = result.step_time * 1e3
            speedup = (single.step_time / result.step_time
                       if single and single.valid and result.valid else math.nan)
            note = "" if result.valid else result.reason
            lines.append(f"{method:<16}{ms:>20.3f}{speedup:>10.2f}  {note}")
        return "\n".join(lines)


def _devices(devices):
    if isinstance(devices, int):
        return simulated_devices(devices)
    devices = list(devices)
    if not devices or not all(isinstance(d, Device) for d in devices):
        raise ValueError(f"devices: expected a positive count or a list of Device, got "
                         f"{devices!r}")
    return devices


def place(graph, fetches, devices=4, *, link=None, hand=None, config=None,
          methods=METHODS, reward=None):
    """Finds an op -> device assignment for running `fetches` of `graph` that minimizes
    the simulated step time, beside the baselines.

    hand:    optional `(op_graph, num_devices) -> device index per op`, the hand placement.
    config:  PolicyConfig of the learned policy.
    reward:  what the policy is trained on: None for the cost model, or a callable
             `(op_graph) -> ((device index per op) -> step seconds)`, e.g. measured steps
             on real devices (measure.step_timer). Reported step times stay the cost
             model's.
    methods: which of METHODS to run ("hand" only when `hand` is given).
    Returns ({op name: device name} of the best method, PlacementReport)."""
    unknown = [m for m in methods if m not in METHODS]
    if unknown:
        raise ValueError(f"methods: expected a subset of {METHODS}, got {unknown}")
    devices = _devices(devices)
    fetches = list(fetches) if isinstance(fetches, (list, tuple)) else [fetches]
    graph_ops = op_graph.build(graph, fetches)
    simulator = Simulator(graph_ops, devices, link)
    assignments, curve, evaluations, seconds = {}, [], 0, 0.0
    for method in methods:
        if method == "single_device":
            assignments[method] = baselines.single_device(graph_ops, devices)
        elif method == "default_placer":
            assignments[method] = baselines.default_placer(graph_ops, devices)
        elif method == "greedy":
            assignments[method] = baselines.greedy(graph_ops, simulator)
        elif method == "hand" and hand is not None:
            assignments[method] = np.asarray(hand(graph_ops, len(devices)), np.int64)
        elif method == "learned":
            start = time.perf_counter()
            trained = train(graph_ops, simulator, features.op_features(graph_ops), config,
                            measure=None if reward is None else reward(graph_ops))
            seconds = time.perf_counter() - start
            curve, evaluations = trained.curve, trained.evaluations
            if trained.assignment is not None:
                assignments[method] = trained.assignment
    results = {m: simulator.run(a) for m, a in assignments.items()}
    best = min(results, key=lambda m: results[m].step_time)
    return (to_names(graph_ops, assignments[best], devices),
            PlacementReport(devices, graph_ops, assignments, results, curve, evaluations,
                            seconds))


def to_names(graph_ops, assignment, devices):
    """{op name: device name} for a device index per op."""
    return {name: devices[int(d)].name for name, d in zip(graph_ops.names, assignment)}


def apply_placement(graph, placement):
    """Sets each named op's device (`placement`: {op name: device string})."""
    if not isinstance(placement, dict):
        raise TypeError(f"placement: expected a dict of op name -> device, got "
                        f"{type(placement).__name__}")
    for name, device in placement.items():
        graph.get_operation_by_name(name)._set_device(device)


__all__ = ["METHODS", "Device", "Link", "PlacementReport", "PolicyConfig", "SimResult",
           "Simulator", "TrainResult", "apply_placement", "place", "simulated_devices",
           "step_timer", "to_names", "train"]
