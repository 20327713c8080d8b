"""Gradient functions of the convolution ops (the `grad=` of conv_defs.py's records).

They follow TF1's nn_grad.py: the gradients of a convolution are its two backprop ops,
and each backprop op is differentiated with the forward op and the other backprop op,
so second derivatives (Hessian-vector products, gradient penalties) work:

    Conv2D(x, w) -> dy:            dx = Conv2DBackpropInput(shape(x), w, dy)
                                   dw = Conv2DBackpropFilter(x, shape(w), dy)
    Conv2DBackpropInput(s, w, g):  dw = Conv2DBackpropFilter(dy, shape(w), g)
                                   dg = Conv2D(dy, w)
    Conv2DBackpropFilter(x, s, g): dx = Conv2DBackpropInput(shape(x), dy, g)
                                   dg = Conv2D(x, dy)

Conv3D (with the V2 backprop ops) and DepthwiseConv2dNative follow the same pattern.
The integer shape inputs get None.
"""

from __future__ import annotations

from tensorflux._src.ops.array.array_ops import shape
from tensorflux._src.ops.op_builder import apply_op

_CONV_ATTRS = ("strides", "padding", "explicit_paddings", "data_format", "dilations",
               "use_cudnn_on_gpu")


def _attrs(op):
    return {k: op.get_attr(k) for k in _CONV_ATTRS if k in op.attrs}


def _shape(t):
    return shape(t)


def _family(forward, backprop_input, backprop_filter):
    """The three gradient functions of one convolution family."""

    def forward_grad(op, dy):
        x, w = op.inputs
        attrs = _attrs(op)
        return [apply_op(backprop_input, input_sizes=_shape(x), filter=w, out_backprop=dy,
                         **attrs),
                apply_op(backprop_filter, input=x, filter_sizes=_shape(w), out_backprop=dy,
                         **attrs)]

    def backprop_input_grad(op, dy):
        _, w, g = op.inputs
        attrs = _attrs(op)
        return [None,
                apply_op(backprop_filter, input=dy, filter_sizes=_shape(w), out_backprop=g,
                         **attrs),
                apply_op(forward, input=dy, filter=w, **attrs)]

    def backprop_filter_grad(op, dy):
        x, _, g = op.inputs
        attrs = _attrs(op)
        return [apply_op(backprop_input, input_sizes=_shape(x), filter=dy, out_backprop=g,
                         **attrs),
                None,
                apply_op(forward, input=x, filter=dy, **attrs)]

    return forward_grad, backprop_input_grad, backprop_filter_grad


conv2d_grad, conv2d_backprop_input_grad, conv2d_backprop_filter_grad = _family(
    "Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter")
conv3d_grad, conv3d_backprop_input_grad, conv3d_backprop_filter_grad = _family(
    "Conv3D", "Conv3DBackpropInputV2", "Conv3DBackpropFilterV2")
depthwise_grad, depthwise_backprop_input_grad, depthwise_backprop_filter_grad = _family(
    "DepthwiseConv2dNative", "DepthwiseConv2dNativeBackpropInput",
    "DepthwiseConv2dNativeBackpropFilter")
