"""`tf.math`: the elementwise, reduction and product ops under TF1.15's math namespace."""

from tensorflux._src.ops.linalg_ops import matmul  # noqa: F401
from tensorflux._src.ops.math_ops import *  # noqa: F401,F403
from tensorflux._src.ops.nn_ops import log_sigmoid  # noqa: F401
from tensorflux._src.ops.reduce_ops import *  # noqa: F401,F403
from tensorflux._src.ops.segment_ops import *  # noqa: F401,F403
from tensorflux._src.ops.sort_ops import top_k  # noqa: F401
from tensorflux._src.ops.math.special import *  # noqa: F401,F403
from tensorflux.math import special  # noqa: F401,E402
from tensorflux._src.ops.math.segment_reductions import *  # noqa: F401,F403,E402
