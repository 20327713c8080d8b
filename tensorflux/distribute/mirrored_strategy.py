"""Synchronous data parallelism on one host: one compiled step, SPMD over a device mesh.

    strategy = tf.distribute.MirroredStrategy(num_replicas=4)   # or devices=[...]
    with strategy.scope():
        x = tf.placeholder(tf.float32, [None, 784])
        ...
        train_op = tf.train.MomentumOptimizer(0.1, 0.9).minimize(loss)
    sess.run(train_op, {x: global_batch, y: labels})   # each replica gets 1/N of it

or, for a graph built without the scope: `tf.distribute.replicate(train_op, 4)`.

The user writes the step for the *global* batch, as for one device. The ops built in
the scope (or needed by the fetches given to `replicate`) are marked with the
strategy's `Replicas` (runtime/devices.py); a compiled cluster containing marked ops
is jitted over the mesh: feeds and other data inputs are split along their first
dimension (when it divides evenly by the number of replicas; otherwise that input is
replicated), variables are replicated, and XLA's SPMD partitioner inserts the
all-reduces (the gradient of a mean loss over a split batch is an all-reduce-mean of
per-replica gradients). So N replicas compute what one device computes on the whole
batch, up to float rounding in the order of the sums.

Batch normalization: moments over the batch axis are computed over the *global*
batch (XLA all-reduces them), i.e. synchronized batch norm, unlike TF's
MirroredStrategy, whose replicas each normalize by their own slice's statistics.
"""

from __future__ import annotations

import contextlib

import jax

from tensorflux._src.framework import device as pydev
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.operation import Operation
from tensorflux._src.runtime import devices as _devices


class MirroredStrategy:
    """`MirroredStrategy(devices=None, cross_device_ops=None, num_replicas=None)`.

    `devices`: TF device strings ("/gpu:0", "/cpu:1", "/device:GPU:3"), which must
    exist; `num_replicas`: the first N devices of the default backend; neither: all of
    them. `cross_device_ops` is accepted for TF's signature: XLA picks the all-reduce.
    """

    def __init__(self, devices=None, cross_device_ops=None, num_replicas=None):
        del cross_device_ops  # XLA chooses how to all-reduce
        self._replicas = _devices.Replicas(_resolve_devices(devices, num_replicas))

    @property
    def num_replicas_in_sync(self):
        return self._replicas.num_replicas

    @property
    def devices(self):
        """The replicas' devices, as TF names them."""
        return tuple(f"/job:localhost/replica:0/task:0/device:{d.platform.upper()}:{d.id}"
                     for d in self._replicas.devices)

    @contextlib.contextmanager
    def scope(self):
        """Ops created inside run replicated (see the module docstring)."""
        graph = _graph.get_default_graph()
        start = len(graph.get_operations())
        try:
            yield self
        finally:
            self._mark(graph.get_operations()[start:])

    def replicate(self, fetches):
        """Marks every op `fetches` (tensors, ops, variables, nested lists) depends on
        to run replicated. Call before a Session first runs them. Returns `fetches`."""
        pending = [_as_op(f) for f in _flatten(fetches)]
        seen = set()
        while pending:
            op = pending.pop()
            if op in seen:
                continue
            seen.add(op)
            pending.extend(t.op for t in op.inputs)
            pending.extend(op.control_inputs)
        self._mark(seen)
        return fetches

    def _mark(self, ops):
        for op in ops:
            current = getattr(op, "_replicas", None)
            if current is not None and current is not self._replicas:
                raise ValueError(f"Op {op.name!r} already runs under another distribution "
                                 f"strategy; one op can belong to one strategy only.")
            op._replicas = self._replicas

    def __repr__(self):
        return f"MirroredStrategy(devices={list(self.devices)})"


def replicate(fetches, num_replicas=None, devices=None):
    """Runs what `fetches` need replicated over `num_replicas` (or `devices`); returns
    the `MirroredStrategy` used. See the module docstring."""
    strategy = MirroredStrategy(devices=devices, num_replicas=num_replicas)
    strategy.replicate(fetches)
    return strategy


def _resolve_devices(devices, num_replicas):
    available = jax.devices()
    if devices is not None:
        if num_replicas is not None and num_replicas != len(devices):
            raise ValueError(f"num_replicas={num_replicas} does not match the "
                             f"{len(devices)} devices given: {list(devices)}")
        found = [_existing_device(d) for d in devices]
        if len(set(found)) != len(found):
            raise ValueError(f"No duplicates allowed in `devices` argument: {list(devices)}")
        return found
    if num_replicas is None:
        return available
    if not 1 <= num_replicas <= len(available):
        raise ValueError(
            f"num_replicas={num_replicas}, but this process has {len(available)} "
            f"{available[0].platform.upper()} device(s). On a CPU machine, set "
            f"XLA_FLAGS=--xla_force_host_platform_device_count=N before JAX starts to "
            f"get N devices.")
    return available[:num_replicas]


def _existing_device(name):
    spec = pydev.parse(name)
    platform = {"CPU": "cpu", "GPU": "gpu", "TPU": "tpu"}.get(spec.device_type or "")
    try:
        candidates = jax.devices(platform) if platform else []
    except RuntimeError:
        candidates = []
    index = spec.device_index or 0
    if index >= len(candidates):
        raise ValueError(f"Device {name!r} does not exist here; the devices are "
                         f"{[d.name for d in _devices.list_devices()]}.")
    return candidates[index]


def _flatten(fetches):
    if isinstance(fetches, (list, tuple)):
        return [x for f in fetches for x in _flatten(f)]
    if isinstance(fetches, dict):
        return [x for f in fetches.values() for x in _flatten(f)]
    return [fetches]


def _as_op(fetch):
    if isinstance(fetch, Operation):
        return fetch
    op = getattr(fetch, "op", None)  # a Tensor or a Variable
    if isinstance(op, Operation):
        return op
    raise TypeError(f"Cannot replicate {fetch!r}: expected a tf.Tensor, tf.Operation or "
                    f"tf.Variable (or a nested list/tuple/dict of them).")
