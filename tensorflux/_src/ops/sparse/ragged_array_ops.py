"""Array ops on RaggedTensors (TF's ragged_array_ops, ragged_concat_ops, ragged_gather_ops,
ragged_where_op, ragged_squeeze_op, ragged_batch_gather_ops): what tf.concat, tf.gather,
tf.gather_nd, tf.batch_gather, tf.expand_dims, tf.tile, tf.where, tf.size, tf.rank,
tf.squeeze and tf.dynamic_partition dispatch to on ragged arguments.

All are compositions: whole rows move through `gather_rows` (RaggedRange spans of the
values), uniform dimensions are new row splits, so gradients reach the flat values
through the gathers.
"""

from __future__ import annotations

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.ops.array import array_ops as A
from tensorflux._src.ops.array import gather_ops as G
from tensorflux._src.ops.array import generator_ops as GEN
from tensorflux._src.ops.array.layout import batch_gather as batch_gather_dense
from tensorflux._src.ops.debug import check_ops
from tensorflux._src.ops.math import math_ops as M
from tensorflux._src.ops.math import reduce_ops as R
from tensorflux._src.ops.op_helpers import deprecated_argument_lookup
from tensorflux._src.ops.sparse.ragged_math_ops import get_positive_axis
from tensorflux._src.ops.sparse.ragged_ops import (_assert_splits_match, _interleave_rows,
                                                   _stack_axis0, _to_tensor_or_ragged,
                                                   gather_rows, map_flat_values,
                                                   stack_dynamic_partitions)
from tensorflux._src.ops.sparse.ragged_ops import range as ragged_range
from tensorflux._src.ops.sparse.ragged_tensor import RaggedTensor

__all__ = ["batch_gather", "concat", "dynamic_partition", "expand_dims", "gather", "gather_nd",
           "rank", "size", "squeeze", "tile", "where"]


def _with_deps(checks, rt):
    if not checks:
        return rt
    with _graph.control_dependencies(checks):
        if isinstance(rt, RaggedTensor):
            return rt.with_flat_values(A.identity(rt.flat_values))
        return A.identity(rt)


# -- concat ------------------------------------------------------------------------------------
def _as_ragged_inputs(values, what):
    inputs = [_to_tensor_or_ragged(v, name=f"rt_input_{i}") for i, v in enumerate(values)]
    ranks = {v.shape.ndims for v in inputs}
    if None in ranks:
        raise ValueError("rt_input.shape.ndims must be known statically")
    if len(ranks) > 1:
        raise ValueError(f"rt_input.shape.ndims must be the same for all inputs to {what}")
    if len({v.row_splits.dtype for v in inputs if isinstance(v, RaggedTensor)}) > 1:
        raise ValueError("Input RaggedTensors have mismatched row_splits dtypes; use "
                         "RaggedTensor.with_row_splits_dtype() to convert them to compatible "
                         "dtypes.")
    splits_dtype = next(v.row_splits.dtype for v in inputs if isinstance(v, RaggedTensor))
    ragged_rank = max(v.ragged_rank for v in inputs if isinstance(v, RaggedTensor))
    out = []
    for v in inputs:
        if not isinstance(v, RaggedTensor):
            v = RaggedTensor.from_tensor(v, ragged_rank=ragged_rank, row_splits_dtype=splits_dtype)
        elif v.ragged_rank < ragged_rank:
            v = v.with_flat_values(RaggedTensor.from_tensor(
                v.flat_values, ragged_rank=ragged_rank - v.ragged_rank,
                row_splits_dtype=splits_dtype))
        out.append(v)
    return out, ranks.pop()


def concat(values, axis, name=None):
    """Concatenates potentially ragged tensors along `axis` (TF's ragged concat)."""
    if not isinstance(values, (list, tuple)):
        values = [values]
    with _graph.name_scope(name, "RaggedConcat", values):
        if len(values) == 1:
            return _to_tensor_or_ragged(values[0])
        inputs, ndims = _as_ragged_inputs(values, "concat")
        axis = get_positive_axis(axis, ndims)
        return _concat(inputs, axis)


def _concat(inputs, axis):
    if axis == 0:
        return _stack_axis0(inputs, stack_values=False)
    if axis == 1:
        permuted = _interleave_rows(inputs)[0]
        return RaggedTensor.from_row_splits(permuted.values,
                                            permuted.row_splits[::len(inputs)],
                                            validate=False)
    checks = _assert_splits_match([[rt.row_splits] for rt in inputs])
    values = [rt.values for rt in inputs]
    if isinstance(values[0], RaggedTensor):
        inner = _concat(values, axis - 1)
    else:
        inner = A.concat(values, axis - 1)
    return _with_deps(checks, RaggedTensor.from_row_splits(inner, inputs[0].row_splits,
                                                           validate=False))


# -- gather, gather_nd, batch_gather -------------------------------------------------------------
def gather(params, indices, validate_indices=None, name=None, axis=None, batch_dims=0):
    """Rows `indices` of `params` (axis 0 only, as TF 1.15's ragged gather)."""
    del validate_indices
    if axis is None:
        axis = 0
    if not isinstance(axis, int) or axis != 0:
        raise ValueError("axis != 0 is not supported for ragged gather yet.")
    if not isinstance(batch_dims, int) or batch_dims != 0:
        raise ValueError("batch_dims != 0 is not supported for ragged gather yet.")
    with _graph.name_scope(name, "RaggedGather", [params, indices]):
        params = _to_tensor_or_ragged(params, name="params")
        indices = _to_tensor_or_ragged(indices, name="indices")
        if isinstance(indices, RaggedTensor):
            return indices.with_values(gather(params, indices.values))
        if not isinstance(params, RaggedTensor):
            return G.gather(params, indices)
        if indices.shape.ndims is None:
            raise ValueError("indices.shape.ndims must be known statically")
        if indices.shape.ndims == 0:
            return _row(params, indices)
        rows = gather_rows(params, A.reshape(indices, [-1]))
        return rows if indices.shape.ndims == 1 else _uniform_outer(rows, indices)


def _row(rt, index):
    start, limit = rt.row_starts()[index], rt.row_limits()[index]
    if isinstance(rt.values, RaggedTensor):
        return gather_rows(rt.values, M.range(start, limit))
    return rt.values[start:limit]


def _uniform_outer(rows, indices):
    """`rows` (one per index, flattened) regrouped by the leading index dimensions."""
    shape = A.shape(indices, out_type=rows.row_splits.dtype)
    result = rows
    for dim in range(indices.shape.ndims - 1, 0, -1):
        splits = M.range(R.reduce_prod(shape[:dim]) + 1) * shape[dim]
        result = RaggedTensor.from_row_splits(result, splits, validate=False)
    return result


def gather_nd(params, indices, name=None, batch_dims=0):
    """`params` items at the index tuples in the last dimension of `indices` (TF's ragged
    gather_nd: leading ragged dimensions are walked through their row starts)."""
    if not isinstance(batch_dims, int) or batch_dims != 0:
        raise ValueError("batch_dims != 0 is not supported for ragged gather yet.")
    with _graph.name_scope(name, "RaggedGatherNd", [params, indices]):
        params = _to_tensor_or_ragged(params, name="params")
        indices = _to_tensor_or_ragged(indices, name="indices")
        if isinstance(indices, RaggedTensor):
            if indices.shape.ndims is None or indices.shape[-1].value is None:
                raise ValueError("indices.shape[-1] must be statically known.")
            if indices.ragged_rank >= indices.shape.ndims - 1:
                raise ValueError("The innermost dimension of indices may not be ragged")
            return indices.with_values(gather_nd(params, indices.values))
        if not isinstance(params, RaggedTensor):
            return G.gather_nd(params, indices)
        ndims = indices.shape.ndims
        if ndims is None:
            raise ValueError("indices.rank be statically known.")
        if ndims == 0:
            raise ValueError("indices.rank must be at least 1.")
        k = indices.shape[-1].value
        if k is None:
            raise ValueError("indices.shape[-1] must be statically known.")
        if k > params.shape.ndims:
            raise ValueError(f"Index size ({k}) must be less than or equal to the rank of "
                             f"params ({params.shape.ndims})")
        tuples = A.reshape(indices, [-1, k])
        if k == 0:
            whole = RaggedTensor.from_row_splits(
                params, A.stack([GEN.zeros([], params.row_splits.dtype), params.nrows()]),
                validate=False)
            flat = gather_rows(whole, GEN.zeros(A.shape(tuples)[:1], _dtypes.int32))
        else:
            positions = M.cast(tuples[:, 0], params.row_splits.dtype)
            flat_params = params
            for dim in range(1, k):
                if not isinstance(flat_params, RaggedTensor):
                    # The rest index a dense tensor: gather_nd does them at once.
                    inner = A.concat([A.expand_dims(M.cast(positions, indices.dtype), 1),
                                      tuples[:, dim:]], 1)
                    return _regroup(G.gather_nd(flat_params, inner), indices)
                positions = G.gather(flat_params.row_starts(), positions) + \
                    M.cast(tuples[:, dim], positions.dtype)
                flat_params = flat_params.values
            flat = gather(flat_params, positions)
        return _regroup(flat, indices)


def _regroup(flat, indices):
    if indices.shape.ndims == 2:
        return flat
    if isinstance(flat, RaggedTensor):
        return _uniform_outer(flat, indices[..., 0])
    prefix = A.shape(indices)[:-1]
    return A.reshape(flat, A.concat([prefix, A.shape(flat)[1:]], 0))


def batch_gather(params, indices, name=None):
    """result[b] = gather(params[b], indices[b]) for a ragged or dense batch (TF's ragged
    batch_gather, one batch dimension)."""
    with _graph.name_scope(name, "RaggedBatchGather", [params, indices]):
        params = _to_tensor_or_ragged(params, name="params")
        indices = _to_tensor_or_ragged(indices, name="indices")
        if not (isinstance(params, RaggedTensor) or isinstance(indices, RaggedTensor)):
            return batch_gather_dense(params, indices)
        if indices.shape.ndims is None:
            raise ValueError("rank(indices) must be known statically")
        if indices.shape.ndims != 2:
            raise ValueError("batch_gather of RaggedTensors supports rank-2 indices here")
        if not isinstance(params, RaggedTensor):
            params = RaggedTensor.from_tensor(params, ragged_rank=1,
                                              row_splits_dtype=indices.row_splits.dtype)
        if not isinstance(indices, RaggedTensor):
            indices = RaggedTensor.from_tensor(indices, ragged_rank=1,
                                               row_splits_dtype=params.row_splits.dtype)
        checks = [check_ops.assert_equal(params.nrows(), indices.nrows(),
                                         message="Dimension 0 of params and indices must be "
                                                 "equal")]
        offsets = G.gather(params.row_starts(), indices.value_rowids())
        positions = M.cast(indices.values, offsets.dtype) + offsets
        values = params.values
        picked = gather_rows(values, positions) if isinstance(values, RaggedTensor) else \
            G.gather(values, positions)
        return _with_deps(checks, indices.with_values(picked))


# -- expand_dims, size, rank, squeeze, tile ------------------------------------------------------
def expand_dims(input, axis=None, name=None, dim=None):  # noqa: A002 - TF's name
    """A new dimension of size 1 at `axis` (uniform; ragged dims keep their rows)."""
    axis = deprecated_argument_lookup("axis", axis, "dim", dim)
    with _graph.name_scope(name, "RaggedExpandDims", [input]):
        rt = _to_tensor_or_ragged(input, name="input")
        if not isinstance(rt, RaggedTensor):
            return A.expand_dims(rt, axis)
        ndims = None if rt.shape.ndims is None else rt.shape.ndims + 1
        axis = get_positive_axis(axis, ndims)
        dtype = rt.row_splits.dtype
        if axis == 0:
            splits = A.stack([GEN.zeros([], dtype), rt.nrows()])
            return RaggedTensor.from_row_splits(rt, splits, validate=False)
        if axis == 1:
            return RaggedTensor.from_row_splits(rt, M.range(rt.nrows() + 1), validate=False)
        return rt.with_values(expand_dims(rt.values, axis - 1))


def size(input, name=None, out_type=_dtypes.int32):  # noqa: A002 - TF's name
    """The number of items (the flat values' size)."""
    rt = _to_tensor_or_ragged(input, name="input")
    flat = rt.flat_values if isinstance(rt, RaggedTensor) else rt
    return A.size(flat, out_type=out_type, name=name)


def rank(input, name=None):  # noqa: A002 - TF's name
    """The ragged rank plus the flat values' rank."""
    with _graph.name_scope(name, "RaggedRank", [input]) as scope:
        rt = _to_tensor_or_ragged(input, name="input")
        if not isinstance(rt, RaggedTensor):
            return A.rank(rt, name=scope)
        return A.rank(rt.flat_values) + rt.ragged_rank


def squeeze(input, axis=None, name=None, squeeze_dims=None):  # noqa: A002 - TF's name
    """Removes size-1 uniform dimensions listed in `axis` (required for ragged input)."""
    axis = deprecated_argument_lookup("axis", axis, "squeeze_dims", squeeze_dims)
    with _graph.name_scope(name, "RaggedSqueeze", [input]):
        rt = _to_tensor_or_ragged(input, name="input")
        if not isinstance(rt, RaggedTensor):
            return A.squeeze(rt, axis)
        if axis is None:
            raise ValueError("Ragged squeeze must have 'axis' argument.")
        axes = [axis] if isinstance(axis, int) else list(axis)
        if not axes:
            raise ValueError("Ragged squeeze must have 'axis' argument.")
        ndims = rt.shape.ndims
        axes = sorted({get_positive_axis(a, ndims) for a in axes})
        if any(1 <= a <= rt.ragged_rank for a in axes):
            raise ValueError("Cannot squeeze a ragged dimension.")
        inner = [a - rt.ragged_rank for a in axes if a > rt.ragged_rank]
        result = rt.with_flat_values(A.squeeze(rt.flat_values, inner)) if inner else rt
        if 0 in axes:
            ok = check_ops.assert_equal(result.nrows(), GEN.ones([], result.row_splits.dtype),
                                        message="Can not squeeze dimension 0: its size is "
                                                "not 1")
            with _graph.control_dependencies([ok]):
                result = result.values
                result = result.with_flat_values(A.identity(result.flat_values)) \
                    if isinstance(result, RaggedTensor) else A.identity(result)
        return result


def tile(input, multiples, name=None):  # noqa: A002 - TF's name
    """Repeats each dimension `multiples[d]` times: rows, then each row's items (a ragged
    row i of length L becomes L * multiples[1] long), then the values' dimensions."""
    with _graph.name_scope(name, "RaggedTile", [input, multiples]):
        rt = _to_tensor_or_ragged(input, name="input")
        if not isinstance(rt, RaggedTensor):
            return A.tile(rt, multiples)
        multiples = convert_to_tensor(multiples, name="multiples",
                                      preferred_dtype=_dtypes.int64)
        multiples.shape.with_rank(1)
        if rt.shape.ndims is not None:
            multiples.shape.assert_is_compatible_with([rt.shape.ndims])
        multiples = M.cast(multiples, rt.row_splits.dtype)
        return _tile(rt, multiples)


def _tile(rt, multiples):
    dtype = rt.row_splits.dtype
    values = rt.values
    inner = A.concat([GEN.ones([1], dtype), multiples[2:]], 0)
    values = _tile(values, inner) if isinstance(values, RaggedTensor) else \
        A.tile(values, inner)
    # Dimension 1: row i's items repeated multiples[1] times.
    starts, lengths = rt.row_starts(), rt.row_lengths()
    out_lengths = lengths * multiples[1]
    spans = ragged_range(out_lengths, row_splits_dtype=dtype)
    rowids = spans.value_rowids()
    safe = M.maximum(G.gather(lengths, rowids), GEN.ones([], dtype))
    positions = G.gather(starts, rowids) + M.floormod(spans.values, safe)
    picked = gather_rows(values, positions) if isinstance(values, RaggedTensor) else \
        G.gather(values, positions)
    result = RaggedTensor.from_row_splits(picked, spans.row_splits, validate=False)
    # Dimension 0: all rows repeated multiples[0] times.
    order = A.reshape(A.tile(A.expand_dims(M.range(rt.nrows()), 0),
                             A.stack([multiples[0], GEN.ones([], dtype)])), [-1])
    return gather_rows(result, order)


# -- where, dynamic_partition --------------------------------------------------------------------
def _coordinate_where(condition):
    if not isinstance(condition, RaggedTensor):
        return G.where(condition)
    coords = _coordinate_where(condition.values)
    condition = condition.with_row_splits_dtype(coords.dtype)
    first = coords[:, 0]
    rows = G.gather(condition.value_rowids(), first)
    cols = first - G.gather(condition.row_splits, rows)
    return A.concat([A.expand_dims(rows, 1), A.expand_dims(cols, 1), coords[:, 1:]], axis=1)


def where(condition, x=None, y=None, name=None):
    """TF's ragged where: coordinates of the true items, an elementwise choice between
    ragged x and y with the same partitions, or (a vector condition) a choice of rows."""
    if (x is None) != (y is None):
        raise ValueError("x and y must be either both None or both non-None")
    with _graph.name_scope(name, "RaggedWhere", [condition, x, y]):
        condition = _to_tensor_or_ragged(condition, dtype=_dtypes.bool, name="condition")
        if x is None:
            return _coordinate_where(condition)
        x = _to_tensor_or_ragged(x, name="x")
        y = _to_tensor_or_ragged(y, name="y")
        ragged = [isinstance(v, RaggedTensor) for v in (condition, x, y)]
        if not any(ragged):
            return G.where(condition, x, y)
        if all(ragged):
            return map_flat_values(G.where, condition, x, y)
        if not ragged[0]:
            condition.shape.assert_has_rank(1)
            both = concat([x, y], axis=0)
            nx = x.nrows(out_type=both.row_splits.dtype) if ragged[1] else \
                A.shape(x, out_type=both.row_splits.dtype)[0]
            ny = y.nrows(out_type=both.row_splits.dtype) if ragged[2] else \
                A.shape(y, out_type=both.row_splits.dtype)[0]
            picks = G.where(condition, M.range(nx), nx + M.range(ny))
            return gather(both, picks)
        raise ValueError("Input shapes do not match.")


def dynamic_partition(data, partitions, num_partitions, name=None):
    """The items of `data` in each partition, as a list of `num_partitions` ragged or
    dense results (tf.ragged.stack_dynamic_partitions, row by row)."""
    if not isinstance(num_partitions, int) or num_partitions < 0:
        raise TypeError("num_partitions must be a non-negative integer")
    data = _to_tensor_or_ragged(data, name="data")
    partitions = _to_tensor_or_ragged(partitions, name="partitions")
    if isinstance(partitions, RaggedTensor):
        if not isinstance(data, RaggedTensor):
            raise ValueError("data must be ragged if partitions is ragged.")
        checks = _assert_splits_match([partitions.nested_row_splits,
                                       data.nested_row_splits[:partitions.ragged_rank]])
        for _ in range(partitions.ragged_rank):
            data = data.values
        partitions = _with_deps(checks, partitions.flat_values)
    result = stack_dynamic_partitions(data, partitions, num_partitions, name)
    return [gather(result, i) for i in range(num_partitions)]
