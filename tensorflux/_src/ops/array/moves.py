"""Space, depth and batch moves: space_to_depth / depth_to_space, space_to_batch(_nd) /
batch_to_space(_nd), required_space_to_batch_paddings.

All are pure permutations of elements (plus zero padding or cropping), lowered as
reshape + transpose. The block shape, paddings and crops decide the output shape, so
XLA needs their values when it compiles (`static_input`). SpaceToDepth/DepthToSpace
support NHWC and NCHW (TF's CPU kernel only NHWC, its GPU kernel both; NCHW_VECT_C
needs qint8, which has no XLA form). Each op's gradient is its inverse op, as in TF.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.framework.tensor_shape import TensorShape, unknown_shape
from tensorflux._src.ops.array import array_ops, generator_ops
from tensorflux._src.ops.nn.window_utils import ATTR_RULES, apply_checked
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.op_helpers import (ANY, deprecated_argument_lookup, dims_str,
                                            kernel_error, merge_shapes, static_input,
                                            with_rank, with_rank_at_least)
from tensorflux._src.ops.registry import OpDef, REQUIRED, register
from tensorflux._src.ops.shape_fns import static_value

__all__ = ["batch_to_space", "batch_to_space_nd", "depth_to_space",
           "required_space_to_batch_paddings", "space_to_batch", "space_to_batch_nd",
           "space_to_depth"]  # with_space_to_batch is tf.nn's only

_I = _dtypes.INDEX
_FORMATS = ("NHWC", "NCHW", "NCHW_VECT_C")


def _divide(dim, by):
    """InferenceContext::Divide with evenly_divisible (None stays unknown)."""
    if dim is None:
        return None
    if dim % by:
        raise ValueError(f"Dimension size must be evenly divisible by {by} but is {dim}")
    return dim // by


def _times(dim, by):
    return None if dim is None else dim * by


# -- SpaceToDepth / DepthToSpace ------------------------------------------------------------
def _nhwc_dims(shape, data_format):
    d = with_rank(shape, 4).as_list()
    if data_format == "NCHW":
        return d[0], d[2], d[3], d[1]
    return d[0], d[1], d[2], d[3]


def _from_nhwc(n, h, w, c, data_format):
    return TensorShape([n, c, h, w] if data_format == "NCHW" else [n, h, w, c])


def _space_to_depth_shape(op):
    fmt, bs = op.get_attr("data_format"), op.get_attr("block_size")
    if fmt == "NCHW_VECT_C":
        with_rank(op.inputs[0].shape, 5)
        return unknown_shape(5)
    n, h, w, c = _nhwc_dims(op.inputs[0].shape, fmt)
    return _from_nhwc(n, _divide(h, bs), _divide(w, bs), _times(c, bs * bs), fmt)


def _depth_to_space_shape(op):
    fmt, bs = op.get_attr("data_format"), op.get_attr("block_size")
    if fmt == "NCHW_VECT_C":
        with_rank(op.inputs[0].shape, 5)
        return unknown_shape(5)
    n, h, w, c = _nhwc_dims(op.inputs[0].shape, fmt)
    return _from_nhwc(n, _times(h, bs), _times(w, bs), _divide(c, bs * bs), fmt)


def _in_nhwc(fn):
    """Runs an NHWC kernel on NCHW input by transposing in and out (as XLA's TF bridge)."""
    def lower(input, block_size, data_format):  # noqa: A002
        if data_format == "NCHW_VECT_C":
            raise kernel_error("NCHW_VECT_C data_format needs qint8 data, which is not "
                               "supported; use NHWC or NCHW")
        if input.ndim != 4:
            raise kernel_error(f"Input rank should be 4 instead of {input.ndim}")
        if data_format == "NCHW":
            return jnp.transpose(fn(jnp.transpose(input, (0, 2, 3, 1)), block_size),
                                 (0, 3, 1, 2))
        return fn(input, block_size)
    return lower


def _space_to_depth_nhwc(x, bs):
    n, h, w, c = x.shape
    if h % bs or w % bs:
        raise kernel_error(f"Image width {w} and height {h} should be divisible by "
                           f"block_size: {bs}")
    x = jnp.reshape(x, (n, h // bs, bs, w // bs, bs, c))
    return jnp.reshape(jnp.transpose(x, (0, 1, 3, 2, 4, 5)), (n, h // bs, w // bs, bs * bs * c))


def _depth_to_space_nhwc(x, bs):
    n, h, w, c = x.shape
    if c % (bs * bs):
        raise kernel_error(f"Input depth dimension {c} should be divisible by: {bs * bs}")
    x = jnp.reshape(x, (n, h, w, bs, bs, c // (bs * bs)))
    return jnp.reshape(jnp.transpose(x, (0, 1, 3, 2, 4, 5)), (n, h * bs, w * bs, c // (bs * bs)))


register(OpDef(
    "SpaceToDepth", inputs=("input: T",), outputs=("output: T",),
    attrs={"T": ANY, "block_size": REQUIRED, "data_format": "NHWC"},
    shape=_space_to_depth_shape, lower=_in_nhwc(_space_to_depth_nhwc),
    grad=lambda op, dy: [depth_to_space(dy, op.get_attr("block_size"),
                                        data_format=op.get_attr("data_format"))]))
register(OpDef(
    "DepthToSpace", inputs=("input: T",), outputs=("output: T",),
    attrs={"T": ANY, "block_size": REQUIRED, "data_format": "NHWC"},
    shape=_depth_to_space_shape, lower=_in_nhwc(_depth_to_space_nhwc),
    grad=lambda op, dy: [space_to_depth(dy, op.get_attr("block_size"),
                                        data_format=op.get_attr("data_format"))]))
ATTR_RULES["SpaceToDepth"] = ATTR_RULES["DepthToSpace"] = {"data_format": _FORMATS}


def _block_size(op_type, block_size):
    if isinstance(block_size, (bool, np.bool_)) or not isinstance(block_size, (int, np.integer)):
        raise TypeError(f"Expected int for argument 'block_size' not {block_size!r}.")
    if block_size < 2:
        raise ValueError(f"Attr 'block_size' of '{op_type}' Op passed {int(block_size)} less "
                         f"than minimum 2.")
    return int(block_size)


def space_to_depth(input, block_size, name=None, data_format="NHWC"):  # noqa: A002
    """Moves block_size x block_size spatial blocks into the depth dimension."""
    return apply_checked("SpaceToDepth", name=name, input=input,
                         block_size=_block_size("SpaceToDepth", block_size),
                         data_format=data_format)


def depth_to_space(input, block_size, name=None, data_format="NHWC"):  # noqa: A002
    """Moves depth into block_size x block_size spatial blocks (space_to_depth's inverse)."""
    return apply_checked("DepthToSpace", name=name, input=input,
                         block_size=_block_size("DepthToSpace", block_size),
                         data_format=data_format)


# -- SpaceToBatchND / BatchToSpaceND --------------------------------------------------------
def _num_block_dims(block_shape_t):
    s = block_shape_t.shape
    if s.ndims != 1:
        raise ValueError("block_shape must have rank 1.")
    if s.dims[0].value is None:
        raise ValueError("block_shape must have known size.")
    return s.dims[0].value


def _batch_space_shape(op, to_batch):
    """TF's SpaceToBatchShapeHelper / BatchToSpaceShapeHelper."""
    x_t, block_t, pads_t = op.inputs
    m = _num_block_dims(block_t)
    x = with_rank_at_least(x_t.shape, m + 1)
    merge_shapes(pads_t.shape, TensorShape([m, 2]))
    block, pads = static_value(block_t), static_value(pads_t)
    dims = [None] * (m + 1) if x.ndims is None else x.as_list()
    batch = dims[0]
    if block is not None and block.size:
        for b in block.reshape(-1):
            if b < 1:
                raise ValueError("block_shape must be positive")
            batch = None if batch is None else (batch * int(b) if to_batch
                                                else _divide(batch, int(b)))
    elif m > 0:
        batch = None
    out = [batch] + [None] * m
    if pads is not None and pads.size:
        pads = pads.reshape(m, 2)
        for i in range(m):
            lo, hi = int(pads[i, 0]), int(pads[i, 1])
            if lo < 0 or hi < 0:
                raise ValueError("paddings cannot be negative" if to_batch
                                 else "crops cannot be negative")
            if block is not None:
                b = int(block.reshape(-1)[i])
                if to_batch:
                    out[i + 1] = None if dims[i + 1] is None else _divide(dims[i + 1] + lo + hi, b)
                elif dims[i + 1] is not None:
                    size = dims[i + 1] * b
                    for crop in (lo, hi):  # InferenceContext::Subtract, one crop at a time
                        if size < crop:
                            raise ValueError(f"Negative dimension size caused by "
                                             f"subtracting {crop} from {size}")
                        size -= crop
                    out[i + 1] = size
    if x.ndims is None:
        return unknown_shape()
    return TensorShape(out).concatenate(x[m + 1:])


def _block_args(x, block_shape, pairs, op_type, pairs_name):
    block = [int(b) for b in static_input(block_shape, op_type, "block_shape").reshape(-1)]
    pairs = static_input(pairs, op_type, pairs_name)
    if np.ndim(block_shape) != 1:
        raise kernel_error(f"block_shape rank should be 1 instead of {np.ndim(block_shape)}")
    m = len(block)
    if x.ndim < 1 + m:
        raise kernel_error(f"input rank should be >= {1 + m} instead of {x.ndim}")
    if pairs.shape != (m, 2):
        raise kernel_error(f"{pairs_name} should have shape [{m}, 2] instead of "
                           f"{dims_str(pairs.shape)}")
    return block, [(int(lo), int(hi)) for lo, hi in pairs]


def _space_to_batch_lower(input, block_shape, paddings):  # noqa: A002
    block, pads = _block_args(input, block_shape, paddings, "SpaceToBatchND", "paddings")
    m = len(block)
    for i, b in enumerate(block):
        if b < 1:
            raise kernel_error(f"All values in block_shape must be positive, got value, {b} "
                               f"at index {i}.")
    if any(lo < 0 or hi < 0 for lo, hi in pads):
        raise kernel_error("Paddings must be non-negative")
    x = jnp.pad(input, [(0, 0)] + pads + [(0, 0)] * (input.ndim - m - 1))
    for i, b in enumerate(block):
        if x.shape[i + 1] % b:
            raise kernel_error(f"padded_shape[{i}]={x.shape[i + 1]} is not divisible by "
                               f"block_shape[{i}]={b}")
    n, rest = x.shape[0], x.shape[m + 1:]
    split = [n]
    for i, b in enumerate(block):
        split += [x.shape[i + 1] // b, b]
    x = jnp.reshape(x, split + list(rest))
    # (n, s1, b1, ..., sm, bm, rest) -> (b1, ..., bm, n, s1, ..., sm, rest)
    perm = [2 + 2 * i for i in range(m)] + [0] + [1 + 2 * i for i in range(m)]
    perm += list(range(1 + 2 * m, x.ndim))
    x = jnp.transpose(x, perm)
    return jnp.reshape(x, [n * int(np.prod(block))] + [split[1 + 2 * i] for i in range(m)]
                       + list(rest))


def _batch_to_space_lower(input, block_shape, crops):  # noqa: A002
    block, crops = _block_args(input, block_shape, crops, "BatchToSpaceND", "crops")
    m = len(block)
    prod = int(np.prod(block))
    if prod <= 0:
        raise kernel_error(f"Product of block sizes must be positive, got {prod}")
    n = input.shape[0]
    if n % prod:
        raise kernel_error(f"Input batch dimension ({n}) is not divisible by product of "
                           f"block sizes ({prod})")
    for i, (lo, hi) in enumerate(crops):
        if lo < 0 or hi < 0:
            raise kernel_error("Crops must be non-negative")
        size = input.shape[i + 1] * block[i] - lo - hi
        if size < 0:
            raise kernel_error(f"cropped_shape[{i}]={size} must be non-negative")
    spatial, rest = list(input.shape[1:m + 1]), list(input.shape[m + 1:])
    x = jnp.reshape(input, block + [n // prod] + spatial + rest)
    # (b1, ..., bm, n', s1, ..., sm, rest) -> (n', s1, b1, ..., sm, bm, rest)
    perm = [m]
    for i in range(m):
        perm += [m + 1 + i, i]
    perm += list(range(2 * m + 1, x.ndim))
    x = jnp.reshape(jnp.transpose(x, perm),
                    [n // prod] + [s * b for s, b in zip(spatial, block)] + rest)
    index = (slice(None),) + tuple(slice(lo, x.shape[i + 1] - hi)
                                   for i, (lo, hi) in enumerate(crops))
    return x[index]


register(OpDef(
    "SpaceToBatchND", inputs=("input: T", "block_shape: Tblock_shape", "paddings: Tpaddings"),
    outputs=("output: T",), attrs={"T": ANY, "Tblock_shape": _I, "Tpaddings": _I},
    shape=lambda op: _batch_space_shape(op, True), lower=_space_to_batch_lower,
    grad=lambda op, dy: [batch_to_space_nd(dy, op.inputs[1], op.inputs[2]), None, None],
    type_defaults={"Tblock_shape": _dtypes.int32, "Tpaddings": _dtypes.int32}))
register(OpDef(
    "BatchToSpaceND", inputs=("input: T", "block_shape: Tblock_shape", "crops: Tcrops"),
    outputs=("output: T",), attrs={"T": ANY, "Tblock_shape": _I, "Tcrops": _I},
    shape=lambda op: _batch_space_shape(op, False), lower=_batch_to_space_lower,
    grad=lambda op, dy: [space_to_batch_nd(dy, op.inputs[1], op.inputs[2]), None, None],
    type_defaults={"Tblock_shape": _dtypes.int32, "Tcrops": _dtypes.int32}))


def space_to_batch_nd(input, block_shape, paddings, name=None):  # noqa: A002
    """Zero-pads the spatial dims, then moves blocks of them into the batch dimension."""
    return apply_op("SpaceToBatchND", name=name, input=input, block_shape=block_shape,
                    paddings=paddings)


def batch_to_space_nd(input, block_shape, crops, name=None):  # noqa: A002
    """Moves batch blocks back into the spatial dims, then crops (space_to_batch_nd's inverse)."""
    return apply_op("BatchToSpaceND", name=name, input=input, block_shape=block_shape,
                    crops=crops)


def space_to_batch(input, paddings, block_size=None, name=None, block_shape=None):  # noqa: A002
    """TF1's 4-D form: space_to_batch_nd with block_shape [block_size, block_size]."""
    block_size = deprecated_argument_lookup("block_shape", block_shape, "block_size",
                                            block_size)
    result = space_to_batch_nd(input, paddings=paddings,
                               block_shape=np.array([block_size, block_size], np.int64),
                               name=name)
    result.set_shape(result.shape.with_rank(4))
    return result


def batch_to_space(input, crops, block_size, name=None, block_shape=None):  # noqa: A002
    """TF1's 4-D form: batch_to_space_nd with block_shape [block_size, block_size]."""
    block_size = deprecated_argument_lookup("block_shape", block_shape, "block_size",
                                            block_size)
    result = batch_to_space_nd(input, crops=crops,
                               block_shape=np.array([block_size, block_size], np.int64),
                               name=name)
    result.set_shape(result.shape.with_rank(4))
    return result


def required_space_to_batch_paddings(input_shape, block_shape, base_paddings=None,
                                     name=None):
    """(paddings, crops) that make block_shape divide input_shape, starting from
    base_paddings: paddings[i] = [base[i, 0], base[i, 1] + extra], crops[i] = [0, extra]."""
    with _graph.name_scope(name, "required_space_to_batch_paddings",
                           [input_shape, block_shape]):
        input_shape = convert_to_tensor(input_shape, dtype=_dtypes.int32, name="input_shape")
        block_shape = convert_to_tensor(block_shape, dtype=_dtypes.int32, name="block_shape")
        block_shape.shape.assert_is_fully_defined()
        block_shape.shape.assert_has_rank(1)
        m = block_shape.shape.dims[0].value
        if m == 0:
            return (generator_ops.zeros([0, 2], _dtypes.int32),
                    generator_ops.zeros([0, 2], _dtypes.int32))
        input_shape.shape.assert_is_compatible_with([m])
        if base_paddings is not None:
            base_paddings = convert_to_tensor(base_paddings, dtype=_dtypes.int32,
                                              name="base_paddings")
            base_paddings.shape.assert_is_compatible_with([m, 2])
        else:
            base_paddings = generator_ops.zeros([m, 2], _dtypes.int32)
        values = [static_value(t) for t in (block_shape, input_shape, base_paddings)]
        if all(v is not None for v in values):
            block_shape, input_shape, base_paddings = values
        pad_start = base_paddings[:, 0]
        orig_pad_end = base_paddings[:, 1]
        full_input_shape = input_shape + pad_start + orig_pad_end
        pad_end_extra = (block_shape - full_input_shape % block_shape) % block_shape
        pad_end = orig_pad_end + pad_end_extra
        paddings = array_ops.stack([[pad_start[i], pad_end[i]] for i in range(m)],
                                   name="paddings")
        crops = array_ops.stack([[0, pad_end_extra[i]] for i in range(m)], name="crops")
        return paddings, crops


# -- tf.nn.with_space_to_batch ----------------------------------------------------------------
def _base_paddings(filter_shape, num_spatial_dims, rate):
    """SAME as explicit paddings of the dilated filter (the extra one after, as conv2d)."""
    spatial = filter_shape[:num_spatial_dims]
    extra = spatial + (spatial - 1) * (rate - 1) - 1
    start = extra // 2
    end = extra - start
    return array_ops.stack([[start[i], end[i]] for i in range(num_spatial_dims)])


def _adjust(orig, fill_value, spatial_dims):
    """Spreads per-spatial-dim rows of `orig` over dims 1.. with `fill_value` in the gaps
    (TF's _with_space_to_batch_adjust)."""
    orig_t = convert_to_tensor(orig)
    fill_dims = orig_t.shape.as_list()[1:]
    dtype = orig_t.dtype.as_numpy_dtype
    value = static_value(orig_t)
    source = value if value is not None else orig_t
    parts, previous, i = [], 0, 0
    while i < len(spatial_dims):
        start_i, start_dim = i, spatial_dims[i]
        if start_dim > 1:
            parts.append(np.full([start_dim - 1 - previous] + fill_dims, fill_value, dtype))
        while i + 1 < len(spatial_dims) and spatial_dims[i + 1] == spatial_dims[i] + 1:
            i += 1
        parts.append(source[start_i:i + 1])
        previous = spatial_dims[i]
        i += 1
    if value is not None:
        return np.concatenate(parts)
    return array_ops.concat(parts, 0)


def with_space_to_batch(input, dilation_rate, padding, op, filter_shape=None,  # noqa: A002
                        spatial_dims=None, data_format=None):
    """Runs `op(converted_input, num_spatial_dims, padding)` (a VALID op such as an
    undilated convolution) on space_to_batch_nd of the input, then batch_to_space_nd: the
    op as if dilated by `dilation_rate` (TF's recipe for atrous convolution)."""
    input = convert_to_tensor(input, name="input")  # noqa: A001
    input_shape = input.shape
    rate_t = convert_to_tensor(dilation_rate, _dtypes.int32, name="dilation_rate")
    if rate_t.shape.ndims != 1 and rate_t.shape.ndims is not None:
        raise ValueError("rate must be rank 1")
    if not rate_t.shape.is_fully_defined():
        raise ValueError("rate must have known shape")
    n = rate_t.shape.dims[0].value
    first = 2 if data_format is not None and data_format.startswith("NC") else 1
    if spatial_dims is None:
        spatial_dims = range(first, n + first)
    orig = list(spatial_dims)
    spatial_dims = sorted(set(int(x) for x in orig))
    if spatial_dims != orig or any(x < 1 for x in spatial_dims):
        raise ValueError("spatial_dims must be a montonically increasing sequence of positive "
                         "integers")
    expected_rank = spatial_dims[-1] + (0 if first == 2 else 1)
    if input_shape.ndims is not None and input_shape.ndims < expected_rank:
        raise ValueError(f"input tensor must have rank {expected_rank} at least")
    rate = static_value(rate_t)
    if rate is not None:
        if np.any(rate < 1):
            raise ValueError("dilation_rate must be positive")
        if np.all(rate == 1):
            return op(input, n, padding)
    rate_value = rate if rate is not None else rate_t
    if padding == "SAME":
        if filter_shape is None:
            raise ValueError("filter_shape must be specified for SAME padding")
        filter_t = convert_to_tensor(filter_shape, name="filter_shape")
        known = static_value(filter_t)
        base = _base_paddings(known if known is not None else filter_t, n, rate_value)
    elif padding == "VALID":
        base = np.zeros([n, 2], np.int32)
    else:
        raise ValueError(f"Invalid padding method {padding!r}")
    dims = input_shape.as_list() if input_shape.ndims is not None else None
    spatial_shape = [dims[i] for i in spatial_dims] if dims is not None else None
    if spatial_shape is None or None in spatial_shape:
        shape_t = array_ops.shape(input)
        spatial_shape = array_ops.stack([shape_t[i] for i in spatial_dims])
    paddings, crops = required_space_to_batch_paddings(spatial_shape, rate_t, base)
    block = _adjust(rate_t, 1, spatial_dims)
    converted = space_to_batch_nd(input, block, _adjust(paddings, 0, spatial_dims))
    result = op(converted, n, "VALID")
    return batch_to_space_nd(result, block, _adjust(crops, 0, spatial_dims))
