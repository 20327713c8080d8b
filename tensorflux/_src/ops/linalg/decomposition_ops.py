"""Matrix decompositions (`tf.qr` / `tf.linalg.qr`)."""

from __future__ import annotations

import jax.numpy as jnp

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import tensor_shape
from tensorflux._src.ops.array.array_ops import concat, matrix_transpose
from tensorflux._src.ops.linalg.linalg_ops import matmul
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


def _qr_grad(op, dq, dr):
    """TF's QR gradient (real matrices of known shape; full_matrices only when square or
    wide). The triangular solves and band parts are looked up by op type, since their
    records live in the linalg family (ops/linalg), which this module may not import."""

    q, r = op.outputs
    if q.dtype.is_complex:
        raise NotImplementedError(f"QrGrad not implemented for dtype: {q.dtype!r}")
    if r.shape.ndims is None or None in r.shape.as_list()[-2:] or \
            q.shape.dims[-2].value is None:
        raise NotImplementedError("QrGrad not implemented with dynamic shapes.")
    if r.shape.dims[-2].value > r.shape.dims[-1].value and \
            q.shape.dims[-2].value == q.shape.dims[-1].value:
        raise NotImplementedError("QrGrad not implemented when nrows > ncols and "
                                  "full_matrices is true.")

    def adjoint(x):
        return matrix_transpose(x, conjugate=True)

    def solve_right(x, upper):  # x @ inv(upper)^H
        return adjoint(apply_op("MatrixTriangularSolve", matrix=upper, rhs=adjoint(x),
                                lower=False, adjoint=False))

    def square_or_deep(q, r, dq, dr):
        qdq = matmul(q, dq, adjoint_a=True)
        rdr = matmul(r, dr, adjoint_b=True)
        tril = apply_op("MatrixBandPart", input=qdq - adjoint(qdq) + rdr - adjoint(rdr),
                        num_lower=-1, num_upper=0)
        return matmul(q, dr + solve_right(tril, r)) + solve_right(dq - matmul(q, qdq), r)

    num_rows, num_cols = q.shape.dims[-2].value, r.shape.dims[-1].value
    if num_rows >= num_cols:
        return [square_or_deep(q, r, dq, dr)]
    # Wide: a = [x, y], r = [u, v]; reduce to the square case.
    y = op.inputs[0][..., :, num_rows:]
    u = r[..., :, :num_rows]
    dv, du = dr[..., :, num_rows:], dr[..., :, :num_rows]
    dy = matmul(q, dv)
    dx = square_or_deep(q, u, dq + matmul(y, dv, adjoint_b=True), du)
    return [concat([dx, dy], -1)]


register(OpDef(
    "Qr", inputs=("input: T",), outputs=("q: T", "r: T"),
    attrs={"T": (_dtypes.float32, _dtypes.float64) + _dtypes.COMPLEX, "full_matrices": False},
    shape=_qr_shapes,
    lower=lambda input, full_matrices: jnp.linalg.qr(
        input, mode="complete" if full_matrices else "reduced"),
    grad=_qr_grad,
))


def qr(input, full_matrices=False, name=None):  # noqa: A002 - TF's argument name
    """(q, r) with input = q @ r, q orthonormal columns, r upper triangular."""
    return tuple(apply_op("Qr", name=name, input=input, full_matrices=full_matrices))
