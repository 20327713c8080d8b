"""tf.linalg.LinearOperator*: every method against NumPy on the dense matrix the test builds
itself. Each group of operators shares one graph and one Session run."""

import numpy as np
import pytest
import scipy.linalg

import tensorflux as tf

L = tf.linalg
RNG = np.random.default_rng(7)


def H(x):
    return np.conj(np.swapaxes(x, -1, -2))


def well_conditioned(shape, dtype=np.float64):
    a = RNG.uniform(-1, 1, shape)
    return (a + 4 * np.eye(shape[-1])).astype(dtype)


def spd(shape):
    a = RNG.uniform(-1, 1, shape)
    return a @ H(a) + shape[-1] * np.eye(shape[-1])


def circulant(column):
    n = column.shape[-1]
    return np.stack([np.roll(column, k, axis=-1) for k in range(n)], axis=-1)


def build_checks(op, dense, solvable=True, square=True, det=True):
    """Graph tensors for op's methods, with their NumPy expectations from `dense`."""
    n_rows, n_cols = dense.shape[-2:]
    dtype = op.dtype.as_numpy_dtype
    x = RNG.uniform(-1, 1, dense.shape[:-2] + (n_cols, 2)).astype(dtype)
    xa = RNG.uniform(-1, 1, dense.shape[:-2] + (n_rows, 2)).astype(dtype)
    v = RNG.uniform(-1, 1, dense.shape[:-2] + (n_cols,)).astype(dtype)
    checks = [
        ("to_dense", op.to_dense(), dense),
        ("matmul", op.matmul(x), dense @ x),
        ("matmul adjoint", op.matmul(xa, adjoint=True), H(dense) @ xa),
        ("matmul adjoint_arg", op.matmul(H(x), adjoint_arg=True), dense @ x),
        ("matvec", op.matvec(v), (dense @ v[..., None])[..., 0]),
        ("diag_part", op.diag_part(), np.diagonal(dense, axis1=-2, axis2=-1)),
        ("add_to_tensor", op.add_to_tensor(dense), 2 * dense),
        ("adjoint", op.adjoint().to_dense(), H(dense)),
    ]
    if square:
        checks.append(("trace", op.trace(), np.trace(dense, axis1=-2, axis2=-1)))
    if det:
        checks += [("determinant", op.determinant(), np.linalg.det(dense)),
                   ("log_abs_determinant", op.log_abs_determinant(),
                    np.linalg.slogdet(dense)[1])]
    if solvable:
        inv = np.linalg.inv(dense)
        checks += [("solve", op.solve(xa), inv @ xa),
                   ("solve adjoint", op.solve(x, adjoint=True), H(inv) @ x),
                   ("solvevec", op.solvevec(v), (inv @ v[..., None])[..., 0]),
                   ("inverse", op.inverse().to_dense(), inv)]
    return [(f"{op.name}: {what}", t, want) for what, t, want in checks]


def run_checks(checks, rtol=1e-6):
    with tf.Session() as sess:
        got = sess.run([t for _, t, _ in checks])
    for (label, t, want), value in zip(checks, got):
        np.testing.assert_allclose(value, want, rtol=rtol, atol=rtol, err_msg=label)
        assert t.shape.is_compatible_with(np.shape(want)), f"{label}: {t.shape}"


def test_dense_and_diagonal_operators():
    with tf.Graph().as_default():
        full = well_conditioned((2, 3, 3))
        d = RNG.uniform(0.5, 2, (2, 3)) * np.array([1, -1, 1])
        tril = well_conditioned((3, 3))
        a = spd((3, 3))
        checks = []
        checks += build_checks(L.LinearOperatorFullMatrix(full), full)
        checks += build_checks(L.LinearOperatorFullMatrix(a, is_self_adjoint=True,
                                                          is_positive_definite=True), a)
        checks += build_checks(L.LinearOperatorDiag(d), np.stack([np.diag(r) for r in d]))
        checks += build_checks(L.LinearOperatorLowerTriangular(tril), np.tril(tril))
        checks += build_checks(L.LinearOperatorIdentity(3, batch_shape=[2], dtype=tf.float64),
                               np.broadcast_to(np.eye(3), (2, 3, 3)))
        checks += build_checks(L.LinearOperatorScaledIdentity(3, np.array([2.0, -0.5])),
                               np.array([2.0, -0.5])[:, None, None] * np.eye(3))
        zeros = L.LinearOperatorZeros(2, num_columns=3, batch_shape=[2], dtype=tf.float64)
        checks += build_checks(zeros, np.zeros((2, 2, 3)), solvable=False, square=False,
                               det=False)
        complex_full = (well_conditioned((3, 3)) + 1j * RNG.uniform(-1, 1, (3, 3)))
        checks += build_checks(L.LinearOperatorFullMatrix(complex_full), complex_full)
        chol = L.LinearOperatorFullMatrix(a, is_self_adjoint=True,
                                          is_positive_definite=True).cholesky()
        checks.append(("cholesky", chol.to_dense(), np.linalg.cholesky(a)))
        checks.append(("Diag cholesky", L.LinearOperatorDiag(
            np.abs(d), is_positive_definite=True).cholesky().to_dense(),
            np.stack([np.diag(np.sqrt(np.abs(r))) for r in d])))
        run_checks(checks)
        assert isinstance(L.LinearOperatorDiag(d).inverse(), L.LinearOperatorDiag)
        identity = L.LinearOperatorIdentity(3)
        assert identity.inverse() is identity and identity.adjoint() is identity
        assert zeros.shape.as_list() == [2, 2, 3] and zeros.is_square is False


def test_structured_operators():
    with tf.Graph().as_default():
        spectrum = RNG.uniform(1, 2, (2, 4)) + 1j * RNG.uniform(-1, 1, (2, 4))
        kernel = np.fft.ifft(spectrum)
        circ = L.LinearOperatorCirculant(spectrum, input_output_dtype=tf.complex128)
        spectrum2 = RNG.uniform(1, 2, (2, 3)) + 0j
        kernel2 = np.fft.ifft2(spectrum2)
        # Block circulant with circulant blocks: entry ((i0, i1), (j0, j1)) is
        # kernel[(i0 - j0) % N0, (i1 - j1) % N1].
        i0, i1, j0, j1 = np.meshgrid(*[np.arange(k) for k in (2, 3, 2, 3)], indexing="ij")
        dense2 = kernel2[(i0 - j0) % 2, (i1 - j1) % 3].reshape(6, 6)
        circ2 = L.LinearOperatorCirculant2D(spectrum2, input_output_dtype=tf.complex128)
        real_spectrum = np.array([3.0, 1.0, 0.5, 1.0])  # Hermitian: a real kernel
        circ_real = L.LinearOperatorCirculant(real_spectrum, input_output_dtype=tf.float64)
        spectrum3 = RNG.uniform(1, 2, (2, 2, 2)) + 0j
        kernel3 = np.fft.ifftn(spectrum3)
        idx = np.meshgrid(*[np.arange(2)] * 6, indexing="ij")
        dense3 = kernel3[(idx[0] - idx[3]) % 2, (idx[1] - idx[4]) % 2,
                         (idx[2] - idx[5]) % 2].reshape(8, 8)
        circ3 = L.LinearOperatorCirculant3D(spectrum3, input_output_dtype=tf.complex128)
        col, row = RNG.uniform(-1, 1, 4), RNG.uniform(-1, 1, 4)
        col[0] += 4
        toeplitz = scipy.linalg.toeplitz(col, row)
        diags = RNG.uniform(-1, 1, (2, 3, 4))
        diags[:, 1] += 4
        tri = np.zeros((2, 4, 4))
        for i in range(4):
            tri[:, i, i] = diags[:, 1, i]
            if i < 3:
                tri[:, i, i + 1], tri[:, i + 1, i] = diags[:, 0, i], diags[:, 2, i + 1]
        axis = RNG.uniform(-1, 1, (2, 3))
        householder = np.eye(3) - 2 * axis[:, :, None] * axis[:, None, :] / \
            np.sum(axis ** 2, -1)[:, None, None]
        perm = np.array([[2, 0, 1, 3], [1, 0, 3, 2]])
        perm_dense = np.eye(4)[perm]
        checks = []
        checks += build_checks(circ, np.stack([circulant(k) for k in kernel]))
        checks += build_checks(circ2, dense2)
        checks += build_checks(circ3, dense3)
        checks += build_checks(circ_real, circulant(np.fft.ifft(real_spectrum).real))
        checks.append(("convolution_kernel", circ.convolution_kernel(), kernel))
        checks += build_checks(L.LinearOperatorToeplitz(col, row), toeplitz)
        checks += build_checks(L.LinearOperatorTridiag(diags), tri)
        checks += build_checks(L.LinearOperatorTridiag(tri[0], diagonals_format="matrix"),
                               tri[0])
        checks += build_checks(L.LinearOperatorHouseholder(axis), householder)
        checks += build_checks(L.LinearOperatorPermutation(perm, dtype=tf.float64),
                               perm_dense)
        run_checks(checks)
        assert circ_real.is_self_adjoint and circ.shape.as_list() == [2, 4, 4]
        assert isinstance(circ.inverse(), L.LinearOperatorCirculant)


def test_composite_operators():
    with tf.Graph().as_default():
        a, b = well_conditioned((2, 3, 3)), well_conditioned((2, 2))
        c = spd((2, 2))
        d = RNG.uniform(1, 2, 2)
        op_a, op_b = L.LinearOperatorFullMatrix(a), L.LinearOperatorFullMatrix(b)
        op_c = L.LinearOperatorFullMatrix(c, is_self_adjoint=True, is_positive_definite=True)
        op_d = L.LinearOperatorDiag(d)
        kron = np.stack([np.kron(m, b) for m in a])
        block = np.zeros((2, 5, 5))
        block[:, :3, :3], block[:, 3:, 3:] = a, b
        lower = np.zeros((5, 5))
        off = RNG.uniform(-1, 1, (2, 3))
        lower[:3, :3], lower[3:, :3], lower[3:, 3:] = a[0], off, b
        u, v = RNG.uniform(-1, 1, (2, 1)), RNG.uniform(-1, 1, (2, 1))
        checks = []
        checks += build_checks(L.LinearOperatorComposition([op_b, op_c]), b @ c)
        checks += build_checks(L.LinearOperatorKronecker([op_a, op_b]), kron)
        checks += build_checks(L.LinearOperatorKronecker([op_c, op_d]),
                               np.kron(c, np.diag(d)))
        checks += build_checks(L.LinearOperatorBlockDiag([op_a, op_b]), block)
        checks += build_checks(L.LinearOperatorBlockLowerTriangular(
            [[L.LinearOperatorFullMatrix(a[0])],
             [L.LinearOperatorFullMatrix(off), op_b]]), lower)
        checks += build_checks(L.LinearOperatorLowRankUpdate(op_c, u, diag_update=[0.5],
                                                            v=v), c + 0.5 * u @ v.T)
        checks += build_checks(L.LinearOperatorLowRankUpdate(
            op_c, u, is_diag_update_positive=True), c + u @ u.T)
        checks += build_checks(L.LinearOperatorAdjoint(op_b), b.T)
        checks += build_checks(L.LinearOperatorInversion(op_b), np.linalg.inv(b))
        checks.append(("operator matmul", op_b.matmul(op_c).to_dense(), b @ c))
        checks.append(("operator solve", op_d.solve(op_d).to_dense(), np.eye(2)))
        checks.append(("Kronecker cholesky",
                       L.LinearOperatorKronecker([op_c, L.LinearOperatorDiag(
                           d, is_positive_definite=True)]).cholesky()
                       .to_dense(), np.kron(np.linalg.cholesky(c), np.diag(np.sqrt(d)))))
        run_checks(checks)
        assert L.LinearOperatorAdjoint(op_b).adjoint() is op_b
        assert L.LinearOperatorInversion(op_b).inverse() is op_b
        assert L.LinearOperatorComposition([op_b, op_c]).name == \
            "LinearOperatorFullMatrix_o_LinearOperatorFullMatrix"


def test_shapes_and_hints():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, [None, 3, 3])
        op = L.LinearOperatorFullMatrix(x)
        assert op.shape.as_list() == [None, 3, 3] and op.batch_shape.as_list() == [None]
        assert op.domain_dimension.value == 3 and op.range_dimension.value == 3
        assert op.tensor_rank == 3 and op.is_square
        rect = L.LinearOperatorFullMatrix(np.ones((2, 3)))
        assert rect.is_square is False
        with tf.Session() as sess:
            got = sess.run([op.shape_tensor(), op.batch_shape_tensor(),
                            op.domain_dimension_tensor(), op.tensor_rank_tensor()],
                           {x: np.zeros((4, 3, 3))})
        assert [list(got[0]), list(got[1]), int(got[2]), int(got[3])] == [[4, 3, 3], [4], 3, 3]
    with pytest.raises(ValueError, match="A positive definite matrix is always non-singular"):
        L.LinearOperatorFullMatrix(np.eye(2), is_positive_definite=True, is_non_singular=False)
    with pytest.raises(ValueError, match="A non-singular matrix is always square"):
        L.LinearOperatorFullMatrix(np.eye(2), is_non_singular=True, is_square=False)
    with pytest.raises(ValueError, match="A real diagonal operator is always self adjoint"):
        L.LinearOperatorDiag([1.0, 2.0], is_self_adjoint=False)
    with pytest.raises(ValueError, match="An identity operator is always self adjoint"):
        L.LinearOperatorIdentity(2, is_self_adjoint=False)
    with pytest.raises(ValueError, match="Argument num_rows must be non-negative"):
        L.LinearOperatorIdentity(-1)
    with pytest.raises(TypeError, match="Argument matrix must have dtype in"):
        L.LinearOperatorFullMatrix(np.eye(2, dtype=np.int32))
    with pytest.raises(ValueError, match="Argument matrix must have at least 2 dimensions"):
        L.LinearOperatorFullMatrix([1.0, 2.0])
    with pytest.raises(TypeError, match="Expected argument to have dtype float64"):
        L.LinearOperatorFullMatrix(np.eye(2)).matmul(np.ones((2, 1), np.float32))
    with pytest.raises(ValueError, match="Dimensions 2 and 3 are not compatible"):
        L.LinearOperatorFullMatrix(np.eye(2)).matmul(np.ones((3, 1)))
    with pytest.raises(NotImplementedError, match="expected to be singular"):
        L.LinearOperatorZeros(2).solve(np.ones((2, 1), np.float32))
    with pytest.raises(NotImplementedError, match="Determinant not implemented"):
        L.LinearOperatorFullMatrix(np.ones((2, 3))).determinant()
    with pytest.raises(ValueError, match="Cannot take the Cholesky decomposition"):
        L.LinearOperatorFullMatrix(np.eye(2)).cholesky()
    with pytest.raises(ValueError, match="Cannot take the Inverse: This operator represents a "
                                         "singular matrix"):
        L.LinearOperatorFullMatrix(np.eye(2), is_non_singular=False).inverse()
    with pytest.raises(TypeError, match="Expected all operators to have the same dtype"):
        L.LinearOperatorComposition([L.LinearOperatorFullMatrix(np.eye(2)),
                                     L.LinearOperatorFullMatrix(np.eye(2, dtype=np.float32))])
    with pytest.raises(ValueError, match="Operators are incompatible"):
        L.LinearOperatorFullMatrix(np.eye(2)).matmul(L.LinearOperatorFullMatrix(np.eye(3)))


def test_assertions_run():
    with tf.Graph().as_default():
        good = L.LinearOperatorFullMatrix(spd((3, 3)), is_self_adjoint=True)
        bad = L.LinearOperatorDiag([1.0, 0.0])
        not_symmetric = L.LinearOperatorFullMatrix(np.array([[1.0, 2.0], [0.0, 1.0]]))
        with tf.Session() as sess:
            sess.run([good.assert_positive_definite(), good.assert_non_singular(),
                      good.assert_self_adjoint()])
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match="Singular operator:  Diagonal contained zero values"):
                sess.run(bad.assert_non_singular())
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match="Matrix was not equal to its adjoint"):
                sess.run(not_symmetric.assert_self_adjoint())


def test_conjugate_gradient():
    with tf.Graph().as_default():
        a = spd((2, 4, 4))
        rhs = RNG.uniform(-1, 1, (2, 4))
        op = L.LinearOperatorFullMatrix(a, is_self_adjoint=True, is_positive_definite=True)
        state = L.experimental.conjugate_gradient(op, rhs, tol=1e-12, max_iter=20)
        pre = L.LinearOperatorDiag(1.0 / np.diagonal(a, axis1=-2, axis2=-1),
                                   is_positive_definite=True)
        state_pre = L.experimental.conjugate_gradient(op, rhs, preconditioner=pre, tol=1e-12)
        # One right-hand side for the whole batch of operators, and a starting point.
        state_bcast = L.experimental.conjugate_gradient(op, rhs[0], x=np.zeros((2, 4)),
                                                        tol=1e-12)
        with tf.Session() as sess:
            got, got_pre, got_bcast = sess.run([state, state_pre, state_bcast])
        want = np.linalg.solve(a, rhs[..., None])[..., 0]
        np.testing.assert_allclose(got.x, want, rtol=1e-8, atol=1e-10)
        np.testing.assert_allclose(got_pre.x, want, rtol=1e-8, atol=1e-10)
        np.testing.assert_allclose(got_bcast.x, np.linalg.solve(a, rhs[0][:, None])[..., 0],
                                   rtol=1e-8, atol=1e-10)
        assert got.i <= 20 and sorted(got._fields) == sorted(["i", "x", "r", "p", "gamma"])
    with pytest.raises(ValueError, match="Expected a self-adjoint, positive definite"):
        L.experimental.conjugate_gradient(L.LinearOperatorFullMatrix(np.eye(2)), [1.0, 1.0])
