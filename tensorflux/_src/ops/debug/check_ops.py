"""TF1's asserts (`tf.debugging.assert_equal`, `assert_rank`, ...), built on `tf.Assert`.

Data lists and messages are TF 1.15's, including its quirks: the message argument is
always the first data item (so an empty one prints as "[]"), and assert_less_equal,
assert_greater, assert_greater_equal and assert_non_positive lack a comma in their data
lists, which glues "...element-wise:" to "x (name) = ". As in TF 1.15, only
assert_equal checks constant inputs while the graph is built; the other comparisons
fail when they run. Rank, type and scalar checks are static whenever the shape or
dtype is known.
"""

from __future__ import annotations

import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import errors
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.operation import Tensor
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.ops.array import array_ops
from tensorflux._src.ops.control.control_ops import no_op
from tensorflux._src.ops.debug.debug_ops import Assert
from tensorflux._src.ops.math import math_ops, reduce_ops
from tensorflux._src.ops.shape_fns import static_value

__all__ = [
    "assert_equal", "assert_none_equal", "assert_less", "assert_less_equal",
    "assert_greater", "assert_greater_equal", "assert_positive", "assert_negative",
    "assert_non_negative", "assert_non_positive", "assert_near", "assert_rank",
    "assert_rank_at_least", "assert_rank_in", "assert_type", "assert_integer",
    "assert_scalar", "assert_proper_iterable", "assert_same_float_dtype",
    "is_numeric_tensor",
]

NUMERIC_TYPES = frozenset([
    _dtypes.float32, _dtypes.float64, _dtypes.int8, _dtypes.int16, _dtypes.int32,
    _dtypes.int64, _dtypes.uint8, _dtypes.complex64])


def _with_dependencies(dependencies, output):
    """TF's control_flow_ops.with_dependencies: `output` once `dependencies` ran."""
    with _graph.name_scope(None, "control_dependency", list(dependencies) + [output]) as scope:
        with _graph.control_dependencies(dependencies):
            return array_ops.identity(output, name=scope)


# -- element-wise comparisons ----------------------------------------------------------------
def _static_message(data):
    """TF's _assert_static text: every data item, constants by their numpy value."""
    lines = []
    for item in data:
        value = static_value(item) if isinstance(item, Tensor) else None
        lines.append(str(value) if value is not None else str(item))
    return "\n".join(lines)


def _compare(opname, condition_text, compare, x, y, data, summarize, message, name,
             static_check=None):
    """assert_equal & co.: Assert(reduce_all(compare(x, y)), TF's default data)."""
    message = message or ""
    with _graph.name_scope(name, opname, [x, y, data]):
        x = convert_to_tensor(x, name="x")
        y = convert_to_tensor(y, name="y")
        if data is None:
            data = [message] + condition_text(x.name, y.name) + [x, "y (%s) = " % y.name, y]
        condition = reduce_ops.reduce_all(compare(x, y))
        if static_check is not None:
            x_static, y_static = static_value(x), static_value(y)
            if x_static is not None and y_static is not None:
                if not np.all(static_check(x_static, y_static)):
                    raise errors.InvalidArgumentError(None, None, _static_message(data))
        return Assert(condition, data, summarize=summarize)


def _separate(condition):
    return lambda x_name, y_name: [condition, "x (%s) = " % x_name]


def _glued(condition):
    # TF 1.15's data lists for these miss a comma: the two strings are one item.
    return lambda x_name, y_name: [condition + "x (%s) = " % x_name]


def assert_equal(x, y, data=None, summarize=None, message=None, name=None):
    """Op failing the run unless x == y element-wise; raises InvalidArgumentError at once
    when both are constants that differ."""
    return _compare("assert_equal", _separate("Condition x == y did not hold element-wise:"),
                    math_ops.equal, x, y, data, summarize, message, name,
                    static_check=lambda a, b: a == b)


def assert_none_equal(x, y, data=None, summarize=None, message=None, name=None):
    """Op failing the run unless x != y for every element."""
    return _compare("assert_none_equal",
                    _separate("Condition x != y did not hold for every single element:"),
                    math_ops.not_equal, x, y, data, summarize, message, name)


def assert_less(x, y, data=None, summarize=None, message=None, name=None):
    """Op failing the run unless x < y element-wise."""
    return _compare("assert_less", _separate("Condition x < y did not hold element-wise:"),
                    math_ops.less, x, y, data, summarize, message, name)


def assert_less_equal(x, y, data=None, summarize=None, message=None, name=None):
    """Op failing the run unless x <= y element-wise."""
    return _compare("assert_less_equal", _glued("Condition x <= y did not hold element-wise:"),
                    math_ops.less_equal, x, y, data, summarize, message, name)


def assert_greater(x, y, data=None, summarize=None, message=None, name=None):
    """Op failing the run unless x > y element-wise."""
    return _compare("assert_greater", _glued("Condition x > y did not hold element-wise:"),
                    math_ops.greater, x, y, data, summarize, message, name)


def assert_greater_equal(x, y, data=None, summarize=None, message=None, name=None):
    """Op failing the run unless x >= y element-wise."""
    return _compare("assert_greater_equal",
                    _glued("Condition x >= y did not hold element-wise:"),
                    math_ops.greater_equal, x, y, data, summarize, message, name)


def _sign_assert(opname, condition_text, check, x, data, summarize, message, name):
    """assert_positive & co.: a comparison with zero, under the opname scope."""
    message = message or ""
    with _graph.name_scope(name, opname, [x, data]):
        x = convert_to_tensor(x, name="x")
        if data is None:
            data = [message] + condition_text(x.name) + [x]
        zero = convert_to_tensor(0, dtype=x.dtype)
        return check(x, zero, data)


def assert_negative(x, data=None, summarize=None, message=None, name=None):
    """Op failing the run unless x < 0 element-wise."""
    return _sign_assert(
        "assert_negative", lambda n: ["Condition x < 0 did not hold element-wise:",
                                      "x (%s) = " % n],
        lambda x, zero, data: assert_less(x, zero, data=data, summarize=summarize),
        x, data, summarize, message, name)


def assert_positive(x, data=None, summarize=None, message=None, name=None):
    """Op failing the run unless x > 0 element-wise."""
    return _sign_assert(
        "assert_positive", lambda n: ["Condition x > 0 did not hold element-wise:",
                                      "x (%s) = " % n],
        lambda x, zero, data: assert_less(zero, x, data=data, summarize=summarize),
        x, data, summarize, message, name)


def assert_non_negative(x, data=None, summarize=None, message=None, name=None):
    """Op failing the run unless x >= 0 element-wise."""
    return _sign_assert(
        "assert_non_negative", lambda n: ["Condition x >= 0 did not hold element-wise:",
                                          "x (%s) = " % n],
        lambda x, zero, data: assert_less_equal(zero, x, data=data, summarize=summarize),
        x, data, summarize, message, name)


def assert_non_positive(x, data=None, summarize=None, message=None, name=None):
    """Op failing the run unless x <= 0 element-wise."""
    return _sign_assert(
        "assert_non_positive",
        lambda n: ["Condition x <= 0 did not hold element-wise:x (%s) = " % n],  # TF's glue
        lambda x, zero, data: assert_less_equal(x, zero, data=data, summarize=summarize),
        x, data, summarize, message, name)


def assert_near(x, y, rtol=None, atol=None, data=None, summarize=None, message=None,
                name=None):
    """Op failing the run unless |x - y| < atol + rtol * |y| element-wise (default
    tolerances 10 * eps of x's dtype)."""
    message = message or ""
    with _graph.name_scope(name, "assert_near", [x, y, rtol, atol, data]):
        x = convert_to_tensor(x, name="x")
        y = convert_to_tensor(y, name="y", dtype=x.dtype)
        eps = np.finfo(x.dtype.as_numpy_dtype).eps
        rtol = convert_to_tensor(10 * eps if rtol is None else rtol, name="rtol",
                                 dtype=x.dtype)
        atol = convert_to_tensor(10 * eps if atol is None else atol, name="atol",
                                 dtype=x.dtype)
        if data is None:
            data = [message,
                    "x and y not equal to tolerance rtol = %s, atol = %s" % (rtol, atol),
                    "x (%s) = " % x.name, x, "y (%s) = " % y.name, y]
        tol = atol + rtol * math_ops.abs(y)
        diff = math_ops.abs(x - y)
        condition = reduce_ops.reduce_all(math_ops.less(diff, tol))
        return Assert(condition, data, summarize=summarize)


# -- ranks -------------------------------------------------------------------------------------
class _StaticRankFailed(ValueError):
    def __init__(self, actual, given):
        super().__init__("Static rank condition failed", actual, given)
        self.actual, self.given = actual, given


def _rank_condition(x, ranks, static_condition, dynamic_condition, data, summarize):
    """A no_op when the ranks are known (raising when they disagree), else an Assert."""
    for rank in ranks:
        assert_type(rank, _dtypes.int32)
    ranks_static = [static_value(rank) for rank in ranks]
    if all(r is not None for r in ranks_static):
        if any(np.ndim(r) != 0 for r in ranks_static):
            raise ValueError("Rank must be a scalar.")
        x_rank = x.shape.ndims
        if x_rank is not None:
            if not static_condition(x_rank, ranks_static):
                raise _StaticRankFailed(x_rank, ranks_static)
            return no_op(name="static_checks_determined_all_ok")
    condition = dynamic_condition(array_ops.rank(x), ranks)
    # Guards against assert_rank(x, [n]) meant as assert_rank(x, n).
    for rank, rank_static in zip(ranks, ranks_static):
        if rank_static is None:
            rank_check = assert_rank(rank, 0, data=["Rank must be a scalar. Received rank: ",
                                                    rank])
            condition = _with_dependencies([rank_check], condition)
    return Assert(condition, data, summarize=summarize)


def _single_rank(opname, relation, static_condition, dynamic_condition, x, rank, data,
                 summarize, message, name):
    with _graph.name_scope(name, opname, [x, rank] + list(data or [])):
        x = convert_to_tensor(x, name="x")
        rank = convert_to_tensor(rank, name="rank")
        message = message or ""
        if data is None:
            data = [message, "Tensor %s must have %s" % (x.name, relation), rank,
                    "Received shape: ", array_ops.shape(x)]
        try:
            return _rank_condition(x, [rank], lambda a, r: static_condition(a, r[0]),
                                   lambda a, r: dynamic_condition(a, r[0]), data, summarize)
        except _StaticRankFailed as e:
            raise ValueError("%s.  Tensor %s must have %s %d.  Received rank %d, shape %s"
                             % (message, x.name, relation, e.given[0], e.actual,
                                x.shape)) from None


def assert_rank(x, rank, data=None, summarize=None, message=None, name=None):
    """Checks that x has rank `rank`: ValueError now when x's rank is known, else an
    Assert op (a no_op when the static check passed)."""
    return _single_rank("assert_rank", "rank", lambda a, r: a == r, math_ops.equal,
                        x, rank, data, summarize, message, name)


def assert_rank_at_least(x, rank, data=None, summarize=None, message=None, name=None):
    """Checks that x has rank `rank` or more (statically when x's rank is known)."""
    return _single_rank("assert_rank_at_least", "rank at least", lambda a, r: a >= r,
                        math_ops.greater_equal, x, rank, data, summarize, message, name)


def assert_rank_in(x, ranks, data=None, summarize=None, message=None, name=None):
    """Checks that x's rank is one of `ranks` (statically when x's rank is known)."""
    with _graph.name_scope(name, "assert_rank_in", [x] + list(ranks) + list(data or [])):
        x = convert_to_tensor(x, name="x")
        ranks = [convert_to_tensor(rank, name="rank") for rank in ranks]
        message = message or ""
        if data is None:
            data = [message, "Tensor %s must have rank in" % x.name] + ranks + [
                "Received shape: ", array_ops.shape(x)]

        def any_equal(actual, given):
            result = convert_to_tensor(False)
            for i, rank in enumerate(given):
                equal = math_ops.equal(rank, actual)
                result = equal if i == 0 else math_ops.logical_or(result, equal)
            return result

        try:
            return _rank_condition(x, ranks, lambda a, r: a in r, any_equal, data, summarize)
        except _StaticRankFailed as e:
            raise ValueError("%s.  Tensor %s must have rank in %s.  Received rank %d, shape %s"
                             % (message, x.name, tuple(e.given), e.actual, x.shape)) from None


# -- dtypes and shapes (always static) -------------------------------------------------------
def assert_integer(x, message=None, name=None):
    """TypeError unless x has a (non-quantized) integer dtype; returns a no_op."""
    message = message or ""
    with _graph.name_scope(name, "assert_integer", [x]):
        x = convert_to_tensor(x, name="x")
        if not x.dtype.is_integer:
            raise TypeError('%s  Expected "x" to be integer type.  Found: %s of dtype %s'
                            % (message, x.name, x.dtype))
        return no_op("statically_determined_was_integer")


def assert_type(tensor, tf_type, message=None, name=None):
    """TypeError unless `tensor` has dtype `tf_type`; returns a no_op."""
    message = message or ""
    with _graph.name_scope(name, "assert_type", [tensor]):
        tensor = convert_to_tensor(tensor, name="tensor")
        if tensor.dtype != tf_type:
            raise TypeError("%s  %s must be of type %s" % (message, tensor.name, tf_type))
        return no_op("statically_determined_correct_type")


def assert_scalar(tensor, name=None, message=None):
    """`tensor`, after a ValueError unless its shape is known to be scalar."""
    with _graph.name_scope(name, "assert_scalar", [tensor]) as scope:
        tensor = convert_to_tensor(tensor, name=scope)
        shape = tensor.shape
        if shape.ndims != 0:
            raise ValueError("%sExpected scalar shape for %s, saw shape: %s."
                             % (message or "", tensor.name, shape))
        return tensor


def assert_proper_iterable(values):
    """TypeError when `values` is a Tensor, ndarray or string (or not iterable at all)."""
    if isinstance(values, (Tensor, np.ndarray, bytes, str)):
        raise TypeError('Expected argument "values" to be a "proper" iterable.  Found: %s'
                        % type(values))
    if not hasattr(values, "__iter__"):
        raise TypeError('Expected argument "values" to be iterable.  Found: %s'
                        % type(values))


def assert_same_float_dtype(tensors=None, dtype=None):
    """The common float dtype of `tensors` (and `dtype`); float32 when neither is given."""
    if tensors:
        dtype = _same_base_type(tensors, dtype)
    if not dtype:
        dtype = _dtypes.float32
    elif not dtype.is_floating:
        raise ValueError("Expected floating point type, got %s." % dtype)
    return dtype


def _same_base_type(items, expected_type=None):
    first_name = None
    for item in items:
        if item is None:
            continue
        item_type = item.dtype.base_dtype
        if not expected_type:
            expected_type = item_type
            first_name = getattr(item, "name", str(item))
        elif expected_type != item_type:
            raise ValueError("%s, type=%s, must be of the same type (%s)%s." % (
                getattr(item, "name", str(item)), item_type, expected_type,
                (" as %s" % first_name) if first_name else ""))
    return expected_type


def is_numeric_tensor(tensor):
    """True for Tensors of TF's NUMERIC_TYPES."""
    return isinstance(tensor, Tensor) and tensor.dtype in NUMERIC_TYPES
