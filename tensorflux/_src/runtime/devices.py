"""Mapping TF device strings onto JAX devices, with soft placement."""

from __future__ import annotations

import functools

import jax
from jax.sharding import SingleDeviceSharding

from tensorflux._src.framework import device as pydev

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


def device_for_ops(ops):
    """The device a compiled cluster runs on: that of its first op with a device."""
    for op in ops:
        if op.device:
            return jax_device(op.device)
    return jax.devices()[0]


def jit_on(fn, device, compiler_options=None, donate_argnums=()):
    """`jax.jit(fn)` placed on `device` (no sharding overhead on the default device)."""
    kwargs = {"donate_argnums": donate_argnums} if donate_argnums else {}
    if compiler_options:
        kwargs["compiler_options"] = dict(compiler_options)
    if device != jax.devices()[0]:
        sharding = SingleDeviceSharding(device)
        kwargs.update(in_shardings=sharding, out_shardings=sharding)
    return jax.jit(fn, **kwargs)


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
