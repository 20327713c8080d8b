"""SparseTensor structure ops (tf.sparse): reorder, reshape, concat, slice, split,
to_dense, fill_empty_rows (TF1's Python compositions over them are in sparse_compose).

Records keep TF's op types and signatures. Their output sizes depend on the data (how
many entries survive a slice, which rows are empty), so most are host records with
NumPy kernels raising TF's CPU kernels' messages. Two compile: SparseReorder (a
lexicographic sort of the index rows: its outputs keep the input's shapes) and
SparseToDense (the output shape is a compile-time value, like Reshape's, and index
validation runs inside the cluster through `compiler/effects.py`).

Gradients are TF's: SparseReorder's permutes the values' gradient back, SparseSlice's and
SparseFillEmptyRows' are their Grad records, SparseToDense's gathers the output gradient
at the indices (TF 2.x's formula; TF 1.15 declared none). The structure-only records
(SparseReshape, SparseConcat, SparseSplit's indices) pass values through, as in TF.
"""

from __future__ import annotations

import numbers

import jax.numpy as jnp
import numpy as np

from tensorflux._src.compiler import effects
from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.sparse_tensor import SparseTensor, SparseTensorValue
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.framework.tensor_shape import TensorShape, unknown_shape
from tensorflux._src.ops.array import array_ops as A
from tensorflux._src.ops.array import gather_ops as G
from tensorflux._src.ops.constant import constant
from tensorflux._src.ops.math import math_ops as M
from tensorflux._src.ops.math import reduce_ops as R
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.op_helpers import (deprecated_argument_lookup, kernel_error,
                                            merge_shapes, static_input, with_rank)
from tensorflux._src.ops.registry import OpDef, REQUIRED, register
from tensorflux._src.ops.shape_fns import static_shape_from_tensor, static_value
from tensorflux._src.ops.sparse import sparse_kernels as K

__all__ = [
    "convert_to_sparse_tensor", "sparse_concat", "sparse_fill_empty_rows", "sparse_reorder",
    "sparse_reshape", "sparse_slice", "sparse_split", "sparse_tensor_to_dense",
    "sparse_to_dense",
]

_I64 = _dtypes.int64


def convert_to_sparse_tensor(sp_input):
    """A SparseTensor for a SparseTensor or SparseTensorValue (TF's TypeError else)."""
    if isinstance(sp_input, SparseTensorValue):
        return SparseTensor.from_value(sp_input)
    if not isinstance(sp_input, SparseTensor):
        raise TypeError("Input must be a SparseTensor.")
    return sp_input


def _sparse_input_shapes(op, first=0):
    """TF's rank checks on one (indices, values, shape) triple of inputs; returns the
    merged (rows, rank) dims."""
    indices = with_rank(op.inputs[first].shape, 2)
    values = with_rank(op.inputs[first + 1].shape, 1)
    shape = with_rank(op.inputs[first + 2].shape, 1)
    rows = indices[0].merge_with(values[0]).value
    rank = indices[1].merge_with(shape[0]).value
    return rows, rank


# -- SparseReorder (compiled: a lexicographic sort keeps every shape) --------------------------
def _reorder_shape(op):
    indices = with_rank(op.inputs[0].shape, 2)
    values = with_rank(op.inputs[1].shape, 1)
    with_rank(op.inputs[2].shape, 1)
    return [indices, values]


def _reorder_lower(input_indices, input_values, input_shape):
    del input_shape
    if input_indices.shape[1] == 0 or input_indices.shape[0] < 2:
        return input_indices, input_values
    xp = np if isinstance(input_indices, np.ndarray) else jnp
    keys = tuple(input_indices[:, k] for k in reversed(range(input_indices.shape[1])))
    perm = xp.lexsort(keys)  # stable, as the rows' order among equal indices
    return input_indices[perm], input_values[perm]


def _reorder_grad(op, unused_indices_grad, values_grad):
    # The forward permutation is the reorder of the entry numbers; its inverse puts the
    # output values' gradient back in input order (TF's _SparseReorderGrad).
    indices, shape = op.inputs[0], op.inputs[2]
    entries = M.range(A.shape(indices, out_type=_I64)[0], dtype=_I64)
    _, ordered = apply_op("SparseReorder", input_indices=indices, input_values=entries,
                          input_shape=shape)
    return [None, G.gather(values_grad, A.invert_permutation(ordered)), None]


register(OpDef(
    "SparseReorder", inputs=("input_indices: int64", "input_values: T", "input_shape: int64"),
    outputs=("output_indices: int64", "output_values: T"), attrs={"T": _dtypes.ALL},
    shape=_reorder_shape, lower=_reorder_lower, grad=_reorder_grad, strings_by_rank=True))


def sparse_reorder(sp_input, name=None):
    """The same SparseTensor with its entries in canonical row-major order."""
    sp_input = convert_to_sparse_tensor(sp_input)
    indices, values = apply_op("SparseReorder", name=name, input_indices=sp_input.indices,
                               input_values=sp_input.values, input_shape=sp_input.dense_shape)
    result = SparseTensor(indices, values, A.identity(sp_input.dense_shape))
    result._shape_hint = sp_input._shape_hint
    return result


# -- SparseReshape (host) -------------------------------------------------------------------
def _reshape_kernel(input_indices, input_shape, new_shape):
    if input_indices.ndim != 2:
        raise kernel_error(f"Input indices should be a matrix but received shape "
                           f"{K.shape_str(input_indices.shape)}")
    if input_shape.ndim != 1:
        raise kernel_error(f"Input shape should be a vector but received shape "
                           f"{K.shape_str(input_shape.shape)}")
    if new_shape.ndim != 1:
        raise kernel_error(f"Target shape should be a vector but received shape "
                           f"{K.shape_str(new_shape.shape)}")
    dense_size = int(np.prod(input_shape))
    out, unknown, product = [], -1, 1
    for d, size in enumerate(new_shape.tolist()):
        if size == -1:
            if unknown != -1:
                raise kernel_error(f"only one output dimension may be -1, not both "
                                   f"{unknown} and {d}")
            unknown = d
            out.append(1)
        else:
            if size < 0:
                raise kernel_error(f"size {d} must be non-negative, not {size}")
            product *= size
            out.append(size)
    if unknown != -1:
        if product <= 0:
            raise kernel_error("reshape cannot infer the missing input size for an empty "
                               "tensor unless all specified input sizes are non-zero")
        missing = dense_size // product
        if product * missing != dense_size:
            raise kernel_error(
                f"Input to reshape is a SparseTensor with {dense_size} dense values, but "
                f"the requested shape requires a multiple of {product}. inputShape="
                f"{K.shape_str(input_shape)} outputShape={K.shape_str(out)}")
        out[unknown] = missing
    if int(np.prod(out)) != dense_size:
        raise kernel_error(f"Input to reshape is a tensor with {dense_size} dense values, but "
                           f"the requested shape has {int(np.prod(out))}. inputShape="
                           f"{K.shape_str(input_shape)} outputShape={K.shape_str(out)}")
    n = input_indices.shape[0]
    if not len(out):
        return np.zeros([n, 0], np.int64), np.zeros([0], np.int64)
    linear = np.zeros(n, np.int64)
    for k, size in enumerate(input_shape.tolist()):
        linear = linear * size + input_indices[:, k]
    new = np.stack(np.unravel_index(linear, out), axis=1) if n else np.zeros([0, len(out)])
    return new.astype(np.int64), np.asarray(out, np.int64)


def _reshape_shape(op):
    indices = with_rank(op.inputs[0].shape, 2)
    with_rank(op.inputs[1].shape, 1)
    new_shape = with_rank(op.inputs[2].shape, 1)
    return [TensorShape([indices[0], new_shape[0]]), new_shape]


register(OpDef(
    "SparseReshape", inputs=("input_indices: int64", "input_shape: int64", "new_shape: int64"),
    outputs=("output_indices: int64", "output_shape: int64"), attrs={},
    shape=_reshape_shape, host=_reshape_kernel, not_differentiable=True))


def sparse_reshape(sp_input, shape, name=None):
    """The SparseTensor with the dense shape `shape` (one -1 is inferred); values keep
    their order."""
    sp_input = convert_to_sparse_tensor(sp_input)
    shape = convert_to_tensor(shape, dtype=_I64)
    with _graph.name_scope(name, "SparseReshape", [sp_input]) as scope:
        indices, new_shape = apply_op("SparseReshape", name=scope, input_indices=sp_input.indices,
                                      input_shape=sp_input.dense_shape, new_shape=shape)
        given = static_value(shape)
        in_shape = sp_input.shape
        if given is not None and in_shape.is_fully_defined():
            given = [int(d) for d in given.reshape(-1)]
            if sum(d == -1 for d in given) > 1:
                raise ValueError(f"At most one dimension can be inferred (-1). Found: {given}")
            total = int(np.prod(in_shape.as_list()))
            known = int(np.prod([d for d in given if d != -1]))
            resolved = [total // known if d == -1 and known else d for d in given]
            if -1 not in given or (known and total % known == 0):
                if int(np.prod(resolved)) != total:
                    raise ValueError(f"Cannot reshape a tensor with {total} elements to shape "
                                     f"{given} ({int(np.prod(resolved))} elements).")
                new_shape = constant(np.asarray(resolved, np.int64))
        return SparseTensor(indices, A.identity(sp_input.values), new_shape)


# -- SparseConcat (host) ------------------------------------------------------------------------
def _concat_kernel(*args, concat_dim, N):  # noqa: N803 - TF's attr name
    inds, vals, shapes = args[:N], args[N:2 * N], args[2 * N:]
    for i in range(N):
        if inds[i].ndim != 2:
            raise kernel_error(f"Input indices should be a matrix but received shape "
                               f"{K.shape_str(inds[i].shape)} at position {i}")
        if vals[i].ndim != 1:
            raise kernel_error(f"Input values should be a vector but received shape "
                               f"{K.shape_str(vals[i].shape)} at position {i}")
        if shapes[i].ndim != 1:
            raise kernel_error(f"Input shapes should be a vector but received shape "
                               f"{K.shape_str(shapes[i].shape)} at position {i}")
    rank = shapes[0].shape[0]
    dim = concat_dim + rank if concat_dim < 0 else concat_dim
    if not 0 <= dim < rank:
        raise kernel_error(f"Concat dimension must be in range [{-rank}, {rank}), got "
                           f"{concat_dim}")
    for i in range(1, N):
        if shapes[i].shape[0] != rank:
            raise kernel_error(f"Ranks of all input tensors must match: expected {rank} but "
                               f"got {shapes[i].shape[0]} at position {i}")
        for j in range(rank):
            if j != dim and shapes[i][j] != shapes[0][j]:
                raise kernel_error(f"Input shapes must match: expected {shapes[0][j]} for "
                                   f"dimension {j} but got {shapes[i][j]} at position {i}")
    offsets = np.cumsum([0] + [int(s[dim]) for s in shapes])
    moved = []
    for i in range(N):
        idx = inds[i].astype(np.int64).copy()
        idx[:, dim] += offsets[i]
        moved.append(idx)
    indices = np.concatenate(moved, axis=0)
    values = np.concatenate([np.asarray(v) for v in vals], axis=0)
    order = K.row_major(indices)
    out_shape = shapes[0].astype(np.int64).copy()
    out_shape[dim] = offsets[-1]
    return indices[order], values[order], out_shape


def _concat_shape(op):
    n = op.get_attr("N")
    rows, cols, shape = 0, None, unknown_shape()
    for i in range(n):
        ind = with_rank(op.inputs[i].shape, 2)
        val = with_rank(op.inputs[n + i].shape, 1)
        shp = with_rank(op.inputs[2 * n + i].shape, 1)
        count = ind[0].merge_with(val[0]).value
        rows = None if rows is None or count is None else rows + count
        c = ind[1].value
        if cols is not None and c is not None and cols != c:
            raise ValueError(f"Dimension 1 in both shapes must be equal, but are {cols} and {c}")
        cols = c if c is not None else cols
        shape = merge_shapes(shape, shp)
    return [TensorShape([rows, cols]), TensorShape([rows]), shape]


register(OpDef(
    "SparseConcat", inputs=("indices: N * int64", "values: N * T", "shapes: N * int64"),
    outputs=("output_indices: int64", "output_values: T", "output_shape: int64"),
    attrs={"T": _dtypes.ALL, "concat_dim": REQUIRED}, shape=_concat_shape,
    host=_concat_kernel, not_differentiable=True))


def sparse_concat(axis, sp_inputs, name=None, expand_nonconcat_dim=False, concat_dim=None,
                  expand_nonconcat_dims=None):
    """Concatenates SparseTensors along `axis` (their dense forms' concatenation); with
    `expand_nonconcat_dim` the other dimensions become the largest among the inputs."""
    if expand_nonconcat_dims is not None:
        expand_nonconcat_dim = expand_nonconcat_dims
    axis = deprecated_argument_lookup("axis", axis, "concat_dim", concat_dim)
    if not isinstance(sp_inputs, (list, tuple)):
        raise TypeError("Inputs must be a list or tuple.")
    sp_inputs = [convert_to_sparse_tensor(s) for s in sp_inputs]
    if len(sp_inputs) == 1:
        return sp_inputs[0]
    shapes = [s.dense_shape for s in sp_inputs]
    if expand_nonconcat_dim:
        max_shape = R.reduce_max(A.concat([A.reshape(s, [1, -1]) for s in shapes], 0), 0)
        shapes = [A.concat([max_shape[:axis], s[-1:] if axis == -1 else s[axis:axis + 1],
                            [] if axis == -1 else max_shape[axis + 1:]], 0) for s in shapes]
    indices, values, shape = apply_op(
        "SparseConcat", name=name, indices=[s.indices for s in sp_inputs],
        values=[s.values for s in sp_inputs], shapes=shapes, concat_dim=int(axis))
    result = SparseTensor(indices, values, shape)
    statics = [static_value(s) for s in shapes]
    if all(s is not None for s in statics):
        out = [int(d) for d in statics[0]]
        out[axis] = sum(int(s[axis]) for s in statics)
        result.set_shape(out)
    return result


# -- SparseSlice and its gradient (host) --------------------------------------------------------
def _slice_kernel(indices, values, shape, start, size):
    K.check_sparse(indices, values, shape)
    for what, v in (("start", start), ("size", size)):
        if v.ndim != 1:
            raise kernel_error(f"Input {what} should be a vector but received shape "
                               f"{K.shape_str(v.shape)}")
        if v.shape[0] != shape.shape[0]:
            raise kernel_error(f"Expected {what} to be a vector of length {shape.shape[0]} "
                               f"but got length {v.shape[0]}")
    end = np.minimum(start + size, shape)
    out_shape = np.maximum(end - start, 0).astype(np.int64)
    keep = ((indices >= start) & (indices < end)).all(axis=1) if indices.shape[1] else \
        np.ones(indices.shape[0], bool)
    return (indices[keep] - start).astype(np.int64), values[keep], out_shape


def _slice_shape(op):
    _, rank = _sparse_input_shapes(op)
    with_rank(op.inputs[3].shape, 1)
    with_rank(op.inputs[4].shape, 1)
    rank = rank if rank is not None else op.inputs[3].shape.merge_with(
        op.inputs[4].shape)[0].value
    return [TensorShape([None, rank]), TensorShape([None]), TensorShape([rank])]


def _slice_grad_kernel(backprop_val_grad, input_indices, input_start, output_indices):
    if backprop_val_grad.shape[0] != output_indices.shape[0]:
        raise kernel_error(f"backprop_val_grad has {backprop_val_grad.shape[0]} entries but "
                           f"output_indices has {output_indices.shape[0]} rows")
    where = {tuple(row): k for k, row in enumerate(output_indices.tolist())}
    out = np.zeros(input_indices.shape[0], backprop_val_grad.dtype)
    for i, row in enumerate((input_indices - input_start).tolist()):
        k = where.get(tuple(row))
        if k is not None:
            out[i] = backprop_val_grad[k]
    return out


def _slice_grad(op, unused_indices_grad, values_grad, unused_shape_grad):
    grad = apply_op("SparseSliceGrad", backprop_val_grad=values_grad,
                    input_indices=op.inputs[0], input_start=op.inputs[3],
                    output_indices=op.outputs[0])
    grad.set_shape(op.inputs[1].shape)
    return [None, grad, None, None, None]


register(OpDef(
    "SparseSlice", inputs=("indices: int64", "values: T", "shape: int64", "start: int64",
                           "size: int64"),
    outputs=("output_indices: int64", "output_values: T", "output_shape: int64"),
    attrs={"T": _dtypes.ALL}, shape=_slice_shape, host=_slice_kernel, grad=_slice_grad))
register(OpDef(
    "SparseSliceGrad", inputs=("backprop_val_grad: T", "input_indices: int64",
                               "input_start: int64", "output_indices: int64"),
    outputs=("val_grad: T",), attrs={"T": _dtypes.NUMBERS},
    shape=lambda op: TensorShape([with_rank(op.inputs[1].shape, 2)[0]]),
    host=_slice_grad_kernel, not_differentiable=True))


def sparse_slice(sp_input, start, size, name=None):
    """The entries of `sp_input` inside the box [start, start + size), re-indexed from
    `start`; the box is clipped to the dense shape."""
    sp_input = convert_to_sparse_tensor(sp_input)
    start = convert_to_tensor(start, _I64)
    size = convert_to_tensor(size, _I64)
    with _graph.name_scope(name, "SparseSlice", [sp_input]) as scope:
        indices, values, shape = apply_op(
            "SparseSlice", name=scope, indices=sp_input.indices, values=sp_input.values,
            shape=sp_input.dense_shape, start=start, size=size)
        return SparseTensor(indices, values, shape)


# -- SparseSplit (host) -------------------------------------------------------------------------
def _split_kernel(split_dim, indices, values, shape, num_split):
    K.check_sparse(indices, values, shape)
    rank = shape.shape[0]
    dim = int(split_dim)
    if not -rank <= dim < rank:
        raise kernel_error(f"Input split_dim should be between {-rank} and rank ({rank}), "
                           f"got {dim}")
    dim = dim + rank if dim < 0 else dim
    size = int(shape[dim])
    if not 1 <= num_split <= size:
        raise kernel_error(f"Input num_split should be between 1 and the splitting "
                           f"dimension size ({size}), got {num_split}")
    base, extra = divmod(size, num_split)
    sizes = [base + (1 if i < extra else 0) for i in range(num_split)]
    bounds = np.cumsum([0] + sizes)
    out_inds, out_vals, out_shapes = [], [], []
    for i in range(num_split):
        keep = (indices[:, dim] >= bounds[i]) & (indices[:, dim] < bounds[i + 1])
        idx = indices[keep].astype(np.int64).copy()
        idx[:, dim] -= bounds[i]
        s = shape.astype(np.int64).copy()
        s[dim] = sizes[i]
        out_inds.append(idx)
        out_vals.append(values[keep])
        out_shapes.append(s)
    return out_inds + out_vals + out_shapes


def _split_shape(op):
    n = op.get_attr("num_split")
    with_rank(op.inputs[0].shape, 0)
    _, rank = _sparse_input_shapes(op, 1)
    shape = op.inputs[3].shape
    return ([TensorShape([None, rank])] * n + [TensorShape([None])] * n + [shape] * n)


register(OpDef(
    "SparseSplit", inputs=("split_dim: int64", "indices: int64", "values: T", "shape: int64"),
    outputs=("output_indices: num_split * int64", "output_values: num_split * T",
             "output_shape: num_split * int64"),
    attrs={"T": _dtypes.ALL, "num_split": REQUIRED}, shape=_split_shape, host=_split_kernel))


class KeywordRequired:
    """TF's marker forcing keyword arguments (tf.sparse.split)."""

    def __repr__(self):
        return "KeywordRequired()"


def sparse_split(keyword_required=KeywordRequired(), sp_input=None, num_split=None,
                 axis=None, name=None, split_dim=None):
    """`num_split` SparseTensors splitting `sp_input` along `axis`; the first
    size % num_split pieces are one longer."""
    if not isinstance(keyword_required, KeywordRequired):
        raise ValueError("Keyword arguments are required for this function.")
    if sp_input is None:
        raise ValueError("sp_input is required")
    if num_split is None:
        raise ValueError("num_split is required")
    axis = deprecated_argument_lookup("axis", axis, "split_dim", split_dim)
    if axis is None:
        raise ValueError("axis is required")
    sp_input = convert_to_sparse_tensor(sp_input)
    outs = apply_op("SparseSplit", name=name, split_dim=convert_to_tensor(axis, _I64),
                    indices=sp_input.indices, values=sp_input.values,
                    shape=sp_input.dense_shape, num_split=int(num_split))
    n = int(num_split)
    return [SparseTensor(outs[i], outs[n + i], outs[2 * n + i]) for i in range(n)]


# -- SparseToDense (compiled; output shape is a compile-time value) ----------------------------
def _bounds_error(indices, shape):
    outside = ((indices < 0) | (indices >= shape)).any(axis=1)
    if outside.any():
        return f"Indices are not valid (out of bounds).  Shape: {K.shape_str(shape)}"
    return None


def _to_dense_lower(sparse_indices, output_shape, sparse_values, default_value,
                    validate_indices):
    if sparse_indices.ndim > 2:
        raise kernel_error(f"sparse_indices should be a scalar, vector, or matrix, got shape "
                           f"{K.shape_str(sparse_indices.shape)}")
    num_elems = sparse_indices.shape[0] if sparse_indices.ndim > 0 else 1
    num_dims = sparse_indices.shape[1] if sparse_indices.ndim > 1 else 1
    shape = static_input(output_shape, "SparseToDense", "output_shape").astype(np.int64)
    if shape.ndim != 1:
        raise kernel_error(f"output_shape should be a vector, got shape "
                           f"{K.shape_str(shape.shape)}")
    if shape.size != num_dims:
        raise kernel_error(f"output_shape has incorrect number of elements: {shape.size} "
                           f"should be: {num_dims}")
    if not (sparse_values.ndim == 0 or (sparse_values.ndim == 1
                                        and sparse_values.shape[0] == num_elems)):
        raise kernel_error(f"sparse_values has incorrect shape "
                           f"{K.shape_str(sparse_values.shape)}, should be [] or [{num_elems}]")
    if np.ndim(default_value) != 0:
        raise kernel_error("default_value should be a scalar.")
    indices = sparse_indices.reshape(num_elems, num_dims).astype(np.int64)

    def message(values):
        return (K.indices_error(values, shape) if validate_indices else None) or \
            _bounds_error(values, shape)

    if isinstance(indices, np.ndarray):
        error = message(indices)
        if error is not None:
            raise kernel_error(error)
    elif num_elems:
        ok = jnp.all((indices >= 0) & (indices < shape))
        if validate_indices and num_elems > 1:
            diff = indices[1:] - indices[:-1]
            nonzero = diff != 0
            lead = jnp.take_along_axis(diff, jnp.argmax(nonzero, axis=1)[:, None], axis=1)[:, 0]
            ok &= jnp.all(nonzero.any(axis=1) & (lead > 0))
        effects.check(ok, message, data=(indices,))
    size = int(np.prod(shape))
    strides = np.cumprod(np.r_[shape[1:], 1][::-1])[::-1].astype(np.int64)
    flat = (indices * strides).sum(axis=1) if num_dims else jnp.zeros([num_elems], np.int64)
    out = jnp.full([size], default_value, dtype=jnp.asarray(default_value).dtype)
    values = jnp.broadcast_to(sparse_values, (num_elems,))
    out = out.at[jnp.where(flat < 0, size, flat)].set(values, mode="drop")
    return out.reshape(tuple(int(d) for d in shape))


def _to_dense_grad(op, grad):
    # TF 2.x's gradient: each value gets the output gradient at its index, the default
    # value the rest (TF 1.15 registered none; programs differentiating to_dense need it).
    indices, output_shape, values = op.inputs[:3]
    rank = A.shape(output_shape)[0]
    flat_indices = A.reshape(indices, A.stack([-1, rank]))
    values_grad = G.gather_nd(grad, flat_indices)
    default_grad = R.reduce_sum(grad) - R.reduce_sum(values_grad)
    if values.shape.ndims == 0:
        values_grad = R.reduce_sum(values_grad)
    return [None, None, values_grad, default_grad]


def _to_dense_shape(op):
    with_rank(op.inputs[3].shape, 0)
    return static_shape_from_tensor(op.inputs[1])


register(OpDef(
    "SparseToDense", inputs=("sparse_indices: Tindices", "output_shape: Tindices",
                             "sparse_values: T", "default_value: T"),
    outputs=("dense: T",), attrs={"T": _dtypes.ALL, "Tindices": _dtypes.INDEX,
                                  "validate_indices": True},
    shape=_to_dense_shape, lower=_to_dense_lower, grad=_to_dense_grad, strings_by_rank=True))


def _default_for(default_value, dtype):
    if dtype == _dtypes.string and isinstance(default_value, numbers.Number) and \
            default_value == 0:
        return b""  # TF's zero string
    return default_value


def sparse_to_dense(sparse_indices, output_shape, sparse_values, default_value=0,
                    validate_indices=True, name=None):
    """The dense tensor of shape `output_shape` holding `sparse_values` at
    `sparse_indices` and `default_value` elsewhere (TF1's deprecated form)."""
    sparse_values = convert_to_tensor(sparse_values)
    return apply_op("SparseToDense", name=name, sparse_indices=sparse_indices,
                    output_shape=output_shape, sparse_values=sparse_values,
                    default_value=_default_for(default_value, sparse_values.dtype),
                    validate_indices=bool(validate_indices))


def sparse_tensor_to_dense(sp_input, default_value=0, validate_indices=True, name=None):
    """The dense form of a SparseTensor; `default_value` fills the missing entries."""
    sp_input = convert_to_sparse_tensor(sp_input)
    out = apply_op("SparseToDense", name=name, sparse_indices=sp_input.indices,
                   output_shape=sp_input.dense_shape, sparse_values=sp_input.values,
                   default_value=_default_for(default_value, sp_input.dtype),
                   validate_indices=bool(validate_indices))
    if sp_input._shape_hint.ndims is not None:
        out.set_shape(out.shape.merge_with(sp_input._shape_hint))
    return out


# -- SparseFillEmptyRows and its gradient -----------------------------------------------------
def _fill_kernel(indices, values, dense_shape, default_value):
    for name, v, rank, kind in (("dense_shape", dense_shape, 1, "vector"),
                                ("indices", indices, 2, "matrix"),
                                ("values", values, 1, "vector"),
                                ("default_value", default_value, 0, "scalar")):
        if np.ndim(v) != rank:
            raise kernel_error(f"{name} must be a {kind}, saw: {K.shape_str(np.shape(v))}")
    n = indices.shape[0]
    if values.shape[0] != n:
        raise kernel_error(f"The length of `values` ({values.shape[0]}) must match the first "
                           f"dimension of `indices` ({n}).")
    if dense_shape.shape[0] == 0:
        raise kernel_error("dense_shape must have at least one dimension")
    rank, dense_rows = dense_shape.shape[0], int(dense_shape[0])
    if dense_rows == 0 and n:
        raise kernel_error(f"Received SparseTensor with dense_shape[0] = 0 but "
                           f"indices.shape[0] = {n}")
    rows = indices[:, 0] if n else np.zeros([0], np.int64)
    for i in np.flatnonzero((rows < 0) | (rows >= dense_rows))[:1]:
        row = int(rows[i])
        bound = f"{row} < 0" if row < 0 else f"{row} >= {dense_rows}"
        raise kernel_error(f"indices({i}, 0) is invalid: {bound}")
    return _fill_rows(rows, indices, values, dense_rows, rank, default_value)


def _fill_rows(rows, indices, values, nrows, rank, default_value):
    """Shared by SparseFillEmptyRows and RaggedFillEmptyRows (rank 1: value_rowids)."""
    counts = np.bincount(rows, minlength=nrows) if rows.size else np.zeros(nrows, np.int64)
    empty = counts == 0
    out_counts = counts + empty
    offsets = np.cumsum(out_counts) - out_counts
    order = np.argsort(rows, kind="stable")
    starts = np.cumsum(counts) - counts
    reverse = np.empty(rows.shape[0], np.int64)
    reverse[order] = offsets[rows[order]] + np.arange(rows.shape[0]) - starts[rows[order]]
    total = int(out_counts.sum())
    out_indices = np.zeros([total, rank], np.int64)
    out_values = np.empty([total], values.dtype)
    if values.dtype == np.object_:
        out_values[:] = b""
    out_indices[reverse] = indices
    out_values[reverse] = values
    filled = offsets[empty]
    out_indices[filled, 0] = np.flatnonzero(empty)
    out_values[filled] = default_value
    return out_indices, out_values, empty, reverse


def _fill_shape(op):
    n, rank = _sparse_input_shapes(op)
    with_rank(op.inputs[3].shape, 0)
    rows = static_shape_from_tensor(op.inputs[2])
    return [TensorShape([None, rank]), TensorShape([None]),
            TensorShape([rows[0] if rows.ndims else None]), TensorShape([n])]


def _fill_grad_lower(reverse_index_map, grad_values):
    if reverse_index_map.ndim != 1:
        raise kernel_error(f"reverse_index_map must be a vector, saw: "
                           f"{K.shape_str(reverse_index_map.shape)}")
    if grad_values.ndim != 1:
        raise kernel_error(f"grad_values must be a vector, saw: "
                           f"{K.shape_str(grad_values.shape)}")
    d_values = jnp.take(grad_values, reverse_index_map, mode="clip") \
        if grad_values.shape[0] else jnp.zeros(reverse_index_map.shape, grad_values.dtype)
    return d_values, jnp.sum(grad_values) - jnp.sum(d_values)


def _fill_grad(op, unused_indices_grad, values_grad, unused_indicator, unused_map_grad):
    d_values, d_default = apply_op("SparseFillEmptyRowsGrad", reverse_index_map=op.outputs[3],
                                   grad_values=values_grad)
    return [None, d_values, None, d_default]


register(OpDef(
    "SparseFillEmptyRows", inputs=("indices: int64", "values: T", "dense_shape: int64",
                                   "default_value: T"),
    outputs=("output_indices: int64", "output_values: T", "empty_row_indicator: bool",
             "reverse_index_map: int64"),
    attrs={"T": _dtypes.ALL}, shape=_fill_shape, host=_fill_kernel, grad=_fill_grad))
register(OpDef(
    "SparseFillEmptyRowsGrad", inputs=("reverse_index_map: int64", "grad_values: T"),
    outputs=("d_values: T", "d_default_value: T"), attrs={"T": _dtypes.NUMBERS},
    shape=lambda op: [with_rank(op.inputs[0].shape, 1), TensorShape([])],
    lower=_fill_grad_lower, not_differentiable=True))


def sparse_fill_empty_rows(sp_input, default_value, name=None):
    """(the SparseTensor with `default_value` at [row, 0, ..., 0] of every empty row, the
    bool vector marking those rows)."""
    sp_input = convert_to_sparse_tensor(sp_input)
    with _graph.name_scope(name, "SparseFillEmptyRows", [sp_input]):
        default_value = convert_to_tensor(_default_for(default_value, sp_input.dtype),
                                          dtype=sp_input.values.dtype)
        indices, values, empty, _ = apply_op(
            "SparseFillEmptyRows", indices=sp_input.indices, values=sp_input.values,
            dense_shape=sp_input.dense_shape, default_value=default_value)
        result = SparseTensor(indices, values, sp_input.dense_shape)
        result._shape_hint = sp_input._shape_hint
        return result, empty
