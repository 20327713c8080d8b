"""Segment reductions: `unsorted_segment_sum` (also the dense gradient of gather).

`output[i, ...] = sum of data[j..., ...] over the j... with segment_ids[j...] == i`.
As in TF, a negative segment id drops its row. An id >= num_segments known when the
graph is compiled raises TF's CPU error; one computed at run time cannot stop a
compiled XLA program, so its row is dropped as well (TF's GPU behaviour).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from tensorflux._src.compiler import effects
from tensorflux._src.framework import dispatch as _dispatch
from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework.tensor_shape import TensorShape, unknown_shape
from tensorflux._src.ops.array import array_ops, gather_ops, generator_ops
from tensorflux._src.ops.math import math_ops
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.op_helpers import (dims_str, kernel_error, merge_shapes,
                                            scalar_input_dim, static_input)
from tensorflux._src.ops.registry import OpDef, register

__all__ = ["unsorted_segment_sum"]


def _unsorted_segment_shape(op):
    data, ids, _ = op.inputs
    n = scalar_input_dim(op, 2)
    if data.shape.ndims is None or ids.shape.ndims is None:
        return unknown_shape()
    k = ids.shape.ndims
    if data.shape.ndims < k:
        raise ValueError(f"Shape must be at least rank {k} but is rank {data.shape.ndims}")
    merge_shapes(TensorShape(data.shape.dims[:k]), ids.shape)  # ids must prefix data
    return TensorShape([n]).concatenate(data.shape[k:])


def _out_of_range(segment_ids, n):
    """TF's message for the first id >= n (None when there is none)."""
    flat = np.reshape(segment_ids, -1)
    bad = np.flatnonzero(flat >= n)
    if not bad.size:
        return None
    k = segment_ids.ndim
    where = np.unravel_index(bad[0], segment_ids.shape) if k else ()
    at = "[" + ",".join(str(int(i)) for i in where) + "]" if k else ""
    return f"segment_ids{at} = {flat[bad[0]]} is out of range [0, {n})"


def unsorted_segment_lower(op_type, combine, identity):
    """The lowering of an UnsortedSegment* record: the output starts as `identity(dtype)`
    (what an empty segment holds) and `combine(out.at[ids], data)` reduces the rows into
    it (UnsortedSegmentSum here; Max, Min and Prod in segment_reductions.py)."""
    def lower(data, segment_ids, num_segments):
        n = int(static_input(num_segments, op_type, "num_segments"))
        k = segment_ids.ndim
        if data.shape[:k] != segment_ids.shape:
            raise kernel_error(f"data.shape = {dims_str(data.shape)} does not start with "
                               f"segment_ids.shape = {dims_str(segment_ids.shape)}")
        if isinstance(segment_ids, jax.core.Tracer):
            # TF's CPU kernel fails a run with an id past the end (negative ids are
            # skipped): checked in the run, the failing run keeps variables unchanged.
            # Inside loop bodies such ids are dropped instead (see effects.check).
            effects.check(jnp.all(segment_ids < n),
                          lambda ids: _out_of_range(np.asarray(ids), n), data=(segment_ids,),
                          in_loop_bodies=False)
        else:
            error = _out_of_range(np.asarray(segment_ids), n)
            if error is not None:
                raise kernel_error(error)
        # Negative ids would wrap in JAX: send them past the end, where scatter drops them.
        safe = jnp.where(segment_ids < 0, n, segment_ids)
        out = jnp.full((n,) + data.shape[k:], identity(data.dtype), data.dtype)
        return combine(out.at[safe], data)
    return lower


def gather_drop_negatives(params, ids):
    """gather(params, ids) along axis 0, with zeros where an id is outside [0, len)."""
    n = array_ops.shape(params, out_type=ids.dtype)[0]
    clipped = math_ops.minimum(math_ops.maximum(ids, 0), math_ops.maximum(n - 1, 0))
    gathered = gather_ops.gather(params, clipped)
    valid = math_ops.logical_and(math_ops.greater_equal(ids, 0), math_ops.less(ids, n))
    # (ids..., 1, ...): one per inner dimension of params, to broadcast over them
    inner = generator_ops.ones(array_ops.reshape(array_ops.rank(params) - 1, [1]),
                               dtype=_dtypes.int32)
    valid = array_ops.reshape(valid, array_ops.concat([array_ops.shape(ids), inner], 0))
    return gather_ops.where_v2(valid, gathered, generator_ops.zeros_like(gathered))


register(OpDef(
    "UnsortedSegmentSum",
    inputs=("data: T", "segment_ids: Tindices", "num_segments: Tnumsegments"),
    outputs=("output: T",),
    attrs={"T": _dtypes.NUMBERS, "Tindices": _dtypes.INDEX, "Tnumsegments": _dtypes.INDEX},
    shape=_unsorted_segment_shape,
    lower=unsorted_segment_lower("UnsortedSegmentSum", lambda at, d: at.add(d, mode="drop"),
                                 lambda _: 0),
    grad=lambda op, dy: [gather_drop_negatives(dy, op.inputs[1]), None, None],
))


def unsorted_segment_sum(data, segment_ids, num_segments, name=None):
    """Sums the rows of `data` that share a segment id, into `num_segments` rows."""
    return apply_op("UnsortedSegmentSum", name=name, data=data, segment_ids=segment_ids,
                    num_segments=num_segments)


# RaggedTensor (and other composite) arguments dispatch to registered handlers
# (framework/dispatch.py; TF's ragged_dispatch list).
_dispatch.add_dispatch_support_to(globals(), [
    "unsorted_segment_sum",
])
