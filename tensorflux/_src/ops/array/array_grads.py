"""Gradients of the structural array ops (TF1's array_grad.py), of GatherV2, SelectV2 and
Fill, plus the `MirrorPadGrad` op TF has for them.

Each function is attached to its record (in array_ops.py, gather_ops.py, generator_ops.py)
with `register_gradient`: they are built with the public ops of several families
(slices, reductions, ranges, segment sums) that sit above those records, and the result
can be differentiated again. Shapes come from `tf.shape`, which folds to constants when a run is compiled, so
the functions work on graphs with unknown dimensions.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework.indexed_slices import IndexedSlices
from tensorflux._src.framework.tensor_shape import TensorShape, unknown_shape
from tensorflux._src.ops.array import array_ops as A
from tensorflux._src.ops.array import gather_ops, slicing_ops
from tensorflux._src.ops.math import indexed_slices_ops  # noqa: F401 - densifies them
from tensorflux._src.ops.math import math_ops, reduce_ops
from tensorflux._src.ops.math.grad_helpers import unbroadcast
from tensorflux._src.ops.math.segment_ops import unsorted_segment_sum
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.op_helpers import kernel_error, static_input, static_scalar
from tensorflux._src.ops.registry import OpDef, REQUIRED, register, register_gradient
from tensorflux._src.ops.shape_fns import static_value


def _reshape_to_input(op, grad):
    return A.reshape(grad, A.shape(op.inputs[0]))


# -- MirrorPadGrad ---------------------------------------------------------------------------
def _mirror_pad_grad_shape(op):
    x, paddings_t = op.inputs
    paddings = static_value(paddings_t)
    if paddings is None or x.shape.ndims is None:
        return unknown_shape(x.shape.ndims)
    if paddings.shape != (x.shape.ndims, 2):
        raise ValueError(f"paddings must be a matrix of shape [{x.shape.ndims}, 2], got "
                         f"{list(paddings.shape)}")
    return TensorShape([None if d is None else d - int(p.sum())
                        for d, p in zip(x.shape.as_list(), paddings)])


def _mirror_pad_grad_lower(input, paddings, mode):  # noqa: A002 - TF's argument name
    pads = static_input(paddings, "MirrorPadGrad", "paddings").astype(np.int64)
    off = 1 if mode == "REFLECT" else 0  # REFLECT leaves out the edge; SYMMETRIC repeats it
    g = input
    for axis, (lo, hi) in enumerate((int(a), int(b)) for a, b in pads):
        n = g.shape[axis] - lo - hi
        if n < 0 or lo > n - off or hi > n - off:
            raise kernel_error(f"paddings must be less than the dimension size: {lo}, {hi} "
                               f"not less than {n}")

        def part(a, b, g=g, axis=axis):
            return g[(slice(None),) * axis + (slice(a, b),)]

        def place(v, before, after, axis=axis):
            widths = [(0, 0)] * g.ndim
            widths[axis] = (before, after)
            return jnp.pad(v, widths)

        # Padded position lo - 1 - j mirrors source j + off; position lo + n + j mirrors
        # source n - 1 - off - j. Fold each border back, flipped, onto what it copies.
        left = jnp.flip(part(0, lo), axis)  # sources off .. off + lo - 1
        right = jnp.flip(part(lo + n, lo + n + hi), axis)  # sources n-off-hi .. n-off-1
        g = (part(lo, lo + n) + place(left, off, n - off - lo)
             + place(right, n - off - hi, off))
    return g


register(OpDef("MirrorPadGrad", inputs=("input: T", "paddings: Tpaddings"),
               outputs=("output: T",),
               attrs={"T": _dtypes.NUMBERS, "Tpaddings": _dtypes.INDEX, "mode": REQUIRED},
               shape=_mirror_pad_grad_shape, lower=_mirror_pad_grad_lower,
               grad=lambda op, dy: [apply_op("MirrorPad", input=dy, paddings=op.inputs[1],
                                             mode=op.get_attr("mode")), None]))


# -- gradients of array_ops --------------------------------------------------------------------
@register_gradient("Identity")
def identity_grad(op, dy):
    return [dy]


identity_grad.accepts_indexed_slices = True  # passes a sparse gradient on, as TF's


@register_gradient("Reshape", "ExpandDims")
def reshape_grad(op, dy):
    return [_reshape_to_input(op, dy), None]


@register_gradient("Squeeze")
def squeeze_grad(op, dy):
    return [_reshape_to_input(op, dy)]


@register_gradient("Transpose", "ConjugateTranspose")
def transpose_grad(op, dy):
    inverse = A.invert_permutation(op.inputs[1])
    return [A.transpose(dy, inverse, conjugate=op.type == "ConjugateTranspose"), None]


@register_gradient("Pack")
def pack_grad(op, dy):
    return A.unstack(dy, num=op.get_attr("N"), axis=op.get_attr("axis"))


@register_gradient("Unpack")
def unpack_grad(op, *dys):
    return [A.stack(list(dys), axis=op.get_attr("axis"))]


@register_gradient("ConcatV2")
def concat_grad(op, dy):
    # Cut dy back into the inputs' extents along the axis (sizes fold to constants).
    values, axis = op.inputs[:-1], op.inputs[-1]
    sizes = A.stack([A.shape(v)[axis] for v in values]) if len(values) > 1 else \
        A.reshape(A.shape(values[0])[axis], [1])
    parts = slicing_ops.split(dy, sizes, axis=math_ops.cast(axis, _dtypes.int32),
                              num=len(values))
    for p, v in zip(parts, values):
        p.set_shape(v.shape)
    return list(parts) + [None]


@register_gradient("Tile")
def tile_grad(op, dy):
    # Reshape dy to (m0, d0, m1, d1, ...) and sum over the multiples' axes.
    x, multiples = op.inputs
    split_shape = A.reshape(
        A.transpose(A.stack([multiples, A.shape(x, out_type=multiples.dtype)])), [-1])
    axes = math_ops.range(0, A.size(split_shape), 2)
    grad = reduce_ops.reduce_sum(A.reshape(dy, split_shape), axes)
    grad.set_shape(x.shape)
    return [grad, None]


@register_gradient("Pad", "PadV2")
def pad_grad(op, dy):
    # The input is the slice of dy after the leading padding. PadV2's constant_values
    # gets None, as in TF.
    x, paddings = op.inputs[:2]
    begin = slicing_ops.slice_helper(paddings, (slice(None), 0))
    grad = slicing_ops.slice(dy, begin, A.shape(x, out_type=begin.dtype))
    return [grad] + [None] * (len(op.inputs) - 1)


@register_gradient("MirrorPad")
def mirror_pad_grad(op, dy):
    return [apply_op("MirrorPadGrad", input=dy, paddings=op.inputs[1],
                     mode=op.get_attr("mode")), None]


@register_gradient("ReverseV2")
def reverse_grad(op, dy):
    return [A.reverse(dy, op.inputs[1]), None]


@register_gradient("BroadcastTo")
def broadcast_to_grad(op, dy):
    return [unbroadcast(dy, op.inputs[0]), None]


@register_gradient("Diag")
def diag_grad(op, dy):
    return [A.diag_part(dy)]


@register_gradient("DiagPart")
def diag_part_grad(op, dy):
    return [A.diag(dy)]


# -- gradients of gather_ops -------------------------------------------------------------------
@register_gradient("GatherV2")
def gather_grad(op, dy):
    """Along axis 0 (TF's _GatherV2Grad), the params gradient is an IndexedSlices: dy's
    slices with the indices they were read from, so optimizers update only those rows.
    Along another axis or with batch dims it is dense: a segment sum of dy's slices into
    the rows they were gathered from, so repeated indices accumulate."""
    params, indices, axis_t = op.inputs
    batch_dims, axis = op.get_attr("batch_dims"), static_scalar(axis_t)
    if axis == 0:  # batch_dims is then 0 too (the shape function checks it)
        params_shape = A.shape(params)
        size = A.expand_dims(A.size(indices), 0)
        values = A.reshape(dy, A.concat([size, params_shape[1:]], 0))
        return [IndexedSlices(values, A.reshape(indices, size), params_shape), None, None]
    ps = A.shape(params, out_type=indices.dtype)
    np_int = indices.dtype.as_numpy_dtype
    p_rank, i_rank = params.shape.ndims, indices.shape.ndims
    if p_rank is None or i_rank is None or axis is None:
        raise ValueError(f"The gradient of {op.name} (gather with axis != 0 or batch_dims) "
                         f"needs the ranks of params and indices and a constant axis")
    b = batch_dims + i_rank if batch_dims < 0 else batch_dims
    a = axis % p_rank
    n_j, n_i = i_rank - b, p_rank - a - 1
    # dy is (B, O, J, I): batch dims, params' dims before the axis, indices' own dims,
    # params' dims after it. Bring it to (B, J, O, I) and flatten B and J into rows.
    perm = [*range(b), *range(a, a + n_j), *range(b, a), *range(a + n_j, a + n_j + n_i)]
    values = A.transpose(dy, perm) if perm != sorted(perm) else dy
    n = ps[a]
    values = A.reshape(values, A.concat([A.reshape(A.size(indices, out_type=indices.dtype),
                                                   [1]), ps[b:a], ps[a + 1:]], 0))
    ids, num = indices, n
    if b:
        # Batch row r of params owns segments r * n .. r * n + n - 1. An index outside
        # [0, n) read zeros, so it must not reach a neighbouring batch row's segments.
        rows = reduce_ops.reduce_prod(ps[:b])
        offsets = A.reshape(math_ops.range(rows) * n,
                            A.concat([ps[:b], np.ones(n_j, np_int)], 0))
        valid = math_ops.logical_and(math_ops.greater_equal(indices, 0),
                                     math_ops.less(indices, n))
        ids = gather_ops.where_v2(valid, indices + offsets, np.array(-1, np_int))
        num = rows * n
    grad = unsorted_segment_sum(values, A.reshape(ids, [-1]), num)  # (B*n, O, I)
    grad = A.reshape(grad, A.concat([ps[:b], A.reshape(n, [1]), ps[b:a], ps[a + 1:]], 0))
    back = [*range(b), *range(b + 1, a + 1), b, *range(a + 1, p_rank)]  # to (B, O, n, I)
    return [A.transpose(grad, back) if back != sorted(back) else grad, None, None]


@register_gradient("SelectV2")
def select_v2_grad(op, dy):
    # Route dy by the condition, then sum each side over the axes it was broadcast along.
    c, t, e = op.inputs
    zero = np.zeros((), dy.dtype.as_numpy_dtype)
    return [None, unbroadcast(gather_ops.where_v2(c, dy, zero), t),
            unbroadcast(gather_ops.where_v2(c, zero, dy), e)]


# -- gradients of generator_ops -----------------------------------------------------------------
@register_gradient("Fill")
def fill_grad(op, dy):
    return [None, reduce_ops.reduce_sum(dy)]
