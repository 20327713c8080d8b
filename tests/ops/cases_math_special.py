"""NumPy/SciPy-checked cases for the special functions (ops/math/special.py).

Values are checked in float32 (SciPy's float64 results rounded; the harness tolerance is
2e-5) and, for the Bessel functions written here rather than taken from JAX, also in
float64; every gradient is checked in float64 against finite differences of SciPy.
"""

import numpy as np
import scipy.special as sp

import tensorflux as tf
from tensorflux._src.ops.op_builder import apply_op
from tests.ops.harness import Case, positive, uniform

ONE = [((2, 3),)]
PAIR = [((2, 3), (3,))]
F32 = (np.float32,)
BOTH = (np.float32, np.float64)


def same(fn):
    """A SciPy function returning the input's dtype (SciPy may widen float32)."""
    return lambda *xs: np.asarray(fn(*xs)).astype(xs[-1].dtype)


def unary(op, fn, expect, dtypes=F32, gen=None, **kw):
    return Case(op, fn, same(expect), ONE, dtypes, gen=gen or uniform(-6, 6), **kw)


def d_gammainc_da(a, x, h=1e-3):
    """d/da P(a, x) by the five-point stencil (error ~1e-13 here)."""
    f = lambda d: sp.gammainc(a + d, x)  # noqa: E731
    return (-f(2 * h) + 8 * f(h) - 8 * f(-h) + f(-2 * h)) / (12 * h)


special = tf.math.special

CASES = [
    unary("BesselI0", tf.math.bessel_i0, sp.i0, gen=uniform(-4, 4)),
    unary("BesselI1", special.bessel_i1, sp.i1, gen=uniform(-4, 4)),
    unary("BesselJ0", special.bessel_j0, sp.j0, BOTH, gen=uniform(-9, 9)),
    unary("BesselJ1", special.bessel_j1, sp.j1, BOTH, gen=uniform(-9, 9)),
    unary("BesselY0", special.bessel_y0, sp.y0, BOTH, gen=positive(0.5, 9)),
    unary("BesselY1", special.bessel_y1, sp.y1, BOTH, gen=positive(0.5, 9)),
    unary("BesselK0", special.bessel_k0, sp.k0, BOTH, gen=positive(0.2, 6)),
    unary("BesselK0e", special.bessel_k0e, sp.k0e, BOTH, gen=positive(0.2, 6)),
    unary("BesselK1", special.bessel_k1, sp.k1, BOTH, gen=positive(0.2, 6)),
    unary("BesselK1e", special.bessel_k1e, sp.k1e, BOTH, gen=positive(0.2, 6)),
    unary("Dawsn", special.dawsn, sp.dawsn),
    unary("Expint", special.expint, sp.expi, gen=uniform(-3, 3), rtol=1e-4),
    unary("FresnelCos", special.fresnel_cos, lambda x: sp.fresnel(x)[1], gen=uniform(-3, 3)),
    unary("FresnelSin", special.fresnel_sin, lambda x: sp.fresnel(x)[0], gen=uniform(-3, 3)),
    unary("Spence", special.spence, sp.spence, gen=positive(0.1, 4)),
    Case("Igamma", tf.math.igamma, same(sp.gammainc), PAIR, F32,
         gen=[positive(0.5, 4), positive(0.1, 5)], rtol=1e-4),
    Case("Igammac", tf.math.igammac, same(sp.gammaincc), PAIR, F32,
         gen=[positive(0.5, 4), positive(0.1, 5)], rtol=1e-4),
    # d/da of P(a, x); TF has no gradient of this op itself.
    Case("IgammaGradA", lambda a, x: apply_op("IgammaGradA", a=a, x=x), d_gammainc_da,
         [((4,), (4,))], (np.float64,), gen=[positive(0.5, 4), positive(0.1, 5)], rtol=1e-9,
         grad=False),
    Case("Betainc", tf.math.betainc, same(sp.betainc), [((2, 3), (2, 3), (2, 3))], F32,
         gen=[positive(0.5, 4), positive(0.5, 4), uniform(0.05, 0.95)], rtol=1e-4,
         grad_inputs=[2]),  # TF has no gradient for a, b
    Case("Betainc", tf.math.betainc, same(sp.betainc), [((), (3,), ())], F32,
         gen=[positive(0.5, 4), positive(0.5, 4), uniform(0.05, 0.95)], rtol=1e-4,
         grad_inputs=[2], name="Betainc(scalars broadcast)"),
    Case("Zeta", tf.math.zeta, same(sp.zeta), PAIR, F32,
         gen=[positive(1.5, 4), positive(0.5, 3)], rtol=1e-4, grad_inputs=[1]),
    # TF's d/dx is 0 where x == 0, so the gradient check keeps x away from 0.
    Case("Xlog1py", tf.math.xlog1py, same(lambda x, y: np.where(x == 0, 0, x * np.log1p(y))),
         PAIR, (np.float32, np.float16),
         gen=[lambda r, s, d: np.where(r.random(s) < 0.3, 0, r.uniform(-2, 2, s)).astype(d),
              uniform(-0.9, 3)], grad_gen=[positive(), uniform(-0.9, 3)]),
    Case("NextAfter", tf.math.nextafter, np.nextafter, PAIR, BOTH,
         gen=[uniform(-2, 2), uniform(-2, 2)]),
]
