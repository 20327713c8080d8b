"""NumPy-checked cases for Bucketize (ops/math/bucketize.py, TF's math_ops._bucketize,
which tf.feature_column.bucketized_column uses)."""

import numpy as np

from tensorflux._src.ops.math.bucketize import bucketize
from tests.ops.harness import Case, fixed, uniform

BOUNDS = [-2.0, -0.5, 0.0, 1.25, 2.5]


def buckets(x, bounds=BOUNDS):
    """The number of boundaries at or below each value, compared as TF's kernel does:
    float32 boundaries, double inputs against them widened, the others as float32."""
    b = np.asarray(bounds, np.float32)
    if x.dtype == np.float64:
        return np.searchsorted(b.astype(np.float64), x, side="right").astype(np.int32)
    return np.searchsorted(b, x.astype(np.float32), side="right").astype(np.int32)


CASES = [
    Case("Bucketize", lambda x: bucketize(x, BOUNDS), buckets, [((3, 4),)],
         (np.float32, np.float64, np.int32, np.int64), gen=uniform(-3, 3), grad=False),
    # Values on the boundaries go to the bucket the boundary starts; 0.1 as a double is
    # below the float32 boundary 0.1 (0.10000000149...), as in TF's kernel.
    Case("Bucketize", lambda x: bucketize(x, [0, 0.1, 10, 100]),
         lambda x: buckets(x, [0, 0.1, 10, 100]), [((6,),)], (np.float64, np.float32),
         gen=fixed([-5, 0, 0.1, 10, 10000, 99.5]), grad=False,
         name="Bucketize(values on boundaries)"),
]
