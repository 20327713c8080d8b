"""TF 1.15's dispatch of ops on RaggedTensor arguments (TF's ragged_dispatch.py).

The op wrappers carry `framework.dispatch.add_dispatch_support`; this module registers
RaggedTensor / RaggedTensorValue as dispatch types and, for each API of TF's lists, the
handler that runs when one of its arguments is ragged:

- unary elementwise ops (tf.math.*, tf.cast, tf.identity, tf.zeros_like, ...): the op
  on the flat values, the partitions kept;
- list ops (tf.add_n): the ragged items must share their row partitions;
- binary elementwise ops (tf.add, comparisons, logical and bitwise ops, ...): TF's
  ragged broadcasting (below);
- the ragged-aware APIs (tf.reduce_*, tf.concat, tf.stack, tf.gather, tf.gather_nd,
  tf.batch_gather, tf.expand_dims, tf.tile, tf.where, tf.size, tf.rank, tf.squeeze,
  tf.dynamic_partition, tf.math.unsorted_segment_*): ragged_array_ops, ragged_math_ops.

Broadcasting a RaggedTensor x against y follows TF's RaggedTensorDynamicShape rules: a
dense y of lower rank than x's flat values broadcasts against the inner dimensions only;
otherwise y is aligned to x's rank (leading 1s; a y of higher rank repeats x in its new
leading dimensions), its outer dimension must be 1 or x's number of rows (one row of x
broadcasts to y's rows), its dimensions at x's ragged dimensions must be 1, and its
remaining dimensions broadcast against the flat values'. y's values are gathered per
flat value of x by its coordinates (rows, positions in the rows). Two RaggedTensors must
have equal row lengths at every ragged dimension. Violations fail the run with TF's
"Unable to broadcast: dimension size mismatch in dimension" assertion.
"""

from __future__ import annotations

import inspect

from tensorflux._src.framework import dispatch as _dispatch
from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.sparse_tensor import SparseTensor
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.ops.array import array_ops as A
from tensorflux._src.ops.array import gather_ops as G
from tensorflux._src.ops.array import generator_ops as GEN
from tensorflux._src.ops.array import host_ops as H
from tensorflux._src.ops.array import layout as L
from tensorflux._src.ops.debug import debug_ops as D
from tensorflux._src.ops.debug.debug_ops import Assert
from tensorflux._src.ops.math import bitwise_ops as B
from tensorflux._src.ops.math import complex_parts as CP
from tensorflux._src.ops.math import math_ops as M
from tensorflux._src.ops.math import reduce_ops as R
from tensorflux._src.ops.math import segment_ops as S
from tensorflux._src.ops.math import segment_reductions as SR
from tensorflux._src.ops.nn import nn_ops as NN
from tensorflux._src.ops.shape_fns import static_value
from tensorflux._src.ops.sparse import ragged_array_ops as RA
from tensorflux._src.ops.sparse import ragged_math_ops as RM
from tensorflux._src.ops.sparse.ragged_ops import (_assert_splits_match, _to_tensor_or_ragged,
                                                   is_ragged)
from tensorflux._src.ops.sparse.ragged_ops import stack as ragged_stack
from tensorflux._src.ops.sparse.ragged_tensor import RaggedTensor, RaggedTensorValue

__all__ = ["binary_elementwise", "ragged_op_list"]

_dispatch.register_dispatch_type(RaggedTensor)
_dispatch.register_dispatch_type(RaggedTensorValue)

NOT_SUPPORTED = _dispatch.NOT_SUPPORTED

UNARY_ELEMENTWISE_OPS = [
    D.check_numerics, A.identity, GEN.ones_like, GEN.zeros_like, M.clip_by_value, B.invert,
    M.abs, M.acos, M.acosh, CP.angle, M.asin, M.asinh, M.atan, M.atanh, M.cast, M.ceil,
    M.conj, M.cos, M.cosh, M.digamma, M.erf, M.erfc, M.exp, M.expm1, M.floor, CP.imag,
    M.is_finite, M.is_inf, M.is_nan, M.lgamma, M.log, M.log1p, NN.log_sigmoid,
    M.logical_not, M.negative, M.real, M.reciprocal, M.rint, M.round, M.rsqrt,
    M.saturate_cast, M.sign, M.sin, M.sinh, M.sqrt, M.square, M.tan,
]
UNARY_LIST_ELEMENTWISE_OPS = [M.add_n]
BINARY_ELEMENTWISE_OPS = [
    B.bitwise_and, B.bitwise_or, B.bitwise_xor, B.left_shift, B.right_shift,
    M.add, M.atan2, M.complex, M.div_no_nan, M.divide, M.equal, M.floordiv, M.floormod,
    M.greater, M.greater_equal, M.less, M.less_equal, M.logical_and, M.logical_or,
    M.logical_xor, M.maximum, M.minimum, M.multiply, M.not_equal, M.pow, M.realdiv,
    M.squared_difference, M.subtract, M.truediv, M.truncatediv, M.truncatemod,
]


def _convertible(value):
    """TF's _is_convertible_to_tensor: anything convert_to_tensor takes, SparseTensors not."""
    if isinstance(value, SparseTensor):
        return False
    try:
        convert_to_tensor(value)
        return True
    except (TypeError, ValueError):
        return False


def _params(api):
    return list(inspect.signature(api).parameters)


# -- unary and list elementwise ops ------------------------------------------------------
def _unary_handler(api):
    target, first = api._tf_dispatch_target, _params(api)[0]

    def handler(*args, **kwargs):
        if args:
            x, args = args[0], args[1:]
        else:
            kwargs = dict(kwargs)
            x = kwargs.pop(first, None)
        if not is_ragged(x):
            return NOT_SUPPORTED
        x = _to_tensor_or_ragged(x)
        return x.with_flat_values(target(x.flat_values, *args, **kwargs))
    return handler


def _list_handler(api):
    target, first = api._tf_dispatch_target, _params(api)[0]

    def handler(*args, **kwargs):
        if args:
            items, args = args[0], args[1:]
        else:
            kwargs = dict(kwargs)
            items = kwargs.pop(first, None)
        if not isinstance(items, (list, tuple)) or not any(is_ragged(v) for v in items):
            return NOT_SUPPORTED
        if not all(is_ragged(v) or _convertible(v) for v in items):
            return NOT_SUPPORTED
        items = [_to_tensor_or_ragged(v) for v in items]
        nested = [v.nested_row_splits for v in items if isinstance(v, RaggedTensor)]
        flat = [v.flat_values if isinstance(v, RaggedTensor) else v for v in items]
        checks = _assert_splits_match(nested)
        with _graph.control_dependencies(checks):
            result = target(flat, *args, **kwargs)
        return RaggedTensor.from_nested_row_splits(result, nested[0], validate=False)
    return handler


# -- binary elementwise ops and broadcasting ---------------------------------------------
def _broadcast_check(condition, axis, lengths, dim_size):
    return Assert(condition, ["Unable to broadcast: dimension size mismatch in dimension",
                              axis, "lengths=", lengths, "dim_size=", dim_size], summarize=10)


def _same_vectors(a, b):
    n = M.minimum(A.size(a, out_type=a.dtype), A.size(b, out_type=a.dtype))
    return M.logical_and(M.equal(A.size(a), A.size(b)),
                         R.reduce_all(M.equal(a[:n], M.cast(b, a.dtype)[:n])))


def _match_ragged(x, y):
    """Checks of two RaggedTensors' partitions; the one of lower ragged rank is first given
    the other's ragged rank (its uniform dimensions as row splits)."""
    if x.row_splits.dtype != y.row_splits.dtype:
        raise ValueError("Input RaggedTensors have mismatched row_splits dtypes; use "
                         "RaggedTensor.with_row_splits_dtype() to convert them to compatible "
                         "dtypes.")
    if x.shape.ndims is not None and y.shape.ndims is not None and \
            x.shape.ndims != y.shape.ndims:
        raise ValueError(f"Unable to broadcast: RaggedTensors of ranks {x.shape.ndims} and "
                         f"{y.shape.ndims}")
    dtype = x.row_splits.dtype
    if x.ragged_rank < y.ragged_rank:
        x = x.with_flat_values(RaggedTensor.from_tensor(
            x.flat_values, ragged_rank=y.ragged_rank - x.ragged_rank, row_splits_dtype=dtype))
    elif y.ragged_rank < x.ragged_rank:
        y = y.with_flat_values(RaggedTensor.from_tensor(
            y.flat_values, ragged_rank=x.ragged_rank - y.ragged_rank, row_splits_dtype=dtype))
    checks = []
    nx, ny = x.nrows(), y.nrows()
    checks.append(_broadcast_check(M.equal(nx, ny), 0, ny, nx))
    with _graph.control_dependencies(checks):
        for axis, (lx, ly) in enumerate(zip(x.nested_row_lengths(), y.nested_row_lengths()), 1):
            if lx is ly:
                continue
            checks.append(_broadcast_check(_same_vectors(lx, ly), axis, ly, lx))
    return x, y, checks


def _expand_leading(rt, lead):
    """`rt` repeated into the leading dimensions `lead` (a vector): dense broadcasting of
    a RaggedTensor to a higher rank; the new dimensions are uniform row partitions."""
    dtype = rt.row_splits.dtype
    one = RaggedTensor.from_row_splits(rt, A.stack([GEN.zeros([], dtype), rt.nrows()]),
                                       validate=False)
    count = R.reduce_prod(lead)
    rows = RA.gather(one, GEN.zeros(A.reshape(count, [1]), dtype))
    return RA._uniform_outer(rows, GEN.zeros(lead, dtype))


def _coordinates(rt):
    """Per flat value of `rt`, its index in each partitioned dimension (rows, then the
    position in the row at each ragged level)."""
    chain = []
    level = rt
    while isinstance(level, RaggedTensor):
        chain.append(level)
        level = level.values
    dtype = rt.row_splits.dtype
    index = M.range(A.shape(level, out_type=dtype)[0])
    coords = []
    for part in reversed(chain):
        row = G.gather(part.value_rowids(), index)
        coords.insert(0, index - G.gather(part.row_splits, row))
        index = row
    return [index] + coords


def _broadcast_dense(rt, dense, uniform=1):
    """`dense` (rank >= rt's flat values' rank) as values aligned with rt's flat values;
    returns (values, checks). rt's first `uniform` partitioned dimensions are uniform
    (dense may have 1 or their size there); its ragged ones take only 1."""
    ndims, ragged = rt.shape.ndims, rt.ragged_rank
    if ndims is None:
        raise ValueError("Unable to broadcast: unknown rank")
    dtype = rt.row_splits.dtype
    for _ in range(ndims - dense.shape.ndims):
        dense = A.expand_dims(dense, 0)
    shape = A.shape(dense, out_type=dtype)
    bounds = rt.bounding_shape(out_type=dtype)
    checks = []
    lengths = (None,) + rt.nested_row_lengths()
    for axis in range(ragged + 1):
        if axis < uniform:
            size = bounds[axis]
            ok = M.logical_or(M.equal(shape[axis], 1), M.equal(shape[axis], size))
            checks.append(_broadcast_check(ok, axis, shape[axis], size))
        else:
            checks.append(_broadcast_check(M.equal(shape[axis], 1), axis, shape[axis],
                                           lengths[axis]))
    with _graph.control_dependencies(checks):
        dense = A.identity(dense)
    coords = _coordinates(rt)
    picks = []
    for axis in range(ragged + 1):
        static = dense.shape[axis].value
        if static == 1 or axis >= uniform:
            picks.append(GEN.zeros_like(coords[axis]))
        else:
            picks.append(coords[axis] * M.cast(M.not_equal(shape[axis], 1), dtype))
    return G.gather_nd(dense, A.stack(picks, axis=1)), checks


def _rows_to(rt, dense):
    """`rt` with its one row repeated to dense's rows (TF broadcasts a one-row ragged
    operand); a no-op when the row counts are known not to need it."""
    nrows, rows = static_value(rt.nrows()), dense.shape[0].value
    if nrows is not None and nrows != 1:
        return rt
    if nrows == 1 and rows is not None:
        return RA.gather(rt, GEN.zeros([rows], _dtypes.int32))
    # Unknown counts: gather rows 0..n-1 (all row 0 when rt has one row), after TF's check.
    dtype = rt.row_splits.dtype
    nrows, rows = rt.nrows(), A.shape(dense, out_type=dtype)[0]
    ok = _broadcast_check(M.logical_or(M.logical_or(M.equal(rows, 1), M.equal(rows, nrows)),
                                       M.equal(nrows, 1)), 0, rows, nrows)
    with _graph.control_dependencies([ok]):
        count = M.maximum(nrows, rows)
    keep = M.cast(M.not_equal(nrows, 1), dtype)
    return RA.gather(rt, M.range(count) * keep)


def binary_elementwise(op, x, y, x_name="x", y_name="y", *args, **kwargs):
    """`op(x, y)` with at least one ragged operand, by TF's ragged broadcasting."""
    x_ragged, y_ragged = is_ragged(x), is_ragged(y)
    try:
        if x_ragged:
            x = _to_tensor_or_ragged(x)
        if y_ragged:
            y = _to_tensor_or_ragged(y)
        if not x_ragged:
            x = convert_to_tensor(x, name=x_name, preferred_dtype=y.dtype)
        if not y_ragged:
            y = convert_to_tensor(y, name=y_name, preferred_dtype=x.dtype)
    except (TypeError, ValueError):
        return NOT_SUPPORTED
    checks = []
    if x_ragged and y_ragged:
        x, y, checks = _match_ragged(x, y)
        x_values, y_values, template = x.flat_values, y.flat_values, x
    else:
        rt, dense = (x, y) if x_ragged else (y, x)
        flat_ndims = rt.flat_values.shape.ndims
        if dense.shape.ndims is None or flat_ndims is None or dense.shape.ndims < flat_ndims:
            dense_values = dense
        else:
            if rt.shape.ndims is None:
                raise ValueError("Unable to broadcast: unknown rank")
            extra = dense.shape.ndims - rt.shape.ndims
            if extra > 0:
                rt = _expand_leading(rt, A.shape(dense, out_type=rt.row_splits.dtype)[:extra])
            elif extra == 0 and dense.shape[0].value != 1:
                rt = _rows_to(rt, dense)
            dense_values, checks = _broadcast_dense(rt, dense, uniform=max(extra, 0) + 1)
        template = rt
        x_values, y_values = (rt.flat_values, dense_values) if x_ragged else \
            (dense_values, rt.flat_values)
    with _graph.control_dependencies(checks):
        result = op(x_values, y_values, *args, **kwargs)
    return template.with_flat_values(result)


def _binary_handler(api):
    target = api._tf_dispatch_target
    x_name, y_name = _params(api)[:2]

    def handler(*args, **kwargs):
        kwargs = dict(kwargs)
        if len(args) > 1:
            x, y, args = args[0], args[1], args[2:]
        elif args:
            x, y, args = args[0], kwargs.pop(y_name, None), args[1:]
        else:
            x, y = kwargs.pop(x_name, None), kwargs.pop(y_name, None)
        if not (is_ragged(x) or is_ragged(y)):
            return NOT_SUPPORTED
        return binary_elementwise(target, x, y, x_name, y_name, *args, **kwargs)
    return handler


# -- the ragged-aware APIs --------------------------------------------------------------
def _ragged_api_handler(api, ragged_fn, ragged_args):
    """Calls `ragged_fn` with the API's arguments when one of `ragged_args` ("[name]" for
    a list argument) is ragged and all of them convert to tensors (TF's RaggedDispatcher)."""
    names = _params(api)
    infos = []
    for arg in ragged_args:
        is_list = arg.startswith("[")
        arg = arg.strip("[]")
        infos.append((arg, names.index(arg), is_list))

    def handler(*args, **kwargs):
        found = False
        for arg, position, is_list in infos:
            value = args[position] if position < len(args) else kwargs.get(arg)
            if is_list:
                if not isinstance(value, (list, tuple)):
                    return NOT_SUPPORTED
                for item in value:
                    if is_ragged(item):
                        found = True
                    elif not _convertible(item):
                        return NOT_SUPPORTED
            elif is_ragged(value):
                found = True
            elif value is not None and not _convertible(value):
                return NOT_SUPPORTED
        return ragged_fn(*args, **kwargs) if found else NOT_SUPPORTED
    return handler


def _stack(values, axis=0, name="stack"):
    return ragged_stack(values, axis=axis, name=name)


def _concat(values, axis, name="concat"):
    return RA.concat(values, axis, name=name)


def _reduction(fn):
    def reduce(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None,
               keep_dims=None):
        if reduction_indices is not None:
            if axis is not None:
                raise ValueError("Can not specify both 'axis' and 'reduction_indices'.")
            axis = reduction_indices
        if keep_dims is not None:
            if keepdims is not None:
                raise ValueError("Can not specify both 'keepdims' and 'keep_dims'.")
            keepdims = keep_dims
        return fn(input_tensor, axis, keepdims=bool(keepdims), name=name)
    return reduce


RAGGED_DISPATCH_OPS = [
    (L.batch_gather, RA.batch_gather, ["params", "indices"]),
    (A.concat, _concat, ["[values]"]),
    (A.expand_dims, RA.expand_dims, ["input"]),
    (G.gather, RA.gather, ["params", "indices"]),
    (G.gather_nd, RA.gather_nd, ["params", "indices"]),
    (A.rank, RA.rank, ["input"]),
    (A.size, RA.size, ["input"]),
    (A.squeeze, RA.squeeze, ["input"]),
    (A.stack, _stack, ["[values]"]),
    (A.tile, RA.tile, ["input"]),
    (G.where, RA.where, ["condition", "x", "y"]),
    (H.dynamic_partition, RA.dynamic_partition, ["data", "partitions"]),
    (S.unsorted_segment_sum, RM.segment_sum, ["data", "segment_ids"]),
    (SR.unsorted_segment_prod, RM.segment_prod, ["data", "segment_ids"]),
    (SR.unsorted_segment_min, RM.segment_min, ["data", "segment_ids"]),
    (SR.unsorted_segment_max, RM.segment_max, ["data", "segment_ids"]),
    (SR.unsorted_segment_mean, RM.segment_mean, ["data", "segment_ids"]),
    (SR.unsorted_segment_sqrt_n, RM.segment_sqrt_n, ["data", "segment_ids"]),
    (R.reduce_sum, _reduction(RM.reduce_sum), ["input_tensor"]),
    (R.reduce_prod, _reduction(RM.reduce_prod), ["input_tensor"]),
    (R.reduce_min, _reduction(RM.reduce_min), ["input_tensor"]),
    (R.reduce_max, _reduction(RM.reduce_max), ["input_tensor"]),
    (R.reduce_mean, _reduction(RM.reduce_mean), ["input_tensor"]),
    (R.reduce_any, _reduction(RM.reduce_any), ["input_tensor"]),
    (R.reduce_all, _reduction(RM.reduce_all), ["input_tensor"]),
]


def _register():
    for api in UNARY_ELEMENTWISE_OPS:
        _dispatch.dispatch_for(api)(_unary_handler(api))
    for api in UNARY_LIST_ELEMENTWISE_OPS:
        _dispatch.dispatch_for(api)(_list_handler(api))
    for api in BINARY_ELEMENTWISE_OPS:
        _dispatch.dispatch_for(api)(_binary_handler(api))
    for api, fn, args in RAGGED_DISPATCH_OPS:
        _dispatch.dispatch_for(api)(_ragged_api_handler(api, fn, args))


_register()


def ragged_op_list():
    """The names of the ops that take RaggedTensor arguments here."""
    apis = UNARY_ELEMENTWISE_OPS + UNARY_LIST_ELEMENTWISE_OPS + BINARY_ELEMENTWISE_OPS + \
        [api for api, _, _ in RAGGED_DISPATCH_OPS]
    return sorted({api.__name__ for api in apis})


# -- RaggedTensor operators (TF's ragged_operators.py: the dispatching ops themselves) ------
def _right(op):
    def reflected(y, x):
        return op(x, y)
    return reflected


for _name, _op in (("add", M.add), ("sub", M.subtract), ("mul", M.multiply),
                   ("truediv", M.truediv), ("floordiv", M.floordiv), ("mod", M.floormod),
                   ("pow", M.pow), ("and", M.logical_and), ("or", M.logical_or),
                   ("xor", M.logical_xor)):
    setattr(RaggedTensor, f"__{_name}__", _op)
    setattr(RaggedTensor, f"__r{_name}__", _right(_op))
for _name, _op in (("lt", M.less), ("le", M.less_equal), ("gt", M.greater),
                   ("ge", M.greater_equal), ("neg", M.negative), ("abs", M.abs),
                   ("invert", M.logical_not)):
    setattr(RaggedTensor, f"__{_name}__", _op)
