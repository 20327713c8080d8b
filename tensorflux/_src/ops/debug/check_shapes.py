"""`tf.debugging.assert_shapes`: shapes and the relations between tensors' dimensions.

Each constraint is `(tensor, shape)` where a shape entry is an integer (that size), a
symbol (the same size wherever the symbol appears, across tensors), `None` or `'.'`
(any size); a first entry `...` or `'*'` leaves the outer dimensions free. A scalar and
a shape of length zero both count as one dimension of size one, as in TF. What the graph
already determines is checked now (ValueError, TF's messages); the rest becomes Assert
ops, ordered after the rank checks.
"""

from __future__ import annotations

from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.ops.array import array_ops
from tensorflux._src.ops.constant import constant
from tensorflux._src.ops.control import control_flow_ops, control_ops
from tensorflux._src.ops.debug.check_ops import assert_rank, assert_rank_at_least, assert_rank_in
from tensorflux._src.ops.debug.debug_ops import Assert
from tensorflux._src.ops.math import math_ops

__all__ = ["assert_shapes"]


def _is_known(size) -> bool:
    if size is None:
        return False
    try:
        int(size)
        return True
    except (TypeError, ValueError):
        return False


def _dimension_sizes(x):
    """Sizes of x's dimensions: ints where static, scalar tensors elsewhere; a scalar
    is one dimension of size one."""
    rank = x.shape.ndims
    if rank == 0:
        return (1,)
    dynamic = array_ops.shape(x)
    if rank is not None:
        return [int(d) if d is not None else dynamic[i]
                for i, d in enumerate(x.shape.as_list())]
    is_scalar = math_ops.equal(array_ops.rank(x), 0)
    return control_flow_ops.cond(is_scalar, lambda: constant([1]), lambda: dynamic)


def assert_shapes(shapes, data=None, summarize=None, message=None, name=None):
    """An op checking the constraints at run time (a no-op group when the graph settles
    them all); raises ValueError now for any constraint the static shapes violate."""
    if isinstance(shapes, dict):
        shapes = shapes.items()
    message = message or ""
    with _graph.name_scope(name, "assert_shapes"):
        constraints = [(convert_to_tensor(x), s) for x, s in shapes if s is not None]
        entries = []  # (tensor, outer dims free, sizes, symbols)
        for tensor, symbolic in constraints:
            if not (hasattr(symbolic, "__iter__") or hasattr(symbolic, "__getitem__")):
                raise ValueError(f"{message}.  Tensor {tensor.name}.  Specified shape must be "
                                 f"an iterable.  An iterable has the attribute `__iter__` or "
                                 f"`__getitem__`.  Received specified shape: {symbolic}")
            symbols = tuple(symbolic)
            for i, symbol in enumerate(symbols):
                if (symbol is Ellipsis or symbol == "*") and i != 0:
                    raise ValueError(f"{message}.  Tensor {tensor.name} specified shape index "
                                     f"{i}.  Symbol `...` or `*` for a variable number of "
                                     f"unspecified dimensions is only allowed as the first "
                                     f"entry")
            free_outer = bool(symbols) and (symbols[0] is Ellipsis or symbols[0] == "*")
            inner = symbols[1:] if free_outer else symbols
            entries.append((tensor, free_outer, _dimension_sizes(tensor), inner or (1,)))

        rank_checks = []
        for tensor, free_outer, _, symbols in entries:
            rank = len(symbols)
            if free_outer:
                if rank <= 1:
                    continue
                check = assert_rank_at_least(tensor, rank, data=data, summarize=summarize,
                                             message=message, name=name)
            elif rank <= 1:  # rank 0 and rank 1 of size one are the same to this check
                check = assert_rank_in(tensor, [0, 1], data=data, summarize=summarize,
                                       message=message, name=name)
            else:
                check = assert_rank(tensor, rank, data=data, summarize=summarize,
                                    message=message, name=name)
            rank_checks.append(check)

        size_checks, specified = [], {}
        for tensor, free_outer, sizes, symbols in entries:
            for i, symbol in enumerate(symbols):
                if symbol is None or symbol == ".":
                    continue
                dim = i - len(symbols) if free_outer else i
                if symbol not in specified and not _is_known(symbol):
                    with _graph.control_dependencies(rank_checks):
                        specified[symbol] = (sizes[dim], tensor, dim)
                    continue
                if _is_known(symbol):
                    want, why = int(symbol), "Specified explicitly"
                else:
                    want, by, at = specified[symbol]
                    why = f"Specified by tensor {by.name} dimension {at}"
                with _graph.control_dependencies(rank_checks):
                    actual = sizes[dim]
                if _is_known(actual) and _is_known(want):
                    if int(actual) != int(want):
                        raise ValueError(f"{message}.  {why}.  Tensor {tensor.name} dimension "
                                         f"{dim} must have size {int(want)}.  Received size "
                                         f"{int(actual)}, shape {tensor.shape}")
                    continue
                condition = math_ops.equal(convert_to_tensor(actual), convert_to_tensor(want))
                check_data = data if data is not None else [
                    message, why, f"Tensor {tensor.name} dimension", dim, "must have size",
                    want, "Received shape: ", array_ops.shape(tensor)]
                size_checks.append(Assert(condition, check_data, summarize=summarize))
    with _graph.control_dependencies(rank_checks):
        return control_ops.group(*size_checks)
