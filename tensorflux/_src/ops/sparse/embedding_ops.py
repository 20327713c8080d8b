"""`tf.nn.embedding_lookup_sparse` and `tf.nn.safe_embedding_lookup_sparse`: TF1's
segment-based compositions over `tf.nn.embedding_lookup`.

The ids of each row (dimension 0) of a SparseTensor are looked up once each (`unique`),
then combined per row: without weights by SparseSegment{Sum,Mean,SqrtN} over the unique
rows, with weights by weighting the gathered rows and Segment sums (mean divides by the
row's weight sum, sqrtn by the root of its squared weights' sum). As in TF1 the result
has one row per segment id up to the last row holding ids. The safe form flattens
higher-rank ids to 2-D, drops negative ids (and non-positive weights unless combining by
sum), fills empty rows with `default_id` (or zeros the result there) and reshapes back.
Gradients reach `params` through the gathers and segment ops.
"""

from __future__ import annotations

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.sparse_tensor import SparseTensor
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.framework.tensor_shape import unknown_shape
from tensorflux._src.ops.array import array_ops as A
from tensorflux._src.ops.array import gather_ops as G
from tensorflux._src.ops.array import generator_ops as GEN
from tensorflux._src.ops.array.host_ops import unique
from tensorflux._src.ops.array.slicing_ops import slice as tf_slice
from tensorflux._src.ops.math import math_ops as M
from tensorflux._src.ops.math import reduce_ops as R
from tensorflux._src.ops.math.segment_reductions import segment_sum
from tensorflux._src.ops.math.sparse_segments import (sparse_segment_mean,
                                                      sparse_segment_sqrt_n,
                                                      sparse_segment_sum)
from tensorflux._src.ops.nn.nn_embedding_ops import embedding_lookup
from tensorflux._src.ops.sparse.sparse_compose import sparse_retain
from tensorflux._src.ops.sparse.sparse_ops import sparse_fill_empty_rows, sparse_reshape
from tensorflux._src.platform import tf_logging

__all__ = ["embedding_lookup_sparse", "safe_embedding_lookup_sparse"]

_COMBINERS = ("mean", "sqrtn", "sum")


def _param_list(params):
    if hasattr(params, "_get_variable_list"):  # a PartitionedVariable
        params = list(params._get_variable_list())
    return list(params) if isinstance(params, (list, tuple)) else [params]


def embedding_lookup_sparse(params, sp_ids, sp_weights, partition_strategy="mod", name=None,
                            combiner=None, max_norm=None):
    """Per row of the SparseTensor `sp_ids`, the combination ("mean" by default, "sqrtn",
    "sum") of the embeddings of its ids, weighted by `sp_weights` when given."""
    if combiner is None:
        tf_logging.warning('The default value of combiner will change from "mean" to '
                           '"sqrtn" after 2016/11/01.')
        combiner = "mean"
    if combiner not in _COMBINERS:
        raise ValueError("combiner must be one of 'mean', 'sqrtn' or 'sum'")
    params = _param_list(params)
    if not isinstance(sp_ids, SparseTensor):
        raise TypeError("sp_ids must be SparseTensor")
    ignore_weights = sp_weights is None
    if not ignore_weights:
        if not isinstance(sp_weights, SparseTensor):
            raise TypeError("sp_weights must be either None or SparseTensor")
        sp_ids.values.shape.assert_is_compatible_with(sp_weights.values.shape)
        sp_ids.indices.shape.assert_is_compatible_with(sp_weights.indices.shape)
        sp_ids.dense_shape.shape.assert_is_compatible_with(sp_weights.dense_shape.shape)
    with _graph.name_scope(name, "embedding_lookup_sparse", params + [sp_ids]) as scope:
        segment_ids = sp_ids.indices[:, 0]
        if segment_ids.dtype != _dtypes.int32:
            segment_ids = M.cast(segment_ids, _dtypes.int32)
        ids, idx = unique(sp_ids.values)
        embeddings = embedding_lookup(params, ids, partition_strategy=partition_strategy,
                                      max_norm=max_norm)
        if embeddings.dtype in (_dtypes.float16, _dtypes.bfloat16):
            embeddings = M.cast(embeddings, _dtypes.float32)
        if ignore_weights:
            combine = {"sum": sparse_segment_sum, "mean": sparse_segment_mean,
                       "sqrtn": sparse_segment_sqrt_n}[combiner]
            return combine(embeddings, idx, segment_ids, name=scope)
        weights = sp_weights.values
        if weights.dtype != embeddings.dtype:
            weights = M.cast(weights, embeddings.dtype)
        embeddings = G.gather(embeddings, idx)
        # Weights broadcast over each embedding's trailing dimensions.
        ones = GEN.fill(A.expand_dims(A.rank(embeddings) - 1, 0), 1)
        static = weights.shape
        weights = A.reshape(weights, A.concat([A.shape(weights), ones], 0))
        if embeddings.shape.ndims is not None:
            weights.set_shape(static.concatenate([1] * (embeddings.shape.ndims - 1)))
        embeddings = embeddings * weights
        if combiner == "sum":
            return segment_sum(embeddings, segment_ids, name=scope)
        sums = segment_sum(embeddings, segment_ids)
        if combiner == "mean":
            return M.div(sums, segment_sum(weights, segment_ids), name=scope)
        weight_sum = segment_sum(M.pow(weights, 2), segment_ids)
        return M.div(sums, M.sqrt(weight_sum), name=scope)


def _prune_invalid_ids(sparse_ids, sparse_weights):
    valid = M.greater_equal(sparse_ids.values, 0)
    if sparse_weights is not None:
        valid = M.logical_and(valid, GEN.ones_like(sparse_weights.values, dtype=_dtypes.bool))
    sparse_ids = sparse_retain(sparse_ids, valid)
    if sparse_weights is not None:
        sparse_weights = sparse_retain(sparse_weights, valid)
    return sparse_ids, sparse_weights


def _prune_invalid_weights(sparse_ids, sparse_weights):
    if sparse_weights is not None:
        valid = M.greater(sparse_weights.values, 0)
        sparse_ids = sparse_retain(sparse_ids, valid)
        sparse_weights = sparse_retain(sparse_weights, valid)
    return sparse_ids, sparse_weights


def safe_embedding_lookup_sparse(embedding_weights, sparse_ids, sparse_weights=None,
                                 combiner="mean", default_id=None, name=None,
                                 partition_strategy="div", max_norm=None):
    """embedding_lookup_sparse for ids of any rank >= 2 that tolerates invalid ids
    (< 0), non-positive weights and empty rows: those rows get `default_id`'s embedding,
    or zeros without one. The result has the ids' leading dimensions."""
    if embedding_weights is None:
        raise ValueError(f"Missing embedding_weights {embedding_weights}.")
    embedding_weights = _param_list(embedding_weights)
    if len(embedding_weights) < 1:
        raise ValueError(f"Missing embedding_weights {embedding_weights}.")
    dtype = sparse_weights.dtype if sparse_weights is not None else None
    embedding_weights = [w if hasattr(w, "_get_variable_list") else
                         convert_to_tensor(w, dtype=dtype) for w in embedding_weights]
    with _graph.name_scope(name, "embedding_lookup",
                           embedding_weights + [sparse_ids, sparse_weights]) as scope:
        original_shape = sparse_ids.dense_shape
        rank_dim = sparse_ids.dense_shape.shape[0].value
        rank = A.size(original_shape) if rank_dim is None else rank_dim
        sparse_ids = sparse_reshape(sparse_ids, A.stack([
            R.reduce_prod(tf_slice(original_shape, [0], A.reshape(rank - 1, [1]))),
            G.gather(original_shape, rank - 1)]))
        if sparse_weights is not None:
            sparse_weights = SparseTensor(sparse_ids.indices, sparse_weights.values,
                                          sparse_ids.dense_shape)
        sparse_ids, sparse_weights = _prune_invalid_ids(sparse_ids, sparse_weights)
        if combiner != "sum":
            sparse_ids, sparse_weights = _prune_invalid_weights(sparse_ids, sparse_weights)
        sparse_ids, is_row_empty = sparse_fill_empty_rows(sparse_ids, default_id or 0)
        if sparse_weights is not None:
            sparse_weights, _ = sparse_fill_empty_rows(sparse_weights, 1.0)
        result = embedding_lookup_sparse(
            embedding_weights, sparse_ids, sparse_weights, combiner=combiner,
            partition_strategy=partition_strategy,
            name=None if default_id is None else scope, max_norm=max_norm)
        if default_id is None:
            is_row_empty = A.tile(A.reshape(is_row_empty, [-1, 1]),
                                  A.stack([1, A.shape(result)[1]]))
            result = G.where(is_row_empty, GEN.zeros_like(result), result, name=scope)
        final = A.reshape(result, A.concat([
            tf_slice(M.cast(original_shape, _dtypes.int32), [0], A.reshape(rank - 1, [1])),
            tf_slice(A.shape(result), [1], [-1])], 0))
        leading = None if rank_dim is None else rank_dim - 1
        final.set_shape(unknown_shape(leading).concatenate(result.shape[1:]))
        return final
