"""NumPy helpers the sparse family's host kernels and run-time checks share: TF's
SparseTensor index validation (`IndicesValid`) with its messages, row-major ordering and
the shape checks on (indices, values, shape) inputs.
"""

from __future__ import annotations

import numpy as np

from tensorflux._src.ops.op_helpers import dims_str, kernel_error


def join(values) -> str:
    return ",".join(str(int(v)) for v in np.reshape(values, -1))


def shape_str(shape) -> str:
    """TF's TensorShape::DebugString: [2,3] ([] for a scalar)."""
    return dims_str(shape)


def indices_error(indices, shape):
    """TF's SparseTensor::IndicesValid in the standard (row-major) order: the message
    for the first index that is out of bounds, out of order or repeated, else None.
    (TF 1.15's wording: "indices[2] = [1,0] is out of order".)"""
    indices = np.asarray(indices, np.int64).reshape(len(indices), -1)
    shape = np.asarray(shape, np.int64).reshape(-1)
    n = indices.shape[0]
    if n == 0:
        return None
    outside = ((indices < 0) | (indices >= shape)).any(axis=1)
    diff = indices[1:] - indices[:-1]
    nonzero = diff != 0
    has = nonzero.any(axis=1)
    first = np.where(has, nonzero.argmax(axis=1), 0)
    lead = diff[np.arange(n - 1), first]
    decreasing = np.r_[False, has & (lead < 0)]
    repeated = np.r_[False, ~has]
    bad = np.flatnonzero(outside | decreasing | repeated)
    if not bad.size:
        return None
    k = int(bad[0])
    where = f"indices[{k}] = [{join(indices[k])}]"
    if outside[k]:
        return f"{where} is out of bounds: need 0 <= index < [{join(shape)}]"
    if decreasing[k]:
        return f"{where} is out of order"
    return f"{where} is repeated"


def validate_indices(indices, shape):
    message = indices_error(indices, shape)
    if message is not None:
        raise kernel_error(message)


def row_major(indices):
    """The stable permutation putting `indices` rows in row-major order."""
    indices = np.asarray(indices).reshape(len(indices), -1)
    if indices.shape[1] == 0:
        return np.arange(indices.shape[0])
    return np.lexsort(indices.T[::-1])


def check_sparse(indices, values, shape, what=""):
    """The shape checks TF's kernels make on one (indices, values, shape) input."""
    if np.ndim(indices) != 2:
        raise kernel_error(f"Input {what}indices should be a matrix but received shape "
                           f"{shape_str(np.shape(indices))}")
    if np.ndim(values) != 1:
        raise kernel_error(f"Input {what}values should be a vector but received shape "
                           f"{shape_str(np.shape(values))}")
    if np.ndim(shape) != 1:
        raise kernel_error(f"Input {what}shape should be a vector but received shape "
                           f"{shape_str(np.shape(shape))}")
    if np.shape(indices)[0] != np.shape(values)[0]:
        raise kernel_error(f"Expected {np.shape(indices)[0]} {what}values but received "
                           f"{np.shape(values)[0]}")
    if np.shape(indices)[1] != np.shape(shape)[0]:
        raise kernel_error(f"Input {what}indices has {np.shape(indices)[1]} columns but "
                           f"{what}shape has {np.shape(shape)[0]} entries")
