"""TF1's Python compositions over the sparse records (sparse_ops.py): retain,
reset_shape, transpose, merge, to_indicator, mask, from_dense, expand_dims, eye and
sparse_placeholder. They build ordinary ops (gathers, Where, concat, SparseReorder,
SparseToDense), so their gradients are those ops' gradients.
"""

from __future__ import annotations

import numbers

import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.operation import Tensor
from tensorflux._src.framework.sparse_tensor import SparseTensor, SparseTensorValue
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.framework.tensor_shape import TensorShape
from tensorflux._src.ops.array import array_ops as A
from tensorflux._src.ops.array import gather_ops as G
from tensorflux._src.ops.array import generator_ops as GEN
from tensorflux._src.ops.array.host_ops import setdiff1d
from tensorflux._src.ops.array.slicing_ops import slice as tf_slice
from tensorflux._src.ops.constant import constant, placeholder
from tensorflux._src.ops.debug import check_ops
from tensorflux._src.ops.math import math_ops as M
from tensorflux._src.ops.math import reduce_ops as R
from tensorflux._src.ops.shape_fns import static_value
from tensorflux._src.ops.sparse.sparse_ops import (convert_to_sparse_tensor, sparse_reorder,
                                                   sparse_tensor_to_dense)

__all__ = ["from_dense", "sparse_expand_dims", "sparse_eye", "sparse_mask", "sparse_merge",
           "sparse_placeholder", "sparse_reset_shape", "sparse_retain", "sparse_to_indicator",
           "sparse_transpose"]

_I64 = _dtypes.int64


def sparse_retain(sp_input, to_retain):
    """The entries of `sp_input` whose `to_retain` flag (a bool vector) is true."""
    sp_input = convert_to_sparse_tensor(sp_input)
    to_retain = convert_to_tensor(to_retain)
    retain_shape = to_retain.shape.with_rank(1)
    if sp_input.values.shape.ndims is not None:
        sp_input.values.shape[0].merge_with(retain_shape[0])
    where_true = A.reshape(G.where(to_retain), [-1])
    return SparseTensor(G.gather(sp_input.indices, where_true),
                        G.gather(sp_input.values, where_true),
                        A.identity(sp_input.dense_shape))


def sparse_reset_shape(sp_input, new_shape=None):
    """`sp_input` with dense shape `new_shape` (no smaller than the old one), or, without
    it, the tightest shape holding its indices."""
    sp_input = convert_to_sparse_tensor(sp_input)
    in_indices = A.identity(sp_input.indices)
    in_values = A.identity(sp_input.values)
    in_shape = A.identity(sp_input.dense_shape)
    if new_shape is None:
        low = R.reduce_max(in_indices, axis=0)
        shape = M.maximum(constant(0, dtype=_I64), M.add(low, GEN.ones_like(in_shape)))
        return SparseTensor(in_indices, in_values, shape)
    shape = M.cast(convert_to_tensor(new_shape), _I64)
    shape.shape.with_rank(1)
    if shape.shape.ndims is not None:
        shape.shape[0].merge_with(in_shape.shape[0])
    known = static_value(shape)
    if known is not None and sp_input.shape.is_fully_defined():
        old = np.array(sp_input.shape.as_list())
        if not np.all(old <= known):
            # TF's message, with its two shapes in this (swapped) order.
            raise ValueError(f"Requested new_shape should have dimension sizes >= "
                             f"sp_input.shape.  Found new_shape ({old}), sp_input.shape "
                             f"({known}).")
        return SparseTensor(in_indices, in_values, constant(known.astype(np.int64)))
    checks = [check_ops.assert_equal(A.shape(in_shape), A.shape(shape)),
              check_ops.assert_less_equal(in_shape, shape)]
    with _graph.control_dependencies(checks):
        shape = A.identity(shape)
    return SparseTensor(in_indices, in_values, shape)


def sparse_transpose(sp_input, perm=None, name=None):
    """The SparseTensor with dimensions permuted by `perm` (default: reversed), reordered."""
    with _graph.name_scope(name, "SparseTranspose", [sp_input]):
        sp_input = convert_to_sparse_tensor(sp_input)
        if perm is None:
            rank = A.size(sp_input.dense_shape) if sp_input.shape.ndims is None \
                else sp_input.shape.ndims
            perm = (rank - 1) - M.range(0, rank, 1)
        indices = sp_input.indices
        transposed = A.transpose(G.gather(A.transpose(indices), perm))
        perm_value = static_value(convert_to_tensor(perm))
        if perm_value is not None and sp_input.shape.is_fully_defined():
            old = sp_input.shape.as_list()
            shape = constant(np.array([old[p] for p in perm_value.reshape(-1)], np.int64))
        else:
            shape = G.gather(sp_input.dense_shape, perm)
        return sparse_reorder(SparseTensor(transposed, sp_input.values, shape))


def sparse_merge(sp_ids, sp_values, vocab_size, name=None, already_sorted=False):
    """A SparseTensor whose last dimension is indexed by the ids (one SparseTensor of ids
    per new dimension, with `vocab_size` each) and holds `sp_values`' values."""
    if isinstance(sp_ids, (SparseTensor, SparseTensorValue)):
        sp_ids = [sp_ids]
        if not isinstance(vocab_size, (Tensor, numbers.Integral)):
            raise TypeError(f"vocab_size has to be a Tensor or Python int. Found "
                            f"{type(vocab_size)}")
        vocab_size = [vocab_size]
    else:
        if not isinstance(sp_ids, (list, tuple)):
            raise TypeError(f"sp_ids has to be a SparseTensor or list thereof. Found "
                            f"{type(sp_ids)}")
        if not isinstance(vocab_size, (list, tuple)):
            raise TypeError(f"vocab_size has to be a list of Tensors or Python ints. Found "
                            f"{type(vocab_size)}")
        for dim in vocab_size:
            if not isinstance(dim, (Tensor, numbers.Integral)):
                raise TypeError(f"vocab_size has to be a list of Tensors or Python ints. "
                                f"Found {type(dim)}")
    if len(sp_ids) != len(vocab_size):
        raise ValueError("sp_ids and vocab_size have to have equal lengths.")
    with _graph.name_scope(name, "SparseMerge", [sp_ids, sp_values]):
        sp_ids = [convert_to_sparse_tensor(s) for s in sp_ids]
        sp_values = convert_to_sparse_tensor(sp_values)
        ids = []
        for s in sp_ids:
            column = s.values if s.dtype == _I64 else M.cast(s.values, _I64)
            ids.append(A.expand_dims(column, axis=1))
        vocab_size = [M.cast(v, _I64) for v in vocab_size]
        new_indices = A.concat([sp_values.indices[:, :-1]] + ids, 1)
        new_shape = A.concat([sp_values.dense_shape[:-1], A.stack(vocab_size)], 0)
        result = SparseTensor(new_indices, sp_values.values, new_shape)
        if already_sorted:
            return result
        ordered = sparse_reorder(result)
        return SparseTensor(ordered.indices, ordered.values, new_shape)


def sparse_to_indicator(sp_input, vocab_size, name=None):
    """A bool tensor with one more dimension of size `vocab_size`: true at each row's
    ids (the values of the int SparseTensor `sp_input`)."""
    sp_input = convert_to_sparse_tensor(sp_input)
    with _graph.name_scope(name, "SparseToIndicator", [sp_input]) as scope:
        num_entries = A.shape(sp_input.indices)[0]
        new_values = GEN.fill(A.expand_dims(num_entries, 0), True)
        sp_values = SparseTensor(sp_input.indices, new_values, sp_input.dense_shape)
        sp_new = sparse_merge(sp_input, sp_values, vocab_size, scope)
        # Repeated ids give repeated indices: an indicator allows them.
        return sparse_tensor_to_dense(sp_new, default_value=False, validate_indices=False,
                                      name=scope)


def sparse_mask(a, mask_indices, name=None):
    """The IndexedSlices `a` without the slices whose indices are in `mask_indices`."""
    with _graph.name_scope(name, "sparse_mask", [a, mask_indices]) as scope:
        out_indices, to_gather = setdiff1d(a.indices, mask_indices)
        out_values = G.gather(a.values, to_gather, name=scope)
        return type(a)(out_values, out_indices, a.dense_shape)


def from_dense(tensor, name=None):
    """The SparseTensor of the nonzero (non-empty string) entries of `tensor`."""
    with _graph.name_scope(name, "dense_to_sparse"):
        tensor = convert_to_tensor(tensor)
        zero = b"" if tensor.dtype == _dtypes.string else 0
        indices = G.where(M.not_equal(tensor, constant(zero, tensor.dtype)))
        values = G.gather_nd(tensor, indices)
        shape = A.shape(tensor, out_type=_I64)
        return SparseTensor(indices, values, shape)


def sparse_expand_dims(sp_input, axis=None, name=None):
    """`sp_input` with a dimension of size 1 inserted at `axis` (default -1: last)."""
    rank = sp_input.dense_shape.shape[0].value
    axis = -1 if axis is None else axis
    with _graph.name_scope(name, "expand_dims", [sp_input]):
        if isinstance(axis, numbers.Integral):
            axis = convert_to_tensor(axis, name="axis", dtype=_dtypes.int32)
        elif not isinstance(axis, Tensor):
            raise TypeError("axis must be an int or tensor of type int32")
        rank_t = A.size(sp_input.dense_shape) if rank is None else rank
        axis = G.where(axis >= 0, axis, axis + rank_t + 1)
        column_size = A.shape(sp_input.indices)[0]
        new_index = GEN.zeros(A.stack([column_size, 1]), dtype=_I64)
        before = tf_slice(sp_input.indices, A.stack([0, 0]), A.stack([-1, axis]))
        after = tf_slice(sp_input.indices, A.stack([0, axis]), [-1, -1])
        indices = A.concat([before, new_index, after], axis=1)
        new_shape = convert_to_tensor([1], name="new_shape", dtype=_I64)
        shape = A.concat([sp_input.dense_shape[:axis], new_shape,
                          sp_input.dense_shape[axis:]], axis=0)
        return SparseTensor(indices, sp_input.values, shape)


def sparse_eye(num_rows, num_columns=None, dtype=_dtypes.float32, name=None):
    """The [num_rows, num_columns] identity as a SparseTensor."""
    with _graph.name_scope(name, "eye", [num_rows, num_columns]):
        num_rows = M.cast(convert_to_tensor(num_rows, name="num_rows"), _I64) \
            if isinstance(num_rows, Tensor) else convert_to_tensor(num_rows, _I64, "num_rows")
        if num_columns is None:
            num_columns = num_rows
        elif isinstance(num_columns, Tensor):
            num_columns = M.cast(num_columns, _I64)
        else:
            num_columns = convert_to_tensor(num_columns, _I64, "num_columns")
        diag_size = M.minimum(num_rows, num_columns)
        diag_range = M.range(diag_size, dtype=_I64)
        return SparseTensor(A.stack([diag_range, diag_range], axis=1),
                            GEN.ones(A.reshape(diag_size, [1]), dtype=dtype),
                            A.stack([num_rows, num_columns]))


def sparse_placeholder(dtype, shape=None, name=None):
    """A SparseTensor of three placeholders, fed with a `tf.SparseTensorValue` (or an
    (indices, values, dense_shape) tuple). A fully known `shape` becomes a constant."""
    shape_name = (name + "/shape") if name is not None else None
    rank = None
    if shape is not None:
        if isinstance(shape, Tensor):
            rank = shape.shape[0].value
        else:
            dims = shape.as_list() if isinstance(shape, TensorShape) and shape.ndims \
                is not None else list(shape)
            rank = len(dims)
            shape = None if any(d is None or (hasattr(d, "value") and d.value is None)
                                for d in dims) else \
                convert_to_tensor([int(d) for d in dims], dtype=_I64, name=shape_name)
    if shape is None:
        shape = placeholder(_I64, shape=[rank], name=shape_name)
    values = placeholder(dtype, shape=[None],
                         name=(name + "/values") if name is not None else None)
    indices = placeholder(_I64, shape=[None, rank],
                          name=(name + "/indices") if name is not None else None)
    return SparseTensor(indices=indices, values=values, dense_shape=shape)
