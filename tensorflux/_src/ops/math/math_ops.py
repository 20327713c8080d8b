"""Elementwise math: arithmetic, comparisons, logic, casts, complex parts (one OpDef per op).

Dtype sets are TF1's OpDef sets (math_ops.cc), narrowed to the types TF1 has kernels for
where the OpDef is wider (Tan on ints, Add on strings): an unsupported dtype then fails
at graph construction with TF's "Value passed to parameter ..." message, not later.

Integer semantics follow TF's C++ kernels, not NumPy's: `Div`, `TruncateDiv` and
`Reciprocal` truncate toward zero; `FloorDiv`/`FloorMod` round toward -inf, and
`FloorDiv` on floats is `floor(x / y)`.
"""

from __future__ import annotations

import builtins
import inspect

import jax
import jax.numpy as jnp
import numpy as np

from tensorflux._src.compiler import effects
from tensorflux._src.framework import dispatch as _dispatch
from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.indexed_slices import IndexedSlices
from tensorflux._src.framework.operation import Tensor
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.framework.tensor_shape import TensorShape, unknown_shape
from tensorflux._src.native import fusion_barrier
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.op_helpers import kernel_error, static_input, with_rank
from tensorflux._src.ops.registry import OpDef, register
from tensorflux._src.ops.shape_fns import broadcast_binary, static_value, unchanged

_d = _dtypes
F, C = _d.FLOATS, _d.COMPLEX  # F includes bfloat16 and float16, as TF1.15's sets do
# TF's named type sets from math_ops.cc.
UNARY = F + (_d.int32, _d.int64) + C
UNARY_COMPLEX = F + C
BINARY_MORE = F + (_d.uint8, _d.int8, _d.uint16, _d.int16, _d.int32, _d.int64) + C
BINARY_FEWER = F + (_d.int32, _d.int64) + C
ADD_TYPES = F + (_d.uint8, _d.int8, _d.int16, _d.int32, _d.int64) + C  # + string in TF
MINMAX = F + (_d.int32, _d.int64)
MOD_TYPES = (_d.int32, _d.int64) + F
EQUALITY = F + (_d.uint8, _d.int8, _d.int16, _d.int32, _d.int64) + C + (_d.bool,)
NO_NAN = (_d.float16, _d.float32, _d.float64) + C

__all__ = [
    "abs", "acos", "acosh", "add", "add_n", "asin", "asinh", "atan", "atan2",
    "atanh", "bessel_i0e", "bessel_i1e", "cast", "ceil", "clip_by_value", "complex", "conj",
    "cos", "cosh", "digamma", "div", "div_no_nan", "divide", "equal", "erf", "erfc",
    "erfinv", "exp", "expm1", "floor", "floor_div", "floordiv", "floormod", "greater",
    "greater_equal", "is_finite", "is_inf", "is_nan", "less", "less_equal", "lgamma",
    "log", "log1p", "logical_and", "logical_not", "logical_or", "logical_xor", "maximum",
    "minimum", "mod", "multiply", "multiply_no_nan", "ndtri", "negative", "not_equal",
    "polygamma", "pow",
    "real", "realdiv", "reciprocal", "rint", "round", "rsqrt", "saturate_cast", "scalar_mul",
    "sigmoid", "sign", "sin", "sinh", "sqrt", "square", "squared_difference", "subtract",
    "tan", "tanh", "to_bfloat16", "to_complex128", "to_complex64", "to_double", "to_float",
    "to_int32", "to_int64", "truediv", "truncatediv", "truncatemod", "xdivy", "xlogy",
]
# range, lin_space and linspace (at the end) are top-level names only, not tf.math's.


def _unary(op_type, lower, dtypes, out="y: T", not_differentiable=False):
    register(OpDef(op_type, inputs=("x: T",), outputs=(out,), attrs={"T": dtypes},
                   shape=unchanged, lower=lower, not_differentiable=not_differentiable))


def _binary(op_type, lower, dtypes, out="z: T", inputs=("x: T", "y: T"),
            not_differentiable=False):
    # Comparisons (bool outputs) have no gradient in TF: NotDifferentiable, not missing.
    register(OpDef(op_type, inputs=inputs, outputs=(out,), attrs={"T": dtypes},
                   shape=broadcast_binary, lower=lower,
                   not_differentiable=not_differentiable or out.endswith("bool"),
                   strings_by_rank=_dtypes.string in dtypes))


def _is_int(x):
    return jnp.issubdtype(x.dtype, jnp.integer)


def _trunc_div(x, y):
    # XLA's integer division rounds toward zero, like C and TF's CPU kernels.
    return jax.lax.div(*jnp.broadcast_arrays(x, y)) if _is_int(x) else jnp.trunc(x / y)


def _floor_div(x, y):
    # TF's floats: floor(x / y) (NumPy's floor_divide differs, e.g. 1 // 0.1 == 9).
    return jnp.floor_divide(x, y) if _is_int(x) else jnp.floor(x / y)


def _sign(x):
    if jnp.issubdtype(x.dtype, jnp.floating):
        return jnp.where(jnp.isnan(x), jnp.zeros_like(x), jnp.sign(x))  # TF1: 0 for NaN
    return jnp.sign(x)


def _where_zero(cond, value):
    return jnp.where(cond, jnp.zeros_like(value), value)


def _polygamma(a, x):
    # TF's kernel: digamma for a == 0, (-1)^(a+1) a! zeta(a+1, x) for a positive integer
    # a, NaN for any other order.
    sp = jax.scipy.special
    a, x = jnp.broadcast_arrays(a, x)
    positive_int = (a == jnp.floor(a)) & (a > 0)
    n = jnp.where(positive_int, a, jnp.ones_like(a))
    sign = jnp.where(jnp.fmod(n, 2) == 0, -jnp.ones_like(n), jnp.ones_like(n))
    higher = sign * sp.gamma(n + 1) * sp.zeta(n + 1, x)
    return jnp.where(a == 0, sp.digamma(x),
                     jnp.where(positive_int, higher, jnp.full_like(x, jnp.nan)))


# -- binary arithmetic ------------------------------------------------------------------
# Gradients follow TF1's math_grad.py; math_grads.py attaches them (they are built
# with wrappers of other families, which sit above this module).
_binary("Add", jnp.add, ADD_TYPES)
# What TF 2.x's graph code writes for `x + y` (TF 1.15 wrote Add): the same sum, no strings.
_binary("AddV2", jnp.add, ADD_TYPES)
_binary("Sub", jnp.subtract, BINARY_MORE)
_binary("Mul", jnp.multiply, BINARY_MORE)
_binary("RealDiv", lambda x, y: _trunc_div(x, y) if _is_int(x) else x / y, BINARY_MORE)
_binary("Div", lambda x, y: _trunc_div(x, y) if _is_int(x) else x / y, BINARY_MORE)
# Integer-valued results: TF's gradients are None (FloorDiv, TruncateDiv), and TF has
# none at all for TruncateMod.
_binary("FloorDiv", _floor_div, BINARY_MORE, not_differentiable=True)
_binary("TruncateDiv", _trunc_div, BINARY_MORE, not_differentiable=True)
_binary("FloorMod", jnp.remainder, MOD_TYPES)  # sign of y, like %
_binary("TruncateMod", jnp.fmod, MOD_TYPES, not_differentiable=True)  # sign of x, like fmod
# Integer x ** negative y is an error in TF's CPU kernel; under XLA it is 0 (1 for |x|=1).
_binary("Pow", jnp.power, F + (_d.int32, _d.int64) + C)
_binary("Maximum", jnp.maximum, MINMAX)
_binary("Minimum", jnp.minimum, MINMAX)
_binary("SquaredDifference", lambda x, y: (x - y) * jnp.conj(x - y), BINARY_FEWER)
_binary("Atan2", jnp.arctan2, F, inputs=("y: T", "x: T"))
_binary("DivNoNan", lambda x, y: _where_zero(y == 0, jnp.divide(x, y)), NO_NAN)
_binary("MulNoNan", lambda x, y: _where_zero(y == 0, x * y), NO_NAN)
_binary("Xlogy", lambda x, y: _where_zero(x == 0, x * jnp.log(y)), NO_NAN)
_binary("Xdivy", lambda x, y: _where_zero(x == 0, jnp.divide(x, y)), NO_NAN)
_binary("Polygamma", _polygamma, (_d.float32, _d.float64), inputs=("a: T", "x: T"))

# -- comparisons and logic: no gradients --------------------------------------------------
# Strings compare on the host, by rank (OpDef.strings_by_rank).
_binary("Equal", jnp.equal, EQUALITY + (_d.string,), out="z: bool")
_binary("NotEqual", jnp.not_equal, EQUALITY + (_d.string,), out="z: bool")
_binary("Less", jnp.less, _d.REAL, out="z: bool")
_binary("LessEqual", jnp.less_equal, _d.REAL, out="z: bool")
_binary("Greater", jnp.greater, _d.REAL, out="z: bool")
_binary("GreaterEqual", jnp.greater_equal, _d.REAL, out="z: bool")
register(OpDef("LogicalAnd", inputs=("x: bool", "y: bool"), outputs=("z: bool",),
               shape=broadcast_binary, lower=jnp.logical_and, not_differentiable=True))
register(OpDef("LogicalOr", inputs=("x: bool", "y: bool"), outputs=("z: bool",),
               shape=broadcast_binary, lower=jnp.logical_or, not_differentiable=True))
register(OpDef("LogicalNot", inputs=("x: bool",), outputs=("y: bool",), shape=unchanged,
               lower=jnp.logical_not, not_differentiable=True))

# -- unary --------------------------------------------------------------------------------
_unary("Neg", jnp.negative, UNARY)
_unary("Abs", jnp.abs, F + _d.SIGNED_INTS)
_unary("Sign", _sign, UNARY)  # x / |x| for complex, 0 at 0
# 1 / x in the input type: integers truncate (1 / 2 == 0, 1 / -1 == -1), as in C.
_unary("Reciprocal", lambda x: _trunc_div(jnp.ones_like(x), x) if _is_int(x) else 1 / x,
       UNARY)
_unary("Square", jnp.square, UNARY)
_unary("Sqrt", jnp.sqrt, UNARY_COMPLEX)
_unary("Rsqrt", jax.lax.rsqrt, UNARY_COMPLEX)
_unary("Exp", jnp.exp, UNARY_COMPLEX)
_unary("Expm1", jnp.expm1, UNARY_COMPLEX)
_unary("Log", jnp.log, UNARY_COMPLEX)
_unary("Log1p", jnp.log1p, UNARY_COMPLEX)
_unary("Sin", jnp.sin, UNARY_COMPLEX)
_unary("Cos", jnp.cos, UNARY_COMPLEX)
_unary("Tan", jnp.tan, UNARY_COMPLEX)
_unary("Asin", jnp.arcsin, UNARY_COMPLEX)
_unary("Acos", jnp.arccos, UNARY_COMPLEX)
_unary("Atan", jnp.arctan, UNARY_COMPLEX)
_unary("Sinh", jnp.sinh, UNARY_COMPLEX)
_unary("Cosh", jnp.cosh, UNARY_COMPLEX)
_unary("Tanh", jnp.tanh, UNARY_COMPLEX)
_unary("Asinh", jnp.arcsinh, UNARY_COMPLEX)
_unary("Acosh", jnp.arccosh, UNARY_COMPLEX)
_unary("Atanh", jnp.arctanh, UNARY_COMPLEX)
_unary("Sigmoid", jax.nn.sigmoid, UNARY_COMPLEX)
_unary("Lgamma", jax.scipy.special.gammaln, F)
_unary("Digamma", jax.scipy.special.digamma, F)
_unary("Erf", jax.scipy.special.erf, F)
_unary("Erfc", jax.scipy.special.erfc, F)
_unary("Erfinv", jax.scipy.special.erfinv, F)
_unary("Ndtri", jax.scipy.special.ndtri, F)
_unary("BesselI0e", jax.scipy.special.i0e, F)
_unary("BesselI1e", jax.scipy.special.i1e, F)
# Piecewise constant: TF's gradients are None (Sign's, above, is zeros).
_unary("Round", jnp.round, UNARY, not_differentiable=True)  # half to even; ints unchanged
_unary("Floor", jnp.floor, F, not_differentiable=True)
_unary("Ceil", jnp.ceil, F, not_differentiable=True)
_unary("Rint", jnp.rint, F, not_differentiable=True)  # half to even
_unary("IsNan", jnp.isnan, F, out="y: bool", not_differentiable=True)
_unary("IsFinite", jnp.isfinite, F, out="y: bool", not_differentiable=True)
_unary("IsInf", jnp.isinf, F, out="y: bool", not_differentiable=True)

# -- complex parts: output is the real type named by Tout ---------------------------------
_REAL_OUT = (_d.float32, _d.float64)
for _name, _fn in (("ComplexAbs", jnp.abs), ("Real", jnp.real), ("Imag", jnp.imag),
                   ("Angle", jnp.angle)):
    register(OpDef(_name, inputs=("x: T",) if _name == "ComplexAbs" else ("input: T",),
                   outputs=("y: Tout",) if _name == "ComplexAbs" else ("output: Tout",),
                   attrs={"T": C, "Tout": _REAL_OUT}, shape=unchanged, lower=_fn))
register(OpDef("Conj", inputs=("input: T",), outputs=("output: T",), attrs={"T": C},
               shape=unchanged, lower=jnp.conj))
register(OpDef("Complex", inputs=("real: T", "imag: T"), outputs=("out: Tout",),
               attrs={"T": _REAL_OUT, "Tout": C}, shape=broadcast_binary,
               lower=lambda re, im, Tout: jax.lax.complex(*jnp.broadcast_arrays(re, im)).astype(
                   Tout.as_numpy_dtype)))


# -- public wrappers ------------------------------------------------------------------------
def _op_fn(public_name, op_type, arg_names, doc):
    """`public_name(*arg_names, name=None)`: creates one `op_type` op (default name: its type).

    Inputs may be given by position or keyword, as with TF's generated wrappers.
    """
    params = [inspect.Parameter(a, inspect.Parameter.POSITIONAL_OR_KEYWORD) for a in arg_names]
    params.append(inspect.Parameter("name", inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                    default=None))
    signature = inspect.Signature(params)

    n_args = len(arg_names)

    def fn(*args, **kwargs):
        if len(args) == n_args and (not kwargs or kwargs.keys() == {"name"}):
            inputs = dict(zip(arg_names, args))  # the common call, without binding
            name = kwargs.get("name")
        else:
            bound = signature.bind(*args, **kwargs)
            inputs = dict(bound.arguments)
            name = inputs.pop("name", None)
        return apply_op(op_type, name=name, **inputs)

    fn.__name__ = fn.__qualname__ = public_name
    fn.__signature__ = signature
    fn.__doc__ = doc
    fn.__module__ = __name__
    return fn


add = _op_fn("add", "Add", ("x", "y"), "x + y elementwise, with broadcasting.")
subtract = _op_fn("subtract", "Sub", ("x", "y"), "x - y elementwise, with broadcasting.")
multiply = _op_fn("multiply", "Mul", ("x", "y"), "x * y elementwise, with broadcasting.")
realdiv = _op_fn("realdiv", "RealDiv", ("x", "y"), "x / y for real types.")
floor_div = _op_fn("floor_div", "FloorDiv", ("x", "y"), "Division rounding toward -inf.")
floormod = _op_fn("floormod", "FloorMod", ("x", "y"),
                  "Remainder with the sign of y, like Python's %.")
mod = floormod
truncatediv = _op_fn("truncatediv", "TruncateDiv", ("x", "y"),
                     "Division rounding toward zero (C semantics): -7 / 5 == -1.")
truncatemod = _op_fn("truncatemod", "TruncateMod", ("x", "y"),
                     "Remainder with the sign of x, like C's fmod.")
maximum = _op_fn("maximum", "Maximum", ("x", "y"), "max(x, y) elementwise, with broadcasting.")
minimum = _op_fn("minimum", "Minimum", ("x", "y"), "min(x, y) elementwise, with broadcasting.")
squared_difference = _op_fn("squared_difference", "SquaredDifference", ("x", "y"),
                            "(x - y) * conj(x - y) elementwise.")
atan2 = _op_fn("atan2", "Atan2", ("y", "x"), "atan(y / x) with the quadrant of (x, y).")
multiply_no_nan = _op_fn("multiply_no_nan", "MulNoNan", ("x", "y"), "x * y, 0 where y == 0.")
xlogy = _op_fn("xlogy", "Xlogy", ("x", "y"), "x * log(y), 0 where x == 0.")
xdivy = _op_fn("xdivy", "Xdivy", ("x", "y"), "x / y, 0 where x == 0.")
equal = _op_fn("equal", "Equal", ("x", "y"), "x == y elementwise (bool).")
not_equal = _op_fn("not_equal", "NotEqual", ("x", "y"), "x != y elementwise (bool).")
less = _op_fn("less", "Less", ("x", "y"), "x < y elementwise (bool).")
less_equal = _op_fn("less_equal", "LessEqual", ("x", "y"), "x <= y elementwise (bool).")
greater = _op_fn("greater", "Greater", ("x", "y"), "x > y elementwise (bool).")
greater_equal = _op_fn("greater_equal", "GreaterEqual", ("x", "y"), "x >= y elementwise (bool).")
logical_and = _op_fn("logical_and", "LogicalAnd", ("x", "y"), "x AND y elementwise.")
logical_or = _op_fn("logical_or", "LogicalOr", ("x", "y"), "x OR y elementwise.")
logical_not = _op_fn("logical_not", "LogicalNot", ("x",), "NOT x elementwise.")
negative = _op_fn("negative", "Neg", ("x",), "-x elementwise.")
sign = _op_fn("sign", "Sign", ("x",), "-1, 0 or 1 by the sign of x (0 for NaN; x/|x| for "
              "complex).")
reciprocal = _op_fn("reciprocal", "Reciprocal", ("x",), "1 / x elementwise (truncated for ints).")
square = _op_fn("square", "Square", ("x",), "x * x elementwise.")
sqrt = _op_fn("sqrt", "Sqrt", ("x",), "Square root elementwise.")
rsqrt = _op_fn("rsqrt", "Rsqrt", ("x",), "1 / sqrt(x) elementwise.")
exp = _op_fn("exp", "Exp", ("x",), "e^x elementwise.")
expm1 = _op_fn("expm1", "Expm1", ("x",), "e^x - 1 elementwise, accurate near 0.")
log = _op_fn("log", "Log", ("x",), "Natural logarithm elementwise.")
log1p = _op_fn("log1p", "Log1p", ("x",), "log(1 + x) elementwise, accurate near 0.")
sin = _op_fn("sin", "Sin", ("x",), "Sine elementwise.")
cos = _op_fn("cos", "Cos", ("x",), "Cosine elementwise.")
tan = _op_fn("tan", "Tan", ("x",), "Tangent elementwise.")
asin = _op_fn("asin", "Asin", ("x",), "Arcsine elementwise.")
acos = _op_fn("acos", "Acos", ("x",), "Arccosine elementwise.")
atan = _op_fn("atan", "Atan", ("x",), "Arctangent elementwise.")
sinh = _op_fn("sinh", "Sinh", ("x",), "Hyperbolic sine elementwise.")
cosh = _op_fn("cosh", "Cosh", ("x",), "Hyperbolic cosine elementwise.")
tanh = _op_fn("tanh", "Tanh", ("x",), "Hyperbolic tangent elementwise.")
asinh = _op_fn("asinh", "Asinh", ("x",), "Inverse hyperbolic sine elementwise.")
acosh = _op_fn("acosh", "Acosh", ("x",), "Inverse hyperbolic cosine elementwise.")
atanh = _op_fn("atanh", "Atanh", ("x",), "Inverse hyperbolic tangent elementwise.")
sigmoid = _op_fn("sigmoid", "Sigmoid", ("x",), "1 / (1 + e^-x) elementwise.")
erf = _op_fn("erf", "Erf", ("x",), "Gauss error function elementwise.")
erfc = _op_fn("erfc", "Erfc", ("x",), "Complementary error function elementwise.")
erfinv = _op_fn("erfinv", "Erfinv", ("x",), "Inverse of erf elementwise.")
ndtri = _op_fn("ndtri", "Ndtri", ("x",), "Inverse of the standard normal CDF elementwise.")
lgamma = _op_fn("lgamma", "Lgamma", ("x",), "log|Gamma(x)| elementwise.")
digamma = _op_fn("digamma", "Digamma", ("x",), "Psi, the derivative of lgamma, elementwise.")
polygamma = _op_fn("polygamma", "Polygamma", ("a", "x"),
                   "The a-th derivative of digamma at x (a a non-negative integer value).")
floor = _op_fn("floor", "Floor", ("x",), "Largest integer <= x elementwise.")
ceil = _op_fn("ceil", "Ceil", ("x",), "Smallest integer >= x elementwise.")
rint = _op_fn("rint", "Rint", ("x",), "Nearest integer, halves to even.")
is_nan = _op_fn("is_nan", "IsNan", ("x",), "True where x is NaN.")
is_finite = _op_fn("is_finite", "IsFinite", ("x",), "True where x is finite.")
is_inf = _op_fn("is_inf", "IsInf", ("x",), "True where x is +-inf.")


def bessel_i0e(x, name=None):
    """exp(-|x|) * I0(x) elementwise."""
    with _graph.name_scope(name, "bessel_i0e", [x]) as scope:
        return apply_op("BesselI0e", name=scope, x=x)


def bessel_i1e(x, name=None):
    """exp(-|x|) * I1(x) elementwise."""
    with _graph.name_scope(name, "bessel_i1e", [x]) as scope:
        return apply_op("BesselI1e", name=scope, x=x)


def pow(x, y, name=None):  # noqa: A001 - TF's public name
    """x ** y elementwise."""
    with _graph.name_scope(name, "Pow", [x]) as scope:
        return apply_op("Pow", name=scope, x=x, y=y)


def abs(x, name=None):  # noqa: A001 - TF's public name
    """|x| elementwise; for complex x, the magnitude (a real tensor)."""
    with _graph.name_scope(name, "Abs", [x]) as scope:
        x = convert_to_tensor(x, name="x")
        if x.dtype.is_complex:
            return apply_op("ComplexAbs", name=scope, x=x, Tout=x.dtype.real_dtype)
        return apply_op("Abs", name=scope, x=x)


def round(x, name=None):  # noqa: A001 - TF's public name
    """Rounds half to even elementwise; integers are returned unchanged (no op)."""
    x = convert_to_tensor(x, name="x")
    if x.dtype.is_integer:
        return x
    return apply_op("Round", name=name, x=x)


def logical_xor(x, y, name="LogicalXor"):
    """x XOR y, composed as (x OR y) AND NOT (x AND y), as TF does."""
    return logical_and(logical_or(x, y), logical_not(logical_and(x, y)), name=name)


def scalar_mul(scalar, x, name=None):
    """scalar * x, where `scalar` must be 0-D; `scalar` takes x's dtype."""
    scalar = convert_to_tensor(scalar, dtype=x.dtype.base_dtype, name="scalar")
    if scalar.shape.ndims != 0:
        raise ValueError(f"Only scalar multiply works, got shape {scalar.shape}")
    return apply_op("Mul", name=name, x=scalar, y=x)


# -- division: Python 3 (`/`), Python 2 (`tf.div`) and floor (`//`) semantics -------------
# Integer true division casts first: small ints to float32, 32/64-bit ints to float64.
_TRUEDIV_TABLE = {_d.uint8: _d.float32, _d.int8: _d.float32, _d.uint16: _d.float32,
                  _d.int16: _d.float32, _d.int32: _d.float64, _d.int64: _d.float64,
                  _d.bfloat16: None, _d.float16: None, _d.float32: None, _d.float64: None,
                  _d.complex64: None, _d.complex128: None}


def _same_dtype(x, y):
    if x.dtype.base_dtype != y.dtype.base_dtype:
        raise TypeError(f"x and y must have the same dtype, got {x.dtype.base_dtype!r} != "
                        f"{y.dtype.base_dtype!r}")


def truediv(x, y, name=None):
    """x / y with Python 3 semantics: integers are cast to a float type first."""
    with _graph.name_scope(name, "truediv", [x, y]) as scope:
        x = convert_to_tensor(x, name="x")
        y = convert_to_tensor(y, name="y")  # TF1 gives y no dtype here (unlike `x / 2`)
        _same_dtype(x, y)
        dtype = x.dtype.base_dtype
        if dtype not in _TRUEDIV_TABLE:
            raise TypeError(f"Invalid dtype {dtype!r} in __truediv__")
        if _TRUEDIV_TABLE[dtype] is not None:
            x = cast(x, _TRUEDIV_TABLE[dtype])
            y = cast(y, _TRUEDIV_TABLE[dtype])
        return apply_op("RealDiv", name=scope, x=x, y=y)


def div(x, y, name=None):
    """Python 2 division: floor division for integers, true division for floats."""
    with _graph.name_scope(name, "div", [x, y]) as scope:
        x = convert_to_tensor(x, name="x")
        y = convert_to_tensor(y, name="y", dtype=x.dtype.base_dtype)
        _same_dtype(x, y)
        if x.dtype.is_floating or x.dtype.is_complex:
            return apply_op("RealDiv", name=scope, x=x, y=y)
        return apply_op("FloorDiv", name=scope, x=x, y=y)


def div_no_nan(x, y, name=None):
    """x / y, with 0 wherever y is 0 (even where x is 0 or inf)."""
    with _graph.name_scope(name, "div_no_nan", [x, y]) as scope:
        x = convert_to_tensor(x, name="x")
        y = convert_to_tensor(y, name="y", dtype=x.dtype.base_dtype)
        _same_dtype(x, y)
        return apply_op("DivNoNan", name=scope, x=x, y=y)


def floordiv(x, y, name=None):
    """Floor division (rounds toward -inf) for integers and floats."""
    with _graph.name_scope(name, "floordiv", [x, y]) as scope:
        return apply_op("FloorDiv", name=scope, x=x, y=y)


def divide(x, y, name=None):
    """Python-style `x / y`: goes through the `/` operator (op "truediv") unless named."""
    if name is not None:
        return truediv(x, y, name=name)
    return x / y


# -- casts ------------------------------------------------------------------------------------
def _cast_lower(x, DstT):  # noqa: N803 - TF's attr name
    if jnp.iscomplexobj(x) and not DstT.is_complex and DstT != _d.bool:
        x = jnp.real(x)  # complex -> real keeps the real part, as NumPy and TF do
    return x.astype(DstT.as_numpy_dtype)


register(OpDef(
    "Cast", inputs=("x: SrcT",), outputs=("y: DstT",),
    attrs={"SrcT": _d.NUMBERS + (_d.bool,), "DstT": _d.NUMBERS + (_d.bool,),
           "Truncate": False},
    shape=unchanged, lower=_cast_lower,
))


def cast(x, dtype, name=None):
    """Converts x to `dtype`. A Tensor that already has `dtype` is returned as it is."""
    base = _d.as_dtype(dtype).base_dtype
    if isinstance(x, Tensor) and x.dtype.base_dtype == base:
        return x  # no op and no name scope, as in TF
    with _graph.name_scope(name, "Cast", [x]) as scope:
        if isinstance(x, IndexedSlices):  # cast the values, keep the slices (as TF)
            return IndexedSlices(cast(x.values, base, name=scope), x.indices, x.dense_shape)
        x = convert_to_tensor(x, name="x")
        if x.dtype.base_dtype != base:
            x = apply_op("Cast", name=scope, x=x, DstT=base)
        return x


def saturate_cast(value, dtype, name=None):
    """Casts, clamping to `dtype`'s range first so out-of-range values saturate."""
    with _graph.name_scope(name, "saturate_cast", [value]) as scope:
        value = convert_to_tensor(value, name="value")
        dtype = _d.as_dtype(dtype).base_dtype
        if value.dtype.min < dtype.min:
            value = apply_op("Maximum", x=value, y=convert_to_tensor(
                dtype.min, dtype=value.dtype, name="min"))
        if value.dtype.max > dtype.max:
            value = apply_op("Minimum", x=value, y=convert_to_tensor(
                dtype.max, dtype=value.dtype, name="max"))
        return cast(value, dtype, name=scope)


def to_float(x, name="ToFloat"):
    return cast(x, _d.float32, name=name)


def to_double(x, name="ToDouble"):
    return cast(x, _d.float64, name=name)


def to_int32(x, name="ToInt32"):
    return cast(x, _d.int32, name=name)


def to_int64(x, name="ToInt64"):
    return cast(x, _d.int64, name=name)


def to_bfloat16(x, name="ToBFloat16"):
    return cast(x, _d.bfloat16, name=name)


def to_complex64(x, name="ToComplex64"):
    return cast(x, _d.complex64, name=name)


def to_complex128(x, name="ToComplex128"):
    return cast(x, _d.complex128, name=name)


# -- complex numbers ----------------------------------------------------------------------------
def complex(real, imag, name=None):  # noqa: A001 - TF's public name
    """real + 1j * imag: float32 pairs give complex64, float64 pairs complex128."""
    real = convert_to_tensor(real, name="real")
    imag = convert_to_tensor(imag, name="imag")
    with _graph.name_scope(name, "Complex", [real, imag]) as scope:
        types = (real.dtype.base_dtype, imag.dtype.base_dtype)
        if types == (_d.float64, _d.float64):
            tout = _d.complex128
        elif types == (_d.float32, _d.float32):
            tout = _d.complex64
        else:
            raise TypeError(f"real and imag have incorrect types: {real.dtype.name} "
                            f"{imag.dtype.name}")
        return apply_op("Complex", name=scope, real=real, imag=imag, Tout=tout)


def _complex_part(op_type, default_name, for_real):
    """A complex-part wrapper: the record for complex inputs, `for_real(input)` otherwise."""
    def fn(input, name=None):  # noqa: A002 - TF's argument name
        with _graph.name_scope(name, default_name, [input]) as scope:
            input = convert_to_tensor(input, name="input")
            if input.dtype.is_complex:
                return apply_op(op_type, name=scope, input=input, Tout=input.dtype.real_dtype)
            return for_real(input)
    fn.__name__ = fn.__qualname__ = default_name.lower()
    return fn


real = _complex_part("Real", "Real", for_real=lambda input: input)
real.__module__ = __name__
real.__doc__ = "The real part of a complex tensor; a real tensor is returned unchanged."
# imag and angle give zeros for a real tensor (zeros_like), so they live above
# generator_ops, in complex_parts.py.


def conj(x, name=None):
    """The complex conjugate; real and integer tensors are returned unchanged."""
    if isinstance(x, Tensor) and (x.dtype.is_floating or x.dtype.is_integer):
        return x
    with _graph.name_scope(name, "Conj", [x]) as scope:
        x = convert_to_tensor(x, name="x")
        if x.dtype.is_complex:
            return apply_op("Conj", name=scope, input=x)
        if x.dtype.is_floating or x.dtype.is_integer:
            return x
        raise TypeError(f"Expected numeric or variant tensor, got dtype {x.dtype!r}")


# -- n-ary and composites -------------------------------------------------------------------
def _add_n_shape(op):
    # Merged from the last input backwards, with TF's context for a mismatch.
    shape = op.inputs[-1].shape
    for i in builtins.range(len(op.inputs) - 2, -1, -1):
        other = op.inputs[i].shape
        if not shape.is_compatible_with(other):
            if shape.ndims != other.ndims:
                msg = f"Shapes must be equal rank, but are {other.ndims} and {shape.ndims}"
            else:
                bad = next(j for j, (a, b) in enumerate(zip(other.dims, shape.dims))
                           if not a.is_compatible_with(b))
                msg = (f"Dimension {bad} in both shapes must be equal, but are "
                       f"{other.dims[bad].value} and {shape.dims[bad].value}. Shapes are "
                       f"{other._bracket_str()} and {shape._bracket_str()}.")
            raise ValueError(f"{msg}\n\tFrom merging shape {i} with other shapes.")
        shape = other.merge_with(shape)
    return shape


# A sum with several consumers, at least this big, is computed once (fusion_barrier.py):
# gradient aggregation's sums, which the next layer's sum builds on, were otherwise
# re-added inside every consumer. Smaller ones cost less to recompute than a kernel.
_SHARED_SUM_ELEMENTS = 1 << 16


def _add_n_lower(*xs):
    total = builtins.sum(xs[1:], xs[0])
    op = effects.current_op()
    if (op is not None and len(op.outputs[0].consumers()) > 1
            and np.size(total) >= _SHARED_SUM_ELEMENTS):
        return fusion_barrier.materialize(total)
    return total


register(OpDef("AddN", inputs=("inputs: N * T",), outputs=("sum: T",),
               attrs={"T": _d.NUMBERS}, shape=_add_n_shape, lower=_add_n_lower))


def add_n(inputs, name=None):
    """Sums a list of tensors of the same shape and dtype (no broadcasting)."""
    if not inputs or not isinstance(inputs, (list, tuple)):
        raise ValueError("inputs must be a list of at least one Tensor/IndexedSlices with the "
                         "same dtype and shape")
    inputs = [convert_to_tensor(t) for t in inputs]
    if len(inputs) == 1:
        return apply_op("Identity", name=name, input=inputs[0]) if name else inputs[0]
    return apply_op("AddN", name=name, inputs=inputs)


def clip_by_value(t, clip_value_min, clip_value_max, name=None):
    """Clamps t to [clip_value_min, clip_value_max], composed from minimum and maximum.

    The clip values may broadcast to t's shape but must not grow it.
    """
    with _graph.name_scope(name, "clip_by_value", [t, clip_value_min, clip_value_max]) as scope:
        values = convert_to_tensor(t, name="t")
        t_min = minimum(values, clip_value_max)
        values.shape.merge_with(t_min.shape)  # raises "Shapes ... are not compatible"
        t_max = maximum(t_min, clip_value_min, name=scope)
        values.shape.merge_with(t_max.shape)
        return t_max


# -- Range / LinSpace (TF keeps tf.range and tf.linspace in math_ops) -----------------------
def _range_size(start, limit, delta, fail):
    if delta == 0:
        raise fail("Requires delta != 0")
    if start > limit and delta > 0:
        raise fail(f"Requires start <= limit when delta > 0: {start}/{limit}")
    if start < limit and delta < 0:
        raise fail(f"Requires start >= limit when delta < 0: {start}/{limit}")
    if isinstance(start, (int, np.integer)):
        start, limit, delta = int(start), int(limit), int(delta)
        return (builtins.abs(limit - start) + builtins.abs(delta) - 1) // builtins.abs(delta)
    return int(np.ceil(np.abs((limit - start) / delta)))  # in the inputs' precision, as TF


def _scalars(op):
    for t, what in zip(op.inputs, ("start", "limit", "delta")):
        if t.shape.ndims not in (None, 0):
            raise ValueError(f"Shape must be rank 0 but is rank {t.shape.ndims} for {what}")
    return [static_value(t) for t in op.inputs]


def _range_shape(op):
    values = _scalars(op)
    if any(v is None for v in values):
        return unknown_shape(1)
    return TensorShape([_range_size(*(v[()] for v in values), ValueError)])


def _range_lower(start, limit, delta):
    start, limit, delta = (static_input(v, "Range", name)[()]
                           for v, name in ((start, "start"), (limit, "limit"), (delta, "delta")))
    n = _range_size(start, limit, delta, kernel_error)
    # start + i * delta in the input dtype (TF1's CPU kernel accumulated `value += delta`;
    # this is exact for ints and at least as accurate for floats).
    return start + jnp.arange(n) * delta


register(OpDef("Range", inputs=("start: Tidx", "limit: Tidx", "delta: Tidx"),
               outputs=("output: Tidx",),
               attrs={"Tidx": (_dtypes.bfloat16, _dtypes.float32, _dtypes.float64,
                               _dtypes.int32, _dtypes.int64)},
               shape=_range_shape, lower=_range_lower, not_differentiable=True))

_RANGE_DTYPES = [_dtypes.int32, _dtypes.int64, _dtypes.float32, _dtypes.float64]


def range(start, limit=None, delta=1, dtype=None, name="range"):  # noqa: A001
    """The sequence start, start + delta, ... up to (not including) limit.

    `range(n)` counts from 0. Without `dtype`, the widest type of the three arguments
    (int32 < int64 < float32 < float64) is used for all of them, as in TF.
    """
    if limit is None:
        start, limit = 0, start
    with _graph.name_scope(name, "Range", [start, limit, delta]) as scope:
        args = [convert_to_tensor(v, dtype=dtype, name=n)
                for v, n in ((start, "start"), (limit, "limit"), (delta, "delta"))]
        if dtype is None:
            for a in args:
                if a.dtype.base_dtype not in _RANGE_DTYPES:
                    raise TypeError(f"range arguments must be int32, int64, float32 or "
                                    f"float64, got {a.dtype.base_dtype.name}")
            widest = max((a.dtype.base_dtype for a in args), key=_RANGE_DTYPES.index)
            args = [cast(a, widest) for a in args]
        return apply_op("Range", name=scope, start=args[0], limit=args[1], delta=args[2])


def _linspace_shape(op):
    for t in op.inputs:
        with_rank(t.shape, 0)
    num = static_value(op.inputs[2])
    if num is None:
        return unknown_shape(1)
    if num <= 0:
        raise ValueError(f"Requires num > 0: {int(num)}")
    return TensorShape([int(num)])


def _linspace_lower(start, stop, num):
    n = int(static_input(num, "LinSpace", "num"))
    if n <= 0:
        raise kernel_error(f"Requires num > 0: {n}")
    if n == 1:
        return jnp.reshape(start, (1,))
    step = (stop - start) / (n - 1)
    values = start + jnp.arange(n, dtype=jnp.result_type(start)) * step
    return values.at[-1].set(stop)  # the last value is exactly `stop`, as in TF


register(OpDef("LinSpace", inputs=("start: T", "stop: T", "num: Tidx"), outputs=("output: T",),
               attrs={"T": (_dtypes.bfloat16, _dtypes.float32, _dtypes.float64),
                      "Tidx": _dtypes.INDEX},
               shape=_linspace_shape, lower=_linspace_lower, not_differentiable=True))


def lin_space(start, stop, num, name=None):
    """`num` evenly spaced values from `start` to `stop`, both included."""
    return apply_op("LinSpace", name=name, start=start, stop=stop, num=num)


linspace = lin_space


# RaggedTensor (and other composite) arguments dispatch to registered handlers
# (framework/dispatch.py; TF's ragged_dispatch list).
_dispatch.add_dispatch_support_to(globals(), [
    "abs", "acos", "acosh", "asin", "asinh", "atan", "atanh", "cast", "ceil", "conj",
    "cos", "cosh", "digamma", "erf", "erfc", "exp", "expm1", "floor", "is_finite",
    "is_inf", "is_nan", "lgamma", "log", "log1p", "logical_not", "negative", "real",
    "reciprocal", "rint", "round", "rsqrt", "saturate_cast", "sign", "sin", "sinh",
    "sqrt", "square", "tan", "add_n", "add", "atan2", "complex", "div_no_nan", "divide",
    "equal", "floordiv", "floormod", "greater", "greater_equal", "less", "less_equal",
    "logical_and", "logical_or", "logical_xor", "maximum", "minimum", "multiply",
    "not_equal", "pow", "realdiv", "squared_difference", "subtract", "truediv",
    "truncatediv", "truncatemod", "clip_by_value",
])
