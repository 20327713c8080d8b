"""Elementwise math: arithmetic, comparisons, logic, casts (one OpDef record per op)."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.registry import OpDef, register
from tensorflux._src.ops.shape_fns import broadcast_binary, unchanged

F, C, N, R = _dtypes.FLOATS, _dtypes.COMPLEX, _dtypes.NUMBERS, _dtypes.REAL
SIGNED = _dtypes.FLOATS + _dtypes.SIGNED_INTS + _dtypes.COMPLEX

__all__ = [
    "abs",
    "acos",
    "add",
    "add_n",
    "asin",
    "atan",
    "atan2",
    "cast",
    "ceil",
    "clip_by_value",
    "cos",
    "cosh",
    "div",
    "divide",
    "equal",
    "erf",
    "erfc",
    "exp",
    "expm1",
    "floor",
    "floordiv",
    "floormod",
    "greater",
    "greater_equal",
    "is_finite",
    "is_inf",
    "is_nan",
    "less",
    "less_equal",
    "lgamma",
    "log",
    "log1p",
    "logical_and",
    "logical_not",
    "logical_or",
    "logical_xor",
    "maximum",
    "minimum",
    "mod",
    "multiply",
    "negative",
    "not_equal",
    "pow",
    "realdiv",
    "reciprocal",
    "rint",
    "round",
    "rsqrt",
    "saturate_cast",
    "sigmoid",
    "sign",
    "sin",
    "sinh",
    "sqrt",
    "square",
    "squared_difference",
    "subtract",
    "tan",
    "tanh",
    "to_bfloat16",
    "to_double",
    "to_float",
    "to_int32",
    "to_int64",
    "truediv",
    "truncatediv",
    "truncatemod",
]


def _unary(op_type, lower, dtypes, out="y: T"):
    register(OpDef(op_type, inputs=("x: T",), outputs=(out,), attrs={"T": dtypes},
                   shape=unchanged, lower=lower))


def _binary(op_type, lower, dtypes, out="z: T"):
    register(OpDef(op_type, inputs=("x: T", "y: T"), outputs=(out,), attrs={"T": dtypes},
                   shape=broadcast_binary, lower=lower))


# -- binary arithmetic ------------------------------------------------------------------
_binary("Add", jnp.add, N)
_binary("Sub", jnp.subtract, N)
_binary("Mul", jnp.multiply, N)
_binary("RealDiv", jnp.divide, F + C)
_binary("Div", lambda x, y: jnp.floor_divide(x, y) if x.dtype.kind in "iu" else x / y, N)
_binary("FloorDiv", jnp.floor_divide, R)
_binary("FloorMod", jnp.remainder, R)
_binary("TruncateDiv", lambda x, y: lax_truncdiv(x, y), _dtypes.INTS)
_binary("TruncateMod", lambda x, y: jnp.fmod(x, y), R)
_binary("Pow", jnp.power, N)
_binary("Maximum", jnp.maximum, R)
_binary("Minimum", jnp.minimum, R)
_binary("SquaredDifference", lambda x, y: jnp.square(x - y) if x.dtype.kind != "c"
        else (x - y) * jnp.conj(x - y), N)
_binary("Atan2", jnp.arctan2, F)


def lax_truncdiv(x, y):
    return jax.lax.div(x, y)  # XLA integer division rounds toward zero, like C


# -- comparisons and logic --------------------------------------------------------------
_binary("Equal", jnp.equal, _dtypes.NUMBERS + (_dtypes.bool,), out="z: bool")
_binary("NotEqual", jnp.not_equal, _dtypes.NUMBERS + (_dtypes.bool,), out="z: bool")
_binary("Less", jnp.less, R, out="z: bool")
_binary("LessEqual", jnp.less_equal, R, out="z: bool")
_binary("Greater", jnp.greater, R, out="z: bool")
_binary("GreaterEqual", jnp.greater_equal, R, out="z: bool")
register(OpDef("LogicalAnd", inputs=("x: bool", "y: bool"), outputs=("z: bool",),
               shape=broadcast_binary, lower=jnp.logical_and))
register(OpDef("LogicalOr", inputs=("x: bool", "y: bool"), outputs=("z: bool",),
               shape=broadcast_binary, lower=jnp.logical_or))
register(OpDef("LogicalNot", inputs=("x: bool",), outputs=("y: bool",), shape=unchanged,
               lower=jnp.logical_not))

# -- unary --------------------------------------------------------------------------------
_unary("Neg", jnp.negative, SIGNED)
_unary("Abs", jnp.abs, F + _dtypes.SIGNED_INTS)
register(OpDef("ComplexAbs", inputs=("x: T",), outputs=("y: Tout",),
               attrs={"T": C, "Tout": (_dtypes.float32, _dtypes.float64)},
               shape=unchanged, lower=jnp.abs))
_unary("Sign", jnp.sign, SIGNED)
_unary("Reciprocal", lambda x: (1 // x) if x.dtype.kind in "iu" else 1 / x, SIGNED)
_unary("Square", jnp.square, SIGNED)
_unary("Sqrt", jnp.sqrt, F + C)
_unary("Rsqrt", jax.lax.rsqrt, F + C)
_unary("Exp", jnp.exp, F + C)
_unary("Expm1", jnp.expm1, F + C)
_unary("Log", jnp.log, F + C)
_unary("Log1p", jnp.log1p, F + C)
_unary("Sin", jnp.sin, F + C)
_unary("Cos", jnp.cos, F + C)
_unary("Tan", jnp.tan, F + C)
_unary("Asin", jnp.arcsin, F + C)
_unary("Acos", jnp.arccos, F + C)
_unary("Atan", jnp.arctan, F + C)
_unary("Sinh", jnp.sinh, F + C)
_unary("Cosh", jnp.cosh, F + C)
_unary("Tanh", jnp.tanh, F + C)
_unary("Sigmoid", jax.nn.sigmoid, F + C)
_unary("Erf", jax.scipy.special.erf, F)
_unary("Erfc", jax.scipy.special.erfc, F)
_unary("Lgamma", jax.scipy.special.gammaln, F)
_unary("Floor", jnp.floor, F)
_unary("Ceil", jnp.ceil, F)
_unary("Round", jnp.round, F + _dtypes.SIGNED_INTS)  # half to even, as TF
_unary("Rint", jnp.rint, F)
_unary("IsNan", jnp.isnan, F, out="y: bool")
_unary("IsFinite", jnp.isfinite, F, out="y: bool")
_unary("IsInf", jnp.isinf, F, out="y: bool")


# -- public wrappers ------------------------------------------------------------------------
def _op_fn(op_type, arg_names, doc):
    def fn(*args, name=None):
        return apply_op(op_type, name=name, **dict(zip(arg_names, args)))
    fn.__doc__ = doc
    return fn


add = _op_fn("Add", ("x", "y"), "x + y elementwise, with broadcasting.")
subtract = _op_fn("Sub", ("x", "y"), "x - y elementwise, with broadcasting.")
multiply = _op_fn("Mul", ("x", "y"), "x * y elementwise, with broadcasting.")
realdiv = _op_fn("RealDiv", ("x", "y"), "x / y for floating and complex types.")
floordiv_op = _op_fn("FloorDiv", ("x", "y"), "Floor division, rounding toward -inf.")
floormod = _op_fn("FloorMod", ("x", "y"), "Remainder with the sign of y, like Python's %.")
truncatediv = _op_fn("TruncateDiv", ("x", "y"), "Integer division rounding toward zero.")
truncatemod = _op_fn("TruncateMod", ("x", "y"), "Remainder with the sign of x, like C's fmod.")
maximum = _op_fn("Maximum", ("x", "y"), "max(x, y) elementwise, with broadcasting.")
minimum = _op_fn("Minimum", ("x", "y"), "min(x, y) elementwise, with broadcasting.")
squared_difference = _op_fn("SquaredDifference", ("x", "y"), "(x - y)^2 elementwise.")
atan2 = _op_fn("Atan2", ("y", "x"), "atan(y / x) with the quadrant of (x, y).")
equal = _op_fn("Equal", ("x", "y"), "x == y elementwise (bool).")
not_equal = _op_fn("NotEqual", ("x", "y"), "x != y elementwise (bool).")
less = _op_fn("Less", ("x", "y"), "x < y elementwise (bool).")
less_equal = _op_fn("LessEqual", ("x", "y"), "x <= y elementwise (bool).")
greater = _op_fn("Greater", ("x", "y"), "x > y elementwise (bool).")
greater_equal = _op_fn("GreaterEqual", ("x", "y"), "x >= y elementwise (bool).")
logical_and = _op_fn("LogicalAnd", ("x", "y"), "x AND y elementwise.")
logical_or = _op_fn("LogicalOr", ("x", "y"), "x OR y elementwise.")
logical_not = _op_fn("LogicalNot", ("x",), "NOT x elementwise.")
negative = _op_fn("Neg", ("x",), "-x elementwise.")
sign = _op_fn("Sign", ("x",), "-1, 0 or 1 by the sign of x (x/|x| for complex).")
reciprocal = _op_fn("Reciprocal", ("x",), "1 / x elementwise.")
square = _op_fn("Square", ("x",), "x * x elementwise.")
sqrt = _op_fn("Sqrt", ("x",), "Square root elementwise.")
rsqrt = _op_fn("Rsqrt", ("x",), "1 / sqrt(x) elementwise.")
exp = _op_fn("Exp", ("x",), "e^x elementwise.")
expm1 = _op_fn("Expm1", ("x",), "e^x - 1 elementwise, accurate near 0.")
log = _op_fn("Log", ("x",), "Natural logarithm elementwise.")
log1p = _op_fn("Log1p", ("x",), "log(1 + x) elementwise, accurate near 0.")
sin = _op_fn("Sin", ("x",), "Sine elementwise.")
cos = _op_fn("Cos", ("x",), "Cosine elementwise.")
tan = _op_fn("Tan", ("x",), "Tangent elementwise.")
asin = _op_fn("Asin", ("x",), "Arcsine elementwise.")
acos = _op_fn("Acos", ("x",), "Arccosine elementwise.")
atan = _op_fn("Atan", ("x",), "Arctangent elementwise.")
sinh = _op_fn("Sinh", ("x",), "Hyperbolic sine elementwise.")
cosh = _op_fn("Cosh", ("x",), "Hyperbolic cosine elementwise.")
tanh = _op_fn("Tanh", ("x",), "Hyperbolic tangent elementwise.")
sigmoid = _op_fn("Sigmoid", ("x",), "1 / (1 + e^-x) elementwise.")
erf = _op_fn("Erf", ("x",), "Gauss error function elementwise.")
erfc = _op_fn("Erfc", ("x",), "Complementary error function elementwise.")
lgamma = _op_fn("Lgamma", ("x",), "log|Gamma(x)| elementwise.")
floor = _op_fn("Floor", ("x",), "Largest integer <= x elementwise.")
ceil = _op_fn("Ceil", ("x",), "Smallest integer >= x elementwise.")
rint = _op_fn("Rint", ("x",), "Nearest integer, halves to even.")
is_nan = _op_fn("IsNan", ("x",), "True where x is NaN.")
is_finite = _op_fn("IsFinite", ("x",), "True where x is finite.")
is_inf = _op_fn("IsInf", ("x",), "True where x is +-inf.")


def pow(x, y, name=None):  # noqa: A001 - TF's public name
    """x ** y elementwise."""
    with _graph.name_scope(name, "Pow", [x, y]) as scope:
        return apply_op("Pow", name=scope, x=x, y=y)


def abs(x, name=None):  # noqa: A001 - TF's public name
    """|x| elementwise; for complex x, the magnitude (a real tensor)."""
    with _graph.name_scope(name, "Abs", [x]) as scope:
        x = convert_to_tensor(x, name="x")
        if x.dtype.is_complex:
            return apply_op("ComplexAbs", name=scope, x=x, Tout=x.dtype.real_dtype)
        return apply_op("Abs", name=scope, x=x)


def round(x, name=None):  # noqa: A001 - TF's public name
    """Rounds half to even elementwise; integers are returned unchanged."""
    x = convert_to_tensor(x, name="x")
    if x.dtype.is_integer:
        return x
    return apply_op("Round", name=name, x=x)


def logical_xor(x, y, name="LogicalXor"):
    """x XOR y, composed as (x OR y) AND NOT (x AND y), as TF does."""
    return logical_and(logical_or(x, y), logical_not(logical_and(x, y)), name=name)


_TRUEDIV_CAST = {_dtypes.int8: _dtypes.float32, _dtypes.uint8: _dtypes.float32,
                 _dtypes.int16: _dtypes.float32, _dtypes.uint16: _dtypes.float32,
                 _dtypes.int32: _dtypes.float64, _dtypes.int64: _dtypes.float64}


def truediv(x, y, name=None):
    """x / y with Python 3 semantics: integers are cast to a float type first."""
    with _graph.name_scope(name, "truediv", [x, y]) as scope:
        x = convert_to_tensor(x, name="x")
        y = convert_to_tensor(y, name="y", dtype=x.dtype.base_dtype)
        if x.dtype.base_dtype != y.dtype.base_dtype:
            raise TypeError(f"x and y must have the same dtype, got {x.dtype.base_dtype!r} != "
                            f"{y.dtype.base_dtype!r}")
        dtype = x.dtype.base_dtype
        if dtype == _dtypes.bool or dtype == _dtypes.string:
            raise TypeError(f"Invalid dtype {dtype!r} in __truediv__")
        if dtype in _TRUEDIV_CAST:
            x = cast(x, _TRUEDIV_CAST[dtype])
            y = cast(y, _TRUEDIV_CAST[dtype])
        return apply_op("RealDiv", name=scope, x=x, y=y)


def div(x, y, name=None):
    """Python 2 division: floor division for integers, true division for floats."""
    with _graph.name_scope(name, "div", [x, y]) as scope:
        x = convert_to_tensor(x, name="x")
        y = convert_to_tensor(y, name="y", dtype=x.dtype.base_dtype)
        if x.dtype.is_floating or x.dtype.is_complex:
            return apply_op("RealDiv", name=scope, x=x, y=y)
        return apply_op("FloorDiv", name=scope, x=x, y=y)


def floordiv(x, y, name=None):
    """Floor division (rounds toward -inf) for integers and floats."""
    with _graph.name_scope(name, "floordiv", [x, y]) as scope:
        return apply_op("FloorDiv", name=scope, x=x, y=y)


divide = truediv
mod = floormod


# -- casts ------------------------------------------------------------------------------------
register(OpDef(
    "Cast", inputs=("x: SrcT",), outputs=("y: DstT",),
    attrs={"SrcT": _dtypes.NUMBERS + (_dtypes.bool,), "DstT": _dtypes.NUMBERS + (_dtypes.bool,),
           "Truncate": False},
    shape=unchanged,
    lower=lambda x, DstT: (jnp.real(x) if x.dtype.kind == "c" and not DstT.is_complex
                           else x).astype(DstT.as_numpy_dtype),
))


def cast(x, dtype, name=None):
    """Converts x to `dtype`; returns x itself when it already has that dtype."""
    dtype = _dtypes.as_dtype(dtype).base_dtype
    with _graph.name_scope(name, "Cast", [x]) as scope:
        x = convert_to_tensor(x, name="x")
        if x.dtype.base_dtype == dtype:
            return x
        return apply_op("Cast", name=scope, x=x, DstT=dtype)


def saturate_cast(value, dtype, name=None):
    """Casts, clamping to `dtype`'s range first so out-of-range values saturate."""
    dtype = _dtypes.as_dtype(dtype).base_dtype
    with _graph.name_scope(name, "saturate_cast", [value]) as scope:
        value = convert_to_tensor(value, name="value")
        if value.dtype.is_floating or value.dtype.is_integer:
            in_dtype = value.dtype.base_dtype
            if in_dtype.min < dtype.min:
                value = maximum(value, cast(dtype.min, in_dtype))
            if in_dtype.max > dtype.max:
                value = minimum(value, cast(dtype.max, in_dtype))
        return cast(value, dtype, name=scope)


def to_float(x, name="ToFloat"):
    return cast(x, _dtypes.float32, name=name)


def to_double(x, name="ToDouble"):
    return cast(x, _dtypes.float64, name=name)


def to_int32(x, name="ToInt32"):
    return cast(x, _dtypes.int32, name=name)


def to_int64(x, name="ToInt64"):
    return cast(x, _dtypes.int64, name=name)


def to_bfloat16(x, name="ToBFloat16"):
    return cast(x, _dtypes.bfloat16, name=name)


# -- n-ary and composites -------------------------------------------------------------------
def _add_n_shape(op):
    shape = op.inputs[0].shape
    for t in op.inputs[1:]:
        if not shape.is_compatible_with(t.shape):
            raise ValueError(f"Shapes must be equal rank, but are {shape.ndims} and "
                             f"{t.shape.ndims}" if shape.ndims != t.shape.ndims else
                             f"Shapes {shape} and {t.shape} are not compatible")
        shape = shape.merge_with(t.shape)
    return shape


register(OpDef("AddN", inputs=("inputs: N * T",), outputs=("sum: T",), attrs={"T": N},
               shape=_add_n_shape, lower=lambda *xs: sum(xs[1:], xs[0])))


def add_n(inputs, name=None):
    """Sums a list of tensors of the same shape and dtype."""
    if not isinstance(inputs, (list, tuple)) or not inputs:
        raise ValueError("inputs must be a list of at least one Tensor/IndexedSlices with the "
                         "same dtype and shape")
    if len(inputs) == 1:
        return apply_op("Identity", name=name, input=inputs[0]) if name else \
            convert_to_tensor(inputs[0])
    return apply_op("AddN", name=name, inputs=list(inputs))


def clip_by_value(t, clip_value_min, clip_value_max, name=None):
    """Clamps t to [clip_value_min, clip_value_max], composed from minimum and maximum."""
    with _graph.name_scope(name, "clip_by_value", [t, clip_value_min, clip_value_max]) as scope:
        t = convert_to_tensor(t, name="t")
        t_min = minimum(t, clip_value_max)
        result = maximum(t_min, clip_value_min, name=scope)
        if not t.shape.is_compatible_with(result.shape):
            raise ValueError(f"clip_by_value: clipping values of shape broadcast the result "
                             f"to {result.shape}, but t has shape {t.shape}")
        return result
