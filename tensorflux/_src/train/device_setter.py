"""`tf.train.replica_device_setter`: variables on parameter-server tasks, the rest on
the worker, as TF1's between-graph replication lays a graph out.

    with tf.device(tf.train.replica_device_setter(ps_tasks=2)):
        w = tf.Variable(...)      # VariableV2 on '/job:ps/task:0'
        b = tf.Variable(...)      # VariableV2 on '/job:ps/task:1' (round-robin)
        y = tf.matmul(x, w) + b   # '/job:worker'

Device strings are TF's: the chosen device is merged with the op's own (inner
`tf.device` scopes win field by field). A local Session runs such a graph in one
process (job, replica and task do not pick devices there). Also the strategies
`GreedyLoadBalancingStrategy` / `byte_size_load_fn` of `tf.contrib.training`.
"""

from __future__ import annotations

import logging

import numpy as np

from tensorflux._src.framework import device as pydev
from tensorflux._src.framework import tensor_shape

# Op types placed on parameter servers by default (TF's list).
STANDARD_PS_OPS = ("Variable", "VariableV2", "AutoReloadVariable", "MutableHashTable",
                   "MutableHashTableV2", "MutableHashTableOfTensors",
                   "MutableHashTableOfTensorsV2", "MutableDenseHashTable",
                   "MutableDenseHashTableV2", "VarHandleOp",
                   "BoostedTreesEnsembleResourceHandleOp",
                   "BoostedTreesQuantileStreamResourceHandleOp")


class _RoundRobinStrategy:
    """ps tasks 0, 1, ..., n-1, 0, ... in the order ps ops are created."""

    def __init__(self, num_tasks):
        self._num_tasks = num_tasks
        self._next_task = 0

    def __call__(self, unused_op):
        task = self._next_task
        self._next_task = (self._next_task + 1) % self._num_tasks
        return task


class _ReplicaDeviceChooser:
    def __init__(self, ps_tasks, ps_device, worker_device, merge_devices, ps_ops,
                 ps_strategy):
        self._ps_tasks, self._ps_device = ps_tasks, ps_device
        self._worker_device, self._merge_devices = worker_device, merge_devices
        self._ps_ops, self._ps_strategy = ps_ops, ps_strategy

    def device_function(self, op):
        if not self._merge_devices and op.device:
            return op.device
        current = pydev.parse(op.device or "")
        if self._ps_tasks and self._ps_device and op.type in self._ps_ops:
            ps = pydev.parse(self._ps_device)
            # A task is chosen only when the op's own job (if any) is the ps job.
            if ps.job and (not current.job or current.job == ps.job):
                ps = pydev.DeviceSpec(ps.job, ps.replica, int(self._ps_strategy(op)),
                                      ps.device_type, ps.device_index)
            return ps.merge_from(current).to_string()
        worker = pydev.parse(self._worker_device or "")
        return worker.merge_from(current).to_string()


def replica_device_setter(ps_tasks=0, ps_device="/job:ps", worker_device="/job:worker",
                          merge_devices=True, cluster=None, ps_ops=None, ps_strategy=None):
    """A device function for `tf.device`: ops of `ps_ops` types (variables) go to ps
    tasks chosen by `ps_strategy` (round-robin by default), others to `worker_device`.

    With `cluster` (a ClusterSpec or its dict), the number of ps tasks is that of the
    ps job. Returns None (no placement: `tf.device(None)`) when there are no ps tasks.
    """
    if cluster is not None:
        from tensorflux._src.train.server_lib import ClusterSpec
        spec = (cluster if isinstance(cluster, ClusterSpec) else ClusterSpec(cluster)).as_dict()
        ps_job = pydev.parse(ps_device).job
        if ps_job not in spec or spec[ps_job] is None:
            return None
        ps_tasks = len(spec[ps_job])
    if ps_tasks == 0:
        return None
    if ps_ops is None:
        ps_ops = list(STANDARD_PS_OPS)
    if not merge_devices:
        logging.warning("DEPRECATION: It is recommended to set merge_devices=true in "
                        "replica_device_setter")
    if ps_strategy is None:
        ps_strategy = _RoundRobinStrategy(ps_tasks)
    if not callable(ps_strategy):
        raise TypeError("ps_strategy must be callable")
    return _ReplicaDeviceChooser(ps_tasks, ps_device, worker_device, merge_devices, ps_ops,
                                 ps_strategy).device_function


class GreedyLoadBalancingStrategy:
    """A `ps_strategy` putting each ps op on the least-loaded task so far (ties: the
    lowest index), where `load_fn(op)` is the op's load (e.g. `byte_size_load_fn`).
    Placement depends on the order variables are created."""

    def __init__(self, num_tasks, load_fn):
        self._num_tasks = num_tasks
        self._load_fn = load_fn
        self._ps_loads = np.zeros(num_tasks)

    def __call__(self, op):
        task = int(np.argmin(self._ps_loads))
        self._ps_loads[task] += self._load_fn(op)
        return task


def byte_size_load_fn(op):
    """Bytes of the single output of `op` (a variable's size)."""
    if len(op.outputs) != 1:
        raise ValueError(f"Op {op} must have a single output")
    output = op.outputs[0]
    shape = output.shape
    if not shape.is_fully_defined():
        shape = tensor_shape.as_shape(op.get_attr("shape"))
    shape.assert_is_fully_defined()
    return shape.num_elements() * output.dtype.base_dtype.size
