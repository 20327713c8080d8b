"""Pooling layers: Max/AveragePooling1D/2D/3D and their functional forms.

TF1's tf.layers pooling takes `strides` explicitly (no default). 1-D pooling runs the
2-D op on a width-1 image; 3-D channels_first pooling transposes to channels_last
around the op, as TF1 does.
"""

from __future__ import annotations

from tensorflux._src.framework import tensor_shape
from tensorflux._src.layers import utils
from tensorflux._src.layers.base import InputSpec, Layer
from tensorflux._src.ops.array import array_ops

__all__ = ["MaxPooling1D", "MaxPooling2D", "MaxPooling3D", "AveragePooling1D",
           "AveragePooling2D", "AveragePooling3D", "max_pooling1d", "max_pooling2d",
           "max_pooling3d", "average_pooling1d", "average_pooling2d", "average_pooling3d",
           "MaxPool1D", "MaxPool2D", "MaxPool3D", "AvgPool1D", "AvgPool2D", "AvgPool3D"]


def _nn():
    import tensorflux.nn as nn
    return nn


class _Pooling(Layer):
    """Pools windows of `pool_size` moved by `strides` over the spatial axes."""

    _rank = None
    _mode = None  # "max" or "avg"

    def __init__(self, pool_size, strides, padding="valid", data_format="channels_last",
                 name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        rank = self._rank
        self.pool_size = utils.normalize_tuple(pool_size, rank, "pool_size")
        self.strides = utils.normalize_tuple(strides, rank, "strides")
        self.padding = utils.normalize_padding(padding)
        self.data_format = utils.normalize_data_format(data_format)
        self.input_spec = InputSpec(ndim=rank + 2)

    def _pool(self, inputs, ksize, strides, data_format):
        nn = _nn()
        if self._rank == 3:
            fn = nn.max_pool3d if self._mode == "max" else nn.avg_pool3d
        else:
            fn = nn.max_pool if self._mode == "max" else nn.avg_pool
        return fn(inputs, ksize=list(ksize), strides=list(strides),
                  padding=self.padding.upper(), data_format=data_format)

    def call(self, inputs):
        first = self.data_format == "channels_first"
        if self._rank == 1:
            axis = 3 if first else 2  # (N, W, C) -> (N, W, 1, C) / (N, C, W, 1)
            inputs = array_ops.expand_dims(inputs, axis)
            window, step = self.pool_size + (1,), self.strides + (1,)
            if first:
                ksize, strides, fmt = (1, 1) + window, (1, 1) + step, "NCHW"
            else:
                ksize, strides, fmt = (1,) + window + (1,), (1,) + step + (1,), "NHWC"
            return array_ops.squeeze(self._pool(inputs, ksize, strides, fmt), [axis])
        ksize = (1,) + self.pool_size + (1,)
        strides = (1,) + self.strides + (1,)
        if self._rank == 3:
            if first:  # pool in NDHWC, then put channels back
                inputs = array_ops.transpose(inputs, (0, 2, 3, 4, 1))
                outputs = self._pool(inputs, ksize, strides, "NDHWC")
                return array_ops.transpose(outputs, (0, 4, 1, 2, 3))
            return self._pool(inputs, ksize, strides, "NDHWC")
        if first:
            return self._pool(inputs, (1, 1) + self.pool_size, (1, 1) + self.strides, "NCHW")
        return self._pool(inputs, ksize, strides, "NHWC")

    def compute_output_shape(self, input_shape):
        shape = tensor_shape.as_shape(input_shape).as_list()
        first = self.data_format == "channels_first"
        spatial = shape[2:] if first else shape[1:-1]
        out = [utils.conv_output_length(n, k, self.padding, s)
               for n, k, s in zip(spatial, self.pool_size, self.strides)]
        if first:
            return tensor_shape.TensorShape(shape[:2] + out)
        return tensor_shape.TensorShape([shape[0]] + out + [shape[-1]])


def _pooling_class(rank, mode, class_name):
    doc = f"{'Max' if mode == 'max' else 'Average'} pooling over {rank}-D inputs."
    return type(class_name, (_Pooling,), {"_rank": rank, "_mode": mode, "__doc__": doc})


MaxPooling1D = _pooling_class(1, "max", "MaxPooling1D")
MaxPooling2D = _pooling_class(2, "max", "MaxPooling2D")
MaxPooling3D = _pooling_class(3, "max", "MaxPooling3D")
AveragePooling1D = _pooling_class(1, "avg", "AveragePooling1D")
AveragePooling2D = _pooling_class(2, "avg", "AveragePooling2D")
AveragePooling3D = _pooling_class(3, "avg", "AveragePooling3D")

MaxPool1D, MaxPool2D, MaxPool3D = MaxPooling1D, MaxPooling2D, MaxPooling3D
AvgPool1D, AvgPool2D, AvgPool3D = AveragePooling1D, AveragePooling2D, AveragePooling3D


def _functional(cls, fn_name):
    def apply(inputs, pool_size, strides, padding="valid", data_format="channels_last",
              name=None):
        layer = cls(pool_size=pool_size, strides=strides, padding=padding,
                    data_format=data_format, name=name)
        return layer.apply(inputs)
    apply.__name__ = fn_name
    apply.__doc__ = f"Functional interface of `tf.layers.{cls.__name__}`."
    return apply


max_pooling1d = _functional(MaxPooling1D, "max_pooling1d")
max_pooling2d = _functional(MaxPooling2D, "max_pooling2d")
max_pooling3d = _functional(MaxPooling3D, "max_pooling3d")
average_pooling1d = _functional(AveragePooling1D, "average_pooling1d")
average_pooling2d = _functional(AveragePooling2D, "average_pooling2d")
average_pooling3d = _functional(AveragePooling3D, "average_pooling3d")
