"""`tf.math.special`: Bessel functions and the other special functions of TF's
special_math_ops (the same objects as their `tf.math` names where TF has both)."""

from tensorflux._src.ops.math.special import (  # noqa: F401
    bessel_i0, bessel_i1, bessel_j0, bessel_j1, bessel_k0, bessel_k0e, bessel_k1, bessel_k1e,
    bessel_y0, bessel_y1, dawsn, expint, fresnel_cos, fresnel_sin, spence,
)
from tensorflux._src.ops.math.math_ops import bessel_i0e, bessel_i1e  # noqa: F401
