"""Fake quantization: float32 in, float32 out, rounded to the grid of a num_bits integer
type over [min, max] (tf.quantization's training-time simulation), and the gradient ops.

TF's "nudging" (fake_quant_ops_functor.h) moves [min, max] so that 0.0 falls exactly on
the grid: scale = (max - min) / (quant_max - quant_min), zero point = round(quant_min -
min / scale) clamped to [quant_min, quant_max] (quant_min is 1 with narrow_range, else
0; quant_max is 2^num_bits - 1). Inputs are clamped to the nudged range, then rounded
to the grid. All of it is computed in float32, as the kernels do. The gradients are the
"straight-through" ones: the incoming gradient where the input lies in the nudged
range; below it to `min`, above it to `max` (summed per channel).
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from tensorflux._src.framework.tensor_shape import TensorShape
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.op_helpers import (kernel_error, merge_shapes, with_rank,
                                            with_rank_at_least)
from tensorflux._src.ops.registry import OpDef, register
from tensorflux._src.ops.shape_fns import unchanged

__all__ = ["fake_quant_with_min_max_args", "fake_quant_with_min_max_args_gradient",
           "fake_quant_with_min_max_vars", "fake_quant_with_min_max_vars_gradient",
           "fake_quant_with_min_max_vars_per_channel",
           "fake_quant_with_min_max_vars_per_channel_gradient"]

_F32 = np.float32


def _float_str(v):
    """A float32 as TF's StrCat prints it (shortest of 6 or 9 significant digits)."""
    v = _F32(v)
    text = f"{float(v):.6g}"
    return text if _F32(text) == v else f"{float(v):.9g}"


def _check_num_bits(num_bits):
    if not 2 <= num_bits <= 16:
        raise kernel_error("num_bits must be between 2 and 16, inclusive")


def nudge(min_, max_, num_bits, narrow_range):
    """(nudged_min, nudged_max, scale), elementwise over min_/max_, in float32."""
    qmin = _F32(1 if narrow_range else 0)
    qmax = _F32((1 << num_bits) - 1)
    min_ = jnp.asarray(min_, _F32)
    max_ = jnp.asarray(max_, _F32)
    scale = (max_ - min_) / (qmax - qmin)
    zero_from_min = qmin - min_ / scale
    # std::round rounds halves away from zero (jnp.round would round them to even).
    rounded = jnp.sign(zero_from_min) * jnp.floor(jnp.abs(zero_from_min) + _F32(0.5))
    zero = jnp.where(zero_from_min < qmin, qmin, jnp.where(zero_from_min > qmax, qmax, rounded))
    return (qmin - zero) * scale, (qmax - zero) * scale, scale


def _quantize(x, nudged_min, nudged_max, scale, multiply_inverse=False):
    shifted = jnp.clip(jnp.asarray(x, _F32), nudged_min, nudged_max) - nudged_min
    # The Args kernel multiplies by 1 / scale, the Vars kernels divide by scale.
    steps = shifted * (_F32(1) / scale) if multiply_inverse else shifted / scale
    return jnp.floor(steps + _F32(0.5)) * scale + nudged_min


def _inside(x, nudged_min, nudged_max):
    return (x >= nudged_min) & (x <= nudged_max)


# -- Args: the range in attrs ---------------------------------------------------------------
def _args_check(min, max, num_bits):  # noqa: A002
    if not min < max:
        raise kernel_error(f"min has to be smaller than max, was: {_float_str(min)} >= "
                           f"{_float_str(max)}")
    _check_num_bits(num_bits)


def _args_lower(inputs, min, max, num_bits, narrow_range):  # noqa: A002
    _args_check(min, max, num_bits)
    lo, hi, scale = nudge(min, max, num_bits, narrow_range)
    return _quantize(inputs, lo, hi, scale, multiply_inverse=True)


def _args_gradient_lower(gradients, inputs, min, max, num_bits, narrow_range):  # noqa: A002
    _args_check(min, max, num_bits)
    lo, hi, _ = nudge(min, max, num_bits, narrow_range)
    return jnp.where(_inside(inputs, lo, hi), gradients, _F32(0))


_ARGS_ATTRS = {"min": -6.0, "max": 6.0, "num_bits": 8, "narrow_range": False}
register(OpDef(
    "FakeQuantWithMinMaxArgs", inputs=("inputs: float",), outputs=("outputs: float",),
    attrs=dict(_ARGS_ATTRS), shape=unchanged, lower=_args_lower,
    grad=lambda op, dy: [fake_quant_with_min_max_args_gradient(
        dy, op.inputs[0], min=op.get_attr("min"), max=op.get_attr("max"),
        num_bits=op.get_attr("num_bits"), narrow_range=op.get_attr("narrow_range"))]))
register(OpDef(
    "FakeQuantWithMinMaxArgsGradient", inputs=("gradients: float", "inputs: float"),
    outputs=("backprops: float",), attrs=dict(_ARGS_ATTRS),
    shape=lambda op: merge_shapes(op.inputs[0].shape, op.inputs[1].shape),
    lower=_args_gradient_lower, not_differentiable=True))


def fake_quant_with_min_max_args(inputs, min=-6, max=6, num_bits=8,  # noqa: A002
                                 narrow_range=False, name=None):
    """Fake-quantizes float32 `inputs` over the fixed range [min, max]."""
    return apply_op("FakeQuantWithMinMaxArgs", name=name, inputs=inputs, min=float(min),
                    max=float(max), num_bits=int(num_bits), narrow_range=bool(narrow_range))


def fake_quant_with_min_max_args_gradient(gradients, inputs, min=-6, max=6,  # noqa: A002
                                          num_bits=8, narrow_range=False, name=None):
    """`gradients` where `inputs` lies in the nudged [min, max], else 0."""
    return apply_op("FakeQuantWithMinMaxArgsGradient", name=name, gradients=gradients,
                    inputs=inputs, min=float(min), max=float(max), num_bits=int(num_bits),
                    narrow_range=bool(narrow_range))


# -- Vars: the range in scalar tensors --------------------------------------------------------
def _vars_shape(op):
    with_rank(op.inputs[1].shape, 0)
    with_rank(op.inputs[2].shape, 0)
    return op.inputs[0].shape


def _vars_lower(inputs, min, max, num_bits, narrow_range):  # noqa: A002
    _check_num_bits(num_bits)
    lo, hi, scale = nudge(min, max, num_bits, narrow_range)
    return _quantize(inputs, lo, hi, scale)


def _vars_gradient_lower(gradients, inputs, min, max, num_bits, narrow_range):  # noqa: A002
    _check_num_bits(num_bits)
    lo, hi, _ = nudge(min, max, num_bits, narrow_range)
    zero = _F32(0)
    # Sums over every axis for a scalar range, over all but the last (channel) axis for a
    # per-channel one.
    axes = tuple(range(inputs.ndim - np.ndim(min)))
    return (jnp.where(_inside(inputs, lo, hi), gradients, zero),
            jnp.sum(jnp.where(inputs < lo, gradients, zero), axis=axes),
            jnp.sum(jnp.where(inputs > hi, gradients, zero), axis=axes))


def _vars_gradient_shape(op):
    inputs = merge_shapes(op.inputs[0].shape, op.inputs[1].shape)
    min_max = merge_shapes(with_rank(op.inputs[2].shape, 0), op.inputs[3].shape)
    return [inputs, min_max, min_max]


def _vars_grad(op, dy):
    dx, dmin, dmax = fake_quant_with_min_max_vars_gradient(
        dy, op.inputs[0], op.inputs[1], op.inputs[2], num_bits=op.get_attr("num_bits"),
        narrow_range=op.get_attr("narrow_range"))
    return [dx, dmin, dmax]


_VARS_ATTRS = {"num_bits": 8, "narrow_range": False}
register(OpDef(
    "FakeQuantWithMinMaxVars", inputs=("inputs: float", "min: float", "max: float"),
    outputs=("outputs: float",), attrs=dict(_VARS_ATTRS), shape=_vars_shape,
    lower=_vars_lower, grad=_vars_grad))
register(OpDef(
    "FakeQuantWithMinMaxVarsGradient",
    inputs=("gradients: float", "inputs: float", "min: float", "max: float"),
    outputs=("backprops_wrt_input: float", "backprop_wrt_min: float",
             "backprop_wrt_max: float"),
    attrs=dict(_VARS_ATTRS), shape=_vars_gradient_shape, lower=_vars_gradient_lower,
    not_differentiable=True))


def fake_quant_with_min_max_vars(inputs, min, max, num_bits=8,  # noqa: A002
                                 narrow_range=False, name=None):
    """Fake-quantizes float32 `inputs` over [min, max] given as scalar tensors."""
    return apply_op("FakeQuantWithMinMaxVars", name=name, inputs=inputs, min=min, max=max,
                    num_bits=int(num_bits), narrow_range=bool(narrow_range))


def fake_quant_with_min_max_vars_gradient(gradients, inputs, min, max,  # noqa: A002
                                          num_bits=8, narrow_range=False, name=None):
    """(backprops wrt inputs, wrt min, wrt max) of fake_quant_with_min_max_vars."""
    return apply_op("FakeQuantWithMinMaxVarsGradient", name=name, gradients=gradients,
                    inputs=inputs, min=min, max=max, num_bits=int(num_bits),
                    narrow_range=bool(narrow_range))


# -- VarsPerChannel: one range per entry of the last dimension --------------------------------
def _per_channel_shape(op):
    x = with_rank_at_least(op.inputs[0].shape, 1)
    lo, hi = (with_rank(t.shape, 1) for t in op.inputs[1:])
    last = TensorShape([x.dims[-1]]) if x.ndims is not None else TensorShape([None])
    merge_shapes(merge_shapes(last, lo), hi)
    return x


def _per_channel_lower(inputs, min, max, num_bits, narrow_range):  # noqa: A002
    _check_num_bits(num_bits)
    d = inputs.shape[-1]
    for label, t in (("min", min), ("max", max)):
        if t.shape != (d,):
            raise kernel_error(f"{label} has incorrect size, expected {d} was {t.shape[0]}")
    lo, hi, scale = nudge(min, max, num_bits, narrow_range)
    return _quantize(inputs, lo, hi, scale)


def _per_channel_gradient_shape(op):
    inputs = with_rank_at_least(op.inputs[0].shape, 1)
    if inputs.ndims is not None and inputs.ndims > 4:
        raise ValueError(f"Shape must be at most rank 4 but is rank {inputs.ndims}")
    inputs = merge_shapes(inputs, op.inputs[1].shape)
    last = TensorShape([inputs.dims[-1]]) if inputs.ndims is not None else TensorShape([None])
    min_max = merge_shapes(merge_shapes(with_rank(op.inputs[2].shape, 1), last),
                           op.inputs[3].shape)
    return [inputs, min_max, min_max]


def _per_channel_grad(op, dy):
    dx, dmin, dmax = fake_quant_with_min_max_vars_per_channel_gradient(
        dy, op.inputs[0], op.inputs[1], op.inputs[2], num_bits=op.get_attr("num_bits"),
        narrow_range=op.get_attr("narrow_range"))
    return [dx, dmin, dmax]


register(OpDef(
    "FakeQuantWithMinMaxVarsPerChannel", inputs=("inputs: float", "min: float", "max: float"),
    outputs=("outputs: float",), attrs=dict(_VARS_ATTRS), shape=_per_channel_shape,
    lower=_per_channel_lower, grad=_per_channel_grad))
register(OpDef(
    "FakeQuantWithMinMaxVarsPerChannelGradient",
    inputs=("gradients: float", "inputs: float", "min: float", "max: float"),
    outputs=("backprops_wrt_input: float", "backprop_wrt_min: float",
             "backprop_wrt_max: float"),
    attrs=dict(_VARS_ATTRS), shape=_per_channel_gradient_shape, lower=_vars_gradient_lower,
    not_differentiable=True))


def fake_quant_with_min_max_vars_per_channel(inputs, min, max, num_bits=8,  # noqa: A002
                                             narrow_range=False, name=None):
    """Fake-quantizes float32 `inputs` with one [min[c], max[c]] range per last-axis
    channel c."""
    return apply_op("FakeQuantWithMinMaxVarsPerChannel", name=name, inputs=inputs, min=min,
                    max=max, num_bits=int(num_bits), narrow_range=bool(narrow_range))


def fake_quant_with_min_max_vars_per_channel_gradient(gradients, inputs, min,  # noqa: A002
                                                      max, num_bits=8,  # noqa: A002
                                                      narrow_range=False, name=None):
    """(backprops wrt inputs, wrt min, wrt max) of the per-channel fake quantization."""
    return apply_op("FakeQuantWithMinMaxVarsPerChannelGradient", name=name,
                    gradients=gradients, inputs=inputs, min=min, max=max,
                    num_bits=int(num_bits), narrow_range=bool(narrow_range))
