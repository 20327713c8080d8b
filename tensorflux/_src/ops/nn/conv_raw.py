"""Top-level raw convolution ops TF exports beside tf.nn: `tf.conv` (the generic N-D
Conv op), `tf.conv2d_backprop_filter_v2` and `tf.conv2d_backprop_input_v2`.

- Conv: an N-D convolution (N = filter rank - 2, 1 to 3) of an input with `batch_dims`
  leading batch dimensions, channels last ("CHANNELS_LAST") or right after the batch
  dims ("CHANNELS_FIRST"), with `groups` (input channels = filter in-channels * groups).
  strides / dilations have N + 2 entries in the input's layout (one for the batch dims,
  one for the channels); dilations [] means all ones, explicit_paddings 2 * (N + 2)
  values in the same order. The lowering folds the batch dims into one and is one
  lax.conv_general_dilated.
- Conv2DBackpropFilterV2 / Conv2DBackpropInputV2: Conv2DBackpropFilter / Input taking
  the filter / input tensor itself (only its shape is used) instead of its sizes; the
  lowerings are the V1 records' (exact transposes of the forward convolution).

TF registers no gradient for these three ops, so tf.gradients raises LookupError.
"""

from __future__ import annotations

import numpy as np
from jax import lax

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import errors
from tensorflux._src.framework.tensor_shape import TensorShape
from tensorflux._src.ops.nn import conv_defs as _defs
from tensorflux._src.ops.nn.window_utils import (ATTR_RULES, FORMATS_2D, PADDINGS_EXPLICIT,
                                                 apply_checked, window_pads, windowed_output_dim)
from tensorflux._src.ops.op_helpers import with_rank
from tensorflux._src.ops.registry import OpDef, REQUIRED, register

__all__ = ["conv", "conv2d_backprop_filter_v2", "conv2d_backprop_input_v2"]

_CONV_T = (_dtypes.float16, _dtypes.bfloat16, _dtypes.float32, _dtypes.float64,
           _dtypes.int32)
_FORMATS = ("CHANNELS_LAST", "CHANNELS_FIRST")


# -- Conv --------------------------------------------------------------------------------------
def _layout(n, batch_dims, data_format):
    """(channel axis, spatial axes) of the input, and the attr index of each spatial dim
    (strides/dilations/explicit paddings have one entry for the batch dims)."""
    if data_format == "CHANNELS_FIRST":
        return batch_dims, list(range(batch_dims + 1, batch_dims + 1 + n)), list(
            range(2, 2 + n))
    return batch_dims + n, list(range(batch_dims, batch_dims + n)), list(range(1, 1 + n))


def _conv_params(op_or_attrs, n):
    get = op_or_attrs.get_attr if hasattr(op_or_attrs, "get_attr") else op_or_attrs.get
    strides, dilations = list(get("strides")), list(get("dilations")) or [1] * (n + 2)
    if len(strides) != n + 2:
        raise ValueError(f"strides must have {n + 2} elements, but got {len(strides)}")
    if len(dilations) != n + 2:
        raise ValueError(f"dilations must have {n + 2} elements, but got {len(dilations)}")
    return strides, dilations


def _conv_shape(op):
    x, w = op.inputs[0].shape, op.inputs[1].shape
    batch_dims, groups = op.get_attr("batch_dims"), op.get_attr("groups")
    if w.ndims is None and x.ndims is None:
        return TensorShape(None)
    n = w.ndims - 2 if w.ndims is not None else x.ndims - 1 - batch_dims
    if not 1 <= n <= 3:
        raise ValueError(f"The filter must have rank 3, 4 or 5, but has rank {n + 2}")
    w = with_rank(w, n + 2)
    x = with_rank(x, n + 1 + batch_dims)
    strides, dilations = _conv_params(op, n)
    channel, spatial, index = _layout(n, batch_dims, op.get_attr("data_format"))
    in_depth, filter_depth = x[channel].value, w[n].value
    if in_depth is not None and filter_depth is not None and in_depth != filter_depth * groups:
        raise ValueError(f"Input depth ({in_depth}) must be equal to the filter's input "
                         f"depth ({filter_depth}) times the number of groups ({groups})")
    out_depth = w[n + 1].value
    if out_depth is not None and out_depth % groups:
        raise ValueError(f"Depth of output ({out_depth}) is not a multiple of the number of "
                         f"groups ({groups})")
    padding = op.get_attr("padding")
    explicit = op.get_attr("explicit_paddings")
    if padding == "EXPLICIT" and len(explicit) != 2 * (n + 2):
        raise ValueError(f"explicit_paddings attribute must contain {2 * (n + 2)} values, "
                         f"but got: {len(explicit)}")
    out = [windowed_output_dim(x[a], w[i], dilations[j], strides[j], padding,
                               *(explicit[2 * j:2 * j + 2] if padding == "EXPLICIT"
                                 else (0, 0)))
           for i, (a, j) in enumerate(zip(spatial, index))]
    batch = x.dims[:batch_dims]
    if op.get_attr("data_format") == "CHANNELS_FIRST":
        return TensorShape(batch + [w[n + 1]] + out)
    return TensorShape(batch + out + [w[n + 1]])


def _conv_lower(input, filter, strides, padding, explicit_paddings, data_format,  # noqa: A002
                dilations, batch_dims, groups):
    n = filter.ndim - 2
    strides, dilations = _conv_params({"strides": strides, "dilations": dilations}, n)
    channel, spatial, index = _layout(n, batch_dims, data_format)
    if input.shape[channel] != filter.shape[n] * groups:
        raise errors.InvalidArgumentError(
            None, None, f"Input depth divided by filter input depth does not match with "
            f"groups parameter ({groups})")
    if filter.shape[n + 1] % groups:
        raise errors.InvalidArgumentError(
            None, None, f"Output depth {filter.shape[n + 1]} is not a multiple of the "
            f"number of groups ({groups})")
    batch_shape = input.shape[:batch_dims]
    x = input.reshape((-1,) + input.shape[batch_dims:])
    letters = "DHW"[3 - n:]
    spec = ("NC" + letters) if data_format == "CHANNELS_FIRST" else ("N" + letters + "C")
    pads = []
    for i, (a, j) in enumerate(zip(spatial, index)):
        before, after = ((explicit_paddings[2 * j], explicit_paddings[2 * j + 1])
                         if padding == "EXPLICIT" else (0, 0))
        b, e, _ = window_pads(input.shape[a], filter.shape[i], dilations[j], strides[j],
                              padding, before, after)
        pads.append((b, e))
    out = lax.conv_general_dilated(
        x, filter, window_strides=[strides[j] for j in index], padding=pads,
        rhs_dilation=[dilations[j] for j in index],
        dimension_numbers=(spec, letters + "IO", spec), feature_group_count=groups,
        preferred_element_type=input.dtype)
    return out.reshape(batch_shape + out.shape[1:])


ATTR_RULES["Conv"] = {"strides": 0, "dilations": 0, "explicit_paddings": 0,
                      "padding": PADDINGS_EXPLICIT, "data_format": _FORMATS}
register(OpDef(
    "Conv", inputs=("input: T", "filter: T"), outputs=("output: T",),
    attrs={"T": _CONV_T, "strides": REQUIRED, "padding": REQUIRED, "explicit_paddings": [],
           "data_format": "CHANNELS_LAST", "dilations": [], "batch_dims": 1, "groups": 1},
    shape=_conv_shape, lower=_conv_lower, xla_cpu_library_fusion=True,
))


def conv(input, filter, strides, padding, explicit_paddings=(),  # noqa: A002
         data_format="CHANNELS_LAST", dilations=(), batch_dims=1, groups=1, name=None):
    """N-D convolution (N = 1, 2, 3) of a (N + 1 + batch_dims)-D input with an (N + 2)-D
    filter [spatial..., in_channels, out_channels]; see the module docstring."""
    return apply_checked("Conv", name=name, input=input, filter=filter, strides=strides,
                         padding=padding, explicit_paddings=list(explicit_paddings),
                         data_format=data_format, dilations=list(dilations),
                         batch_dims=batch_dims, groups=groups)


# -- Conv2DBackpropFilterV2 / Conv2DBackpropInputV2 --------------------------------------------
_filter_v1 = _defs._backprop_filter("Conv2DBackpropFilterV2")
_input_v1 = _defs._backprop_input("Conv2DBackpropInputV2")


def _filter_v2_lower(input, filter, out_backprop, strides, padding, data_format,  # noqa: A002
                     dilations, explicit_paddings):
    return _filter_v1(input, np.array(filter.shape, np.int32), out_backprop, strides,
                      padding, data_format, dilations, explicit_paddings)


def _input_v2_lower(input, filter, out_backprop, strides, padding, data_format,  # noqa: A002
                    dilations, explicit_paddings):
    return _input_v1(np.array(input.shape, np.int32), filter, out_backprop, strides, padding,
                     data_format, dilations, explicit_paddings).astype(out_backprop.dtype)


_V2_T = (_dtypes.float16, _dtypes.bfloat16, _dtypes.float32, _dtypes.float64)
for _name, _index, _lower in (("Conv2DBackpropFilterV2", 1, _filter_v2_lower),
                              ("Conv2DBackpropInputV2", 0, _input_v2_lower)):
    _attrs, _rules = _defs._conv_attrs(FORMATS_2D, explicit=True, cudnn=True)
    _attrs["T"] = _V2_T
    ATTR_RULES[_name] = _rules
    register(OpDef(
        _name, inputs=("input: T", "filter: T", "out_backprop: T"), outputs=("output: T",),
        attrs=_attrs, lower=_lower, xla_cpu_library_fusion=True,
        shape=(lambda i: lambda op: with_rank(op.inputs[i].shape, 4))(_index),
    ))


def conv2d_backprop_filter_v2(input, filter, out_backprop, strides, padding,  # noqa: A002
                              use_cudnn_on_gpu=True, explicit_paddings=(),
                              data_format="NHWC", dilations=(1, 1, 1, 1), name=None):
    """The gradient of conv2d with respect to its filter, whose shape `filter` gives."""
    return apply_checked("Conv2DBackpropFilterV2", name=name, input=input, filter=filter,
                         out_backprop=out_backprop, strides=strides, padding=padding,
                         use_cudnn_on_gpu=use_cudnn_on_gpu,
                         explicit_paddings=list(explicit_paddings), data_format=data_format,
                         dilations=list(dilations))


def conv2d_backprop_input_v2(input, filter, out_backprop, strides, padding,  # noqa: A002
                             use_cudnn_on_gpu=True, explicit_paddings=(),
                             data_format="NHWC", dilations=(1, 1, 1, 1), name=None):
    """The gradient of conv2d with respect to its input, whose shape `input` gives."""
    return apply_checked("Conv2DBackpropInputV2", name=name, input=input, filter=filter,
                         out_backprop=out_backprop, strides=strides, padding=padding,
                         use_cudnn_on_gpu=use_cudnn_on_gpu,
                         explicit_paddings=list(explicit_paddings), data_format=data_format,
                         dilations=list(dilations))

