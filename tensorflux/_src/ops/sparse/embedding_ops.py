"""`tf.nn.embedding_lookup_sparse` and `tf.nn.safe_embedding_lookup_sparse`: TF1's
results, computed with shapes that do not depend on which ids a batch holds.

TF looks each distinct id up once (`Unique`) and combines the rows with
SparseSegment{Sum,Mean,SqrtN} / SegmentSum. The number of distinct ids changes from batch
to batch, so every compiled op after Unique would see new shapes and a training step would
compile again for each batch. Here every id occurrence is looked up (`embedding_lookup`,
fixed-shape also over partitioned params) and the rows are summed per example with
UnsortedSegmentSum: "sum" is the weighted sum, "mean" divides it by the row's weight sum,
"sqrtn" by the root of its squared weights' sum (no weights: weight 1 each). Gradients reach
`params` as IndexedSlices with one row per id occurrence (duplicates are summed by the
optimizers' sparse updates, as TF's one row per distinct id).

The only data-dependent size is the result's row count, and it comes from a host step whose
output's *shape* carries it, so the compiled step is keyed by that count alone:

- embedding_lookup_sparse has TF's rows: one per segment up to the last row holding ids (a
  host SegmentSum over the row ids, which also raises TF's error for unsorted rows). As in
  TF, rows without ids are zeros, except for a weighted "mean"/"sqrtn", where 0 / 0 gives
  NaN.
- safe_embedding_lookup_sparse has the ids' leading dimensions (a host SparseReduceSum over
  the last one). TF prunes invalid ids (< 0), and non-positive weights unless combining by
  "sum", then fills rows left empty with `default_id`; here pruned ids keep their place
  with weight 0, and rows with no weight left take `default_id`'s embedding (or zeros).
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
from tensorflux._src.ops.array.slicing_ops import slice as tf_slice
from tensorflux._src.ops.math import math_ops as M
from tensorflux._src.ops.math import reduce_ops as R
from tensorflux._src.ops.math.segment_ops import unsorted_segment_sum
from tensorflux._src.ops.math.segment_reductions import segment_sum
from tensorflux._src.ops.nn.nn_embedding_ops import embedding_lookup
from tensorflux._src.ops.sparse.sparse_math import sparse_reduce_sum
from tensorflux._src.platform import tf_logging

__all__ = ["embedding_lookup_sparse", "safe_embedding_lookup_sparse"]

_COMBINERS = ("mean", "sqrtn", "sum")


def _param_list(params):
    if hasattr(params, "_get_variable_list"):  # a PartitionedVariable
        params = list(params._get_variable_list())
    return list(params) if isinstance(params, (list, tuple)) else [params]


def _lookup(params, ids, partition_strategy, max_norm):
    embeddings = embedding_lookup(params, ids, partition_strategy=partition_strategy,
                                  max_norm=max_norm)
    if embeddings.dtype in (_dtypes.float16, _dtypes.bfloat16):
        embeddings = M.cast(embeddings, _dtypes.float32)  # as TF: combined in float32
    return embeddings


def _per_embedding(values, embeddings):
    """`values` (one per id, or per row) reshaped to broadcast over each embedding's
    trailing dimensions, as TF reshapes the weights."""
    ones = GEN.fill(A.expand_dims(A.rank(embeddings) - 1, 0), 1)
    static = values.shape
    values = A.reshape(values, A.concat([A.shape(values), ones], 0))
    if embeddings.shape.ndims is not None:
        values.set_shape(static.concatenate([1] * (embeddings.shape.ndims - 1)))
    return values


def _combine(embeddings, weights, segment_ids, num_rows, combiner, divide, name):
    """Per segment (`num_rows` of them, ids in `segment_ids`), the `combiner` of the
    embeddings weighted by `weights` (None: weight 1 each); `divide` gives mean/sqrtn."""
    if weights is None:
        sums = unsorted_segment_sum(embeddings, segment_ids, num_rows,
                                    name=name if combiner == "sum" else None)
        if combiner == "sum":
            return sums
        norm = _per_embedding(unsorted_segment_sum(
            GEN.ones_like(segment_ids, dtype=embeddings.dtype), segment_ids, num_rows),
            embeddings)
    else:
        if weights.dtype != embeddings.dtype:
            weights = M.cast(weights, embeddings.dtype)
        weights = _per_embedding(weights, embeddings)
        sums = unsorted_segment_sum(embeddings * weights, segment_ids, num_rows,
                                    name=name if combiner == "sum" else None)
        if combiner == "sum":
            return sums
        if combiner == "sqrtn":
            weights = M.pow(weights, 2)
        norm = unsorted_segment_sum(weights, segment_ids, num_rows)
    if combiner == "sqrtn":
        norm = M.sqrt(norm)
    return divide(sums, norm, name=name)


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
        # TF's segment ops give one row per segment id up to the last one present: a host
        # SegmentSum of ones has that length (and checks the ids are sorted, as TF's
        # kernels do); the compiled step reads only its shape.
        num_rows = A.size(segment_sum(GEN.ones_like(segment_ids), segment_ids))
        embeddings = _lookup(params, sp_ids.values, partition_strategy, max_norm)
        # Unweighted, TF's SparseSegmentMean/SqrtN leave rows without ids at 0; weighted,
        # it divides by the weight sums, and 0 / 0 is NaN.
        divide = M.div_no_nan if ignore_weights else M.div
        return _combine(embeddings, None if ignore_weights else sp_weights.values,
                        segment_ids, num_rows, combiner, divide, scope)


def _flat_rows(indices, leading, rank_dim):
    """Each entry's row when the ids are flattened to 2-D ([prod(leading), last dim]),
    from its leading indices: TF's SparseReshape of the ids, computed in the step from
    the (static) leading dimensions only."""
    if rank_dim == 2:
        return indices[:, 0]
    strides = R.cumprod(M.cast(leading, _dtypes.int64), exclusive=True, reverse=True)
    # The last index (the id's place in its row) does not move the row.
    strides = A.concat([strides, GEN.zeros([1], _dtypes.int64)], 0)
    return R.reduce_sum(indices * strides, axis=1)


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
        rank_dim = original_shape.shape[0].value
        rank = A.size(original_shape) if rank_dim is None else rank_dim
        # A host step whose output has the ids' leading dimensions as its shape (its values,
        # sums of ids, are not used): the compiled step is keyed by the batch's dimensions
        # and reads them statically.
        leading = A.shape(sparse_reduce_sum(sparse_ids, axis=rank - 1))
        num_rows = R.reduce_prod(leading)
        segment_ids = M.cast(_flat_rows(sparse_ids.indices, leading, rank_dim),
                             _dtypes.int32)
        # TF's pruning, as weight 0 in place: invalid ids always, non-positive weights
        # unless summing. Pruned ids read row 0.
        ids = sparse_ids.values
        keep = M.greater_equal(ids, 0)
        if sparse_weights is not None and combiner != "sum":
            keep = M.logical_and(keep, M.greater(sparse_weights.values, 0))
        ids = G.where_v2(keep, ids, GEN.zeros_like(ids))
        embeddings = _lookup(embedding_weights, ids, partition_strategy, max_norm)
        kept = M.cast(keep, embeddings.dtype)
        weights = kept if sparse_weights is None else G.where_v2(
            keep, M.cast(sparse_weights.values, embeddings.dtype), GEN.zeros_like(kept))
        # Rows left without ids divide 0 by 0: div_no_nan keeps their (unused) values and
        # gradients finite.
        result = _combine(embeddings, weights, segment_ids, num_rows, combiner,
                          M.div_no_nan, None)
        is_row_empty = M.equal(unsorted_segment_sum(kept, segment_ids, num_rows), 0)
        if default_id is None:
            fill = GEN.zeros([], dtype=result.dtype)
        else:  # TF fills the row with default_id at weight 1: its embedding, whatever
            fill = _lookup(embedding_weights, default_id, partition_strategy, max_norm)
        result = G.where_v2(_per_embedding(is_row_empty, result), fill, result, name=scope)
        final = A.reshape(result, A.concat([leading, tf_slice(A.shape(result), [1], [-1])], 0))
        static_leading = None if rank_dim is None else rank_dim - 1
        final.set_shape(unknown_shape(static_leading).concatenate(result.shape[1:]))
        return final
