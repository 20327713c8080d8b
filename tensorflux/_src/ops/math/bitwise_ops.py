"""Bitwise ops (`tf.bitwise`): BitwiseAnd, BitwiseOr, BitwiseXor, Invert, LeftShift,
RightShift on TF's integer types, broadcasting like the other binary ops.

Shifts follow TF's CPU kernels (cwise_ops.h left_shift_op / right_shift_op): the shift
amount is clamped to [0, bits - 1] (so shifting by the width or more, or by a negative
amount, is defined), left shifts work on the unsigned bit pattern, and right shifts are
arithmetic for signed types. None of these ops is differentiable (TF1 declares them
NotDifferentiable).
"""

from __future__ import annotations

import jax.numpy as jnp
from jax import lax

from tensorflux._src.framework import dispatch as _dispatch
from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.registry import OpDef, register
from tensorflux._src.ops.shape_fns import broadcast_binary, unchanged

__all__ = []

_INTS = (_dtypes.int8, _dtypes.int16, _dtypes.int32, _dtypes.int64, _dtypes.uint8,
         _dtypes.uint16, _dtypes.uint32, _dtypes.uint64)


def _clamped(x, y):
    bits = jnp.iinfo(x.dtype).bits
    x, y = jnp.broadcast_arrays(x, y)
    return x, jnp.clip(y, 0, bits - 1).astype(x.dtype)


def _left_shift(x, y):
    x, y = _clamped(x, y)
    return lax.shift_left(x, y)


def _right_shift(x, y):
    x, y = _clamped(x, y)
    signed = jnp.issubdtype(x.dtype, jnp.signedinteger)
    return lax.shift_right_arithmetic(x, y) if signed else lax.shift_right_logical(x, y)


for _name, _lower in (("BitwiseAnd", jnp.bitwise_and), ("BitwiseOr", jnp.bitwise_or),
                      ("BitwiseXor", jnp.bitwise_xor), ("LeftShift", _left_shift),
                      ("RightShift", _right_shift)):
    register(OpDef(_name, inputs=("x: T", "y: T"), outputs=("z: T",), attrs={"T": _INTS},
                   shape=broadcast_binary, lower=_lower, not_differentiable=True))
register(OpDef("Invert", inputs=("x: T",), outputs=("y: T",), attrs={"T": _INTS},
               shape=unchanged, lower=jnp.invert, not_differentiable=True))


def bitwise_and(x, y, name=None):
    """x & y elementwise, with broadcasting."""
    return apply_op("BitwiseAnd", name=name, x=x, y=y)


def bitwise_or(x, y, name=None):
    """x | y elementwise, with broadcasting."""
    return apply_op("BitwiseOr", name=name, x=x, y=y)


def bitwise_xor(x, y, name=None):
    """x ^ y elementwise, with broadcasting."""
    return apply_op("BitwiseXor", name=name, x=x, y=y)


def invert(x, name=None):
    """~x: every bit flipped."""
    return apply_op("Invert", name=name, x=x)


def left_shift(x, y, name=None):
    """x << y, the shift amount clamped to [0, bits - 1] as TF's CPU kernel does."""
    return apply_op("LeftShift", name=name, x=x, y=y)


def right_shift(x, y, name=None):
    """x >> y (arithmetic for signed types), the shift amount clamped to [0, bits - 1]."""
    return apply_op("RightShift", name=name, x=x, y=y)


# RaggedTensor (and other composite) arguments dispatch to registered handlers
# (framework/dispatch.py; TF's ragged_dispatch list).
_dispatch.add_dispatch_support_to(globals(), [
    "bitwise_and", "bitwise_or", "bitwise_xor", "invert", "left_shift", "right_shift",
])
