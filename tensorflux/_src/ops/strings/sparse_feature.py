"""tf.io.SparseFeature: a SparseTensor built from index and value features of an
Example, as TF1.15 builds it after parsing (parsing_ops.py parses the keys as
VarLenFeatures, then `construct_sparse_features` merges them like tf.sparse.merge).

For a feature {"ix": [3, 20], "val": [0.5, -1.0]} in record b, SparseFeature("ix", "val",
tf.float32, 100) gives values 0.5 at [b, 3] and -1.0 at [b, 20], dense_shape
[batch, 100]; several index keys give one index column each (size a list). Indices are
put in row-major order unless `already_sorted`. Built from graph ops (slices, concat,
argsort, gather), so it needs no record of its own.
"""

from __future__ import annotations

import collections

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework.sparse_tensor import SparseTensor
from tensorflux._src.ops.array import array_ops, gather_ops, slicing_ops, sort_ops
from tensorflux._src.ops.math import math_ops, reduce_ops

__all__ = ["SparseFeature"]


class SparseFeature(collections.namedtuple(
        "SparseFeature", ["index_key", "value_key", "dtype", "size", "already_sorted"])):
    """Configuration for parsing a sparse input feature from an Example: the values of
    `value_key` placed at the indices of `index_key` (one key per dimension), in a
    SparseTensor of dense shape [batch] + size."""

    def __new__(cls, index_key, value_key, dtype, size, already_sorted=False):
        return super().__new__(cls, index_key, value_key, dtype, size, already_sorted)


def index_keys(feature: SparseFeature):
    return [feature.index_key] if isinstance(feature.index_key, str) \
        else list(feature.index_key)


def _merge(ids, values, sizes, already_sorted):
    """TF's sparse_merge: indices [batch..., id_0, id_1, ...] from the id SparseTensors."""
    columns = [array_ops.expand_dims(math_ops.cast(sp.values, _dtypes.int64), 1) for sp in ids]
    kept = slicing_ops.slice(ids[0].indices, [0, 0], [-1, array_ops.shape(ids[0].indices)[1] - 1])
    indices = array_ops.concat([kept] + columns, 1)
    rank = array_ops.shape(ids[0].dense_shape)[0]
    shape = array_ops.concat([slicing_ops.slice(ids[0].dense_shape, [0], [rank - 1]),
                              math_ops.cast(array_ops.stack(sizes), _dtypes.int64)], 0)
    if already_sorted:
        return SparseTensor(indices, values.values, shape)
    # Row-major order (SparseReorder's): sort by the linear index of each entry.
    strides = math_ops.cast(reduce_ops.cumprod(shape, exclusive=True, reverse=True),
                            _dtypes.int64)
    linear = reduce_ops.reduce_sum(indices * strides, axis=1)
    order = sort_ops.argsort(linear)
    return SparseTensor(gather_ops.gather(indices, order), gather_ops.gather(values.values, order),
                        shape)


def construct_sparse_features(features, outputs):
    """`outputs` (parsed keys) with each SparseFeature's key holding its SparseTensor and
    the keys parsed only for SparseFeatures removed."""
    outputs = dict(outputs)
    for key in sorted(features):
        feature = features[key]
        if isinstance(feature, SparseFeature):
            sizes = feature.size if isinstance(feature.size, (list, tuple)) else [feature.size]
            ids = [outputs[k] for k in index_keys(feature)]
            outputs[key] = _merge(ids, outputs[feature.value_key], list(sizes),
                                  feature.already_sorted)
    for key in set(outputs) - set(features):
        del outputs[key]
    return outputs

