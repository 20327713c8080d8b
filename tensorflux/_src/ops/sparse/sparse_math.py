"""Sparse arithmetic (tf.sparse): add, reductions, softmax, elementwise maximum/minimum,
sparse x dense products, and the SparseTensor `*` and `/` operators.

Host records (output sizes depend on the data): SparseAdd and SparseAddGrad,
SparseReduce{Sum,Max}[Sparse], SparseSparse{Maximum,Minimum}. Compiled records (their
outputs' shapes follow their inputs' shapes, or a compile-time dense shape):
SparseTensorDenseAdd, SparseDenseCwise{Mul,Div,Add}, SparseSoftmax (groups found from
the sorted indices inside the trace), SparseTensorDenseMatMul (a scatter-add of the
products; its row count is `a_shape[0]`, a compile-time value) and SparseMatMul (TF1's
dense matmul with sparsity hints, always float32 out). Index problems inside compiled
records fail the run with TF's messages through `compiler/effects.py`.

Gradients are TF's (sparse_grad.py): SparseAdd through SparseAddGrad, SparseReduceSum by
gathering the reshaped output gradient, SparseSoftmax's softmax formula over the present
entries, SparseTensorDenseMatMul's for both the values and the dense matrix,
SparseDenseCwiseMul/Div, SparseTensorDenseAdd; SparseSparseMaximum/Minimum and
SparseDenseCwiseAdd raise TF's NotImplementedError.
"""

from __future__ import annotations

import jax
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
from tensorflux._src.ops.array import generator_ops as GEN
from tensorflux._src.ops.array.shapes import broadcast_static_shape
from tensorflux._src.ops.math import math_ops as M
from tensorflux._src.ops.math import reduce_ops as R
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.op_helpers import (deprecated_argument_lookup, kernel_error,
                                            static_input, with_rank)
from tensorflux._src.ops.registry import OpDef, register
from tensorflux._src.ops.shape_fns import static_shape_from_tensor, static_value
from tensorflux._src.ops.sparse import sparse_kernels as K
from tensorflux._src.ops.sparse.sparse_ops import convert_to_sparse_tensor

__all__ = [
    "sparse_add", "sparse_maximum", "sparse_matmul", "sparse_minimum", "sparse_reduce_max",
    "sparse_reduce_max_sparse", "sparse_reduce_sum", "sparse_reduce_sum_sparse",
    "sparse_softmax", "sparse_tensor_dense_matmul",
]

_I64 = _dtypes.int64


def _summary(values):
    """TF's Tensor::SummarizeValue: the values separated by spaces."""
    return " ".join(str(int(v)) for v in np.reshape(values, -1))


def _check_same_shapes(a_shape, b_shape):
    if a_shape.shape != b_shape.shape:
        raise kernel_error(f"Operands do not have the same ranks; got shapes: "
                           f"{_summary(a_shape)} and {_summary(b_shape)}")
    for i, (x, y) in enumerate(zip(a_shape.tolist(), b_shape.tolist())):
        if x != y:
            raise kernel_error(f"Operands' shapes do not match: got {x} and {y} for "
                               f"dimension {i}")


def _check_pair(a_indices, a_values, a_shape, b_indices, b_values, b_shape):
    if a_indices.ndim != 2 or b_indices.ndim != 2:
        raise kernel_error(f"Input indices should be matrices but received shapes: "
                           f"{K.shape_str(a_indices.shape)} and {K.shape_str(b_indices.shape)}")
    if a_values.ndim != 1 or b_values.ndim != 1:
        raise kernel_error(f"Inputs a_values and b_values should be vectors but received "
                           f"shapes: {K.shape_str(a_values.shape)} and "
                           f"{K.shape_str(b_values.shape)}")
    if a_shape.ndim != 1 or b_shape.ndim != 1:
        raise kernel_error(f"Input shapes should be a vector but received shapes "
                           f"{K.shape_str(a_shape.shape)} and {K.shape_str(b_shape.shape)}")
    _check_same_shapes(a_shape, b_shape)


def _union(a_indices, b_indices):
    """The merged (sorted) union of two sorted index sets: (indices, position of each
    output row in a or -1, position in b or -1)."""
    both = np.concatenate([a_indices, b_indices], axis=0).astype(np.int64)
    source = np.r_[np.zeros(len(a_indices), np.int64), np.ones(len(b_indices), np.int64)]
    where = np.r_[np.arange(len(a_indices)), np.arange(len(b_indices))]
    order = np.lexsort((source,) + tuple(both.T[::-1])) if both.size else np.arange(len(both))
    both, source, where = both[order], source[order], where[order]
    new = np.r_[True, (both[1:] != both[:-1]).any(axis=1)] if len(both) else np.zeros(0, bool)
    group = np.cumsum(new) - 1
    n = int(new.sum())
    in_a, in_b = np.full(n, -1), np.full(n, -1)
    in_a[group[source == 0]] = where[source == 0]
    in_b[group[source == 1]] = where[source == 1]
    return both[new], in_a, in_b


# -- SparseAdd, SparseAddGrad (host) -------------------------------------------------------
def _add_kernel(a_indices, a_values, a_shape, b_indices, b_values, b_shape, thresh):
    _check_pair(a_indices, a_values, a_shape, b_indices, b_values, b_shape)
    indices, in_a, in_b = _union(a_indices, b_indices)
    zero = np.zeros([], a_values.dtype)
    values = np.where(in_a >= 0, a_values[np.maximum(in_a, 0)] if len(a_values) else zero,
                      zero) + np.where(in_b >= 0, b_values[np.maximum(in_b, 0)]
                                       if len(b_values) else zero, zero)
    # TF thresholds only the sums of entries present in both operands.
    keep = ~((in_a >= 0) & (in_b >= 0) & (np.abs(values) < thresh))
    return indices[keep].reshape(-1, a_shape.shape[0]), values[keep], a_shape


def _add_grad_kernel(backprop_val_grad, a_indices, b_indices, sum_indices):
    where = {tuple(row): k for k, row in enumerate(sum_indices.tolist())}
    out = []
    for indices in (a_indices, b_indices):
        grad = np.zeros(indices.shape[0], backprop_val_grad.dtype)
        for i, row in enumerate(indices.tolist()):
            k = where.get(tuple(row))
            if k is not None:
                grad[i] = backprop_val_grad[k]
        out.append(grad)
    return out


def _add_grad(op, unused_indices_grad, values_grad, unused_shape_grad):
    a_grad, b_grad = apply_op("SparseAddGrad", backprop_val_grad=values_grad,
                              a_indices=op.inputs[0], b_indices=op.inputs[3],
                              sum_indices=op.outputs[0])
    a_grad.set_shape(op.inputs[1].shape)
    b_grad.set_shape(op.inputs[4].shape)
    return [None, a_grad, None, None, b_grad, None, None]


def _add_shape(op):
    shape = with_rank(op.inputs[2].shape, 1)
    return [TensorShape([None, shape[0]]), TensorShape([None]), shape]


register(OpDef(
    "SparseAdd", inputs=("a_indices: int64", "a_values: T", "a_shape: int64",
                         "b_indices: int64", "b_values: T", "b_shape: int64", "thresh: Treal"),
    outputs=("sum_indices: int64", "sum_values: T", "sum_shape: int64"),
    attrs={"T": _dtypes.NUMBERS, "Treal": _dtypes.REAL}, shape=_add_shape,
    host=_add_kernel, grad=_add_grad))
register(OpDef(
    "SparseAddGrad", inputs=("backprop_val_grad: T", "a_indices: int64", "b_indices: int64",
                             "sum_indices: int64"),
    outputs=("a_val_grad: T", "b_val_grad: T"), attrs={"T": _dtypes.NUMBERS},
    shape=lambda op: [TensorShape([with_rank(op.inputs[1].shape, 2)[0]]),
                      TensorShape([with_rank(op.inputs[2].shape, 2)[0]])],
    host=_add_grad_kernel, not_differentiable=True))


# -- SparseTensorDenseAdd (compiled) ----------------------------------------------------------
def _dense_add_lower(a_indices, a_values, a_shape, b):
    if a_indices.ndim != 2:
        raise kernel_error(f"Input a_indices should be a matrix but received shape: "
                           f"{K.shape_str(a_indices.shape)}")
    if a_values.ndim != 1 or a_shape.ndim != 1:
        raise kernel_error(f"Inputs a_values and a_shape should be vectors but received "
                           f"shapes: {K.shape_str(a_values.shape)} and "
                           f"{K.shape_str(a_shape.shape)}")
    if a_shape.shape[0] != b.ndim:
        raise kernel_error(f"Two operands have different ranks; received: {a_shape.shape[0]} "
                           f"and {b.ndim}")
    dims = np.asarray(b.shape, np.int64)

    def message(shape, indices):
        for i, (x, y) in enumerate(zip(shape.tolist(), dims.tolist())):
            if x != y:
                return (f"Dimension {i} does not equal (no broadcasting is supported): sparse "
                        f"side {x} vs dense side {y}")
        bad = np.flatnonzero(((indices < 0) | (indices >= dims)).any(axis=1))[0]
        return (f"indices[{bad}] = [{', '.join(str(int(v)) for v in indices[bad])}] does not "
                f"index into shape {K.shape_str(dims)}")

    ok = jnp.all(a_shape == dims) & jnp.all((a_indices >= 0) & (a_indices < dims))
    effects.check(ok, message, data=(a_shape, a_indices))
    if not b.ndim:
        return b + jnp.sum(a_values)
    safe = jnp.where(a_indices < 0, dims, a_indices)
    return jnp.asarray(b).at[tuple(safe[:, k] for k in range(b.ndim))].add(a_values,
                                                                           mode="drop")


def _dense_add_grad(op, grad):
    return [None, G.gather_nd(grad, op.inputs[0]), None, grad]


register(OpDef(
    "SparseTensorDenseAdd", inputs=("a_indices: Tindices", "a_values: T", "a_shape: Tindices",
                                    "b: T"),
    outputs=("output: T",), attrs={"T": _dtypes.NUMBERS, "Tindices": _dtypes.INDEX},
    shape=lambda op: op.inputs[3].shape, lower=_dense_add_lower, grad=_dense_add_grad))


# -- SparseDenseCwise{Mul,Div,Add} (compiled) ---------------------------------------------------
def _cwise_lower(fn):
    def lower(sp_indices, sp_values, sp_shape, dense):
        rank, drank = sp_indices.shape[1], dense.ndim
        if drank > rank:
            raise kernel_error(f"SparseDenseBinaryOpShared broadcasts dense to sparse only; "
                               f"got incompatible shapes: [{rank} dims] vs. "
                               f"{K.shape_str(dense.shape)}")
        dims = np.asarray(dense.shape, np.int64)

        def message(shape):
            return (f"SparseDenseBinaryOpShared broadcasts dense to sparse only; got "
                    f"incompatible shapes: {K.shape_str(shape)} vs. {K.shape_str(dims)}")

        tail = sp_shape[rank - drank:] if drank else sp_shape[:0]
        effects.check(jnp.all((dims == 1) | (dims == tail)), message, data=(sp_shape,))
        cols = sp_indices[:, rank - drank:]
        picked = jnp.where(dims == 1, 0, cols)
        dense_values = dense[tuple(picked[:, k] for k in range(drank))] if drank else \
            jnp.broadcast_to(dense, sp_values.shape)
        return fn(sp_values, dense_values)
    return lower


def _cwise_mul_div_grad(is_mul):
    def grad_fn(op, grad):
        x_indices, x_values, x_shape, y = op.inputs
        y_shape = M.cast(A.shape(y), _I64)
        num_added = A.expand_dims(A.size(x_shape) - A.size(y_shape), 0)
        augmented = A.concat([GEN.ones(num_added, _I64), y_shape], 0)
        scaled = x_indices // (x_shape // augmented)
        scaled = G.gather(scaled, M.range(num_added[0], A.size(x_shape)), axis=1)
        dense_values = G.gather_nd(y, scaled)
        if is_mul:
            dx, dy_val = grad * dense_values, grad * x_values
        else:
            dx = grad / dense_values
            dy_val = grad * (-x_values / M.square(dense_values))
        dy = apply_op("SparseTensorDenseAdd", a_indices=scaled, a_values=dy_val,
                      a_shape=y_shape, b=GEN.zeros_like(y))
        return [None, dx, None, dy]
    return grad_fn


def _cwise_add_grad(op, grad):
    raise NotImplementedError("Gradient for SparseDenseCwiseAdd is not implemented.")


for _name, _fn, _grad in (("SparseDenseCwiseMul", jnp.multiply, _cwise_mul_div_grad(True)),
                          ("SparseDenseCwiseDiv", jnp.divide, _cwise_mul_div_grad(False)),
                          ("SparseDenseCwiseAdd", jnp.add, _cwise_add_grad)):
    # Integer division truncates toward zero, as C++'s `/` in TF's kernel.
    _lowering = _cwise_lower(_fn) if _name != "SparseDenseCwiseDiv" else _cwise_lower(
        lambda x, y: jax.lax.div(x, y) if jnp.issubdtype(x.dtype, jnp.integer) else x / y)
    register(OpDef(
        _name, inputs=("sp_indices: int64", "sp_values: T", "sp_shape: int64", "dense: T"),
        outputs=("output: T",), attrs={"T": _dtypes.NUMBERS},
        shape=lambda op: TensorShape([with_rank(op.inputs[0].shape, 2)[0]]),
        lower=_lowering, grad=_grad))


def _sparse_dense_op(op_type, scope):
    def fn(sp_x, y):
        with _graph.name_scope(None, scope, [sp_x, y]) as name:
            y = convert_to_tensor(y, dtype=sp_x.dtype.base_dtype, name="y")
            values = apply_op(op_type, name=name, sp_indices=sp_x.indices,
                              sp_values=sp_x.values, sp_shape=sp_x.dense_shape, dense=y)
            return SparseTensor(sp_x.indices, values, sp_x.dense_shape)
    return fn


def _sparse_truediv(sp_x, y):
    with _graph.name_scope(None, "truediv", [sp_x, y]) as name:
        y = convert_to_tensor(y, dtype=sp_x.dtype.base_dtype, name="y")
        values = sp_x.values
        dtype = values.dtype.base_dtype
        if dtype not in M._TRUEDIV_TABLE:
            raise TypeError(f"Invalid dtype {dtype!r} in __truediv__")
        if M._TRUEDIV_TABLE[dtype] is not None:
            values = M.cast(values, M._TRUEDIV_TABLE[dtype])
            y = M.cast(y, M._TRUEDIV_TABLE[dtype])
        out = apply_op("SparseDenseCwiseDiv", name=name, sp_indices=sp_x.indices,
                       sp_values=values, sp_shape=sp_x.dense_shape, dense=y)
        return SparseTensor(sp_x.indices, out, sp_x.dense_shape)


# TF1 registers these operators for SparseTensor in math_ops (the dense side broadcasts
# to the sparse one; the result keeps the sparse operand's indices).
SparseTensor.__mul__ = _sparse_dense_op("SparseDenseCwiseMul", "mul")
SparseTensor.__div__ = _sparse_dense_op("SparseDenseCwiseDiv", "div")
SparseTensor.__truediv__ = _sparse_truediv


def sparse_dense_cwise_add(sp_t, dense_t):
    """The SparseTensor sp_t + dense_t at sp_t's entries (dense broadcast to sparse)."""
    values = apply_op("SparseDenseCwiseAdd", sp_indices=sp_t.indices, sp_values=sp_t.values,
                      sp_shape=sp_t.dense_shape, dense=dense_t)
    return SparseTensor(sp_t.indices, values, sp_t.dense_shape)


def sparse_add(a, b, threshold=None, thresh=None):
    """a + b with at least one SparseTensor: a SparseTensor when both are, else a dense
    Tensor. Sums of entries in both whose magnitude is below `threshold` are dropped."""
    threshold = deprecated_argument_lookup("threshold", threshold, "thresh", thresh)
    if threshold is None:
        threshold = 0
    sparse_classes = (SparseTensor, SparseTensorValue)
    if not any(isinstance(x, sparse_classes) for x in (a, b)):
        raise TypeError("At least one input should be SparseTensor; do you mean to use "
                        "tf.add()?")
    if all(isinstance(x, sparse_classes) for x in (a, b)):
        a, b = convert_to_sparse_tensor(a), convert_to_sparse_tensor(b)
        real = a.values.dtype.real_dtype if a.values.dtype.is_complex else a.values.dtype
        threshold = convert_to_tensor(threshold, dtype=real.base_dtype, name="threshold")
        indices, values, shape = apply_op(
            "SparseAdd", a_indices=a.indices, a_values=a.values, a_shape=a.dense_shape,
            b_indices=b.indices, b_values=b.values, b_shape=b.dense_shape, thresh=threshold)
        a.shape.assert_is_compatible_with(b.shape)
        static = broadcast_static_shape(a.shape, b.shape)
        if static.is_fully_defined():
            shape = constant_shape(static.as_list())
        return SparseTensor(indices, values, shape)
    if isinstance(b, sparse_classes):
        a, b = b, a
    a = convert_to_sparse_tensor(a)
    return apply_op("SparseTensorDenseAdd", a_indices=a.indices, a_values=a.values,
                    a_shape=a.dense_shape, b=b)


def constant_shape(dims):
    return convert_to_tensor(np.asarray(dims, np.int64))


# -- reductions (host) ----------------------------------------------------------------------
def _reduce_details(shape, axes, keep_dims):
    """(group dims, reduced shape) as TF's SparseTensorReduceHelper."""
    ndims = shape.shape[0]
    axes = sorted({(int(a) + ndims) % ndims for a in np.reshape(axes, -1)}) if ndims else []
    group = [d for d in range(ndims) if d not in axes]
    out = [1 if d in axes else int(shape[d]) for d in range(ndims)] if keep_dims else \
        [int(shape[d]) for d in group]
    return group, out


def _check_reduce(shape, axes):
    if shape.ndim != 1:
        raise kernel_error(f"Expected input_shape to be a vector; got shape: "
                           f"{K.shape_str(shape.shape)}")
    if axes.ndim > 1:
        raise kernel_error(f"Expected reduction_axes to be a scalar or a vector; got shape: "
                           f"{K.shape_str(axes.shape)}")
    n = shape.shape[0]
    for a in np.reshape(axes, -1).tolist():
        if a < -n or a >= n:
            raise kernel_error(f"Invalid reduction dimension {a}, for input with {n} "
                               f"dimensions.")


def _groups(indices, values, group):
    """(group coordinates [G, len(group)], reduced-by index per entry) in row-major
    order of the groups."""
    keys = indices[:, group]
    if not len(group):
        return np.zeros([1 if len(values) else 0, 0], np.int64), np.zeros(len(values),
                                                                            np.int64)
    uniq, inverse = np.unique(keys, axis=0, return_inverse=True)
    return uniq, inverse.reshape(-1)


def _reduce_values(values, inverse, count, kind):
    if kind == "sum":
        out = np.zeros(count, values.dtype)
        np.add.at(out, inverse, values)
        return out
    out = np.full(count, _lowest(values.dtype), values.dtype)
    np.maximum.at(out, inverse, values)
    return out


def _lowest(dtype):
    dtype = np.dtype(dtype)
    return np.iinfo(dtype).min if dtype.kind in "iu" else -np.inf


def _reduce_kernel(kind, sparse_output):
    def kernel(input_indices, input_values, input_shape, reduction_axes, keep_dims):
        _check_reduce(input_shape, reduction_axes)
        K.check_sparse(input_indices, input_values, input_shape)
        group, out_shape = _reduce_details(input_shape, reduction_axes, keep_dims)
        coords, inverse = _groups(input_indices, input_values, group)
        reduced = _reduce_values(input_values, inverse, len(coords), kind)
        if sparse_output:
            if keep_dims:
                full = np.zeros([len(coords), len(out_shape)], np.int64)
                full[:, group] = coords
                coords = full
            return (coords.astype(np.int64).reshape(len(coords), len(out_shape)), reduced,
                    np.asarray(out_shape, np.int64))
        out = np.zeros(out_shape, input_values.dtype)
        if len(coords):
            # Reduced dims kept with size 1 do not move the flat position.
            kept = [int(input_shape[d]) for d in group]
            flat = np.ravel_multi_index(tuple(coords.T), kept) if group else \
                np.zeros(len(coords), np.int64)
            out.reshape(-1)[flat] = reduced
        return out
    return kernel


def _reduce_shape(op):
    with_rank(op.inputs[0].shape, 2)
    with_rank(op.inputs[1].shape, 1)
    dense = static_shape_from_tensor(op.inputs[2])
    axes = static_value(op.inputs[3])
    keep = op.get_attr("keep_dims")
    if dense.ndims is None or axes is None:
        return unknown_shape()
    ndims = dense.ndims
    reduced = {(int(a) + ndims) % ndims for a in np.reshape(axes, -1)} if ndims else set()
    if keep:
        return TensorShape([1 if d in reduced else dense[d] for d in range(ndims)])
    return TensorShape([dense[d] for d in range(ndims) if d not in reduced])


def _reduce_sparse_shape(op):
    dims = _reduce_shape(op)
    rank = dims.ndims
    return [TensorShape([None, rank]), TensorShape([None]), TensorShape([rank])]


def _reduce_sum_grad(op, out_grad):
    # TF's _SparseReduceSumGrad: the output gradient reshaped to keep the reduced dims
    # (size 1), then gathered at each entry's index scaled down to those dims.
    indices, shape, axes = op.inputs[0], op.inputs[2], op.inputs[3]
    rank = A.size(shape)
    axes = (M.cast(axes, _dtypes.int32) + rank) % rank
    reduced = R.reduce_any(M.equal(A.expand_dims(M.range(rank), 1),
                                   A.expand_dims(A.reshape(axes, [-1]), 0)), axis=1)
    kept = G.where(reduced, GEN.ones_like(shape), shape)
    grad = A.reshape(out_grad, kept)
    scale = shape // kept
    return [None, G.gather_nd(grad, indices // scale), None, None]


_REDUCE_INPUTS = ("input_indices: int64", "input_values: T", "input_shape: int64",
                  "reduction_axes: int32")
_SPARSE_OUT = ("output_indices: int64", "output_values: T", "output_shape: int64")
register(OpDef("SparseReduceSum", inputs=_REDUCE_INPUTS, outputs=("output: T",),
               attrs={"T": _dtypes.NUMBERS, "keep_dims": False}, shape=_reduce_shape,
               host=_reduce_kernel("sum", False), grad=_reduce_sum_grad))
register(OpDef("SparseReduceSumSparse", inputs=_REDUCE_INPUTS, outputs=_SPARSE_OUT,
               attrs={"T": _dtypes.NUMBERS, "keep_dims": False}, shape=_reduce_sparse_shape,
               host=_reduce_kernel("sum", True)))
register(OpDef("SparseReduceMax", inputs=_REDUCE_INPUTS, outputs=("output: T",),
               attrs={"T": _dtypes.REAL, "keep_dims": False}, shape=_reduce_shape,
               host=_reduce_kernel("max", False)))
register(OpDef("SparseReduceMaxSparse", inputs=_REDUCE_INPUTS, outputs=_SPARSE_OUT,
               attrs={"T": _dtypes.REAL, "keep_dims": False}, shape=_reduce_sparse_shape,
               host=_reduce_kernel("max", True)))


def _reduction_axes(sp_input, axis):
    """TF's _ReductionDims for a SparseTensor: all axes when `axis` is None."""
    if axis is not None:
        return axis
    rank = sp_input.shape.ndims
    if rank is None and sp_input.dense_shape.shape.is_fully_defined():
        rank = sp_input.dense_shape.shape[0].value
    if rank is not None:
        return convert_to_tensor(np.arange(rank, dtype=np.int32))
    return M.range(0, A.size(sp_input.dense_shape))


def _reducer(op_type, sparse_output, doc):
    def fn(sp_input, axis=None, keepdims=None, reduction_axes=None, keep_dims=None):
        keepdims = deprecated_argument_lookup("keepdims", keepdims, "keep_dims", keep_dims)
        axis = deprecated_argument_lookup("axis", axis, "reduction_axes", reduction_axes)
        keepdims = bool(keepdims) if keepdims is not None else False
        sp_input = convert_to_sparse_tensor(sp_input)
        out = apply_op(op_type, input_indices=sp_input.indices, input_values=sp_input.values,
                       input_shape=sp_input.dense_shape,
                       reduction_axes=_reduction_axes(sp_input, axis), keep_dims=keepdims)
        return SparseTensor(*out) if sparse_output else out
    fn.__doc__ = doc
    return fn


sparse_reduce_sum = _reducer("SparseReduceSum", False, "Sums a SparseTensor's entries over "
                             "`axis` (all by default): a dense Tensor.")
sparse_reduce_sum_sparse = _reducer("SparseReduceSumSparse", True, "Sums a SparseTensor's "
                                    "entries over `axis`: a SparseTensor of the sums.")
sparse_reduce_max = _reducer("SparseReduceMax", False, "The max of a SparseTensor's present "
                             "entries over `axis` (0 where none): a dense Tensor.")
sparse_reduce_max_sparse = _reducer("SparseReduceMaxSparse", True, "The max of a "
                                    "SparseTensor's entries over `axis`: a SparseTensor.")
for _f, _n in ((sparse_reduce_sum, "sparse_reduce_sum"),
               (sparse_reduce_sum_sparse, "sparse_reduce_sum_sparse"),
               (sparse_reduce_max, "sparse_reduce_max"),
               (sparse_reduce_max_sparse, "sparse_reduce_max_sparse")):
    _f.__name__ = _f.__qualname__ = _n


# -- SparseSoftmax (compiled) ---------------------------------------------------------------
def _softmax_lower(sp_indices, sp_values, sp_shape):
    if sp_shape.shape[0] < 2:
        raise kernel_error(f"Input should have rank >= 2, but received shape: "
                           f"{_summary(sp_shape) if isinstance(sp_shape, np.ndarray) else ''}")
    n = sp_values.shape[0]
    if n == 0:
        return sp_values
    lead = sp_indices[:, :-1]
    starts = jnp.concatenate([jnp.ones([1], bool), jnp.any(lead[1:] != lead[:-1], axis=1)])
    group = jnp.cumsum(starts) - 1
    top = jnp.full([n], -jnp.inf, sp_values.dtype).at[group].max(sp_values)
    e = jnp.exp(sp_values - top[group])
    total = jnp.zeros([n], sp_values.dtype).at[group].add(e)
    return e / total[group]


def _softmax_grad(op, grad):
    indices, shape = op.inputs[0], op.inputs[2]
    out = op.outputs[0]
    product = SparseTensor(indices, out * grad, shape)
    sums = -sparse_reduce_sum(product, [-1], keepdims=True)
    summed = sparse_dense_cwise_add(SparseTensor(indices, grad, shape), sums)
    return [None, summed.values * out, None]


def _softmax_shape(op):
    with_rank(op.inputs[0].shape, 2)
    with_rank(op.inputs[2].shape, 1)
    return with_rank(op.inputs[1].shape, 1)


register(OpDef(
    "SparseSoftmax", inputs=("sp_indices: int64", "sp_values: T", "sp_shape: int64"),
    outputs=("output: T",), attrs={"T": (_dtypes.float32, _dtypes.float64)},
    shape=_softmax_shape, lower=_softmax_lower, grad=_softmax_grad))


def sparse_softmax(sp_input, name=None):
    """Softmax over the last dimension of each innermost row's present entries (implicit
    zeros take no part); the result has the input's indices."""
    with _graph.name_scope(name, "SparseSoftmax", [sp_input.indices, sp_input.values]):
        values = apply_op("SparseSoftmax", sp_indices=sp_input.indices,
                          sp_values=sp_input.values, sp_shape=sp_input.dense_shape)
        return SparseTensor(sp_input.indices, values, sp_input.dense_shape)


# -- SparseSparse{Maximum,Minimum} (host) ---------------------------------------------------
def _min_max_kernel(fn):
    def kernel(a_indices, a_values, a_shape, b_indices, b_values, b_shape):
        _check_pair(a_indices, a_values, a_shape, b_indices, b_values, b_shape)
        indices, in_a, in_b = _union(a_indices, b_indices)
        # The implicit zeros of either side take part, as in TF's kernel.
        zero = np.zeros([], a_values.dtype)
        a = np.where(in_a >= 0, a_values[np.maximum(in_a, 0)] if len(a_values) else zero, zero)
        b = np.where(in_b >= 0, b_values[np.maximum(in_b, 0)] if len(b_values) else zero, zero)
        return indices.reshape(-1, a_shape.shape[0]), fn(a, b).astype(a_values.dtype)
    return kernel


def _not_implemented(op_type):
    def grad_fn(op, *grads):
        raise NotImplementedError(f"Gradient for {op_type} is not implemented.")
    return grad_fn


def _min_max_shape(op):
    # TF's SparseSparseMinOrMaxShapeFn: rank checks only.
    for i, rank in enumerate((2, 1, 1, 2, 1, 1)):
        with_rank(op.inputs[i].shape, rank)
    return [TensorShape([None, None]), TensorShape([None])]


for _name, _fn, _types in (("SparseSparseMaximum", np.maximum, _dtypes.REAL),
                           ("SparseSparseMinimum", np.minimum, _dtypes.NUMBERS)):
    register(OpDef(
        _name, inputs=("a_indices: int64", "a_values: T", "a_shape: int64", "b_indices: int64",
                       "b_values: T", "b_shape: int64"),
        outputs=("output_indices: int64", "output_values: T"), attrs={"T": _types},
        shape=_min_max_shape, host=_min_max_kernel(_fn), grad=_not_implemented(_name)))


def _min_max(op_type, scope):
    def fn(sp_a, sp_b, name=None):
        with _graph.name_scope(name, scope, [sp_a.indices, sp_a.values, sp_b.indices,
                                             sp_b.values]) as name:
            indices, values = apply_op(op_type, name=name, a_indices=sp_a.indices,
                                       a_values=sp_a.values, a_shape=sp_a.dense_shape,
                                       b_indices=sp_b.indices, b_values=sp_b.values,
                                       b_shape=sp_b.dense_shape)
        return SparseTensor(indices, values, sp_a.dense_shape)
    return fn


sparse_maximum = _min_max("SparseSparseMaximum", "SparseSparseMaximum")
sparse_maximum.__name__ = sparse_maximum.__qualname__ = "sparse_maximum"
sparse_maximum.__doc__ = "The elementwise max of two SparseTensors of one shape."
sparse_minimum = _min_max("SparseSparseMinimum", "SparseSparseMinimum")
sparse_minimum.__name__ = sparse_minimum.__qualname__ = "sparse_minimum"
sparse_minimum.__doc__ = "The elementwise min of two SparseTensors of one shape."


# -- SparseTensorDenseMatMul (compiled) --------------------------------------------------------
def _spmm_lower(a_indices, a_values, a_shape, b, adjoint_a, adjoint_b):
    if b.ndim != 2:
        raise kernel_error("Tensor 'b' is not a matrix")
    if a_shape.ndim != 1:
        raise kernel_error("Tensor 'a_shape' is not a vector")
    if a_shape.shape[0] != 2:
        raise kernel_error("Tensor 'a_shape' must have 2 elements")
    if a_values.ndim != 1:
        raise kernel_error("Tensor 'a_values' is not a vector")
    if a_indices.ndim != 2:
        raise kernel_error("Tensor 'a_indices' is not a matrix")
    if a_indices.shape[0] != a_values.shape[0]:
        raise kernel_error("Number of rows of a_indices does not match number of entries in "
                           "a_values")
    if a_indices.shape[1] != 2:
        raise kernel_error("Number of columns of a_indices does not match number of entries "
                           "in a_shape")
    shape = static_input(a_shape, "SparseTensorDenseMatMul", "a_shape").astype(np.int64)
    outer_left, inner_left = (shape[1], shape[0]) if adjoint_a else (shape[0], shape[1])
    outer_right, inner_right = (b.shape[0], b.shape[1]) if adjoint_b else (b.shape[1],
                                                                           b.shape[0])
    if inner_left != inner_right:
        raise kernel_error(f"Cannot multiply A and B because inner dimension does not match: "
                           f"{inner_left} vs. {inner_right}.  Did you forget a transpose?  "
                           f"Dimensions of A: [{shape[0]}, {shape[1]}).  Dimensions of B: "
                           f"{K.shape_str(b.shape)}")
    lhs, rhs = (1, 0) if adjoint_a else (0, 1)
    rows, cols = a_indices[:, lhs].astype(np.int64), a_indices[:, rhs].astype(np.int64)

    def message(rows_, cols_):
        for i, (m, k) in enumerate(zip(rows_.tolist(), cols_.tolist())):
            if not 0 <= k < inner_left:
                return f"k ({k}) from index[{i},{rhs}] out of bounds (>={inner_left})"
            if not 0 <= m < outer_left:
                return f"m ({m}) from index[{i},{lhs}] out of bounds (>={outer_left})"
        return None

    ok = jnp.all((cols >= 0) & (cols < inner_left) & (rows >= 0) & (rows < outer_left))
    effects.check(ok, message, data=(rows, cols))
    values = jnp.conj(a_values) if adjoint_a else a_values
    bm = jnp.conj(b.T) if adjoint_b else b
    picked = jnp.take(bm, jnp.clip(cols, 0, max(int(inner_left) - 1, 0)), axis=0)
    out = jnp.zeros((int(outer_left), int(outer_right)), b.dtype)
    return out.at[jnp.where(rows < 0, outer_left, rows)].add(values[:, None] * picked,
                                                            mode="drop")


def _spmm_shape(op):
    with_rank(op.inputs[0].shape, 2)
    with_rank(op.inputs[1].shape, 1)
    a_shape = static_shape_from_tensor(op.inputs[2])
    a_shape = a_shape if a_shape.ndims is not None else unknown_shape(2)
    with_rank(a_shape, 2)
    b = with_rank(op.inputs[3].shape, 2)
    adj_a, adj_b = op.get_attr("adjoint_a"), op.get_attr("adjoint_b")
    out_left = a_shape[1 if adj_a else 0]
    out_right = b[0 if adj_b else 1]
    inner_left = a_shape[0 if adj_a else 1]
    inner_right = b[1 if adj_b else 0]
    if inner_left.value is not None and inner_right.value is not None and \
            inner_left.value != inner_right.value:
        raise ValueError(f"Dimensions must be equal, but are {inner_left.value} and "
                         f"{inner_right.value}")
    return TensorShape([out_left, out_right])


def _spmm_grad(op, grad):
    a_indices, a_values, a_shape, b = op.inputs
    adj_a, adj_b = op.get_attr("adjoint_a"), op.get_attr("adjoint_b")
    if a_values.dtype.is_complex:
        raise NotImplementedError("SparseTensorDenseMatMul op does not support complex "
                                  "gradients.")
    b_grad = apply_op("SparseTensorDenseMatMul", a_indices=a_indices, a_values=a_values,
                      a_shape=a_shape, b=grad, adjoint_a=not adj_a)
    if adj_b:
        b_grad = A.transpose(b_grad)
    rows, cols = a_indices[:, 0], a_indices[:, 1]
    parts_a = G.gather(grad, rows if not adj_a else cols)
    parts_b = G.gather(b if not adj_b else A.transpose(b), cols if not adj_a else rows)
    return [None, R.reduce_sum(parts_a * parts_b, axis=1), None, b_grad]


register(OpDef(
    "SparseTensorDenseMatMul", inputs=("a_indices: Tindices", "a_values: T", "a_shape: int64",
                                       "b: T"),
    outputs=("product: T",),
    attrs={"T": _dtypes.NUMBERS, "Tindices": _dtypes.INDEX, "adjoint_a": False,
           "adjoint_b": False},
    type_defaults={"Tindices": _I64}, shape=_spmm_shape, lower=_spmm_lower, grad=_spmm_grad))


def sparse_tensor_dense_matmul(sp_a, b, adjoint_a=False, adjoint_b=False, name=None):
    """The dense product of SparseTensor `sp_a` (rank 2) and dense matrix `b`;
    `adjoint_*` conjugate-transpose an operand first."""
    sp_a = convert_to_sparse_tensor(sp_a)
    with _graph.name_scope(name, "SparseTensorDenseMatMul",
                           [sp_a.indices, sp_a.values, b]):
        b = convert_to_tensor(b, name="b")
        return apply_op("SparseTensorDenseMatMul", a_indices=sp_a.indices,
                        a_values=sp_a.values, a_shape=sp_a.dense_shape, b=b,
                        adjoint_a=bool(adjoint_a), adjoint_b=bool(adjoint_b))


# -- SparseMatMul: TF1's dense matmul with sparsity hints (compiled) ---------------------------
_HINT_TYPES = (_dtypes.float32, _dtypes.bfloat16)


def _sparse_matmul_lower(a, b, transpose_a, transpose_b):
    a = (a.T if transpose_a else a).astype(jnp.float32)
    b = (b.T if transpose_b else b).astype(jnp.float32)
    return jnp.matmul(a, b)


def _sparse_matmul_shape(op):
    a = with_rank(op.inputs[0].shape, 2)
    b = with_rank(op.inputs[1].shape, 2)
    ta, tb = op.get_attr("transpose_a"), op.get_attr("transpose_b")
    inner_a, inner_b = a[0 if ta else 1], b[1 if tb else 0]
    if inner_a.value is not None and inner_b.value is not None and \
            inner_a.value != inner_b.value:
        raise ValueError(f"Dimensions must be equal, but are {inner_a.value} and "
                         f"{inner_b.value}")
    return TensorShape([a[1 if ta else 0], b[0 if tb else 1]])


def _sparse_matmul_grad(op, grad):
    # TF's _SparseMatMulGrad: each input's gradient is a SparseMatMul carrying the
    # hints, cast back to that input's dtype.
    a, b = op.inputs
    ta, tb = op.get_attr("transpose_a"), op.get_attr("transpose_b")
    hint = {a: op.get_attr("a_is_sparse"), b: op.get_attr("b_is_sparse"),
            grad: grad.op.type == "ReluGrad"}

    def product(x, y, dtype, transpose_a=False, transpose_b=False):
        hx, hy = hint.get(x, False), hint.get(y, False)
        if transpose_b:
            y = A.transpose(y)
        out = apply_op("SparseMatMul", a=x, b=y, transpose_a=transpose_a, transpose_b=False,
                       a_is_sparse=hx, b_is_sparse=hy)
        return out if out.dtype == dtype else M.cast(out, dtype)

    if not ta and not tb:
        return [product(grad, b, a.dtype, transpose_b=True),
                product(a, grad, b.dtype, transpose_a=True)]
    if not ta and tb:
        return [product(grad, b, a.dtype), product(grad, a, b.dtype, transpose_a=True)]
    if ta and not tb:
        return [product(b, grad, a.dtype, transpose_b=True), product(a, grad, b.dtype)]
    return [product(b, grad, a.dtype, transpose_a=True, transpose_b=True),
            product(grad, a, b.dtype, transpose_a=True, transpose_b=True)]


register(OpDef(
    "SparseMatMul", inputs=("a: Ta", "b: Tb"), outputs=("product: float32",),
    attrs={"Ta": _HINT_TYPES, "Tb": _HINT_TYPES, "transpose_a": False, "transpose_b": False,
           "a_is_sparse": False, "b_is_sparse": False},
    type_defaults={"Ta": _dtypes.float32, "Tb": _dtypes.float32},
    shape=_sparse_matmul_shape, lower=_sparse_matmul_lower, grad=_sparse_matmul_grad))


def sparse_matmul(a, b, transpose_a=False, transpose_b=False, a_is_sparse=False,
                  b_is_sparse=False, name=None):
    """a @ b in float32 for float32/bfloat16 operands; the `*_is_sparse` hints pick a
    kernel in TF and change nothing here (XLA chooses its own)."""
    return apply_op("SparseMatMul", name=name, a=a, b=b, transpose_a=bool(transpose_a),
                    transpose_b=bool(transpose_b), a_is_sparse=bool(a_is_sparse),
                    b_is_sparse=bool(b_is_sparse))
