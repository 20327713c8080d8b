"""`tf.nn` normalization: moments, batch normalization (composed and fused), L2 and local
response normalization.

The composed functions (moments, batch_normalization, l2_normalize) are TF1's formulas
over ordinary ops, so they differentiate for free. FusedBatchNormV3 and LRN are kernels
with their own gradient kernels, as in TF; their dtype sets are TF's (no float64).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.framework.tensor_shape import TensorShape, unknown_shape
from tensorflux._src.ops.array import array_ops
from tensorflux._src.ops.array.array_ops import stop_gradient
from tensorflux._src.ops.array.gather_ops import gather
from tensorflux._src.ops.array.generator_ops import zeros_like
from tensorflux._src.ops.math import math_ops, reduce_ops
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.op_helpers import deprecated_argument_lookup, merge_shapes, with_rank
from tensorflux._src.ops.registry import OpDef, register

__all__ = ["l2_normalize", "moments", "weighted_moments", "sufficient_statistics",
           "normalize_moments", "batch_normalization", "batch_norm_with_global_normalization",
           "fused_batch_norm", "local_response_normalization", "lrn"]

_HALF = (_dtypes.float16, _dtypes.bfloat16, _dtypes.float32)  # TF's sets for these kernels
# TF's FusedBatchNormV3 types its statistics "U" (float32 only). registry._parse_arg reads
# "U" in a signature as NumPy's unicode dtype code, so the signatures say float and U is
# kept as an attr with its only value.
_U = (_dtypes.float32,)


# -- composed normalizations -----------------------------------------------------------------
def l2_normalize(x, axis=None, epsilon=1e-12, name=None, dim=None):
    """x / sqrt(max(sum(x ** 2, axis), epsilon))."""
    axis = deprecated_argument_lookup("axis", axis, "dim", dim)
    with _graph.name_scope(name, "l2_normalize", [x]) as scope:
        x = convert_to_tensor(x, name="x")
        square_sum = reduce_ops.reduce_sum(math_ops.square(x), axis, keepdims=True)
        x_inv_norm = math_ops.rsqrt(math_ops.maximum(square_sum, epsilon))
        return math_ops.multiply(x, x_inv_norm, name=scope)


def moments(x, axes, shift=None, name=None, keep_dims=None, keepdims=None):
    """Mean and (biased) variance of x over `axes`; `shift` is accepted and ignored, as in
    TF. float16 inputs are reduced in float32."""
    del shift
    keep_dims = bool(deprecated_argument_lookup("keepdims", keepdims, "keep_dims", keep_dims))
    with _graph.name_scope(name, "moments", [x, axes]):
        x = convert_to_tensor(x, name="x")
        y = math_ops.cast(x, _dtypes.float32) if x.dtype == _dtypes.float16 else x
        mean = reduce_ops.reduce_mean(y, axes, keepdims=True, name="mean")
        # The variance's gradient through the mean is zero, so stop_gradient changes nothing
        # but the graph's size.
        variance = reduce_ops.reduce_mean(
            math_ops.squared_difference(y, stop_gradient(mean)), axes, keepdims=True,
            name="variance")
        if not keep_dims:
            mean = array_ops.squeeze(mean, axes)
            variance = array_ops.squeeze(variance, axes)
        if x.dtype == _dtypes.float16:
            return math_ops.cast(mean, _dtypes.float16), math_ops.cast(variance, _dtypes.float16)
        return mean, variance


def weighted_moments(x, axes, frequency_weights, name=None, keep_dims=None, keepdims=None):
    """Frequency-weighted mean and variance of x over `axes` (weights broadcast to x)."""
    keep_dims = bool(deprecated_argument_lookup("keepdims", keepdims, "keep_dims", keep_dims))
    with _graph.name_scope(name, "weighted_moments", [x, frequency_weights, axes]):
        x = convert_to_tensor(x, name="x")
        frequency_weights = convert_to_tensor(frequency_weights, name="frequency_weights")
        needs_cast = x.dtype == _dtypes.float16
        if needs_cast:
            x = math_ops.cast(x, _dtypes.float32)
        if frequency_weights.dtype != x.dtype:
            frequency_weights = math_ops.cast(frequency_weights, x.dtype)
        weighted_input_sum = reduce_ops.reduce_sum(frequency_weights * x, axes,
                                                   name="weighted_input_sum", keepdims=True)
        # Weights may broadcast against x: sum them at x's shape.
        broadcasted_weights = frequency_weights + zeros_like(x)
        sum_of_weights = reduce_ops.reduce_sum(broadcasted_weights, axes,
                                               name="sum_of_weights", keepdims=True)
        divisor = math_ops.reciprocal(sum_of_weights, name="inv_weight_sum")
        weighted_mean = math_ops.multiply(weighted_input_sum, divisor)
        weighted_distsq = reduce_ops.reduce_sum(
            frequency_weights * math_ops.squared_difference(x, weighted_mean), axes,
            name="weighted_distsq", keepdims=True)
        weighted_variance = math_ops.multiply(weighted_distsq, divisor)
        if not keep_dims:
            weighted_mean = array_ops.squeeze(weighted_mean, axis=axes)
            weighted_variance = array_ops.squeeze(weighted_variance, axis=axes)
        if needs_cast:
            weighted_mean = math_ops.cast(weighted_mean, _dtypes.float16)
            weighted_variance = math_ops.cast(weighted_variance, _dtypes.float16)
        return weighted_mean, weighted_variance


def sufficient_statistics(x, axes, shift=None, keep_dims=None, name=None, keepdims=None):
    """(count, sum of (x - shift), sum of (x - shift) ** 2, shift) over `axes`."""
    axes = sorted(set(axes))
    keep_dims = bool(deprecated_argument_lookup("keepdims", keepdims, "keep_dims", keep_dims))
    with _graph.name_scope(name, "sufficient_statistics", [x, shift]):
        x = convert_to_tensor(x, name="x")
        dims = x.shape.as_list() if x.shape.ndims is not None else None
        if dims is not None and all(dims[d] is not None for d in axes):
            count = 1
            for d in axes:
                count *= dims[d]
            counts = convert_to_tensor(count, dtype=x.dtype.base_dtype)
        else:
            x_dims = gather(math_ops.cast(array_ops.shape(x), x.dtype.base_dtype), axes)
            counts = reduce_ops.reduce_prod(x_dims, name="count")
        if shift is not None:
            shift = convert_to_tensor(shift, name="shift")
            m_ss = math_ops.subtract(x, shift)
            v_ss = math_ops.squared_difference(x, shift)
        else:
            m_ss, v_ss = x, math_ops.square(x)
        m_ss = reduce_ops.reduce_sum(m_ss, axes, keepdims=keep_dims, name="mean_ss")
        v_ss = reduce_ops.reduce_sum(v_ss, axes, keepdims=keep_dims, name="var_ss")
    return counts, m_ss, v_ss, shift


def normalize_moments(counts, mean_ss, variance_ss, shift, name=None):
    """Mean and variance from sufficient_statistics' outputs."""
    with _graph.name_scope(name, "normalize", [counts, mean_ss, variance_ss, shift]):
        divisor = math_ops.reciprocal(counts, name="divisor")
        if shift is not None:
            shifted_mean = math_ops.multiply(mean_ss, divisor, name="shifted_mean")
            mean = math_ops.add(shifted_mean, shift, name="mean")
        else:
            shifted_mean = math_ops.multiply(mean_ss, divisor, name="mean")
            mean = shifted_mean
        variance = math_ops.subtract(math_ops.multiply(variance_ss, divisor),
                                     math_ops.square(shifted_mean), name="variance")
    return mean, variance


def batch_normalization(x, mean, variance, offset, scale, variance_epsilon, name=None):
    """scale * (x - mean) / sqrt(variance + variance_epsilon) + offset (None: omitted),
    computed as x * inv + (offset - mean * inv), TF's order of ops."""
    with _graph.name_scope(name, "batchnorm", [x, mean, variance, scale, offset]):
        x = convert_to_tensor(x, name="x")
        variance = convert_to_tensor(variance, name="variance")
        inv = math_ops.rsqrt(variance + variance_epsilon)
        if scale is not None:
            inv *= scale
        shift = offset - mean * inv if offset is not None else -mean * inv
        return x * math_ops.cast(inv, x.dtype) + math_ops.cast(shift, x.dtype)


def batch_norm_with_global_normalization(t=None, m=None, v=None, beta=None, gamma=None,
                                         variance_epsilon=None,
                                         scale_after_normalization=None, name=None,
                                         input=None, mean=None, variance=None):  # noqa: A002
    """Deprecated in TF: batch_normalization(t, m, v, beta, gamma if scaling, epsilon)."""
    t = deprecated_argument_lookup("input", input, "t", t)
    m = deprecated_argument_lookup("mean", mean, "m", m)
    v = deprecated_argument_lookup("variance", variance, "v", v)
    return batch_normalization(t, m, v, beta, gamma if scale_after_normalization else None,
                               variance_epsilon, name)


# -- FusedBatchNormV3 --------------------------------------------------------------------------
def _channel_axis(data_format):
    return 1 if data_format == "NCHW" else 3


def _check_format(op):
    fmt = op.get_attr("data_format")
    if fmt not in ("NHWC", "NCHW"):
        raise ValueError(f"Invalid data format: {fmt}")
    return _channel_axis(fmt)


def _fused_batch_norm_shape(op):
    c_axis = _check_format(op)
    x = with_rank(op.inputs[0].shape, 4)
    channels = TensorShape([x[c_axis]])
    # scale and offset, and in inference mean and variance, are vectors of the channels.
    for t in op.inputs[1:3 if op.get_attr("is_training") else 5]:
        channels = merge_shapes(channels, with_rank(t.shape, 1))
    dims = x.as_list()
    dims[c_axis] = channels[0].value
    return [TensorShape(dims)] + [channels] * 4 + [unknown_shape()]


def _reduce_axes(c_axis):
    return tuple(i for i in range(4) if i != c_axis)


def _as_channels(v, c_axis):  # (C,) -> broadcastable against (N, H, W, C) or (N, C, H, W)
    return v.reshape((1, -1, 1, 1) if c_axis == 1 else (1, 1, 1, -1))


def _fused_batch_norm_lower(x, scale, offset, mean, variance, epsilon, data_format,
                            is_training):
    c_axis = _channel_axis(data_format)
    axes = _reduce_axes(c_axis)
    xf = x.astype(jnp.float32)  # U is float32: statistics are computed in float32
    if is_training:
        batch_mean = jnp.mean(xf, axes)
        var = jnp.mean(jnp.square(xf - _as_channels(batch_mean, c_axis)), axes)
        n = x.size // max(x.shape[c_axis], 1)
        # The returned variance is Bessel-corrected; y is normalized with the biased one.
        batch_var = var * (n / max(n - 1, 1))
        mean = batch_mean
    else:
        var, batch_var = variance, variance
    inv = jax.lax.rsqrt(var + jnp.float32(epsilon)) * scale
    y = (xf - _as_channels(mean, c_axis)) * _as_channels(inv, c_axis) + _as_channels(offset,
                                                                                   c_axis)
    # reserve_space_1/2 carry the mean and the biased variance to the gradient kernel.
    return (y.astype(x.dtype), mean, batch_var, mean, var, jnp.zeros((), jnp.float32))


def _fused_batch_norm_grad(op, dy, *unused_output_grads):
    # Only y's gradient flows, as in TF (batch_mean/batch_variance are statistics).
    x, scale, _, mean, variance = op.inputs
    training = op.get_attr("is_training")
    rs1, rs2 = (op.outputs[3], op.outputs[4]) if training else (mean, variance)
    dx, dscale, doffset, _, _ = apply_op(
        "FusedBatchNormGradV3", y_backprop=dy, x=x, scale=scale, reserve_space_1=rs1,
        reserve_space_2=rs2, reserve_space_3=op.outputs[5], epsilon=op.get_attr("epsilon"),
        data_format=op.get_attr("data_format"), is_training=training)
    return [dx, dscale, doffset, None, None]


register(OpDef(
    "FusedBatchNormV3",
    inputs=("x: T", "scale: float", "offset: float", "mean: float", "variance: float"),
    outputs=("y: T", "batch_mean: float", "batch_variance: float", "reserve_space_1: float",
             "reserve_space_2: float", "reserve_space_3: float"),
    attrs={"T": _HALF, "U": _U, "epsilon": 0.0001, "data_format": "NHWC",
           "is_training": True}, type_defaults={"U": _dtypes.float32},
    shape=_fused_batch_norm_shape, lower=_fused_batch_norm_lower, grad=_fused_batch_norm_grad,
))


def _fused_batch_norm_grad_shape(op):
    c_axis = _check_format(op)
    dy = with_rank(op.inputs[0].shape, 4)
    x = merge_shapes(dy, with_rank(op.inputs[1].shape, 4))
    channels = TensorShape([x[c_axis]])
    for t in op.inputs[2:5]:
        channels = merge_shapes(channels, with_rank(t.shape, 1))
    dims = x.as_list()
    dims[c_axis] = channels[0].value
    return [TensorShape(dims), channels, channels, TensorShape([0]), TensorShape([0])]


def _fused_batch_norm_grad_lower(y_backprop, x, scale, reserve_space_1, reserve_space_2,
                                 reserve_space_3, epsilon, data_format, is_training):
    c_axis = _channel_axis(data_format)
    axes = _reduce_axes(c_axis)
    dy, xf = y_backprop.astype(jnp.float32), x.astype(jnp.float32)
    inv = jax.lax.rsqrt(reserve_space_2 + jnp.float32(epsilon))  # (C,)
    xc = xf - _as_channels(reserve_space_1, c_axis)
    doffset = jnp.sum(dy, axes)
    sum_dy_xc = jnp.sum(dy * xc, axes)
    dscale = sum_dy_xc * inv
    if is_training:
        n = x.size // max(x.shape[c_axis], 1)
        dx = _as_channels(scale * inv, c_axis) * (
            dy - _as_channels(doffset / n, c_axis)
            - xc * _as_channels(sum_dy_xc / n * inv * inv, c_axis))
    else:
        dx = dy * _as_channels(scale * inv, c_axis)
    empty = jnp.zeros((0,), jnp.float32)
    return dx.astype(x.dtype), dscale, doffset, empty, empty


def _batch_norm_grad_graph(grad_y, x, scale, pop_mean, pop_var, epsilon, data_format,
                           is_training):
    """(dx, dscale, doffset) of fused batch norm written with ordinary ops (TF's
    _BatchNormGrad), so the gradient kernel can be differentiated again."""
    x_dtype = x.dtype.base_dtype
    if x_dtype != _dtypes.float32:
        x, grad_y = math_ops.cast(x, _dtypes.float32), math_ops.cast(grad_y, _dtypes.float32)
    c_axis = _channel_axis(data_format)
    axes = list(_reduce_axes(c_axis))
    shape = [1, -1, 1, 1] if c_axis == 1 else [1, 1, 1, -1]
    scale_b = array_ops.reshape(scale, shape)
    if is_training:
        mean_grad_y = reduce_ops.reduce_mean(grad_y, axes, keepdims=True)
        mean_x = reduce_ops.reduce_mean(x, axes, keepdims=True)
        var_x = reduce_ops.reduce_mean(math_ops.squared_difference(x, mean_x), axes,
                                       keepdims=True)
        x_offset = x - mean_x
        mean = reduce_ops.reduce_mean(grad_y * x_offset, axes, keepdims=True)
        rsqrt = math_ops.rsqrt(var_x + epsilon)
        grad_x = scale_b * rsqrt * (grad_y - mean_grad_y
                                    - math_ops.reciprocal(var_x + epsilon) * mean * x_offset)
        grad_scale = array_ops.reshape(rsqrt, [-1]) * reduce_ops.reduce_sum(grad_y * x_offset,
                                                                            axes)
    else:
        rsqrt = math_ops.rsqrt(array_ops.reshape(pop_var, shape) + epsilon)
        grad_scale = reduce_ops.reduce_sum(
            grad_y * (x - array_ops.reshape(pop_mean, shape)) * rsqrt, axes)
        grad_x = grad_y * scale_b * rsqrt
    grad_offset = reduce_ops.reduce_sum(grad_y, axes)
    return math_ops.cast(grad_x, x_dtype), grad_scale, grad_offset


def _fused_batch_norm_grad_grad(op, ggx, ggscale, ggoffset, *unused):
    from tensorflux._src.autodiff.gradients import gradients
    dy, x, scale, rs1, rs2, _ = op.inputs
    outs = _batch_norm_grad_graph(dy, x, scale, rs1, rs2, op.get_attr("epsilon"),
                                  op.get_attr("data_format"), op.get_attr("is_training"))
    g_dy, g_x, g_scale = gradients(list(outs), [dy, x, scale], grad_ys=[ggx, ggscale, ggoffset])
    return [g_dy, g_x, g_scale, None, None, None]


register(OpDef(
    "FusedBatchNormGradV3",
    inputs=("y_backprop: T", "x: T", "scale: float", "reserve_space_1: float",
            "reserve_space_2: float", "reserve_space_3: float"),
    outputs=("x_backprop: T", "scale_backprop: float", "offset_backprop: float",
             "reserve_space_4: float", "reserve_space_5: float"),
    attrs={"T": _HALF, "U": _U, "epsilon": 0.0001, "data_format": "NHWC",
           "is_training": True}, type_defaults={"U": _dtypes.float32},
    shape=_fused_batch_norm_grad_shape, lower=_fused_batch_norm_grad_lower,
    grad=_fused_batch_norm_grad_grad,
))


def fused_batch_norm(x, scale, offset, mean=None, variance=None, epsilon=0.001,
                     data_format="NHWC", is_training=True, name=None):
    """Batch normalization of a 4-D x over all axes but the channels', in one kernel.

    Training: normalizes with the batch statistics and returns (y, batch_mean,
    batch_variance), the variance Bessel-corrected (n / (n - 1)) as TF returns it.
    Inference: normalizes with the given mean and variance and returns them.
    """
    if is_training:
        if mean is not None or variance is not None:
            raise ValueError("Both 'mean' and 'variance' must be None if is_training is True.")
    elif mean is None or variance is None:
        raise ValueError("Both 'mean' and 'variance' must be a 1D tensor when is_training "
                         "is False.")
    x = convert_to_tensor(x, name="input")
    scale = convert_to_tensor(scale, name="scale")
    offset = convert_to_tensor(offset, name="offset")
    if mean is None:
        mean = convert_to_tensor(np.zeros([0], np.float32))
    if variance is None:
        variance = convert_to_tensor(np.zeros([0], np.float32))
    # cuDNN's minimum epsilon, which TF applies on every device.
    epsilon = max(float(epsilon), 1.001e-5)
    y, batch_mean, batch_var, _, _, _ = apply_op(
        "FusedBatchNormV3", name=name, x=x, scale=scale, offset=offset, mean=mean,
        variance=variance, epsilon=epsilon, data_format=data_format,
        is_training=bool(is_training))
    return y, batch_mean, batch_var


# -- local response normalization ------------------------------------------------------------
def _lrn(x, depth_radius, bias, alpha, beta):
    # sqr_sum[..., d] = sum(x[..., d - r : d + r + 1] ** 2); y = x / (bias + alpha sqr_sum)^beta
    xf = x.astype(jnp.float32) if x.dtype != jnp.float32 else x
    r = depth_radius
    # A Python 0. init makes this XLA's differentiable window sum.
    sqr_sum = jax.lax.reduce_window(jnp.square(xf), 0., jax.lax.add, (1, 1, 1, 2 * r + 1),
                                    (1, 1, 1, 1), ((0, 0), (0, 0), (0, 0), (r, r)))
    return (xf / jnp.power(bias + alpha * sqr_sum, beta)).astype(x.dtype)


def _lrn_grad_lower(input_grads, input_image, output_image, depth_radius, bias, alpha, beta):
    _, vjp = jax.vjp(lambda x: _lrn(x, depth_radius, bias, alpha, beta), input_image)
    return vjp(input_grads)[0]


def _lrn_shape(op):
    if op.get_attr("depth_radius") < 0:
        raise ValueError(f"Value for attr 'depth_radius' of {op.get_attr('depth_radius')} "
                         f"must be at least minimum 0")
    return with_rank(op.inputs[0].shape, 4)


def _lrn_grad_shape(op):
    shape = with_rank(op.inputs[0].shape, 4)
    for t in op.inputs[1:]:
        shape = merge_shapes(shape, with_rank(t.shape, 4))
    return shape


_LRN_ATTRS = {"depth_radius": 5, "bias": 1.0, "alpha": 1.0, "beta": 0.5}
# TF defines no gradient for LRNGrad: tf.gradients of it raises LookupError, as in TF.
register(OpDef(
    "LRNGrad", inputs=("input_grads: T", "input_image: T", "output_image: T"),
    outputs=("output: T",), attrs={"T": _HALF, **_LRN_ATTRS}, shape=_lrn_grad_shape,
    lower=_lrn_grad_lower,
))
register(OpDef(
    "LRN", inputs=("input: T",), outputs=("output: T",), attrs={"T": _HALF, **_LRN_ATTRS},
    shape=_lrn_shape, lower=_lrn,
    grad=lambda op, grad: [apply_op(
        "LRNGrad", input_grads=grad, input_image=op.inputs[0], output_image=op.outputs[0],
        **{k: op.get_attr(k) for k in _LRN_ATTRS})],
))


def local_response_normalization(input, depth_radius=5, bias=1, alpha=1, beta=0.5,  # noqa: A002
                                 name=None):
    """Normalizes each 4-D input vector along its last axis by the squares of its
    2 * depth_radius + 1 neighbours: input / (bias + alpha * sqr_sum) ** beta."""
    return apply_op("LRN", name=name, input=input, depth_radius=int(depth_radius),
                    bias=float(bias), alpha=float(alpha), beta=float(beta))


lrn = local_response_normalization
