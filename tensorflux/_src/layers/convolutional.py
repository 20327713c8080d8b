"""Convolution layers: Conv1D/2D/3D, Conv2DTranspose/Conv3DTranspose, SeparableConv1D/2D.

Kernels are (*kernel_size, in_channels, filters), or (*kernel_size, filters, in_channels)
for transposed convolutions; variables are `<scope>/kernel:0` and `<scope>/bias:0`
(`depthwise_kernel`, `pointwise_kernel` for separable ones). The math is `tf.nn`'s.
"""

from __future__ import annotations

from tensorflux._src.framework import tensor_shape
from tensorflux._src.layers import utils
from tensorflux._src.layers.base import InputSpec, Layer, to_snake_case
from tensorflux._src.ops.array import array_ops
from tensorflux._src.ops.state import init_ops

__all__ = ["Conv1D", "Conv2D", "Conv3D", "Conv2DTranspose", "Conv3DTranspose",
           "SeparableConv1D", "SeparableConv2D", "conv1d", "conv2d", "conv3d",
           "conv2d_transpose", "conv3d_transpose", "separable_conv1d", "separable_conv2d",
           "Convolution1D", "Convolution2D", "Convolution3D", "Convolution2DTranspose",
           "Convolution3DTranspose", "convolution1d", "convolution2d", "convolution3d",
           "convolution2d_transpose", "convolution3d_transpose"]

_ZEROS = init_ops.zeros_initializer()


def _nn():
    import tensorflux.nn as nn
    return nn


class _Conv(Layer):
    """An N-D convolution (N = rank) with optional bias and activation."""

    def __init__(self, rank, filters, kernel_size, strides=1, padding="valid",
                 data_format="channels_last", dilation_rate=1, activation=None, use_bias=True,
                 kernel_initializer=None, bias_initializer=_ZEROS, kernel_regularizer=None,
                 bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                 bias_constraint=None, trainable=True, name=None, **kwargs):
        super().__init__(trainable=trainable, name=name,
                         activity_regularizer=activity_regularizer, **kwargs)
        self.rank = rank
        self.filters = filters
        self.kernel_size = utils.normalize_tuple(kernel_size, rank, "kernel_size")
        self.strides = utils.normalize_tuple(strides, rank, "strides")
        self.padding = utils.normalize_padding(padding)
        if self.padding == "causal" and type(self).__name__ not in ("Conv1D",
                                                                     "SeparableConv1D"):
            raise ValueError("Causal padding is only supported for `Conv1D` and "
                             "``SeparableConv1D`.")
        self.data_format = utils.normalize_data_format(data_format)
        self.dilation_rate = utils.normalize_tuple(dilation_rate, rank, "dilation_rate")
        self.activation = activation
        self.use_bias = use_bias
        self.kernel_initializer = kernel_initializer
        self.bias_initializer = bias_initializer
        self.kernel_regularizer = kernel_regularizer
        self.bias_regularizer = bias_regularizer
        self.kernel_constraint = kernel_constraint
        self.bias_constraint = bias_constraint
        self.input_spec = InputSpec(ndim=rank + 2)

    @property
    def _channel_axis(self):
        return 1 if self.data_format == "channels_first" else -1

    def _input_channels(self, input_shape):
        input_shape = tensor_shape.as_shape(input_shape)
        dim = input_shape[self._channel_axis].value
        if dim is None:
            raise ValueError("The channel dimension of the inputs should be defined. Found "
                             "`None`.")
        return dim

    def _kernel_shape(self, input_dim):
        return self.kernel_size + (input_dim, self.filters)

    def build(self, input_shape):
        input_dim = self._input_channels(input_shape)
        self.kernel = self.add_weight("kernel", shape=self._kernel_shape(input_dim),
                                      initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint, trainable=True,
                                      dtype=self.dtype)
        self._add_bias()
        self.input_spec = InputSpec(ndim=self.rank + 2,
                                    axes={self._channel_axis: input_dim})
        self.built = True

    def _add_bias(self):
        self.bias = None
        if self.use_bias:
            self.bias = self.add_weight("bias", shape=(self.filters,),
                                        initializer=self.bias_initializer,
                                        regularizer=self.bias_regularizer,
                                        constraint=self.bias_constraint, trainable=True,
                                        dtype=self.dtype)

    def _spatial(self, values, fill=1):
        """Per-axis values as the full-rank list tf.nn wants (1 on batch and channels)."""
        if self.data_format == "channels_first":
            return [fill, fill] + list(values)
        return [fill] + list(values) + [fill]

    def _tf_format(self):
        return utils.convert_data_format(self.data_format, self.rank + 2)

    def _convolve(self, inputs):
        nn = _nn()
        padding = self.padding
        if padding == "causal":
            # Left-pad the time axis so output t only sees inputs <= t.
            left = self.dilation_rate[0] * (self.kernel_size[0] - 1)
            pads = [[0, 0], [left, 0], [0, 0]] if self.data_format == "channels_last" \
                else [[0, 0], [0, 0], [left, 0]]
            inputs = array_ops.pad(inputs, pads)
            padding = "valid"
        fmt, padding = self._tf_format(), padding.upper()
        if self.rank == 1:
            return nn.conv1d(inputs, self.kernel, stride=self.strides[0], padding=padding,
                             data_format=fmt, dilations=self.dilation_rate[0])
        conv = nn.conv2d if self.rank == 2 else nn.conv3d
        return conv(inputs, self.kernel, strides=self._spatial(self.strides), padding=padding,
                    data_format=fmt, dilations=self._spatial(self.dilation_rate))

    def _bias_and_activation(self, outputs):
        if self.use_bias:
            if self.data_format == "channels_first" and self.rank == 1:
                # TF1's bias_add took no rank-3 NCW input, so its layer adds a (1, F, 1)
                # bias; the ops are the same here.
                outputs = outputs + array_ops.reshape(self.bias, (1, self.filters, 1))
            else:
                fmt = "NCHW" if self.data_format == "channels_first" else "NHWC"
                outputs = _nn().bias_add(outputs, self.bias, data_format=fmt)
        if self.activation is not None:
            return self.activation(outputs)
        return outputs

    def call(self, inputs):
        return self._bias_and_activation(self._convolve(inputs))

    def compute_output_shape(self, input_shape):
        shape = tensor_shape.as_shape(input_shape).as_list()
        spatial = shape[2:] if self.data_format == "channels_first" else shape[1:-1]
        out = [utils.conv_output_length(n, k, self.padding, s, d) for n, k, s, d in
               zip(spatial, self.kernel_size, self.strides, self.dilation_rate)]
        if self.data_format == "channels_first":
            return tensor_shape.TensorShape([shape[0], self.filters] + out)
        return tensor_shape.TensorShape([shape[0]] + out + [self.filters])


def _conv_class(rank, class_name):
    default = (1,) * rank

    def __init__(self, filters, kernel_size, strides=default, padding="valid",
                 data_format="channels_last", dilation_rate=default, activation=None,
                 use_bias=True, kernel_initializer=None, bias_initializer=_ZEROS,
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, trainable=True, name=None,
                 **kwargs):
        _Conv.__init__(self, rank, filters, kernel_size, strides=strides, padding=padding,
                       data_format=data_format, dilation_rate=dilation_rate,
                       activation=activation, use_bias=use_bias,
                       kernel_initializer=kernel_initializer,
                       bias_initializer=bias_initializer,
                       kernel_regularizer=kernel_regularizer,
                       bias_regularizer=bias_regularizer,
                       activity_regularizer=activity_regularizer,
                       kernel_constraint=kernel_constraint, bias_constraint=bias_constraint,
                       trainable=trainable, name=name, **kwargs)

    return type(class_name, (_Conv,), {"__init__": __init__, "__doc__":
                                       f"{rank}-D convolution layer."})


Conv1D = _conv_class(1, "Conv1D")
Conv2D = _conv_class(2, "Conv2D")
Conv3D = _conv_class(3, "Conv3D")


class _ConvTranspose(_Conv):
    """The gradient of a convolution with respect to its input ("deconvolution")."""

    def __init__(self, rank, filters, kernel_size, strides=1, padding="valid",
                 data_format="channels_last", **kwargs):
        super().__init__(rank, filters, kernel_size, strides=strides, padding=padding,
                         data_format=data_format, **kwargs)
        self.output_padding = None

    def _kernel_shape(self, input_dim):
        return self.kernel_size + (self.filters, input_dim)

    def _output_shape(self, inputs):
        """Static output shape where known; the batch size from the inputs otherwise."""
        shape = inputs.shape.as_list()
        spatial = shape[2:] if self.data_format == "channels_first" else shape[1:-1]
        dims = [utils.deconv_output_length(n, k, self.padding, stride=s, dilation=d)
                for n, k, s, d in zip(spatial, self.kernel_size, self.strides,
                                      self.dilation_rate)]
        for i, d in enumerate(dims):
            if d is None:  # unknown input size: compute it in the graph
                axis = i + (2 if self.data_format == "channels_first" else 1)
                n = array_ops.shape(inputs)[axis]
                dims[i] = _dynamic_deconv_length(n, self.kernel_size[i], self.padding,
                                                 self.strides[i])
        batch = shape[0] if shape[0] is not None else array_ops.shape(inputs)[0]
        full = [batch, self.filters] + dims if self.data_format == "channels_first" \
            else [batch] + dims + [self.filters]
        if all(isinstance(d, int) for d in full):
            return full
        return array_ops.stack(full)

    def call(self, inputs):
        nn = _nn()
        conv = nn.conv2d_transpose if self.rank == 2 else nn.conv3d_transpose
        outputs = conv(inputs, self.kernel, self._output_shape(inputs),
                       strides=self._spatial(self.strides), padding=self.padding.upper(),
                       data_format=self._tf_format())
        outputs.set_shape(self.compute_output_shape(inputs.shape))
        return self._bias_and_activation(outputs)

    def compute_output_shape(self, input_shape):
        shape = tensor_shape.as_shape(input_shape).as_list()
        spatial = shape[2:] if self.data_format == "channels_first" else shape[1:-1]
        out = [utils.deconv_output_length(n, k, self.padding, stride=s) for n, k, s in
               zip(spatial, self.kernel_size, self.strides)]
        if self.data_format == "channels_first":
            return tensor_shape.TensorShape([shape[0], self.filters] + out)
        return tensor_shape.TensorShape([shape[0]] + out + [self.filters])


def _dynamic_deconv_length(n, k, padding, stride):
    """deconv_output_length for a size known only at run time (a scalar tensor)."""
    return n * stride + max(k - stride, 0) if padding == "valid" else n * stride


def _conv_transpose_class(rank, class_name):
    default = (1,) * rank

    def __init__(self, filters, kernel_size, strides=default, padding="valid",
                 data_format="channels_last", activation=None, use_bias=True,
                 kernel_initializer=None, bias_initializer=_ZEROS, kernel_regularizer=None,
                 bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                 bias_constraint=None, trainable=True, name=None, **kwargs):
        _ConvTranspose.__init__(
            self, rank, filters, kernel_size, strides=strides, padding=padding,
            data_format=data_format, activation=activation, use_bias=use_bias,
            kernel_initializer=kernel_initializer, bias_initializer=bias_initializer,
            kernel_regularizer=kernel_regularizer, bias_regularizer=bias_regularizer,
            activity_regularizer=activity_regularizer, kernel_constraint=kernel_constraint,
            bias_constraint=bias_constraint, trainable=trainable, name=name, **kwargs)

    return type(class_name, (_ConvTranspose,), {"__init__": __init__, "__doc__":
                                                f"Transposed {rank}-D convolution layer."})


Conv2DTranspose = _conv_transpose_class(2, "Conv2DTranspose")
Conv3DTranspose = _conv_transpose_class(3, "Conv3DTranspose")


class _SeparableConv(_Conv):
    """A depthwise convolution (per input channel, `depth_multiplier` outputs each)
    followed by a 1x1 pointwise convolution to `filters` channels."""

    def __init__(self, rank, filters, kernel_size, strides=1, padding="valid",
                 data_format="channels_last", dilation_rate=1, depth_multiplier=1,
                 activation=None, use_bias=True, depthwise_initializer=None,
                 pointwise_initializer=None, bias_initializer=_ZEROS,
                 depthwise_regularizer=None, pointwise_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, depthwise_constraint=None,
                 pointwise_constraint=None, bias_constraint=None, trainable=True, name=None,
                 **kwargs):
        super().__init__(rank, filters, kernel_size, strides=strides, padding=padding,
                         data_format=data_format, dilation_rate=dilation_rate,
                         activation=activation, use_bias=use_bias,
                         bias_initializer=bias_initializer, bias_regularizer=bias_regularizer,
                         activity_regularizer=activity_regularizer,
                         bias_constraint=bias_constraint, trainable=trainable, name=name,
                         **kwargs)
        self.depth_multiplier = depth_multiplier
        self.depthwise_initializer = depthwise_initializer
        self.pointwise_initializer = pointwise_initializer
        self.depthwise_regularizer = depthwise_regularizer
        self.pointwise_regularizer = pointwise_regularizer
        self.depthwise_constraint = depthwise_constraint
        self.pointwise_constraint = pointwise_constraint

    def build(self, input_shape):
        input_dim = self._input_channels(input_shape)
        self.depthwise_kernel = self.add_weight(
            "depthwise_kernel", shape=self.kernel_size + (input_dim, self.depth_multiplier),
            initializer=self.depthwise_initializer, regularizer=self.depthwise_regularizer,
            constraint=self.depthwise_constraint, trainable=True, dtype=self.dtype)
        self.pointwise_kernel = self.add_weight(
            "pointwise_kernel",
            shape=(1,) * self.rank + (self.depth_multiplier * input_dim, self.filters),
            initializer=self.pointwise_initializer, regularizer=self.pointwise_regularizer,
            constraint=self.pointwise_constraint, trainable=True, dtype=self.dtype)
        self._add_bias()
        self.input_spec = InputSpec(ndim=self.rank + 2,
                                    axes={self._channel_axis: input_dim})
        self.built = True

    def call(self, inputs):
        nn = _nn()
        if self.rank == 2:
            outputs = nn.separable_conv2d(
                inputs, self.depthwise_kernel, self.pointwise_kernel,
                strides=self._spatial(self.strides), padding=self.padding.upper(),
                rate=self.dilation_rate, data_format=self._tf_format())
            return self._bias_and_activation(outputs)
        # 1-D: run the 2-D op on a height-1 image, as TF1 does.
        padding = self.padding
        if padding == "causal":
            left = self.dilation_rate[0] * (self.kernel_size[0] - 1)
            pads = [[0, 0], [left, 0], [0, 0]] if self.data_format == "channels_last" \
                else [[0, 0], [0, 0], [left, 0]]
            inputs = array_ops.pad(inputs, pads)
            padding = "valid"
        start = 1 if self.data_format == "channels_last" else 2
        fmt = "NHWC" if self.data_format == "channels_last" else "NCHW"
        strides = [1, 1, self.strides[0], 1] if start == 1 else [1, 1, 1, self.strides[0]]
        outputs = nn.separable_conv2d(
            array_ops.expand_dims(inputs, start),
            array_ops.expand_dims(self.depthwise_kernel, 0),
            array_ops.expand_dims(self.pointwise_kernel, 0),
            strides=strides, padding=padding.upper(), rate=(1,) + self.dilation_rate,
            data_format=fmt)
        if self.use_bias:
            outputs = nn.bias_add(outputs, self.bias, data_format=fmt)
        outputs = array_ops.squeeze(outputs, [start])
        if self.activation is not None:
            return self.activation(outputs)
        return outputs


def _separable_class(rank, class_name):
    default = (1,) * rank

    def __init__(self, filters, kernel_size, strides=default, padding="valid",
                 data_format="channels_last", dilation_rate=default, depth_multiplier=1,
                 activation=None, use_bias=True, depthwise_initializer=None,
                 pointwise_initializer=None, bias_initializer=_ZEROS,
                 depthwise_regularizer=None, pointwise_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, depthwise_constraint=None,
                 pointwise_constraint=None, bias_constraint=None, trainable=True, name=None,
                 **kwargs):
        _SeparableConv.__init__(
            self, rank, filters, kernel_size, strides=strides, padding=padding,
            data_format=data_format, dilation_rate=dilation_rate,
            depth_multiplier=depth_multiplier, activation=activation, use_bias=use_bias,
            depthwise_initializer=depthwise_initializer,
            pointwise_initializer=pointwise_initializer, bias_initializer=bias_initializer,
            depthwise_regularizer=depthwise_regularizer,
            pointwise_regularizer=pointwise_regularizer, bias_regularizer=bias_regularizer,
            activity_regularizer=activity_regularizer,
            depthwise_constraint=depthwise_constraint,
            pointwise_constraint=pointwise_constraint, bias_constraint=bias_constraint,
            trainable=trainable, name=name, **kwargs)

    return type(class_name, (_SeparableConv,), {"__init__": __init__, "__doc__":
                                                f"Depthwise separable {rank}-D convolution."})


SeparableConv1D = _separable_class(1, "SeparableConv1D")
SeparableConv2D = _separable_class(2, "SeparableConv2D")


# -- functional forms: `name` is also the variable scope, `reuse` shares it -------------------
def _functional(cls):
    def apply(inputs, filters, kernel_size, *args, name=None, reuse=None, **kwargs):
        layer = cls(filters, kernel_size, *args, name=name, _scope=name, _reuse=reuse,
                    **kwargs)
        return layer.apply(inputs)
    apply.__name__ = to_snake_case(cls.__name__)
    apply.__doc__ = f"Functional interface of `tf.layers.{cls.__name__}`."
    return apply


conv1d = _functional(Conv1D)
conv2d = _functional(Conv2D)
conv3d = _functional(Conv3D)
conv2d_transpose = _functional(Conv2DTranspose)
conv3d_transpose = _functional(Conv3DTranspose)
separable_conv1d = _functional(SeparableConv1D)
separable_conv2d = _functional(SeparableConv2D)

# TF1's aliases.
Convolution1D, Convolution2D, Convolution3D = Conv1D, Conv2D, Conv3D
Convolution2DTranspose, Convolution3DTranspose = Conv2DTranspose, Conv3DTranspose
convolution1d, convolution2d, convolution3d = conv1d, conv2d, conv3d
convolution2d_transpose, convolution3d_transpose = conv2d_transpose, conv3d_transpose
