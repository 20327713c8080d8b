"""Gradients of the structural array ops (TF1's array_grad.py), plus the helper ops they
need that TF has too: `InvertPermutation` and `MirrorPadGrad`.

Each function is an OpDef's `grad`: `(op, *output_grads) -> list of input grads`, built
with the public ops so the result can be differentiated again. Shapes come from
`tf.shape`, which folds to constants when a run is compiled, so the functions work on
graphs with unknown dimensions. The op families import this module (and name these
functions in their records), so it imports them only inside the functions.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import errors
from tensorflux._src.framework.tensor_shape import TensorShape, unknown_shape
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.registry import REQUIRED, OpDef, register
from tensorflux._src.ops.shape_fns import static_value


def _a():
    from tensorflux._src.ops.array import array_ops
    return array_ops


def _reshape_to_input(op, grad):
    a = _a()
    return a.reshape(grad, a.shape(op.inputs[0]))


# -- InvertPermutation ------------------------------------------------------------------------
def _invert_permutation_lower(x):
    if isinstance(x, np.ndarray):  # static: stays numpy, so a transpose's perm stays static
        n = x.size
        out = np.full(n, -1, x.dtype)
        for i, d in enumerate(x.reshape(-1)):
            if not 0 <= d < n:
                raise errors.InvalidArgumentError(None, None, f"{d} is not between 0 and {n}")
            if out[d] != -1:
                raise errors.InvalidArgumentError(None, None, f"{d} is duplicated in the input.")
            out[d] = i
        return out
    return jnp.zeros_like(x).at[x].set(jnp.arange(x.shape[0], dtype=x.dtype))


def _rank1(op):
    s = op.inputs[0].shape
    if s.ndims not in (None, 1):
        raise ValueError(f"Shape must be rank 1 but is rank {s.ndims}")
    return s if s.ndims is not None else unknown_shape(1)


register(OpDef("InvertPermutation", inputs=("x: T",), outputs=("y: T",),
               attrs={"T": _dtypes.INDEX}, shape=_rank1, lower=_invert_permutation_lower,
               not_differentiable=True))


def invert_permutation(x, name=None):
    """The inverse permutation: y[x[i]] = i."""
    return apply_op("InvertPermutation", name=name, x=x)


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
    from tensorflux._src.ops.op_helpers import kernel_error, static_input
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
def identity_grad(op, dy):
    return [dy]


def reshape_grad(op, dy):
    return [_reshape_to_input(op, dy), None]


def squeeze_grad(op, dy):
    return [_reshape_to_input(op, dy)]


def transpose_grad(op, dy):
    a = _a()
    inverse = invert_permutation(op.inputs[1])
    return [a.transpose(dy, inverse, conjugate=op.type == "ConjugateTranspose"), None]


def pack_grad(op, dy):
    return _a().unstack(dy, num=op.get_attr("N"), axis=op.get_attr("axis"))


def unpack_grad(op, *dys):
    return [_a().stack(list(dys), axis=op.get_attr("axis"))]


def concat_grad(op, dy):
    # Cut dy back into the inputs' extents along the axis (sizes fold to constants).
    from tensorflux._src.ops.math import math_ops
    from tensorflux._src.ops.array import slicing_ops
    a = _a()
    values, axis = op.inputs[:-1], op.inputs[-1]
    sizes = a.stack([a.shape(v)[axis] for v in values]) if len(values) > 1 else \
        a.reshape(a.shape(values[0])[axis], [1])
    parts = slicing_ops.split(dy, sizes, axis=math_ops.cast(axis, _dtypes.int32),
                              num=len(values))
    for p, v in zip(parts, values):
        p.set_shape(v.shape)
    return list(parts) + [None]


def tile_grad(op, dy):
    # Reshape dy to (m0, d0, m1, d1, ...) and sum over the multiples' axes.
    from tensorflux._src.ops.array import generator_ops
    from tensorflux._src.ops.math import reduce_ops
    a = _a()
    x, multiples = op.inputs
    split_shape = a.reshape(a.transpose(a.stack([multiples, a.shape(x, out_type=multiples.dtype)])),
                            [-1])
    axes = generator_ops.range(0, a.size(split_shape), 2)
    grad = reduce_ops.reduce_sum(a.reshape(dy, split_shape), axes)
    grad.set_shape(x.shape)
    return [grad, None]


def pad_grad(op, dy):
    # The input is the slice of dy after the leading padding. PadV2's constant_values
    # gets None, as in TF.
    from tensorflux._src.ops.array import slicing_ops
    a = _a()
    x, paddings = op.inputs[:2]
    begin = slicing_ops.slice_helper(paddings, (slice(None), 0))
    grad = slicing_ops.slice(dy, begin, a.shape(x, out_type=begin.dtype))
    return [grad] + [None] * (len(op.inputs) - 1)


def mirror_pad_grad(op, dy):
    return [apply_op("MirrorPadGrad", input=dy, paddings=op.inputs[1],
                     mode=op.get_attr("mode")), None]


def reverse_grad(op, dy):
    return [_a().reverse(dy, op.inputs[1]), None]


def broadcast_to_grad(op, dy):
    from tensorflux._src.autodiff.grad_helpers import unbroadcast
    return [unbroadcast(dy, op.inputs[0]), None]


def diag_grad(op, dy):
    return [_a().diag_part(dy)]


def diag_part_grad(op, dy):
    return [_a().diag(dy)]


# -- gradients of generator_ops -----------------------------------------------------------------
def fill_grad(op, dy):
    from tensorflux._src.ops.math import reduce_ops
    return [None, reduce_ops.reduce_sum(dy)]
