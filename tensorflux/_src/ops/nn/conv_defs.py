"""Convolution op records: Conv2D, Conv3D, DepthwiseConv2dNative and their backprop ops.

Shape functions follow TF's C++ ones (common_shape_fns.cc), with their messages: SAME
gives ceil(in / stride), VALID ceil((in - (k - 1) * dilation) / stride), EXPLICIT the
VALID rule on the padded input; "Depth of input (3) is not a multiple of input depth of
filter (2)"; "Negative dimension size caused by subtracting 3 from 2". What TF checks
only in its kernels (strides/dilations in the batch or depth dimension, channel counts
that were unknown when the graph was built, a backprop input whose size does not match
the forward op) is checked in the lowerings, at run time, with the kernels' messages.

Lowering: every convolution is one `lax.conv_general_dilated` whose dimension numbers
are the op's own `data_format` (lhs/out "NHWC", "NCHW", "NDHWC" or "NCDHW"; filter
"HWIO"/"DHWIO", TF's filter layout for both formats). No transposes are added in the
graph: XLA's layout assignment picks the physical layout per backend, and NHWC is the
layout its CPU convolution kernels run natively (NCHW input is transposed by XLA around
the kernel), which is why NHWC is the fast path on CPU and the default, as in TF.
Grouped convolution (input depth a multiple of the filter's) is `feature_group_count`;
depthwise convolution is the grouped case with one group per input channel, its filter
[kh, kw, C, M] seen as [kh, kw, 1, C * M] (output channel c * M + m, as in TF).

The backprop ops are the transposes of these linear maps (`jax.linear_transpose`), which
JAX lowers to the same convolutions with lhs dilation / swapped operands that XLA's
own autodiff uses, so they are exact adjoints for every padding, stride and dilation.
"""

from __future__ import annotations

import jax
from jax import lax

from tensorflux._src.compiler import effects, handoff
from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import errors
from tensorflux._src.framework.tensor_shape import TensorShape
from tensorflux._src.ops.nn import conv_grads as _g
from tensorflux._src.ops.nn import conv_im2col as _cols
from tensorflux._src.ops.nn import conv_lowering
from tensorflux._src.ops.nn import conv_onednn as _dnnl
from tensorflux._src.ops.nn import depthwise_shifted as _dw_shifted
from tensorflux._src.ops.nn.window_utils import (ATTR_RULES, FORMATS_2D, FORMATS_3D, PADDINGS,
                                                 PADDINGS_EXPLICIT, channel_axis,
                                                 check_valid_padding, explicit_pads, make_shape,
                                                 spatial_axes, window_pads, windowed_output_dim)
from tensorflux._src.ops.op_helpers import static_input, with_rank
from tensorflux._src.ops.registry import OpDef, REQUIRED, register
from tensorflux._src.ops.shape_fns import static_shape_from_tensor

F = _dtypes.FLOATS
_I32 = _dtypes.int32


# -- shape functions ---------------------------------------------------------------------------
def _check_lengths(op, label, rank, stride_text):
    dilations, strides = op.get_attr("dilations"), op.get_attr("strides")
    if len(dilations) != rank:
        raise ValueError(f"{label} requires the dilation{'s' if label.startswith('Depth') else ''}"
                         f" attribute to contain {rank} values, but got: {len(dilations)}")
    if len(strides) != rank:
        raise ValueError(f"{stride_text} requires the stride attribute to contain {rank} "
                         f"values, but got: {len(strides)}")
    return strides, dilations


def _output_spatial(op, x, w, strides, dilations):
    fmt = op.get_attr("data_format")
    padding = op.get_attr("padding")
    explicit = op.attrs.get("explicit_paddings", [])
    if "explicit_paddings" in op.attrs:
        check_valid_padding(padding, explicit, len(fmt), fmt)
    dims = []
    for i, ax in enumerate(spatial_axes(fmt, len(fmt))):
        dims.append(windowed_output_dim(x[ax], w[i], dilations[ax], strides[ax], padding,
                                        *explicit_pads(explicit, ax)))
    return dims


def _conv_shape(op):
    """Conv2D / Conv3D: TF's Conv2DShapeImpl and Conv3DShape."""
    fmt = op.get_attr("data_format")
    rank = len(fmt)
    x = with_rank(op.inputs[0].shape, rank)
    w = with_rank(op.inputs[1].shape, rank)
    label = op.type
    stride_text = f"Conv2D on data format {fmt}" if label == "Conv2D" else label
    strides, dilations = _check_lengths(op, label, rank, stride_text)
    in_depth = x[channel_axis(fmt, rank)].value
    filter_depth, out_depth = w[-2].value, w[-1].value
    if in_depth is not None and filter_depth is not None:
        if filter_depth == 0 or in_depth % filter_depth:
            raise ValueError(f"Depth of input ({in_depth}) is not a multiple of input depth of "
                             f"filter ({filter_depth})")
        groups = in_depth // filter_depth
        if groups > 1 and out_depth is not None and out_depth % groups:
            raise ValueError(f"Depth of output ({out_depth}) is not a multiple of the number "
                             f"of groups ({groups})")
    spatial = _output_spatial(op, x, w, strides, dilations)
    return TensorShape(make_shape(fmt, x[0], spatial, w[-1]))


def _depthwise_shape(op):
    """TF's DepthwiseConv2DNativeShape: output depth = input depth * channel multiplier."""
    fmt = op.get_attr("data_format")
    x = with_rank(op.inputs[0].shape, 4)
    w = with_rank(op.inputs[1].shape, 4)
    strides, dilations = _check_lengths(op, "DepthwiseConv2D", 4, "DepthwiseConv2D")
    in_depth = x[channel_axis(fmt, 4)]
    if not in_depth.is_compatible_with(w[2]):
        raise ValueError(f"Dimensions must be equal, but are {in_depth} and {w[2]}")
    out_depth = in_depth.merge_with(w[2]) * w[3]
    spatial = _output_spatial(op, x, w, strides, dilations)
    return TensorShape(make_shape(fmt, x[0], spatial, out_depth))


def _shape_from_tensor(index, rank):
    """Backprop ops: the output shape is the value of a shape input (TF's
    MakeShapeFromShapeTensor + WithRank)."""

    def shape_fn(op):
        sizes = op.inputs[index]
        with_rank(sizes.shape, 1)
        return with_rank(static_shape_from_tensor(sizes), rank)

    return shape_fn


# -- lowering ------------------------------------------------------------------------------------
def _spec(data_format):
    n = len(data_format) - 2
    spatial = "DHW"[3 - n:]
    return (data_format, spatial + "IO", data_format)


def _conv(x, w, strides, padding, explicit_paddings, data_format, dilations, groups=1):
    """One TF convolution as lax.conv_general_dilated in the op's own layout."""
    axes = spatial_axes(data_format, x.ndim)
    pads = []
    for i, ax in enumerate(axes):
        before, after, _ = window_pads(x.shape[ax], w.shape[i], dilations[ax], strides[ax],
                                       padding, *explicit_pads(explicit_paddings, ax))
        pads.append((before, after))
    return lax.conv_general_dilated(
        x, w, window_strides=[strides[a] for a in axes], padding=pads,
        rhs_dilation=[dilations[a] for a in axes], dimension_numbers=_spec(data_format),
        feature_group_count=groups)


def _unimplemented(message):
    return errors.UnimplementedError(None, None, message)


def _invalid(message):
    return errors.InvalidArgumentError(None, None, message)


def _check_kernel_attrs(strides, dilations, data_format):
    """Checks TF makes when it builds the kernel (InitConv2DParameters, Conv3DOp)."""
    c = channel_axis(data_format, len(data_format))
    if strides[0] != 1 or strides[c] != 1:
        raise _unimplemented("Current implementation does not yet support strides in the "
                             "batch and depth dimensions.")
    if dilations[0] != 1 or dilations[c] != 1:
        raise _unimplemented("Current implementation does not yet support dilations in the "
                             "batch and depth dimensions.")
    if any(dilations[a] < 1 for a in spatial_axes(data_format, len(data_format))):
        raise _invalid("Dilated rates should be larger than 0.")


def _groups(x_shape, w_shape, data_format, label=None):
    in_depth = x_shape[channel_axis(data_format, len(x_shape))]
    filter_depth = w_shape[-2]
    prefix = f"{label}: " if label else ""
    if filter_depth <= 0 or in_depth % filter_depth:
        raise _invalid(f"{prefix}input depth must be evenly divisible by filter depth: "
                       f"{in_depth} vs {filter_depth}")
    groups = in_depth // filter_depth
    if w_shape[-1] % groups:
        raise _invalid(f"{prefix}output depth must be evenly divisible by number of groups: "
                       f"{w_shape[-1]} vs {groups}")
    return groups


def _depthwise_filter(w, in_depth, label=None):
    """[kh, kw, C, M] -> [kh, kw, 1, C * M]: depthwise as a grouped convolution."""
    if w.shape[2] != in_depth:
        prefix = f"{label}: " if label else ""
        raise _invalid(f"{prefix}input and filter must have the same depth: {in_depth} vs "
                       f"{w.shape[2]}")
    return w.reshape(w.shape[:2] + (1, w.shape[2] * w.shape[3]))


def _im2col(x_shape, w_shape, groups=None):
    """Whether this 2-D convolution is lowered as matrix products (conv_im2col.py): the
    switch says so and it is ungrouped (1x1 filters included: their columns are the
    input itself)."""
    if groups is None:
        groups = x_shape[-1] // w_shape[-2] if len(x_shape) == 4 else 0
    return (len(x_shape) == 4 and groups == 1
            and conv_lowering.choice(conv_lowering.CONV2D) == "im2col")


def _onednn_window(kind, x_shape, w_shape, dtype, strides, padding, explicit_paddings,
                   data_format, dilations):
    """The window (strides, dilations, pads, out) of a Conv2D-family op that runs through
    oneDNN (conv_onednn.py): the switch says so and oneDNN has a fast kernel for its
    shapes. None otherwise."""
    if len(x_shape) != 4 or conv_lowering.choice(conv_lowering.CONV2D) != "onednn":
        return None
    window, out = _shifted_window(x_shape, w_shape, strides, padding, explicit_paddings,
                                  data_format, dilations)
    if not _dnnl.usable(kind, x_shape, w_shape, dtype, out=out, data_format=data_format,
                        **window):
        return None
    return dict(window, out=out)


def _conv2d_lower(input, filter, strides, padding, explicit_paddings, data_format,  # noqa: A002
                  dilations):
    _check_kernel_attrs(strides, dilations, data_format)
    groups = _groups(input.shape, filter.shape, data_format)
    native = _onednn_window(_dnnl.FORWARD, input.shape, filter.shape, input.dtype, strides,
                            padding, explicit_paddings, data_format, dilations)
    if native is not None:
        return _dnnl.forward(input, filter, data_format=data_format, **native)
    if _im2col(input.shape, filter.shape, groups):
        window, out = _shifted_window(input.shape, filter.shape, strides, padding,
                                      explicit_paddings, data_format, dilations)
        return _cols.forward(input, filter, out=out, data_format=data_format, **window)
    return _conv(input, filter, strides, padding, explicit_paddings, data_format, dilations,
                 groups)


def _conv3d_lower(input, filter, strides, padding, data_format, dilations):  # noqa: A002
    _check_kernel_attrs(strides, dilations, data_format)
    groups = _groups(input.shape, filter.shape, data_format)
    return _conv(input, filter, strides, padding, (), data_format, dilations, groups)


def _shifted_window(x_shape, w_shape, strides, padding, explicit_paddings, data_format,
                    dilations):
    """The (h, w) strides, dilations, pads and output size of a depthwise window, for
    depthwise_shifted.py."""
    axes = spatial_axes(data_format, 4)
    pads, out = [], []
    for i, ax in enumerate(axes):
        before, after, size = window_pads(x_shape[ax], w_shape[i], dilations[ax], strides[ax],
                                          padding, *explicit_pads(explicit_paddings, ax))
        pads.append((before, after))
        out.append(size)
    return dict(strides=[strides[a] for a in axes], dilations=[dilations[a] for a in axes],
                pads=pads), out


def _nhwc(shape, data_format):
    shape = tuple(shape)
    return (shape[0], *shape[2:], shape[1]) if data_format.startswith("NC") else shape


def _shifted():
    return conv_lowering.choice(conv_lowering.DEPTHWISE) == "shifted"


def _depthwise_lower(input, filter, strides, padding, explicit_paddings, data_format,  # noqa: A002
                     dilations):
    _check_kernel_attrs(strides, dilations, data_format)
    in_depth = input.shape[channel_axis(data_format, 4)]
    w = _depthwise_filter(filter, in_depth)
    if _shifted():
        window, out = _shifted_window(input.shape, filter.shape, strides, padding,
                                      explicit_paddings, data_format, dilations)
        return _dw_shifted.forward(input, filter, out=out, data_format=data_format, **window)
    return _conv(input, w, strides, padding, explicit_paddings, data_format, dilations,
                 in_depth)


# -- backprop lowerings: transposes of the forward maps ------------------------------------------
def _check_backprop(label, x_shape, w_shape, dy_shape, strides, padding, explicit_paddings,
                    data_format, dilations, depthwise):
    """TF's ConvBackpropComputeDimensionsV2 checks, with its messages."""
    rank = len(data_format)
    for what, shape in (("input", x_shape), ("filter", w_shape), ("out_backprop", dy_shape)):
        if len(shape) != rank:
            raise _invalid(f"{label}: {what} must be {rank}-dimensional")
    _check_kernel_attrs(strides, dilations, data_format)
    if x_shape[0] != dy_shape[0]:
        raise _invalid(f"{label}: input and out_backprop must have the same batch size, "
                       f"input batch: {x_shape[0]} outbackprop batch: {dy_shape[0]}")
    c = channel_axis(data_format, rank)
    if depthwise:
        if x_shape[c] != w_shape[2]:
            raise _invalid(f"{label}: input and filter must have the same depth: "
                           f"{x_shape[c]} vs {w_shape[2]}")
        out_depth = w_shape[2] * w_shape[3]
    else:
        _groups(x_shape, w_shape, data_format, label)
        out_depth = w_shape[-1]
    if dy_shape[c] != out_depth:
        raise _invalid(f"{label}: filter and out_backprop must have the same out_depth")
    for i, ax in enumerate(spatial_axes(data_format, rank)):
        _, _, out = window_pads(x_shape[ax], w_shape[i], dilations[ax], strides[ax], padding,
                                *explicit_pads(explicit_paddings, ax))
        if out != dy_shape[ax]:
            raise _invalid(f"{label}: Size of out_backprop doesn't match computed: actual = "
                           f"{dy_shape[ax]}, computed = {out} spatial_dim: {ax} input: "
                           f"{x_shape[ax]} filter: {w_shape[i]} output: {dy_shape[ax]} "
                           f"stride: {strides[ax]} dilation: {dilations[ax]}")


def _sizes(value, label, name):
    return tuple(int(d) for d in static_input(value, label, name).reshape(-1))


def _forward(x, w, attrs, depthwise):
    if depthwise:
        in_depth = x.shape[channel_axis(attrs["data_format"], 4)]
        return _conv(x, _depthwise_filter(w, in_depth), groups=in_depth, **attrs)
    groups = _groups(x.shape, w.shape, attrs["data_format"])
    return _conv(x, w, groups=groups, **attrs)


# A layer's two gradient ops, each the other's partner in one oneDNN call.
_PARTNER = {"Conv2DBackpropInput": "Conv2DBackpropFilter",
            "Conv2DBackpropFilter": "Conv2DBackpropInput"}
_WINDOW_ATTRS = ("strides", "padding", "explicit_paddings", "data_format", "dilations")


def _onednn_partner(x_shape, w_shape, out_backprop, attrs):
    """The layer's other gradient op, when this trace lowers it later from the same
    out_backprop, window and shapes and it too runs through oneDNN: (that op, the
    operand only it has: x for a filter gradient, w for an input gradient), what the
    paired call (conv_onednn.backprop_pair) needs. None otherwise."""
    op = effects.current_op()
    if op is None or op.type not in _PARTNER or not _dnnl.pairs():
        return None
    dy = op.inputs[2]
    for other in dy.consumers():
        if (other.type != _PARTNER[op.type] or other.inputs[2] is not dy
                or any(other._attrs.get(k) != op._attrs.get(k) for k in _WINDOW_ATTRS)):
            continue
        values = handoff.later_inputs(other)
        if values is None or values[2] is not out_backprop:
            continue
        # Conv2DBackpropFilter(input, filter_sizes, dy) needs x; ...Input(input_sizes,
        # filter, dy) needs w. Its sizes input may not be computed yet (a Shape op lowered
        # just before it); its inferred output shape says what they are.
        needs_x = other.type == "Conv2DBackpropFilter"
        value = values[0] if needs_x else values[1]
        want_out, want_value = (w_shape, x_shape) if needs_x else (x_shape, w_shape)
        out = other.outputs[0].shape
        if (value is None or tuple(value.shape) != tuple(want_value)
                or value.dtype != out_backprop.dtype or not out.is_fully_defined()
                or tuple(out.as_list()) != tuple(want_out)):
            continue
        kind = _dnnl.BACKPROP_FILTER if needs_x else _dnnl.BACKPROP_INPUT
        if _onednn_window(kind, x_shape, w_shape, out_backprop.dtype, **attrs) is None:
            continue
        return other, value
    return None


def _onednn_gradient(kind, x_shape, x, w_shape, w, out_backprop, native, attrs):
    """dx (kind BACKPROP_INPUT) or dw through oneDNN: with its partner op's gradient in
    one call when there is one (`_onednn_partner`), handing the partner its output."""
    partner = _onednn_partner(x_shape, w_shape, out_backprop, attrs)
    if partner is None:
        if kind == _dnnl.BACKPROP_INPUT:
            return _dnnl.backprop_input(x_shape, w, out_backprop, **native,
                                        data_format=attrs["data_format"])
        return _dnnl.backprop_filter(x, w_shape, out_backprop, **native,
                                     data_format=attrs["data_format"])
    other, value = partner
    if kind == _dnnl.BACKPROP_INPUT:
        x = value
    else:
        w = value
    dx, dw = _dnnl.backprop_pair(x, w, out_backprop, **native,
                                 data_format=attrs["data_format"])
    mine, theirs = (dx, dw) if kind == _dnnl.BACKPROP_INPUT else (dw, dx)
    handoff.hand_over(other, [theirs])
    return mine


def _backprop_input(label, depthwise=False):
    def lower(input_sizes, filter, out_backprop, strides, padding, data_format,  # noqa: A002
              dilations, explicit_paddings=()):
        attrs = dict(strides=strides, padding=padding, explicit_paddings=explicit_paddings,
                     data_format=data_format, dilations=dilations)
        x_shape = _sizes(input_sizes, label, "input_sizes")
        _check_backprop(label, x_shape, filter.shape, out_backprop.shape, depthwise=depthwise,
                        **attrs)
        if depthwise and _shifted():
            window, _ = _shifted_window(x_shape, filter.shape, **attrs)
            return _dw_shifted.backprop_input(x_shape, filter, out_backprop,
                                           data_format=data_format, **window)
        native = None if depthwise else _onednn_window(
            _dnnl.BACKPROP_INPUT, x_shape, filter.shape, out_backprop.dtype, **attrs)
        if native is not None:
            return _onednn_gradient(_dnnl.BACKPROP_INPUT, x_shape, None, filter.shape, filter,
                                    out_backprop, native, attrs)
        if not depthwise and _im2col(_nhwc(x_shape, data_format), filter.shape):
            window, _ = _shifted_window(x_shape, filter.shape, **attrs)
            return _cols.backprop_input(x_shape, filter, out_backprop,
                                          data_format=data_format, **window)
        spec = jax.ShapeDtypeStruct(x_shape, out_backprop.dtype)
        transpose = jax.linear_transpose(lambda x: _forward(x, filter, attrs, depthwise), spec)
        return transpose(out_backprop)[0]

    return lower


def _backprop_filter(label, depthwise=False):
    def lower(input, filter_sizes, out_backprop, strides, padding, data_format,  # noqa: A002
              dilations, explicit_paddings=()):
        attrs = dict(strides=strides, padding=padding, explicit_paddings=explicit_paddings,
                     data_format=data_format, dilations=dilations)
        w_shape = _sizes(filter_sizes, label, "filter_sizes")
        _check_backprop(label, input.shape, w_shape, out_backprop.shape, depthwise=depthwise,
                        **attrs)
        if depthwise and _shifted():
            window, _ = _shifted_window(input.shape, w_shape, **attrs)
            return _dw_shifted.backprop_filter(input, w_shape, out_backprop,
                                            data_format=data_format, **window)
        native = None if depthwise else _onednn_window(
            _dnnl.BACKPROP_FILTER, input.shape, w_shape, out_backprop.dtype, **attrs)
        if native is not None:
            return _onednn_gradient(_dnnl.BACKPROP_FILTER, input.shape, input, w_shape, None,
                                    out_backprop, native, attrs)
        if not depthwise and _im2col(_nhwc(input.shape, data_format), w_shape):
            window, _ = _shifted_window(input.shape, w_shape, **attrs)
            return _cols.backprop_filter(input, w_shape, out_backprop,
                                           data_format=data_format, **window)
        spec = jax.ShapeDtypeStruct(w_shape, out_backprop.dtype)
        transpose = jax.linear_transpose(lambda w: _forward(input, w, attrs, depthwise), spec)
        return transpose(out_backprop)[0]

    return lower


# -- records -------------------------------------------------------------------------------------
def _conv_attrs(formats, explicit=True, cudnn=False):
    attrs = {"T": F, "strides": REQUIRED, "padding": REQUIRED}
    rules = {"strides": 0, "dilations": 0, "data_format": formats,
             "padding": PADDINGS_EXPLICIT if explicit else PADDINGS}
    if cudnn:
        attrs["use_cudnn_on_gpu"] = True
        rules["use_cudnn_on_gpu"] = bool
    if explicit:
        attrs["explicit_paddings"] = []
        rules["explicit_paddings"] = 0
    attrs["data_format"] = formats[0]
    attrs["dilations"] = [1] * len(formats[0])
    return attrs, rules


def _register(name, inputs, shape, lower, grad, formats, explicit=True, cudnn=False,
              extra_attrs=None, min_strides=0, lowering_choices=()):
    attrs, rules = _conv_attrs(formats, explicit, cudnn)
    attrs.update(extra_attrs or {})
    rules["strides"] = min_strides
    ATTR_RULES[name] = rules
    # Convolutions compile ~2x faster on XLA:CPU with library dot fusion (options.py).
    register(OpDef(name, inputs=inputs, outputs=("output: T",), attrs=attrs, shape=shape,
                   lower=lower, grad=grad, xla_cpu_library_fusion=True,
                   lowering_choices=lowering_choices,
                   type_defaults={"Tshape": _I32} if "Tshape" in attrs else {}))


_register("Conv2D", ("input: T", "filter: T"), _conv_shape, _conv2d_lower, _g.conv2d_grad,
          FORMATS_2D, cudnn=True, lowering_choices=(conv_lowering.CONV2D,))
_register("Conv2DBackpropInput", ("input_sizes: int32", "filter: T", "out_backprop: T"),
          _shape_from_tensor(0, 4), _backprop_input("Conv2DBackpropInput"),
          _g.conv2d_backprop_input_grad, FORMATS_2D, cudnn=True,
          lowering_choices=(conv_lowering.CONV2D,))
_register("Conv2DBackpropFilter", ("input: T", "filter_sizes: int32", "out_backprop: T"),
          _shape_from_tensor(1, 4), _backprop_filter("Conv2DBackpropFilter"),
          _g.conv2d_backprop_filter_grad, FORMATS_2D, cudnn=True,
          lowering_choices=(conv_lowering.CONV2D,))

_register("Conv3D", ("input: T", "filter: T"), _conv_shape, _conv3d_lower, _g.conv3d_grad,
          FORMATS_3D, explicit=False, min_strides=5)
_register("Conv3DBackpropInputV2", ("input_sizes: Tshape", "filter: T", "out_backprop: T"),
          _shape_from_tensor(0, 5), _backprop_input("Conv3DBackpropInputV2"),
          _g.conv3d_backprop_input_grad, FORMATS_3D, explicit=False, min_strides=5,
          extra_attrs={"Tshape": _dtypes.INDEX})
_register("Conv3DBackpropFilterV2", ("input: T", "filter_sizes: int32", "out_backprop: T"),
          _shape_from_tensor(1, 5), _backprop_filter("Conv3DBackpropFilterV2"),
          _g.conv3d_backprop_filter_grad, FORMATS_3D, explicit=False, min_strides=5)

_register("DepthwiseConv2dNative", ("input: T", "filter: T"), _depthwise_shape,
          _depthwise_lower, _g.depthwise_grad, FORMATS_2D,
          lowering_choices=(conv_lowering.DEPTHWISE,))
_register("DepthwiseConv2dNativeBackpropInput",
          ("input_sizes: int32", "filter: T", "out_backprop: T"), _shape_from_tensor(0, 4),
          _backprop_input("DepthwiseConv2dNativeBackpropInput", depthwise=True),
          _g.depthwise_backprop_input_grad, FORMATS_2D,
          lowering_choices=(conv_lowering.DEPTHWISE,))
_register("DepthwiseConv2dNativeBackpropFilter",
          ("input: T", "filter_sizes: int32", "out_backprop: T"), _shape_from_tensor(1, 4),
          _backprop_filter("DepthwiseConv2dNativeBackpropFilter", depthwise=True),
          _g.depthwise_backprop_filter_grad, FORMATS_2D,
          lowering_choices=(conv_lowering.DEPTHWISE,))
