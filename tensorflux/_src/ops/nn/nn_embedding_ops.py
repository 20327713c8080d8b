"""`tf.nn.embedding_lookup`: rows of one embedding tensor, or of a list of partitions.

TF routes ids to partitions with DynamicPartition and puts the rows back in order with
DynamicStitch; both have data-dependent shapes. Here every partition is gathered at the
ids' full length (ids of other partitions read a row of its own ids) and the right rows
are selected by partition, which keeps shapes static for XLA and gives the same values
and gradients; each partition's gradient is an IndexedSlices as long as the ids.
"""

from __future__ import annotations

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.framework.tensor_shape import TensorShape
from tensorflux._src.ops.array import array_ops
from tensorflux._src.ops.array.gather_ops import gather, where
from tensorflux._src.ops.array.generator_ops import zeros_like
from tensorflux._src.ops.math import math_ops, reduce_ops
from tensorflux._src.ops.math.clip_ops import clip_by_norm
from tensorflux._src.ops.math.math_ops import range as tf_range

__all__ = ["embedding_lookup"]


def _clip(params, ids, max_norm):
    """Rescales each embedding (the dims after the ids' dims) to L2 norm <= max_norm."""
    if max_norm is None:
        return params
    ids_rank, params_rank = ids.shape.ndims, params.shape.ndims
    if ids_rank is not None and params_rank is not None:
        axes = list(range(ids_rank, params_rank))
    else:
        axes = tf_range(array_ops.rank(ids), array_ops.rank(params))
    return clip_by_norm(params, max_norm, axes=axes)


def _as_param_list(params):
    if params is None or (isinstance(params, (list, tuple)) and not params):
        raise ValueError("Need at least one param")
    if hasattr(params, "_get_variable_list"):  # a PartitionedVariable
        params = params._get_variable_list()
    return list(params) if isinstance(params, (list, tuple)) else [params]


def _partitions(flat_ids, params, partition_strategy):
    """(partition of each id, row of the id inside its partition)."""
    np_ = len(params)
    if partition_strategy == "mod":
        return flat_ids % np_, flat_ids // np_
    if partition_strategy != "div":
        raise ValueError("Unrecognized partition strategy: " + partition_strategy)
    # The first `extras` partitions hold one id more than the others.
    dims = [p.shape[0].value if p.shape.ndims is not None else None for p in params]
    if None not in dims:
        num_total_ids = convert_to_tensor(sum(dims), dtype=flat_ids.dtype)
    else:
        sizes = [array_ops.shape(p, out_type=flat_ids.dtype)[0] for p in params]
        num_total_ids = math_ops.add_n(sizes)
    ids_per_partition = num_total_ids // np_
    extras = num_total_ids % np_
    p_assignments = math_ops.maximum(flat_ids // (ids_per_partition + 1),
                                     (flat_ids - extras) // ids_per_partition)
    in_first_extras = math_ops.cast(p_assignments < extras, flat_ids.dtype)
    new_ids = (in_first_extras * (flat_ids % (ids_per_partition + 1))
               + (1 - in_first_extras) * ((flat_ids - extras) % ids_per_partition))
    return p_assignments, new_ids


def _row_of_mine(mine, new_ids):
    """What ids of other partitions read from this one: the row of its first own id (row 0
    when it has none). Their gradients are zero rows, and this way they land on a row the
    sparse update touches anyway, so an optimizer moves the rows TF's DynamicPartition
    would give it (a partition no id reaches still gets zeros at row 0)."""
    first = gather(new_ids, reduce_ops.argmax(math_ops.cast(mine, _dtypes.int32), 0))
    fill = where(reduce_ops.reduce_any(mine), first, zeros_like(first))
    return array_ops.broadcast_to(fill, array_ops.shape(new_ids))


def embedding_lookup(params, ids, partition_strategy="mod", name=None, validate_indices=True,
                     max_norm=None):
    """Rows `ids` of `params`, shape ids.shape + params.shape[1:].

    A list of P tensors is one table split along dim 0: with "mod", id i lives in
    partition i % P at row i // P; with "div", ids are split in contiguous ranges (the
    first partitions one longer when the total is not divisible by P). `max_norm` clips
    each looked-up embedding to that L2 norm. `validate_indices` is ignored, as in TF.
    """
    del validate_indices
    params = _as_param_list(params)
    with _graph.name_scope(name, "embedding_lookup", params + [ids]) as scope:
        params = [convert_to_tensor(p, name="params") for p in params]
        ids = convert_to_tensor(ids, name="ids")
        if len(params) == 1:
            result = _clip(gather(params[0], ids, name=scope), ids, max_norm)
            return array_ops.identity(result)
        element_shape = params[0].shape[1:] if params[0].shape.ndims is not None \
            else TensorShape(None)
        for p in params[1:]:
            rest = p.shape[1:] if p.shape.ndims is not None else TensorShape(None)
            element_shape = element_shape.merge_with(rest)
        flat_ids = array_ops.reshape(ids, [-1])
        p_assignments, new_ids = _partitions(flat_ids, params, partition_strategy)
        rows = None
        for p, part in enumerate(params):
            mine = math_ops.equal(p_assignments, convert_to_tensor(p, dtype=flat_ids.dtype))
            got = gather(part, where(mine, new_ids, _row_of_mine(mine, new_ids)))
            rows = got if rows is None else where(mine, got, rows)
        rows = _clip(rows, flat_ids, max_norm)
        ret = array_ops.reshape(rows, array_ops.concat(
            [array_ops.shape(ids), array_ops.shape(params[0])[1:]], 0), name=scope[:-1])
        ret.set_shape(ids.shape.concatenate(element_shape))
        return ret
