"""Mapping TF device strings onto JAX devices, with soft placement."""

from __future__ import annotations

import functools

import sys

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec, SingleDeviceSharding

from tensorflux._src.framework import device as pydev
from tensorflux._src.framework import errors

_JAX_PLATFORM = {"CPU": "cpu", "GPU": "gpu", "TPU": "tpu"}


@functools.lru_cache(maxsize=None)
def jax_device(device_string: str):
    """The JAX device for a TF device string; the default device when none matches.

    TF1 with `allow_soft_placement` puts an op whose device does not exist on one that
    does; tensorflux always places softly, since a program written for `/gpu:0` should
    still run on a CPU-only machine.
    """
    default = jax.devices()[0]
    spec = pydev.parse(device_string)
    platform = _JAX_PLATFORM.get(spec.device_type or "")
    if platform is None:
        return default
    try:
        candidates = jax.devices(platform)
    except RuntimeError:  # backend not present on this machine
        return default
    index = spec.device_index or 0
    return candidates[index] if index < len(candidates) else default


def explicit_device(op):
    """The JAX device `op` was placed on with a device type (`/cpu:1`, `/gpu:0`), or None
    (no device, or only job/replica/task: those never pick a device in a local run)."""
    if not op.device or pydev.parse(op.device).device_type is None:
        return None
    return jax_device(op.device)


def device_for_ops(ops):
    """The device a compiled cluster runs on: that of its first op with a device."""
    for op in ops:
        if op.device:
            return jax_device(op.device)
    return jax.devices()[0]


def on_device(value, sharding):
    """`value` on `sharding`'s device: device buffers elsewhere are copied there (TF's
    Send/Recv between devices); host values are left for jit to place."""
    if isinstance(value, jax.Array) and value.sharding != sharding:
        return jax.device_put(value, sharding)
    return value


def jit_on(fn, device, compiler_options=None, donate_argnums=(), replicas=None,
           data_inputs=()):
    """`jax.jit(fn)` placed on `device` (no sharding overhead on the default device),
    or run as SPMD over `replicas` (see `Replicas.jit`; the leading arguments, one per
    tensor of `data_inputs`, are data that may be split along their first axis)."""
    kwargs = {"donate_argnums": donate_argnums} if donate_argnums else {}
    if compiler_options:
        kwargs["compiler_options"] = dict(compiler_options)
    if replicas is not None:
        return replicas.jit(fn, data_inputs, **kwargs)
    if device != jax.devices()[0]:
        sharding = SingleDeviceSharding(device)
        kwargs.update(in_shardings=sharding, out_shardings=sharding)
    return jax.jit(fn, **kwargs)


class Replicas:
    """Devices running one compiled step as synchronous data-parallel SPMD.

    A 1-D mesh with axis "replica". Data arguments (feeds, values from host steps) whose
    first dimension divides evenly are split along it; everything else (variables,
    random key rows, constants, other data) is replicated. XLA's SPMD partitioner then
    computes exactly what one device would on the whole batch, inserting all-reduces
    where a reduction crosses the batch (the mean loss, hence the gradients; batch-norm
    moments too, so those are over the global batch).
    """

    AXIS = "replica"

    def __init__(self, jax_devices):
        self.devices = list(jax_devices)
        self.mesh = Mesh(np.array(self.devices), (self.AXIS,))
        self.replicated = NamedSharding(self.mesh, PartitionSpec())
        self.split = NamedSharding(self.mesh, PartitionSpec(self.AXIS))

    @property
    def num_replicas(self):
        return len(self.devices)

    def data_sharding(self, value):
        shape = np.shape(value)
        if shape and shape[0] and shape[0] % len(self.devices) == 0:
            return self.split
        return self.replicated  # a scalar, or a batch that does not divide evenly

    def place(self, value, sharding):
        if isinstance(value, jax.Array) and value.sharding == sharding:
            return value
        return jax.device_put(value, sharding)

    def jit(self, fn, data_inputs, **kwargs):
        """`fn` is a cluster's traced function, returning (exports, written variables,
        effects): the written variables stay replicated (so a donated variable is updated
        in place on every device); XLA picks the layout of the other outputs.

        `fn`'s leading arguments are data, one per tensor of `data_inputs` (many-host
        replicas, tensorflux/distribute/multi_worker.py, tell by the tensors which are a
        worker's slice of the global batch)."""
        jitted = jax.jit(fn, out_shardings=(None, self.replicated, None), **kwargs)
        replicated, place = self.replicated, self.place
        data_args = len(data_inputs)

        def call(*args):
            placed = [place(a, self.data_sharding(a)) for a in args[:data_args]]
            placed += [place(a, replicated) for a in args[data_args:]]
            return jitted(*placed)

        return call


def replicas_for_ops(ops):
    """The `Replicas` a cluster runs on: those its ops were built for (see
    `tensorflux.distribute`), or None for a single-device cluster."""
    found = {op._replicas for op in ops if getattr(op, "_replicas", None) is not None}
    if len(found) > 1:
        names = sorted(op.name for op in ops if getattr(op, "_replicas", None) is not None)
        raise ValueError(f"One run mixes ops of {len(found)} different distribution "
                         f"strategies (ops {names[:5]}...); run each strategy's ops "
                         f"separately.")
    return found.pop() if found else None


def check_placement(ops):
    """`allow_soft_placement=False`: every op's device type and index must exist here.

    Job, replica and task are not checked: a local run executes ops of any job (a graph
    built with `replica_device_setter` runs in one process)."""
    available = None
    for op in ops:
        spec = pydev.parse(op.device) if op.device else None
        if spec is None or spec.device_type is None:
            continue
        platform = _JAX_PLATFORM.get(spec.device_type)
        try:
            count = len(jax.devices(platform)) if platform else 0
        except RuntimeError:  # backend not present on this machine
            count = 0
        if count > (spec.device_index or 0):
            continue
        available = available or ", ".join(d.name for d in list_devices())
        raise errors.InvalidArgumentError(
            None, op, f"Cannot assign a device for operation {op.name}: Operation was "
            f"explicitly assigned to {op.device} but available devices are [ {available} ]. "
            f"Make sure the device specification refers to a valid device.")


def list_devices():
    """`Session.list_devices()` entries: name, device_type, memory_limit_bytes."""
    out = []
    for d in jax.devices():
        kind = d.platform.upper()
        out.append(DeviceAttributes(f"/job:localhost/replica:0/task:0/device:{kind}:{d.id}",
                                    kind, 0))
    return out


class DeviceAttributes:
    def __init__(self, name, device_type, memory_limit_bytes):
        self.name = name
        self.device_type = device_type
        self.memory_limit_bytes = memory_limit_bytes

    def __repr__(self):
        return f"_DeviceAttributes({self.name}, {self.device_type}, {self.memory_limit_bytes})"


# -- logging where ops run ----------------------------------------------------------------
_log_placement = [False]  # tf.debugging.set_log_device_placement


def set_log_device_placement(enabled):
    """Every Session logs where the ops of each newly planned run are placed, as
    `ConfigProto(log_device_placement=True)` does for one Session."""
    _log_placement[0] = bool(enabled)


def get_log_device_placement() -> bool:
    return _log_placement[0]


def log_placement(placements, stream=None):
    """Writes TF's placement lines, `name: (Type): /job:localhost/.../device:CPU:0`."""
    stream = stream or sys.stderr
    for name, op_type, device in placements:
        stream.write(f"{name}: ({op_type}): {device}\n")
    stream.flush()
