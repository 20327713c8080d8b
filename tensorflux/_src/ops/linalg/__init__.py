"""tf.linalg: op records (lower files) and the public functions built on them.

    linalg_ops.py       MatMul, BatchMatMulV2, Einsum: matmul, tensordot, einsum; eye
    decomposition_ops.py  Qr
    _common.py          dtype sets, shape rules and run-time checks the records share
    diag_ops.py         MatrixDiag/DiagPart/SetDiag (V1 and V2), MatrixBandPart
    factor_ops.py       Cholesky, MatrixInverse, determinants, solves, Lu, MatrixSolveLs
    spectral_ops.py     SelfAdjointEigV2, Svd, MatrixSquareRoot/Exponential/Logarithm
    tridiagonal_ops.py  TridiagonalSolve, TridiagonalMatMul, eigh_tridiagonal
    linalg_impl.py      compositions: norm, trace, lstsq, pinv, lu_solve, cross, ...
    conjugate_gradient.py, linear_operator/  (tf.linalg.LinearOperator*)

Imports nothing: a family is a folder (the public namespace tensorflux/linalg imports
its modules).
"""
