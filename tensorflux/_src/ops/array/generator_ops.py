"""Tensors made from a shape or a range: fill, zeros, ones, *_like, range, linspace, eye.

The shape (or range bounds) decides the output shape, so it must be known when XLA
compiles: a constant, or computed from constants and `tf.shape()` of any tensor. Small
constant results are folded into the graph as TF does (`tf.zeros([2, 3])` is a Const).
"""

from __future__ import annotations

import builtins

import jax.numpy as jnp
import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.operation import Tensor
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.framework.tensor_shape import TensorShape, unknown_shape
from tensorflux._src.ops.array.array_grads import fill_grad as _fill_grad
from tensorflux._src.ops.array.array_ops import broadcast_to
from tensorflux._src.ops.op_helpers import ANY, kernel_error, shape_arg, static_input, with_rank
from tensorflux._src.ops.constant import constant
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.registry import OpDef, register
from tensorflux._src.ops.shape_fns import static_shape_from_tensor, static_value, unchanged

__all__ = ["eye", "fill", "lin_space", "linspace", "ones", "ones_like", "range", "zeros",
           "zeros_like"]


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
               lower=_fill_lower, grad=_fill_grad, strings_by_rank=True))


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
            from tensorflux._src.ops.array.array_ops import reshape
            shape = reshape(shape, [-1])  # a scalar shape means a vector of that length
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
            from tensorflux._src.ops.array.array_ops import shape as shape_op
            out = fill_fn(shape_op(tensor), dtype=dtype, name=scope)
            out.set_shape(tensor.shape)
            return out
        return apply_op(op_type, name=scope, x=tensor)


def zeros_like(tensor, dtype=None, name=None, optimize=True):
    """Zeros with the shape of `tensor` (and its dtype unless `dtype` is given)."""
    return _filled_like("ZerosLike", zeros, tensor, dtype, name, "zeros_like", optimize)


def ones_like(tensor, dtype=None, name=None, optimize=True):
    """Ones with the shape of `tensor` (and its dtype unless `dtype` is given)."""
    return _filled_like("OnesLike", ones, tensor, dtype, name, "ones_like", optimize)


# -- Range / LinSpace -----------------------------------------------------------------------
def _range_size(start, limit, delta, fail):
    if delta == 0:
        raise fail("Requires delta != 0")
    if start > limit and delta > 0:
        raise fail(f"Requires start <= limit when delta > 0: {start}/{limit}")
    if start < limit and delta < 0:
        raise fail(f"Requires start >= limit when delta < 0: {start}/{limit}")
    if isinstance(start, (int, np.integer)):
        start, limit, delta = int(start), int(limit), int(delta)
        return (builtins.abs(limit - start) + builtins.abs(delta) - 1) // builtins.abs(delta)
    return int(np.ceil(np.abs((limit - start) / delta)))  # in the inputs' precision, as TF


def _scalars(op):
    for t, what in zip(op.inputs, ("start", "limit", "delta")):
        if t.shape.ndims not in (None, 0):
            raise ValueError(f"Shape must be rank 0 but is rank {t.shape.ndims} for {what}")
    return [static_value(t) for t in op.inputs]


def _range_shape(op):
    values = _scalars(op)
    if any(v is None for v in values):
        return unknown_shape(1)
    return TensorShape([_range_size(*(v[()] for v in values), ValueError)])


def _range_lower(start, limit, delta):
    start, limit, delta = (static_input(v, "Range", name)[()]
                           for v, name in ((start, "start"), (limit, "limit"), (delta, "delta")))
    n = _range_size(start, limit, delta, kernel_error)
    # start + i * delta in the input dtype (TF1's CPU kernel accumulated `value += delta`;
    # this is exact for ints and at least as accurate for floats).
    return start + jnp.arange(n) * delta


register(OpDef("Range", inputs=("start: Tidx", "limit: Tidx", "delta: Tidx"),
               outputs=("output: Tidx",),
               attrs={"Tidx": (_dtypes.bfloat16, _dtypes.float32, _dtypes.float64,
                               _dtypes.int32, _dtypes.int64)},
               shape=_range_shape, lower=_range_lower, not_differentiable=True))

_RANGE_DTYPES = [_dtypes.int32, _dtypes.int64, _dtypes.float32, _dtypes.float64]


def range(start, limit=None, delta=1, dtype=None, name="range"):  # noqa: A001
    """The sequence start, start + delta, ... up to (not including) limit.

    `range(n)` counts from 0. Without `dtype`, the widest type of the three arguments
    (int32 < int64 < float32 < float64) is used for all of them, as in TF.
    """
    if limit is None:
        start, limit = 0, start
    with _graph.name_scope(name, "Range", [start, limit, delta]) as scope:
        args = [convert_to_tensor(v, dtype=dtype, name=n)
                for v, n in ((start, "start"), (limit, "limit"), (delta, "delta"))]
        if dtype is None:
            for a in args:
                if a.dtype.base_dtype not in _RANGE_DTYPES:
                    raise TypeError(f"range arguments must be int32, int64, float32 or "
                                    f"float64, got {a.dtype.base_dtype.name}")
            widest = max((a.dtype.base_dtype for a in args), key=_RANGE_DTYPES.index)
            from tensorflux._src.ops.math.math_ops import cast
            args = [cast(a, widest) for a in args]
        return apply_op("Range", name=scope, start=args[0], limit=args[1], delta=args[2])


def _linspace_shape(op):
    for t in op.inputs:
        with_rank(t.shape, 0)
    num = static_value(op.inputs[2])
    if num is None:
        return unknown_shape(1)
    if num <= 0:
        raise ValueError(f"Requires num > 0: {int(num)}")
    return TensorShape([int(num)])


def _linspace_lower(start, stop, num):
    n = int(static_input(num, "LinSpace", "num"))
    if n <= 0:
        raise kernel_error(f"Requires num > 0: {n}")
    if n == 1:
        return jnp.reshape(start, (1,))
    step = (stop - start) / (n - 1)
    values = start + jnp.arange(n, dtype=jnp.result_type(start)) * step
    return values.at[-1].set(stop)  # the last value is exactly `stop`, as in TF


register(OpDef("LinSpace", inputs=("start: T", "stop: T", "num: Tidx"), outputs=("output: T",),
               attrs={"T": (_dtypes.bfloat16, _dtypes.float32, _dtypes.float64),
                      "Tidx": _dtypes.INDEX},
               shape=_linspace_shape, lower=_linspace_lower, not_differentiable=True))


def lin_space(start, stop, num, name=None):
    """`num` evenly spaced values from `start` to `stop`, both included."""
    return apply_op("LinSpace", name=name, start=start, stop=stop, num=num)


linspace = lin_space


# -- eye ------------------------------------------------------------------------------------
def eye(num_rows, num_columns=None, batch_shape=None, dtype=_dtypes.float32, name=None):
    """An identity matrix (or a batch of them) of shape batch_shape + [rows, columns].

    Composed as one_hot(range(rows), columns): row i has its one at column i, and rows
    past the last column are all zero, as a rectangular identity must be.
    """
    from tensorflux._src.ops.array.gather_ops import one_hot
    with _graph.name_scope(name, "eye", [num_rows, num_columns, batch_shape]):
        num_columns = num_rows if num_columns is None else num_columns
        for n in (num_rows, num_columns):
            if not isinstance(n, Tensor) and (not isinstance(n, (int, np.integer))
                                              or isinstance(n, bool)):
                raise TypeError("num_rows and num_columns must be positive integer values.")
        dtype = _dtypes.as_dtype(dtype).base_dtype
        np_dtype = dtype.as_numpy_dtype
        matrix = one_hot(range(num_rows), num_columns, on_value=constant(np.ones((), np_dtype)),
                         off_value=constant(np.zeros((), np_dtype)))
        if batch_shape is None or (not isinstance(batch_shape, Tensor)
                                   and len(shape_arg(batch_shape)) == 0):
            return matrix
        from tensorflux._src.ops.array.array_ops import concat
        from tensorflux._src.ops.array.array_ops import shape as shape_op
        if isinstance(batch_shape, Tensor):
            full = concat([batch_shape, shape_op(matrix)], 0)
        else:
            full = concat([constant(shape_arg(batch_shape), dtype=_dtypes.int32),
                           shape_op(matrix)], 0)
        return broadcast_to(matrix, full)
