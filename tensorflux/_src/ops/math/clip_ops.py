"""Gradient clipping: clip_by_norm, global_norm, clip_by_global_norm, clip_by_average_norm.

Composed from ordinary ops with TF1's formulas, so they differentiate and fuse. As TF1's,
clip_by_norm, global_norm and clip_by_global_norm take IndexedSlices (sparse gradients)
and work on their values, so clipping keeps a gradient sparse.
"""

from __future__ import annotations

from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.indexed_slices import IndexedSlices
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.ops.array import array_ops
from tensorflux._src.ops.array.gather_ops import where
from tensorflux._src.ops.array.generator_ops import ones_like
from tensorflux._src.ops.math import math_ops, reduce_ops

__all__ = ["clip_by_norm", "global_norm", "clip_by_global_norm", "clip_by_average_norm"]


def _values(t, name):
    """The dense part of t: an IndexedSlices' values (TF clips and measures those)."""
    return convert_to_tensor(t.values if isinstance(t, IndexedSlices) else t, name=name)


def clip_by_norm(t, clip_norm, axes=None, name=None):
    """t * clip_norm / max(||t||, clip_norm): rescales t so its L2 norm is <= clip_norm.
    An IndexedSlices keeps its indices; the norm is that of its values."""
    with _graph.name_scope(name, "clip_by_norm", [t, clip_norm]) as scope:
        values = _values(t, "t")
        l2sum = reduce_ops.reduce_sum(values * values, axes, keepdims=True)
        # A zero norm must not produce NaN gradients through sqrt.
        positive = l2sum > 0
        l2norm = where(positive, math_ops.sqrt(where(positive, l2sum, ones_like(l2sum))), l2sum)
        clip_norm = math_ops.cast(clip_norm, values.dtype)
        clipped = array_ops.identity(values * clip_norm / math_ops.maximum(l2norm, clip_norm),
                                     name=scope)
        if isinstance(t, IndexedSlices):
            return IndexedSlices(clipped, t.indices, t.dense_shape)
        return clipped


def global_norm(t_list, name=None):
    """sqrt(sum of squared L2 norms of every tensor in t_list); None entries are skipped
    and an IndexedSlices counts its values."""
    if not isinstance(t_list, (list, tuple)):
        raise TypeError("t_list should be a sequence")
    tensors = [_values(t, f"t_{i}") for i, t in enumerate(t_list) if t is not None]
    with _graph.name_scope(name, "global_norm", tensors) as scope:
        half_squared = [reduce_ops.reduce_sum(t * t) * 0.5 for t in tensors]
        half_squared = [math_ops.cast(h, tensors[0].dtype) for h in half_squared]
        total = reduce_ops.reduce_sum(array_ops.stack(half_squared))
        return math_ops.sqrt(total * 2.0, name=scope[:-1] if scope else "global_norm")


def clip_by_global_norm(t_list, clip_norm, use_norm=None, name=None):
    """Scales every tensor by clip_norm / max(global_norm, clip_norm); returns (list, norm).
    IndexedSlices come back as IndexedSlices with their values scaled."""
    if not isinstance(t_list, (list, tuple)):
        raise TypeError("t_list should be a sequence")
    t_list = list(t_list)
    if use_norm is None:
        use_norm = global_norm(t_list, name)
    with _graph.name_scope(name, "clip_by_global_norm", t_list + [clip_norm]):
        use_norm = convert_to_tensor(use_norm)
        clip_norm = math_ops.cast(clip_norm, use_norm.dtype)
        # An infinite norm gives NaNs, as in TF, rather than silently zeroing.
        scale = clip_norm * math_ops.minimum(1.0 / use_norm, 1.0 / clip_norm)
        clipped = []
        for i, t in enumerate(t_list):
            if t is None:
                clipped.append(None)
                continue
            v = _values(t, f"t_{i}")
            v = array_ops.identity(v * math_ops.cast(scale, v.dtype), name=f"_{i}")
            clipped.append(IndexedSlices(v, t.indices, t.dense_shape)
                           if isinstance(t, IndexedSlices) else v)
        return clipped, use_norm


def clip_by_average_norm(t, clip_norm, name=None):
    """Clips t so that its L2 norm divided by its number of elements is <= clip_norm."""
    with _graph.name_scope(name, "clip_by_average_norm", [t, clip_norm]) as scope:
        t = convert_to_tensor(t, name="t")
        n = math_ops.cast(array_ops.size(t), t.dtype)
        l2norm_inv = math_ops.rsqrt(reduce_ops.reduce_sum(t * t))
        clip_norm = math_ops.cast(clip_norm, t.dtype)
        return array_ops.identity(
            t * clip_norm * math_ops.minimum(l2norm_inv * n, 1.0 / clip_norm), name=scope)
