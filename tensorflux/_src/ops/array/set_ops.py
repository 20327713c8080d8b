"""Set ops over the last dimension (`tf.sets`): SetSize, DenseToDenseSetOperation,
DenseToSparseSetOperation and SparseToSparseSetOperation, TF's op types and signatures.

Each "set" is the distinct values along the last dimension of one group (an index into
the other dimensions). Results are SparseTensors whose groups hold their values in
ascending order (bytes order for strings) at positions 0, 1, ..., the last dense
dimension being the largest result set; groups whose result is empty have no entries.
Output sizes depend on the data, so these are host records (NumPy/Python kernels), and
none is differentiable (TF1 declares them NotDifferentiable).

Sparse inputs are checked as TF's kernels do: rank >= 2, and with `validate_indices`
indices in bounds, in row-major order and unique. Without it, values are grouped by
their group index wherever they appear.
"""

from __future__ import annotations

import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework.sparse_tensor import SparseTensor, SparseTensorValue
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.framework.tensor_shape import TensorShape, unknown_shape
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.op_helpers import kernel_error, merge_shapes, with_rank
from tensorflux._src.ops.registry import OpDef, REQUIRED, register

__all__ = []

_VALID_DTYPES = (_dtypes.int8, _dtypes.int16, _dtypes.int32, _dtypes.int64, _dtypes.uint8,
                 _dtypes.uint16, _dtypes.string)
_OPERATIONS = ("a-b", "b-a", "intersection", "union")


# -- kernels ----------------------------------------------------------------------------------
def _join(values):
    return ",".join(str(int(v)) for v in values)


def _check_rank(shape):
    if len(shape) < 2:
        raise kernel_error(f"Invalid rank {len(shape)}.")


def _sparse_groups(indices, values, shape, validate_indices):
    """{group index tuple: set of values} of a sparse input, after TF's checks."""
    indices, shape = np.asarray(indices), np.asarray(shape)
    if shape.ndim != 1:
        raise kernel_error("Shape must be a 1D tensor.")
    if indices.ndim != 2:
        raise kernel_error(f"indices must be a matrix, but got: [{_join(indices.shape)}]")
    if np.ndim(values) != 1:
        raise kernel_error(f"vals must be a vec, but got: [{_join(np.shape(values))}]")
    if indices.shape[0] != len(values):
        raise kernel_error(f"indices and values rows (indexing dimension) must match. "
                           f"(indices = {indices.shape[0]}, values = {len(values)})")
    _check_rank(shape)
    if indices.shape[1] != len(shape):
        raise kernel_error(f"Index and shape dimensions must match. (indices = "
                           f"{indices.shape[1]}, shape = {len(shape)})")
    if validate_indices:
        _validate(indices, shape)
    groups = {}
    for index, value in zip(indices, values):
        groups.setdefault(tuple(int(i) for i in index[:-1]), set()).add(value)
    return groups


def _validate(indices, shape):
    """TF's SparseTensor::IndicesValid: in bounds, row-major order, no repeats."""
    previous = None
    for n, index in enumerate(indices):
        where = f"indices[{n}] = [{_join(index)}]"
        if np.any(index < 0) or np.any(index >= shape):
            raise kernel_error(f"{where} is out of bounds: need 0 <= index < [{_join(shape)}]")
        key = tuple(int(i) for i in index)
        if previous is not None:
            if key < previous:
                raise kernel_error(f"{where} is out of order. Many sparse ops require sorted "
                                   f"indices.\n    Use `tf.sparse.reorder` to create a "
                                   f"correctly ordered copy.\n\n")
            if key == previous:
                raise kernel_error(f"{where} is repeated")
        previous = key


def _dense_groups(dense):
    dense = np.asarray(dense)
    _check_rank(dense.shape)
    rows = dense.reshape(int(np.prod(dense.shape[:-1])), dense.shape[-1])
    return {index: set(rows[n]) for n, index in enumerate(np.ndindex(*dense.shape[:-1]))}


def _group_shape(shape1, shape2):
    _check_rank(shape1)
    _check_rank(shape2)
    if tuple(shape1[:-1]) != tuple(shape2[:-1]):
        raise kernel_error(f"Mismatched shapes [{_join(shape1[:-1])}] vs "
                           f"[{_join(shape2[:-1])}]")
    return tuple(int(d) for d in shape1[:-1])


def _apply(operation, a, b):
    if operation == "a-b":
        return a - b
    if operation == "b-a":
        return b - a
    if operation == "intersection":
        return a & b
    return a | b


def _operation(set_operation):
    operation = set_operation.decode() if isinstance(set_operation, bytes) else set_operation
    operation = operation.lower()
    if operation not in _OPERATIONS:
        raise kernel_error(f"Invalid set_operation {operation}.")
    return operation


def _sparse_result(group_shape, groups1, groups2, operation, dtype):
    """The (indices, values, dense_shape) of the per-group results, groups in row-major
    order, each group's values sorted."""
    results = []
    for key in sorted(set(groups1) | set(groups2)):
        if any(k >= d for k, d in zip(key, group_shape)):
            continue  # only reachable without validate_indices
        result = _apply(operation, groups1.get(key, set()), groups2.get(key, set()))
        if result:
            results.append((key, sorted(result)))
    width = max((len(values) for _, values in results), default=0)
    rank = len(group_shape) + 1
    indices = np.array([key + (j,) for key, values in results for j in range(len(values))],
                       np.int64).reshape(-1, rank)
    flat = [v for _, values in results for v in values]
    if dtype == np.object_:
        values = np.empty(len(flat), object)
        values[:] = flat
    else:
        values = np.array(flat, dtype).reshape(-1)
    return indices, values, np.array(group_shape + (width,), np.int64)


def _dense_dense_kernel(set1, set2, set_operation, validate_indices):
    del validate_indices  # no sparse input to validate
    operation = _operation(set_operation)
    set1, set2 = np.asarray(set1), np.asarray(set2)
    group_shape = _group_shape(set1.shape, set2.shape)
    return _sparse_result(group_shape, _dense_groups(set1), _dense_groups(set2), operation,
                          set1.dtype)


def _dense_sparse_kernel(set1, set2_indices, set2_values, set2_shape, set_operation,
                         validate_indices):
    operation = _operation(set_operation)
    set1 = np.asarray(set1)
    groups2 = _sparse_groups(set2_indices, set2_values, set2_shape, validate_indices)
    group_shape = _group_shape(set1.shape, tuple(int(d) for d in set2_shape))
    return _sparse_result(group_shape, _dense_groups(set1), groups2, operation, set1.dtype)


def _sparse_sparse_kernel(set1_indices, set1_values, set1_shape, set2_indices, set2_values,
                          set2_shape, set_operation, validate_indices):
    operation = _operation(set_operation)
    groups1 = _sparse_groups(set1_indices, set1_values, set1_shape, validate_indices)
    groups2 = _sparse_groups(set2_indices, set2_values, set2_shape, validate_indices)
    group_shape = _group_shape(tuple(int(d) for d in set1_shape),
                               tuple(int(d) for d in set2_shape))
    return _sparse_result(group_shape, groups1, groups2, operation,
                          np.asarray(set1_values).dtype)


def _set_size_kernel(set_indices, set_values, set_shape, validate_indices):
    groups = _sparse_groups(set_indices, set_values, set_shape, validate_indices)
    group_shape = tuple(int(d) for d in np.asarray(set_shape)[:-1])
    out = np.zeros(group_shape, np.int32)
    for key, values in groups.items():
        if any(k >= d for k, d in zip(key, group_shape)):
            raise kernel_error(f"Index out of range, [{_join(key)}] vs "
                               f"[{_join(group_shape)}]")
        out[key] = len(values)
    return out


# -- shape functions (TF's set_ops.cc) ---------------------------------------------------------
def _check_sparse(indices, values, shape):
    """TF's ValidateSparseTensor; returns the rank dimension of the sparse input."""
    indices = with_rank(indices.shape, 2)
    values = with_rank(values.shape, 1)
    shape = with_rank(shape.shape, 1)
    n, v = indices[0].value, values[0].value
    if n is not None and v is not None and n != v:
        raise ValueError(f"Number of elements in index ({n}) and values ({v}) do not match.")
    r, s = indices[1].value, shape[0].value
    if r is not None and s is not None and r != s:
        raise ValueError(f"Index rank ({r}) and shape rank ({s}) do not match.")
    return s if s is not None else r


def _at_least_2(shape):
    if shape.ndims is not None and shape.ndims < 2:
        raise ValueError(f"Shape must be at least rank 2 but is rank {shape.ndims}")


def _result_shapes(rank):
    return [TensorShape([None, rank]), TensorShape([None]), TensorShape([rank])]


def _dense_dense_shape(op):
    a, b = op.inputs[0].shape, op.inputs[1].shape
    _at_least_2(a)
    if a.ndims is not None:
        b = with_rank(b, a.ndims)
        merge_shapes(TensorShape(a.dims[:-1]), TensorShape(b.dims[:-1]))
        return _result_shapes(a.ndims)
    _at_least_2(b)
    return _result_shapes(b.ndims)


def _equal_rank(rank, expected):
    if rank is not None and rank != expected:
        raise ValueError(f"Dimension must be {expected} but is {rank}")


def _dense_sparse_shape(op):
    rank = _check_sparse(*op.inputs[1:4])
    a = op.inputs[0].shape
    _at_least_2(a)
    if a.ndims is not None:
        _equal_rank(rank, a.ndims)
        return _result_shapes(a.ndims)
    return _result_shapes(rank)


def _sparse_sparse_shape(op):
    rank1 = _check_sparse(*op.inputs[0:3])
    rank2 = _check_sparse(*op.inputs[3:6])
    for i, rank in enumerate((rank1, rank2)):
        if rank is not None and rank < 2:
            raise ValueError(f"Input {i}, expected rank >= 2, got {rank}.")
    if rank1 is not None:
        _equal_rank(rank2, rank1)
        return _result_shapes(rank1)
    return _result_shapes(rank2)


_RESULT = ("result_indices: int64", "result_values: T", "result_shape: int64")
_SET_ATTRS = {"T": _VALID_DTYPES, "set_operation": REQUIRED, "validate_indices": True}
register(OpDef("SetSize", inputs=("set_indices: int64", "set_values: T", "set_shape: int64"),
               outputs=("size: int32",), attrs={"T": _VALID_DTYPES, "validate_indices": True},
               shape=lambda op: unknown_shape(), host=_set_size_kernel,
               not_differentiable=True))
register(OpDef("DenseToDenseSetOperation", inputs=("set1: T", "set2: T"), outputs=_RESULT,
               attrs=dict(_SET_ATTRS), shape=_dense_dense_shape, host=_dense_dense_kernel,
               not_differentiable=True))
register(OpDef("DenseToSparseSetOperation",
               inputs=("set1: T", "set2_indices: int64", "set2_values: T", "set2_shape: int64"),
               outputs=_RESULT, attrs=dict(_SET_ATTRS), shape=_dense_sparse_shape,
               host=_dense_sparse_kernel, not_differentiable=True))
register(OpDef("SparseToSparseSetOperation",
               inputs=("set1_indices: int64", "set1_values: T", "set1_shape: int64",
                       "set2_indices: int64", "set2_values: T", "set2_shape: int64"),
               outputs=_RESULT, attrs=dict(_SET_ATTRS), shape=_sparse_sparse_shape,
               host=_sparse_sparse_kernel, not_differentiable=True))


# -- public API -------------------------------------------------------------------------------
def _tensor_or_sparse(value, name):
    """TF's convert_to_tensor_or_sparse_tensor."""
    if isinstance(value, SparseTensor):
        return value
    if isinstance(value, SparseTensorValue):
        return SparseTensor.from_value(value)
    return convert_to_tensor(value, name=name)


def set_size(a, validate_indices=True):
    """The number of distinct values along the last dimension of the SparseTensor `a`:
    an int32 tensor of `a`'s other dimensions."""
    a = _tensor_or_sparse(a, "a")
    if not isinstance(a, SparseTensor):
        raise TypeError(f"Expected `SparseTensor`, got {a}.")
    if a.values.dtype.base_dtype not in _VALID_DTYPES:
        raise TypeError(f"Invalid dtype {a.values.dtype}.")
    return apply_op("SetSize", set_indices=a.indices, set_values=a.values,
                    set_shape=a.dense_shape, validate_indices=validate_indices)


def _convert_pair(a, b):
    """(a, b, flipped): the ops take dense-sparse, not sparse-dense, so swap that case."""
    a = _tensor_or_sparse(a, "a")
    if a.dtype.base_dtype not in _VALID_DTYPES:
        raise TypeError(f"'a' invalid dtype {a.dtype}.")
    b = _tensor_or_sparse(b, "b")
    if b.dtype.base_dtype != a.dtype.base_dtype:
        raise TypeError(f"Types don't match, {a.dtype} vs {b.dtype}.")
    if isinstance(a, SparseTensor) and not isinstance(b, SparseTensor):
        return b, a, True
    return a, b, False


def _set_operation(a, b, operation, validate_indices):
    common = {"set_operation": operation, "validate_indices": validate_indices}
    if isinstance(a, SparseTensor):
        if not isinstance(b, SparseTensor):
            raise ValueError("Sparse,Dense is not supported, but Dense,Sparse is. Please flip "
                             "the order of your inputs.")
        outs = apply_op("SparseToSparseSetOperation", set1_indices=a.indices,
                        set1_values=a.values, set1_shape=a.dense_shape,
                        set2_indices=b.indices, set2_values=b.values,
                        set2_shape=b.dense_shape, **common)
    elif isinstance(b, SparseTensor):
        outs = apply_op("DenseToSparseSetOperation", set1=a, set2_indices=b.indices,
                        set2_values=b.values, set2_shape=b.dense_shape, **common)
    else:
        outs = apply_op("DenseToDenseSetOperation", set1=a, set2=b, **common)
    return SparseTensor(*outs)


def set_intersection(a, b, validate_indices=True):
    """Per group of the last dimension, the values in both `a` and `b` (dense or sparse)."""
    a, b, _ = _convert_pair(a, b)
    return _set_operation(a, b, "intersection", validate_indices)


def set_difference(a, b, aminusb=True, validate_indices=True):
    """Per group of the last dimension, the values of `a` not in `b` (`aminusb`), or of
    `b` not in `a`."""
    a, b, flipped = _convert_pair(a, b)
    if flipped:
        aminusb = not aminusb
    return _set_operation(a, b, "a-b" if aminusb else "b-a", validate_indices)


def set_union(a, b, validate_indices=True):
    """Per group of the last dimension, the values in `a` or `b`."""
    a, b, _ = _convert_pair(a, b)
    return _set_operation(a, b, "union", validate_indices)
