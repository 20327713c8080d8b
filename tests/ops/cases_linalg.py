"""NumPy-checked cases for matrix products (linalg_ops.py)."""

import numpy as np

import tensorflux as tf
from tests.ops.harness import Case

FLOAT = (np.float32, np.float64)
CPLX = (np.complex64, np.complex128)


def T(x):
    return np.swapaxes(x, -1, -2)


def H(x):
    return np.conj(T(x))


def complex_parts(op, f, npf, shapes, name):
    """A complex product seen through real tensors (the real and imaginary parts of each
    operand in, of the result out), so finite differences check its complex gradient."""
    def fn(ar, ai, br, bi):
        out = f(tf.complex(ar, ai), tf.complex(br, bi))
        return [tf.real(out), tf.imag(out)]

    def expect(ar, ai, br, bi):
        out = npf(ar + 1j * ai, br + 1j * bi)
        return [np.real(out), np.imag(out)]

    a, b = shapes
    return Case(op, fn, expect, [(a, a, b, b)], (np.float64,), name=name)


CASES = [
    # -- MatMul: rank 2, with transposes and adjoints ------------------------------------------
    Case("MatMul", tf.matmul, np.matmul, [((2, 3), (3, 4)), ((1, 5), (5, 1))],
         FLOAT + (np.int32, np.int64, np.complex64)),
    Case("MatMul", lambda a, b: a @ b, np.matmul, [((2, 3), (3, 4))], (np.float32,),
         name="MatMul(operator)"),
    Case("MatMul", lambda a, b: tf.matmul(a, b, transpose_a=True, transpose_b=True),
         lambda a, b: T(a) @ T(b), [((3, 2), (4, 3))], FLOAT, name="MatMul(transposes)"),
    Case("MatMul", lambda a, b: tf.matmul(a, b, adjoint_a=True),
         lambda a, b: H(a) @ b, [((3, 2), (3, 4))], CPLX, name="MatMul(adjoint_a)"),
    Case("MatMul", lambda a, b: tf.matmul(a, b, transpose_b=True, a_is_sparse=True),
         lambda a, b: a @ T(b), [((2, 3), (4, 3))], CPLX + (np.float32,),
         name="MatMul(transpose_b, sparse hint)"),
    Case("MatMul", lambda a, b: tf.matmul(a, b, adjoint_b=True), lambda a, b: a @ T(b),
         [((2, 3), (4, 3))], (np.float32,), name="MatMul(adjoint of real)"),
    Case("MatMul", lambda a, b: tf.matmul(a, b, transpose_a=True), lambda a, b: T(a) @ b,
         [((3, 2), (3, 4))], (np.float64,), name="MatMul(transpose_a)"),
    complex_parts("MatMul", lambda a, b: tf.matmul(a, b, adjoint_a=True),
                  lambda a, b: H(a) @ b, [(3, 2), (3, 4)], name="MatMul(adjoint_a, complex)"),
    # -- BatchMatMulV2: batches broadcast --------------------------------------------------------
    Case("BatchMatMulV2", tf.matmul, np.matmul,
         [((2, 2, 3), (2, 3, 4)), ((2, 1, 3, 4), (5, 4, 2)), ((3, 4), (2, 4, 5))],
         FLOAT + (np.int32,)),
    Case("BatchMatMulV2", lambda a, b: tf.matmul(a, b, transpose_a=True, adjoint_b=True),
         lambda a, b: T(a) @ H(b), [((2, 3, 2), (2, 4, 3))], CPLX,
         name="BatchMatMulV2(transpose_a, adjoint_b)"),
    Case("BatchMatMulV2", lambda a, b: tf.matmul(a, b, transpose_b=True),
         lambda a, b: a @ T(b), [((2, 2, 3), (4, 3))], (np.float64,),
         name="BatchMatMulV2(rank 3 by rank 2)"),
    Case("BatchMatMulV2", tf.matmul, np.matmul, [((2, 1, 3, 4), (5, 4, 2))], (np.float64,),
         name="BatchMatMulV2(broadcast batch)"),
    Case("BatchMatMulV2", lambda a, b: tf.matmul(a, b, adjoint_a=True, adjoint_b=True),
         lambda a, b: T(a) @ T(b), [((3, 4, 2), (1, 5, 4))], (np.float64,),
         name="BatchMatMulV2(adjoints, broadcast batch)"),
    complex_parts("BatchMatMulV2", lambda a, b: tf.matmul(a, b, adjoint_b=True),
                  lambda a, b: a @ H(b), [(2, 2, 3), (1, 4, 3)],
                  name="BatchMatMulV2(adjoint_b, complex)"),
    # -- tensordot: transpose + reshape + MatMul --------------------------------------------------
    Case("MatMul", lambda a, b: tf.tensordot(a, b, 1), lambda a, b: np.tensordot(a, b, 1),
         [((2, 3), (3, 4)), ((2, 3, 4), (4, 5))], FLOAT, name="MatMul(tensordot axes=1)"),
    Case("MatMul", lambda a, b: tf.tensordot(a, b, [[0, 2], [1, 0]]),
         lambda a, b: np.tensordot(a, b, [[0, 2], [1, 0]]), [((2, 3, 4), (4, 2, 5))],
         (np.float32, np.int32), name="MatMul(tensordot axis lists)"),
    Case("MatMul", lambda a, b: tf.tensordot(a, b, 0), lambda a, b: np.tensordot(a, b, 0),
         [((2,), (3,))], (np.float32,), name="MatMul(tensordot outer product)"),
    # -- Einsum ------------------------------------------------------------------------------------
    Case("Einsum", lambda a, b: tf.einsum("ij,jk->ik", a, b),
         lambda a, b: np.einsum("ij,jk->ik", a, b), [((2, 3), (3, 4))], FLOAT + CPLX),
    Case("Einsum", lambda a, b: tf.einsum("bij,bkj->bik", a, b),
         lambda a, b: np.einsum("bij,bkj->bik", a, b), [((2, 3, 4), (2, 5, 4))], FLOAT,
         name="Einsum(batch)"),
    Case("Einsum", lambda a, b: tf.einsum("...ij,...jk->...ik", a, b),
         lambda a, b: np.einsum("...ij,...jk->...ik", a, b),
         [((2, 1, 3, 4), (5, 4, 2)), ((3, 4), (4, 2))], (np.float32,),
         name="Einsum(ellipsis broadcast)"),
    Case("Einsum", lambda a: tf.einsum("ij->ji", a), lambda a: a.T, [((2, 3),)],
         (np.float32, np.int32), name="Einsum(transpose)"),
    Case("Einsum", lambda a: tf.einsum("ii", a), lambda a: np.trace(a), [((3, 3),)],
         (np.float64,), name="Einsum(implicit trace)"),
    Case("Einsum", lambda a, b: tf.einsum("i,j", a, b), lambda a, b: np.outer(a, b),
         [((3,), (4,))], (np.float32,), name="Einsum(implicit outer)"),
    Case("Einsum", lambda a: tf.einsum("abc->b", a), lambda a: np.sum(a, (0, 2)),
         [((2, 3, 4),)], (np.float32,), name="Einsum(sum out)"),
    Case("Einsum", lambda a: tf.einsum("ii->i", a), np.diag, [((3, 3),)], (np.float64,),
         name="Einsum(diagonal)"),
    Case("Einsum", lambda a: tf.einsum("...ii->...i", a),
         lambda a: np.einsum("...ii->...i", a), [((2, 3, 3),)], (np.float64,),
         name="Einsum(batch diagonal)"),
    Case("Einsum", lambda a, b: tf.einsum("abc,cd->ad", a, b),
         lambda a, b: np.einsum("abc,cd->ad", a, b), [((2, 3, 4), (4, 5))], (np.float64,),
         name="Einsum(label summed in one operand)"),
    Case("Einsum", lambda a, b: tf.einsum("ij,jj->ij", a, b),
         lambda a, b: np.einsum("ij,jj->ij", a, b), [((2, 3), (3, 3))], (np.float64,),
         name="Einsum(repeated label in an operand)"),
    Case("Einsum", lambda a, b: tf.einsum("...ij,jk->...ik", a, b),
         lambda a, b: np.einsum("...ij,jk->...ik", a, b), [((2, 3, 4), (4, 5))],
         (np.float64,), name="Einsum(ellipsis in one operand)"),
    complex_parts("Einsum", lambda a, b: tf.einsum("ij,kj->ik", a, b),
                  lambda a, b: np.einsum("ij,kj->ik", a, b), [(2, 3), (4, 3)],
                  name="Einsum(complex)"),
    Case("Einsum", lambda a, b, c: tf.einsum("ij,jk,kl->il", a, b, c),
         lambda a, b, c: a @ b @ c, [((2, 3), (3, 4), (4, 5))], FLOAT,
         name="Einsum(three operands)"),
]
