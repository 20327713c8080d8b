"""Ops with data-dependent output shapes, run on the host with NumPy kernels.

XLA needs static shapes, so these are `host` records: a run computes their inputs,
runs their kernels on the host, and compiles what consumes their outputs into a later
step (compiler/run_plan.py).

- `Unique`, `UniqueWithCounts`, `ListDiff` (tf.setdiff1d): order of first occurrence,
  as TF's hash-map kernels produce; not differentiable, as in TF.
- `DynamicPartition` / `DynamicStitch`: each other's gradients, built as TF builds them.
- `tf.boolean_mask` is TF1's composition of Reshape, Where, Squeeze and GatherV2, so its
  gradient is theirs.

Kernels raise TF's CPU kernels' InvalidArgumentError messages. `Where` (tf.where with one
argument) is a host record too; it lives with tf.where in gather_ops.
"""

from __future__ import annotations

import collections

import numpy as np

from tensorflux._src.framework import dispatch as _dispatch
from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.framework.tensor_shape import TensorShape, unknown_shape
from tensorflux._src.ops.array import array_ops as A
from tensorflux._src.ops.array.gather_ops import _index_str, gather, where_indices
from tensorflux._src.ops.math import math_ops, reduce_ops
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.op_helpers import dims_str, kernel_error, merge_shapes, with_rank
from tensorflux._src.ops.registry import OpDef, REQUIRED, register
from tensorflux._src.ops.shape_fns import static_value

__all__ = ["boolean_mask", "dynamic_partition", "dynamic_stitch", "setdiff1d", "unique",
           "unique_with_counts"]

_I = _dtypes.INDEX
# Element types TF registers the Unique/ListDiff kernels for (they hash the elements).
_HASHABLE = _dtypes.REAL + (_dtypes.bool, _dtypes.string)

Unique = collections.namedtuple("Unique", ["y", "idx"])
UniqueWithCounts = collections.namedtuple("UniqueWithCounts", ["y", "idx", "count"])
ListDiff = collections.namedtuple("ListDiff", ["out", "idx"])


def _merge_prefix(shape: TensorShape, prefix: TensorShape):
    """TF's MergePrefix check: `shape` must start with `prefix` (both ranks known)."""
    if shape.ndims is not None and shape.ndims < prefix.ndims:
        raise ValueError(f"Shape must be at least rank {prefix.ndims} but is rank "
                         f"{shape.ndims}")
    merge_shapes(shape[:prefix.ndims], prefix)


# -- ReportUninitializedVariables (tf.report_uninitialized_variables) -------------------------
register(OpDef(
    "ReportUninitializedVariables", inputs=("is_initialized: bool",),
    outputs=("names: string",), attrs={"names": REQUIRED},
    shape=lambda op: TensorShape([None]),
    host=lambda is_initialized, names: np.array(
        [n.encode() for n, ok in zip(names, np.reshape(is_initialized, -1)) if not ok],
        dtype=object).reshape(-1),
    not_differentiable=True,
))


# -- Unique / UniqueWithCounts ----------------------------------------------------------------
def _first_occurrences(values):
    """(positions of each distinct value's first occurrence, index of each element's value).

    Python's dict keeps TF's order of first occurrence. NaNs never equal each other, so
    each NaN is its own value, as in TF's std::unordered_map.
    """
    seen, first = {}, []
    idx = np.empty(len(values), np.int64)
    for i, v in enumerate(values.tolist()):
        j = seen.setdefault(v, len(first))
        if j == len(first):
            first.append(i)
        idx[i] = j
    return np.array(first, np.int64), idx


def _unique_kernel(x, out_idx, with_counts=False):
    if x.ndim != 1:
        raise kernel_error("unique expects a 1D vector.")
    first, idx = _first_occurrences(x)
    index_type = out_idx.as_numpy_dtype
    outs = [x[first], idx.astype(index_type)]
    if with_counts:
        outs.append(np.bincount(idx, minlength=len(first)).astype(index_type))
    return outs


def _unique_shape(op):
    # y and count have one entry per distinct value: only known when the op runs.
    x = with_rank(op.inputs[0].shape, 1)
    return [TensorShape([None]), x] + [TensorShape([None])] * (len(op.outputs) - 2)


register(OpDef("Unique", inputs=("x: T",), outputs=("y: T", "idx: out_idx"),
               attrs={"T": _HASHABLE, "out_idx": _I}, type_defaults={"out_idx": _dtypes.int32},
               shape=_unique_shape, host=_unique_kernel, not_differentiable=True))
register(OpDef("UniqueWithCounts", inputs=("x: T",),
               outputs=("y: T", "idx: out_idx", "count: out_idx"),
               attrs={"T": _HASHABLE, "out_idx": _I}, type_defaults={"out_idx": _dtypes.int32},
               shape=_unique_shape,
               host=lambda x, out_idx: _unique_kernel(x, out_idx, with_counts=True),
               not_differentiable=True))


def unique(x, out_idx=_dtypes.int32, name=None):
    """The distinct values of the 1-D `x` in order of first occurrence, and for each
    element of `x` the index of its value in them: `x == y[idx]`."""
    return Unique(*apply_op("Unique", name=name, x=x, out_idx=out_idx))


def unique_with_counts(x, out_idx=_dtypes.int32, name=None):
    """`tf.unique`, plus how many times each distinct value occurs in `x`."""
    return UniqueWithCounts(*apply_op("UniqueWithCounts", name=name, x=x, out_idx=out_idx))


# -- ListDiff (tf.setdiff1d) ------------------------------------------------------------------
def _list_diff_kernel(x, y, out_idx):
    if x.ndim != 1:
        raise kernel_error("x should be a 1D vector.")
    if y.ndim != 1:
        raise kernel_error("y should be a 1D vector.")
    drop = set(y.tolist())
    keep = np.array([i for i, v in enumerate(x.tolist()) if v not in drop], np.int64)
    return x[keep], keep.astype(out_idx.as_numpy_dtype)


def _list_diff_shape(op):
    for t in op.inputs:
        with_rank(t.shape, 1)
    return [TensorShape([None]), TensorShape([None])]


register(OpDef("ListDiff", inputs=("x: T", "y: T"), outputs=("out: T", "idx: out_idx"),
               attrs={"T": _HASHABLE, "out_idx": _I}, type_defaults={"out_idx": _dtypes.int32},
               shape=_list_diff_shape, host=_list_diff_kernel, not_differentiable=True))


def setdiff1d(x, y, index_dtype=_dtypes.int32, name=None):
    """The values of the 1-D `x` that are not in `y`, in x's order, and their positions
    in `x`."""
    return ListDiff(*apply_op("ListDiff", name=name, x=x, y=y, out_idx=index_dtype))


# -- DynamicPartition -------------------------------------------------------------------------
def _dynamic_partition_shape(op):
    data, partitions = (t.shape for t in op.inputs)
    n = op.get_attr("num_partitions")
    if partitions.ndims is None:
        return [unknown_shape()] * n
    _merge_prefix(data, partitions)
    # Each output has as many rows as partitions holds its index: known only at run time.
    return [TensorShape([None]).concatenate(data[partitions.ndims:])] * n


def _dynamic_partition_kernel(data, partitions, num_partitions):
    if data.shape[:partitions.ndim] != partitions.shape:
        raise kernel_error(f"data.shape must start with partitions.shape, got data.shape = "
                           f"{dims_str(data.shape)}, partitions.shape = "
                           f"{dims_str(partitions.shape)}")
    flat = partitions.reshape(-1)
    bad = np.flatnonzero((flat < 0) | (flat >= num_partitions))
    if bad.size:
        raise kernel_error(f"partitions{_index_str(partitions.shape, bad[0])} = "
                           f"{flat[bad[0]]} is not in [0, {num_partitions})")
    rows = data.reshape((flat.size,) + data.shape[partitions.ndim:])
    return [rows[flat == p] for p in range(num_partitions)]


def _dynamic_partition_grad(op, *grads):
    """TF's gradient: partition the positions of partitions' elements the same way, and
    stitch the output gradients back to those positions."""
    data, partitions = op.inputs
    prefix_shape = A.shape(partitions)
    original_indices = A.reshape(math_ops.range(reduce_ops.reduce_prod(prefix_shape)),
                                 prefix_shape)
    partitioned = dynamic_partition(original_indices, partitions,
                                    op.get_attr("num_partitions"))
    reconstructed = dynamic_stitch(partitioned, list(grads))
    return [A.reshape(reconstructed, A.shape(data)), None]


register(OpDef("DynamicPartition", inputs=("data: T", "partitions: int32"),
               outputs=("outputs: num_partitions * T",),
               attrs={"T": _dtypes.ALL, "num_partitions": REQUIRED},
               shape=_dynamic_partition_shape, host=_dynamic_partition_kernel,
               grad=_dynamic_partition_grad))


def dynamic_partition(data, partitions, num_partitions, name=None):
    """Splits `data` into `num_partitions` tensors: slice `data[js, ...]` goes to output
    `partitions[js]`, in row-major order of js. `data.shape` must start with
    `partitions.shape`."""
    if not isinstance(num_partitions, (int, np.integer)) or isinstance(num_partitions, bool):
        raise TypeError(f"Expected int for argument 'num_partitions' not {num_partitions!r}.")
    if num_partitions < 1:
        raise ValueError(f"Attr 'num_partitions' of 'DynamicPartition' Op passed "
                         f"{num_partitions} less than minimum 1.")
    return apply_op("DynamicPartition", name=name, data=data, partitions=partitions,
                    num_partitions=int(num_partitions))


# -- DynamicStitch ----------------------------------------------------------------------------
def _dynamic_stitch_shape(op):
    """[max index + 1 when every indices input is constant, else ?] + data's inner dims."""
    n = op.get_attr("N")
    all_constant, max_index, inner = True, -1, unknown_shape()
    for indices, data in zip(op.inputs[:n], op.inputs[n:]):
        value = static_value(indices)
        if value is None:
            all_constant = False
        if indices.shape.ndims is None:
            continue
        _merge_prefix(data.shape, indices.shape)
        inner = merge_shapes(inner, data.shape[indices.shape.ndims:])
        if value is not None and value.size:
            max_index = max(max_index, int(value.max()))
    return TensorShape([max_index + 1 if all_constant else None]).concatenate(inner)


def _check_stitch_shapes(indices, data):
    index0, data0 = indices[0], data[0]
    for i, (ix, d) in enumerate(zip(indices, data)):
        if d.shape[:ix.ndim] != ix.shape:
            raise kernel_error(f"data[{i}].shape = {dims_str(d.shape)} does not start with "
                               f"indices[{i}].shape = {dims_str(ix.shape)}")
        if i and d.shape[ix.ndim:] != data0.shape[index0.ndim:]:
            raise kernel_error(
                f"Need data[0].shape[{index0.ndim}:] = data[{i}].shape[{ix.ndim}:], got "
                f"data[0].shape = {dims_str(data0.shape)}, data[{i}].shape = "
                f"{dims_str(d.shape)}, indices[0].shape = {dims_str(index0.shape)}, "
                f"indices[{i}].shape = {dims_str(ix.shape)}")


def _dynamic_stitch_kernel(*args, N):  # noqa: N803 - TF's attr name
    indices, data = args[:N], args[N:]
    first_dim = max((int(ix.max()) for ix in indices if ix.size), default=-1) + 1
    _check_stitch_shapes(indices, data)
    inner = data[0].shape[indices[0].ndim:]
    # TF leaves rows no index names uninitialized; here they are zeros (empty strings).
    fill = b"" if data[0].dtype == object else 0
    merged = np.full((first_dim,) + inner, fill, data[0].dtype)
    for ix, d in zip(indices, data):
        flat = ix.reshape(-1)
        bad = np.flatnonzero(flat < 0)  # the largest index sized the output
        if bad.size:
            raise kernel_error(f"indices[{bad[0]}] is out of range")
        # Later slices win, as in TF's sequential kernel; numpy does not promise an order
        # for repeated indices in one assignment, so keep only each index's last slice.
        last = flat.size - 1 - np.unique(flat[::-1], return_index=True)[1]
        merged[flat[last]] = d.reshape((flat.size,) + inner)[last]
    return merged


def _dynamic_stitch_grad(op, grad):
    """TF's gradient: each data input gets the rows of grad its indices name (slices that
    a later index overwrote get them too, as in TF)."""
    n = op.get_attr("N")
    return [None] * n + [gather(grad, indices) for indices in op.inputs[:n]]


register(OpDef("DynamicStitch", inputs=("indices: N * int32", "data: N * T"),
               outputs=("merged: T",), attrs={"T": _dtypes.ALL},
               shape=_dynamic_stitch_shape, host=_dynamic_stitch_kernel,
               grad=_dynamic_stitch_grad))


def dynamic_stitch(indices, data, name=None):
    """Interleaves `data` into one tensor: merged[indices[m][i, ...], ...] = data[m][i, ...];
    where indices repeat, the later slice wins."""
    for arg, value in (("indices", indices), ("data", data)):
        if not isinstance(value, (list, tuple)):
            raise TypeError(f"Expected list for '{arg}' argument to 'DynamicStitch' Op, not "
                            f"{value!r}.")
    if len(data) != len(indices):
        raise ValueError(f"List argument 'data' to 'DynamicStitch' Op with length {len(data)} "
                         f"must match length {len(indices)} of argument 'indices'.")
    if not indices:
        raise ValueError("List argument 'indices' to 'DynamicStitch' Op with length 0 shorter "
                         "than minimum length 1.")
    return apply_op("DynamicStitch", name=name, indices=list(indices), data=list(data))


# -- boolean_mask: TF1's composition of existing ops ------------------------------------------
def boolean_mask(tensor, mask, name="boolean_mask", axis=None):
    """The elements (or slices along `axis`) of `tensor` where `mask` is true.

    `mask`'s k dimensions must match tensor's dims axis..axis+k-1; they are flattened into
    one and selected with gather(where(mask)), so the gradient flows through GatherV2 and
    Reshape.
    """
    with _graph.name_scope(name, values=[tensor, mask]):
        tensor = convert_to_tensor(tensor, name="tensor")
        mask = convert_to_tensor(mask, name="mask")
        shape_mask, shape_tensor = mask.shape, tensor.shape
        ndims_mask = shape_mask.ndims
        if ndims_mask == 0:
            raise ValueError("mask cannot be scalar.")
        if ndims_mask is None:
            raise ValueError("Number of mask dimensions must be specified, even if some "
                             "dimensions are None.  E.g. shape=[None] is ok, but shape=None "
                             "is not.")
        axis = 0 if axis is None else axis
        end = axis + ndims_mask
        shape_tensor[axis:end].assert_is_compatible_with(shape_mask)
        # Flatten the masked dimensions of `tensor` into one.
        leading_size = reduce_ops.reduce_prod(A.shape(tensor)[axis:end], [0])
        tensor = A.reshape(tensor, A.concat([A.shape(tensor)[:axis], [leading_size],
                                             A.shape(tensor)[end:]], 0))
        first_dim = shape_tensor[axis:end].num_elements()
        tensor.set_shape(shape_tensor[:axis].concatenate([first_dim])
                         .concatenate(shape_tensor[end:]))
        indices = A.squeeze(where_indices(A.reshape(mask, [-1])), axis=[1])
        return gather(tensor, indices, axis=axis)


# RaggedTensor (and other composite) arguments dispatch to registered handlers
# (framework/dispatch.py; TF's ragged_dispatch list).
_dispatch.add_dispatch_support_to(globals(), [
    "dynamic_partition",
])
