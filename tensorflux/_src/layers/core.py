"""Core layers: Dense, Dropout, Flatten, and their functional forms."""

from __future__ import annotations

import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import tensor_shape
from tensorflux._src.layers import utils
from tensorflux._src.layers.base import InputSpec, Layer, smart_cond
from tensorflux._src.ops.array import array_ops
from tensorflux._src.ops.math import math_ops
from tensorflux._src.ops.linalg import linalg_ops
from tensorflux._src.ops.state import init_ops

__all__ = ["Dense", "dense", "Dropout", "dropout", "Flatten", "flatten"]


def _nn():
    # Late import: tf.nn's families (dropout, conv, pool, batch norm) are filled in by
    # other modules, and the public namespace is where they all meet.
    import tensorflux.nn as nn
    return nn


class Dense(Layer):
    """outputs = activation(inputs @ kernel + bias), over the last axis of `inputs`."""

    def __init__(self, units, activation=None, use_bias=True, kernel_initializer=None,
                 bias_initializer=init_ops.zeros_initializer(), kernel_regularizer=None,
                 bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                 bias_constraint=None, trainable=True, name=None, **kwargs):
        super().__init__(trainable=trainable, name=name,
                         activity_regularizer=activity_regularizer, **kwargs)
        self.units = int(units)
        self.activation = activation
        self.use_bias = use_bias
        self.kernel_initializer = kernel_initializer
        self.bias_initializer = bias_initializer
        self.kernel_regularizer = kernel_regularizer
        self.bias_regularizer = bias_regularizer
        self.kernel_constraint = kernel_constraint
        self.bias_constraint = bias_constraint
        self.input_spec = InputSpec(min_ndim=2)

    def build(self, input_shape):
        input_shape = tensor_shape.as_shape(input_shape)
        dtype = self.dtype or _dtypes.float32  # build() may be called before any input
        if not (dtype.is_floating or dtype.is_complex):
            raise TypeError(f"Unable to build `Dense` layer with non-floating point dtype "
                            f"{dtype!r}")
        last_dim = input_shape[-1].value
        if last_dim is None:
            raise ValueError("The last dimension of the inputs to `Dense` should be defined. "
                             "Found `None`.")
        self.input_spec = InputSpec(min_ndim=2, axes={-1: last_dim})
        self.kernel = self.add_weight("kernel", shape=[last_dim, self.units],
                                      initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint, dtype=dtype,
                                      trainable=True)
        if self.use_bias:
            self.bias = self.add_weight("bias", shape=[self.units],
                                        initializer=self.bias_initializer,
                                        regularizer=self.bias_regularizer,
                                        constraint=self.bias_constraint, dtype=dtype,
                                        trainable=True)
        else:
            self.bias = None
        self.built = True

    def call(self, inputs):
        rank = inputs.shape.ndims
        if rank is not None and rank > 2:
            # (..., in) x (in, units) over the last axis; keep the known leading dims.
            outputs = linalg_ops.tensordot(inputs, self.kernel, [[rank - 1], [0]])
            outputs.set_shape(inputs.shape.as_list()[:-1] + [self.units])
        else:
            if inputs.dtype.base_dtype != self.kernel.dtype.base_dtype:
                inputs = math_ops.cast(inputs, self.kernel.dtype.base_dtype)
            outputs = linalg_ops.matmul(inputs, self.kernel)
        if self.use_bias:
            outputs = _nn().bias_add(outputs, self.bias)
        if self.activation is not None:
            return self.activation(outputs)
        return outputs

    def compute_output_shape(self, input_shape):
        input_shape = tensor_shape.as_shape(input_shape).with_rank_at_least(2)
        if input_shape[-1].value is None:
            raise ValueError(f"The innermost dimension of input_shape must be defined, but saw: "
                             f"{input_shape}")
        return input_shape[:-1].concatenate([self.units])


def dense(inputs, units, activation=None, use_bias=True, kernel_initializer=None,
          bias_initializer=init_ops.zeros_initializer(), kernel_regularizer=None,
          bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
          bias_constraint=None, trainable=True, name=None, reuse=None):
    """Functional Dense: `name` is also the variable scope (reuse it with reuse=True)."""
    layer = Dense(units, activation=activation, use_bias=use_bias,
                  kernel_initializer=kernel_initializer, bias_initializer=bias_initializer,
                  kernel_regularizer=kernel_regularizer, bias_regularizer=bias_regularizer,
                  activity_regularizer=activity_regularizer,
                  kernel_constraint=kernel_constraint, bias_constraint=bias_constraint,
                  trainable=trainable, name=name, _scope=name, _reuse=reuse)
    return layer.apply(inputs)


class Dropout(Layer):
    """Zeroes a fraction `rate` of the inputs and scales the rest by 1 / (1 - rate), when
    `training` (a Python bool or a bool tensor) is true; the identity otherwise."""

    def __init__(self, rate=0.5, noise_shape=None, seed=None, name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        self.rate = rate
        self.noise_shape = noise_shape
        self.seed = seed

    def _get_noise_shape(self, inputs):
        if self.noise_shape is None:
            return None
        # None entries take the input's size along that axis (static when known).
        static = inputs.shape.as_list() if inputs.shape.ndims is not None else None
        dims, dynamic = [], False
        for i, value in enumerate(self.noise_shape):
            if value is None:
                value = static[i] if static is not None else None
                if value is None:
                    value, dynamic = array_ops.shape(inputs)[i], True
            dims.append(value)
        return array_ops.stack(dims) if dynamic else dims

    def call(self, inputs, training=False):
        def dropped_inputs():
            return _nn().dropout(inputs, noise_shape=self._get_noise_shape(inputs),
                                 seed=self.seed, rate=self.rate)
        return smart_cond(training, dropped_inputs, lambda: array_ops.identity(inputs))

    def compute_output_shape(self, input_shape):
        return tensor_shape.as_shape(input_shape)


def dropout(inputs, rate=0.5, noise_shape=None, seed=None, training=False, name=None):
    """Functional Dropout; `training` defaults to False (inference: the identity)."""
    layer = Dropout(rate, noise_shape=noise_shape, seed=seed, name=name)
    return layer.apply(inputs, training=training)


class Flatten(Layer):
    """(batch, d1, d2, ...) -> (batch, d1 * d2 * ...)."""

    def __init__(self, data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.data_format = utils.normalize_data_format(data_format)
        self.input_spec = InputSpec(min_ndim=1)

    def call(self, inputs):
        rank = inputs.shape.ndims
        if self.data_format == "channels_first" and rank is not None and rank > 1:
            # Channels go last first, so the flattened order matches channels_last models.
            inputs = array_ops.transpose(inputs, [0] + list(range(2, rank)) + [1])
        shape = inputs.shape
        if rank is not None and shape[1:].is_fully_defined():
            outputs = array_ops.reshape(inputs, [-1, int(np.prod(shape[1:].as_list()))])
        elif rank is not None and shape[0].value is not None:
            outputs = array_ops.reshape(inputs, [shape[0].value, -1])
        else:
            outputs = array_ops.reshape(
                inputs, array_ops.stack([array_ops.shape(inputs)[0], -1]))
        outputs.set_shape(self.compute_output_shape(inputs.shape))
        return outputs

    def compute_output_shape(self, input_shape):
        input_shape = tensor_shape.as_shape(input_shape)
        if input_shape.ndims is None:
            return tensor_shape.TensorShape([None, None])
        inner = input_shape[1:]
        size = int(np.prod(inner.as_list())) if inner.is_fully_defined() else None
        return tensor_shape.TensorShape([input_shape[0].value if input_shape.ndims else None,
                                         size])


def flatten(inputs, name=None, data_format="channels_last"):
    """Functional Flatten."""
    return Flatten(name=name, data_format=data_format).apply(inputs)
