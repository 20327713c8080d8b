"""The sparse embedding lookup the columns use: TF's `safe_embedding_lookup_sparse`
result, written for stable compiled shapes.

Per row of the ids (any rank >= 2, flattened to 2-D and back), the embeddings of its valid
ids (>= 0; with weights > 0 unless combining by "sum") weighted and combined by "sum",
"mean" (divided by the weights' sum) or "sqrtn" (by the root of their squares' sum);
rows left without ids give zeros. `max_norm` clips each embedding first.

TF gathers each distinct id once (`unique`) and combines with SparseSegment ops; the
number of distinct ids differs from batch to batch, so every compiled op after it would
see new shapes and XLA would compile the training step again for each batch. Here each
id's row is gathered and the rows are summed per example with UnsortedSegmentSum into
as many rows as the batch has. Ids TF prunes (negative ones, e.g. out-of-vocabulary -1;
non-positive weights unless summing) are not removed but given weight 0 and looked up as
id 0, so no shape depends on the data: only on the number of ids, which a feature of
fixed width keeps constant. The sums are the same.
"""

from __future__ import annotations

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.tensor_shape import unknown_shape
from tensorflux._src.ops.array import array_ops as A
from tensorflux._src.ops.array import gather_ops as G
from tensorflux._src.ops.array import generator_ops as GEN
from tensorflux._src.ops.array.slicing_ops import slice as tf_slice
from tensorflux._src.ops.math import math_ops as M
from tensorflux._src.ops.math import reduce_ops as R
from tensorflux._src.ops.math.segment_ops import unsorted_segment_sum
from tensorflux._src.ops.nn.nn_embedding_ops import embedding_lookup
from tensorflux._src.ops.sparse.sparse_ops import sparse_reshape

_COMBINERS = ("mean", "sqrtn", "sum")


def safe_embedding_lookup(embedding_weights, sparse_ids, sparse_weights=None,
                          combiner="mean", name=None, partition_strategy="div",
                          max_norm=None):
    """[ids' leading dimensions] + embedding shape: per row, the `combiner` of its
    ids' embeddings weighted by `sparse_weights` (same indices), zeros without ids.
    A partitioned table is split "div"-wise by default, as TF's safe lookup (and so
    its feature columns) does."""
    if combiner not in _COMBINERS:
        raise ValueError("combiner must be one of 'mean', 'sqrtn' or 'sum'")
    if embedding_weights is None:
        raise ValueError(f"Missing embedding_weights {embedding_weights}.")
    with _graph.name_scope(name, "embedding_lookup",
                           [embedding_weights, sparse_ids, sparse_weights]) as scope:
        original_shape = sparse_ids.dense_shape
        rank_dim = original_shape.shape[0].value
        rank = A.size(original_shape) if rank_dim is None else rank_dim
        rows = R.reduce_prod(tf_slice(original_shape, [0], A.reshape(rank - 1, [1])))
        ids = sparse_reshape(sparse_ids, A.stack([rows, original_shape[rank - 1]]))
        # TF's pruning, as weight 0: invalid ids always, non-positive weights unless
        # summing.
        keep = M.greater_equal(ids.values, 0)
        if sparse_weights is not None and combiner != "sum":
            keep = M.logical_and(keep, M.greater(sparse_weights.values, 0))
        id_values = G.where_v2(keep, ids.values, GEN.zeros_like(ids.values))
        embeddings = embedding_lookup(embedding_weights, id_values,
                                      partition_strategy=partition_strategy,
                                      max_norm=max_norm)
        if embeddings.dtype in (_dtypes.float16, _dtypes.bfloat16):
            embeddings = M.cast(embeddings, _dtypes.float32)
        segments = ids.indices[:, 0]
        if sparse_weights is None:
            weight_values = GEN.ones_like(ids.values, dtype=embeddings.dtype)
        else:
            weight_values = M.cast(sparse_weights.values, embeddings.dtype)
        weight_values = G.where_v2(keep, weight_values, GEN.zeros_like(weight_values))
        num_rows = M.cast(rows, _dtypes.int64)
        sums = unsorted_segment_sum(embeddings * A.expand_dims(weight_values, 1), segments,
                                    num_rows)
        if combiner == "sum":
            result = sums
        else:
            if combiner == "mean":
                norm = unsorted_segment_sum(weight_values, segments, num_rows)
            else:
                norm = M.sqrt(unsorted_segment_sum(weight_values * weight_values, segments,
                                                   num_rows))
            # Rows without ids have 0 / 0: zeros, as TF's lookup gives them.
            result = M.div_no_nan(sums, A.expand_dims(norm, 1))
        final = A.reshape(result, A.concat([
            tf_slice(M.cast(original_shape, _dtypes.int32), [0], A.reshape(rank - 1, [1])),
            tf_slice(A.shape(result), [1], [-1])], 0), name=scope)
        leading = None if rank_dim is None else rank_dim - 1
        final.set_shape(unknown_shape(leading).concatenate(embeddings.shape[1:]))
        return final
