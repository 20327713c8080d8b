"""NumPy/SciPy-checked cases for factorizations, solves, decompositions and matrix
functions (ops/linalg/factor_ops.py, spectral_ops.py; Qr's gradient)."""

import numpy as np
import scipy.linalg

import tensorflux as tf
from tensorflux._src.ops.op_builder import apply_op
from tests.ops.harness import Case, uniform

F64 = (np.float64,)


def T(x):
    return np.swapaxes(x, -1, -2)


def H(x):
    return np.conj(T(x))


def spd(rng, shape, dtype):
    """Hermitian positive definite matrices, well conditioned."""
    a = uniform(-1, 1)(rng, shape, dtype)
    return (a @ H(a) + shape[-1] * np.eye(shape[-1])).astype(dtype)


def well_conditioned(rng, shape, dtype):
    """Random matrices dominated by their diagonal (safe to invert and factor)."""
    a = uniform(-1, 1)(rng, shape, dtype)
    return (a + 3 * np.eye(shape[-1]) * np.sign(rng.uniform(-1, 1, shape[-1]))).astype(dtype)


def per_matrix(f):
    """A NumPy function of one matrix applied over leading batch dimensions."""
    def apply(*xs):
        batch = xs[0].shape[:-2]
        if not batch:
            return f(*xs)
        flat = [x.reshape((-1,) + x.shape[-2:]) for x in xs]
        outs = [f(*parts) for parts in zip(*flat)]
        if isinstance(outs[0], list):
            return [np.stack(o).reshape(batch + np.shape(o[0])) for o in zip(*outs)]
        return np.stack(outs).reshape(batch + np.shape(outs[0]))
    return apply


def sym(a):
    """The Hermitian part, built in the graph: gradients then see both triangles."""
    return (a + tf.linalg.adjoint(a)) / 2


def np_sym(a):
    return (a + H(a)) / 2


def column_signs(u):
    """Signs fixing each column's first entry positive (eigen/singular vectors are only
    defined up to sign)."""
    return np.sign(u[..., :1, :])


def tf_column_signs(u):
    return tf.sign(u[..., :1, :])


def np_lu(a):
    lu, piv = scipy.linalg.lu_factor(a)
    perm = np.arange(a.shape[-1])
    for i, p in enumerate(piv):
        perm[i], perm[p] = perm[p], perm[i]
    return [lu, perm.astype(np.int32)]


def np_svd(a):
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    v = H(vh)
    signs = column_signs(u)
    return [s, u * signs, v * signs]


def tf_svd(a):
    s, u, v = tf.svd(a)
    signs = tf_column_signs(u)
    return [s, u * signs, v * signs]


def np_eigh(a):
    e, v = np.linalg.eigh(a)
    return [e, v * column_signs(v)]


def tf_eigh(a):
    e, v = tf.linalg.eigh(a)
    return [e, v * tf_column_signs(v)]


def np_qr(a):
    q, r = np.linalg.qr(a)
    signs = np.sign(np.diagonal(r, axis1=-2, axis2=-1))[..., None, :]
    return [q * signs, r * T(signs)]


def tf_qr(a):
    q, r = tf.qr(a)
    signs = tf.sign(tf.linalg.diag_part(r))[..., None, :]
    return [q * signs, r * tf.linalg.matrix_transpose(signs)]


CASES = [
    # -- Cholesky ------------------------------------------------------------------------------
    Case("Cholesky", lambda a: tf.cholesky(sym(a)), lambda a: np.linalg.cholesky(np_sym(a)),
         [((2, 3, 3),)], (np.float32, np.complex128), gen=spd, rtol=1e-4),
    Case("Cholesky", tf.linalg.cholesky, np.linalg.cholesky, [((4, 4),)], F64,
         gen=lambda rng, s, d: np.triu(uniform(-9, 9)(rng, s, d), 1) + spd(rng, s, d),
         grad=False, name="Cholesky(reads the lower triangle)"),
    # -- inverses, determinants and solves --------------------------------------------------------
    Case("MatrixInverse", tf.matrix_inverse, np.linalg.inv, [((2, 3, 3),)],
         (np.float32, np.complex64), gen=well_conditioned, rtol=1e-4),
    Case("MatrixInverse", lambda a: tf.linalg.inv(a, adjoint=True),
         lambda a: np.linalg.inv(H(a)), [((3, 3),)], (np.float64, np.complex128),
         gen=well_conditioned, name="MatrixInverse(adjoint)"),
    Case("MatrixDeterminant", tf.matrix_determinant, np.linalg.det,
         [((2, 3, 3),)], (np.float32, np.complex128), gen=well_conditioned, rtol=1e-4),
    Case("LogMatrixDeterminant", lambda a: list(tf.linalg.slogdet(a)),
         lambda a: list(np.linalg.slogdet(a)), [((2, 3, 3),)], F64, gen=well_conditioned,
         rtol=1e-4),
    Case("MatrixSolve", tf.matrix_solve, np.linalg.solve, [((2, 3, 3), (2, 3, 2))],
         (np.float32, np.complex128), gen=[well_conditioned, uniform()], rtol=1e-4),
    Case("MatrixSolve", lambda a, b: tf.linalg.solve(a, b, adjoint=True),
         lambda a, b: np.linalg.solve(H(a), b), [((3, 3), (3, 1))], F64,
         gen=[well_conditioned, uniform()], name="MatrixSolve(adjoint)"),
    Case("MatrixTriangularSolve", tf.matrix_triangular_solve,
         per_matrix(lambda a, b: scipy.linalg.solve_triangular(a, b, lower=True)),
         [((2, 3, 3), (2, 3, 2))], (np.float32,), gen=[well_conditioned, uniform()],
         rtol=1e-4),
    Case("MatrixTriangularSolve",
         lambda a, b: tf.linalg.triangular_solve(a, b, lower=False, adjoint=True),
         lambda a, b: scipy.linalg.solve_triangular(np.triu(a), b, trans="C"),
         [((3, 3), (3, 2))], (np.float64, np.complex128), gen=[well_conditioned, uniform()],
         name="MatrixTriangularSolve(upper, adjoint)"),
    Case("MatrixTriangularSolve", lambda c, b: tf.cholesky_solve(tf.cholesky(sym(c)), b),
         lambda c, b: np.linalg.solve(np_sym(c), b), [((2, 3, 3), (2, 3, 2))], F64,
         gen=[spd, uniform()], name="cholesky_solve"),
    Case("Lu", lambda a: list(tf.linalg.lu(a)), per_matrix(np_lu), [((2, 4, 4),)],
         (np.float32,), gen=uniform(), rtol=1e-4, grad=False),
    Case("Lu", lambda a: list(tf.linalg.lu(a, output_idx_type=tf.int64)),
         lambda a: [np_lu(a)[0], np_lu(a)[1].astype(np.int64)], [((3, 3),)], F64,
         grad=False, name="Lu(int64 permutation)"),
    # -- least squares -----------------------------------------------------------------------
    Case("MatrixSolveLs", lambda a, b: tf.matrix_solve_ls(a, b, fast=False),
         per_matrix(lambda a, b: np.linalg.lstsq(a, b, rcond=None)[0]),
         [((2, 4, 3), (2, 4, 2))], (np.float32,), rtol=1e-4, grad=False,
         name="MatrixSolveLs(fast=False)"),
    Case("MatrixSolveLs",
         lambda a, b: apply_op("MatrixSolveLs", matrix=a, rhs=b, l2_regularizer=0.5),
         lambda a, b: np.linalg.solve(H(a) @ a + 0.5 * np.eye(3), H(a) @ b),
         [((4, 3), (4, 2))], F64, name="MatrixSolveLs(fast, regularized)"),
    Case("MatrixSolveLs",
         lambda a, b: apply_op("MatrixSolveLs", matrix=a, rhs=b, l2_regularizer=0.25),
         lambda a, b: H(a) @ np.linalg.solve(a @ H(a) + 0.25 * np.eye(2), b),
         [((2, 3), (2, 2))], F64, name="MatrixSolveLs(fast, underdetermined)"),
    Case("Cholesky", lambda a, b: tf.linalg.lstsq(a, b, l2_regularizer=0.1),
         lambda a, b: np.linalg.solve(T(a) @ a + 0.1 * np.eye(3), T(a) @ b),
         [((2, 5, 3), (2, 5, 2))], F64, rtol=1e-8, name="lstsq(fast, composed)"),
    # -- eigen and singular value decompositions ------------------------------------------------
    Case("SelfAdjointEigV2", lambda a: tf_eigh(sym(a)), lambda a: np_eigh(np_sym(a)),
         [((2, 3, 3),)], (np.float32,), rtol=1e-4),
    Case("SelfAdjointEigV2", lambda a: tf.self_adjoint_eigvals(sym(a)),
         lambda a: np.linalg.eigvalsh(np_sym(a)).astype(a.dtype), [((4, 4),)],
         (np.float64, np.complex128),
         name="SelfAdjointEigV2(eigenvalues only)"),
    Case("SelfAdjointEigV2", lambda a: tf.linalg.eigvalsh(a),
         lambda a: np.linalg.eigvalsh(a, UPLO="L"), [((3, 3),)], F64, grad=False,
         name="SelfAdjointEigV2(reads the lower triangle)"),
    Case("Svd", tf_svd, per_matrix(np_svd), [((2, 4, 3),)], (np.float32,), rtol=1e-4),
    Case("Svd", lambda a: tf.svd(a, compute_uv=False),
         lambda a: np.linalg.svd(a, compute_uv=False), [((2, 3, 4),)], (np.float64,
                                                                         np.complex128),
         name="Svd(singular values only)"),
    Case("Svd", lambda a: (lambda s, u, v: [s, tf.matmul(u, u, adjoint_a=True),
                                            tf.matmul(v, v, adjoint_a=True)])(
        *tf.svd(a, full_matrices=True)),
        lambda a: [np.linalg.svd(a, compute_uv=False), np.eye(4), np.eye(3)],
        [((4, 3),)], F64, name="Svd(full matrices)"),
    Case("Qr", tf_qr, np_qr, [((4, 3),), ((3, 3),)], F64, name="Qr(sign-normalized)"),
    Case("Qr", lambda a: tf.matmul(*tf.qr(a)), lambda a: a, [((3, 5),)], F64,
         name="Qr(wide)"),
    # -- matrix functions ----------------------------------------------------------------------
    Case("MatrixSquareRoot", lambda a: tf.linalg.sqrtm(sym(a)),
         lambda a: scipy.linalg.sqrtm(np_sym(a)), [((2, 2, 2),)], F64, gen=spd),
    Case("MatrixSquareRoot", tf.matrix_square_root, per_matrix(scipy.linalg.sqrtm),
         [((2, 3, 3),)], (np.float32, np.complex128), gen=spd, rtol=1e-4,
         name="MatrixSquareRoot(float32, complex)"),
    Case("MatrixExponential", tf.linalg.expm, per_matrix(scipy.linalg.expm),
         [((2, 3, 3),)], (np.float32, np.complex128), gen=uniform(-1, 1), rtol=1e-4),
    Case("MatrixExponential", tf.linalg.expm, scipy.linalg.expm, [((3, 3),)], F64,
         gen=uniform(-4, 4), name="MatrixExponential(squarings)"),
    Case("MatrixLogarithm", tf.linalg.logm,
         lambda a: per_matrix(scipy.linalg.logm)(a).astype(a.dtype),
         [((2, 3, 3),)], (np.complex64,), gen=spd, rtol=1e-4),
    Case("MatrixLogarithm", tf.linalg.logm, scipy.linalg.logm, [((3, 3),)], (np.complex128,),
         gen=lambda rng, s, d: (well_conditioned(rng, s, np.float64)
                                + 1j * uniform(-1, 1)(rng, s, np.float64)).astype(d),
         rtol=1e-8, name="MatrixLogarithm(non-normal)"),
]
