"""tf.fingerprint: farmhash64 of each batch row's bytes, as 8 little-endian uint8.

A host op on the pyfarmhash bindings of Google's FarmHash (`Fingerprint64`, the
platform-independent variant TF uses). Numeric rows are hashed as their raw bytes in
memory order (so reshapes and bitcasts keep the fingerprint); a row of one string is
its fingerprint, a row of several strings the fingerprint of their fingerprints' bytes.
"""

from __future__ import annotations

import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework.tensor_shape import TensorShape
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.op_helpers import (ANY, dims_str, kernel_error, with_rank,
                                            with_rank_at_least)
from tensorflux._src.ops.registry import OpDef, register
from tensorflux._src.ops.shape_fns import static_value

__all__ = ["fingerprint"]

_SIZE = 8  # bytes of a farmhash64 fingerprint


def _fingerprint64(buffer: bytes) -> bytes:
    import farmhash  # pyfarmhash
    return int(farmhash.fingerprint64(buffer)).to_bytes(_SIZE, "little")


def _fingerprint_shape(op):
    with_rank_at_least(op.inputs[0].shape, 1)
    with_rank(op.inputs[1].shape, 0)
    method = static_value(op.inputs[1])
    size = None
    if method is not None:
        method = method.item()
        method = method.decode() if isinstance(method, bytes) else str(method)
        if method != "farmhash64":
            raise ValueError(f"Unsupported method: {method}")
        size = _SIZE
    return TensorShape([op.inputs[0].shape[0], size])


def _fingerprint_kernel(data, method):
    method = np.asarray(method)
    if method.ndim != 0:
        raise kernel_error(f"`method` should be a scalar string: {dims_str(method.shape)}")
    name = method.item()
    name = name.decode() if isinstance(name, bytes) else str(name)
    if name != "farmhash64":
        raise kernel_error(f"Unsupported fingerprint method: {name}")
    data = np.asarray(data)
    if data.ndim < 1:
        raise kernel_error(f"`data` should have at least one dimension: "
                           f"{dims_str(data.shape)}")
    rows = data.reshape(data.shape[0], -1) if data.shape[0] else data.reshape(0, 0)
    out = []
    for row in rows:
        if data.dtype == object:  # strings
            parts = [_fingerprint64(bytes(s)) for s in row]
            out.append(parts[0] if len(parts) == 1 else _fingerprint64(b"".join(parts)))
        else:
            out.append(_fingerprint64(np.ascontiguousarray(row).tobytes()))
    return np.frombuffer(b"".join(out), np.uint8).reshape(len(out), _SIZE)


register(OpDef(
    "Fingerprint", inputs=("data: T", "method: string"), outputs=("fingerprint: uint8",),
    attrs={"T": ANY + (_dtypes.string,)}, shape=_fingerprint_shape,
    host=_fingerprint_kernel, not_differentiable=True))


def fingerprint(data, method="farmhash64", name=None):
    """[batch, 8] uint8 fingerprints of each data[i, ...] (farmhash64, little-endian)."""
    return apply_op("Fingerprint", name=name, data=data, method=method)
