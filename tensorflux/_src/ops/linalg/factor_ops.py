"""Factorizations and solves: Cholesky, MatrixInverse, MatrixDeterminant,
LogMatrixDeterminant, MatrixSolve, MatrixTriangularSolve, Lu, MatrixSolveLs.

Bad input at run time follows TF 1.15's CPU kernels (Eigen):
- MatrixInverse / Lu: an exactly zero pivot of the partially pivoted LU raises
  InvalidArgumentError "Input is not invertible."; MatrixSolve and
  MatrixTriangularSolve (a zero on the diagonal) raise "Input matrix is not invertible.".
  Nearly singular matrices give large values, no error.
- Cholesky of a matrix that is not positive definite raises "Cholesky decomposition was
  not successful. The input might not be valid." Only the lower triangle is read.
- MatrixDeterminant of a singular matrix is 0; LogMatrixDeterminant gives sign 0 and
  log_abs_determinant -inf (no error).
Inside a compiled cluster these go through `compiler/effects.py`, so the run fails after
the executable ran and no variable it would have written changes.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from tensorflux._src.compiler import effects
from tensorflux._src.framework import dtypes as _d
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.framework.tensor_shape import TensorShape, unknown_shape
from tensorflux._src.ops.array.array_ops import expand_dims, matrix_transpose, shape
from tensorflux._src.ops.linalg import _common as c
from tensorflux._src.ops.linalg.diag_ops import matrix_band_part, matrix_diag_part, matrix_set_diag
from tensorflux._src.ops.linalg.linalg_ops import eye, matmul
from tensorflux._src.ops.math import math_ops
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.op_helpers import kernel_error
from tensorflux._src.ops.registry import OpDef, register

__all__ = [
    "cholesky", "cholesky_solve", "log_matrix_determinant", "lu", "matrix_determinant",
    "matrix_inverse", "matrix_solve", "matrix_solve_ls", "matrix_triangular_solve",
]

_NOT_INVERTIBLE = "Input is not invertible."
_MATRIX_NOT_INVERTIBLE = "Input matrix is not invertible."
_CHOLESKY_FAILED = "Cholesky decomposition was not successful. The input might not be valid."


# -- LU helpers ----------------------------------------------------------------------------
def _lu(a):
    """(packed L+U-I, row permutation p with a[p] = L @ U); LAPACK's partial pivoting, the
    same rows as Eigen's PartialPivLU except for exact ties."""
    lu, _, perm = jax.lax.linalg.lu(a)
    return lu, perm


def _min_abs_pivot(lu):
    if lu.shape[-1] == 0:
        return jnp.ones((), c.real_dtype(lu.dtype))
    return jnp.min(jnp.abs(jnp.diagonal(lu, axis1=-2, axis2=-1)))


def _permute_rows(b, perm):
    return jnp.take_along_axis(b, perm[..., :, None], axis=-2)


def _lu_solve(lu, perm, b):
    """x with (L U) x = b[perm], i.e. a x = b."""
    y = jax.lax.linalg.triangular_solve(lu, _permute_rows(b, perm), left_side=True,
                                        lower=True, unit_diagonal=True)
    return jax.lax.linalg.triangular_solve(lu, y, left_side=True, lower=False)


# -- Cholesky ------------------------------------------------------------------------------
@c.half_via_float32
def _cholesky_lower(input):  # noqa: A002 - TF's argument name
    c.check_matrices(input)
    chol = jax.lax.linalg.cholesky(input, symmetrize_input=False)
    # Eigen's LLT stops at the first pivot that is not positive (XLA fills NaN); NaNs
    # that come from the input itself pass through, as in TF.
    effects.check(jnp.all(jnp.isfinite(chol)) | ~jnp.all(jnp.isfinite(input)),
                  _CHOLESKY_FAILED)
    return jnp.tril(chol)


def _cholesky_grad(op, grad):
    """TF's: l^{-H} P(l^H grad) l^{-1}, symmetrized, with P taking the lower triangle and
    halving the diagonal."""
    chol = op.outputs[0]
    s = shape(chol)
    l_inverse = matrix_triangular_solve(chol, eye(s[-1], batch_shape=s[:-2],
                                                  dtype=chol.dtype))
    middle = matmul(chol, grad, adjoint_a=True)
    middle = matrix_set_diag(middle, 0.5 * matrix_diag_part(middle))
    middle = matrix_band_part(middle, -1, 0)
    grad_a = matmul(matmul(l_inverse, middle, adjoint_a=True), l_inverse)
    grad_a += matrix_transpose(grad_a, conjugate=True)
    return [grad_a * 0.5]


register(OpDef(
    "Cholesky", inputs=("input: T",), outputs=("output: T",), attrs={"T": c.LINALG_TYPES},
    shape=c.batch_square_unchanged, lower=_cholesky_lower, grad=_cholesky_grad,
))


# -- MatrixInverse -------------------------------------------------------------------------
@c.half_via_float32
def _matrix_inverse_lower(input, adjoint):  # noqa: A002
    c.check_matrices(input)
    a = c.adjoint(input) if adjoint else input
    lu, perm = _lu(a)
    effects.check(_min_abs_pivot(lu) > 0, _NOT_INVERTIBLE)
    identity = jnp.broadcast_to(jnp.eye(a.shape[-1], dtype=a.dtype), a.shape)
    return _lu_solve(lu, perm, identity)


def _matrix_inverse_grad(op, grad):
    """TF's -Y^H G Y^H for Y = inv(A). TF uses it for adjoint=True as well, which gives
    the adjoint of the true gradient there; here adjoint=True gets -Y G^H Y."""
    ainv = op.outputs[0]
    if op.get_attr("adjoint"):
        return [-matmul(ainv, matmul(grad, ainv, adjoint_a=True))]
    return [-matmul(ainv, matmul(grad, ainv, adjoint_b=True), adjoint_a=True)]


register(OpDef(
    "MatrixInverse", inputs=("input: T",), outputs=("output: T",),
    attrs={"T": c.LINALG_TYPES, "adjoint": False},
    shape=c.batch_square_unchanged, lower=_matrix_inverse_lower, grad=_matrix_inverse_grad,
))


# -- determinants ----------------------------------------------------------------------------
def _slogdet(a):
    """TF's SLogDet: from the pivoted LU; a singular matrix gives sign 0 and -inf."""
    c.check_matrices(a)
    if a.shape[-1] == 0:
        batch = a.shape[:-2]
        return jnp.ones(batch, a.dtype), jnp.zeros(batch, c.real_dtype(a.dtype))
    lu, perm = _lu(a)
    diag = jnp.diagonal(lu, axis1=-2, axis2=-1)
    abs_diag = jnp.abs(diag)
    log_abs = jnp.sum(jnp.log(abs_diag), axis=-1)
    sign = _permutation_sign(perm) * jnp.prod(diag / abs_diag.astype(a.dtype), axis=-1)
    finite = jnp.isfinite(log_abs)
    sign = jnp.where(finite, sign, jnp.zeros((), a.dtype))
    log_abs = jnp.where(finite, log_abs, jnp.where(log_abs > 0, jnp.inf, -jnp.inf))
    return sign, log_abs


def _permutation_sign(perm):
    """(-1)^(number of inversions) of each permutation in the batch."""
    n = perm.shape[-1]
    i, j = np.triu_indices(n, 1)
    inversions = jnp.sum(perm[..., i] > perm[..., j], axis=-1)
    return jnp.where(inversions % 2 == 0, 1, -1)


@c.half_via_float32
def _determinant_lower(input):  # noqa: A002
    sign, log_abs = _slogdet(input)
    return sign * jnp.exp(log_abs).astype(input.dtype)


@c.half_via_float32
def _log_determinant_lower(input):  # noqa: A002
    sign, log_abs = _slogdet(input)
    return sign, log_abs.astype(input.dtype)


def _determinant_grad(op, grad):
    a, det = op.inputs[0], op.outputs[0]
    multipliers = expand_dims(expand_dims(grad * det, -1), -1)
    return [multipliers * matrix_inverse(a, adjoint=True)]


def _log_determinant_grad(op, _, grad_log_abs):
    multipliers = expand_dims(expand_dims(grad_log_abs, -1), -1)
    return [multipliers * matrix_inverse(op.inputs[0], adjoint=True)]


def _batch_scalar_shape(op):
    s = c.batch_square(op.inputs[0].shape)
    return unknown_shape() if s.ndims is None else s[:-2]


register(OpDef(
    "MatrixDeterminant", inputs=("input: T",), outputs=("output: T",),
    attrs={"T": c.LINALG_TYPES}, shape=_batch_scalar_shape, lower=_determinant_lower,
    grad=_determinant_grad,
))
register(OpDef(
    "LogMatrixDeterminant", inputs=("input: T",),
    outputs=("sign: T", "log_abs_determinant: T"), attrs={"T": c.LINALG_TYPES},
    shape=lambda op: [_batch_scalar_shape(op)] * 2, lower=_log_determinant_lower,
    grad=_log_determinant_grad,
))


# -- MatrixSolve ---------------------------------------------------------------------------
@c.half_via_float32
def _matrix_solve_lower(matrix, rhs, adjoint):
    c.check_solver(matrix, rhs)
    a = c.adjoint(matrix) if adjoint else matrix
    lu, perm = _lu(a)
    effects.check(_min_abs_pivot(lu) > 0, _MATRIX_NOT_INVERTIBLE)
    return _lu_solve(lu, perm, rhs)


def _matrix_solve_grad(op, grad):
    a, x = op.inputs[0], op.outputs[0]
    adjoint_a = op.get_attr("adjoint")
    grad_b = matrix_solve(a, grad, adjoint=not adjoint_a)
    if adjoint_a:
        grad_a = -matmul(x, grad_b, adjoint_b=True)
    else:
        grad_a = -matmul(grad_b, x, adjoint_b=True)
    return [grad_a, grad_b]


register(OpDef(
    "MatrixSolve", inputs=("matrix: T", "rhs: T"), outputs=("output: T",),
    attrs={"T": c.LINALG_TYPES, "adjoint": False},
    shape=lambda op: c.batch_solve_shape(op.inputs[0].shape, op.inputs[1].shape, True),
    lower=_matrix_solve_lower, grad=_matrix_solve_grad,
))


# -- MatrixTriangularSolve -------------------------------------------------------------------
@c.half_via_float32
def _triangular_solve_lower(matrix, rhs, lower, adjoint):
    c.check_solver(matrix, rhs)
    if matrix.shape[-1] == 0 or rhs.shape[-1] == 0:
        return jnp.zeros(rhs.shape, rhs.dtype)
    diag = jnp.abs(jnp.diagonal(matrix, axis1=-2, axis2=-1))
    effects.check(jnp.min(diag) > 0, _MATRIX_NOT_INVERTIBLE)
    return jax.lax.linalg.triangular_solve(matrix, rhs, left_side=True, lower=lower,
                                           transpose_a=adjoint, conjugate_a=adjoint)


def _triangular_solve_grad(op, grad):
    a, x = op.inputs[0], op.outputs[0]
    adjoint_a, lower_a = op.get_attr("adjoint"), op.get_attr("lower")
    grad_b = matrix_triangular_solve(a, grad, lower=lower_a, adjoint=not adjoint_a)
    if adjoint_a:
        grad_a = -matmul(x, grad_b, adjoint_b=True)
    else:
        grad_a = -matmul(grad_b, x, adjoint_b=True)
    grad_a = matrix_band_part(grad_a, -1, 0) if lower_a else matrix_band_part(grad_a, 0, -1)
    return [grad_a, grad_b]


register(OpDef(
    "MatrixTriangularSolve", inputs=("matrix: T", "rhs: T"), outputs=("output: T",),
    attrs={"T": c.LINALG_TYPES, "lower": True, "adjoint": False},
    shape=lambda op: c.batch_solve_shape(op.inputs[0].shape, op.inputs[1].shape, True),
    lower=_triangular_solve_lower, grad=_triangular_solve_grad,
))


# -- Lu ----------------------------------------------------------------------------------------
def _lu_shapes(op):
    s = c.batch_square(op.inputs[0].shape)
    if s.ndims is None:
        return [unknown_shape(), unknown_shape()]
    return [s, s[:-1]]


@c.half_via_float32
def _lu_lower_fn(input):  # noqa: A002
    c.check_matrices(input)
    lu, perm = _lu(input)
    effects.check(_min_abs_pivot(lu) > 0, _NOT_INVERTIBLE)
    return lu, perm


def _lu_lower(input, output_idx_type):  # noqa: A002
    lu, perm = _lu_lower_fn(input)
    return lu, perm.astype(output_idx_type.as_numpy_dtype)


register(OpDef(
    "Lu", inputs=("input: T",), outputs=("lu: T", "p: output_idx_type"),
    attrs={"T": c.LINALG_TYPES, "output_idx_type": _d.INDEX},
    type_defaults={"output_idx_type": _d.int32},
    shape=_lu_shapes, lower=_lu_lower,
    # TF 1.15 registers no gradient for Lu: tf.gradients raises LookupError.
))


# -- MatrixSolveLs -------------------------------------------------------------------------
_RANK_DEFICIENT = ("Input matrix was rank deficient or ill-conditioned. Try setting "
                   "fast=False or provide a larger l2_regularizer > 0.")


@c.half_via_float32
def _solve_ls_lower(matrix, rhs, l2_regularizer, fast):
    c.check_matrices(matrix, rhs, square=(False, False))
    if matrix.shape[-2] != rhs.shape[-2]:
        raise kernel_error("Input matrix and right-hand side must have the same number of "
                           "rows.")
    m, n = matrix.shape[-2:]
    if not fast:
        # TF's complete orthogonal decomposition: the minimum-norm least-squares
        # solution, l2_regularizer ignored (as documented).
        return jnp.linalg.pinv(matrix) @ rhs
    reg = jnp.asarray(l2_regularizer).astype(matrix.dtype)
    mh = c.adjoint(matrix)
    if m >= n:
        gram = mh @ matrix + reg * jnp.eye(n, dtype=matrix.dtype)
        chol = jax.lax.linalg.cholesky(gram, symmetrize_input=False)
        effects.check(jnp.all(jnp.isfinite(chol)), _RANK_DEFICIENT)
        return jax.scipy.linalg.cho_solve((chol, True), mh @ rhs)
    gram = matrix @ mh + reg * jnp.eye(m, dtype=matrix.dtype)
    chol = jax.lax.linalg.cholesky(gram, symmetrize_input=False)
    effects.check(jnp.all(jnp.isfinite(chol)), _RANK_DEFICIENT)
    return mh @ jax.scipy.linalg.cho_solve((chol, True), rhs)


def regularized_gramian_cholesky(matrix, l2_regularizer, first_kind):
    """TF's _RegularizedGramianCholesky: chol(A^H A + l2 I) (first kind) or
    chol(A A^H + l2 I)."""
    gramian = matmul(matrix, matrix, adjoint_a=first_kind, adjoint_b=not first_kind)
    if not (isinstance(l2_regularizer, (int, float)) and l2_regularizer == 0):
        s = shape(matrix)
        small = s[-1] if first_kind else s[-2]
        identity = eye(small, batch_shape=s[:-2], dtype=matrix.dtype)
        gramian += math_ops.cast(l2_regularizer, matrix.dtype) * identity
    return cholesky(gramian)


def _solve_ls_grad(op, grad):
    """TF's: the gradients of the regularized normal equations of the first kind
    (m >= n) or the second kind (m < n)."""
    if op.get_attr("fast") is False:
        raise ValueError("Gradient not defined for fast=False")
    a, b, x = op.inputs[0], op.inputs[1], op.outputs[0]
    reg = math_ops.cast(op.inputs[2], a.dtype.base_dtype)
    matrix_shape = a.shape[-2:] if a.shape.ndims is not None else TensorShape(None)
    if not matrix_shape.is_fully_defined():
        raise NotImplementedError("MatrixSolveLs gradients need the static matrix shape.")
    if matrix_shape[0].value >= matrix_shape[1].value:
        chol = regularized_gramian_cholesky(a, reg, first_kind=True)
        z = cholesky_solve(chol, grad)
        xzt = matmul(x, z, adjoint_b=True)
        zx_sym = xzt + matrix_transpose(xzt)
        grad_a = -matmul(a, zx_sym) + matmul(b, z, adjoint_b=True)
        return [grad_a, matmul(a, z), None]
    chol = regularized_gramian_cholesky(a, reg, first_kind=False)
    grad_b = cholesky_solve(chol, matmul(a, grad))
    tmp = cholesky_solve(chol, b)
    a1 = -matmul(grad_b, matmul(tmp, a, adjoint_a=True))
    a2 = matmul(tmp, grad - matmul(a, grad_b, adjoint_a=True), adjoint_b=True)
    return [a1 + a2, grad_b, None]


def _solve_ls_shape(op):
    if op.inputs[2].shape.ndims not in (None, 0):
        raise ValueError(f"Shape must be rank 0 but is rank {op.inputs[2].shape.ndims}")
    return c.batch_solve_shape(op.inputs[0].shape, op.inputs[1].shape, False)


register(OpDef(
    "MatrixSolveLs", inputs=("matrix: T", "rhs: T", "l2_regularizer: float64"),
    outputs=("output: T",), attrs={"T": c.LINALG_TYPES, "fast": True},
    shape=_solve_ls_shape, lower=_solve_ls_lower, grad=_solve_ls_grad,
))


# -- public wrappers ---------------------------------------------------------------------------
def cholesky(input, name=None):  # noqa: A002
    """The lower-triangular L with input = L L^H, for each matrix of a batch of Hermitian
    positive definite matrices; only the lower triangle of `input` is read."""
    return apply_op("Cholesky", name=name, input=input)


def matrix_inverse(input, adjoint=False, name=None):  # noqa: A002
    """The inverse of each square matrix (of its adjoint when `adjoint`), by pivoted LU."""
    return apply_op("MatrixInverse", name=name, input=input, adjoint=adjoint)


def matrix_determinant(input, name=None):  # noqa: A002
    """The determinant of each square matrix: shape [..., M, M] -> [...]."""
    return apply_op("MatrixDeterminant", name=name, input=input)


def log_matrix_determinant(input, name=None):  # noqa: A002
    """(sign, log |det|) of each square matrix; stable where det over- or underflows."""
    return tuple(apply_op("LogMatrixDeterminant", name=name, input=input))


def matrix_solve(matrix, rhs, adjoint=False, name=None):
    """x with matrix @ x = rhs (adjoint(matrix) @ x = rhs when `adjoint`)."""
    return apply_op("MatrixSolve", name=name, matrix=matrix, rhs=rhs, adjoint=adjoint)


def matrix_triangular_solve(matrix, rhs, lower=True, adjoint=False, name=None):
    """x with matrix @ x = rhs, reading only the lower (`lower`) or upper triangle."""
    return apply_op("MatrixTriangularSolve", name=name, matrix=matrix, rhs=rhs, lower=lower,
                    adjoint=adjoint)


def lu(input, output_idx_type=_d.int32, name=None):  # noqa: A002
    """(lu, p): input[..., p, :] = L @ U with L unit lower and U upper, packed as
    lu = L + U - I."""
    return tuple(apply_op("Lu", name=name, input=input, output_idx_type=output_idx_type))


def cholesky_solve(chol, rhs, name=None):
    """x with A x = rhs, given chol = cholesky(A): two triangular solves."""
    with _graph.name_scope(name, "cholesky_solve", [chol, rhs]):
        y = matrix_triangular_solve(chol, rhs, adjoint=False, lower=True)
        return matrix_triangular_solve(chol, y, adjoint=True, lower=True)


def matrix_solve_ls(matrix, rhs, l2_regularizer=0.0, fast=True, name=None):
    """Least squares: x minimizing ||matrix @ x - rhs||^2 + l2_regularizer ||x||^2.

    fast=True solves the regularized normal equations by Cholesky, composed of graph ops
    as TF 1.15 does for matrices of known size (first kind when M >= N, second kind
    otherwise); fast=False is the MatrixSolveLs op's minimum-norm solution, which works for
    rank-deficient matrices and ignores l2_regularizer.
    """
    matrix = convert_to_tensor(matrix, name="matrix")
    if matrix.dtype.base_dtype == _d.complex128 and not (
            isinstance(l2_regularizer, (int, float)) and l2_regularizer == 0):
        raise NotImplementedError("matrix_solve_ls is currently disabled for complex128 and "
                                  "l2_regularizer != 0 due to poor accuracy.")
    if not fast:
        return apply_op("MatrixSolveLs", name=name, matrix=matrix, rhs=rhs,
                        l2_regularizer=l2_regularizer, fast=False)
    with _graph.name_scope(name, "matrix_solve_ls", [matrix, rhs, l2_regularizer]):
        rhs = convert_to_tensor(rhs, dtype=matrix.dtype.base_dtype, name="rhs")
        matrix_shape = matrix.shape[-2:] if matrix.shape.ndims is not None else None
        if matrix_shape is None or not matrix_shape.is_fully_defined():
            # The kind depends on the run-time shape; the op decides when it runs.
            return apply_op("MatrixSolveLs", matrix=matrix, rhs=rhs,
                            l2_regularizer=l2_regularizer, fast=True)
        if matrix_shape[0].value >= matrix_shape[1].value:
            chol = regularized_gramian_cholesky(matrix, l2_regularizer, first_kind=True)
            return cholesky_solve(chol, matmul(matrix, rhs, adjoint_a=True))
        chol = regularized_gramian_cholesky(matrix, l2_regularizer, first_kind=False)
        return matmul(matrix, cholesky_solve(chol, rhs), adjoint_a=True)
