"""The placements a learned one is compared with.

single_device: every op on device 0.
default_placer: TF's placer with no cost model: an op keeps the device it was pinned to
    (tf.device) when that names one of the devices, and goes to device 0 otherwise (TF
    puts unpinned ops on the first GPU when one exists); ops colocated by TF's rules
    (a variable's readers and updates) follow the variable, which pinning already gives
    in these graphs.
greedy: ops in topological order, each on the device where it would finish earliest
    given what is already scheduled (the earliest-finish-time heuristic; the simulator
    then scores the result, so transfers are charged as they really fall).
Hand placements are model-specific (layer-wise for an LSTM stack) and come with the
model (tensorflux/_src/cli/placement_models.py).
"""

from __future__ import annotations

import numpy as np

from tensorflux._src.framework import device as device_lib


def single_device(op_graph, devices):
    return np.zeros(op_graph.size, np.int64)


def pinned_index(pinned, devices):
    """The device a tf.device string pins an op to, by its index among `devices` (the
    device type is not compared: simulated devices are named by the caller), or None."""
    if not pinned:
        return None
    index = device_lib.DeviceSpec.from_string(pinned).device_index
    if index is None:
        return None
    index = int(index)
    return index if 0 <= index < len(devices) else None


def default_placer(op_graph, devices):
    out = np.zeros(op_graph.size, np.int64)
    for i, pinned in enumerate(op_graph.pinned):
        index = pinned_index(pinned, devices)
        if index is not None:
            out[i] = index
    return out


def greedy(op_graph, simulator):
    """Earliest finish time, ops taken in topological order."""
    n, k = op_graph.size, len(simulator.devices)
    link = simulator.link
    compute = simulator.compute
    preds = op_graph.preds()
    place = np.zeros(n, np.int64)
    finish = np.zeros(n)
    device_free = np.zeros(k)
    for i in range(n):
        best, best_end = 0, np.inf
        for d in range(k):
            ready = 0.0
            for s, nbytes in preds[i]:
                arrival = finish[s] if place[s] == d else (
                    finish[s] + link.latency + nbytes / link.bandwidth)
                ready = max(ready, arrival)
            end = max(ready, device_free[d]) + compute[i, d]
            if end < best_end - 1e-15:
                best, best_end = d, end
        place[i] = best
        finish[i] = best_end
        device_free[best] = best_end
    return place
