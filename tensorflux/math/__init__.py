"""`tf.math`: the elementwise, reduction and product ops under TF1.15's math namespace,
plus segment reductions, special functions, counting and sequences (`tf.math.special` is
the submodule of TF's special functions)."""

from tensorflux._src.ops.linalg.linalg_ops import matmul  # noqa: F401
from tensorflux._src.ops.math.math_ops import *  # noqa: F401,F403
from tensorflux._src.ops.math.complex_parts import *  # noqa: F401,F403
from tensorflux._src.ops.math.math_ops import div_no_nan as divide_no_nan  # noqa: F401
from tensorflux._src.ops.nn.nn_norm_ops import l2_normalize  # noqa: F401
from tensorflux._src.ops.nn.nn_ops import (  # noqa: F401
    log_sigmoid, log_softmax, softmax, softplus, softsign, zero_fraction,
)
from tensorflux._src.ops.array.array_ops import invert_permutation  # noqa: F401
from tensorflux._src.ops.math.reduce_ops import *  # noqa: F401,F403
from tensorflux._src.ops.math.segment_ops import *  # noqa: F401,F403
from tensorflux._src.ops.array.sort_ops import top_k  # noqa: F401
from tensorflux._src.ops.math.accumulate import *  # noqa: F401,F403
from tensorflux._src.ops.math.approx_topk import approx_max_k, approx_min_k, in_top_k  # noqa
from tensorflux._src.ops.math.counting import *  # noqa: F401,F403
from tensorflux._src.ops.math.segment_reductions import *  # noqa: F401,F403
from tensorflux._src.ops.math.sobol import *  # noqa: F401,F403
from tensorflux._src.ops.math.special import (  # noqa: F401
    bessel_i0, bessel_i1, betainc, erfcinv, igamma, igammac, lbeta, nextafter,
    reciprocal_no_nan, xlog1py, zeta,
)
from tensorflux.math import special  # noqa: F401,E402
