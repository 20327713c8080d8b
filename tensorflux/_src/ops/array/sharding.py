"""`_ShardingConstraint`: how XLA's SPMD partitioner should lay a value out over the
device mesh of the strategy its op runs under (tensorflux's own op; TF 1.15 expressed this
with the XLA-only `XlaSharding` op and a serialized OpSharding, which tensorflux does not
read).

`mesh_axes` has one entry per dimension of the input: 0 splits that dimension over the
mesh's one axis (the strategy's replicas), -1 keeps it whole on every device. The value is
unchanged: outside a strategy (or for a dimension the device count does not divide) the
op is the identity, so a graph computes the same numbers with or without devices. Under
`MirroredStrategy`/`replicate`, the lowering is `jax.lax.with_sharding_constraint`, and
XLA inserts whatever collective moves the data into that layout (an all-to-all when a
batch-split value becomes split along another axis, as a mixture of experts' dispatch
does). Its gradient carries the same constraint.
"""

from __future__ import annotations

import jax
import numpy as np
from jax.sharding import NamedSharding, PartitionSpec

from tensorflux._src.compiler import effects
from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.registry import OpDef, register
from tensorflux._src.ops.shape_fns import unchanged


def _lower(x, mesh_axes):
    replicas = getattr(effects.current_op(), "_replicas", None)
    if replicas is None or isinstance(x, np.ndarray):  # one device, or a folded constant
        return x
    n = replicas.num_replicas
    spec = [replicas.AXIS if axis == 0 and size % n == 0 else None
            for axis, size in zip(mesh_axes, x.shape)]
    return jax.lax.with_sharding_constraint(x, NamedSharding(replicas.mesh,
                                                             PartitionSpec(*spec)))


def _check(op):
    rank = op.inputs[0].shape.ndims
    axes = list(op.get_attr("mesh_axes"))
    if any(a not in (-1, 0) for a in axes) or (rank is not None and len(axes) != rank):
        raise ValueError(f"mesh_axes must hold one entry, -1 or 0, per dimension of the "
                         f"input (rank {rank}). Received: mesh_axes={axes}")
    return unchanged(op)


register(OpDef("_ShardingConstraint", inputs=("input: T",), outputs=("output: T",),
               attrs={"T": _dtypes.ALL, "mesh_axes": []}, shape=_check, lower=_lower,
               grad=lambda op, dy: [sharding_constraint(dy, op.get_attr("mesh_axes"))]))


def sharding_constraint(x, mesh_axes, name=None):
    """`x`, laid out over the strategy's devices as `mesh_axes` says (module docstring)."""
    # Node names cannot start with "_" (TF's rule), so the default is not the op type.
    return apply_op("_ShardingConstraint", name=name or "ShardingConstraint", input=x,
                    mesh_axes=list(mesh_axes))
