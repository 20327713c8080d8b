"""Grayscale morphology: `tf.nn.dilation2d` (the Dilation2D op) and `tf.nn.erosion2d`.

    output[b, y, x, c] = max_{dy, dx} input[b, s1 * y + r1 * dy - pad_top,
                                            s2 * x + r2 * dx - pad_left, c]
                                      + filter[dy, dx, c]

over the window positions inside the input (TF's kernel skips padded positions rather
than padding with -inf). Window geometry is TF's GetWindowedOutputSize with the
effective (dilated) filter size. The lowering gathers the [KH, KW] window values per
output (an im2col-style gather with static index tables) and reduces them.

Gradients are TF's: Dilation2DBackpropInput / Dilation2DBackpropFilter route each
output's gradient to the input position and the filter tap of its *first* maximum in
row-major window order (TF's strict ">" scan); the backprop ops have no gradient, as in
TF. erosion2d is TF's duality: -dilation2d(-value, kernel reversed in both spatial dims).
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import errors
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.framework.tensor_shape import TensorShape
from tensorflux._src.ops.array import array_ops
from tensorflux._src.ops.math import math_ops
from tensorflux._src.ops.nn.ctc import merge_dim
from tensorflux._src.ops.nn.window_utils import ATTR_RULES, PADDINGS, apply_checked, window_pads
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.op_helpers import deprecated_argument_lookup, with_rank
from tensorflux._src.ops.registry import OpDef, REQUIRED, register

__all__ = ["dilation2d", "erosion2d"]


# -- shape function ----------------------------------------------------------------------------
def _output_size(in_size, k, rate, stride, padding):
    eff = k + (k - 1) * (rate - 1)
    try:
        return window_pads(in_size, eff, 1, stride, padding)[2]
    except errors.InvalidArgumentError as e:
        raise ValueError(e.message) from None


def _dilation_shape(op):
    x = with_rank(op.inputs[0].shape, 4)
    w = with_rank(op.inputs[1].shape, 3)
    strides, rates = op.get_attr("strides"), op.get_attr("rates")
    if len(strides) != 4:
        raise ValueError(f"Dilation2D requires the stride attribute to contain 4 values, "
                         f"but got: {len(strides)}")
    if len(rates) != 4:
        raise ValueError(f"Dilation2D requires the rates attribute to contain 4 values, but "
                         f"got: {len(rates)}")
    dims = [x[1].value, x[2].value, w[0].value, w[1].value]
    if None in dims:
        return TensorShape([x[0], None, None, w[2]])
    merge_dim(x[3], w[2])
    padding = op.get_attr("padding")
    rows = _output_size(dims[0], dims[2], rates[1], strides[1], padding)
    cols = _output_size(dims[1], dims[3], rates[2], strides[2], padding)
    return TensorShape([x[0], rows, cols, w[2]])


# -- lowering ----------------------------------------------------------------------------------
def _check(input, filter, strides, rates, padding):  # noqa: A002 - TF's names
    """TF's ParseAttributes / ParseSizes checks; returns per-axis (in, out, starts)."""
    if strides[0] != 1 or strides[3] != 1:
        raise errors.UnimplementedError(None, None,
                                        "Stride is only supported across spatial dimensions.")
    if rates[0] != 1 or rates[3] != 1:
        raise errors.UnimplementedError(None, None,
                                        "Rate is only supported across spatial dimensions.")
    if input.ndim != 4:
        raise errors.InvalidArgumentError(None, None, "input must be 4-dimensional")
    if filter.ndim != 3:
        raise errors.InvalidArgumentError(None, None, "filter must be 3-dimensional")
    if input.shape[3] != filter.shape[2]:
        raise errors.InvalidArgumentError(
            None, None, f"input and filter must have the same depth: {input.shape[3]} vs "
            f"{filter.shape[2]}")
    tables = []
    for axis in (1, 2):
        k, rate, stride = filter.shape[axis - 1], rates[axis], strides[axis]
        before, _, out = window_pads(input.shape[axis], k + (k - 1) * (rate - 1), 1, stride,
                                     padding)
        # index[o, j]: the input row/column of window tap j of output o
        index = np.arange(out)[:, None] * stride - before + np.arange(k)[None, :] * rate
        tables.append(index)
    return tables


def _windows(input, filter, strides, rates, padding):  # noqa: A002
    """(values [B, Ho, Wo, KH*KW, C] of input + filter, valid mask, row/col tables)."""
    rows, cols = _check(input, filter, strides, rates, padding)
    h, w = input.shape[1], input.shape[2]
    x = input[:, np.clip(rows, 0, h - 1)]                      # [B, Ho, KH, W, C]
    x = x[:, :, :, np.clip(cols, 0, w - 1)]                     # [B, Ho, KH, Wo, KW, C]
    x = jnp.transpose(x, (0, 1, 3, 2, 4, 5))                    # [B, Ho, Wo, KH, KW, C]
    valid = ((rows >= 0) & (rows < h))[:, None, :, None] & \
        ((cols >= 0) & (cols < w))[None, :, None, :]            # [Ho, Wo, KH, KW]
    shape = x.shape
    values = (x + filter[None, None, None]).reshape(shape[:3] + (-1, shape[-1]))
    valid = valid.reshape(valid.shape[:2] + (-1,))[None, :, :, :, None]
    return values, valid, rows, cols


def _lowest(dtype):
    dtype = np.dtype(dtype)
    return jnp.array(np.finfo(dtype).min if dtype.kind == "f" else np.iinfo(dtype).min, dtype)


def _dilation_lower(input, filter, strides, rates, padding):  # noqa: A002
    values, valid, _, _ = _windows(input, filter, strides, rates, padding)
    if values.shape[3] == 0:
        return jnp.full(values.shape[:3] + values.shape[4:], _lowest(values.dtype))
    return jnp.max(jnp.where(valid, values, _lowest(values.dtype)), axis=3)


def _argmax(input, filter, strides, rates, padding):  # noqa: A002
    """(tap index [B, Ho, Wo, C] of each output's first maximum, row/col tables)."""
    values, valid, rows, cols = _windows(input, filter, strides, rates, padding)
    masked = jnp.where(valid, values, _lowest(values.dtype))
    best = jnp.max(masked, axis=3, keepdims=True)
    return jnp.argmax(valid & (masked == best), axis=3), rows, cols


def _backprop_input_lower(input, filter, out_backprop, strides, rates, padding):  # noqa: A002
    tap, rows, cols = _argmax(input, filter, strides, rates, padding)
    _check_backprop(input, out_backprop, tap.shape)
    kw = filter.shape[1]
    b, ho, wo, c = (jnp.arange(n).reshape([-1 if i == j else 1 for j in range(4)])
                    for i, n in enumerate(tap.shape))
    h_in = jnp.asarray(rows)[ho, tap // kw]
    w_in = jnp.asarray(cols)[wo, tap % kw]
    # Positions in the padding (never a maximum unless every value is the lowest) drop.
    h_in = jnp.where(h_in < 0, input.shape[1], h_in)
    w_in = jnp.where(w_in < 0, input.shape[2], w_in)
    return jnp.zeros(input.shape, out_backprop.dtype).at[b, h_in, w_in, c].add(
        out_backprop, mode="drop")


def _backprop_filter_lower(input, filter, out_backprop, strides, rates, padding):  # noqa: A002
    tap, _, _ = _argmax(input, filter, strides, rates, padding)
    _check_backprop(input, out_backprop, tap.shape)
    kw = filter.shape[1]
    c = jnp.arange(tap.shape[3])[None, None, None, :]
    return jnp.zeros(filter.shape, out_backprop.dtype).at[tap // kw, tap % kw, c].add(
        out_backprop)


def _check_backprop(input, out_backprop, out_shape):  # noqa: A002
    if out_backprop.ndim != 4:
        raise errors.InvalidArgumentError(None, None, "out_backprop must be 4-dimensional")
    if tuple(out_backprop.shape) != tuple(out_shape):
        raise errors.InvalidArgumentError(None, None, "out_backprop has incompatible size.")


def _dilation_grad(op, dy):
    x, w = op.inputs
    attrs = {k: op.get_attr(k) for k in ("strides", "rates", "padding")}
    return [apply_op("Dilation2DBackpropInput", input=x, filter=w, out_backprop=dy, **attrs),
            apply_op("Dilation2DBackpropFilter", input=x, filter=w, out_backprop=dy,
                     **attrs)]


_ATTRS = {"T": _dtypes.REAL, "strides": REQUIRED, "rates": REQUIRED, "padding": REQUIRED}
for _name in ("Dilation2D", "Dilation2DBackpropInput", "Dilation2DBackpropFilter"):
    ATTR_RULES[_name] = {"strides": 4, "rates": 4, "padding": PADDINGS}

register(OpDef("Dilation2D", inputs=("input: T", "filter: T"), outputs=("output: T",),
               attrs=_ATTRS, shape=_dilation_shape, lower=_dilation_lower,
               grad=_dilation_grad))
register(OpDef("Dilation2DBackpropInput", inputs=("input: T", "filter: T", "out_backprop: T"),
               outputs=("in_backprop: T",), attrs=_ATTRS,
               shape=lambda op: with_rank(op.inputs[0].shape, 4),
               lower=_backprop_input_lower))
register(OpDef("Dilation2DBackpropFilter", inputs=("input: T", "filter: T", "out_backprop: T"),
               outputs=("filter_backprop: T",), attrs=_ATTRS,
               shape=lambda op: with_rank(op.inputs[1].shape, 3),
               lower=_backprop_filter_lower))


# -- public API --------------------------------------------------------------------------------
def dilation2d(input, filter=None, strides=None, rates=None, padding=None,  # noqa: A002
               name=None, filters=None, dilations=None):
    """Grayscale dilation of NHWC `input` by a [height, width, depth] structuring
    function: the max over each window of input + filter. `strides` and `rates` have 4
    values ([1, s_h, s_w, 1])."""
    filter = deprecated_argument_lookup("filters", filters, "filter", filter)
    rates = deprecated_argument_lookup("dilations", dilations, "rates", rates)
    return apply_checked("Dilation2D", name=name, input=input, filter=filter,
                         strides=strides, rates=rates, padding=padding)


def erosion2d(value, kernel, strides, rates, padding, name=None):
    """Grayscale erosion: the min over each window of value - kernel (kernel applied
    unmirrored), computed as -dilation2d(-value, reverse(kernel, [0, 1]))."""
    with _graph.name_scope(name, "erosion2d", [value, kernel]) as scope:
        value = convert_to_tensor(value, name="value")
        kernel = convert_to_tensor(kernel, name="kernel")
        dilated = apply_checked("Dilation2D", name=scope, input=math_ops.negative(value),
                                filter=array_ops.reverse(kernel, [0, 1]), strides=strides,
                                rates=rates, padding=padding)
        return math_ops.negative(dilated)
