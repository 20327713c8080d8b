"""Special functions: incomplete gamma and beta, Hurwitz zeta, Bessel functions, Dawson's
integral, the exponential and Fresnel integrals, Spence's function, xlog1py, nextafter.

One record per TF op type (Igamma, Betainc, BesselJ0, ...). Lowerings use JAX's XLA
kernels where they exist (igamma, betainc, zeta, i0/i1, dawsn, fresnel, expi, spence;
checked against SciPy in float32 and float64) and `bessel_kernels.py` for the Bessel
functions JAX lacks. Gradients are TF's math_grad.py formulas, built from graph ops.
TF has no gradient for the orders of Betainc (a, b) or of Zeta (x): None, as in TF.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.framework.tensor_shape import unknown_shape
from tensorflux._src.ops.array import gather_ops as G
from tensorflux._src.ops.array import generator_ops as Gen
from tensorflux._src.ops.math import bessel_kernels as K
from tensorflux._src.ops.math import math_ops as M
from tensorflux._src.ops.math import reduce_ops as R
from tensorflux._src.ops.math.grad_helpers import unbroadcast
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.op_helpers import kernel_error, merge_shapes
from tensorflux._src.ops.registry import OpDef, register
from tensorflux._src.ops.shape_fns import broadcast_binary, unchanged

__all__ = [
    "bessel_i0", "bessel_i1", "bessel_j0", "bessel_j1", "bessel_k0", "bessel_k0e",
    "bessel_k1", "bessel_k1e", "bessel_y0", "bessel_y1", "betainc", "dawsn", "erfcinv",
    "expint", "fresnel_cos", "fresnel_sin", "igamma", "igammac", "lbeta", "nextafter",
    "reciprocal_no_nan", "spence", "xlog1py", "zeta",
]

_F = _dtypes.FLOATS  # TF's special-function set: bfloat16, half, float32, float64
_F32_64 = (_dtypes.float32, _dtypes.float64)
_sp = jax.scipy.special


def _const(value, like):
    return convert_to_tensor(value, dtype=like.dtype.base_dtype)


def _where_at(x, point, value, otherwise):
    """`value` where x == point, else `otherwise` (TF's imputed limits of gradients)."""
    at = M.equal(x, _const(point, x))
    return G.where_v2(at, _const(value, x) * Gen.ones_like(x), otherwise)


def _safe(x, point):
    """x with `point` replaced by 1, so a formula evaluated there stays finite."""
    return G.where_v2(M.equal(x, _const(point, x)), Gen.ones_like(x), x)


# -- one-argument special functions -----------------------------------------------------------
# Lowerings are jitted: inside a compiled cluster that changes nothing (the call is
# inlined), but an op folded at plan time (constant inputs) then runs as one XLA program
# instead of op by op, which for these long formulas is seconds faster.
def _unary(op_type, lower, grad):
    register(OpDef(op_type, inputs=("x: T",), outputs=("y: T",), attrs={"T": _F},
                   shape=unchanged, lower=jax.jit(K.computed_in_float32(lower)), grad=grad))


def _expint(x):
    # JAX's expi is NaN at 0 and +-inf; Ei(0) = -inf, Ei(inf) = inf, Ei(-inf) = 0 (Cephes).
    y = _sp.expi(x)
    y = jnp.where(x == 0, -jnp.inf, y)
    y = jnp.where(x == jnp.inf, jnp.inf, y)
    return jnp.where(x == -jnp.inf, jnp.zeros_like(y), y)


def _bessel_i1_grad(op, grad):
    # i0(x) - i1(x) / x; TF imputes 1.0 at x = 0, but the limit is 0.5 (used here).
    x, y = op.inputs[0], op.outputs[0]
    sx = _safe(x, 0)
    return [grad * _where_at(x, 0, 0.5, bessel_i0(sx) - M.div(y, sx))]


def _bessel_j1_grad(op, grad):
    x, y = op.inputs[0], op.outputs[0]
    sx = _safe(x, 0)
    return [grad * _where_at(x, 0, 0.5, bessel_j0(sx) - M.div(y, sx))]


def _spence_grad(op, grad):
    x = op.inputs[0]
    sx = _safe(x, 1)
    return [grad * _where_at(x, 1, -1.0, M.log(sx) / (_const(1, x) - sx))]


def _half_pi_x2(x):
    return _const(np.pi / 2, x) * M.square(x)


_unary("BesselI0", _sp.i0, lambda op, g: [g * bessel_i1(op.inputs[0])])
_unary("BesselI1", _sp.i1, _bessel_i1_grad)
_unary("BesselJ0", K.j0, lambda op, g: [g * -bessel_j1(op.inputs[0])])
_unary("BesselJ1", K.j1, _bessel_j1_grad)
_unary("BesselY0", K.y0, lambda op, g: [g * -bessel_y1(op.inputs[0])])
# At 0 these are NaN in TF too: the derivative does not exist there.
_unary("BesselY1", K.y1,
       lambda op, g: [g * (bessel_y0(op.inputs[0]) - M.div(op.outputs[0], op.inputs[0]))])
_unary("BesselK0", K.k0, lambda op, g: [g * -bessel_k1(op.inputs[0])])
_unary("BesselK0e", K.k0e, lambda op, g: [g * (op.outputs[0] - bessel_k1e(op.inputs[0]))])
_unary("BesselK1", K.k1,
       lambda op, g: [g * (-bessel_k0(op.inputs[0]) - M.div(op.outputs[0], op.inputs[0]))])
_unary("BesselK1e", K.k1e,
       lambda op, g: [g * (op.outputs[0] * (_const(1, g) - M.reciprocal(op.inputs[0]))
                           - bessel_k0e(op.inputs[0]))])
_unary("Dawsn", _sp.dawsn,
       lambda op, g: [g * (_const(1, g) - _const(2, g) * op.inputs[0] * op.outputs[0])])
_unary("Expint", _expint, lambda op, g: [g * M.exp(op.inputs[0]) / op.inputs[0]])
_unary("FresnelCos", lambda x: _sp.fresnel(x)[1],
       lambda op, g: [g * M.cos(_half_pi_x2(op.inputs[0]))])
_unary("FresnelSin", lambda x: _sp.fresnel(x)[0],
       lambda op, g: [g * M.sin(_half_pi_x2(op.inputs[0]))])
_unary("Spence", _sp.spence, _spence_grad)


def _special_fn(public_name, op_type, doc):
    def fn(x, name=None):
        with _graph.name_scope(name, public_name, [x]):
            return apply_op(op_type, x=x)
    fn.__name__ = fn.__qualname__ = public_name
    fn.__doc__ = doc
    fn.__module__ = __name__
    return fn


bessel_i0 = _special_fn("bessel_i0", "BesselI0", "Modified Bessel function I0 elementwise.")
bessel_i1 = _special_fn("bessel_i1", "BesselI1", "Modified Bessel function I1 elementwise.")
bessel_j0 = _special_fn("bessel_j0", "BesselJ0", "Bessel function J0 elementwise.")
bessel_j1 = _special_fn("bessel_j1", "BesselJ1", "Bessel function J1 elementwise.")
bessel_y0 = _special_fn("bessel_y0", "BesselY0", "Bessel function Y0 elementwise (-inf at x <= 0).")
bessel_y1 = _special_fn("bessel_y1", "BesselY1", "Bessel function Y1 elementwise (-inf at x <= 0).")
bessel_k0 = _special_fn("bessel_k0", "BesselK0", "Modified Bessel function K0 (inf at x <= 0).")
bessel_k0e = _special_fn("bessel_k0e", "BesselK0e", "exp(x) * K0(x) elementwise.")
bessel_k1 = _special_fn("bessel_k1", "BesselK1", "Modified Bessel function K1 (inf at x <= 0).")
bessel_k1e = _special_fn("bessel_k1e", "BesselK1e", "exp(x) * K1(x) elementwise.")
dawsn = _special_fn("dawsn", "Dawsn", "Dawson's integral exp(-x^2) * int_0^x exp(t^2) dt.")
expint = _special_fn("expint", "Expint", "The exponential integral Ei(x) elementwise.")
fresnel_cos = _special_fn("fresnel_cos", "FresnelCos",
                          "The Fresnel integral int_0^x cos(pi t^2 / 2) dt elementwise.")
fresnel_sin = _special_fn("fresnel_sin", "FresnelSin",
                          "The Fresnel integral int_0^x sin(pi t^2 / 2) dt elementwise.")
spence = _special_fn("spence", "Spence", "Spence's function int_1^x log(t) / (1 - t) dt.")


# -- incomplete gamma, zeta ----------------------------------------------------------------------
def _binary(op_type, lower, inputs, grad, dtypes=_F32_64, not_differentiable=False):
    register(OpDef(op_type, inputs=inputs, outputs=("z: T",), attrs={"T": dtypes},
                   shape=broadcast_binary, lower=lower, grad=grad,
                   not_differentiable=not_differentiable))


def _igamma_partials(op, grad):
    a, x = op.inputs
    partial_a = apply_op("IgammaGradA", a=a, x=x)
    # In log space: Gamma(a) and x^(a-1) overflow long before their ratio does.
    partial_x = M.exp(-x + (a - _const(1, a)) * M.log(x) - M.lgamma(a))
    return [unbroadcast(partial_a * grad, a), unbroadcast(partial_x * grad, x)]


def _igammac_grad(op, grad):
    ga, gx = _igamma_partials(op, grad)
    return [-ga, -gx]


def _zeta_grad(op, grad):
    x, q = op.inputs  # no gradient for the order x, as in TF
    return [None, unbroadcast(-x * zeta(x + _const(1, x), q) * grad, q)]


def _broadcast_call(fn):
    return jax.jit(lambda *args: fn(*jnp.broadcast_arrays(*args)))


_binary("Igamma", _broadcast_call(jax.lax.igamma), ("a: T", "x: T"), _igamma_partials)
_binary("Igammac", _broadcast_call(jax.lax.igammac), ("a: T", "x: T"), _igammac_grad)
# TF registers no gradient for IgammaGradA: a second derivative in a raises LookupError.
_binary("IgammaGradA", _broadcast_call(jax.lax.igamma_grad_a), ("a: T", "x: T"), None)
_binary("Zeta", _broadcast_call(_sp.zeta), ("x: T", "q: T"), _zeta_grad)


def igamma(a, x, name=None):
    """The regularized lower incomplete gamma function P(a, x)."""
    return apply_op("Igamma", name=name, a=a, x=x)


def igammac(a, x, name=None):
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x)."""
    return apply_op("Igammac", name=name, a=a, x=x)


def zeta(x, q, name=None):
    """The Hurwitz zeta function sum_n (n + q)^-x."""
    return apply_op("Zeta", name=name, x=x, q=q)


# -- Betainc -------------------------------------------------------------------------------------
def _betainc_shape(op):
    # TF's rule: every non-scalar input has one common shape; scalars are broadcast.
    out, non_scalar, scalars = None, None, 0
    for t in op.inputs:
        s = t.shape
        if s.ndims is None:
            non_scalar = s
        elif s.ndims == 0:
            scalars += 1
        else:
            out = s if out is None else merge_shapes(out, s)
            non_scalar = out
    if scalars == 3:
        return op.inputs[0].shape
    if scalars == 2:
        return non_scalar
    return out if out is not None else unknown_shape()


def _betainc_lower(a, b, x):
    shapes = [np.shape(v) for v in (a, b, x)]
    full = [s for s in shapes if s != ()]
    if any(s != full[0] for s in full):
        raise kernel_error("Shapes of a, b, and x are inconsistent: "
                           + " vs. ".join("[" + ",".join(map(str, s)) + "]" for s in shapes))
    return _betainc(a, b, x)


_betainc = _broadcast_call(_sp.betainc)


def _betainc_grad(op, grad):
    # Only x, as in TF. xlog1py/xlogy keep the tails finite when a or b is 1.
    a, b, x = op.inputs
    log_beta = M.lgamma(a) + M.lgamma(b) - M.lgamma(a + b)
    one = _const(1, x)
    partial_x = M.exp(xlog1py(b - one, -x) + M.xlogy(a - one, x) - log_beta)
    # Summed to x's shape against the result's (TF reduces against a's shape, which fails
    # when only b is a vector).
    return [None, None, unbroadcast(partial_x * grad, x)]


register(OpDef("Betainc", inputs=("a: T", "b: T", "x: T"), outputs=("z: T",),
               attrs={"T": _F32_64}, shape=_betainc_shape, lower=_betainc_lower,
               grad=_betainc_grad))


def betainc(a, b, x, name=None):
    """The regularized incomplete beta function I_x(a, b)."""
    return apply_op("Betainc", name=name, a=a, b=b, x=x)


# -- xlog1py, nextafter --------------------------------------------------------------------------
def _xlog1py_lower(x, y):
    value = x * jnp.log1p(y)
    return jnp.where(x == 0, jnp.zeros_like(value), value)


def _xlog1py_grad(op, grad):
    x, y = op.inputs
    not_zero_x = M.cast(M.not_equal(x, _const(0, x)), x.dtype)
    return [unbroadcast(xlog1py(not_zero_x, y) * grad, x),
            unbroadcast(M.xdivy(x, y + _const(1, y)) * grad, y)]


_binary("Xlog1py", _xlog1py_lower, ("x: T", "y: T"), _xlog1py_grad,
        dtypes=(_dtypes.float16, _dtypes.float32, _dtypes.float64) + _dtypes.COMPLEX)
register(OpDef("NextAfter", inputs=("x1: T", "x2: T"), outputs=("output: T",),
               attrs={"T": (_dtypes.float64, _dtypes.float32)},
               shape=broadcast_binary, lower=_broadcast_call(jax.lax.nextafter),
               not_differentiable=True))


def xlog1py(x, y, name=None):
    """x * log1p(y), and 0 where x == 0 (whatever y is)."""
    with _graph.name_scope(name, "xlog1py", [x]):
        return apply_op("Xlog1py", x=x, y=y)


def nextafter(x1, x2, name=None):
    """The next representable value after x1 in the direction of x2."""
    return apply_op("NextAfter", name=name, x1=x1, x2=x2)


# -- composites ------------------------------------------------------------------------------
def erfcinv(x, name=None):
    """The inverse of erfc: erfcinv(erfc(x)) == x, for x in (0, 2)."""
    with _graph.name_scope(name, "erfcinv", [x]):
        x = convert_to_tensor(x, name="start")
        return -M.ndtri(_const(0.5, x) * x) * _const(np.sqrt(0.5), x)


def lbeta(x, name=None):
    """log|Beta(x)| over the last axis: sum(lgamma(x)) - lgamma(sum(x)).

    An empty last axis gives -inf (lgamma(0) is inf), as in TF."""
    with _graph.name_scope(name, "lbeta", [x]):
        x = convert_to_tensor(x, name="x")
        log_prod_gamma_x = R.reduce_sum(M.lgamma(x), axis=[-1])
        log_gamma_sum_x = M.lgamma(R.reduce_sum(x, axis=[-1]))
        return log_prod_gamma_x - log_gamma_sum_x


def reciprocal_no_nan(x, name=None):
    """1 / x, and 0 where x == 0."""
    with _graph.name_scope(name, "reciprocal_no_nan", [x]) as scope:
        x = convert_to_tensor(x, name="x")
        one = convert_to_tensor(1, dtype=x.dtype.base_dtype, name="one")
        return apply_op("DivNoNan", name=scope, x=one, y=x)
