"""Matrix decompositions (`tf.qr` / `tf.linalg.qr`)."""

from __future__ import annotations

import jax.numpy as jnp

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import tensor_shape
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.registry import OpDef, register

__all__ = ["qr"]


def _qr_shapes(op):
    shape = op.inputs[0].shape.with_rank_at_least(2)
    if shape.ndims is None:
        return [tensor_shape.unknown_shape(), tensor_shape.unknown_shape()]
    *batch, m, n = shape.as_list()
    k = None if m is None or n is None else min(m, n)
    full = op.get_attr("full_matrices")
    return [tensor_shape.TensorShape(batch + [m, m if full else k]),
            tensor_shape.TensorShape(batch + [m if full else k, n])]


register(OpDef(
    "Qr", inputs=("input: T",), outputs=("q: T", "r: T"),
    attrs={"T": (_dtypes.float32, _dtypes.float64) + _dtypes.COMPLEX, "full_matrices": False},
    shape=_qr_shapes,
    lower=lambda input, full_matrices: jnp.linalg.qr(
        input, mode="complete" if full_matrices else "reduced"),
    not_differentiable=True,  # TF1 has no QR gradient either
))


def qr(input, full_matrices=False, name=None):  # noqa: A002 - TF's argument name
    """(q, r) with input = q @ r, q orthonormal columns, r upper triangular."""
    return tuple(apply_op("Qr", name=name, input=input, full_matrices=full_matrices))
