"""Counting: `bincount`, `confusion_matrix`, and the monotonicity tests
`is_non_decreasing` / `is_strictly_increasing`.

Bincount's output length is max(arr) + 1 unless minlength and maxlength pin it, so it is
a host record (NumPy kernel, TF's CPU checks and messages); values >= the output length
are ignored, as in TF's kernel. TF 1.15 sends weighted counts through UnsortedSegmentSum
(which fails on such values); here they go through Bincount too, whose gradient with
respect to the weights is the gather of the bins' gradient that UnsortedSegmentSum has.

confusion_matrix follows TF's composite: squeezable dimensions removed, int64 labels and
predictions checked (non-negative; below num_classes when given) by run-time asserts.
With num_classes known when the graph is built the matrix is a compiled
UnsortedSegmentSum of [n, n] cells; otherwise its size comes from the data and a host
Bincount counts the cells.
"""

from __future__ import annotations

import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.framework.tensor_shape import TensorShape, unknown_shape
from tensorflux._src.layers.weights_util import remove_squeezable_dimensions
from tensorflux._src.ops.array import array_ops as A
from tensorflux._src.ops.array import generator_ops as Gen
from tensorflux._src.ops.debug import check_ops
from tensorflux._src.ops.math import math_ops as M
from tensorflux._src.ops.math import reduce_ops as R
from tensorflux._src.ops.math.segment_ops import gather_drop_negatives, unsorted_segment_sum
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.op_helpers import dims_str, kernel_error, static_scalar, with_rank
from tensorflux._src.ops.registry import OpDef, register
from tensorflux._src.ops.shape_fns import static_value

__all__ = ["bincount", "confusion_matrix", "is_non_decreasing", "is_strictly_increasing"]

_BINCOUNT_TYPES = (_dtypes.int32, _dtypes.int64, _dtypes.float32, _dtypes.float64)


# -- Bincount ------------------------------------------------------------------------------------
def _bincount_shape(op):
    with_rank(op.inputs[1].shape, 0)
    size = static_scalar(op.inputs[1])
    if size is None:
        return unknown_shape(1)
    if size < 0:
        raise ValueError(f"size ({size}) must be non-negative")
    return TensorShape([size])


def _bincount_kernel(arr, size, weights):
    if np.ndim(size) != 0:
        raise kernel_error(f"Shape must be rank 0 but is rank {np.ndim(size)}")
    size = int(size)
    if size < 0:
        raise kernel_error(f"size ({size}) must be non-negative")
    has_weights = weights.size > 0
    if has_weights and weights.shape != arr.shape:
        raise kernel_error(f"If weights are passed, they must have the same shape "
                           f"({dims_str(weights.shape)}) as arr ({dims_str(arr.shape)})")
    if arr.size and arr.min() < 0:
        raise kernel_error("Input arr must be non-negative!")
    flat = arr.reshape(-1)
    keep = flat < size
    if has_weights and weights.dtype.kind == "i":  # exact sums (np.bincount adds floats)
        bins = np.zeros(size, weights.dtype)
        np.add.at(bins, flat[keep], weights.reshape(-1)[keep])
        return bins
    counted = weights.reshape(-1)[keep] if has_weights else None
    return np.bincount(flat[keep], weights=counted, minlength=size).astype(weights.dtype)


def _bincount_grad(op, grad):
    arr, _, weights = op.inputs
    if weights.shape.num_elements() == 0:
        return [None, None, None]
    return [None, None, gather_drop_negatives(grad, arr)]


register(OpDef("Bincount", inputs=("arr: int32", "size: int32", "weights: T"),
               outputs=("bins: T",), attrs={"T": _BINCOUNT_TYPES}, shape=_bincount_shape,
               host=_bincount_kernel, grad=_bincount_grad))


def bincount(arr, weights=None, minlength=None, maxlength=None, dtype=_dtypes.int32):
    """Counts of each value of the non-negative int32 `arr` (or sums of `weights` per
    value): length max(arr) + 1 (0 for an empty arr), at least `minlength`, at most
    `maxlength` (larger values are not counted)."""
    with _graph.name_scope("bincount"):
        arr = convert_to_tensor(arr, name="arr", dtype=_dtypes.int32)
        nonempty = M.greater(R.reduce_prod(A.shape(arr)), 0)
        output_size = M.cast(nonempty, _dtypes.int32) * (R.reduce_max(arr) + 1)
        if minlength is not None:
            minlength = convert_to_tensor(minlength, name="minlength", dtype=_dtypes.int32)
            output_size = M.maximum(minlength, output_size)
        if maxlength is not None:
            maxlength = convert_to_tensor(maxlength, name="maxlength", dtype=_dtypes.int32)
            output_size = M.minimum(maxlength, output_size)
        if weights is not None:
            weights = convert_to_tensor(weights, name="weights")
        else:
            weights = convert_to_tensor(np.zeros([0], _dtypes.as_dtype(dtype).as_numpy_dtype))
        return apply_op("Bincount", arr=arr, size=output_size, weights=weights)


# -- confusion_matrix ------------------------------------------------------------------------------
def _after(check, tensor):
    with _graph.control_dependencies([check]):
        return A.identity(tensor)


def confusion_matrix(labels, predictions, num_classes=None, dtype=_dtypes.int32, name=None,
                     weights=None):
    """The [num_classes, num_classes] matrix counting (or summing `weights` of) each
    (label, prediction) pair: rows are labels, columns predictions."""
    with _graph.name_scope(name, "confusion_matrix",
                           (predictions, labels, num_classes, weights)):
        labels, predictions = remove_squeezable_dimensions(
            convert_to_tensor(labels, name="labels"),
            convert_to_tensor(predictions, name="predictions"))
        predictions = M.cast(predictions, _dtypes.int64)
        labels = M.cast(labels, _dtypes.int64)
        labels = _after(check_ops.assert_non_negative(
            labels, message="`labels` contains negative values"), labels)
        predictions = _after(check_ops.assert_non_negative(
            predictions, message="`predictions` contains negative values"), predictions)
        if num_classes is None:
            num_classes = M.maximum(R.reduce_max(predictions), R.reduce_max(labels)) + 1
        else:
            num_classes_int64 = M.cast(num_classes, _dtypes.int64)
            labels = _after(check_ops.assert_less(
                labels, num_classes_int64, message="`labels` out of bound"), labels)
            predictions = _after(check_ops.assert_less(
                predictions, num_classes_int64, message="`predictions` out of bound"),
                predictions)
        dtype = _dtypes.as_dtype(dtype)
        if weights is not None:
            weights = convert_to_tensor(weights, name="weights")
            predictions.shape.assert_is_compatible_with(weights.shape)
            weights = M.cast(weights, dtype)
        values = Gen.ones_like(predictions, dtype=dtype) if weights is None else weights
        num_classes = convert_to_tensor(num_classes)
        n = static_value(num_classes)
        cells = labels * M.cast(num_classes, _dtypes.int64) + predictions
        if n is not None:
            n = int(n)
            flat = unsorted_segment_sum(values, cells, n * n)
            return A.reshape(flat, [n, n])
        return _confusion_on_host(cells, values, M.cast(num_classes, _dtypes.int32), dtype)


def _confusion_on_host(cells, values, n, dtype):
    size = n * n
    counted = dtype if dtype in _BINCOUNT_TYPES else (
        _dtypes.float64 if dtype.is_floating or dtype.is_complex else _dtypes.int64)
    flat = apply_op("Bincount", arr=M.cast(cells, _dtypes.int32), size=size,
                    weights=M.cast(values, counted))
    # The host step's result has a concrete length in the next compiled step, so the side
    # computed from it is static there (n itself comes from the data).
    side = M.cast(M.round(M.sqrt(M.cast(A.size(flat), _dtypes.float64))), _dtypes.int32)
    return M.cast(A.reshape(flat, A.stack([side, side])), dtype)


# -- monotonicity ----------------------------------------------------------------------------------
def _consecutive_pairs(x):
    x = convert_to_tensor(x, name="x")
    if not check_ops.is_numeric_tensor(x):
        raise TypeError(f"Expected x to be numeric, instead found: {x}")
    flat = A.reshape(x, [-1])
    return flat[:-1], flat[1:]


def is_non_decreasing(x, name=None):
    """True when x, flattened, never decreases (also for fewer than two elements)."""
    # Compares neighbours directly: TF's x[1:] - x[:-1] >= 0 can overflow for integers.
    with _graph.name_scope(name, "is_non_decreasing", [x]):
        left, right = _consecutive_pairs(x)
        return R.reduce_all(M.less_equal(left, right))


def is_strictly_increasing(x, name=None):
    """True when x, flattened, always increases (also for fewer than two elements)."""
    with _graph.name_scope(name, "is_strictly_increasing", [x]):
        left, right = _consecutive_pairs(x)
        return R.reduce_all(M.less(left, right))
