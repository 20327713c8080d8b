"""Sparse segment reductions: `sparse_segment_sum/mean/sqrt_n` reduce the rows
`data[indices]` by sorted `segment_ids` (dense tensors; the SparseTensor forms belong
to tf.sparse).

Without `num_segments` the output has last id + 1 rows, known only from the data: host
records with a NumPy kernel. With it (SparseSegment*WithNumSegments) the records are
compiled and TF's CPU errors (unsorted or out-of-range ids, indices out of range) are
raised by a run-time check in the compiled program (compiler/effects.py). Segments
without ids hold 0, as in TF. SparseSegmentMeanGrad/SqrtNGrad are TF's gradient kernels.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from tensorflux._src.compiler import effects
from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework.tensor_shape import TensorShape, unknown_shape
from tensorflux._src.ops.array import array_ops as A
from tensorflux._src.ops.array import gather_ops as G
from tensorflux._src.ops.math.segment_ops import unsorted_segment_sum
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.op_helpers import (kernel_error, merge_shapes, static_input,
                                            static_scalar, with_rank, with_rank_at_least)
from tensorflux._src.ops.registry import OpDef, register

__all__ = ["sparse_segment_mean", "sparse_segment_sqrt_n", "sparse_segment_sum"]

_MEAN_TYPES = (_dtypes.float32, _dtypes.float64)


# -- validation, shared by the host kernels and the compiled check ----------------------------
def _first_error(indices, segment_ids, rows, data_rows):
    """TF's message for the first problem its CPU kernel meets walking the segments in
    order (for each: ids increasing, id in [0, rows), its indices in range), or None."""
    n = segment_ids.shape[0]
    if n == 0:
        return None
    starts = np.flatnonzero(np.r_[True, segment_ids[1:] != segment_ids[:-1]])
    seg = segment_ids[starts]
    decreasing = np.r_[seg[:-1] > seg[1:], False]
    outside = (seg < 0) | (seg >= rows)
    bad_index = (indices < 0) | (indices >= data_rows)
    seg_of_index = np.searchsorted(starts, np.arange(n), side="right") - 1
    bad_in_segment = np.zeros(len(starts), bool)
    bad_in_segment[seg_of_index[bad_index]] = True
    bad = np.flatnonzero(decreasing | outside | bad_in_segment)
    if not bad.size:
        return None
    k = bad[0]
    if decreasing[k]:
        return "segment ids are not increasing"
    if outside[k]:
        return (f"Segment id {seg[k]} out of range [0, {rows}), possibly because "
                f"'segment_ids' input is not sorted.")
    i = np.flatnonzero(bad_index & (seg_of_index == k))[0]
    return f"Bad: indices[{i}] == {indices[i]} out of range [0, {data_rows})"


def _check_vectors(indices, segment_ids):
    if indices.ndim != 1:
        raise kernel_error("indices should be a vector.")
    if segment_ids.ndim != 1:
        raise kernel_error("segment_ids should be a vector.")
    if indices.shape[0] != segment_ids.shape[0]:
        raise kernel_error("segment_ids and indices should have same size.")


def _output_rows(segment_ids, num_segments):
    last_plus_one = int(segment_ids[-1]) + 1 if segment_ids.shape[0] else 0
    if num_segments is None:
        return last_plus_one
    if num_segments < last_plus_one:
        raise kernel_error("segment ids must be < num_segments")
    return num_segments


def _scaled(sums, counts, kind):
    counts = counts.reshape(counts.shape + (1,) * (sums.ndim - 1))
    if kind == "mean":
        return sums / counts
    if kind == "sqrtn":
        return sums / np.sqrt(counts).astype(sums.dtype)
    return sums


# -- host forms (no num_segments) -----------------------------------------------------------------
def _host_kernel(kind):
    def kernel(data, indices, segment_ids):
        _check_vectors(indices, segment_ids)
        rows = _output_rows(segment_ids, None)
        if rows < 0 or (segment_ids.shape[0] and rows == 0):
            raise kernel_error("segment ids must be >= 0")
        out = np.zeros((rows,) + data.shape[1:], data.dtype)
        if segment_ids.shape[0] == 0:
            return out
        message = _first_error(indices, segment_ids, rows, data.shape[0])
        if message is not None:
            raise kernel_error(message)
        starts = np.flatnonzero(np.r_[True, segment_ids[1:] != segment_ids[:-1]])
        sums = np.add.reduceat(data[indices], starts, axis=0)
        counts = np.diff(np.r_[starts, segment_ids.shape[0]]).astype(data.dtype)
        out[segment_ids[starts]] = _scaled(sums, counts, kind)
        return out
    return kernel


# -- compiled forms (with num_segments) ---------------------------------------------------------
def _compiled_lower(op_type, kind):
    def lower(data, indices, segment_ids, num_segments):
        rows = int(static_input(num_segments, op_type, "num_segments"))
        if rows < 0:
            raise kernel_error("segment ids must be >= 0")
        _check_vectors(indices, segment_ids)
        data_rows = data.shape[0]
        if isinstance(segment_ids, jax.core.Tracer) or isinstance(indices, jax.core.Tracer):
            ok = jnp.all(segment_ids[1:] >= segment_ids[:-1])
            ok &= jnp.all((segment_ids >= 0) & (segment_ids < rows))
            ok &= jnp.all((indices >= 0) & (indices < data_rows))

            def message(idx, ids):
                if ids.shape[0] and ids[-1] + 1 > rows:
                    return "segment ids must be < num_segments"
                return _first_error(idx, ids, rows, data_rows)
            effects.check(ok, message, data=(indices, segment_ids))
        else:
            _output_rows(segment_ids, rows)
            error = _first_error(np.asarray(indices), np.asarray(segment_ids), rows, data_rows)
            if error is not None:
                raise kernel_error(error)
        gathered = jnp.take(data, jnp.clip(indices, 0, max(data_rows - 1, 0)), axis=0)
        sums = jnp.zeros((rows,) + data.shape[1:], data.dtype).at[segment_ids].add(
            gathered, mode="drop")
        if kind == "sum":
            return sums
        counts = jnp.zeros((rows,), data.dtype).at[segment_ids].add(1, mode="drop")
        counts = counts.reshape((rows,) + (1,) * (data.ndim - 1))
        scale = counts if kind == "mean" else jnp.sqrt(counts)
        return jnp.where(counts > 0, sums / jnp.where(counts > 0, scale, 1), 0)
    return lower


# -- shapes ------------------------------------------------------------------------------------
def _row_count(op, index, what):
    """The static value of scalar input `index` (a row count; None when unknown)."""
    with_rank(op.inputs[index].shape, 0)
    n = static_scalar(op.inputs[index])
    if n is not None and n < 0:
        raise ValueError(f"Cannot specify a negative value for {what}")
    return n


def _sparse_shape(op):
    data = with_rank_at_least(op.inputs[0].shape, 1)
    merge_shapes(with_rank(op.inputs[1].shape, 1), with_rank(op.inputs[2].shape, 1))
    rows = _row_count(op, 3, "num_segments") if len(op.inputs) == 4 else None
    if data.ndims is None:
        return unknown_shape()
    return TensorShape([rows]).concatenate(data[1:])


def _grad_shape(op):
    grad = with_rank_at_least(op.inputs[0].shape, 1)
    merge_shapes(op.inputs[2].shape, with_rank(op.inputs[1].shape, 1))
    dim0 = _row_count(op, 3, "output_dim0")
    if grad.ndims is None:
        return unknown_shape()
    return TensorShape([dim0]).concatenate(grad[1:])


# -- gradients ---------------------------------------------------------------------------------
def _dim0(op):
    return A.shape(op.inputs[0])[0]


def _sum_grad(op, grad):
    data, indices, segment_ids = op.inputs[:3]
    dx = unsorted_segment_sum(G.gather(grad, segment_ids), indices, _dim0(op))
    return [dx] + [None] * (len(op.inputs) - 1)


def _scaled_grad(grad_op):
    def grad_fn(op, grad):
        dx = apply_op(grad_op, grad=grad, indices=op.inputs[1], segment_ids=op.inputs[2],
                      output_dim0=_dim0(op))
        return [dx] + [None] * (len(op.inputs) - 1)
    return grad_fn


def _grad_lower(kind):
    def lower(grad, indices, segment_ids, output_dim0):
        dim0 = int(static_input(output_dim0, "SparseSegmentMeanGrad", "output_dim0"))
        counts = jnp.zeros((grad.shape[0],), grad.dtype).at[segment_ids].add(1, mode="drop")
        scale = 1 / (counts if kind == "mean" else jnp.sqrt(counts))
        rows = jnp.take(grad, segment_ids, axis=0, mode="clip")
        rows = rows * jnp.take(scale, segment_ids, mode="clip").reshape(
            (-1,) + (1,) * (grad.ndim - 1))
        out = jnp.zeros((dim0,) + grad.shape[1:], grad.dtype)
        return out.at[indices].add(rows, mode="drop")
    return lower


# -- records and wrappers ------------------------------------------------------------------------
_INPUTS = ("data: T", "indices: Tidx", "segment_ids: int32")
for _name, _kind, _types, _grad in (
        ("SparseSegmentSum", "sum", _dtypes.REAL, _sum_grad),
        ("SparseSegmentMean", "mean", _MEAN_TYPES, _scaled_grad("SparseSegmentMeanGrad")),
        ("SparseSegmentSqrtN", "sqrtn", _MEAN_TYPES, _scaled_grad("SparseSegmentSqrtNGrad"))):
    register(OpDef(_name, inputs=_INPUTS, outputs=("output: T",),
                   attrs={"T": _types, "Tidx": _dtypes.INDEX},
                   type_defaults={"Tidx": _dtypes.int32}, shape=_sparse_shape,
                   host=_host_kernel(_kind), grad=_grad))
    register(OpDef(_name + "WithNumSegments", inputs=_INPUTS + ("num_segments: Tnumsegments",),
                   outputs=("output: T",),
                   attrs={"T": _types, "Tidx": _dtypes.INDEX, "Tnumsegments": _dtypes.INDEX},
                   type_defaults={"Tidx": _dtypes.int32, "Tnumsegments": _dtypes.int32},
                   shape=_sparse_shape, lower=_compiled_lower(_name + "WithNumSegments", _kind),
                   grad=_grad))
for _name, _kind in (("SparseSegmentMeanGrad", "mean"), ("SparseSegmentSqrtNGrad", "sqrtn")):
    register(OpDef(_name, inputs=("grad: T", "indices: Tidx", "segment_ids: int32",
                                  "output_dim0: int32"), outputs=("output: T",),
                   attrs={"T": _MEAN_TYPES, "Tidx": _dtypes.INDEX},
                   type_defaults={"Tidx": _dtypes.int32}, shape=_grad_shape,
                   lower=_grad_lower(_kind)))


def _sparse_fn(public_name, op_type, doc):
    def fn(data, indices, segment_ids, name=None, num_segments=None):
        if num_segments is not None:
            return apply_op(op_type + "WithNumSegments", name=name, data=data, indices=indices,
                            segment_ids=segment_ids, num_segments=num_segments)
        return apply_op(op_type, name=name, data=data, indices=indices,
                        segment_ids=segment_ids)
    fn.__name__ = fn.__qualname__ = public_name
    fn.__doc__ = doc
    fn.__module__ = __name__
    return fn


_DOC = (" of the rows data[indices] per sorted segment id; `num_segments` fixes the number "
        "of output rows (else the last id + 1).")
sparse_segment_sum = _sparse_fn("sparse_segment_sum", "SparseSegmentSum", "Sums" + _DOC)
sparse_segment_mean = _sparse_fn("sparse_segment_mean", "SparseSegmentMean", "Means" + _DOC)
sparse_segment_sqrt_n = _sparse_fn("sparse_segment_sqrt_n", "SparseSegmentSqrtN",
                                   "Sums divided by sqrt(count)" + _DOC)
