"""The operator algebra of tf.linalg (TF's adjoint/inverse/cholesky/matmul/solve
registrations): structured results where the structure allows, generic wrappers
(LinearOperatorAdjoint, LinearOperatorInversion, LinearOperatorComposition, a Cholesky
factor as LinearOperatorLowerTriangular) otherwise."""

from __future__ import annotations

from tensorflux._src.ops.linalg.factor_ops import cholesky
from tensorflux._src.ops.linalg.linear_operator import base as _b
from tensorflux._src.ops.linalg.linear_operator.base import LinearOperator
from tensorflux._src.ops.linalg.linear_operator.basic import (LinearOperatorDiag,
                                                              LinearOperatorIdentity,
                                                              LinearOperatorLowerTriangular,
                                                              LinearOperatorScaledIdentity)
from tensorflux._src.ops.linalg.linear_operator.composite import (LinearOperatorAdjoint,
                                                                  LinearOperatorBlockDiag,
                                                                  LinearOperatorComposition,
                                                                  LinearOperatorInversion,
                                                                  LinearOperatorKronecker)
from tensorflux._src.ops.linalg.linear_operator.structured import (LinearOperatorHouseholder,
                                                                   _BaseLinearOperatorCirculant)
from tensorflux._src.ops.math import math_ops


def _register(table, *types):
    def decorate(fn):
        table[types] = fn
        return fn
    return decorate


def _hints(op, **overrides):
    hints = dict(is_non_singular=op.is_non_singular, is_self_adjoint=op.is_self_adjoint,
                 is_positive_definite=op.is_positive_definite, is_square=op.is_square)
    hints.update(overrides)
    return hints


def _circulant_like(op, spectrum, **hints):
    return type(op)(spectrum, input_output_dtype=op.dtype, **_hints(op, **hints))


# -- adjoint ---------------------------------------------------------------------------------
@_register(_b.ADJOINT, LinearOperator)
def _adjoint(op):
    return LinearOperatorAdjoint(op)


@_register(_b.ADJOINT, LinearOperatorAdjoint)
def _adjoint_adjoint(op):
    return op.operator


@_register(_b.ADJOINT, LinearOperatorDiag)
def _adjoint_diag(op):
    return LinearOperatorDiag(math_ops.conj(op.diag), **_hints(op))


@_register(_b.ADJOINT, LinearOperatorScaledIdentity)
def _adjoint_scaled_identity(op):
    return LinearOperatorScaledIdentity(op._num_rows, math_ops.conj(op.multiplier),
                                        **_hints(op))


@_register(_b.ADJOINT, LinearOperatorKronecker)
def _adjoint_kronecker(op):
    return LinearOperatorKronecker([o.adjoint() for o in op.operators], **_hints(op))


@_register(_b.ADJOINT, LinearOperatorBlockDiag)
def _adjoint_block_diag(op):
    return LinearOperatorBlockDiag([o.adjoint() for o in op.operators], **_hints(op))


@_register(_b.ADJOINT, _BaseLinearOperatorCirculant)
def _adjoint_circulant(op):
    return _circulant_like(op, math_ops.conj(op.spectrum))


@_register(_b.ADJOINT, LinearOperatorInversion)
def _adjoint_inversion(op):
    return LinearOperatorInversion(op.operator.adjoint())


# -- inverse ---------------------------------------------------------------------------------
@_register(_b.INVERSE, LinearOperator)
def _inverse(op):
    return LinearOperatorInversion(op)


@_register(_b.INVERSE, LinearOperatorInversion)
def _inverse_inversion(op):
    return op.operator


@_register(_b.INVERSE, LinearOperatorIdentity)
@_register(_b.INVERSE, LinearOperatorHouseholder)
def _inverse_self(op):
    return op


@_register(_b.INVERSE, LinearOperatorDiag)
def _inverse_diag(op):
    return LinearOperatorDiag(1.0 / op.diag, **_hints(op))


@_register(_b.INVERSE, LinearOperatorScaledIdentity)
def _inverse_scaled_identity(op):
    return LinearOperatorScaledIdentity(op._num_rows, 1.0 / op.multiplier, **_hints(op))


@_register(_b.INVERSE, LinearOperatorKronecker)
def _inverse_kronecker(op):
    return LinearOperatorKronecker([o.inverse() for o in op.operators], **_hints(op))


@_register(_b.INVERSE, LinearOperatorBlockDiag)
def _inverse_block_diag(op):
    return LinearOperatorBlockDiag([o.inverse() for o in op.operators], **_hints(op))


@_register(_b.INVERSE, _BaseLinearOperatorCirculant)
def _inverse_circulant(op):
    return _circulant_like(op, 1.0 / op.spectrum)


@_register(_b.INVERSE, LinearOperatorAdjoint)
def _inverse_adjoint(op):
    return op.operator.inverse().adjoint()


# -- cholesky --------------------------------------------------------------------------------
@_register(_b.CHOLESKY, LinearOperator)
def _cholesky(op):
    return LinearOperatorLowerTriangular(cholesky(op.to_dense()), is_non_singular=True,
                                         is_self_adjoint=False, is_square=True)


@_register(_b.CHOLESKY, LinearOperatorIdentity)
def _cholesky_identity(op):
    return op


@_register(_b.CHOLESKY, LinearOperatorDiag)
def _cholesky_diag(op):
    return LinearOperatorDiag(math_ops.sqrt(op.diag), is_non_singular=True,
                              is_self_adjoint=True, is_positive_definite=True, is_square=True)


@_register(_b.CHOLESKY, LinearOperatorScaledIdentity)
def _cholesky_scaled_identity(op):
    return LinearOperatorScaledIdentity(op._num_rows, math_ops.sqrt(op.multiplier),
                                        is_non_singular=True, is_self_adjoint=True,
                                        is_positive_definite=True, is_square=True)


@_register(_b.CHOLESKY, LinearOperatorKronecker)
def _cholesky_kronecker(op):
    return LinearOperatorKronecker([o.cholesky() for o in op.operators],
                                   is_non_singular=True, is_square=True)


@_register(_b.CHOLESKY, LinearOperatorBlockDiag)
def _cholesky_block_diag(op):
    return LinearOperatorBlockDiag([o.cholesky() for o in op.operators],
                                   is_non_singular=True, is_square=True)


# -- matmul and solve of two operators -------------------------------------------------------
@_register(_b.MATMUL, LinearOperator, LinearOperator)
def _matmul(left, right):
    return LinearOperatorComposition([left, right])


@_register(_b.MATMUL, LinearOperatorIdentity, LinearOperator)
def _matmul_identity_left(left, right):
    return right


@_register(_b.MATMUL, LinearOperator, LinearOperatorIdentity)
def _matmul_identity_right(left, right):
    return left


@_register(_b.MATMUL, LinearOperatorIdentity, LinearOperatorIdentity)
def _matmul_identities(left, right):
    return right


@_register(_b.MATMUL, LinearOperatorDiag, LinearOperatorDiag)
def _matmul_diags(left, right):
    both = left.is_non_singular and right.is_non_singular
    return LinearOperatorDiag(left.diag * right.diag, is_non_singular=both or None)


@_register(_b.MATMUL, LinearOperatorScaledIdentity, LinearOperatorScaledIdentity)
def _matmul_scaled_identities(left, right):
    return LinearOperatorScaledIdentity(left._num_rows, left.multiplier * right.multiplier)


@_register(_b.MATMUL, _BaseLinearOperatorCirculant, _BaseLinearOperatorCirculant)
def _matmul_circulants(left, right):
    if left.block_depth != right.block_depth:
        return LinearOperatorComposition([left, right])
    return type(left)(left.spectrum * right.spectrum, input_output_dtype=left.dtype)


@_register(_b.SOLVE, LinearOperator, LinearOperator)
def _solve(left, right):
    return LinearOperatorComposition([left.inverse(), right])


@_register(_b.SOLVE, LinearOperatorIdentity, LinearOperator)
def _solve_identity(left, right):
    return right


@_register(_b.SOLVE, LinearOperatorDiag, LinearOperatorDiag)
def _solve_diags(left, right):
    return LinearOperatorDiag(right.diag / left.diag)
