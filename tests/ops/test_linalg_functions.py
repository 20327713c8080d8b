"""tf.linalg's composed functions against NumPy/SciPy, and TF's errors for bad input:
static shape errors at graph construction, CPU-kernel errors (singular matrices, matrices
that are not positive definite) at run time."""

import numpy as np
import pytest
import scipy.linalg

import tensorflux as tf
from tests.ops.harness import numeric_gradient

L = tf.linalg
RNG = np.random.default_rng(3)


def spd(shape):
    a = RNG.uniform(-1, 1, shape)
    return a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])


def run(fetches, feeds=None):
    with tf.Session() as sess:
        return sess.run(fetches, feeds)


def test_composed_functions_match_numpy():
    a = RNG.uniform(-1, 1, (2, 3, 4))
    sq = RNG.uniform(-1, 1, (2, 3, 3)) + 3 * np.eye(3)
    pos = spd((2, 3, 3))
    v = RNG.uniform(-1, 1, (2, 4))
    b = RNG.uniform(-1, 1, (2, 3, 2))
    lu_np, piv = scipy.linalg.lu_factor(sq[0])
    checks = []
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, [None, 3, 4])
        feeds = {x: a}
        checks += [
            (tf.norm(x), np.linalg.norm(a)),
            (L.norm(x, axis=-1), np.linalg.norm(a, axis=-1)),
            (tf.norm(x, ord=1, axis=1, keepdims=True), np.linalg.norm(a, 1, axis=1,
                                                                      keepdims=True)),
            (tf.norm(x, ord=np.inf, axis=2), np.linalg.norm(a, np.inf, axis=2)),
            (tf.norm(x, ord=3.5, axis=-1), np.sum(np.abs(a) ** 3.5, -1) ** (1 / 3.5)),
            (tf.norm(x, ord="fro", axis=[1, 2]), np.linalg.norm(a, "fro", axis=(1, 2))),
            (tf.norm(x, ord=1, axis=(-2, -1)), np.linalg.norm(a, 1, axis=(-2, -1))),
            (tf.norm(x, ord=2, axis=[1, 2], keep_dims=True),
             np.linalg.norm(a, 2, axis=(1, 2), keepdims=True)),
            (tf.norm(x, ord=np.inf, axis=[2, 1]), np.linalg.norm(a, np.inf, axis=(2, 1))),
            (L.normalize(x, axis=-1)[0], a / np.linalg.norm(a, axis=-1, keepdims=True)),
            (L.normalize(x, ord=1)[1], np.sum(np.abs(a)).reshape(1, 1, 1)),
            (tf.trace(sq), np.trace(sq, axis1=-2, axis2=-1)),
            (L.trace(a), np.trace(a, axis1=-2, axis2=-1)),
            (L.adjoint(a + 1j * a), np.swapaxes(a - 1j * a, -1, -2)),
            (L.matvec(x, v), np.einsum("bij,bj->bi", a, v)),
            (L.logdet(pos), np.linalg.slogdet(pos)[1]),
            (L.slogdet(sq)[1], np.linalg.slogdet(sq)[1]),
            (L.pinv(x), np.linalg.pinv(a)),
            (L.matrix_rank(np.array([[1.0, 2.0], [2.0, 4.0]])), np.int32(1)),
            (L.matrix_rank(x), np.array([3, 3], np.int32)),
            (L.lu_reconstruct(*L.lu(sq)), sq),
            (L.lu_solve(*L.lu(sq), b), np.linalg.solve(sq, b)),
            (L.lu_matrix_inverse(*L.lu(sq)), np.linalg.inv(sq)),
            (L.lu_solve(tf.constant(lu_np), scipy_perm(piv), tf.constant(b[0])), np.linalg.solve(sq[0], b[0])),
            (tf.matrix_solve_ls(sq, b, l2_regularizer=0.0), np.linalg.solve(sq, b)),
            (L.lstsq(a[0].T, b[0][:, :1].repeat(2, 0)[:4]),
             np.linalg.lstsq(a[0].T, b[0][:, :1].repeat(2, 0)[:4], rcond=None)[0]),
            (L.lstsq(a[0], b[0], fast=False), np.linalg.lstsq(a[0], b[0], rcond=None)[0]),
            (L.expm(np.zeros((2, 0, 0))), np.zeros((2, 0, 0))),
            (L.eigh_tridiagonal([1.0, 2.0, 3.0], [0.5, 0.25]),
             np.linalg.eigvalsh(tridiag([1.0, 2.0, 3.0], [0.5, 0.25]))),
            (L.eigh_tridiagonal(np.array([1.0, 2.0, 3.0]), np.array([0.5, 0.25]),
                                select="i", select_range=[1, 2]),
             np.linalg.eigvalsh(tridiag([1.0, 2.0, 3.0], [0.5, 0.25]))[1:]),
            (L.eigh_tridiagonal(np.array([1.0, 2.0, 3.0]), np.array([0.5, 0.25]),
                                select="v", select_range=[1.5, 10.0]),
             np.linalg.eigvalsh(tridiag([1.0, 2.0, 3.0], [0.5, 0.25]))[1:]),
            (L.eigh_tridiagonal(np.array([1.0, 2.0, 3.0]), np.array([0.5j, 0.25])),
             np.linalg.eigvalsh(tridiag([1.0, 2.0, 3.0], [0.5j, 0.25]))),
        ]
        values = run([t for t, _ in checks], feeds)
    for i, ((t, want), got) in enumerate(zip(checks, values)):
        tol = 1e-5 if np.asarray(got).dtype in (np.float32, np.complex64) else 1e-9
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol, err_msg=f"check {i}")
        assert np.asarray(got).dtype == np.asarray(want).dtype or \
            np.asarray(want).dtype.kind == np.asarray(got).dtype.kind, f"check {i}"


def tridiag(main, upper):
    return np.diag(main) + np.diag(upper, 1) + np.diag(np.conj(upper), -1)


def scipy_perm(piv):
    perm = np.arange(len(piv))
    for i, p in enumerate(piv):
        perm[i], perm[p] = perm[p], perm[i]
    return perm.astype(np.int32)


def test_tridiagonal_solve_formats_and_eigenvectors():
    diags = np.array([[1.0, 1.0, 0.0], [4.0, 4.0, 4.0], [0.0, 1.0, 1.0]])
    dense = tridiag([4.0, 4.0, 4.0], [1.0, 1.0])
    rhs = np.array([[1.0, 2.0, 3.0], [0.5, 0.0, -1.0]])  # two right-hand sides, as rows
    with tf.Graph().as_default():
        outs = [
            L.tridiagonal_solve(diags, rhs, transpose_rhs=True),
            L.tridiagonal_solve([diags[0, :2], diags[1], diags[2, 1:]], rhs[0],
                                diagonals_format="sequence"),
            L.tridiagonal_solve(dense, rhs[0], diagonals_format="matrix"),
            L.eigh_tridiagonal([1.0, 2.0, 3.0], [0.5, 0.25], eigvals_only=False),
        ]
        got = run(outs)
    np.testing.assert_allclose(got[0], np.linalg.solve(dense, rhs.T))
    np.testing.assert_allclose(got[1], np.linalg.solve(dense, rhs[0]))
    np.testing.assert_allclose(got[2], np.linalg.solve(dense, rhs[0]))
    e, vec = got[3]
    t = tridiag([1.0, 2.0, 3.0], [0.5, 0.25])
    np.testing.assert_allclose(t @ vec, vec * e, atol=1e-6)
    with pytest.raises(ValueError, match="Expected 3 diagonals got 2"):
        L.tridiagonal_solve(np.ones((2, 3)), np.ones((3, 1)))
    with pytest.raises(ValueError, match="Unrecognized diagonals_format: band"):
        L.tridiagonal_solve(diags, rhs, diagonals_format="band")
    with pytest.raises(ValueError, match="Expected the rank of rhs to be 1 or 2, got 3"):
        L.tridiagonal_solve(diags, np.ones((1, 3, 1)))


def test_gradients_of_compositions():
    """tf.gradients through composed functions against central differences."""
    a = RNG.uniform(-1, 1, (3, 3))
    pos = spd((3, 3))
    cases = [
        (lambda t: tf.norm(t, ord=3, axis=-1), lambda x: np.sum(np.abs(x) ** 3, -1) ** (1 / 3),
         a + 2),
        (lambda t: tf.norm(t, ord=2, axis=[0, 1]), lambda x: np.linalg.norm(x, 2), a),
        (lambda t: L.logdet(t + tf.linalg.adjoint(t)),
         lambda x: np.linalg.slogdet(x + x.T)[1], pos),
        (lambda t: L.pinv(t), np.linalg.pinv, a[:, :2]),
    ]
    with tf.Graph().as_default():
        built = []
        for fn, np_fn, value in cases:
            x = tf.placeholder(tf.float64, value.shape)
            weights = RNG.uniform(0.5, 1.5, np.shape(np_fn(value)))
            loss = tf.reduce_sum(fn(x) * weights)
            built.append((x, tf.gradients(loss, x)[0], np_fn, value, weights))
        with tf.Session() as sess:
            grads = sess.run([g for _, g, _, _, _ in built],
                             {x: value for x, _, _, value, _ in built})
    for (x, _, np_fn, value, weights), got in zip(built, grads):
        want = numeric_gradient(lambda v: float(np.sum(np_fn(v) * weights)), [value.copy()], 0)
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def test_aliases_are_the_same_objects():
    assert L.inv is tf.matrix_inverse and L.det is tf.matrix_determinant
    assert L.solve is tf.matrix_solve and L.lstsq is tf.matrix_solve_ls
    assert L.triangular_solve is tf.matrix_triangular_solve and L.sqrtm is tf.matrix_square_root
    assert L.eigh is tf.self_adjoint_eig and L.eigvalsh is tf.self_adjoint_eigvals
    assert L.band_part is tf.matrix_band_part and L.diag is tf.matrix_diag
    assert L.diag_part is tf.matrix_diag_part and L.set_diag is tf.matrix_set_diag
    assert L.tensor_diag is tf.diag and L.tensor_diag_part is tf.diag_part
    assert L.transpose is tf.matrix_transpose and L.matrix_transpose is tf.matrix_transpose
    assert L.matmul is tf.matmul and L.einsum is tf.einsum and L.tensordot is tf.tensordot
    assert L.qr is tf.qr and L.eye is tf.eye and L.global_norm is tf.global_norm
    assert L.l2_normalize is tf.nn.l2_normalize and L.cholesky is tf.cholesky
    assert L.norm is tf.norm and L.svd is tf.svd and L.trace is tf.trace
    assert L.cross is tf.cross and L.cholesky_solve is tf.cholesky_solve


def test_op_names_and_static_shapes():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 4, 4])
        assert L.diag_part(x).op.name == "diag_part" and L.diag_part(x).op.type == \
            "MatrixDiagPart"
        assert L.diag(x[:, 0]).op.name == "diag" and L.set_diag(x, x[:, 0]).op.name == "set_diag"
        assert L.diag(x[:, 0], k=1).op.type == "MatrixDiagV2"
        assert L.diag(x[:, 0], k=1).shape.as_list() == [None, 5, 5]
        assert L.band_part(x, 1, 1).op.type == "MatrixBandPart"
        assert L.expm(x).op.name == "matrix_exponential"
        assert tf.cholesky(x).op.name == "Cholesky"
        assert tf.matrix_solve_ls(x, x).op.name.startswith("matrix_solve_ls/")
        s, u, v = tf.svd(tf.placeholder(tf.float32, [2, 5, 3]), full_matrices=True)
        assert (s.shape.as_list(), u.shape.as_list(), v.shape.as_list()) == \
            ([2, 3], [2, 5, 5], [2, 3, 3])
        assert tf.svd(x, compute_uv=False).shape.as_list() == [None, 4]
        e, vec = tf.self_adjoint_eig(x)
        assert e.shape.as_list() == [None, 4] and vec.shape.as_list() == [None, 4, 4]
        assert tf.matrix_determinant(x).shape.as_list() == [None]
        lu, p = L.lu(x)
        assert p.dtype == tf.int32 and p.shape.as_list() == [None, 4]
        y = tf.placeholder(tf.float32, [None, None, 2])
        assert tf.matrix_solve(x, y).shape.as_list() == [None, 4, 2]
        assert tf.matrix_solve_ls(tf.placeholder(tf.float32, [None, 6, 4]),
                                  tf.placeholder(tf.float32, [None, 6, 2]),
                                  fast=False).shape.as_list() == [None, 4, 2]


@pytest.mark.parametrize("build, message", [
    (lambda: tf.matrix_inverse(tf.zeros([2, 3])),
     "Dimensions must be equal, but are 2 and 3 for 'MatrixInverse' (op: 'MatrixInverse') "
     "with input shapes: [2,3]."),
    (lambda: tf.cholesky(tf.zeros([3])), "Shape must be at least rank 2 but is rank 1"),
    (lambda: tf.matrix_solve(tf.zeros([3, 3]), tf.zeros([2, 1])),
     "Dimensions must be equal, but are 3 and 2"),
    (lambda: tf.matrix_triangular_solve(tf.zeros([2, 3, 3]), tf.zeros([4, 3, 1])),
     "Dimension 0 in both shapes must be equal, but are 2 and 4"),
    (lambda: tf.matrix_determinant(tf.zeros([3, 2])), "Dimensions must be equal"),
    (lambda: tf.cross(tf.zeros([2]), tf.zeros([2])), "Dimension must be 3 but is 2"),
    (lambda: tf.cross(tf.zeros([2, 3]), tf.zeros([3, 3])),
     "Dimension 0 in both shapes must be equal, but are 2 and 3"),
    (lambda: tf.matrix_set_diag(tf.zeros([3, 4]), tf.zeros([4])),
     "Dimensions must be equal, but are 3 and 4"),
    (lambda: tf.matrix_diag(tf.zeros([2, 3]), k=(0, 2)),
     "The number of rows of `diagonal` doesn't match the number of diagonals"),
    (lambda: tf.matrix_diag(tf.zeros([3]), k=(1, 0)),
     "lower_diag_index is greater than upper_diag_index"),
    (lambda: tf.matrix_diag(tf.zeros([3]), num_rows=2), "num_rows is too small"),
    (lambda: tf.matrix_diag_part(tf.zeros([3, 3]), k=3), "lower_diag_index is out of bound"),
    (lambda: tf.matrix_diag_part(tf.zeros([3, 3]), k=(0, 3)), "upper_diag_index is out of bound"),
    (lambda: L.tridiagonal_matmul(tf.zeros([3, 4]), tf.zeros([5, 2])),
     "Dimensions must be equal, but are 4 and 5"),
    (lambda: L.logm(tf.zeros([2, 2])), "Value passed to parameter 'input' has DataType "
                                       "float32 not in list of allowed values"),
    (lambda: tf.cholesky(tf.zeros([2, 2], tf.int32)), "not in list of allowed values"),
])
def test_graph_construction_errors(build, message):
    with tf.Graph().as_default():
        with pytest.raises((ValueError, TypeError)) as info:
            build()
        assert message in str(info.value)


@pytest.mark.parametrize("kwargs, error, message", [
    (dict(ord="fro"), ValueError, "'ord' must be a supported vector norm, got fro"),
    (dict(ord=-1), ValueError, "'ord' must be a supported vector norm, got -1"),
    (dict(axis=[0, 0]), ValueError,
     "'axis' must be None, an integer, or a tuple of 2 unique integers, got (0, 0)"),
    (dict(axis=[0, 1], ord=3), ValueError,
     "'ord' must be a supported matrix norm in ['euclidean', 'fro', 1, 2, inf], got 3"),
    (dict(axis="0"), ValueError, "'axis' must be None, an integer"),
])
def test_norm_argument_errors(kwargs, error, message):
    with tf.Graph().as_default(), pytest.raises(error) as info:
        tf.norm(tf.zeros([2, 2]), **kwargs)
    assert message in str(info.value)


def test_run_time_errors_follow_tfs_cpu_kernels():
    """Singular and non-positive-definite inputs, fed with unknown static shapes, fail the
    run with TF's CPU-kernel messages; singular determinants are 0 and -inf."""
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, [None, None])
        rhs = tf.placeholder(tf.float64, [None, None])
        singular = np.array([[1.0, 2.0], [2.0, 4.0]])
        upper_zero = np.array([[1.0, 0.0], [3.0, 0.0]])
        cases = [
            (tf.matrix_inverse(x), {x: singular}, "Input is not invertible."),
            (tf.matrix_solve(x, rhs), {x: singular, rhs: np.ones((2, 1))},
             "Input matrix is not invertible."),
            (tf.matrix_triangular_solve(x, rhs), {x: upper_zero, rhs: np.ones((2, 1))},
             "Input matrix is not invertible."),
            (L.lu(x)[0], {x: np.zeros((2, 2))}, "Input is not invertible."),
            (tf.cholesky(x), {x: -np.eye(2)}, "Cholesky decomposition was not successful. "
                                              "The input might not be valid."),
            (tf.matrix_inverse(x), {x: np.ones((2, 3))}, "Input matrix must be square."),
            (tf.matrix_solve(x, rhs), {x: np.eye(2), rhs: np.ones((3, 1))},
             "Input matrix and right-hand side must have the same number of rows."),
            (tf.matrix_band_part(x, 3, 0), {x: np.eye(2)},
             "num_lower must be negative or less or equal to number of rows (2) got: 3"),
            (tf.matrix_solve_ls(x, rhs), {x: np.zeros((3, 2)), rhs: np.ones((3, 1))},
             "Input matrix was rank deficient or ill-conditioned. Try setting fast=False or "
             "provide a larger l2_regularizer > 0."),
            (L.tridiagonal_solve(tf.placeholder_with_default(
                np.array([[1.0, 0.0], [0.0, 0.0], [0.0, 0.0]]), [3, None]),
                tf.ones([2, 1], tf.float64)), {}, "The matrix is not invertible."),
            (tf.cross(tf.reshape(x, [-1]), tf.reshape(x, [-1])), {x: np.ones((2, 2))},
             "Cross-products are only defined for 3-element vectors."),
        ]
        with tf.Session() as sess:
            for tensor, feeds, message in cases:
                with pytest.raises((tf.errors.InvalidArgumentError,
                                    tf.errors.FailedPreconditionError)) as info:
                    sess.run(tensor, feeds)
                assert message in str(info.value), (message, str(info.value))
            det, (sign, log_abs) = sess.run([tf.matrix_determinant(x),
                                             L.slogdet(x)], {x: singular})
            assert det == 0.0 and sign == 0.0 and log_abs == -np.inf
            # A nearly singular matrix is not an error, as in TF.
            near = np.array([[1.0, 2.0], [2.0, 4.0 + 1e-12]])
            assert np.isfinite(sess.run(tf.matrix_inverse(x), {x: near})).all()


def test_gradient_refusals_follow_tf():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, [3, 3])
        with pytest.raises(LookupError, match="No gradient defined for operation 'Lu'"):
            tf.gradients(tf.reduce_sum(L.lu(x)[0]), x)
        c = tf.placeholder(tf.complex128, [3, 3])
        with pytest.raises(LookupError, match="MatrixLogarithm"):
            tf.gradients(tf.reduce_sum(L.logm(c)), c, grad_ys=tf.constant(1 + 0j, tf.complex128))
        with pytest.raises(ValueError, match="Gradient not defined for fast=False"):
            tf.gradients(tf.reduce_sum(tf.matrix_solve_ls(x, x, fast=False)), x)
        unknown = tf.placeholder(tf.float64, [None, None])
        with pytest.raises(NotImplementedError, match="SVD gradient has not been implemented"):
            tf.gradients(tf.reduce_sum(tf.svd(unknown)[1]), unknown)
        with pytest.raises(NotImplementedError, match="QrGrad not implemented with dynamic"):
            tf.gradients(tf.reduce_sum(tf.qr(unknown)[1]), unknown)
    with pytest.raises(NotImplementedError, match="complex128 and l2_regularizer != 0"):
        tf.matrix_solve_ls(np.eye(2, dtype=np.complex128), np.ones((2, 1), np.complex128),
                           l2_regularizer=0.5)
