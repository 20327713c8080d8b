"""`RaggedTensor.__getitem__` (basics: rows by index or slice, then per-row indices or
slices with constant bounds), attached to the class as TF's ragged_getitem.py does (the
operators are attached by ragged_dispatch, as TF's ragged_operators.py).

Row slices with step 1 take one span of the values; other row selections and per-row
slices gather whole rows through RaggedRange spans. An index past a row's end fails the
run with TF's "slice index ... of dimension 1 out of bounds."
"""

from __future__ import annotations

import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.operation import Tensor
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.ops.array import array_ops as A
from tensorflux._src.ops.array import gather_ops as G
from tensorflux._src.ops.array import generator_ops as GEN
from tensorflux._src.ops.debug import check_ops
from tensorflux._src.ops.math import math_ops as M
from tensorflux._src.ops.sparse.ragged_ops import gather_rows, range
from tensorflux._src.ops.sparse.ragged_tensor import RaggedTensor

__all__ = []


# -- RaggedTensor.__getitem__ ----------------------------------------------------------------
def _row(rt, index):
    start, limit = rt.row_starts()[index], rt.row_limits()[index]
    values = rt.values
    if isinstance(values, RaggedTensor):
        return _slice_rows_between(values, start, limit)
    return values[start:limit]


def _slice_rows_between(rt, start, limit):
    splits = rt.row_splits[start:limit + 1]
    lo, hi = splits[0], splits[-1]
    values = rt.values
    inner = _slice_rows_between(values, lo, hi) if isinstance(values, RaggedTensor) else \
        values[lo:hi]
    return RaggedTensor(inner, splits - lo, internal=True)


def _slice_rows(rt, key):
    if key.step is None or key.step == 1:
        starts = rt.row_splits[:-1][key.start:key.stop]
        limits = rt.row_splits[1:][key.start:key.stop]
        zero = GEN.zeros([1], rt.row_splits.dtype)
        splits = A.concat([zero[A.size(starts):], starts[:1], limits], axis=0)
        lo, hi = splits[0], splits[-1]
        values = rt.values
        inner = _slice_rows_between(values, lo, hi) if isinstance(values, RaggedTensor) \
            else values[lo:hi]
        return RaggedTensor(inner, splits - lo, internal=True)
    rows = M.range(rt.nrows(out_type=_dtypes.int64))[key]
    return gather_rows(rt, rows)


def _apply_inner(values, keys):
    """Applies `keys` to the dimensions after the first of `values`."""
    if not keys:
        return values
    if isinstance(values, RaggedTensor):
        return _getitem_columns(values, keys)
    return values[(slice(None),) + tuple(keys)]


def _getitem_columns(rt, keys):
    """Applies keys[0] to dimension 1 of every row of `rt`, then the rest further in."""
    key, rest = keys[0], keys[1:]
    if isinstance(key, slice) and key == slice(None):
        return rt.with_values(_apply_inner(rt.values, rest))
    starts, limits = rt.row_starts(), rt.row_limits()
    lengths = limits - starts
    if isinstance(key, int):
        positions = (starts + key) if key >= 0 else (limits + key)
        message = f"slice index {key} of dimension 1 out of bounds."
        need = convert_to_tensor(key + 1 if key >= 0 else -key, dtype=lengths.dtype)
        ok = check_ops.assert_greater_equal(lengths, need, message=message)
        with _graph.control_dependencies([ok]):
            positions = A.identity(positions)
        values = rt.values
        picked = gather_rows(values, positions) if isinstance(values, RaggedTensor) else \
            G.gather(values, positions)
        return _apply_inner(picked, rest)
    if isinstance(key, slice) and key.step in (None, 1) and \
            all(v is None or isinstance(v, int) for v in (key.start, key.stop)):
        def bound(v, default):
            if v is None:
                return default
            v = convert_to_tensor(v, dtype=lengths.dtype)
            return M.minimum(M.maximum(G.where(v < 0, lengths + v, v + GEN.zeros_like(lengths)),
                                       GEN.zeros_like(lengths)), lengths)
        lo = bound(key.start, GEN.zeros_like(lengths))
        hi = M.maximum(bound(key.stop, lengths), lo)
        spans = range(starts + lo, starts + hi, M.cast(1, starts.dtype),
                      row_splits_dtype=starts.dtype)
        values = rt.values
        picked = gather_rows(values, spans.values) if isinstance(values, RaggedTensor) else \
            G.gather(values, spans.values)
        return RaggedTensor(_apply_inner(picked, rest), spans.row_splits, internal=True)
    raise ValueError(f"Indexing a RaggedTensor's inner dimensions supports ints and slices "
                     f"with constant bounds here; got {key!r}")


def getitem(rt, key):
    """rt[key]: rows by int (Python or scalar tensor) or slice, then ints / slices of
    each row's dimensions."""
    keys = key if isinstance(key, tuple) else (key,)
    if any(k is Ellipsis or k is None for k in keys):
        raise ValueError("Ellipsis and tf.newaxis are not supported when indexing a "
                         "RaggedTensor here")
    if not keys:
        return rt
    first, rest = keys[0], keys[1:]
    with _graph.name_scope(None, "RaggedGetItem", [rt]):
        if isinstance(first, slice):
            rows = rt if first == slice(None) else _slice_rows(rt, first)
            return _getitem_columns(rows, rest) if rest else rows
        if not isinstance(first, (int, np.integer, Tensor)):
            raise TypeError(f"Cannot index a RaggedTensor with {first!r}")
        row = _row(rt, first)
        return _apply_row(row, rest)


def _apply_row(row, keys):
    if not keys:
        return row
    if isinstance(row, RaggedTensor):
        return getitem(row, keys)
    return row[tuple(keys)]


RaggedTensor.__getitem__ = getitem
