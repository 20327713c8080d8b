"""tf.linalg.LinearOperator and its subclasses.

    base.py           LinearOperator: public methods, hints, checks, dense fallbacks
    basic.py          FullMatrix, Diag, LowerTriangular, Identity, ScaledIdentity, Zeros
    structured.py     Circulant(2D, 3D), Toeplitz, Tridiag, Householder, Permutation
    composite.py      Composition, Kronecker, BlockDiag, BlockLowerTriangular,
                      LowRankUpdate, Adjoint, Inversion
    registrations.py  adjoint/inverse/cholesky/matmul/solve between operator types
"""

from tensorflux._src.ops.linalg.linear_operator import registrations  # noqa: F401
from tensorflux._src.ops.linalg.linear_operator.base import LinearOperator  # noqa: F401
from tensorflux._src.ops.linalg.linear_operator.basic import *  # noqa: F401,F403
from tensorflux._src.ops.linalg.linear_operator.composite import *  # noqa: F401,F403
from tensorflux._src.ops.linalg.linear_operator.structured import *  # noqa: F401,F403
