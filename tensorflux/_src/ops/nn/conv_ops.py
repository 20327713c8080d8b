"""`tf.nn` convolutions, as TF1's nn_ops.py / nn_impl.py build them.

The op records live in conv_defs.py (shape functions, lowerings) and their gradients in
conv_grads.py; this module is the public API with TF1's names, argument handling and
graph structure:

- conv2d -> one Conv2D op named as given (or "Conv2D"); conv3d -> Conv3D;
  depthwise_conv2d -> DepthwiseConv2dNative named "depthwise";
  separable_conv2d -> "separable_conv2d/depthwise" (DepthwiseConv2dNative) followed by
  the pointwise Conv2D "separable_conv2d".
- conv1d is conv2d on expanded inputs, as in TF1: conv1d/ExpandDims, conv1d/ExpandDims_1,
  the Conv2D op "conv1d", then conv1d/Squeeze.
- conv2d_transpose / conv3d_transpose / conv1d_transpose are the backprop-input ops.

One deliberate difference: TF1 builds dilated convolutions (`convolution` with
dilation_rate > 1, `atrous_conv2d`, `depthwise_conv2d` with rate > 1) as
SpaceToBatchND -> convolution -> BatchToSpaceND, because its CPU kernels had no
dilation support. XLA convolutions take dilations directly, so here they are a single
convolution op with the `dilations` attr (same values, same gradients, one kernel).
"""

from __future__ import annotations

import numpy as np

from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.ops.array import array_ops
from tensorflux._src.ops.nn import conv_defs  # noqa: F401 - registers the op records
from tensorflux._src.ops.nn.window_utils import apply_checked, convert_padding, get_sequence
from tensorflux._src.ops.op_helpers import deprecated_argument_lookup

__all__ = [
    "atrous_conv2d", "atrous_conv2d_transpose", "conv1d", "conv1d_transpose", "conv2d",
    "conv2d_backprop_filter", "conv2d_backprop_input", "conv2d_transpose", "conv3d",
    "conv3d_backprop_filter", "conv3d_backprop_filter_v2", "conv3d_transpose",
    "convolution", "depthwise_conv2d", "depthwise_conv2d_backprop_filter",
    "depthwise_conv2d_backprop_input", "depthwise_conv2d_native",
    "depthwise_conv2d_native_backprop_filter", "depthwise_conv2d_native_backprop_input",
    "separable_conv2d",
]

_DEFAULT_DILATIONS_2D = (1, 1, 1, 1)
_DEFAULT_DILATIONS_3D = (1, 1, 1, 1, 1)


def _channel_index(data_format, n):
    return 1 if data_format.startswith("NC") else n + 1


# -- conv2d / conv3d / conv1d ------------------------------------------------------------------
def conv2d(input, filter=None, strides=None, padding=None, use_cudnn_on_gpu=True,  # noqa: A002
           data_format="NHWC", dilations=_DEFAULT_DILATIONS_2D, name=None, filters=None):
    """2-D convolution of a 4-D input with a [height, width, in, out] filter.

    output[b, i, j, k] = sum_{di, dj, q} input[b, s1 * i + d1 * di, s2 * j + d2 * dj, q]
                                         * filter[di, dj, q, k]
    `strides`/`dilations`: an int or 1, 2 or 4 values; `padding`: "SAME", "VALID" or
    explicit [[before, after]] pairs for all four dims. An input depth that is a
    multiple of the filter's in-depth is a grouped convolution.
    """
    filter = deprecated_argument_lookup("filters", filters, "filter", filter)
    padding, explicit_paddings = convert_padding(padding)
    if data_format is None:
        data_format = "NHWC"
    channel_index = _channel_index(data_format, 2)
    strides = get_sequence(strides, 2, channel_index, "strides")
    dilations = get_sequence(dilations, 2, channel_index, "dilations")
    return apply_checked("Conv2D", name=name, input=input, filter=filter, strides=strides,
                         padding=padding, use_cudnn_on_gpu=use_cudnn_on_gpu,
                         explicit_paddings=explicit_paddings, data_format=data_format,
                         dilations=dilations)


def conv3d(input, filter=None, strides=None, padding=None, data_format="NDHWC",  # noqa: A002
           dilations=_DEFAULT_DILATIONS_3D, name=None, filters=None):
    """3-D convolution; `strides` and `dilations` are 5 values, as TF1's conv3d takes them."""
    filter = deprecated_argument_lookup("filters", filters, "filter", filter)
    return apply_checked("Conv3D", name=name, input=input, filter=filter, strides=strides,
                         padding=padding, data_format=data_format, dilations=dilations)


def conv1d(value=None, filters=None, stride=None, padding=None, use_cudnn_on_gpu=None,
           data_format=None, name=None, input=None, dilations=None):  # noqa: A002
    """1-D convolution of [batch, width, in] ("NWC") or [batch, in, width] ("NCW") input
    with a [width, in, out] filter, built from conv2d as TF1 does."""
    value = deprecated_argument_lookup("input", input, "value", value)
    with _graph.name_scope(name, "conv1d", [value, filters]) as scope:
        if data_format is None or data_format in ("NHWC", "NWC"):
            data_format, spatial_start_dim, channel_index = "NHWC", 1, 2
        elif data_format in ("NCHW", "NCW"):
            data_format, spatial_start_dim, channel_index = "NCHW", 2, 1
        else:
            raise ValueError('data_format must be "NWC" or "NCW".')
        strides = [1] + get_sequence(stride, 1, channel_index, "stride")
        dilations = [1] + get_sequence(dilations, 1, channel_index, "dilations")
        value = array_ops.expand_dims(value, spatial_start_dim)
        filters = array_ops.expand_dims(filters, 0)
        result = apply_checked("Conv2D", name=scope, input=value, filter=filters,
                               strides=strides, padding=padding,
                               use_cudnn_on_gpu=use_cudnn_on_gpu, data_format=data_format,
                               dilations=dilations)
        return array_ops.squeeze(result, [spatial_start_dim])


# -- depthwise / separable -------------------------------------------------------------------
def depthwise_conv2d_native(input, filter, strides, padding, data_format="NHWC",  # noqa: A002
                            dilations=_DEFAULT_DILATIONS_2D, name=None):
    """Depthwise 2-D convolution: filter [kh, kw, in, multiplier] gives in * multiplier
    output channels, channel k * multiplier + q from input channel k."""
    padding, explicit_paddings = convert_padding(padding)
    return apply_checked("DepthwiseConv2dNative", name=name, input=input, filter=filter,
                         strides=strides, padding=padding,
                         explicit_paddings=explicit_paddings, data_format=data_format,
                         dilations=dilations)


def _rate_dilations(rate, strides, data_format):
    """depthwise/separable `rate` (2 values) as the op's 4-value dilations."""
    if rate is None:
        rate = [1, 1]
    rate = np.asarray(rate)
    if rate.ndim != 1:
        raise ValueError("rate must be rank 1")
    if rate.shape[0] != 2:
        raise ValueError(f"len(dilation_rate)={rate.shape[0]} but should be 2")
    if np.any(rate < 1):
        raise ValueError("dilation_rate must be positive")
    rate = [int(r) for r in rate]
    fmt = data_format or "NHWC"
    if any(r > 1 for r in rate) and strides is not None:
        spatial = list(strides)[2:] if fmt.startswith("NC") else list(strides)[1:3]
        if any(s > 1 for s in spatial):
            raise ValueError("strides > 1 not supported in conjunction with dilation_rate > 1")
    return [1, 1] + rate if fmt.startswith("NC") else [1] + rate + [1]


def depthwise_conv2d(input, filter, strides, padding, rate=None, name=None,  # noqa: A002
                     data_format=None, dilations=None):
    """Depthwise 2-D convolution (nn_impl.depthwise_conv2d): one DepthwiseConv2dNative op
    named "depthwise"; `rate` (or `dilations`) is the [height, width] dilation."""
    rate = deprecated_argument_lookup("dilations", dilations, "rate", rate)
    with _graph.name_scope(name, "depthwise", [input, filter]) as scope:
        input = convert_to_tensor(input, name="tensor_in")
        filter = convert_to_tensor(filter, name="filter_in")
        dilations = _rate_dilations(rate, strides, data_format)
        return depthwise_conv2d_native(input, filter, strides, padding,
                                       data_format=data_format or "NHWC",
                                       dilations=dilations, name=scope)


def separable_conv2d(input, depthwise_filter, pointwise_filter, strides, padding,  # noqa: A002
                     rate=None, name=None, data_format=None, dilations=None):
    """A depthwise convolution, then a 1x1 convolution mixing its channels."""
    rate = deprecated_argument_lookup("dilations", dilations, "rate", rate)
    with _graph.name_scope(name, "separable_conv2d",
                           [input, depthwise_filter, pointwise_filter]) as scope:
        input = convert_to_tensor(input, name="tensor_in")
        depthwise_filter = convert_to_tensor(depthwise_filter, name="depthwise_filter")
        pointwise_filter = convert_to_tensor(pointwise_filter, name="pointwise_filter")
        pointwise_shape = pointwise_filter.shape.with_rank(4)
        pointwise_shape[0].assert_is_compatible_with(1)
        pointwise_shape[1].assert_is_compatible_with(1)
        dilations = _rate_dilations(rate, strides, data_format)
        depthwise = depthwise_conv2d_native(input, depthwise_filter, strides, padding,
                                            data_format=data_format or "NHWC",
                                            dilations=dilations, name="depthwise")
        return conv2d(depthwise, pointwise_filter, [1, 1, 1, 1], padding="VALID",
                      data_format=data_format, name=scope)


# -- transposed convolutions and backprops -----------------------------------------------------
def _check_transpose_args(value, filter, output_shape, data_format, rank):
    """TF1's conv{2,3}d_transpose argument checks; returns (value, filter, output_shape)."""
    value = convert_to_tensor(value, name="value")
    filter = convert_to_tensor(filter, name="filter")
    axis = 1 if data_format.startswith("NC") else rank - 1
    if not value.shape[axis].is_compatible_with(filter.shape[rank - 1]):
        raise ValueError(f"input channels does not match filter's input channels, "
                         f"{value.shape[axis]} != {filter.shape[rank - 1]}")
    sizes = convert_to_tensor(output_shape, name="output_shape")
    if not sizes.shape.is_compatible_with([rank]):
        raise ValueError(f"output_shape must have shape ({rank},), got {sizes.shape}")
    if isinstance(output_shape, (list, tuple, np.ndarray)):
        if not filter.shape[rank - 2].is_compatible_with(output_shape[axis]):
            raise ValueError(f"output_shape does not match filter's output channels, "
                             f"{output_shape[axis]} != {filter.shape[rank - 2]}")
    return value, filter, sizes


def _transpose_padding(padding):
    if isinstance(padding, str) and padding not in ("VALID", "SAME"):
        raise ValueError(f"padding must be either VALID or SAME: {padding}")
    return convert_padding(padding)


def conv2d_transpose(value=None, filter=None, output_shape=None, strides=None,  # noqa: A002
                     padding="SAME", data_format="NHWC", name=None, input=None, filters=None,
                     dilations=None):
    """The transpose (gradient) of conv2d: a Conv2DBackpropInput op producing
    `output_shape`. `filter` is [height, width, output_channels, in_channels]."""
    value = deprecated_argument_lookup("input", input, "value", value)
    filter = deprecated_argument_lookup("filters", filters, "filter", filter)
    with _graph.name_scope(name, "conv2d_transpose", [value, filter, output_shape]) as scope:
        if data_format is None:
            data_format = "NHWC"
        if data_format not in ("NCHW", "NHWC"):
            raise ValueError("data_format has to be either NCHW or NHWC.")
        value, filter, sizes = _check_transpose_args(value, filter, output_shape, data_format,
                                                     4)
        padding, explicit_paddings = _transpose_padding(padding)
        channel_index = _channel_index(data_format, 2)
        return apply_checked(
            "Conv2DBackpropInput", name=scope, input_sizes=sizes, filter=filter,
            out_backprop=value, strides=get_sequence(strides, 2, channel_index, "strides"),
            padding=padding, explicit_paddings=explicit_paddings, data_format=data_format,
            dilations=get_sequence(dilations, 2, channel_index, "dilations"))


def conv3d_transpose(value, filter=None, output_shape=None, strides=None,  # noqa: A002
                     padding="SAME", data_format="NDHWC", name=None, input=None, filters=None,
                     dilations=None):
    """The transpose of conv3d: a Conv3DBackpropInputV2 op producing `output_shape`."""
    value = deprecated_argument_lookup("input", input, "value", value)
    filter = deprecated_argument_lookup("filters", filters, "filter", filter)
    with _graph.name_scope(name, "conv3d_transpose", [value, filter, output_shape]) as scope:
        if data_format is None:
            data_format = "NDHWC"
        value, filter, sizes = _check_transpose_args(value, filter, output_shape, data_format,
                                                     5)
        if padding not in ("VALID", "SAME"):
            raise ValueError(f"padding must be either VALID or SAME: {padding}")
        channel_index = _channel_index(data_format, 3)
        return apply_checked(
            "Conv3DBackpropInputV2", name=scope, input_sizes=sizes, filter=filter,
            out_backprop=value, strides=get_sequence(strides, 3, channel_index, "strides"),
            padding=padding, data_format=data_format,
            dilations=get_sequence(dilations, 3, channel_index, "dilations"))


def conv1d_transpose(input, filters, output_shape, strides, padding="SAME",  # noqa: A002
                     data_format="NWC", dilations=None, name=None):
    """The transpose of conv1d, built on Conv2DBackpropInput as TF does."""
    with _graph.name_scope(name, "conv1d_transpose", [input, filters, output_shape]) as scope:
        if data_format is None or data_format == "NWC":
            data_format, spatial_start_dim, channel_index = "NHWC", 1, 2
        elif data_format == "NCW":
            data_format, spatial_start_dim, channel_index = "NCHW", 2, 1
        else:
            raise ValueError('data_format must be "NWC" or "NCW".')
        strides = [1] + get_sequence(strides, 1, channel_index, "stride")
        dilations = [1] + get_sequence(dilations, 1, channel_index, "dilations")
        input = array_ops.expand_dims(input, spatial_start_dim)
        filters = array_ops.expand_dims(filters, 0)
        if isinstance(output_shape, (list, tuple, np.ndarray)):
            output_shape = list(output_shape)
            sizes = output_shape[:spatial_start_dim] + [1] + output_shape[spatial_start_dim:]
        else:
            sizes = array_ops.concat([output_shape[:spatial_start_dim], [1],
                                      output_shape[spatial_start_dim:]], 0)
        result = apply_checked("Conv2DBackpropInput", name=scope, input_sizes=sizes,
                               filter=filters, out_backprop=input, strides=strides,
                               padding=padding, data_format=data_format, dilations=dilations)
        return array_ops.squeeze(result, spatial_start_dim)


def conv2d_backprop_input(input_sizes, filter=None, out_backprop=None, strides=None,  # noqa: A002
                          padding=None, use_cudnn_on_gpu=True, data_format="NHWC",
                          dilations=_DEFAULT_DILATIONS_2D, name=None, filters=None):
    """The gradient of conv2d with respect to its input (of shape `input_sizes`)."""
    filter = deprecated_argument_lookup("filters", filters, "filter", filter)
    padding, explicit_paddings = convert_padding(padding)
    return apply_checked("Conv2DBackpropInput", name=name, input_sizes=input_sizes,
                         filter=filter, out_backprop=out_backprop, strides=strides,
                         padding=padding, use_cudnn_on_gpu=use_cudnn_on_gpu,
                         explicit_paddings=explicit_paddings, data_format=data_format,
                         dilations=dilations)


def conv2d_backprop_filter(input, filter_sizes, out_backprop, strides, padding,  # noqa: A002
                           use_cudnn_on_gpu=True, data_format="NHWC",
                           dilations=_DEFAULT_DILATIONS_2D, name=None):
    """The gradient of conv2d with respect to its filter (of shape `filter_sizes`)."""
    padding, explicit_paddings = convert_padding(padding)
    return apply_checked("Conv2DBackpropFilter", name=name, input=input,
                         filter_sizes=filter_sizes, out_backprop=out_backprop, strides=strides,
                         padding=padding, use_cudnn_on_gpu=use_cudnn_on_gpu,
                         explicit_paddings=explicit_paddings, data_format=data_format,
                         dilations=dilations)


def conv3d_backprop_filter_v2(input, filter_sizes, out_backprop, strides, padding,  # noqa: A002
                              data_format="NDHWC", dilations=_DEFAULT_DILATIONS_3D, name=None):
    """The gradient of conv3d with respect to its filter (of shape `filter_sizes`)."""
    return apply_checked("Conv3DBackpropFilterV2", name=name, input=input,
                         filter_sizes=filter_sizes, out_backprop=out_backprop, strides=strides,
                         padding=padding, data_format=data_format, dilations=dilations)


conv3d_backprop_filter = conv3d_backprop_filter_v2


def depthwise_conv2d_native_backprop_input(input_sizes, filter, out_backprop,  # noqa: A002
                                           strides, padding, data_format="NHWC",
                                           dilations=_DEFAULT_DILATIONS_2D, name=None):
    """The gradient of depthwise_conv2d_native with respect to its input."""
    padding, explicit_paddings = convert_padding(padding)
    return apply_checked("DepthwiseConv2dNativeBackpropInput", name=name,
                         input_sizes=input_sizes, filter=filter, out_backprop=out_backprop,
                         strides=strides, padding=padding,
                         explicit_paddings=explicit_paddings, data_format=data_format,
                         dilations=dilations)


def depthwise_conv2d_native_backprop_filter(input, filter_sizes, out_backprop,  # noqa: A002
                                            strides, padding, data_format="NHWC",
                                            dilations=_DEFAULT_DILATIONS_2D, name=None):
    """The gradient of depthwise_conv2d_native with respect to its filter."""
    padding, explicit_paddings = convert_padding(padding)
    return apply_checked("DepthwiseConv2dNativeBackpropFilter", name=name, input=input,
                         filter_sizes=filter_sizes, out_backprop=out_backprop,
                         strides=strides, padding=padding,
                         explicit_paddings=explicit_paddings, data_format=data_format,
                         dilations=dilations)


depthwise_conv2d_backprop_input = depthwise_conv2d_native_backprop_input
depthwise_conv2d_backprop_filter = depthwise_conv2d_native_backprop_filter


# -- dilated and generic convolutions ----------------------------------------------------------
def _check_dilated(input, filter, n, channel_index, strides, dilations):  # noqa: A002
    """The argument checks TF1's Convolution class makes on the dilated path."""
    spatial = slice(2, None) if channel_index == 1 else slice(1, -1)
    if any(d < 1 for d in dilations[spatial]):
        raise ValueError("all values of dilation_rate must be positive")
    if any(s < 1 for s in strides[spatial]):
        raise ValueError("all values of strides must be positive")
    if any(s > 1 for s in strides[spatial]) and any(d > 1 for d in dilations[spatial]):
        raise ValueError("strides > 1 not supported in conjunction with dilation_rate > 1")
    input_shape = input.shape.with_rank(n + 2)
    filter_shape = filter.shape.with_rank(n + 2)
    if not input_shape[channel_index].is_compatible_with(filter_shape[n]):
        raise ValueError(f"number of input channels does not match corresponding dimension "
                         f"of filter, {input_shape[channel_index]} != {filter_shape[n]}")


def convolution(input, filter, padding, strides=None, dilation_rate=None,  # noqa: A002
                name=None, data_format=None, filters=None, dilations=None):
    """N-D convolution (N = 1, 2, 3, from the input's or filter's rank), with optional
    output striding or dilation, dispatched to conv1d / Conv2D / Conv3D."""
    filter = deprecated_argument_lookup("filters", filters, "filter", filter)
    dilation_rate = deprecated_argument_lookup("dilations", dilations, "dilation_rate",
                                               dilation_rate)
    with _graph.name_scope(name, "convolution", [input, filter]) as scope:
        input = convert_to_tensor(input, name="input")
        filter = convert_to_tensor(filter, name="filter")
        rank = input.shape.ndims if input.shape.ndims is not None else filter.shape.ndims
        if rank is None:
            raise ValueError("rank of input or filter must be known")
        n = rank - 2
        if not 1 <= n <= 3:
            raise ValueError(f"Input tensor must be of rank 3, 4 or 5 but was {n + 2}.")
        channel_index = n + 1 if data_format is None else _channel_index(data_format, n)
        strides = get_sequence(strides, n, channel_index, "strides")
        dilations = get_sequence(dilation_rate, n, channel_index, "dilations")
        if any(d != 1 for d in dilations):
            _check_dilated(input, filter, n, channel_index, strides, dilations)
        if n == 1:
            return conv1d(input, filter, strides, padding=padding, data_format=data_format,
                          dilations=dilations, name=scope)
        if n == 2:
            return conv2d(input, filter, strides, padding=padding, data_format=data_format,
                          dilations=dilations, name=scope)
        return conv3d(input, filter, strides, padding=padding,
                      data_format=data_format or "NDHWC", dilations=dilations, name=scope)


def atrous_conv2d(value, filters, rate, padding, name=None):
    """Convolution with holes: conv2d of NHWC `value` with `filters` dilated by `rate`."""
    return convolution(input=value, filter=filters, padding=padding,
                       dilation_rate=np.broadcast_to(rate, (2,)), name=name)


def atrous_conv2d_transpose(value, filters, output_shape, rate, padding, name=None):
    """The transpose of atrous_conv2d (NHWC): one Conv2DBackpropInput with dilations."""
    with _graph.name_scope(name, "atrous_conv2d_transpose",
                           [value, filters, output_shape]) as scope:
        value = convert_to_tensor(value, name="value")
        filters = convert_to_tensor(filters, name="filters")
        if not value.shape[3].is_compatible_with(filters.shape[3]):
            raise ValueError(f"value's input channels does not match filters' input "
                             f"channels, {value.shape[3]} != {filters.shape[3]}")
        if rate < 1:
            raise ValueError(f"rate {rate} cannot be less than one")
        sizes = convert_to_tensor(output_shape, name="output_shape")
        if not sizes.shape.is_compatible_with([4]):
            raise ValueError(f"output_shape must have shape (4,), got {sizes.shape}")
        if isinstance(output_shape, (list, tuple, np.ndarray)):
            if not filters.shape[2].is_compatible_with(output_shape[3]):
                raise ValueError(f"output_shape does not match filter's output channels, "
                                 f"{output_shape[3]} != {filters.shape[2]}")
        if padding not in ("VALID", "SAME"):
            raise ValueError(f"padding must be either VALID or SAME: {padding}")
        return apply_checked("Conv2DBackpropInput", name=scope, input_sizes=sizes,
                             filter=filters, out_backprop=value, strides=[1, 1, 1, 1],
                             padding=padding, data_format="NHWC",
                             dilations=[1, int(rate), int(rate), 1])
