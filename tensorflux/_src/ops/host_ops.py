"""Ops with data-dependent output shapes, run on the host with NumPy kernels.

XLA needs static shapes, so these are `host` records: the compiled part of a run
computes their inputs, then they (and whatever consumes them) run on the host.
"""

from __future__ import annotations

import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework.tensor_shape import TensorShape
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.registry import REQUIRED, OpDef, register

__all__ = ["where_indices"]

register(OpDef(
    "Where", inputs=("input: T",), outputs=("index: int64",),
    attrs={"T": _dtypes.REAL + (_dtypes.bool,)},
    shape=lambda op: TensorShape([None, op.inputs[0].shape.ndims]),
    host=lambda input: np.argwhere(input).astype(np.int64),  # row-major order, as TF
    not_differentiable=True,
))


def where_indices(condition, name=None):
    """Coordinates of the true (non-zero) elements of `condition`: shape [n, rank]."""
    return apply_op("Where", name=name, input=condition)


register(OpDef(
    "ReportUninitializedVariables", inputs=("is_initialized: bool",),
    outputs=("names: string",), attrs={"names": REQUIRED},
    shape=lambda op: TensorShape([None]),
    host=lambda is_initialized, names: np.array(
        [n.encode() for n, ok in zip(names, np.reshape(is_initialized, -1)) if not ok],
        dtype=object).reshape(-1),
    not_differentiable=True,
))
