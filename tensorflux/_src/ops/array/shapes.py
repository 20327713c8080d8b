"""Shape utilities: shape_n, broadcast_dynamic_shape / broadcast_static_shape,
ensure_shape, bitcast, guarantee_const.

Shapes are static inside XLA, so ShapeN and EnsureShape know their input shapes when a
cluster is traced: ShapeN lowers to constants, and EnsureShape's run-time check (TF's
"Shape of tensor x [3] is not compatible with expected shape [3,3].") is made then.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from tensorflux._src.compiler import effects
from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework.tensor_shape import TensorShape, as_shape, unknown_shape
from tensorflux._src.ops.index_checks import is_traced
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.op_helpers import ANY, dims_str, kernel_error, merge_shapes, with_rank
from tensorflux._src.ops.registry import OpDef, REQUIRED, register
from tensorflux._src.ops.shape_fns import unchanged

__all__ = ["bitcast", "broadcast_dynamic_shape", "broadcast_static_shape", "ensure_shape",
           "guarantee_const", "shape_n"]

_I = _dtypes.INDEX


# -- ShapeN ---------------------------------------------------------------------------------
register(OpDef(
    "ShapeN", inputs=("input: N * T",), outputs=("output: N * out_type",),
    attrs={"T": _dtypes.ALL, "out_type": _I},
    shape=lambda op: [TensorShape([t.shape.ndims]) for t in op.inputs],
    lower=lambda *xs, out_type: [np.array(x.shape, out_type.as_numpy_dtype) for x in xs],
    not_differentiable=True))


def shape_n(input, out_type=_dtypes.int32, name=None):  # noqa: A002
    """The shapes of a list of tensors, as 1-D tensors of `out_type`."""
    return apply_op("ShapeN", name=name, input=list(input), out_type=out_type)


# -- ConcatOffset (ConcatV2's gradient in graphs TensorFlow wrote) ----------------------------
def _concat_offset_lower(concat_dim, *shapes):
    # Offsets of each input along concat_dim in the concatenation; 0 on other dims.
    axis = int(np.asarray(concat_dim))
    rank = shapes[0].shape[0]
    if not -rank <= axis < rank:  # TF's kernel: a negative axis counts from the end
        raise kernel_error(f"Concat dim is out of range: {axis} vs. {rank}")
    axis %= rank
    for i, s in enumerate(shapes[1:], 1):
        if s.shape[0] != rank:
            raise kernel_error(f"input {i} should contain {rank} elements, but got "
                               f"{s.shape[0]}")
    sizes = jnp.stack([s[axis] for s in shapes])
    starts = jnp.cumsum(sizes) - sizes
    return [jnp.zeros(rank, s.dtype).at[axis].set(start.astype(s.dtype))
            for s, start in zip(shapes, starts)]


register(OpDef(
    "ConcatOffset", inputs=("concat_dim: int32", "shape: N * shape_type"),
    outputs=("offset: N * shape_type",), attrs={"shape_type": (_dtypes.int32, _dtypes.int64)},
    shape=lambda op: [with_rank(t.shape, 1) for t in op.inputs[1:]],
    lower=_concat_offset_lower, not_differentiable=True,
    type_defaults={"shape_type": _dtypes.int32}))


# -- BroadcastArgs / broadcast_static_shape --------------------------------------------------
def _broadcast_args_shape(op):
    x, y = (with_rank(t.shape, 1) for t in op.inputs)
    nx, ny = x.dims[0].value, y.dims[0].value
    return TensorShape([None if nx is None or ny is None else max(nx, ny)])


def _broadcast_args_lower(s0, s1):
    if not (is_traced(s0) or is_traced(s1)):
        try:
            return np.array(np.broadcast_shapes(tuple(s0), tuple(s1)), s0.dtype)
        except ValueError:
            raise kernel_error(f"Incompatible shapes: {dims_str(s0)} vs. "
                               f"{dims_str(s1)}") from None
    n = max(s0.shape[0], s1.shape[0])
    a = jnp.concatenate([jnp.ones(n - s0.shape[0], s0.dtype), s0])
    b = jnp.concatenate([jnp.ones(n - s1.shape[0], s1.dtype), s1])
    effects.check(jnp.all((a == b) | (a == 1) | (b == 1)),
                  lambda x, y: f"Incompatible shapes: {dims_str(x)} vs. {dims_str(y)}",
                  data=(s0, s1))
    return jnp.where(a == 1, b, a)


register(OpDef(
    "BroadcastArgs", inputs=("s0: T", "s1: T"), outputs=("r0: T",), attrs={"T": _I},
    shape=_broadcast_args_shape, lower=_broadcast_args_lower, not_differentiable=True,
    type_defaults={"T": _dtypes.int32}))


def broadcast_dynamic_shape(shape_x, shape_y):
    """The shape (a 1-D tensor) of broadcasting tensors of shapes shape_x and shape_y."""
    return apply_op("BroadcastArgs", s0=shape_x, s1=shape_y)


def broadcast_static_shape(shape_x, shape_y):
    """The TensorShape of broadcasting tensors of shapes shape_x and shape_y (TF's
    common_shapes.broadcast_shape: an unknown dim against 1 stays unknown)."""
    shape_x, shape_y = as_shape(shape_x), as_shape(shape_y)
    if shape_x.ndims is None or shape_y.ndims is None:
        return unknown_shape()
    dx, dy = shape_x.as_list(), shape_y.as_list()
    n = max(len(dx), len(dy))
    dx, dy = [1] * (n - len(dx)) + dx, [1] * (n - len(dy)) + dy
    out = []
    for x, y in zip(dx, dy):
        if x is None or y is None:
            out.append(x if x is not None and x > 1 else y if y is not None and y > 1
                       else None)
        elif x == 1:
            out.append(y)
        elif y == 1 or x == y:
            out.append(x)
        else:
            raise ValueError(f"Incompatible shapes for broadcasting: {shape_x} and {shape_y}")
    return TensorShape(out)


# -- EnsureShape ----------------------------------------------------------------------------
def _ensure_shape_shape(op):
    desired = op.get_attr("shape")
    x = op.inputs[0].shape
    if desired.ndims is not None:
        x = with_rank(x, desired.ndims)
    return merge_shapes(desired, x)


def _input_name(tensor):
    """How a NodeDef names the input: 'x' for output 0, 'x:1' otherwise."""
    return tensor.op.name if tensor.value_index == 0 else tensor.name


def _ensure_shape_lower(op, input):  # noqa: A002
    desired = op.get_attr("shape")
    if not desired.is_compatible_with(TensorShape(list(np.shape(input)))):
        raise kernel_error(f"Shape of tensor {_input_name(op.inputs[0])} "
                           f"{dims_str(np.shape(input))} is not compatible with expected "
                           f"shape {desired._bracket_str()}.")
    return input


def _make_ensure_shape_lower():
    # The lowering needs the op (its input's name for the message): the current op is
    # what effects records for each lowering.
    def lower(input):  # noqa: A002
        return _ensure_shape_lower(effects.current_op(), input)
    return lower


register(OpDef(
    "EnsureShape", inputs=("input: T",), outputs=("output: T",),
    attrs={"T": _dtypes.ALL, "shape": REQUIRED}, shape=_ensure_shape_shape,
    lower=_make_ensure_shape_lower(), grad=lambda op, dy: [dy]))


def ensure_shape(x, shape, name=None):
    """`x`, with its static shape refined by `shape`; fails at run time when x's shape is
    not compatible with `shape`."""
    return apply_op("EnsureShape", name=name, input=x, shape=as_shape(shape))


# -- Bitcast --------------------------------------------------------------------------------
_BITCAST_TYPES = (_dtypes.bfloat16, _dtypes.float16, _dtypes.float32, _dtypes.float64,
                  _dtypes.int64, _dtypes.int32, _dtypes.uint8, _dtypes.uint16, _dtypes.uint32,
                  _dtypes.uint64, _dtypes.int8, _dtypes.int16) + _dtypes.COMPLEX


def _bitcast_shape(op):
    x = op.inputs[0].shape
    if x.ndims is None:
        return unknown_shape()
    n_in, n_out = op.get_attr("T").size, op.get_attr("type").size
    if n_in == n_out:
        return x
    if n_in < n_out:
        if x.ndims < 1:
            raise ValueError(f"Shape must be at least rank 1 but is rank {x.ndims}")
        ratio, last = n_out // n_in, x.dims[-1].value
        if last is not None and last != ratio:
            raise ValueError(f"Cannot bitcast due to shape. {last} does not match {ratio}")
        return TensorShape(x.dims[:-1])
    return x.concatenate([n_in // n_out])


def _to_bytes(x):
    """[...] of any type -> [..., itemsize] uint8 (complex as its real, imag parts)."""
    if jnp.issubdtype(x.dtype, jnp.complexfloating):
        parts = jnp.stack([jnp.real(x), jnp.imag(x)], axis=-1)
        raw = _to_bytes(parts)
        return jnp.reshape(raw, raw.shape[:-2] + (-1,))
    if x.dtype.itemsize == 1:
        return jax.lax.bitcast_convert_type(x, jnp.uint8)[..., None]
    return jax.lax.bitcast_convert_type(x, jnp.uint8)


def _from_bytes(raw, dtype):
    """[..., itemsize] uint8 -> [...] of `dtype`."""
    dtype = np.dtype(dtype)
    if np.issubdtype(dtype, np.complexfloating):
        part = np.float32 if dtype == np.complex64 else np.float64
        pairs = _from_bytes(jnp.reshape(raw, raw.shape[:-1] + (2, -1)), part)
        return jax.lax.complex(pairs[..., 0], pairs[..., 1])
    if dtype.itemsize == 1:
        return jax.lax.bitcast_convert_type(raw[..., 0], dtype)
    return jax.lax.bitcast_convert_type(raw, dtype)


def _bitcast_lower(input, T, type):  # noqa: A002
    # Through bytes, so every pair of sizes (and complex types, which XLA's bitcast does
    # not take) follows TF's memcpy semantics on a little-endian machine.
    n_in, n_out = T.size, type.size
    raw = _to_bytes(jnp.asarray(input))  # [..., n_in]
    if n_in < n_out:
        if input.ndim < 1 or input.shape[-1] != n_out // n_in:
            raise kernel_error(f"Cannot bitcast from {T.name} to {type.name}: shape "
                               f"{dims_str(input.shape)}")
        raw = jnp.reshape(raw, raw.shape[:-2] + (n_out,))
    elif n_in > n_out:
        raw = jnp.reshape(raw, raw.shape[:-1] + (n_in // n_out, n_out))
    return _from_bytes(raw, type.as_numpy_dtype)


register(OpDef(
    "Bitcast", inputs=("input: T",), outputs=("output: type",),
    attrs={"T": _BITCAST_TYPES, "type": _BITCAST_TYPES}, shape=_bitcast_shape,
    lower=_bitcast_lower))


def bitcast(input, type, name=None):  # noqa: A002
    """Reinterprets the bytes of `input` as `type` (no copy of values, as in C's memcpy).

    Same element size: same shape. A bigger output type consumes the last dimension
    (which must equal the size ratio); a smaller one adds a last dimension of that ratio.
    """
    return apply_op("Bitcast", name=name, input=input, type=_dtypes.as_dtype(type))


# -- GuaranteeConst -------------------------------------------------------------------------
register(OpDef(
    "GuaranteeConst", inputs=("input: T",), outputs=("output: T",), attrs={"T": ANY},
    shape=unchanged, lower=lambda input: input))


def guarantee_const(input, name=None):  # noqa: A002
    """An identity that promises its input does not change between runs (a TPU inference
    hint in TF); as in TF it has no gradient."""
    return apply_op("GuaranteeConst", name=name, input=input)
