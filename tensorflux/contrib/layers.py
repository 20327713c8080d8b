"""`tf.contrib.layers`: TF1's functional layers with contrib's (slim's) conventions.

They differ from `tf.layers`:
  - variables are `weights` / `biases` (not kernel / bias), model variables (also in
    `tf.GraphKeys.MODEL_VARIABLES`), under a variable scope per call: `fully_connected`,
    `fully_connected_1`, ...; `Conv`, `Conv_1`; `BatchNorm`; `LayerNorm`;
  - fully_connected and conv2d default to relu and xavier (glorot uniform) weights;
    `normalizer_fn` (e.g. batch_norm) replaces the biases;
  - pooling defaults to stride 2 and VALID padding;
  - batch_norm defaults to decay 0.999 and no gamma (scale=False); with
    `updates_collections=None` the moving statistics update in place on every training
    run instead of through `tf.GraphKeys.UPDATE_OPS`;
  - every layer takes defaults from `arg_scope` (tensorflux.contrib.framework).

Batch norm's fused path (rank 2 or 4, the default) moves the moving variance towards the
batch variance with Bessel's correction (n / (n - 1)), as TF's fused kernel reports it;
`fused=False` (or other ranks) uses the biased batch variance, as TF does.
"""

from __future__ import annotations

import functools
import math
import numbers

import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework import tensor_shape
from tensorflux._src.framework.graph_keys import GraphKeys
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.layers.base import constant_value, smart_cond
from tensorflux._src.layers.regularizers import (  # noqa: F401 (contrib's own semantics)
    apply_regularization, l1_l2_regularizer, l1_regularizer, l2_regularizer, sum_regularizer,
)
from tensorflux._src.ops.array import array_ops, gather_ops
from tensorflux._src.ops.math import math_ops
from tensorflux._src.ops.nn import conv_ops, nn_embedding_ops, nn_norm_ops, nn_ops, pool_ops
from tensorflux._src.ops.linalg import linalg_ops
from tensorflux._src.ops.state import init_ops, state_ops
from tensorflux._src.ops.random import random_ops
from tensorflux._src.ops.constant import constant
from tensorflux._src.train import variable_scope as vs
from tensorflux.contrib._optimizers import (  # noqa: F401
    OPTIMIZER_CLS_NAMES, OPTIMIZER_SUMMARIES, optimize_loss,
)
from tensorflux.contrib.framework import add_arg_scope, model_variable

__all__ = [
    "flatten", "fully_connected", "linear", "relu", "relu6", "conv1d", "conv2d", "conv3d",
    "convolution", "convolution1d", "convolution2d", "convolution3d", "conv2d_transpose",
    "convolution2d_transpose", "max_pool2d", "avg_pool2d", "dropout", "batch_norm",
    "layer_norm", "bias_add", "softmax", "one_hot_encoding", "embed_sequence", "repeat", "stack",
    "l1_regularizer", "l2_regularizer", "l1_l2_regularizer", "sum_regularizer",
    "apply_regularization", "xavier_initializer", "xavier_initializer_conv2d",
    "variance_scaling_initializer", "optimize_loss", "OPTIMIZER_CLS_NAMES",
    "OPTIMIZER_SUMMARIES",
]

DATA_FORMAT_NCHW = "NCHW"
DATA_FORMAT_NHWC = "NHWC"


# -- initializers -----------------------------------------------------------------------------
def variance_scaling_initializer(factor=2.0, mode="FAN_IN", uniform=False, seed=None,
                                 dtype=_dtypes.float32):
    """contrib's variance scaling (He et al. by default), with n = fan_in, fan_out or
    their mean (fans of a conv kernel include its spatial size):
        uniform:  U(-limit, limit),  limit = sqrt(3 * factor / n)
        normal:   truncated_normal(stddev = sqrt(1.3 * factor / n))
    (1.3 compensates for truncation at 2 stddev; `tf.variance_scaling_initializer` uses
    other constants and a `scale`/`distribution` signature.)"""
    dtype = _dtypes.as_dtype(dtype)
    if not dtype.is_floating:
        raise TypeError("Cannot create initializer for non-floating point type.")
    if mode not in ("FAN_IN", "FAN_OUT", "FAN_AVG"):
        raise TypeError(f"Unknown mode {mode} [FAN_IN, FAN_OUT, FAN_AVG]")

    def _initializer(shape, dtype=dtype, partition_info=None):
        dtype = _dtypes.as_dtype(dtype)
        if not dtype.is_floating:
            raise TypeError("Cannot create initializer for non-floating point type.")
        shape = [int(d) for d in tensor_shape.as_shape(shape).as_list()]
        fan_in = float(shape[-2]) if len(shape) > 1 else float(shape[-1]) if shape else 1.0
        fan_out = float(shape[-1]) if shape else 1.0
        for dim in shape[:-2]:
            fan_in *= float(dim)
            fan_out *= float(dim)
        n = {"FAN_IN": fan_in, "FAN_OUT": fan_out, "FAN_AVG": (fan_in + fan_out) / 2.0}[mode]
        if uniform:
            limit = math.sqrt(3.0 * factor / n)
            return random_ops.random_uniform(shape, -limit, limit, dtype, seed=seed)
        return random_ops.truncated_normal(shape, 0.0, math.sqrt(1.3 * factor / n), dtype,
                                           seed=seed)
    return _initializer


def xavier_initializer(uniform=True, seed=None, dtype=_dtypes.float32):
    """Glorot & Bengio: variance_scaling_initializer(factor=1.0, mode='FAN_AVG');
    uniform limit sqrt(6 / (fan_in + fan_out))."""
    return variance_scaling_initializer(factor=1.0, mode="FAN_AVG", uniform=uniform,
                                        seed=seed, dtype=dtype)


xavier_initializer_conv2d = xavier_initializer


# -- helpers ------------------------------------------------------------------------------------
def _collections_for(variables_collections, name):
    """`variables_collections` is a list for every variable or a dict per variable name."""
    if isinstance(variables_collections, dict):
        return variables_collections.get(name)
    return variables_collections


def _collect_named_outputs(collections, alias, outputs):
    """Adds `outputs` (tagged with `alias`, as TF's append_tensor_alias) to collections."""
    if collections:
        alias = alias[:-1] if alias.endswith("/") else alias
        outputs.alias = alias
        outputs.aliases = getattr(outputs, "aliases", []) + [alias]
        _graph.add_to_collections(collections, outputs)
    return outputs


def _n_ints(value, n, what):
    """An int or a sequence of n ints -> list of n ints."""
    if isinstance(value, numbers.Integral):
        return [int(value)] * n
    try:
        values = [int(v) for v in value]
    except (TypeError, ValueError):
        raise TypeError(f"{what} must be an int or a sequence of {n} ints; got "
                        f"{value!r}") from None
    if len(values) != n:
        raise ValueError(f"{what} must be an int or a sequence of {n} ints; got {value!r}")
    return values


def _two_element_tuple(value):
    if isinstance(value, numbers.Integral):
        return int(value), int(value)
    if isinstance(value, (list, tuple, tensor_shape.TensorShape)):
        if len(value) != 2:
            raise ValueError(f"Must be a list with 2 elements: {value}")
        return int(value[0]), int(value[1])
    raise TypeError(f"Must be an int, a list with 2 elements or a TensorShape of length 2; "
                    f"got {value!r}")


def _finish(outputs, normalizer_fn, normalizer_params, activation_fn):
    if normalizer_fn is not None:
        outputs = normalizer_fn(outputs, **(normalizer_params or {}))
    if activation_fn is not None:
        outputs = activation_fn(outputs)
    return outputs


def _assign_moving_average(variable, value, decay):
    """variable -= (variable - value) * (1 - decay), as TF's assign_moving_average with
    zero_debias=False."""
    with _graph.name_scope(None, "AssignMovingAvg", [variable, value]) as scope:
        vdtype = variable.dtype.base_dtype
        one_minus = math_ops.cast(1.0 - convert_to_tensor(decay, name="decay"), vdtype)
        delta = (variable - math_ops.cast(value, vdtype)) * one_minus
        return state_ops.assign_sub(variable, delta, name=scope)


# -- core layers --------------------------------------------------------------------------------
@add_arg_scope
def flatten(inputs, outputs_collections=None, scope=None):
    """(batch, d1, d2, ...) -> (batch, d1 * d2 * ...)."""
    with _graph.name_scope(scope, "Flatten", [inputs]) as sc:
        inputs = convert_to_tensor(inputs)
        shape = inputs.shape
        if shape.ndims is None:
            raise ValueError("Inputs rank must be known to flatten them.")
        if shape.ndims < 2:
            raise ValueError(f"Inputs must have a least 2 dimensions; got shape {shape}.")
        inner = shape[1:]
        if inner.is_fully_defined():
            size = int(np.prod(inner.as_list()))
            outputs = array_ops.reshape(inputs, [-1, size])
        else:
            size = None
            outputs = array_ops.reshape(
                inputs, array_ops.stack([array_ops.shape(inputs)[0], -1]))
        outputs.set_shape([shape[0].value, size])
        return _collect_named_outputs(outputs_collections, sc, outputs)


@add_arg_scope
def fully_connected(inputs, num_outputs, activation_fn=nn_ops.relu, normalizer_fn=None,
                    normalizer_params=None, weights_initializer=xavier_initializer(),
                    weights_regularizer=None,
                    biases_initializer=init_ops.zeros_initializer(), biases_regularizer=None,
                    reuse=None, variables_collections=None, outputs_collections=None,
                    trainable=True, scope=None):
    """activation(normalizer(x @ weights) or x @ weights + biases) over the last axis."""
    if isinstance(num_outputs, bool) or not isinstance(num_outputs, numbers.Integral):
        raise ValueError(f"num_outputs type should be one of (<class 'int'>,), got "
                         f"{type(num_outputs)}.")
    with vs.variable_scope(scope, "fully_connected", [inputs], reuse=reuse) as sc:
        inputs = convert_to_tensor(inputs)
        dtype = inputs.dtype.base_dtype
        shape = inputs.shape
        if shape.ndims is None or shape.ndims < 2:
            raise ValueError(f"Input 0 of layer {sc.name} is incompatible with the layer: "
                             f"expected min_ndim=2, found ndim={shape.ndims}. Full shape "
                             f"received: {shape}")
        if shape[-1].value is None:
            raise ValueError("The last dimension of the inputs to `Dense` should be defined. "
                             "Found `None`.")
        weights = model_variable(
            "weights", shape=[shape[-1].value, int(num_outputs)], dtype=dtype,
            initializer=weights_initializer, regularizer=weights_regularizer,
            collections=_collections_for(variables_collections, "weights"),
            trainable=trainable)
        if shape.ndims > 2:  # (..., in) x (in, out) -> (..., out)
            outputs = linalg_ops.tensordot(inputs, weights, [[shape.ndims - 1], [0]])
            outputs.set_shape(shape[:-1].concatenate([int(num_outputs)]))
        else:
            outputs = linalg_ops.matmul(inputs, weights)
        if normalizer_fn is None and biases_initializer is not None:
            biases = model_variable(
                "biases", shape=[int(num_outputs)], dtype=dtype,
                initializer=biases_initializer, regularizer=biases_regularizer,
                collections=_collections_for(variables_collections, "biases"),
                trainable=trainable)
            outputs = nn_ops.bias_add(outputs, biases)
        outputs = _finish(outputs, normalizer_fn, normalizer_params, activation_fn)
        return _collect_named_outputs(outputs_collections, sc.name, outputs)


linear = functools.partial(fully_connected, activation_fn=None)
relu = functools.partial(fully_connected, activation_fn=nn_ops.relu)
relu6 = functools.partial(fully_connected, activation_fn=nn_ops.relu6)


@add_arg_scope
def bias_add(inputs, activation_fn=None, initializer=init_ops.zeros_initializer(),
             regularizer=None, reuse=None, variables_collections=None,
             outputs_collections=None, trainable=True, data_format=DATA_FORMAT_NHWC,
             scope=None):
    """inputs + biases (along the channel axis); usable as a normalizer_fn."""
    if data_format not in (DATA_FORMAT_NCHW, DATA_FORMAT_NHWC):
        raise ValueError("data_format has to be either NCHW or NHWC.")
    with vs.variable_scope(scope, "BiasAdd", [inputs], reuse=reuse) as sc:
        inputs = convert_to_tensor(inputs)
        rank = inputs.shape.ndims
        if rank is None:
            raise ValueError("Dims of shape must be known but is None")
        if rank != 4 and data_format == DATA_FORMAT_NCHW:
            raise ValueError("Data format NCHW only supports 4D Tensor")
        channels = inputs.shape[1 if data_format == DATA_FORMAT_NCHW else -1].value
        if channels is None:
            raise ValueError("`C` dimension must be known but is None")
        biases = model_variable("biases", shape=[channels], dtype=inputs.dtype.base_dtype,
                                initializer=initializer, regularizer=regularizer,
                                collections=_collections_for(variables_collections, "biases"),
                                trainable=trainable)
        outputs = nn_ops.bias_add(inputs, biases, data_format=data_format)
        if activation_fn is not None:
            outputs = activation_fn(outputs)
        return _collect_named_outputs(outputs_collections, sc.name, outputs)


# -- convolution --------------------------------------------------------------------------------
def _conv(inputs, num_outputs, kernel_size, stride, padding, data_format, rate,
          activation_fn, normalizer_fn, normalizer_params, weights_initializer,
          weights_regularizer, biases_initializer, biases_regularizer, reuse,
          variables_collections, outputs_collections, trainable, scope, conv_dims):
    if data_format not in (None, "NWC", "NCW", "NHWC", "NCHW", "NDHWC", "NCDHW"):
        raise ValueError(f"Invalid data_format: {data_format!r}")
    with vs.variable_scope(scope, "Conv", [inputs], reuse=reuse) as sc:
        inputs = convert_to_tensor(inputs)
        rank = inputs.shape.ndims
        if rank is None:
            raise ValueError("Convolution needs inputs of known rank.")
        if conv_dims is not None and conv_dims + 2 != rank:
            raise ValueError(f"Convolution expects input with rank {conv_dims + 2}, got "
                             f"{rank}")
        n = rank - 2
        if n not in (1, 2, 3):
            raise ValueError(f"Convolution not supported for input with rank {rank}")
        channels_first = bool(data_format) and data_format.startswith("NC")
        in_channels = inputs.shape[1 if channels_first else -1].value
        if in_channels is None:
            raise ValueError("The channel dimension of the inputs should be defined. Found "
                             "`None`.")
        kernel_size = _n_ints(kernel_size, n, "kernel_size")
        strides = _n_ints(stride, n, "stride")
        rates = _n_ints(rate, n, "rate")
        dtype = inputs.dtype.base_dtype
        weights = model_variable(
            "weights", shape=kernel_size + [in_channels, int(num_outputs)], dtype=dtype,
            initializer=weights_initializer, regularizer=weights_regularizer,
            collections=_collections_for(variables_collections, "weights"),
            trainable=trainable)
        # (N, *spatial, C_in) * (*kernel, C_in, C_out) -> (N, *spatial', C_out)
        outputs = conv_ops.convolution(inputs, weights, padding=padding.upper(),
                                       strides=strides, dilation_rate=rates,
                                       data_format=data_format)
        if normalizer_fn is None and biases_initializer is not None:
            biases = model_variable(
                "biases", shape=[int(num_outputs)], dtype=dtype,
                initializer=biases_initializer, regularizer=biases_regularizer,
                collections=_collections_for(variables_collections, "biases"),
                trainable=trainable)
            if not channels_first:
                outputs = nn_ops.bias_add(outputs, biases)
            elif rank == 4:
                outputs = nn_ops.bias_add(outputs, biases, data_format="NCHW")
            else:
                outputs = outputs + array_ops.reshape(biases, [1, -1] + [1] * n)
        outputs = _finish(outputs, normalizer_fn, normalizer_params, activation_fn)
        return _collect_named_outputs(outputs_collections, sc.name, outputs)


def _conv_fn(conv_dims, fn_name):
    def conv(inputs, num_outputs, kernel_size, stride=1, padding="SAME", data_format=None,
             rate=1, activation_fn=nn_ops.relu, normalizer_fn=None, normalizer_params=None,
             weights_initializer=xavier_initializer(), weights_regularizer=None,
             biases_initializer=init_ops.zeros_initializer(), biases_regularizer=None,
             reuse=None, variables_collections=None, outputs_collections=None,
             trainable=True, scope=None):
        return _conv(inputs, num_outputs, kernel_size, stride, padding, data_format, rate,
                     activation_fn, normalizer_fn, normalizer_params, weights_initializer,
                     weights_regularizer, biases_initializer, biases_regularizer, reuse,
                     variables_collections, outputs_collections, trainable, scope,
                     conv_dims)
    conv.__name__ = conv.__qualname__ = fn_name
    conv.__doc__ = (f"{conv_dims or 'N'}-D convolution (variables `Conv/weights`, "
                    f"`Conv/biases`), then normalizer_fn or biases, then activation_fn "
                    f"(relu). `rate` > 1 is an atrous convolution.")
    return add_arg_scope(conv)


convolution = _conv_fn(None, "convolution")
convolution1d = conv1d = _conv_fn(1, "convolution1d")
convolution2d = conv2d = _conv_fn(2, "convolution2d")
convolution3d = conv3d = _conv_fn(3, "convolution3d")


@add_arg_scope
def convolution2d_transpose(inputs, num_outputs, kernel_size, stride=1, padding="SAME",
                            data_format=DATA_FORMAT_NHWC, activation_fn=nn_ops.relu,
                            normalizer_fn=None, normalizer_params=None,
                            weights_initializer=xavier_initializer(),
                            weights_regularizer=None,
                            biases_initializer=init_ops.zeros_initializer(),
                            biases_regularizer=None, reuse=None, variables_collections=None,
                            outputs_collections=None, trainable=True, scope=None):
    """Transposed 2-D convolution; weights are (kh, kw, num_outputs, in_channels); the
    output is in * stride (SAME) or in * stride + max(k - stride, 0) (VALID)."""
    if data_format not in (DATA_FORMAT_NCHW, DATA_FORMAT_NHWC):
        raise ValueError("data_format has to be either NCHW or NHWC.")
    with vs.variable_scope(scope, "Conv2d_transpose", [inputs], reuse=reuse) as sc:
        inputs = convert_to_tensor(inputs)
        if inputs.shape.ndims != 4:
            raise ValueError(f"Inputs should have rank 4. Received input shape: "
                             f"{inputs.shape}")
        nchw = data_format == DATA_FORMAT_NCHW
        h_axis, w_axis, c_axis = (2, 3, 1) if nchw else (1, 2, 3)
        in_channels = inputs.shape[c_axis].value
        if in_channels is None:
            raise ValueError("The channel dimension of the inputs should be defined. Found "
                             "`None`.")
        kh, kw = _two_element_tuple(kernel_size)
        sh, sw = _two_element_tuple(stride)
        dtype = inputs.dtype.base_dtype
        weights = model_variable(
            "weights", shape=[kh, kw, int(num_outputs), in_channels], dtype=dtype,
            initializer=weights_initializer, regularizer=weights_regularizer,
            collections=_collections_for(variables_collections, "weights"),
            trainable=trainable)

        def out_len(size, k, s):
            if padding.upper() == "VALID":
                return size * s + max(k - s, 0)
            return size * s

        dims = []
        for axis, k, s in ((h_axis, kh, sh), (w_axis, kw, sw)):
            size = inputs.shape[axis].value
            dims.append(out_len(size, k, s) if size is not None
                        else out_len(array_ops.shape(inputs)[axis], k, s))
        batch = inputs.shape[0].value
        batch = batch if batch is not None else array_ops.shape(inputs)[0]
        shape = [batch, int(num_outputs)] + dims if nchw else [batch] + dims + [int(num_outputs)]
        output_shape = array_ops.stack(shape)
        strides = [1, 1, sh, sw] if nchw else [1, sh, sw, 1]
        outputs = conv_ops.conv2d_transpose(inputs, weights, output_shape, strides,
                                            padding=padding.upper(), data_format=data_format)
        if normalizer_fn is None and biases_initializer is not None:
            biases = model_variable(
                "biases", shape=[int(num_outputs)], dtype=dtype,
                initializer=biases_initializer, regularizer=biases_regularizer,
                collections=_collections_for(variables_collections, "biases"),
                trainable=trainable)
            outputs = nn_ops.bias_add(outputs, biases, data_format=data_format)
        outputs = _finish(outputs, normalizer_fn, normalizer_params, activation_fn)
        return _collect_named_outputs(outputs_collections, sc.name, outputs)


conv2d_transpose = convolution2d_transpose


# -- pooling and dropout ----------------------------------------------------------------------
def _pool2d(pool, default_name, inputs, kernel_size, stride, padding, data_format,
            outputs_collections, scope):
    if data_format not in (DATA_FORMAT_NCHW, DATA_FORMAT_NHWC):
        raise ValueError("data_format has to be either NCHW or NHWC.")
    with _graph.name_scope(scope, default_name, [inputs]) as sc:
        inputs = convert_to_tensor(inputs)
        kh, kw = _two_element_tuple(kernel_size)
        sh, sw = _two_element_tuple(stride)
        if data_format == DATA_FORMAT_NHWC:
            ksize, strides = [1, kh, kw, 1], [1, sh, sw, 1]
        else:
            ksize, strides = [1, 1, kh, kw], [1, 1, sh, sw]
        outputs = pool(inputs, ksize, strides, padding.upper(), data_format=data_format)
        return _collect_named_outputs(outputs_collections, sc, outputs)


@add_arg_scope
def max_pool2d(inputs, kernel_size, stride=2, padding="VALID", data_format=DATA_FORMAT_NHWC,
               outputs_collections=None, scope=None):
    """2-D max pooling; stride 2 and VALID padding by default."""
    return _pool2d(pool_ops.max_pool, "MaxPool2D", inputs, kernel_size, stride, padding,
                   data_format, outputs_collections, scope)


@add_arg_scope
def avg_pool2d(inputs, kernel_size, stride=2, padding="VALID", data_format=DATA_FORMAT_NHWC,
               outputs_collections=None, scope=None):
    """2-D average pooling; stride 2 and VALID padding by default."""
    return _pool2d(pool_ops.avg_pool, "AvgPool2D", inputs, kernel_size, stride, padding,
                   data_format, outputs_collections, scope)


@add_arg_scope
def dropout(inputs, keep_prob=0.5, noise_shape=None, is_training=True,
            outputs_collections=None, scope=None, seed=None):
    """Keeps each element with probability keep_prob (scaled by 1 / keep_prob) when
    is_training (a bool or a bool tensor; default True); the identity otherwise."""
    with vs.variable_scope(scope, "Dropout", [inputs]) as sc:
        inputs = convert_to_tensor(inputs)
        outputs = smart_cond(
            is_training,
            lambda: nn_ops.dropout(inputs, keep_prob=keep_prob, noise_shape=noise_shape,
                                   seed=seed),
            lambda: array_ops.identity(inputs))
        return _collect_named_outputs(outputs_collections, sc.name, outputs)


# -- normalization ------------------------------------------------------------------------------
@add_arg_scope
def batch_norm(inputs, decay=0.999, center=True, scale=False, epsilon=0.001,
               activation_fn=None, param_initializers=None, param_regularizers=None,
               updates_collections=GraphKeys.UPDATE_OPS, is_training=True, reuse=None,
               variables_collections=None, outputs_collections=None, trainable=True,
               batch_weights=None, fused=None, data_format=DATA_FORMAT_NHWC,
               zero_debias_moving_mean=False, scope=None, renorm=False, renorm_clipping=None,
               renorm_decay=0.99, adjustment=None):
    """Batch normalization with contrib's defaults (see module doc). Variables:
    `BatchNorm/beta` (center), `BatchNorm/gamma` (scale), `BatchNorm/moving_mean`,
    `BatchNorm/moving_variance`."""
    if renorm or adjustment is not None or zero_debias_moving_mean:
        raise NotImplementedError("batch_norm: renorm, adjustment and zero_debias_moving_mean "
                                  "are not supported by tensorflux.")
    if data_format not in (DATA_FORMAT_NCHW, DATA_FORMAT_NHWC):
        raise ValueError("data_format has to be either NCHW or NHWC.")
    inputs = convert_to_tensor(inputs)
    rank = inputs.shape.ndims
    if rank is None:
        raise ValueError(f"Inputs {inputs.name} has undefined rank.")
    dtype = inputs.dtype.base_dtype
    fused = (True if fused is None else fused) and batch_weights is None and rank in (2, 4) \
        and dtype in (_dtypes.float16, _dtypes.bfloat16, _dtypes.float32)
    param_initializers = param_initializers or {}
    param_regularizers = param_regularizers or {}
    with vs.variable_scope(scope, "BatchNorm", [inputs], reuse=reuse) as sc:
        c_axis = 1 if data_format == DATA_FORMAT_NCHW else rank - 1
        channels = inputs.shape[c_axis].value
        if channels is None:
            raise ValueError(f"Inputs {inputs.name} has undefined channels dimension "
                             f"{inputs.shape[c_axis:c_axis + 1]}.")
        pdtype = _dtypes.float32 if dtype in (_dtypes.float16, _dtypes.bfloat16) else dtype

        def param(name, default_init, trainable_param, regularizer=None):
            return model_variable(
                name, shape=[channels], dtype=pdtype,
                initializer=param_initializers.get(name, default_init),
                regularizer=regularizer, trainable=trainable_param,
                collections=_collections_for(variables_collections, name))

        beta = param("beta", init_ops.zeros_initializer(), trainable,
                     param_regularizers.get("beta")) if center else None
        gamma = param("gamma", init_ops.ones_initializer(), trainable,
                      param_regularizers.get("gamma")) if scale else None
        moving_mean = param("moving_mean", init_ops.zeros_initializer(), False)
        moving_variance = param("moving_variance", init_ops.ones_initializer(), False)

        training = constant_value(is_training)  # True, False or None (a tensor)
        if fused:
            outputs, mean, variance = _fused_batch_norm(
                inputs, beta, gamma, moving_mean, moving_variance, epsilon, is_training,
                data_format, channels, pdtype)
        else:
            outputs, mean, variance = _batch_norm(
                inputs, beta, gamma, moving_mean, moving_variance, epsilon, is_training,
                training, data_format, batch_weights)
        if training is not False:
            # With a tensor is_training, `mean` is the moving mean itself when it is false,
            # so the update moves the averages by exactly zero.
            update_mean = _assign_moving_average(moving_mean, mean, decay)
            update_variance = _assign_moving_average(moving_variance, variance, decay)
            if updates_collections is None:  # update in place, before the output is used
                with _graph.control_dependencies([update_mean, update_variance]):
                    outputs = array_ops.identity(outputs)
            else:
                _graph.add_to_collections(updates_collections, update_mean)
                _graph.add_to_collections(updates_collections, update_variance)
        if activation_fn is not None:
            outputs = activation_fn(outputs)
        return _collect_named_outputs(outputs_collections, sc.name, outputs)


def _fused_batch_norm(inputs, beta, gamma, moving_mean, moving_variance, epsilon,
                      is_training, data_format, channels, pdtype):
    """fused_batch_norm on (N, H, W, C) / (N, C, H, W); rank 2 goes through (N, 1, 1, C)."""
    original_shape = inputs.shape
    x = inputs
    if original_shape.ndims == 2:
        new_shape = [-1, channels, 1, 1] if data_format == DATA_FORMAT_NCHW \
            else [-1, 1, 1, channels]
        x = array_ops.reshape(inputs, new_shape)
    offset = beta if beta is not None else constant(0.0, dtype=pdtype, shape=[channels])
    scale = gamma if gamma is not None else constant(1.0, dtype=pdtype, shape=[channels])

    def train():  # normalizes with the batch's statistics and returns them
        return nn_norm_ops.fused_batch_norm(x, scale, offset, epsilon=epsilon,
                                            data_format=data_format)

    def infer():  # normalizes with (and returns) the moving statistics
        return nn_norm_ops.fused_batch_norm(x, scale, offset, mean=moving_mean,
                                            variance=moving_variance, epsilon=epsilon,
                                            is_training=False, data_format=data_format)

    outputs, mean, variance = smart_cond(is_training, train, infer)
    if original_shape.ndims == 2:
        outputs = array_ops.reshape(outputs, array_ops.shape(inputs))
    outputs.set_shape(original_shape)
    return outputs, mean, variance


def _batch_norm(inputs, beta, gamma, moving_mean, moving_variance, epsilon, is_training,
                training, data_format, batch_weights):
    """moments + batch_normalization; the batch variance is the biased one."""
    shape = inputs.shape
    rank = shape.ndims
    nchw = data_format == DATA_FORMAT_NCHW
    axes = [0] + list(range(2, rank)) if nchw else list(range(rank - 1))
    mean = variance = None
    if training is not False:
        if batch_weights is not None:
            weights = array_ops.reshape(convert_to_tensor(batch_weights),
                                        [-1] + [1] * (rank - 1))
            batch_mean, batch_var = nn_norm_ops.weighted_moments(inputs, axes, weights,
                                                                 keep_dims=True)
        else:
            batch_mean, batch_var = nn_norm_ops.moments(inputs, axes, keep_dims=True)
        batch_mean = array_ops.reshape(batch_mean, [-1])  # (C,)
        batch_var = array_ops.reshape(batch_var, [-1])
        mean = smart_cond(is_training, lambda: batch_mean, lambda: moving_mean.value())
        variance = smart_cond(is_training, lambda: batch_var,
                              lambda: moving_variance.value())
    use_mean = mean if mean is not None else moving_mean.value()
    use_var = variance if variance is not None else moving_variance.value()
    params = [use_mean, use_var, beta, gamma]
    if nchw:  # (C,) -> (1, C, 1, ...) so it broadcasts against (N, C, ...)
        bshape = [1, shape[1].value] + [1] * (rank - 2)
        params = [array_ops.reshape(p, bshape) if p is not None else None for p in params]
    params = [math_ops.cast(p, inputs.dtype.base_dtype) if p is not None else None
              for p in params]
    outputs = nn_norm_ops.batch_normalization(inputs, params[0], params[1], params[2],
                                              params[3], epsilon)
    outputs.set_shape(shape)
    return outputs, mean, variance


@add_arg_scope
def layer_norm(inputs, center=True, scale=True, activation_fn=None, reuse=None,
               variables_collections=None, outputs_collections=None, trainable=True,
               begin_norm_axis=1, begin_params_axis=-1, scope=None):
    """Normalizes over axes [begin_norm_axis, rank) (variance epsilon 1e-12), then scales
    by `LayerNorm/gamma` and shifts by `LayerNorm/beta` of shape inputs[begin_params_axis:]."""
    with vs.variable_scope(scope, "LayerNorm", [inputs], reuse=reuse) as sc:
        inputs = convert_to_tensor(inputs)
        shape = inputs.shape
        rank = shape.ndims
        if rank is None:
            raise ValueError(f"Inputs {inputs.name} has undefined rank.")
        dtype = inputs.dtype.base_dtype
        if begin_norm_axis < 0:
            begin_norm_axis = rank + begin_norm_axis
        if begin_params_axis >= rank or begin_norm_axis >= rank:
            raise ValueError(f"begin_params_axis ({begin_params_axis}) and begin_norm_axis "
                             f"({begin_norm_axis}) must be < rank(inputs) ({rank})")
        params_shape = shape[begin_params_axis:]
        if not params_shape.is_fully_defined():
            raise ValueError(f"Inputs {inputs.name}: shape(inputs)[{begin_params_axis}:] is "
                             f"not fully defined: {shape}")
        beta = gamma = None
        if center:
            beta = model_variable("beta", shape=params_shape, dtype=dtype,
                                  initializer=init_ops.zeros_initializer(),
                                  collections=_collections_for(variables_collections, "beta"),
                                  trainable=trainable)
        if scale:
            gamma = model_variable("gamma", shape=params_shape, dtype=dtype,
                                   initializer=init_ops.ones_initializer(),
                                   collections=_collections_for(variables_collections,
                                                                "gamma"),
                                   trainable=trainable)
        mean, variance = nn_norm_ops.moments(inputs, list(range(begin_norm_axis, rank)),
                                             keep_dims=True)
        outputs = nn_norm_ops.batch_normalization(inputs, mean, variance, beta, gamma, 1e-12)
        outputs.set_shape(shape)
        if activation_fn is not None:
            outputs = activation_fn(outputs)
        return _collect_named_outputs(outputs_collections, sc.name, outputs)


def softmax(logits, scope=None):
    """Softmax over the last axis of a tensor of any rank >= 2."""
    with vs.variable_scope(scope, "softmax", [logits]):
        logits = convert_to_tensor(logits)
        num_logits = logits.shape[-1].value
        flat = array_ops.reshape(logits, [-1, num_logits])
        return array_ops.reshape(nn_ops.softmax(flat), array_ops.shape(logits))


# -- encodings ----------------------------------------------------------------------------------
@add_arg_scope
def one_hot_encoding(labels, num_classes, on_value=1.0, off_value=0.0,
                     outputs_collections=None, scope=None):
    """One-hot float vectors of depth num_classes for integer labels."""
    with _graph.name_scope(scope, "OneHotEncoding", [labels]) as sc:
        labels = convert_to_tensor(labels)
        if labels.dtype.base_dtype == _dtypes.int32:
            labels = math_ops.cast(labels, _dtypes.int64)
        outputs = gather_ops.one_hot(labels, num_classes, on_value=on_value,
                                     off_value=off_value)
        return _collect_named_outputs(outputs_collections, sc, outputs)


def embed_sequence(ids, vocab_size=None, embed_dim=None, unique=False, initializer=None,
                   regularizer=None, trainable=True, scope=None, reuse=None):
    """(batch, length) ids -> (batch, length, embed_dim) rows of `EmbedSequence/embeddings`."""
    if not (reuse or (vocab_size and embed_dim)):
        raise ValueError("Must specify vocab size and embedding dimension when not reusing. "
                         f"Got vocab_size={vocab_size} and embed_dim={embed_dim}")
    with vs.variable_scope(scope, "EmbedSequence", [ids], reuse=reuse):
        shape = [vocab_size, embed_dim] if vocab_size and embed_dim else None
        embeddings = model_variable("embeddings", shape=shape, initializer=initializer,
                                    regularizer=regularizer, trainable=trainable)
        return nn_embedding_ops.embedding_lookup(embeddings, ids)


# -- composition --------------------------------------------------------------------------------
def _layer_name(layer, default):
    if hasattr(layer, "__name__"):
        return layer.__name__
    if hasattr(layer, "func") and hasattr(layer.func, "__name__"):  # functools.partial
        return layer.func.__name__
    return default


def repeat(inputs, repetitions, layer, *args, **kwargs):
    """Applies `layer` `repetitions` times, in scopes `scope/scope_1`, `scope/scope_2`..."""
    scope = kwargs.pop("scope", None)
    with vs.variable_scope(scope, "Repeat", [inputs]):
        outputs = convert_to_tensor(inputs)
        scope = scope or _layer_name(layer, "repeat")
        for i in range(repetitions):
            kwargs["scope"] = f"{scope}_{i + 1}"
            outputs = layer(outputs, *args, **kwargs)
        return outputs


def stack(inputs, layer, stack_args, **kwargs):
    """Applies `layer` once per entry of `stack_args` (each the positional args after the
    input), in scopes `scope/scope_1`, `scope/scope_2`..."""
    scope = kwargs.pop("scope", None)
    if not isinstance(stack_args, (list, tuple)):
        raise ValueError("stack_args need to be a list or tuple")
    with vs.variable_scope(scope, "Stack", [inputs]):
        outputs = convert_to_tensor(inputs)
        scope = scope or _layer_name(layer, "stack")
        for i, layer_args in enumerate(stack_args):
            kwargs["scope"] = f"{scope}_{i + 1}"
            if not isinstance(layer_args, (list, tuple)):
                layer_args = [layer_args]
            outputs = layer(outputs, *layer_args, **kwargs)
        return outputs
