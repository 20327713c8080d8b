"""`tf.nn.pool` (N-D pooling with dilation) and `tf.nn.conv_transpose` (N-D dispatch),
built from existing ops as TF1 builds them.

pool() follows TF1: "MAX"/"AVG" over 1-3 spatial dims through max_pool / avg_pool /
max_pool3d / avg_pool3d (1-D through an expanded 2-D pool), inside
with_space_to_batch for dilation_rate > 1 (VALID padding only, as in TF).
"""

from __future__ import annotations

import collections.abc

import numpy as np

from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.operation import Tensor
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.ops.array import array_ops
from tensorflux._src.ops.array.moves import with_space_to_batch
from tensorflux._src.ops.nn import conv_ops, pool_ops
from tensorflux._src.ops.op_helpers import deprecated_argument_lookup

__all__ = ["pool", "conv_transpose"]


# -- pool --------------------------------------------------------------------------------------
def _per_dim(values, n, label):
    """`values` (default all 1) as n positive int32s."""
    if values is None:
        values = [1] * n
    elif len(values) != n:
        raise ValueError(f"len({label})={len(values)} but should be {n}")
    values = np.array(values, dtype=np.int32)
    if np.any(values < 1):
        raise ValueError(f"all values of {label} must be positive")
    return values


def _strides_and_rates(n, strides, dilation_rate):
    """TF's _get_strides_and_dilation_rate."""
    dilation_rate = _per_dim(dilation_rate, n, "dilation_rate")
    strides = _per_dim(strides, n, "strides")
    if np.any(strides > 1) and np.any(dilation_rate > 1):
        raise ValueError("strides > 1 not supported in conjunction with dilation_rate > 1")
    return strides, dilation_rate


def pool(input, window_shape, pooling_type, padding, dilation_rate=None,  # noqa: A002
         strides=None, name=None, data_format=None, dilations=None):
    """N-D ("MAX" or "AVG") pooling over the 1-3 spatial dims of `input`, with optional
    output striding or window dilation (dilated pooling needs VALID padding)."""
    dilation_rate = deprecated_argument_lookup("dilations", dilations, "dilation_rate",
                                               dilation_rate)
    with _graph.name_scope(name, f"{pooling_type.lower()}_pool", [input]) as scope:
        input = convert_to_tensor(input, name="input")
        n = len(window_shape)
        if n < 1 or n > 3:
            raise ValueError("It is required that 1 <= num_spatial_dims <= 3.")
        input.shape.with_rank(n + 2)
        strides, dilation_rate = _strides_and_rates(n, strides, dilation_rate)
        if padding == "SAME" and np.any(dilation_rate > 1):
            raise ValueError("pooling with SAME padding is not implemented for "
                             "dilation_rate > 1")
        if np.any(strides > np.asarray(window_shape)):
            raise ValueError("strides > window_shape not supported due to inconsistency "
                             "between CPU and GPU implementations")
        pooling_ops = {("MAX", 1): pool_ops.max_pool, ("MAX", 2): pool_ops.max_pool,
                       ("MAX", 3): pool_ops.max_pool3d, ("AVG", 1): pool_ops.avg_pool,
                       ("AVG", 2): pool_ops.avg_pool, ("AVG", 3): pool_ops.avg_pool3d}
        key = (pooling_type, n)
        if key not in pooling_ops:
            raise ValueError(f"{n}-D {pooling_type} pooling is not supported.")
        if data_format is None or not data_format.startswith("NC"):
            window = [1] + list(window_shape) + [1]
            adjusted_strides = [1] + list(strides) + [1]
            spatial_dims = list(range(1, n + 1))
        else:
            window = [1, 1] + list(window_shape)
            adjusted_strides = [1, 1] + list(strides)
            spatial_dims = list(range(2, n + 2))
        if n == 1:
            if data_format is None or data_format == "NWC":
                format_kwargs = {"data_format": "NHWC"}
            elif data_format == "NCW":
                format_kwargs = {"data_format": "NCHW"}
            else:
                raise ValueError('data_format must be either "NWC" or "NCW".')
            window = [1] + window
            adjusted_strides = [1] + adjusted_strides
        else:
            format_kwargs = {"data_format": data_format}

        def op(converted, _, converted_padding):
            if n == 1:
                converted = array_ops.expand_dims(converted, spatial_dims[0])
            result = pooling_ops[key](converted, window, [int(s) for s in adjusted_strides],
                                      converted_padding, name=scope, **format_kwargs)
            if n == 1:
                result = array_ops.squeeze(result, [spatial_dims[0]])
            return result

        return with_space_to_batch(input=input, dilation_rate=dilation_rate, padding=padding,
                                   op=op, spatial_dims=spatial_dims,
                                   filter_shape=window_shape)


# -- conv_transpose ----------------------------------------------------------------------------
def conv_transpose(input, filters, output_shape, strides, padding="SAME",  # noqa: A002
                   data_format=None, dilations=None, name=None):
    """The transpose of `convolution` for 1-3 spatial dims (from len(output_shape)):
    conv1d_transpose, conv2d_transpose or conv3d_transpose."""
    with _graph.name_scope(name, "conv_transpose", [input, filters, output_shape]) as scope:
        if isinstance(output_shape, Tensor):
            n = output_shape.shape[0].value - 2
        elif isinstance(output_shape, collections.abc.Sized):
            n = len(output_shape) - 2
        else:
            raise ValueError("output_shape must be a tensor or sized collection.")
        if not 1 <= n <= 3:
            raise ValueError(f"output_shape must be of length 3, 4 or 5 but was {n + 2}.")
        if n == 1:
            return conv_ops.conv1d_transpose(input, filters, output_shape, strides,
                                             padding=padding, data_format=data_format,
                                             dilations=dilations, name=scope)
        op = conv_ops.conv2d_transpose if n == 2 else conv_ops.conv3d_transpose
        return op(input, filters, output_shape, strides, padding=padding,
                  data_format=data_format, dilations=dilations, name=scope)
