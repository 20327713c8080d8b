"""Eigen/singular decompositions and matrix functions: SelfAdjointEigV2, Svd,
MatrixSquareRoot, MatrixExponential, MatrixLogarithm.

`tf.linalg.expm` is one MatrixExponential op here (XLA's scaling and squaring with Pade
13, the algorithm TF 1.15 composes from graph ops), differentiated through the Frechet
derivative: the gradient of expm at A along G is the upper-right block of
expm([[A^H, G], [0, A^H]]). Square roots and logarithms use a Schur decomposition, which
XLA provides on CPU only.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from tensorflux._src.framework import dtypes as _d
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.framework.tensor_shape import Dimension, TensorShape, unknown_shape
from tensorflux._src.ops.array.array_ops import (concat, expand_dims, matrix_transpose, reshape,
                                                 shape)
from tensorflux._src.ops.array.generator_ops import zeros_like
from tensorflux._src.ops.linalg import _common as c
from tensorflux._src.ops.linalg.diag_ops import (matrix_band_part, matrix_diag, matrix_diag_part,
                                                 matrix_set_diag)
from tensorflux._src.ops.linalg.factor_ops import matrix_solve
from tensorflux._src.ops.linalg.linalg_ops import eye, matmul
from tensorflux._src.ops.math import math_ops
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.op_helpers import with_rank_at_least
from tensorflux._src.ops.registry import OpDef, register

__all__ = [
    "matrix_exponential", "matrix_logarithm", "matrix_square_root", "self_adjoint_eig",
    "self_adjoint_eigvals", "svd",
]


def _batched(fn, a):
    """Applies a one-matrix function over leading batch dimensions."""
    if a.ndim == 2:
        return fn(a)
    flat = jnp.reshape(a, (-1,) + a.shape[-2:])
    out = jax.vmap(fn)(flat)
    return jnp.reshape(out, a.shape[:-2] + out.shape[-2:])


def _safe_reciprocal(x, epsilon=1e-20):
    """TF's Lorentz-broadened 1/x, finite where eigen/singular values coincide."""
    return x * math_ops.reciprocal(x * x + epsilon)


# -- SelfAdjointEigV2 --------------------------------------------------------------------------
def _eig_shapes(op):
    s = c.batch_square(op.inputs[0].shape)
    if s.ndims is None:
        return [unknown_shape(), unknown_shape() if op.get_attr("compute_v")
                else TensorShape([0])]
    e = s[:-1]
    return [e, s if op.get_attr("compute_v") else TensorShape([0])]


@c.half_via_float32
def _eig_lower(input, compute_v):  # noqa: A002 - TF's argument name
    c.check_matrices(input)
    # Like Eigen's SelfAdjointEigenSolver, only the lower triangle is read.
    v, e = jax.lax.linalg.eigh(input, lower=True, symmetrize_input=False)
    e = e.astype(input.dtype)
    if not compute_v:
        return e, jnp.zeros((0,), input.dtype)
    return e, v


def _eig_grad(op, grad_e, grad_v):
    e = op.outputs[0]
    if op.get_attr("compute_v"):
        v = op.outputs[1]
        f = matrix_set_diag(_safe_reciprocal(expand_dims(e, -2) - expand_dims(e, -1)),
                            zeros_like(e))
        grad_a = matmul(v, matmul(matrix_diag(grad_e) + f * matmul(v, grad_v, adjoint_a=True),
                                  v, adjoint_b=True))
    else:
        _, v = self_adjoint_eig(op.inputs[0])
        grad_a = matmul(v, matmul(matrix_diag(grad_e), v, adjoint_b=True))
    # The op reads only the lower triangle: symmetrize and keep that triangle.
    grad_a = matrix_band_part(grad_a + matrix_transpose(grad_a, conjugate=True), -1, 0)
    return [matrix_set_diag(grad_a, 0.5 * matrix_diag_part(grad_a))]


register(OpDef(
    "SelfAdjointEigV2", inputs=("input: T",), outputs=("e: T", "v: T"),
    attrs={"T": c.LINALG_TYPES, "compute_v": True},
    shape=_eig_shapes, lower=_eig_lower, grad=_eig_grad,
))


# -- Svd -----------------------------------------------------------------------------------
def _svd_shapes(op):
    s = with_rank_at_least(op.inputs[0].shape, 2)
    if s.ndims is None:
        return [unknown_shape()] * 3
    batch, m, n = s[:-2], s.dims[-2], s.dims[-1]
    p = Dimension(None) if m.value is None or n.value is None else min(m.value, n.value)
    e = batch.concatenate([p])
    if not op.get_attr("compute_uv"):
        return [e, TensorShape([0]), TensorShape([0])]
    if op.get_attr("full_matrices"):
        return [e, batch.concatenate([m, m]), batch.concatenate([n, n])]
    return [e, batch.concatenate([m, p]), batch.concatenate([n, p])]


@c.half_via_float32
def _svd_lower(input, compute_uv, full_matrices):  # noqa: A002
    c.check_matrices(input, square=(False,))
    if not compute_uv:
        s = jnp.linalg.svd(input, compute_uv=False)
        empty = jnp.zeros((0,), input.dtype)
        return s.astype(input.dtype), empty, empty
    u, s, vh = jnp.linalg.svd(input, full_matrices=full_matrices)
    return s.astype(input.dtype), u, c.adjoint(vh)


def _svd_grad(op, grad_s, grad_u, grad_v):
    """TF's SVD gradient (Giles 2008; Townsend for the thin case; the complex term)."""
    a = op.inputs[0]
    a_shape = with_rank_at_least(a.shape, 2)
    grad_s = math_ops.cast(grad_s, a.dtype)
    grad_s_mat = matrix_diag(grad_s)
    if not op.get_attr("compute_uv"):
        _, u, v = svd(a, compute_uv=True)
        return [matmul(u, matmul(grad_s_mat, v, adjoint_b=True))]
    full_matrices = op.get_attr("full_matrices")
    m, n = a_shape.dims[-2].value, a_shape.dims[-1].value
    if m is None or n is None:
        raise NotImplementedError("SVD gradient has not been implemented for input with "
                                  "unknown inner matrix shape.")
    s, u, v = op.outputs
    s = math_ops.cast(s, a.dtype)
    use_adjoint = m > n
    if use_adjoint:  # differentiate A^H = V S U^H instead
        m, n, u, v, grad_u, grad_v = n, m, v, u, grad_v, grad_u
    if full_matrices and abs(m - n) > 1:
        raise NotImplementedError("svd gradient is not implemented for abs(m - n) > 1 when "
                                  "full_matrices is True")
    s_mat = matrix_diag(s)
    s2 = math_ops.square(s)
    f = matrix_set_diag(_safe_reciprocal(expand_dims(s2, -2) - expand_dims(s2, -1)),
                        zeros_like(s))
    s_inv_mat = matrix_diag(_safe_reciprocal(s))
    v1, grad_v1 = v[..., :, :m], grad_v[..., :, :m]
    u_gu = matmul(u, grad_u, adjoint_a=True)
    v_gv = matmul(v1, grad_v1, adjoint_a=True)
    f_u, f_v = f * u_gu, f * v_gv
    term1_nouv = (grad_s_mat + matmul(f_u + matrix_transpose(f_u, conjugate=True), s_mat)
                  + matmul(s_mat, f_v + matrix_transpose(f_v, conjugate=True)))
    grad_a = matmul(u, matmul(term1_nouv, v1, adjoint_b=True))
    if m != n:
        gv1t = matrix_transpose(grad_v1, conjugate=True)
        term2_nous = gv1t - matmul(matmul(gv1t, v1), v1, adjoint_b=True)
        if full_matrices:
            v2, grad_v2 = v[..., :, m:n], grad_v[..., :, m:n]
            term2_nous -= matmul(matmul(v1, grad_v2, adjoint_a=True), v2, adjoint_b=True)
        grad_a += matmul(matmul(u, s_inv_mat), term2_nous)
    if a.dtype.is_complex:
        s_shape = shape(s)
        identity = eye(s_shape[-1], batch_shape=s_shape[:-1], dtype=a.dtype)
        diag_vgv = identity * v_gv
        term3_nouv = matmul(s_inv_mat, matrix_transpose(diag_vgv, conjugate=True) - diag_vgv)
        grad_a += 0.5 * matmul(u, matmul(term3_nouv, v1, adjoint_b=True))
    if use_adjoint:
        grad_a = matrix_transpose(grad_a, conjugate=True)
    grad_a.set_shape(a_shape)
    return [grad_a]


register(OpDef(
    "Svd", inputs=("input: T",), outputs=("s: T", "u: T", "v: T"),
    attrs={"T": c.LINALG_TYPES, "compute_uv": True, "full_matrices": False},
    shape=_svd_shapes, lower=_svd_lower, grad=_svd_grad,
))


# -- MatrixSquareRoot ----------------------------------------------------------------------
@c.half_via_float32
def _sqrtm_lower(input):  # noqa: A002
    c.check_matrices(input)
    if input.shape[-1] == 0:
        return input
    root = _batched(jax.scipy.linalg.sqrtm, input)
    # Real matrices without negative real eigenvalues have a real principal root.
    return jnp.real(root).astype(input.dtype) if not jnp.iscomplexobj(input) else \
        root.astype(input.dtype)


def _kronecker(b1, b2, s):
    """Kronecker products of two batches of n x n matrices (s: their shape tensor)."""
    n = s[-1]
    batch = s[:-2]
    left = reshape(b1, concat([batch, [n, 1, n, 1]], 0))
    right = reshape(b2, concat([batch, [1, n, 1, n]], 0))
    return reshape(left * right, concat([batch, [n * n, n * n]], 0))


def _sqrtm_grad(op, grad):
    """TF's: solve the Sylvester equation dA = R dR + dR R through Kronecker products."""
    root = op.outputs[0]
    s = shape(root)
    identity = eye(s[-1], batch_shape=s[:-2], dtype=root.dtype)
    ksum = _kronecker(identity, matrix_transpose(root), s) + _kronecker(root, identity, s)
    n = s[-1]
    vec_da = reshape(matrix_transpose(grad), concat([s[:-2], [n * n, 1]], 0))
    vec_dr = matrix_solve(ksum, vec_da)
    return [matrix_transpose(reshape(vec_dr, s))]


register(OpDef(
    "MatrixSquareRoot", inputs=("input: T",), outputs=("output: T",),
    attrs={"T": c.LINALG_TYPES}, shape=c.batch_square_unchanged, lower=_sqrtm_lower,
    grad=_sqrtm_grad,
))


# -- MatrixExponential ---------------------------------------------------------------------
@c.half_via_float32
def _expm_lower(input):  # noqa: A002
    c.check_matrices(input)
    if input.shape[-1] == 0:
        return input
    return jax.scipy.linalg.expm(input, max_squarings=64)


def _expm_grad(op, grad):
    a = op.inputs[0]
    ah = matrix_transpose(a, conjugate=True)
    block = concat([concat([ah, grad], -1), concat([zeros_like(a), ah], -1)], -2)
    e = apply_op("MatrixExponential", input=block)
    n = a.shape.dims[-1].value if a.shape.ndims is not None else None
    if n is None:
        n = shape(a)[-1]
    return [e[..., :n, n:]]


register(OpDef(
    "MatrixExponential", inputs=("input: T",), outputs=("output: T",),
    attrs={"T": c.LINALG_TYPES}, shape=c.batch_square_unchanged, lower=_expm_lower,
    grad=_expm_grad,
))


# -- MatrixLogarithm -----------------------------------------------------------------------
# Gauss-Legendre nodes on [0, 1]: log(I + X) = int_0^1 X (I + t X)^-1 dt, accurate to
# double precision for ||X||_1 <= 0.25 with 8 nodes (Higham's Pade degree for logm).
_NODES, _WEIGHTS = np.polynomial.legendre.leggauss(8)
_NODES, _WEIGHTS = (_NODES + 1) / 2, _WEIGHTS / 2


def _logm_one(a):
    """Inverse scaling and squaring on the complex Schur form (as Eigen's MatrixLogarithm)."""
    t, q = jax.scipy.linalg.schur(a, output="complex")
    n = a.shape[-1]
    identity = jnp.eye(n, dtype=t.dtype)

    def far(state):
        t, k = state
        return (jnp.max(jnp.sum(jnp.abs(t - identity), axis=0)) > 0.25) & (k < 64)

    def root(state):
        t, k = state
        return jnp.triu(jax.scipy.linalg.sqrtm(t)), k + 1

    t, k = jax.lax.while_loop(far, root, (t, 0))
    x = t - identity
    log = sum(w * jnp.linalg.solve(identity + s * x, x) for s, w in zip(_NODES, _WEIGHTS))
    log = log * (2.0 ** k).astype(log.real.dtype)
    return q @ log @ jnp.conj(q.T)


def _logm_lower(input):  # noqa: A002
    c.check_matrices(input)
    if input.shape[-1] == 0:
        return input
    return _batched(_logm_one, input).astype(input.dtype)


register(OpDef(
    "MatrixLogarithm", inputs=("input: T",), outputs=("output: T",),
    attrs={"T": _d.COMPLEX}, shape=c.batch_square_unchanged, lower=_logm_lower,
    # TF registers no gradient for MatrixLogarithm: tf.gradients raises LookupError.
))


# -- public wrappers ---------------------------------------------------------------------------
def self_adjoint_eig(tensor, name=None):
    """(e, v): eigenvalues ascending and eigenvectors (columns) of self-adjoint matrices;
    only the lower triangle is read."""
    e, v = apply_op("SelfAdjointEigV2", name=name, input=tensor, compute_v=True)
    return e, v


def self_adjoint_eigvals(tensor, name=None):
    """The eigenvalues (ascending) of self-adjoint matrices."""
    e, _ = apply_op("SelfAdjointEigV2", name=name, input=tensor, compute_v=False)
    return e


def svd(tensor, full_matrices=False, compute_uv=True, name=None):
    """s (descending), or (s, u, v) with tensor = u @ diag(s) @ adjoint(v)."""
    s, u, v = apply_op("Svd", name=name, input=tensor, compute_uv=compute_uv,
                       full_matrices=full_matrices)
    s = math_ops.real(s) if s.dtype.is_complex else s
    return (s, u, v) if compute_uv else s


def matrix_square_root(input, name=None):  # noqa: A002
    """The principal square root of each square matrix (Schur method)."""
    return apply_op("MatrixSquareRoot", name=name, input=input)


def matrix_logarithm(input, name=None):  # noqa: A002
    """The principal logarithm of each complex square matrix."""
    return apply_op("MatrixLogarithm", name=name, input=input)


def matrix_exponential(input, name=None):  # noqa: A002
    """exp(A) = sum A^n / n! of each square matrix (scaling and squaring, Pade)."""
    with _graph.name_scope(name, "matrix_exponential", [input]) as scope:
        matrix = convert_to_tensor(input, name="input")
        if matrix.dtype.base_dtype not in c.LINALG_TYPES:
            raise ValueError(f"tf.linalg.expm does not support matrices of type "
                             f"{matrix.dtype!r}")
        if matrix.shape.ndims is not None and matrix.shape.ndims >= 2 and \
                matrix.shape[-2:].as_list() == [0, 0]:
            return matrix
        return apply_op("MatrixExponential", name=scope, input=matrix)
