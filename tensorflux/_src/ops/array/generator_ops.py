"""Tensors made from a shape: fill, zeros, ones, zeros_like, ones_like.

The shape decides the output shape, so it must be known when XLA
compiles: a constant, or computed from constants and `tf.shape()` of any tensor. Small
constant results are folded into the graph as TF does (`tf.zeros([2, 3])` is a Const).
"""

from __future__ import annotations

import builtins

import jax.numpy as jnp
import numpy as np

from tensorflux._src.framework import dispatch as _dispatch
from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.operation import Tensor
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.ops.array import array_ops
from tensorflux._src.ops.constant import constant
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.op_helpers import ANY, kernel_error, shape_arg, static_input, with_rank
from tensorflux._src.ops.registry import OpDef, register
from tensorflux._src.ops.shape_fns import static_shape_from_tensor, static_value, unchanged

__all__ = ["fill", "ones", "ones_like", "zeros", "zeros_like"]


# -- Fill -----------------------------------------------------------------------------------
def _fill_shape(op):
    dims_t, value_t = op.inputs
    with_rank(dims_t.shape, 1)
    with_rank(value_t.shape, 0)
    dims = static_value(dims_t)
    if dims is not None and (dims < 0).any():
        raise ValueError("Fill dimensions must be >= 0")
    return static_shape_from_tensor(dims_t)


def _fill_lower(dims, value):
    shape = [int(d) for d in static_input(dims, "Fill", "dims").reshape(-1)]
    if any(d < 0 for d in shape):
        raise kernel_error("Fill dimensions must be >= 0")
    return jnp.full(shape, value)  # the value may be computed at run time


register(OpDef("Fill", inputs=("dims: index_type", "value: T"), outputs=("output: T",),
               attrs={"T": _dtypes.ALL, "index_type": _dtypes.INDEX}, shape=_fill_shape,
               lower=_fill_lower, strings_by_rank=True))  # gradient: array_grads.py


def fill(dims, value, name=None):
    """A tensor of shape `dims` with every element equal to the scalar `value`."""
    return apply_op("Fill", name=name, dims=shape_arg(dims), value=value)


# -- zeros / ones ---------------------------------------------------------------------------
def _constant_filled(fill_value, shape, dtype, name, default_name):
    dtype = _dtypes.as_dtype(dtype).base_dtype
    with _graph.name_scope(name, default_name, [shape]) as scope:
        value = {_dtypes.bool: bool(fill_value), _dtypes.string: ""}.get(dtype, fill_value)
        if isinstance(shape, (list, tuple)) and any(isinstance(d, Tensor) for d in shape):
            shape = convert_to_tensor(shape, dtype=_dtypes.int32, name="shape_as_tensor")
        if not isinstance(shape, Tensor):
            shape = shape_arg(shape)
            try:
                # A small result is a constant; a big one is a Fill, which keeps the
                # graph small (as TF does at 1000 elements).
                if np.prod(shape) < 1000:
                    return constant(value, shape=shape, dtype=dtype, name=scope)
            except (TypeError, ValueError):
                pass  # shape holds tensors: pack it below
            shape = convert_to_tensor(shape, dtype=_dtypes.int32 if _fits_int32(shape)
                                      else _dtypes.int64, name="shape_as_tensor")
        if shape.shape.ndims == 0:
            shape = array_ops.reshape(shape, [-1])  # a scalar shape means a vector of that length
        return fill(shape, constant(value, dtype=dtype), name=scope)


def _fits_int32(shape):
    try:
        return all(builtins.abs(int(d)) < 2 ** 31 for d in np.reshape(shape, -1))
    except TypeError:
        return True  # holds tensors: autopacked as int32, as TF does


def zeros(shape, dtype=_dtypes.float32, name=None):
    """A tensor of `shape` filled with zeros (False for bool)."""
    return _constant_filled(0, shape, dtype, name, "zeros")


def ones(shape, dtype=_dtypes.float32, name=None):
    """A tensor of `shape` filled with ones (True for bool)."""
    return _constant_filled(1, shape, dtype, name, "ones")


register(OpDef("ZerosLike", inputs=("x: T",), outputs=("y: T",), attrs={"T": ANY},
               shape=unchanged, lower=jnp.zeros_like, not_differentiable=True))
register(OpDef("OnesLike", inputs=("x: T",), outputs=("y: T",), attrs={"T": ANY},
               shape=unchanged, lower=jnp.ones_like, not_differentiable=True))


def _filled_like(op_type, fill_fn, tensor, dtype, name, default_name, optimize):
    with _graph.name_scope(name, default_name, [tensor]) as scope:
        tensor = convert_to_tensor(tensor, name="tensor")
        dtype = tensor.dtype.base_dtype if dtype is None else _dtypes.as_dtype(dtype).base_dtype
        if optimize and tensor.shape.is_fully_defined():
            # Known shape: the result doesn't depend on the tensor's value at all.
            return fill_fn(tensor.shape.as_list(), dtype=dtype, name=scope)
        if dtype != tensor.dtype.base_dtype:
            out = fill_fn(array_ops.shape(tensor), dtype=dtype, name=scope)
            out.set_shape(tensor.shape)
            return out
        return apply_op(op_type, name=scope, x=tensor)


def zeros_like(tensor, dtype=None, name=None, optimize=True):
    """Zeros with the shape of `tensor` (and its dtype unless `dtype` is given)."""
    return _filled_like("ZerosLike", zeros, tensor, dtype, name, "zeros_like", optimize)


def ones_like(tensor, dtype=None, name=None, optimize=True):
    """Ones with the shape of `tensor` (and its dtype unless `dtype` is given)."""
    return _filled_like("OnesLike", ones, tensor, dtype, name, "ones_like", optimize)


# RaggedTensor (and other composite) arguments dispatch to registered handlers
# (framework/dispatch.py; TF's ragged_dispatch list).
_dispatch.add_dispatch_support_to(globals(), [
    "zeros_like", "ones_like",
])
