"""`tf.nn` pooling, as TF1's nn_ops.py builds it.

The op records (shape functions, gradients) are in pool_defs.py and the JAX lowerings
in pool_kernels.py; this module is the public API with TF1's names and graph structure:
max_pool -> one MaxPool op named "MaxPool"; avg_pool -> "AvgPool"; max_pool2d ->
"MaxPool2d"; max_pool3d / avg_pool3d -> MaxPool3D / AvgPool3D; the 1-D poolings expand
to 2-D as TF does (MaxPool1d/ExpandDims, the MaxPool op "MaxPool1d", MaxPool1d/Squeeze).
`ksize` and `strides` are an int or 1, N or N + 2 values (TF's _get_sequence).
"""

from __future__ import annotations

import collections

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.ops.array import array_ops
from tensorflux._src.ops.nn import pool_defs  # noqa: F401 - registers the op records
from tensorflux._src.ops.nn.window_utils import apply_checked, get_sequence
from tensorflux._src.ops.op_helpers import deprecated_argument_lookup

__all__ = [
    "avg_pool", "avg_pool1d", "avg_pool2d", "avg_pool3d", "avg_pool_v2", "max_pool",
    "max_pool1d", "max_pool2d", "max_pool3d", "max_pool_v2", "max_pool_with_argmax",
]


# TF's generated wrapper returns its two outputs as a namedtuple.
_MaxPoolWithArgmax = collections.namedtuple("MaxPoolWithArgmax", ["output", "argmax"])


def _channel_index(data_format, n):
    return 1 if data_format.startswith("NC") else n + 1


def _pool2d(op_type, default_name, value, ksize, strides, padding, data_format, name,
            check_zero=False):
    with _graph.name_scope(name, default_name, [value]) as scope:
        if data_format is None:
            data_format = "NHWC"
        channel_index = _channel_index(data_format, 2)
        ksize = get_sequence(ksize, 2, channel_index, "ksize")
        strides = get_sequence(strides, 2, channel_index, "strides")
        if check_zero and any(v == 0 for v in ksize):
            raise ValueError("ksize cannot be zero.")
        value_arg = "value" if op_type == "AvgPool" else "input"
        return apply_checked(op_type, name=scope, ksize=ksize, strides=strides,
                             padding=padding, data_format=data_format, **{value_arg: value})


def _pool1d(op_type, default_name, input, ksize, strides, padding, data_format,  # noqa: A002
            name):
    with _graph.name_scope(name, default_name, [input]) as scope:
        if data_format is None:
            data_format = "NWC"
        channel_index = _channel_index(data_format, 1)
        ksize = [1] + get_sequence(ksize, 1, channel_index, "ksize")
        strides = [1] + get_sequence(strides, 1, channel_index, "strides")
        expanding_dim = 1 if data_format == "NWC" else 2
        data_format = "NHWC" if data_format == "NWC" else "NCHW"
        input = array_ops.expand_dims(input, expanding_dim)
        value_arg = "value" if op_type == "AvgPool" else "input"
        result = apply_checked(op_type, name=scope, ksize=ksize, strides=strides,
                               padding=padding, data_format=data_format, **{value_arg: input})
        return array_ops.squeeze(result, [expanding_dim])


def _pool3d(op_type, default_name, input, ksize, strides, padding, data_format,  # noqa: A002
            name):
    with _graph.name_scope(name, default_name, [input]) as scope:
        if data_format is None:
            data_format = "NDHWC"
        channel_index = _channel_index(data_format, 3)
        ksize = get_sequence(ksize, 3, channel_index, "ksize")
        strides = get_sequence(strides, 3, channel_index, "strides")
        return apply_checked(op_type, name=scope, input=input, ksize=ksize, strides=strides,
                             padding=padding, data_format=data_format)


# -- max pooling -------------------------------------------------------------------------------
def max_pool(value, ksize, strides, padding, data_format="NHWC", name=None,
             input=None):  # noqa: A002
    """Max over each `ksize` window of a 4-D input (NHWC or NCHW)."""
    value = deprecated_argument_lookup("input", input, "value", value)
    return _pool2d("MaxPool", "MaxPool", value, ksize, strides, padding, data_format, name,
                   check_zero=True)


def max_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):  # noqa: A002
    """Max pooling of a 4-D input (the op is named "MaxPool2d" by default)."""
    return _pool2d("MaxPool", "MaxPool2d", input, ksize, strides, padding, data_format, name)


def max_pool1d(input, ksize, strides, padding, data_format="NWC", name=None):  # noqa: A002
    """Max pooling of a 3-D input ("NWC" or "NCW"), through a 2-D MaxPool."""
    return _pool1d("MaxPool", "MaxPool1d", input, ksize, strides, padding, data_format, name)


def max_pool3d(input, ksize, strides, padding, data_format="NDHWC", name=None):  # noqa: A002
    """Max pooling of a 5-D input ("NDHWC" or "NCDHW")."""
    return _pool3d("MaxPool3D", "MaxPool3D", input, ksize, strides, padding, data_format,
                   name)


# -- average pooling ---------------------------------------------------------------------------
def avg_pool(value, ksize, strides, padding, data_format="NHWC", name=None,
             input=None):  # noqa: A002
    """Mean over each window; with SAME padding only the covered (valid) elements count."""
    value = deprecated_argument_lookup("input", input, "value", value)
    return _pool2d("AvgPool", "AvgPool", value, ksize, strides, padding, data_format, name)


avg_pool2d = avg_pool


def avg_pool1d(input, ksize, strides, padding, data_format="NWC", name=None):  # noqa: A002
    """Average pooling of a 3-D input ("NWC" or "NCW"), through a 2-D AvgPool."""
    return _pool1d("AvgPool", "AvgPool1D", input, ksize, strides, padding, data_format, name)


def avg_pool3d(input, ksize, strides, padding, data_format="NDHWC", name=None):  # noqa: A002
    """Average pooling of a 5-D input ("NDHWC" or "NCDHW")."""
    return _pool3d("AvgPool3D", "AvgPool3D", input, ksize, strides, padding, data_format,
                   name)


# -- N-D dispatch (tf.nn.max_pool_v2 / avg_pool_v2 in TF1's namespace) ---------------------------
def _rank_n(input, data_format):  # noqa: A002
    shape = getattr(input, "shape", None)
    if shape is not None and getattr(shape, "ndims", len(shape)) is not None:
        return len(shape) - 2
    if data_format is not None:
        return len(data_format) - 2
    raise ValueError("The input must have a rank or a data format must be given.")


def _pool_v2(kind, input, ksize, strides, padding, data_format, name):  # noqa: A002
    if not hasattr(input, "shape"):
        input = convert_to_tensor(input, name="input")
    n = _rank_n(input, data_format)
    if not 1 <= n <= 3:
        raise ValueError(f"Input tensor must be of rank 3, 4 or 5 but was {n + 2}.")
    channel_index = n + 1 if data_format is None else _channel_index(data_format, n)
    ksize = get_sequence(ksize, n, channel_index, "ksize")
    strides = get_sequence(strides, n, channel_index, "strides")
    if n == 1:
        fn = max_pool1d if kind == "max" else avg_pool1d
    elif n == 2:
        fn = max_pool2d if kind == "max" else avg_pool
    else:
        fn = max_pool3d if kind == "max" else avg_pool3d
    return fn(input, ksize=ksize, strides=strides, padding=padding, data_format=data_format,
              name=name)


def max_pool_v2(input, ksize, strides, padding, data_format=None, name=None):  # noqa: A002
    """Max pooling of a 3-, 4- or 5-D input (N = rank - 2 spatial dims)."""
    return _pool_v2("max", input, ksize, strides, padding, data_format, name)


def avg_pool_v2(input, ksize, strides, padding, data_format=None, name=None):  # noqa: A002
    """Average pooling of a 3-, 4- or 5-D input (N = rank - 2 spatial dims)."""
    return _pool_v2("avg", input, ksize, strides, padding, data_format, name)


# -- max pooling with argmax ---------------------------------------------------------------------
def max_pool_with_argmax(input, ksize, strides, padding, data_format="NHWC",  # noqa: A002
                         Targmax=None, name=None, output_dtype=None,  # noqa: N803
                         include_batch_in_index=False):
    """(max_pool(input), argmax): argmax is the flattened index of each maximum,
    (y * width + x) * channels + c, plus b * height * width * channels when
    `include_batch_in_index`. Ties go to the first maximum in the window."""
    if data_format != "NHWC":
        raise ValueError("Data formats other than 'NHWC' are not yet supported")
    Targmax = deprecated_argument_lookup("output_dtype", output_dtype, "Targmax", Targmax)
    if Targmax is None:
        Targmax = _dtypes.int64
    outs = apply_checked("MaxPoolWithArgmax", name=name, input=input,
                         ksize=get_sequence(ksize, 2, 3, "ksize"),
                         strides=get_sequence(strides, 2, 3, "strides"), padding=padding,
                         Targmax=Targmax, include_batch_in_index=include_batch_in_index)
    return _MaxPoolWithArgmax(*outs)
