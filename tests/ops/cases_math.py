"""NumPy-checked cases for elementwise math ops (math_ops.py).

Expectations are NumPy (or SciPy's special functions) written out here, with TF's
integer semantics spelled out where they differ from NumPy's (C-style truncating
division, sign of NaN).
"""

import numpy as np
import scipy.special

import tensorflux as tf
from tensorflux._src.ops.op_builder import apply_op
from tests.ops.harness import Case, nonzero, positive, uniform

REAL = (np.float32, np.float64, np.int32, np.int64)
FLOAT = (np.float32, np.float64)
CPLX = (np.complex64, np.complex128)
# Broadcasting is one shape function for every binary op: the full set of shapes is
# checked on a few ops, one broadcasting pair on the rest (each pair costs a compile).
BCAST = [((3,), (3,)), ((2, 3), (3,)), ((4, 1, 3), (2, 1)), ((), (2, 2))]
PAIR = [((2, 1), (3,))]
ONE = [((2, 3),)]


def c_div(x, y):
    """Integer division truncating toward zero (C, and TF's integer kernels)."""
    q = np.abs(x) // np.abs(y)
    return np.where((x < 0) != (y < 0), -q, q).astype(x.dtype)


def halves(rng, shape, dtype):
    """Multiples of 0.5, so rounding ties are exercised."""
    return (rng.integers(-10, 11, size=shape) / 2).astype(dtype)


def with_zeros(gen):
    def make(rng, shape, dtype):
        x = gen(rng, shape, dtype)
        return np.where(rng.random(shape) < 0.3, np.zeros_like(x), x).astype(dtype)
    return make


def specials(rng, shape, dtype):
    """Finite values mixed with nan, inf and -inf."""
    x = uniform()(rng, shape, dtype)
    pick = rng.integers(0, 4, size=shape)
    return np.select([pick == 1, pick == 2, pick == 3], [np.nan, np.inf, -np.inf], x).astype(
        dtype)


def unary(op, fn, expect, dtypes=FLOAT, gen=None, shapes=ONE, **kw):
    return Case(op, fn, expect, shapes, dtypes, gen=gen or uniform(), **kw)


def orders(rng, shape, dtype):
    """Polygamma orders: small non-negative integers."""
    return rng.integers(0, 4, size=shape).astype(dtype)


def right_half(rng, shape, dtype):
    """Positive values: real parts that keep complex inputs off the branch cuts of sqrt,
    log and angle (the negative real axis)."""
    return uniform(0.5, 2.5)(rng, shape, dtype)


def via_parts(op, f, npf, n=1, shape=(2, 3), real_gen=None, complex_out=True, **kw):
    """A complex op seen through real tensors: inputs are the real and imaginary parts of
    its n operands, outputs the parts of its result. Values and, through the parts, the
    complex gradient convention (grad * conj(f'(z))) are then checked by finite
    differences like any real op."""
    def fn(*parts):
        out = f(*[tf.complex(parts[2 * i], parts[2 * i + 1]) for i in range(n)])
        return [tf.real(out), tf.imag(out)] if complex_out else out

    def expect(*parts):
        out = npf(*[parts[2 * i] + 1j * parts[2 * i + 1] for i in range(n)])
        return [np.real(out), np.imag(out)] if complex_out else out

    shapes = shape if isinstance(shape, list) else [shape] * n
    return Case(op, fn, expect, [tuple(s for s in shapes for _ in (0, 1))], (np.float64,),
                gen=[real_gen or uniform(), uniform()] * n, name=f"{op}(complex, via parts)",
                **kw)


CASES = [
    # -- arithmetic ------------------------------------------------------------------------
    Case("Add", tf.add, np.add, BCAST, REAL + (np.int8, np.uint8, np.complex64)),
    Case("Add", tf.add, np.add, PAIR, (np.float16, tf.bfloat16.as_numpy_dtype),
         name="Add(half types)"),
    Case("Add", lambda x, y: x + y, np.add, PAIR, REAL, name="Add(operator)"),
    Case("AddV2", lambda x, y: apply_op("AddV2", x=x, y=y), np.add, BCAST,
         REAL + (np.int8, np.complex64)),
    Case("Sub", tf.subtract, np.subtract, PAIR, REAL + (np.uint8, np.complex128)),
    Case("Sub", lambda x, y: x - y, np.subtract, PAIR, (np.int16,), name="Sub(operator)"),
    Case("Mul", tf.multiply, np.multiply, BCAST, REAL + (np.complex128,)),
    Case("Mul", lambda x, y: x * y, np.multiply, PAIR, (np.uint16,), name="Mul(operator)"),
    Case("Mul", lambda x: tf.scalar_mul(2, x), lambda x: 2 * x, ONE, (np.float32, np.int64),
         name="Mul(scalar_mul)"),
    Case("RealDiv", tf.realdiv, np.divide, PAIR, FLOAT + (np.complex64,),
         gen=[uniform(), nonzero()]),
    Case("RealDiv", lambda x, y: x / y, lambda x, y: x.astype(np.float64) / y, PAIR,
         (np.int32, np.int64), gen=[uniform(), nonzero()], name="RealDiv(truediv of ints)"),
    Case("RealDiv", lambda x, y: x / y, lambda x, y: x.astype(np.float32) / y, PAIR,
         (np.int16, np.uint8), gen=[uniform(), nonzero()], name="RealDiv(truediv of int16)"),
    Case("RealDiv", tf.div, np.divide, PAIR, FLOAT, gen=[uniform(), nonzero()],
         name="RealDiv(div of floats)"),
    Case("RealDiv", lambda x, y: tf.divide(x, y, name="d"), np.divide, PAIR, FLOAT,
         gen=[uniform(), nonzero()], name="RealDiv(divide named)"),
    Case("Div", lambda x, y: apply_op("Div", x=x, y=y), c_div, PAIR,
         (np.int32, np.int64, np.int8), gen=[uniform(-9, 9), nonzero(1, 4)]),
    Case("Div", lambda x, y: apply_op("Div", x=x, y=y), np.divide, PAIR, FLOAT,
         gen=[uniform(), nonzero()], name="Div(floats)"),
    Case("FloorDiv", tf.floordiv, np.floor_divide, PAIR, (np.int32, np.int64, np.uint8),
         gen=[uniform(-9, 9), nonzero(1, 4)]),
    Case("FloorDiv", lambda x, y: x // y, lambda x, y: np.floor(x / y), PAIR, FLOAT,
         gen=[uniform(), nonzero()], name="FloorDiv(floats, operator)"),
    Case("FloorDiv", tf.div, np.floor_divide, PAIR, (np.int32,),
         gen=[uniform(-9, 9), nonzero(1, 4)], name="FloorDiv(div of ints)"),
    Case("TruncateDiv", tf.truncatediv, c_div, PAIR, (np.int32, np.int64, np.int16),
         gen=[uniform(-9, 9), nonzero(1, 4)]),
    Case("FloorMod", tf.floormod, np.remainder, PAIR, REAL, gen=[uniform(-9, 9), nonzero()]),
    Case("FloorMod", lambda x, y: x % y, np.remainder, PAIR, (np.int32,),
         gen=[uniform(-9, 9), nonzero()], name="FloorMod(operator)"),
    Case("TruncateMod", tf.truncatemod, np.fmod, PAIR, REAL, gen=[uniform(-9, 9), nonzero()]),
    Case("Pow", tf.pow, np.power, PAIR, (np.int32, np.int64), gen=[uniform(-3, 3),
                                                                    uniform(0, 4)]),
    Case("Pow", lambda x, y: x ** y, np.power, PAIR, FLOAT + CPLX, gen=[positive(), uniform()],
         rtol=1e-4, name="Pow(floats, operator)"),
    Case("Maximum", tf.maximum, np.maximum, BCAST, REAL),
    Case("Minimum", tf.minimum, np.minimum, PAIR, REAL + (np.float16,)),
    Case("SquaredDifference", tf.squared_difference, lambda x, y: np.square(x - y), PAIR,
         REAL),
    Case("SquaredDifference", tf.squared_difference,
         lambda x, y: (x - y) * np.conj(x - y), PAIR, CPLX, name="SquaredDifference(complex)"),
    Case("Atan2", tf.atan2, np.arctan2, PAIR, FLOAT),
    # At y == 0 the op jumps from +-inf to 0: finite differences in y mean nothing there.
    Case("DivNoNan", tf.div_no_nan, lambda x, y: np.where(y == 0, 0, x / np.where(
        y == 0, 1, y)).astype(x.dtype), PAIR, FLOAT + (np.complex64,),
         gen=[uniform(), with_zeros(nonzero())], grad_gen=[uniform(), nonzero()]),
    Case("MulNoNan", tf.multiply_no_nan, lambda x, y: np.where(y == 0, 0, x * y).astype(x.dtype),
         PAIR, FLOAT, gen=[uniform(), with_zeros(uniform())]),
    # TF defines d/dx = 0 where x == 0 (not log(y) or 1 / y), so the gradient check keeps
    # x away from 0; test_math_gradients.py checks the value at 0.
    Case("Xlogy", tf.xlogy, lambda x, y: np.where(x == 0, 0, x * np.log(y)).astype(x.dtype),
         PAIR, FLOAT, gen=[with_zeros(uniform()), positive()], grad_gen=[nonzero(), positive()]),
    Case("Xdivy", tf.xdivy, lambda x, y: np.where(x == 0, 0, x / y).astype(x.dtype), PAIR,
         FLOAT, gen=[with_zeros(uniform()), nonzero()], grad_gen=nonzero()),
    Case("Polygamma", tf.polygamma,
         lambda a, x: scipy.special.polygamma(a.astype(int), x).astype(x.dtype), PAIR, FLOAT,
         gen=[orders, uniform(0.5, 4)], rtol=1e-4, grad_inputs=[1]),  # no gradient for a
    Case("AddN", lambda a, b, c: tf.add_n([a, b, c]), lambda a, b, c: a + b + c,
         [((2, 3), (2, 3), (2, 3))], (np.float32, np.int32, np.complex64)),
    # -- comparisons and logic -----------------------------------------------------------------
    Case("Equal", tf.equal, np.equal, BCAST, REAL + (np.bool_, np.complex64),
         gen=uniform(-1, 1)),
    Case("NotEqual", tf.not_equal, np.not_equal, PAIR, REAL + (np.bool_,), gen=uniform(-1, 1)),
    Case("Less", tf.less, np.less, BCAST, REAL + (np.uint8,), gen=uniform(-2, 2)),
    Case("Less", lambda x: x < 1, lambda x: x < 1, ONE, (np.float32, np.int32),
         name="Less(operator, python scalar)"),
    Case("LessEqual", tf.less_equal, np.less_equal, PAIR, REAL, gen=uniform(-2, 2)),
    Case("Greater", lambda x, y: x > y, np.greater, PAIR, REAL, gen=uniform(-2, 2)),
    Case("GreaterEqual", lambda x, y: x >= y, np.greater_equal, PAIR, REAL,
         gen=uniform(-2, 2)),
    Case("LogicalAnd", tf.logical_and, np.logical_and, PAIR, (np.bool_,)),
    Case("LogicalOr", lambda x, y: x | y, np.logical_or, PAIR, (np.bool_,)),
    Case("LogicalNot", lambda x: ~x, np.logical_not, [((5,),), ((2, 3),)], (np.bool_,)),
    Case("LogicalAnd", lambda x, y: x ^ y, np.logical_xor, PAIR, (np.bool_,),
         name="LogicalAnd(logical_xor)"),
    # -- unary -------------------------------------------------------------------------------
    unary("Neg", lambda x: -x, np.negative, REAL + (np.complex64,)),
    unary("Abs", tf.abs, np.abs, REAL + (np.int8, np.float16)),
    unary("ComplexAbs", tf.abs, np.abs, CPLX),
    unary("Sign", tf.sign, np.sign, (np.int32, np.int64) + CPLX, gen=with_zeros(uniform())),
    unary("Sign", tf.sign, lambda x: np.where(np.isnan(x), 0, np.sign(x)).astype(x.dtype),
          FLOAT, gen=specials, grad_gen=nonzero(0.5, 3), name="Sign(0 for NaN)"),
    unary("Reciprocal", tf.reciprocal, lambda x: c_div(np.ones_like(x), x),
          (np.int32, np.int64), gen=nonzero(1, 3)),
    unary("Reciprocal", tf.reciprocal, lambda x: 1 / x, FLOAT + (np.complex64,), gen=nonzero(),
          name="Reciprocal(floats)"),
    unary("Square", tf.square, np.square, REAL + (np.complex128,)),
    unary("Round", tf.round, np.round, FLOAT, gen=halves),
    unary("Rint", tf.rint, np.rint, FLOAT, gen=halves),
    unary("Floor", tf.floor, np.floor, FLOAT + (np.float16,)),
    unary("Ceil", tf.ceil, np.ceil, FLOAT),
    unary("Sqrt", tf.sqrt, np.sqrt, FLOAT, gen=positive()),
    unary("Sqrt", tf.sqrt, np.sqrt, CPLX, name="Sqrt(complex)"),
    unary("Rsqrt", tf.rsqrt, lambda x: 1 / np.sqrt(x), FLOAT, gen=positive()),
    unary("Exp", tf.exp, np.exp, FLOAT + (np.complex64, np.float16)),
    unary("Expm1", tf.expm1, np.expm1, FLOAT, gen=uniform(-1, 1)),
    unary("Log", tf.log, np.log, FLOAT, gen=positive()),
    unary("Log", tf.log, np.log, CPLX, name="Log(complex)"),
    unary("Log1p", tf.log1p, np.log1p, FLOAT, gen=uniform(-0.5, 2)),
    unary("Sin", tf.sin, np.sin, FLOAT + (np.complex64,)),
    unary("Cos", tf.cos, np.cos, FLOAT),
    unary("Tan", tf.tan, np.tan, FLOAT, gen=uniform(-1.2, 1.2)),
    unary("Asin", tf.asin, np.arcsin, FLOAT, gen=uniform(-0.95, 0.95)),
    unary("Acos", tf.acos, np.arccos, FLOAT, gen=uniform(-0.95, 0.95)),
    unary("Atan", tf.atan, np.arctan, FLOAT),
    unary("Sinh", tf.sinh, np.sinh, FLOAT),
    unary("Cosh", tf.cosh, np.cosh, FLOAT),
    unary("Tanh", tf.tanh, np.tanh, FLOAT + (np.complex64,)),
    unary("Asinh", tf.asinh, np.arcsinh, FLOAT),
    unary("Acosh", tf.acosh, np.arccosh, FLOAT, gen=uniform(1.1, 4)),
    unary("Atanh", tf.atanh, np.arctanh, FLOAT, gen=uniform(-0.9, 0.9)),
    unary("Sigmoid", tf.sigmoid, lambda x: 1 / (1 + np.exp(-x)), FLOAT),
    unary("Lgamma", tf.lgamma, scipy.special.gammaln, FLOAT, gen=uniform(0.2, 6), rtol=1e-4),
    unary("Digamma", tf.digamma, scipy.special.digamma, FLOAT, gen=uniform(0.2, 6), rtol=1e-4),
    unary("Erf", tf.erf, scipy.special.erf, FLOAT),
    unary("Erfc", tf.erfc, scipy.special.erfc, FLOAT, rtol=1e-4),
    unary("Erfinv", tf.erfinv, scipy.special.erfinv, FLOAT, gen=uniform(-0.95, 0.95),
          rtol=1e-4),
    unary("Ndtri", tf.ndtri, scipy.special.ndtri, FLOAT, gen=uniform(0.05, 0.95), rtol=1e-4),
    unary("BesselI0e", tf.bessel_i0e, scipy.special.i0e, FLOAT, rtol=1e-4),
    unary("BesselI1e", tf.bessel_i1e, scipy.special.i1e, FLOAT, rtol=1e-4),
    unary("IsNan", tf.is_nan, np.isnan, FLOAT, gen=specials),
    unary("IsInf", tf.is_inf, np.isinf, FLOAT, gen=specials),
    unary("IsFinite", tf.is_finite, np.isfinite, FLOAT + (np.float16,), gen=specials),
    # -- complex parts -------------------------------------------------------------------------
    unary("Real", tf.real, np.real, CPLX),
    unary("Imag", tf.imag, np.imag, CPLX),
    unary("Angle", tf.angle, np.angle, CPLX),
    unary("Conj", tf.conj, np.conj, CPLX),
    Case("Complex", tf.complex, lambda re, im: (re + 1j * im).astype(np.complex64), PAIR,
         (np.float32,)),
    Case("Complex", tf.complex, lambda re, im: re + 1j * im, PAIR, (np.float64,),
         name="Complex(float64)"),
    # -- complex gradients, through real and imaginary parts --------------------------------
    via_parts("Mul", tf.multiply, np.multiply, n=2),
    via_parts("RealDiv", tf.truediv, np.divide, n=2, real_gen=right_half),
    via_parts("Pow", tf.pow, np.power, n=2, real_gen=right_half),
    via_parts("Square", tf.square, np.square),
    via_parts("Reciprocal", tf.reciprocal, np.reciprocal, real_gen=right_half),
    via_parts("Sqrt", tf.sqrt, np.sqrt, real_gen=right_half),
    via_parts("Rsqrt", tf.rsqrt, lambda z: 1 / np.sqrt(z), real_gen=right_half),
    via_parts("Exp", tf.exp, np.exp),
    via_parts("Log", tf.log, np.log, real_gen=right_half),
    via_parts("Sin", tf.sin, np.sin),
    via_parts("Cos", tf.cos, np.cos),
    via_parts("Tanh", tf.tanh, np.tanh, real_gen=uniform(-1, 1)),
    via_parts("Sigmoid", tf.sigmoid, lambda z: 1 / (1 + np.exp(-z)), real_gen=uniform(-1, 1)),
    via_parts("Conj", tf.conj, np.conj),
    via_parts("Angle", tf.angle, np.angle, real_gen=right_half, complex_out=False),
    via_parts("ComplexAbs", tf.abs, np.abs, complex_out=False),
    via_parts("Cast", lambda z: tf.cast(z, tf.float64), np.real, complex_out=False),
    via_parts("AddN", lambda a, b: tf.add_n([a, b, a]), lambda a, b: a + b + a, n=2),
    # -- casts -----------------------------------------------------------------------------------
    unary("Cast", lambda x: tf.cast(x, tf.int32), lambda x: np.trunc(x).astype(np.int32),
          FLOAT + (np.int64,), name="Cast(to int32, truncating)"),
    # float64 -> float32 rounds: finite differences of the rounded values are noise.
    unary("Cast", tf.to_float, lambda x: x.astype(np.float32), (np.int32, np.bool_,
                                                               np.float64, np.uint8),
          grad=False),
    unary("Cast", lambda x: tf.real(tf.square(tf.cast(x, tf.complex128))), np.square,
          (np.float64,), name="Cast(to complex and back: the gradient takes the real part)"),
    unary("Cast", lambda x: tf.cast(x, tf.bool), lambda x: x != 0, FLOAT + (np.int32,),
          gen=with_zeros(uniform()), name="Cast(to bool)"),
    unary("Cast", lambda x: tf.cast(x, tf.float64), lambda x: np.real(x).astype(np.float64), CPLX,
          name="Cast(complex to real)"),
    unary("Cast", lambda x: tf.cast(x, tf.complex64), lambda x: x.astype(np.complex64),
          (np.float32, np.int32), name="Cast(to complex)"),
    unary("Cast", lambda x: tf.saturate_cast(x, tf.uint8),
          lambda x: np.clip(x, 0, 255).astype(np.uint8), (np.int32, np.float32),
          gen=uniform(-300, 300), name="Cast(saturate_cast)"),
]
