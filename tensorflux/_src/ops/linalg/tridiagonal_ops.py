"""Tridiagonal systems: TridiagonalSolve, TridiagonalMatMul, and tf.linalg's
`tridiagonal_solve`, `tridiagonal_matmul` (formats 'compact', 'sequence', 'matrix') and
`eigh_tridiagonal`.

TridiagonalSolve with partial pivoting is Gaussian elimination with row exchanges; on a
tridiagonal matrix that is the dense pivoted LU, which XLA has (the pivots are the same;
the cost is O(M^3) rather than TF's O(M)). Without pivoting it is XLA's Thomas
algorithm. A zero pivot raises TF's CPU-kernel errors.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from tensorflux._src.compiler import effects
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.framework.tensor_shape import Dimension, unknown_shape
from tensorflux._src.ops.array.array_ops import expand_dims, matrix_transpose, pad, squeeze, stack
from tensorflux._src.ops.array.host_ops import boolean_mask
from tensorflux._src.ops.linalg import _common as c
from tensorflux._src.ops.linalg.diag_ops import matrix_diag, matrix_diag_part
from tensorflux._src.ops.linalg.factor_ops import _lu, _lu_solve, _min_abs_pivot
from tensorflux._src.ops.linalg.spectral_ops import self_adjoint_eig
from tensorflux._src.ops.math import math_ops
from tensorflux._src.ops.math.reduce_ops import reduce_sum
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.op_helpers import merge_shapes, with_rank_at_least
from tensorflux._src.ops.registry import OpDef, register

__all__ = ["eigh_tridiagonal", "tridiagonal_matmul", "tridiagonal_solve"]

_TYPES = c.FLOAT_COMPLEX


def _with_value(dim, value):
    v = dim.value if isinstance(dim, Dimension) else dim
    if v is not None and v != value:
        raise ValueError(f"Dimension must be {value} but is {v}")


# -- TridiagonalSolve ------------------------------------------------------------------------
def _solve_shape(op):
    lhs = with_rank_at_least(op.inputs[0].shape, 2)
    rhs = with_rank_at_least(op.inputs[1].shape, 2)
    if lhs.ndims is None or rhs.ndims is None:
        return rhs if rhs.ndims is not None else unknown_shape()
    merge_shapes(lhs[:-2], rhs[:-2])
    c.merge_dim(lhs.dims[-1], rhs.dims[-2])
    _with_value(lhs.dims[-2], 3)
    return rhs


def _dense(diagonals):
    """[..., 3, M] compact diagonals -> [..., M, M] (the ignored corners dropped)."""
    sup, main, sub = diagonals[..., 0, :], diagonals[..., 1, :], diagonals[..., 2, :]
    m = main.shape[-1]
    i, j = np.arange(m)[:, None], np.arange(m)[None, :]
    out = jnp.where(i == j, main[..., None, :], 0)
    out = jnp.where(j == i + 1, sup[..., :, None], out)  # row i holds sup[i]
    return jnp.where(j == i - 1, sub[..., :, None], out)  # row i holds sub[i]


def _solve_lower(diagonals, rhs, partial_pivoting):
    if diagonals.shape[:-2] != rhs.shape[:-2] or diagonals.shape[-1] != rhs.shape[-2]:
        raise c.kernel_error("Incompatible shapes of diagonals and rhs")
    m = diagonals.shape[-1]
    if m == 0 or rhs.shape[-1] == 0:
        return jnp.zeros(rhs.shape, rhs.dtype)
    if m == 1:
        main = diagonals[..., 1, :][..., None]
        effects.check(jnp.all(main != 0),
                      "The matrix is not invertible: it is a scalar with value zero.")
        return rhs / main
    if partial_pivoting:
        lu, perm = _lu(_dense(diagonals))
        effects.check(_min_abs_pivot(lu) > 0, "The matrix is not invertible.")
        return _lu_solve(lu, perm, rhs)
    sup, main, sub = diagonals[..., 0, :], diagonals[..., 1, :], diagonals[..., 2, :]
    zero = jnp.zeros_like(main[..., :1])
    x = jax.lax.linalg.tridiagonal_solve(jnp.concatenate([zero, sub[..., 1:]], -1), main,
                                         jnp.concatenate([sup[..., :-1], zero], -1), rhs)
    effects.check(jnp.all(jnp.isfinite(x)) | ~jnp.all(jnp.isfinite(diagonals)),
                  "The matrix is either not invertible, or requires pivoting. Try setting "
                  "partial_pivoting = True.")
    return x


def _transpose_tridiagonal(diags):
    """The compact diagonals of the transposed matrix: super and sub swap (shifted)."""
    diag = diags[..., 1, :]
    rank = diags.shape.ndims
    superdiag = pad(diags[..., 2, 1:], [[0, 0]] * (rank - 2) + [[0, 1]])
    subdiag = pad(diags[..., 0, :-1], [[0, 0]] * (rank - 2) + [[1, 0]])
    return stack([superdiag, diag, subdiag], axis=-2)


def _matmul_three_diagonals(x, y_tr):
    """The three diagonals of x @ y_tr^T, compact, without the full product."""
    rank = y_tr.shape.ndims
    diag = reduce_sum(x * y_tr, axis=-1)
    up = pad(y_tr[..., 1:, :], [[0, 0]] * (rank - 2) + [[0, 1], [0, 0]])
    down = pad(y_tr[..., :-1, :], [[0, 0]] * (rank - 2) + [[1, 0], [0, 0]])
    return stack([reduce_sum(x * up, axis=-1), diag, reduce_sum(x * down, axis=-1)], axis=-2)


def _solve_grad(op, grad):
    diags, x = op.inputs[0], op.outputs[0]
    if diags.shape.ndims is None or x.shape.ndims is None:
        raise NotImplementedError("TridiagonalSolve gradients need the inputs' ranks.")
    grad_rhs = apply_op("TridiagonalSolve", diagonals=_transpose_tridiagonal(diags),
                        rhs=grad, partial_pivoting=op.get_attr("partial_pivoting"))
    return [-_matmul_three_diagonals(grad_rhs, x), grad_rhs]


register(OpDef(
    "TridiagonalSolve", inputs=("diagonals: T", "rhs: T"), outputs=("output: T",),
    attrs={"T": _TYPES, "partial_pivoting": True},
    shape=_solve_shape, lower=_solve_lower, grad=_solve_grad,
))


# -- TridiagonalMatMul -----------------------------------------------------------------------
def _matmul_shape(op):
    diags = [with_rank_at_least(t.shape, 2) for t in op.inputs[:3]]
    rhs = with_rank_at_least(op.inputs[3].shape, 2)
    if any(d.ndims is None for d in diags) or rhs.ndims is None:
        return rhs if rhs.ndims is not None else unknown_shape()
    batch = rhs[:-2]
    for d in diags:
        batch = merge_shapes(batch, d[:-2])
    main = merge_shapes(diags[0], diags[1])
    main = merge_shapes(diags[2], main)
    c.merge_dim(main.dims[-1], rhs.dims[-2])
    _with_value(main.dims[-2], 1)
    return rhs


def _matmul_lower(superdiag, maindiag, subdiag, rhs):
    sup, main, sub = superdiag[..., 0, :, None], maindiag[..., 0, :, None], \
        subdiag[..., 0, :, None]
    zero = jnp.zeros_like(rhs[..., :1, :])
    below = jnp.concatenate([rhs[..., 1:, :], zero], -2)  # x[i + 1]
    above = jnp.concatenate([zero, rhs[..., :-1, :]], -2)  # x[i - 1]
    return main * rhs + sup * below + sub * above


def _left_shift(x):
    rank = x.shape.ndims
    return pad(x[..., 1:, :], [[0, 0]] * (rank - 2) + [[0, 1], [0, 0]])


def _right_shift(x):
    rank = x.shape.ndims
    return pad(x[..., :-1, :], [[0, 0]] * (rank - 2) + [[1, 0], [0, 0]])


def _matmul_grad(op, grad):
    sup_c, main_c, sub_c = (matrix_transpose(t, conjugate=True) for t in op.inputs[:3])
    rhs_c = math_ops.conj(op.inputs[3])
    sup_g = reduce_sum(_left_shift(rhs_c) * grad, axis=-1)
    main_g = reduce_sum(rhs_c * grad, axis=-1)
    sub_g = reduce_sum(_right_shift(rhs_c) * grad, axis=-1)
    rhs_g = _right_shift(sup_c * grad) + main_c * grad + _left_shift(sub_c * grad)
    return [expand_dims(sup_g, -2), expand_dims(main_g, -2), expand_dims(sub_g, -2), rhs_g]


register(OpDef(
    "TridiagonalMatMul", inputs=("superdiag: T", "maindiag: T", "subdiag: T", "rhs: T"),
    outputs=("output: T",), attrs={"T": _TYPES},
    shape=_matmul_shape, lower=_matmul_lower, grad=_matmul_grad,
))


# -- public wrappers ---------------------------------------------------------------------------
def _compact_from_matrix(diagonals):
    diagonals = convert_to_tensor(diagonals, name="diagonals")
    s = diagonals.shape
    m1 = s.dims[-1].value if s.ndims else None
    m2 = s.dims[-2].value if s.ndims else None
    if m1 and m2 and m1 != m2:
        raise ValueError(f"Expected last two dimensions of diagonals to be same, got {m1} "
                         f"and {m2}")
    m = m1 or m2
    if not m:
        raise ValueError('The size of the matrix needs to be known for '
                         'diagonals_format="matrix"')
    # V2's left-aligned band: super (padded at the end), main, sub (padded at the end);
    # the compact format pads the subdiagonal at the start.
    band = matrix_diag_part(diagonals, k=(-1, 1))
    rank = s.ndims
    sub = pad(band[..., 2, :m - 1], [[0, 0]] * (rank - 2) + [[1, 0]])
    return stack([band[..., 0, :], band[..., 1, :], sub], axis=-2)


def _compact_from_sequence(diagonals):
    if not isinstance(diagonals, (tuple, list)) or len(diagonals) != 3:
        raise ValueError("Expected diagonals to be a sequence of length 3.")
    superdiag, maindiag, subdiag = (convert_to_tensor(d) for d in diagonals)
    if not subdiag.shape[:-1].is_compatible_with(maindiag.shape[:-1]) or \
            not superdiag.shape[:-1].is_compatible_with(maindiag.shape[:-1]):
        raise ValueError(f"Tensors representing the three diagonals must have the same "
                         f"shape,except for the last dimension, got {subdiag.shape}, "
                         f"{maindiag.shape}, {superdiag.shape}")
    m = maindiag.shape.dims[-1].value

    def pad_if_necessary(t, name, last_dim_padding):
        n = t.shape.dims[-1].value
        if not n or n == m:
            return t
        if n == m - 1:
            return pad(t, [[0, 0]] * (t.shape.ndims - 1) + [last_dim_padding])
        raise ValueError(f"Expected {name} to be have length {m} or {m - 1}, got {n}.")

    subdiag = pad_if_necessary(subdiag, "subdiagonal", [1, 0])
    superdiag = pad_if_necessary(superdiag, "superdiagonal", [0, 1])
    return stack([superdiag, maindiag, subdiag], axis=-2)


def tridiagonal_solve(diagonals, rhs, diagonals_format="compact", transpose_rhs=False,
                      conjugate_rhs=False, name=None, partial_pivoting=True):
    """Solves tridiagonal systems. `diagonals`: [..., 3, M] (super, main, sub; 'compact'),
    a (super, main, sub) sequence, or [..., M, M] ('matrix'); rhs [..., M] or [..., M, K]
    ([..., K, M] with transpose_rhs)."""
    if diagonals_format == "compact":
        diagonals = convert_to_tensor(diagonals, name="diagonals")
    elif diagonals_format == "sequence":
        diagonals = _compact_from_sequence(diagonals)
    elif diagonals_format == "matrix":
        diagonals = _compact_from_matrix(diagonals)
    else:
        raise ValueError(f"Unrecognized diagonals_format: {diagonals_format}")
    rhs = convert_to_tensor(rhs, dtype=diagonals.dtype.base_dtype, name="rhs")
    diags_rank, rhs_rank = diagonals.shape.ndims, rhs.shape.ndims
    if diags_rank is not None:
        if diags_rank < 2:
            raise ValueError(f"Expected diagonals to have rank at least 2, got {diags_rank}")
        if rhs_rank is not None and rhs_rank not in (diags_rank, diags_rank - 1):
            raise ValueError(f"Expected the rank of rhs to be {diags_rank - 1} or "
                             f"{diags_rank}, got {rhs_rank}")
        if diagonals.shape.dims[-2].value not in (None, 3):
            raise ValueError(f"Expected 3 diagonals got {diagonals.shape.dims[-2].value}")
        if rhs_rank is not None and not diagonals.shape[:-2].is_compatible_with(
                rhs.shape[:diags_rank - 2]):
            raise ValueError(f"Batch shapes {diagonals.shape[:-2]} and "
                             f"{rhs.shape[:diags_rank - 2]} are incompatible")

    def check_sizes(rhs):
        m, n = diagonals.shape.dims[-1].value, rhs.shape.dims[-2].value
        if m and n and m != n:
            raise ValueError(f"Expected number of left-hand sided and right-hand sides to "
                             f"be equal, got {m} and {n}")

    if rhs_rank is not None and diags_rank is not None and rhs_rank == diags_rank - 1:
        if conjugate_rhs:
            rhs = math_ops.conj(rhs)
        rhs = expand_dims(rhs, -1)
        check_sizes(rhs)
        return squeeze(apply_op("TridiagonalSolve", name=name, diagonals=diagonals, rhs=rhs,
                                partial_pivoting=partial_pivoting), [-1])
    if transpose_rhs:
        rhs = matrix_transpose(rhs, conjugate=conjugate_rhs)
    elif conjugate_rhs:
        rhs = math_ops.conj(rhs)
    check_sizes(rhs)
    return apply_op("TridiagonalSolve", name=name, diagonals=diagonals, rhs=rhs,
                    partial_pivoting=partial_pivoting)


def tridiagonal_matmul(diagonals, rhs, diagonals_format="compact", name=None):
    """The product of tridiagonal matrices (formats as tridiagonal_solve) with rhs
    [..., M, N]."""
    if diagonals_format == "compact":
        diagonals = convert_to_tensor(diagonals, name="diagonals")
        superdiag, maindiag, subdiag = (diagonals[..., i, :] for i in range(3))
    elif diagonals_format == "sequence":
        superdiag, maindiag, subdiag = (convert_to_tensor(d) for d in diagonals)
    elif diagonals_format == "matrix":
        compact = _compact_from_matrix(diagonals)
        superdiag, maindiag, subdiag = (compact[..., i, :] for i in range(3))
    else:
        raise ValueError(f"Unrecognized diagonals_format: {diagonals_format}")
    return apply_op("TridiagonalMatMul", name=name, superdiag=expand_dims(superdiag, -2),
                    maindiag=expand_dims(maindiag, -2), subdiag=expand_dims(subdiag, -2),
                    rhs=rhs)


def eigh_tridiagonal(alpha, beta, eigvals_only=True, select="a", select_range=None,
                     tol=None, name=None):
    """Eigenvalues (and with eigvals_only=False eigenvectors, as columns) of the Hermitian
    tridiagonal matrix with diagonal `alpha` (n) and superdiagonal `beta` (n - 1).

    select 'a': all; 'i': indices select_range[0] <= i <= select_range[1]; 'v': values in
    (select_range[0], select_range[1]] (a data-dependent count, computed on the host).
    Built as the dense matrix's eigendecomposition; `tol` is accepted for TF's
    signature (the dense solver is accurate to machine precision).
    """
    del tol
    if select not in ("a", "i", "v"):
        raise ValueError("'select must have a value in {'a', 'i', 'v'}.")
    with _graph.name_scope(name, "eigh_tridiagonal", [alpha, beta]):
        alpha = convert_to_tensor(alpha, name="alpha")
        beta = convert_to_tensor(beta, name="beta")
        if alpha.dtype.is_complex:  # only the real part of the diagonal is used
            alpha = math_ops.real(alpha)
        if beta.dtype.is_complex:
            alpha = math_ops.cast(alpha, beta.dtype)
        elif beta.dtype.base_dtype != alpha.dtype.base_dtype:
            beta = math_ops.cast(beta, alpha.dtype)
        n = alpha.shape.dims[0].value if alpha.shape.ndims else None
        if n == 1:
            matrix = matrix_diag(alpha)
        else:
            matrix = (matrix_diag(alpha) + matrix_diag(beta, k=1)
                      + matrix_diag(math_ops.conj(beta), k=-1))
        values, vectors = self_adjoint_eig(matrix)
        if values.dtype.is_complex:
            values = math_ops.real(values)
        if select == "i":
            lo, hi = select_range[0], select_range[1]
            values, vectors = values[lo:hi + 1], vectors[:, lo:hi + 1]
        elif select == "v":
            lo = math_ops.cast(select_range[0], values.dtype)
            hi = math_ops.cast(select_range[1], values.dtype)
            keep = math_ops.logical_and(math_ops.greater(values, lo),
                                        math_ops.less_equal(values, hi))
            values = boolean_mask(values, keep)
            vectors = boolean_mask(vectors, keep, axis=1)
        return values if eigvals_only else (values, vectors)
