"""A step-time simulator: list scheduling of the op DAG over devices.

An op on device d takes `overhead + flops / flops_per_s + bytes_accessed / memory_bandwidth`
(free ops, which only name or feed values, take 0). A value consumed on another device
is sent once per (producer, destination device) over that pair's link, which carries one
transfer at a time: it starts when the value is produced and the link is free and takes
`latency + bytes / bandwidth`. Each device runs one op at a time, non-preemptively, in
the order its ops' inputs became available (ties: topological order). The step time is
when the last op finishes.

Memory: a device holds the variables placed on it, every output of its ops and every
value received from another device, for the whole step (no freeing: an upper bound, the
simplification the paper's simulator also makes). A placement whose memory exceeds a
device's capacity is invalid (the paper's OOM case).
"""

from __future__ import annotations

import dataclasses
import heapq
import math

import numpy as np

from tensorflux._src.placement import op_costs


@dataclasses.dataclass(frozen=True)
class Device:
    """A simulated device. Defaults: a GPU of the paper's era (K40-like)."""
    name: str
    flops_per_s: float = 4e12
    memory_bandwidth: float = 200e9  # bytes/s
    overhead: float = 5e-6           # seconds per op launched
    memory: float = 12e9             # bytes

    def __post_init__(self):
        for field in ("flops_per_s", "memory_bandwidth", "memory"):
            value = getattr(self, field)
            if not value > 0:
                raise ValueError(f"Device {field}: expected a positive number, got {value!r}")


@dataclasses.dataclass(frozen=True)
class Link:
    """Every pair of distinct devices is joined by a link like this (PCIe-like default)."""
    latency: float = 10e-6      # seconds per transfer
    bandwidth: float = 8e9      # bytes/s


@dataclasses.dataclass
class SimResult:
    step_time: float            # seconds (math.inf when invalid)
    valid: bool
    memory: np.ndarray          # bytes per device
    reason: str = ""            # why invalid
    transfer_bytes: float = 0.0
    finish: np.ndarray | None = None


def simulated_devices(count, **overrides):
    if not isinstance(count, int) or count < 1:
        raise ValueError(f"devices: expected a positive number of devices, got {count!r}")
    return [Device(f"/device:GPU:{i}", **overrides) for i in range(count)]


class Simulator:
    """Simulates placements of one OpGraph over fixed devices and link."""

    def __init__(self, op_graph, devices, link=None):
        if not devices:
            raise ValueError("devices: expected at least one Device, got none")
        self.graph = op_graph
        self.devices = list(devices)
        self.link = link or Link()
        n = op_graph.size
        free = np.array([t in op_costs.FREE_OPS for t in op_graph.types])
        speed = np.array([d.flops_per_s for d in self.devices])
        bandwidth = np.array([d.memory_bandwidth for d in self.devices])
        overhead = np.array([d.overhead for d in self.devices])
        self.compute = (overhead[None, :] + op_graph.flops[:, None] / speed[None, :]
                        + op_graph.bytes_accessed[:, None] / bandwidth[None, :])
        self.compute[free] = 0.0
        self.succs = op_graph.succs()
        self.indegree = np.zeros(n, np.int64)
        for _, d, _ in op_graph.edges:
            self.indegree[d] += 1
        self.capacity = np.array([d.memory for d in self.devices])
        self._resident = op_graph.output_bytes + op_graph.param_bytes

    def run(self, assignment) -> SimResult:
        """Simulates one step with op i on device `assignment[i]` (device indices)."""
        place = np.asarray(assignment, np.int64)
        n, k = self.graph.size, len(self.devices)
        if place.shape != (n,) or (n and (place.min() < 0 or place.max() >= k)):
            raise ValueError(f"assignment: expected {n} device indices in [0, {k}), got "
                             f"shape {place.shape}")
        memory = np.bincount(place, weights=self._resident, minlength=k).astype(np.float64)
        latency, bandwidth = self.link.latency, self.link.bandwidth
        compute, succs = self.compute, self.succs
        indegree = self.indegree.copy()
        ready = np.zeros(n)
        finish = np.zeros(n)
        device_free = [0.0] * k
        link_free = {}
        sent = {}
        transfer_bytes = 0.0
        heap = [(0.0, i) for i in range(n) if indegree[i] == 0]
        heapq.heapify(heap)
        while heap:
            t, i = heapq.heappop(heap)
            d = place[i]
            start = max(device_free[d], t)
            end = start + compute[i, d]
            finish[i] = end
            device_free[d] = end
            for j, nbytes in succs[i]:
                dj = place[j]
                if dj == d:
                    arrival = end
                else:
                    # One send per value and destination (edges name values by their
                    # producer and size; two same-sized outputs of one op share a send).
                    key = (i, dj, nbytes)
                    arrival = sent.get(key)
                    if arrival is None:
                        pair = (d, dj)
                        begin = max(end, link_free.get(pair, 0.0))
                        arrival = begin + latency + nbytes / bandwidth
                        link_free[pair] = arrival
                        sent[key] = arrival
                        memory[dj] += nbytes
                        transfer_bytes += nbytes
                ready[j] = max(ready[j], arrival)
                indegree[j] -= 1
                if indegree[j] == 0:
                    heapq.heappush(heap, (ready[j], j))
        over = np.nonzero(memory > self.capacity)[0]
        if over.size:
            d = int(over[0])
            return SimResult(math.inf, False, memory,
                             f"out of memory on {self.devices[d].name}: "
                             f"{memory[d]:.4g} > {self.capacity[d]:.4g} bytes",
                             transfer_bytes, finish)
        return SimResult(float(finish.max()) if n else 0.0, True, memory, "",
                         transfer_bytes, finish)
