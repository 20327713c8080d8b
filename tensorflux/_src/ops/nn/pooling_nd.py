"""`tf.nn.pool` (N-D pooling with dilation), `tf.nn.with_space_to_batch` and
`tf.nn.conv_transpose` (N-D dispatch), built from existing ops as TF1 builds them.

with_space_to_batch(input, rate, padding, op) runs `op` on the space-to-batch form of
input (rate-strided sub-grids stacked on the batch axis) and maps the result back:
TF's way of turning any windowed op into its dilated ("atrous") form. TF composes
SpaceToBatchND / BatchToSpaceND; here those two moves are written out with pad, reshape
and transpose (`space_to_batch_nd` / `batch_to_space_nd` below), since the array
family's SpaceToBatchND op is being added separately; the values and gradients are the
same (the moves are permutations plus zero padding / cropping).

pool() follows TF1: "MAX"/"AVG" over 1-3 spatial dims through max_pool / avg_pool /
max_pool3d / avg_pool3d (1-D through an expanded 2-D pool), inside
with_space_to_batch for dilation_rate > 1 (VALID padding only, as in TF).
"""

from __future__ import annotations

import collections.abc

import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.operation import Tensor
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.ops.shape_fns import static_value
from tensorflux._src.ops.window_utils import deprecated_argument_lookup

__all__ = ["pool", "with_space_to_batch", "conv_transpose"]


def _ops():
    from tensorflux._src.ops import array_ops, math_ops, reduce_ops
    return array_ops, math_ops, reduce_ops


def _const_or(value):
    """A numpy value for a constant (or Python) value, else the tensor itself."""
    if isinstance(value, Tensor):
        v = static_value(value)
        return value if v is None else np.asarray(v)
    return np.asarray(value)


# -- space <-> batch moves ---------------------------------------------------------------------
def _static_sizes(x, block, extra):
    """(block list, spatial sizes list, rest sizes list) as Python ints when the block,
    the `extra` [M, 2] amounts and every non-batch dim of x are known, else None."""
    block, extra = _const_or(block), _const_or(extra)
    dims = x.shape.as_list()
    if not isinstance(block, np.ndarray) or not isinstance(extra, np.ndarray) or \
            None in dims[1:]:
        return None
    m = block.shape[0]
    return [int(b) for b in block], dims[1:m + 1], dims[m + 1:], extra.astype(np.int64)


def space_to_batch_nd(x, block_shape, paddings):
    """TF's SpaceToBatchND: zero-pad dims 1..M of x by `paddings` [M, 2], then move each
    block_shape-strided sub-grid into the batch axis (block offset major)."""
    array_ops, math_ops, reduce_ops = _ops()
    m = len(_const_or(block_shape)) if not isinstance(block_shape, Tensor) else \
        block_shape.shape[0].value
    rest = x.shape.ndims - 1 - m
    perm = ([2 + 2 * i for i in range(m)] + [0] + [1 + 2 * i for i in range(m)]
            + list(range(1 + 2 * m, 1 + 2 * m + rest)))
    pads = math_ops.cast(paddings, _dtypes.int32) if isinstance(paddings, Tensor) else \
        np.asarray(paddings, np.int32)
    pads = array_ops.concat([np.zeros([1, 2], np.int32), pads, np.zeros([rest, 2], np.int32)],
                            0)
    padded = array_ops.pad(x, pads)
    static = _static_sizes(x, block_shape, paddings)
    if static is not None:  # static sizes (the batch may be unknown): shapes stay known
        block, spatial, tail, extra = static
        reduced = [(s + int(a) + int(b)) // k for s, (a, b), k in zip(spatial, extra, block)]
        split = [d for q, k in zip(reduced, block) for d in (q, k)]
        y = array_ops.transpose(array_ops.reshape(padded, [-1] + split + tail), perm)
        return array_ops.reshape(y, [-1] + reduced + tail)
    block = math_ops.cast(block_shape, _dtypes.int32)
    shape = array_ops.shape(padded)
    batch, spatial, tail = shape[:1], shape[1:m + 1], shape[m + 1:]
    reduced = math_ops.floordiv(spatial, block)
    split = array_ops.reshape(array_ops.stack([reduced, block], axis=1), [-1])
    y = array_ops.reshape(padded, array_ops.concat([batch, split, tail], 0))
    y = array_ops.transpose(y, perm)
    new_batch = batch * reduce_ops.reduce_prod(block, keepdims=True)
    out = array_ops.reshape(y, array_ops.concat([new_batch, reduced, tail], 0))
    out.set_shape([None] * (1 + m) + x.shape.as_list()[1 + m:])  # the moves keep the rest
    return out


def batch_to_space_nd(x, block_shape, crops):
    """TF's BatchToSpaceND, the inverse move: interleave the batch blocks back into dims
    1..M, then crop `crops` [M, 2] from their ends."""
    array_ops, math_ops, reduce_ops = _ops()
    from tensorflux._src.ops import slicing_ops
    m = len(_const_or(block_shape)) if not isinstance(block_shape, Tensor) else \
        block_shape.shape[0].value
    rest = x.shape.ndims - 1 - m
    perm = [m] + [i for j in range(m) for i in (m + 1 + j, j)] + list(
        range(2 * m + 1, 2 * m + 1 + rest))
    static = _static_sizes(x, block_shape, crops)
    if static is not None:
        block, spatial, tail, crop = static
        y = array_ops.reshape(x, block + [-1] + spatial + tail)
        full = [q * k for q, k in zip(spatial, block)]
        y = array_ops.reshape(array_ops.transpose(y, perm), [-1] + full + tail)
        begin = [0] + [int(c) for c in crop[:, 0]] + [0] * rest
        size = [-1] + [f - int(a) - int(b) for f, (a, b) in zip(full, crop)] + [-1] * rest
        return slicing_ops.slice(y, begin, size)
    block = math_ops.cast(block_shape, _dtypes.int32)
    shape = array_ops.shape(x)
    batch, spatial, tail = shape[:1], shape[1:m + 1], shape[m + 1:]
    orig_batch = math_ops.floordiv(batch, reduce_ops.reduce_prod(block, keepdims=True))
    y = array_ops.reshape(x, array_ops.concat([block, orig_batch, spatial, tail], 0))
    y = array_ops.transpose(y, perm)
    full = spatial * block
    y = array_ops.reshape(y, array_ops.concat([orig_batch, full, tail], 0))
    crops = math_ops.cast(crops, _dtypes.int32)
    begin = array_ops.concat([[0], crops[:, 0], np.zeros([rest], np.int32)], 0)
    size = array_ops.concat([[-1], full - crops[:, 0] - crops[:, 1],
                             np.full([rest], -1, np.int32)], 0)
    out = slicing_ops.slice(y, begin, size)
    out.set_shape([None] * (1 + m) + x.shape.as_list()[1 + m:])
    return out


def _required_paddings(input_shape, block_shape, base_paddings):
    """TF's required_space_to_batch_paddings: (paddings, crops) so that each padded
    spatial size is a multiple of its block size."""
    values = [_const_or(v) for v in (input_shape, block_shape, base_paddings)]
    if all(isinstance(v, np.ndarray) for v in values):
        shape, block, base = (v.astype(np.int64) for v in values)
        extra = (block - (shape + base[:, 0] + base[:, 1]) % block) % block
        paddings = np.stack([base[:, 0], base[:, 1] + extra], 1).astype(np.int32)
        crops = np.stack([np.zeros_like(extra), extra], 1).astype(np.int32)
        return paddings, crops
    array_ops, math_ops, _ = _ops()
    shape, block, base = (math_ops.cast(v, _dtypes.int32) for v in (input_shape, block_shape,
                                                                    base_paddings))
    full = shape + base[:, 0] + base[:, 1]
    extra = math_ops.floormod(block - math_ops.floormod(full, block), block)
    paddings = array_ops.stack([base[:, 0], base[:, 1] + extra], 1)
    from tensorflux._src.ops.generator_ops import zeros_like
    crops = array_ops.stack([zeros_like(extra), extra], 1)
    return paddings, crops


def _adjust(orig, fill_value, spatial_dims):
    """TF's _with_space_to_batch_adjust: `orig` [len(spatial_dims), ...] spread over dims
    1..max(spatial_dims), `fill_value` for the dims in between."""
    array_ops, _, _ = _ops()
    const = _const_or(orig)
    is_const = isinstance(const, np.ndarray)
    fill_dims = list(np.shape(const)[1:]) if is_const else orig.shape.as_list()[1:]
    dtype = const.dtype if is_const else orig.dtype.as_numpy_dtype
    parts, prev, i = [], 0, 0
    while i < len(spatial_dims):
        start_i, start_dim = i, spatial_dims[i]
        if start_dim > 1:
            parts.append(np.full([start_dim - 1 - prev] + fill_dims, fill_value, dtype))
        while i + 1 < len(spatial_dims) and spatial_dims[i + 1] == spatial_dims[i] + 1:
            i += 1
        parts.append(const[start_i:i + 1])
        prev = spatial_dims[i]
        i += 1
    return np.concatenate(parts) if is_const else array_ops.concat(parts, 0)


def with_space_to_batch(input, dilation_rate, padding, op, filter_shape=None,  # noqa: A002
                        spatial_dims=None, data_format=None):
    """Runs `op(converted_input, num_spatial_dims, padding)` on the space-to-batch form
    of `input` for `dilation_rate` (int32, shape [num_spatial_dims]) and moves the result
    back: the atrous form of a windowed op. With a rate of all ones, just op(input, ...).
    SAME padding needs `filter_shape` (the window's spatial shape)."""
    array_ops, _, _ = _ops()
    input = convert_to_tensor(input, name="input")
    rate = convert_to_tensor(dilation_rate, _dtypes.int32, name="dilation_rate")
    if rate.shape.ndims != 1 and rate.shape.ndims is not None:
        raise ValueError("rate must be rank 1")
    if not rate.shape.is_fully_defined():
        raise ValueError("rate must have known shape")
    num_spatial_dims = rate.shape[0].value
    channels_first = data_format is not None and data_format.startswith("NC")
    start = 2 if channels_first else 1
    if spatial_dims is None:
        spatial_dims = range(start, num_spatial_dims + start)
    orig = list(spatial_dims)
    spatial_dims = sorted(set(int(x) for x in orig))
    if spatial_dims != orig or any(x < 1 for x in spatial_dims):
        raise ValueError("spatial_dims must be a montonically increasing sequence of "
                         "positive integers")
    expected = spatial_dims[-1] if channels_first else spatial_dims[-1] + 1
    try:
        input.shape.with_rank_at_least(expected)
    except ValueError:
        raise ValueError(f"input tensor must have rank {expected} at least") from None
    const_rate = _const_or(rate)
    rate_value = rate
    if isinstance(const_rate, np.ndarray):
        rate_value = const_rate
        if np.any(const_rate < 1):
            raise ValueError("dilation_rate must be positive")
        if np.all(const_rate == 1):
            return op(input, num_spatial_dims, padding)
    if padding == "SAME":
        if filter_shape is None:
            raise ValueError("filter_shape must be specified for SAME padding")
        shape = _const_or(convert_to_tensor(filter_shape, name="filter_shape"))
        spatial_filter = shape[:num_spatial_dims]
        dilated = spatial_filter + (spatial_filter - 1) * (rate_value - 1)
        extra = dilated - 1
        base = array_ops.stack([extra // 2, extra - extra // 2], 1) \
            if isinstance(extra, Tensor) else np.stack([extra // 2, extra - extra // 2], 1)
    elif padding == "VALID":
        base = np.zeros([num_spatial_dims, 2], np.int32)
    else:
        raise ValueError(f"Invalid padding method {padding!r}")
    if input.shape.ndims is None:
        raise ValueError("with_space_to_batch needs the rank of input to be known")
    dims = input.shape.as_list()
    if all(dims[i] is not None for i in spatial_dims):
        in_spatial = np.array([dims[i] for i in spatial_dims], np.int32)
    else:
        shape_t = array_ops.shape(input)
        in_spatial = array_ops.stack([shape_t[i] for i in spatial_dims])
    paddings, crops = _required_paddings(in_spatial, rate_value, base)
    block = _adjust(rate_value, 1, spatial_dims)
    paddings = _adjust(paddings, 0, spatial_dims)
    crops = _adjust(crops, 0, spatial_dims)
    converted = space_to_batch_nd(input, block, paddings)
    result = op(converted, num_spatial_dims, "VALID")
    return batch_to_space_nd(result, block, crops)


# -- pool --------------------------------------------------------------------------------------
def _strides_and_rates(n, strides, dilation_rate):
    """TF's _get_strides_and_dilation_rate."""
    if dilation_rate is None:
        dilation_rate = [1] * n
    elif len(dilation_rate) != n:
        raise ValueError(f"len(dilation_rate)={len(dilation_rate)} but should be {n}")
    dilation_rate = np.array(dilation_rate, dtype=np.int32)
    if np.any(dilation_rate < 1):
        raise ValueError("all values of dilation_rate must be positive")
    if strides is None:
        strides = [1] * n
    elif len(strides) != n:
        raise ValueError(f"len(strides)={len(strides)} but should be {n}")
    strides = np.array(strides, dtype=np.int32)
    if np.any(strides < 1):
        raise ValueError("all values of strides must be positive")
    if np.any(strides > 1) and np.any(dilation_rate > 1):
        raise ValueError("strides > 1 not supported in conjunction with dilation_rate > 1")
    return strides, dilation_rate


def pool(input, window_shape, pooling_type, padding, dilation_rate=None,  # noqa: A002
         strides=None, name=None, data_format=None, dilations=None):
    """N-D ("MAX" or "AVG") pooling over the 1-3 spatial dims of `input`, with optional
    output striding or window dilation (dilated pooling needs VALID padding)."""
    from tensorflux._src.ops import pool_ops
    array_ops, _, _ = _ops()
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
    from tensorflux._src.ops import conv_ops
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
