"""Batch normalization: `tf.layers.BatchNormalization` and `tf.layers.batch_normalization`.

Variables (created in this order): `gamma`, `beta` (trainable), `moving_mean`,
`moving_variance` (not trainable). With `training` true the batch's moments normalize
the inputs and two update ops (`AssignMovingAvg`, `AssignMovingAvg_1`) move the moving
statistics towards them:  moving -= (moving - batch) * (1 - momentum). The updates are
added to `tf.GraphKeys.UPDATE_OPS` and change nothing unless the user runs them, e.g.

    with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS)):
        train_op = optimizer.minimize(loss)

The fused path (4-D inputs, channel axis 1 or 3, float16/32) calls `tf.nn.fused_batch_norm`,
whose batch variance has Bessel's correction (n / (n - 1)); TF1 feeds that corrected
variance into the moving average, while the non-fused path uses the biased one.
"""

from __future__ import annotations

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework import tensor_shape
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.layers.base import InputSpec, Layer, constant_value, smart_cond
from tensorflux._src.ops.array import array_ops
from tensorflux._src.ops.math import math_ops
from tensorflux._src.ops.state import init_ops, state_ops
from tensorflux._src.ops.constant import constant

__all__ = ["BatchNormalization", "batch_normalization"]


def _nn():
    import tensorflux.nn as nn
    return nn


class BatchNormalization(Layer):
    """Normalizes over all axes but `axis` with the batch's (training) or the moving
    (inference) mean and variance, then scales by gamma and shifts by beta."""

    def __init__(self, axis=-1, momentum=0.99, epsilon=1e-3, center=True, scale=True,
                 beta_initializer=init_ops.zeros_initializer(),
                 gamma_initializer=init_ops.ones_initializer(),
                 moving_mean_initializer=init_ops.zeros_initializer(),
                 moving_variance_initializer=init_ops.ones_initializer(),
                 beta_regularizer=None, gamma_regularizer=None, beta_constraint=None,
                 gamma_constraint=None, renorm=False, renorm_clipping=None,
                 renorm_momentum=0.99, fused=None, trainable=True, virtual_batch_size=None,
                 adjustment=None, name=None, **kwargs):
        super().__init__(name=name, trainable=trainable, **kwargs)
        if isinstance(axis, (list, tuple)):
            self.axis = list(axis)
        elif isinstance(axis, int):
            self.axis = axis
        else:
            raise TypeError(f"axis must be int or list, type given: {type(axis)}")
        if renorm or virtual_batch_size is not None or adjustment is not None:
            raise NotImplementedError("BatchNormalization: renorm, virtual_batch_size and "
                                      "adjustment are not supported by tensorflux yet.")
        self.momentum = momentum
        self.epsilon = epsilon
        self.center = center
        self.scale = scale
        self.beta_initializer = beta_initializer
        self.gamma_initializer = gamma_initializer
        self.moving_mean_initializer = moving_mean_initializer
        self.moving_variance_initializer = moving_variance_initializer
        self.beta_regularizer = beta_regularizer
        self.gamma_regularizer = gamma_regularizer
        self.beta_constraint = beta_constraint
        self.gamma_constraint = gamma_constraint
        self.renorm = False
        # TF1's legacy layer: None means "fused when the input allows it".
        self.fused = True if fused is None else fused

    @property
    def _param_dtype(self):
        # 16-bit inputs keep float32 statistics and parameters.
        if self.dtype in (_dtypes.float16, _dtypes.bfloat16):
            return _dtypes.float32
        return self.dtype or _dtypes.float32

    def _fused_can_be_used(self, ndims):
        return (ndims == 4 and len(self.axis) == 1 and self.axis[0] in (1, 3)
                and self.dtype in (_dtypes.float16, _dtypes.bfloat16, _dtypes.float32))

    def build(self, input_shape):
        input_shape = tensor_shape.as_shape(input_shape)
        if not input_shape.ndims:
            raise ValueError("Input has undefined rank.")
        ndims = input_shape.ndims
        axis = [self.axis] if isinstance(self.axis, int) else list(self.axis)
        axis = [x + ndims if x < 0 else x for x in axis]
        for x in axis:
            if x < 0 or x >= ndims:
                raise ValueError(f"Invalid axis: {x}")
        if len(axis) != len(set(axis)):
            raise ValueError(f"Duplicate axis: {axis}")
        self.axis = axis
        self.fused = bool(self.fused) and self._fused_can_be_used(ndims)
        if self.fused:
            self._data_format = "NCHW" if axis == [1] else "NHWC"
        axis_to_dim = {x: input_shape[x].value for x in axis}
        for x, dim in axis_to_dim.items():
            if dim is None:
                raise ValueError(f"Input has undefined `axis` dimension. Input shape: "
                                 f"{input_shape}")
        self.input_spec = InputSpec(ndim=ndims, axes=axis_to_dim)
        if len(axis_to_dim) == 1:
            param_shape = [axis_to_dim[axis[0]]]
        else:  # multi-axis: broadcastable parameters (1 on the reduced axes)
            param_shape = [axis_to_dim.get(i, 1) for i in range(ndims)]
        pdtype = self._param_dtype
        self.gamma = self.beta = None
        if self.scale:
            self.gamma = self.add_weight("gamma", shape=param_shape, dtype=pdtype,
                                         initializer=self.gamma_initializer,
                                         regularizer=self.gamma_regularizer,
                                         constraint=self.gamma_constraint, trainable=True)
        elif self.fused:
            self._gamma_const = constant(1.0, dtype=pdtype, shape=param_shape)
        if self.center:
            self.beta = self.add_weight("beta", shape=param_shape, dtype=pdtype,
                                        initializer=self.beta_initializer,
                                        regularizer=self.beta_regularizer,
                                        constraint=self.beta_constraint, trainable=True)
        elif self.fused:
            self._beta_const = constant(0.0, dtype=pdtype, shape=param_shape)
        self.moving_mean = self.add_weight("moving_mean", shape=param_shape, dtype=pdtype,
                                           initializer=self.moving_mean_initializer,
                                           trainable=False)
        self.moving_variance = self.add_weight("moving_variance", shape=param_shape,
                                               dtype=pdtype,
                                               initializer=self.moving_variance_initializer,
                                               trainable=False)
        self.built = True

    # -- moving averages ------------------------------------------------------------------------
    @staticmethod
    def _assign_moving_average(variable, value, momentum):
        with _graph.name_scope("AssignMovingAvg") as scope:
            vdtype = variable.dtype.base_dtype
            decay = convert_to_tensor(1.0 - momentum, name="decay")
            if decay.dtype.base_dtype != vdtype:
                decay = math_ops.cast(decay, vdtype)
            update_delta = (variable - math_ops.cast(value, vdtype)) * decay
            return state_ops.assign_sub(variable, update_delta, name=scope)

    # -- calling --------------------------------------------------------------------------------
    def call(self, inputs, training=False):
        if self.fused:
            return self._fused_batch_norm(inputs, training)
        nn = _nn()
        input_dtype = inputs.dtype.base_dtype
        if input_dtype in (_dtypes.float16, _dtypes.bfloat16):
            inputs = math_ops.cast(inputs, _dtypes.float32)  # moments overflow in 16 bits
        input_shape = inputs.shape
        ndims = input_shape.ndims
        reduction_axes = [i for i in range(ndims) if i not in self.axis]
        broadcast_shape = [1] * ndims
        broadcast_shape[self.axis[0]] = input_shape[self.axis[0]].value

        def _broadcast(v):
            # [C] parameters broadcast by themselves only when C is the last axis.
            if (v is not None and v.shape.ndims != ndims
                    and reduction_axes != list(range(ndims - 1))):
                return array_ops.reshape(v, broadcast_shape)
            return v

        scale, offset = _broadcast(self.gamma), _broadcast(self.beta)
        if constant_value(training) is False:
            mean, variance = self.moving_mean.value(), self.moving_variance.value()
        else:
            keep_dims = len(self.axis) > 1
            batch_mean, batch_variance = nn.moments(
                math_ops.cast(inputs, self._param_dtype), reduction_axes, keep_dims=keep_dims)
            mean = smart_cond(training, lambda: batch_mean, lambda: self.moving_mean.value())
            variance = smart_cond(training, lambda: batch_variance,
                                  lambda: self.moving_variance.value())
            # With a tensor `training`, `mean` is the moving mean itself when it is false,
            # so the update below moves the average by exactly zero (TF1 skips it in a
            # tf.cond; the stored value is the same).
            self.add_update(lambda: self._assign_moving_average(self.moving_mean, mean,
                                                                self.momentum))
            self.add_update(lambda: self._assign_moving_average(self.moving_variance,
                                                                variance, self.momentum))
        mean = math_ops.cast(mean, inputs.dtype.base_dtype)
        variance = math_ops.cast(variance, inputs.dtype.base_dtype)
        if offset is not None:
            offset = math_ops.cast(offset, inputs.dtype.base_dtype)
        if scale is not None:
            scale = math_ops.cast(scale, inputs.dtype.base_dtype)
        outputs = nn.batch_normalization(inputs, _broadcast(mean), _broadcast(variance),
                                         offset, scale, self.epsilon)
        if input_dtype in (_dtypes.float16, _dtypes.bfloat16):
            outputs = math_ops.cast(outputs, input_dtype)
        outputs.set_shape(input_shape)
        return outputs

    def _fused_batch_norm(self, inputs, training):
        nn = _nn()
        beta = self.beta if self.center else self._beta_const
        gamma = self.gamma if self.scale else self._gamma_const

        def _training():
            return nn.fused_batch_norm(inputs, gamma, beta, epsilon=self.epsilon,
                                       data_format=self._data_format)

        def _inference():
            return nn.fused_batch_norm(inputs, gamma, beta, mean=self.moving_mean,
                                       variance=self.moving_variance, epsilon=self.epsilon,
                                       is_training=False, data_format=self._data_format)

        output, mean, variance = smart_cond(training, _training, _inference)
        training_value = constant_value(training)
        if training_value is None:
            # Inference leaves the averages alone: momentum 1 makes the decay zero.
            momentum = smart_cond(training, lambda: convert_to_tensor(self.momentum),
                                  lambda: convert_to_tensor(1.0))
        else:
            momentum = convert_to_tensor(self.momentum)
        if training_value or training_value is None:
            self.add_update(lambda: self._assign_moving_average(self.moving_mean, mean,
                                                                momentum))
            self.add_update(lambda: self._assign_moving_average(self.moving_variance,
                                                                variance, momentum))
        return output

    def compute_output_shape(self, input_shape):
        return tensor_shape.as_shape(input_shape)


def batch_normalization(inputs, axis=-1, momentum=0.99, epsilon=1e-3, center=True,
                        scale=True, beta_initializer=init_ops.zeros_initializer(),
                        gamma_initializer=init_ops.ones_initializer(),
                        moving_mean_initializer=init_ops.zeros_initializer(),
                        moving_variance_initializer=init_ops.ones_initializer(),
                        beta_regularizer=None, gamma_regularizer=None, beta_constraint=None,
                        gamma_constraint=None, training=False, trainable=True, name=None,
                        reuse=None, renorm=False, renorm_clipping=None, renorm_momentum=0.99,
                        fused=None, virtual_batch_size=None, adjustment=None):
    """Functional batch norm; `training` is a Python bool or a bool tensor."""
    layer = BatchNormalization(
        axis=axis, momentum=momentum, epsilon=epsilon, center=center, scale=scale,
        beta_initializer=beta_initializer, gamma_initializer=gamma_initializer,
        moving_mean_initializer=moving_mean_initializer,
        moving_variance_initializer=moving_variance_initializer,
        beta_regularizer=beta_regularizer, gamma_regularizer=gamma_regularizer,
        beta_constraint=beta_constraint, gamma_constraint=gamma_constraint, renorm=renorm,
        renorm_clipping=renorm_clipping, renorm_momentum=renorm_momentum, fused=fused,
        trainable=trainable, virtual_batch_size=virtual_batch_size, adjustment=adjustment,
        name=name, _reuse=reuse, _scope=name)
    return layer.apply(inputs, training=training)
