"""IndexedSlices and ops: densifying one (TF's conversion function) and the list helpers
`tf.gradients` aggregates sparse gradients with.

Importing this module registers the conversion, so an IndexedSlices can go wherever a
Tensor is expected: `tf.convert_to_tensor`, any op's input, `x * indexed_slices`. As in
TF1 it is an unsorted segment sum of the values into `dense_shape[0]` rows, which warns
when the dense tensor is large or of unknown size.
"""

from __future__ import annotations

import warnings

import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework.indexed_slices import IndexedSlices
from tensorflux._src.framework.operation import Tensor
from tensorflux._src.framework.tensor_conversion import register_tensor_conversion_function
from tensorflux._src.ops.array import array_ops, gather_ops, generator_ops
from tensorflux._src.ops.array.tensor_scatter import tensor_scatter_nd_add
from tensorflux._src.ops.math import math_ops
from tensorflux._src.ops.math.segment_ops import unsorted_segment_sum
from tensorflux._src.ops.shape_fns import static_value

# TF warns when a conversion makes a dense tensor of at least this many elements.
LARGE_SPARSE_NUM_ELEMENTS = 100000000


def _indexed_slices_to_tensor(value, dtype=None, name=None, as_ref=False):
    del as_ref
    dtype = None if dtype is None else _dtypes.as_dtype(dtype)
    if dtype and not dtype.is_compatible_with(value.dtype):
        raise ValueError(f"Tensor conversion requested dtype {dtype.name} for IndexedSlices "
                         f"with dtype {value.dtype.name}")
    if value.dense_shape is None:
        raise ValueError(f"Tensor conversion requested for IndexedSlices without "
                         f"dense_shape: {value}")
    dense_shape = value.dense_shape
    known = static_value(dense_shape) if isinstance(dense_shape, Tensor) else \
        np.asarray(dense_shape)
    if known is not None:
        num_elements = int(np.prod(known, dtype=np.int64))
        if num_elements >= LARGE_SPARSE_NUM_ELEMENTS:
            warnings.warn(f"Converting sparse IndexedSlices to a dense Tensor with "
                          f"{num_elements} elements. This may consume a large amount of "
                          f"memory.", stacklevel=3)
    else:
        warnings.warn("Converting sparse IndexedSlices to a dense Tensor of unknown shape. "
                      "This may consume a large amount of memory.", stacklevel=3)
    rows = dense_shape[0] if isinstance(dense_shape, Tensor) else int(known[0])
    # Densifying drops the rows of indices past the end, as it drops negative ones:
    # tf.gather reads zeros at fed out-of-range ids, and its gradient names those ids.
    # (UnsortedSegmentSum itself fails a run on them, as TF's CPU kernel does.)
    indices = value.indices
    in_range = math_ops.less(indices, math_ops.cast(rows, indices.dtype))
    indices = gather_ops.where_v2(in_range, indices, -generator_ops.ones_like(indices))
    return unsorted_segment_sum(value.values, indices, rows, name=name)


register_tensor_conversion_function(IndexedSlices, _indexed_slices_to_tensor)


def as_indexed_slices(x):
    """`x` as an IndexedSlices: a dense tensor becomes every row of itself (TF's
    math_ops._as_indexed_slices)."""
    if isinstance(x, IndexedSlices):
        return x
    if not isinstance(x, Tensor):
        raise TypeError(f"Not a Tensor or IndexedSlices: {type(x)}")
    x_shape = array_ops.shape(x)
    return IndexedSlices(x, math_ops.range(0, x_shape[0]), x_shape)


def as_indexed_slices_list(inputs):
    """Each input as an IndexedSlices, with int32 indices cast to int64 when the inputs
    mix the two (TF's math_ops._as_indexed_slices_list)."""
    if not isinstance(inputs, (list, tuple)):
        raise TypeError(f"Expected a list or tuple, not a {type(inputs)}")
    outputs = [as_indexed_slices(i) for i in inputs]
    int32 = [o for o in outputs if o.indices.dtype == _dtypes.int32]
    if not int32 or len(int32) == len(outputs):
        return outputs
    return [IndexedSlices(o.values, math_ops.cast(o.indices, _dtypes.int64), o.dense_shape)
            if o.indices.dtype == _dtypes.int32 else o for o in outputs]


def aggregate_indexed_slices(grads):
    """The sum of gradients of which at least one is an IndexedSlices, as TF1's
    `tf.gradients` forms it: every term as IndexedSlices, values and indices concatenated
    (dense terms contribute all their rows; nothing is densified). The result remembers
    its terms, for `dense_sum`."""
    terms = [g for g in grads if g is not None]
    grads = as_indexed_slices_list(terms)
    total = IndexedSlices(array_ops.concat([g.values for g in grads], 0),
                          array_ops.concat([g.indices for g in grads], 0),
                          grads[0].dense_shape)
    total._terms = tuple(t for g in terms for t in getattr(g, "_terms", (g,)))
    return total


def dense_sum(grad, rows):
    """`grad` as a dense tensor of `rows` rows, repeated indices added: the unsorted
    segment sum of its values (out-of-range indices fail the run).

    A sum that `aggregate_indexed_slices` made of dense terms and slices (a tied
    embedding's gradient: the softmax's dense term and the lookup's gathered rows) is
    formed from its terms instead: the dense terms added, the slices' rows scattered
    onto them. Summing the concatenation copied every row of the dense term into it and
    scattered all of them into a tensor of zeros (12, 8 and 8 ms of a Transformer LM's
    step for its 50,257 x 768 embedding); the scatter now adds the gathered rows in
    place."""
    terms = getattr(grad, "_terms", ())
    dense = [t for t in terms if isinstance(t, Tensor)]
    # Only where the dense terms are known to have exactly `rows` rows (a static count).
    if not dense or not isinstance(rows, int) or any(
            t.shape.ndims is None or t.shape.as_list()[0] != rows for t in dense):
        return unsorted_segment_sum(grad.values, grad.indices, rows)
    total = dense[0] if len(dense) == 1 else math_ops.add_n(dense)
    for part in terms:
        if isinstance(part, IndexedSlices):
            total = tensor_scatter_nd_add(total, array_ops.expand_dims(part.indices, -1),
                                          part.values)
    return total
