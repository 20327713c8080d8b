"""Gradients of the elementwise math ops, attached to math_ops.py's records with
`register_gradient` (TF's `@ops.RegisterGradient` in math_grad.py).

Each follows TF1's math_grad.py: for complex inputs the gradient is taken in the
conjugate direction (`grad * conj(f'(x))`), and a broadcasting binary op sums each
input's gradient back to that input's shape (`unbroadcast`). Gradients are built from
ordinary ops, including the `*Grad` kernels TF has (TanhGrad, SqrtGrad, ...), which here
are formulas over the op's output, so they can be differentiated again.

They are built with wrappers of other families (where, zeros_like, unbroadcast's
reductions), which sit above math_ops.py, so they live here, above all of those.
"""

from __future__ import annotations

import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.ops.array import gather_ops, generator_ops
from tensorflux._src.ops.math import complex_parts
from tensorflux._src.ops.math import math_ops as M
from tensorflux._src.ops.math.grad_helpers import unbroadcast
from tensorflux._src.ops.registry import register_gradient


def _const(value, like):
    return convert_to_tensor(value, dtype=like.dtype.base_dtype)


def _conj(x):
    return M.conj(x)  # no op for real tensors


def _where(cond, x, y):
    return gather_ops.where(cond, x, y)


def _zeros_like(x):
    return generator_ops.zeros_like(x)


def _ones_like(x):
    return generator_ops.ones_like(x)


def _pair(op, gx, gy):
    """The two input gradients of a broadcasting binary op, summed to each input's shape."""
    x, y = op.inputs
    return [None if gx is None else unbroadcast(gx, x),
            None if gy is None else unbroadcast(gy, y)]


# -- binary arithmetic --------------------------------------------------------------------
@register_gradient("Add", "AddV2")
def add_grad(op, grad):
    return _pair(op, grad, grad)


@register_gradient("Sub")
def sub_grad(op, grad):
    return _pair(op, grad, -grad)


@register_gradient("Mul")
def mul_grad(op, grad):
    x, y = op.inputs
    return _pair(op, grad * _conj(y), _conj(x) * grad)


@register_gradient("RealDiv", "Div")
def div_grad(op, grad):
    # RealDiv and Div (on floats): d/dx = 1 / y, d/dy = -x / y^2.
    x, y = _conj(op.inputs[0]), _conj(op.inputs[1])
    return _pair(op, M.realdiv(grad, y), grad * M.realdiv(M.realdiv(-x, y), y))


@register_gradient("DivNoNan")
def div_no_nan_grad(op, grad):
    x, y = _conj(op.inputs[0]), _conj(op.inputs[1])
    return _pair(op, M.div_no_nan(grad, y),
                 grad * M.div_no_nan(M.div_no_nan(-x, y), y))


@register_gradient("MulNoNan")
def mul_no_nan_grad(op, grad):
    x, y = op.inputs
    return _pair(op, M.multiply_no_nan(grad, y), M.multiply_no_nan(x, grad))


@register_gradient("FloorMod")
def floor_mod_grad(op, grad):
    # x - floor(x / y) * y: d/dx = 1, d/dy = -floor(x / y).
    x, y = _conj(op.inputs[0]), _conj(op.inputs[1])
    return _pair(op, grad, grad * -M.floor_div(x, y))


@register_gradient("Pow")
def pow_grad(op, grad):
    """d/dx = y * x^(y-1); d/dy = z * log(x), taken as 0 where log(x) is undefined."""
    x, y = _conj(op.inputs[0]), _conj(op.inputs[1])
    z = _conj(op.outputs[0])
    gx = grad * y * M.pow(x, y - _const(1, y))
    # Avoid the false singularity at x = 0 (and NaN for real x < 0), as TF does: complex
    # x only needs x != 0.
    mask = M.not_equal(x, _const(0, x)) if x.dtype.is_complex else M.greater(x, _const(0, x))
    safe_x = _where(mask, x, _ones_like(x))
    log_x = _where(mask, M.log(safe_x), _zeros_like(x))
    return _pair(op, gx, grad * z * log_x)


def _maximum_minimum_grad(selector):
    # The gradient goes to the selected input; ties go to x (x >= y for Maximum).
    def grad_fn(op, grad):
        x, y = op.inputs
        zeros = _zeros_like(grad)
        x_mask = selector(x, y)  # broadcast shape, like grad
        return _pair(op, _where(x_mask, grad, zeros), _where(x_mask, zeros, grad))
    return grad_fn


maximum_grad = _maximum_minimum_grad(lambda x, y: M.greater_equal(x, y))
register_gradient("Maximum")(maximum_grad)
minimum_grad = _maximum_minimum_grad(lambda x, y: M.less_equal(x, y))
register_gradient("Minimum")(minimum_grad)


@register_gradient("SquaredDifference")
def squared_difference_grad(op, grad):
    # TF's formula 2 * grad * (x - y); for complex inputs it assumes a real upstream grad.
    x, y = op.inputs
    x_grad = (_const(2.0, grad) * grad) * (x - y)
    gx, gy = _pair(op, x_grad, x_grad)
    return [gx, -gy]


@register_gradient("Atan2")
def atan2_grad(op, grad):
    # atan2(y, x): d/dy = x / (x^2 + y^2), d/dx = -y / (x^2 + y^2). TF's version skips
    # the sum over broadcast axes; summing keeps it right when y and x broadcast.
    y, x = op.inputs
    grad_inv = grad / (M.square(x) + M.square(y))
    return _pair(op, x * grad_inv, -y * grad_inv)


def _not_zero(x):
    return M.cast(M.not_equal(x, _const(0, x)), x.dtype.base_dtype)


@register_gradient("Xlogy")
def xlogy_grad(op, grad):
    # TF takes d/dx = 0 where x == 0 (the op is 0 there whatever y is).
    x, y = op.inputs
    return _pair(op, M.xlogy(_not_zero(x), y) * grad, M.xdivy(x, y) * grad)


@register_gradient("Xdivy")
def xdivy_grad(op, grad):
    x, y = op.inputs
    return _pair(op, M.xdivy(_not_zero(x), y) * grad,
                 M.xdivy(-x, M.square(y)) * grad)


@register_gradient("AddN")
def add_n_grad(op, grad):
    return [grad] * len(op.inputs)


# -- unary ------------------------------------------------------------------------------------
@register_gradient("Neg")
def neg_grad(op, grad):
    return [-grad]


@register_gradient("Abs")
def abs_grad(op, grad):
    return [grad * M.sign(op.inputs[0])]


@register_gradient("Sign")
def sign_grad(op, grad):
    return [_zeros_like(op.inputs[0])]  # TF: zeros, not None


@register_gradient("Reciprocal")
def reciprocal_grad(op, grad):
    # TF's ReciprocalGrad(y, dy) = -dy * conj(y)^2, with y = 1 / x.
    return [-grad * M.square(_conj(op.outputs[0]))]


@register_gradient("Square")
def square_grad(op, grad):
    return [grad * (_conj(op.inputs[0]) * _const(2.0, grad))]


@register_gradient("Sqrt")
def sqrt_grad(op, grad):
    # TF's SqrtGrad(y, dy) = dy * 0.5 / conj(y).
    return [grad * _const(0.5, grad) / _conj(op.outputs[0])]


@register_gradient("Rsqrt")
def rsqrt_grad(op, grad):
    # TF's RsqrtGrad(y, dy) = -0.5 * dy * conj(y)^3.
    y = _conj(op.outputs[0])
    return [grad * _const(-0.5, grad) * (M.square(y) * y)]


@register_gradient("Exp")
def exp_grad(op, grad):
    return [grad * _conj(op.outputs[0])]


@register_gradient("Expm1")
def expm1_grad(op, grad):
    return [grad * M.exp(_conj(op.inputs[0]))]


@register_gradient("Log")
def log_grad(op, grad):
    return [grad * M.reciprocal(_conj(op.inputs[0]))]


@register_gradient("Log1p")
def log1p_grad(op, grad):
    x = _conj(op.inputs[0])
    return [grad * M.reciprocal(_const(1, x) + x)]


@register_gradient("Sin")
def sin_grad(op, grad):
    return [grad * M.cos(_conj(op.inputs[0]))]


@register_gradient("Cos")
def cos_grad(op, grad):
    return [-grad * M.sin(_conj(op.inputs[0]))]


@register_gradient("Tan")
def tan_grad(op, grad):
    secx = M.reciprocal(M.cos(_conj(op.inputs[0])))
    return [M.square(secx) * grad]


def _one_minus_x2(op):
    x = _conj(op.inputs[0])
    return _const(1, x) - M.square(x)


@register_gradient("Asin")
def asin_grad(op, grad):
    return [grad * M.reciprocal(M.sqrt(_one_minus_x2(op)))]


@register_gradient("Acos")
def acos_grad(op, grad):
    return [-grad * M.reciprocal(M.sqrt(_one_minus_x2(op)))]


@register_gradient("Atan")
def atan_grad(op, grad):
    x = _conj(op.inputs[0])
    return [grad * M.reciprocal(_const(1, x) + M.square(x))]


@register_gradient("Atanh")
def atanh_grad(op, grad):
    return [grad * M.reciprocal(_one_minus_x2(op))]


@register_gradient("Sinh")
def sinh_grad(op, grad):
    return [grad * M.cosh(_conj(op.inputs[0]))]


@register_gradient("Cosh")
def cosh_grad(op, grad):
    return [grad * M.sinh(_conj(op.inputs[0]))]


@register_gradient("Tanh")
def tanh_grad(op, grad):
    # TF's TanhGrad(y, dy) = dy * (1 - y^2), with y = tanh(x).
    y = _conj(op.outputs[0])
    return [grad * (_const(1, y) - M.square(y))]


@register_gradient("Asinh")
def asinh_grad(op, grad):
    return [grad / M.cosh(_conj(op.outputs[0]))]


@register_gradient("Acosh")
def acosh_grad(op, grad):
    return [grad / M.sinh(_conj(op.outputs[0]))]


@register_gradient("Sigmoid")
def sigmoid_grad(op, grad):
    # TF's SigmoidGrad(y, dy) = dy * y * (1 - y), with y = sigmoid(x).
    y = _conj(op.outputs[0])
    return [grad * (y * (_const(1, y) - y))]


@register_gradient("Erf")
def erf_grad(op, grad):
    x = _conj(op.inputs[0])
    return [grad * _const(2 / np.sqrt(np.pi), grad) * M.exp(-M.square(x))]


@register_gradient("Erfc")
def erfc_grad(op, grad):
    x = _conj(op.inputs[0])
    return [grad * _const(-2 / np.sqrt(np.pi), grad) * M.exp(-M.square(x))]


@register_gradient("Erfinv")
def erfinv_grad(op, grad):
    return [grad * _const(np.sqrt(np.pi) / 2, grad) * M.exp(M.square(op.outputs[0]))]


@register_gradient("Ndtri")
def ndtri_grad(op, grad):
    y = op.outputs[0]
    return [grad * _const(np.sqrt(2 * np.pi), grad) * M.exp(M.square(y) / _const(2, y))]


@register_gradient("Lgamma")
def lgamma_grad(op, grad):
    return [grad * M.digamma(_conj(op.inputs[0]))]


@register_gradient("Digamma")
def digamma_grad(op, grad):
    x = _conj(op.inputs[0])
    return [grad * M.polygamma(_const(1, x), x)]


@register_gradient("Polygamma")
def polygamma_grad(op, grad):
    # No gradient with respect to the order n, as in TF.
    n, x = _conj(op.inputs[0]), _conj(op.inputs[1])
    return _pair(op, None, M.polygamma(n + _const(1, n), x) * grad)


@register_gradient("BesselI0e")
def bessel_i0e_grad(op, grad):
    x, y = op.inputs[0], op.outputs[0]
    return [grad * (M.bessel_i1e(x) - M.sign(x) * y)]


@register_gradient("BesselI1e")
def bessel_i1e_grad(op, grad):
    # i0e(x) - y * (sign(x) + 1 / x), whose limit at x = 0 is 0.5. The division runs on
    # a safe x so neither this gradient nor its own gradient is NaN at 0.
    x, y = op.inputs[0], op.outputs[0]
    at_zero = M.equal(x, _const(0, x))
    safe_x = _where(at_zero, _ones_like(x), x)
    dy_dx = M.bessel_i0e(safe_x) - y * (M.sign(safe_x) + M.reciprocal(safe_x))
    return [grad * _where(at_zero, _const(0.5, x) * _ones_like(x), dy_dx)]


# -- complex parts and casts ------------------------------------------------------------------
@register_gradient("Complex")
def complex_grad(op, grad):
    return _pair(op, M.real(grad), complex_parts.imag(grad))


@register_gradient("Real")
def real_grad(op, grad):
    return [M.complex(grad, _const(0, grad))]


@register_gradient("Imag")
def imag_grad(op, grad):
    return [M.complex(_const(0, grad), grad)]


@register_gradient("Angle")
def angle_grad(op, grad):
    # -grad / (imag(x) + i real(x))
    x = op.inputs[0]
    z = M.reciprocal(M.complex(complex_parts.imag(x), M.real(x)))
    return [-M.complex(grad, _const(0, grad)) * z]


@register_gradient("Conj")
def conj_grad(op, grad):
    return [M.conj(grad)]


@register_gradient("ComplexAbs")
def complex_abs_grad(op, grad):
    # grad * x / |x|, and 0 where x == 0.
    y = op.outputs[0]
    return [M.div_no_nan(M.complex(grad, _zeros_like(grad)) * op.inputs[0],
                         M.complex(y, _zeros_like(y)))]


_CAST_DIFFERENTIABLE = _dtypes.FLOATS + _dtypes.COMPLEX


@register_gradient("Cast")
def cast_grad(op, grad):
    # Between float and complex types the gradient is cast back; to or from an integer
    # or bool type there is none.
    src = op.inputs[0].dtype.base_dtype
    if src in _CAST_DIFFERENTIABLE and grad.dtype.base_dtype in _CAST_DIFFERENTIABLE:
        return [M.cast(grad, src)]
    return [None]


cast_grad.accepts_indexed_slices = True  # M.cast keeps an IndexedSlices sparse
