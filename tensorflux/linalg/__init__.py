"""`tf.linalg`: TF 1.15's linear-algebra namespace.

Aliases are the same objects as their top-level names (`tf.linalg.inv is
tf.matrix_inverse`, `tf.linalg.matmul is tf.matmul`, ...).
"""

from tensorflux._src.ops.array.array_ops import diag as tensor_diag  # noqa: F401
from tensorflux._src.ops.array.array_ops import diag_part as tensor_diag_part  # noqa: F401
from tensorflux._src.ops.array.array_ops import matrix_transpose  # noqa: F401
from tensorflux._src.ops.array.array_ops import matrix_transpose as transpose  # noqa: F401
from tensorflux._src.ops.math.clip_ops import global_norm  # noqa: F401
from tensorflux._src.ops.linalg.decomposition_ops import qr  # noqa: F401
from tensorflux._src.ops.linalg.linalg_ops import eye  # noqa: F401
from tensorflux._src.ops.linalg.diag_ops import matrix_band_part as band_part  # noqa: F401
from tensorflux._src.ops.linalg.diag_ops import matrix_diag as diag  # noqa: F401
from tensorflux._src.ops.linalg.diag_ops import matrix_diag_part as diag_part  # noqa: F401
from tensorflux._src.ops.linalg.diag_ops import matrix_set_diag as set_diag  # noqa: F401
from tensorflux._src.ops.linalg.factor_ops import (  # noqa: F401
    cholesky, cholesky_solve, lu,
)
from tensorflux._src.ops.linalg.factor_ops import log_matrix_determinant as slogdet  # noqa
from tensorflux._src.ops.linalg.factor_ops import matrix_determinant as det  # noqa: F401
from tensorflux._src.ops.linalg.factor_ops import matrix_inverse as inv  # noqa: F401
from tensorflux._src.ops.linalg.factor_ops import matrix_solve as solve  # noqa: F401
from tensorflux._src.ops.linalg.factor_ops import matrix_solve_ls as lstsq  # noqa: F401
from tensorflux._src.ops.linalg.factor_ops import (  # noqa: F401
    matrix_triangular_solve as triangular_solve,
)
from tensorflux._src.ops.linalg.linalg_impl import (  # noqa: F401
    adjoint, cross, logdet, lu_matrix_inverse, lu_reconstruct, lu_solve, matrix_rank,
    matvec, norm, normalize, pinv, trace,
)
from tensorflux._src.ops.linalg.spectral_ops import matrix_exponential as expm  # noqa: F401
from tensorflux._src.ops.linalg.spectral_ops import matrix_logarithm as logm  # noqa: F401
from tensorflux._src.ops.linalg.spectral_ops import matrix_square_root as sqrtm  # noqa: F401
from tensorflux._src.ops.linalg.spectral_ops import self_adjoint_eig as eigh  # noqa: F401
from tensorflux._src.ops.linalg.spectral_ops import (  # noqa: F401
    self_adjoint_eigvals as eigvalsh, svd,
)
from tensorflux._src.ops.linalg.tridiagonal_ops import (  # noqa: F401
    eigh_tridiagonal, tridiagonal_matmul, tridiagonal_solve,
)
from tensorflux._src.ops.linalg.linear_operator import (  # noqa: F401
    LinearOperator, LinearOperatorAdjoint, LinearOperatorBlockDiag,
    LinearOperatorBlockLowerTriangular, LinearOperatorCirculant, LinearOperatorCirculant2D,
    LinearOperatorCirculant3D, LinearOperatorComposition, LinearOperatorDiag,
    LinearOperatorFullMatrix, LinearOperatorHouseholder, LinearOperatorIdentity,
    LinearOperatorInversion, LinearOperatorKronecker, LinearOperatorLowerTriangular,
    LinearOperatorLowRankUpdate, LinearOperatorPermutation, LinearOperatorScaledIdentity,
    LinearOperatorToeplitz, LinearOperatorTridiag, LinearOperatorZeros,
)
from tensorflux._src.ops.linalg.linalg_ops import einsum, matmul, tensordot  # noqa: F401
from tensorflux._src.ops.nn.nn_norm_ops import l2_normalize  # noqa: F401
from tensorflux.linalg import experimental  # noqa: F401
