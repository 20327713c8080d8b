"""What the linear-algebra records share: TF's dtype sets, the shape rules of
tensorflow/core/ops/linalg_ops.cc (with their messages), and the run-time input checks
of TF's LinearAlgebraOp kernels.
"""

from __future__ import annotations

import functools

import jax.numpy as jnp
import numpy as np

from tensorflux._src.framework import dtypes as _d
from tensorflux._src.framework.tensor_shape import Dimension, TensorShape, unknown_shape
from tensorflux._src.ops.op_helpers import kernel_error, merge_shapes, with_rank_at_least

# TF's {double, float, half, complex64, complex128}: the set most linalg kernels take.
LINALG_TYPES = (_d.float64, _d.float32, _d.float16, _d.complex64, _d.complex128)
FLOAT_COMPLEX = (_d.float32, _d.float64, _d.complex64, _d.complex128)


def merge_dim(a, b) -> Dimension:
    a = a if isinstance(a, Dimension) else Dimension(a)
    b = b if isinstance(b, Dimension) else Dimension(b)
    if not a.is_compatible_with(b):
        raise ValueError(f"Dimensions must be equal, but are {a.value} and {b.value}")
    return a.merge_with(b)


def batch_square(shape: TensorShape) -> TensorShape:
    """TF's MakeBatchSquareMatrix: rank >= 2 and the last two dimensions merged."""
    shape = with_rank_at_least(shape, 2)
    if shape.ndims is None:
        return unknown_shape()
    d = merge_dim(shape.dims[-2], shape.dims[-1])
    return shape[:-2].concatenate([d, d])


def batch_square_unchanged(op):
    return batch_square(op.inputs[0].shape)


def batch_solve_shape(lhs: TensorShape, rhs: TensorShape, square: bool) -> TensorShape:
    """TF's BatchMatrixSolveShapeFn: [..., M, N] and [..., M, K] give [..., N, K]; the
    batch dimensions must match (TF 1.15 does not broadcast them)."""
    lhs = batch_square(lhs) if square else with_rank_at_least(lhs, 2)
    rhs = with_rank_at_least(rhs, 2)
    if lhs.ndims is None or rhs.ndims is None:
        return unknown_shape()
    batch = merge_shapes(lhs[:-2], rhs[:-2])
    m = merge_dim(lhs.dims[-2], rhs.dims[-2])
    n = lhs.dims[-1]
    if square:
        n = merge_dim(m, n)
    return batch.concatenate([n, rhs.dims[-1]])


# -- run-time checks of TF's LinearAlgebraOp (linalg_ops_common.cc) -----------------------
def check_matrices(*arrays, square=(True,)):
    """Raises TF's InvalidArgumentError for inputs XLA would otherwise reshape silently:
    rank < 2, non-square matrices, outer dimensions that differ."""
    for i, a in enumerate(arrays):
        if np.ndim(a) < 2:
            raise kernel_error(f"Input tensor {i} must have rank >= 2")
    for a, sq in zip(arrays, square):
        if sq and a.shape[-1] != a.shape[-2]:
            raise kernel_error("Input matrix must be square.")
    outer = {tuple(a.shape[:-2]) for a in arrays}
    if len(outer) > 1:
        raise kernel_error("All input tensors must have the same outer dimensions.")


def check_solver(matrix, rhs):
    check_matrices(matrix, rhs, square=(True, False))
    if matrix.shape[-2] != rhs.shape[-2]:
        raise kernel_error("Input matrix and right-hand side must have the same number of "
                           "rows.")


def half_via_float32(fn):
    """XLA's CPU linear-algebra routines have no float16 form; TF's half kernels compute
    in float32 as well (Eigen upcasts), so compute there and round back."""
    @functools.wraps(fn)
    def wrapped(x, *args, **kwargs):
        if x.dtype == np.float16:
            args = [a.astype(np.float32) if getattr(a, "dtype", None) == np.float16 else a
                    for a in args]
            out = fn(x.astype(np.float32), *args, **kwargs)
            if isinstance(out, (tuple, list)):
                return type(out)(o.astype(np.float16) if o.dtype == np.float32 else o
                                 for o in out)
            return out.astype(np.float16)
        return fn(x, *args, **kwargs)
    return wrapped


def adjoint(m):
    return jnp.conj(jnp.swapaxes(m, -1, -2))


def real_dtype(dtype):
    return np.finfo(dtype).dtype
