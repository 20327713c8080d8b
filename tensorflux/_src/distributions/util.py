"""Shared pieces of tf.distributions: parameter checks, broadcasting, special functions
(TF 1.15's distribution_util and special_math, written over graph ops)."""

from __future__ import annotations

import hashlib

import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.framework.tensor_shape import TensorShape
from tensorflux._src.ops.array import array_ops
from tensorflux._src.ops.math import math_ops, reduce_ops
from tensorflux._src.ops.debug import check_ops
from tensorflux._src.ops.array.shapes import broadcast_static_shape

with_dependencies = check_ops._with_dependencies  # TF's control_flow_ops.with_dependencies


def static_broadcast(*shapes):
    """TF's broadcast_static_shape over several shapes."""
    out = TensorShape([])
    for s in shapes:
        out = broadcast_static_shape(out, s)
    return out


def dynamic_broadcast(*tensors):
    """The broadcast shape of `tensors` as an int32 tensor (TF's broadcast_dynamic_shape
    of their shapes)."""
    from tensorflux._src.ops.array.shapes import broadcast_dynamic_shape
    shapes = [array_ops.shape(t) for t in tensors]
    out = shapes[0]
    for s in shapes[1:]:
        out = broadcast_dynamic_shape(out, s)
    return out


def maybe_assert(validate_args, assertions, x):
    """`x` after `assertions` (built by a callable) when validate_args, else `x`."""
    if not validate_args:
        return x
    return with_dependencies(assertions(), x)


def get_logits_and_probs(logits=None, probs=None, multidimensional=False,
                         validate_args=False, name="get_logits_and_probs", dtype=None):
    """(logits, probs) from exactly one of them, as TF's distribution_util."""
    from tensorflux._src.ops.nn import nn_ops
    with _graph.name_scope(name, values=[probs, logits]):
        if (probs is None) == (logits is None):
            raise ValueError("Must pass probs or logits, but not both.")
        if probs is None:
            logits = convert_to_tensor(logits, name="logits", dtype=dtype)
            if not logits.dtype.is_floating:
                raise TypeError("logits must having floating type.")
            if multidimensional:
                if validate_args:
                    logits = embed_check_categorical_event_shape(logits)
                return logits, nn_ops.softmax(logits, name="probs")
            return logits, math_ops.sigmoid(logits, name="probs")
        probs = convert_to_tensor(probs, name="probs", dtype=dtype)
        if not probs.dtype.is_floating:
            raise TypeError("probs must having floating type.")
        if validate_args:
            with _graph.name_scope("validate_probs"):
                one = convert_to_tensor(np.ones([], probs.dtype.as_numpy_dtype))
                deps = [check_ops.assert_non_negative(probs)]
                if multidimensional:
                    probs = embed_check_categorical_event_shape(probs)
                    deps.append(check_ops.assert_near(reduce_ops.reduce_sum(probs, -1), one,
                                                      message="probs does not sum to 1."))
                else:
                    deps.append(check_ops.assert_less_equal(
                        probs, one, message="probs has components greater than 1."))
                probs = with_dependencies(deps, probs)
        with _graph.name_scope("logits"):
            if multidimensional:
                return math_ops.log(probs), probs
            return math_ops.log(probs) - math_ops.log1p(-1.0 * probs), probs


def embed_check_categorical_event_shape(categorical_param, name="embed_check_categorical_"
                                                               "event_shape"):
    """Checks that the last dimension (the classes) has at least 2 entries."""
    with _graph.name_scope(name, values=[categorical_param]):
        x = convert_to_tensor(categorical_param, name="categorical_param")
        event_size = x.shape.with_rank_at_least(1)[-1].value
        if event_size is not None and event_size < 2:
            raise ValueError("A categorical-distribution parameter must have at least 2, "
                             "not {}.".format(event_size))
        if event_size is not None:
            return x
        return with_dependencies([
            check_ops.assert_rank_at_least(x, 1),
            check_ops.assert_less_equal(2, array_ops.shape(x)[-1],
                                        message="Must have at least 2 events.")], x)


def embed_check_nonnegative_integer_form(x, name="embed_check_nonnegative_integer_form"):
    """`x` after checks that it is non-negative and integer-valued."""
    with _graph.name_scope(name, values=[x]):
        x = convert_to_tensor(x, name="x")
        deps = [check_ops.assert_non_negative(x, message="'{}' must be non-negative.".format(
            x.name))]
        if not x.dtype.is_integer:
            deps.append(check_ops.assert_equal(
                x, math_ops.round(x), message="'{}' cannot contain fractional components."
                .format(x.name)))
        return with_dependencies(deps, x)


def maybe_check_counts(validate_args, counts, total_count, message):
    """`counts` after checks (when validate_args) that they are non-negative integers
    summing to `total_count` over the last dimension (`message` when they do not)."""
    if not validate_args:
        return counts
    counts = embed_check_nonnegative_integer_form(counts)
    return with_dependencies([check_ops.assert_equal(
        total_count, reduce_ops.reduce_sum(counts, -1), message=message)], counts)


def log_combinations(n, counts, name="log_combinations"):
    """log(n! / prod(counts!)) over the last dimension of counts."""
    with _graph.name_scope(name, values=[n, counts]):
        n = convert_to_tensor(n, name="n")
        counts = convert_to_tensor(counts, name="counts")
        total_permutations = math_ops.lgamma(n + 1)
        counts_factorial = math_ops.lgamma(counts + 1)
        redundant_permutations = reduce_ops.reduce_sum(counts_factorial, axis=[-1])
        return total_permutations - redundant_permutations


def where(condition, x, y):
    """Elements of x where condition holds, else of y; all three broadcast."""
    from tensorflux._src.ops.array.gather_ops import where_v2
    return where_v2(condition, x, y)


def gen_new_seed(seed, salt):
    """A new seed from `seed` and `salt` (None stays None), as TF's."""
    if seed is None:
        return None
    string = (str(seed) + salt).encode("utf-8")
    return int(hashlib.md5(string).hexdigest()[:8], 16) & 0x7FFFFFFF


# -- special functions -------------------------------------------------------------------------
def ndtr(x, name="ndtr"):
    """The standard normal CDF, accurate in both tails (TF's special_math.ndtr)."""
    with _graph.name_scope(name, values=[x]):
        x = convert_to_tensor(x, name="x")
        half_sqrt_2 = np.array(0.5 * np.sqrt(2.0), x.dtype.as_numpy_dtype)
        w = x * half_sqrt_2
        z = math_ops.abs(w)
        y = where(z < half_sqrt_2, 1.0 + math_ops.erf(w),
                   where(w > 0.0, 2.0 - math_ops.erfc(z), math_ops.erfc(z)))
        return 0.5 * y


def log_ndtr(x, series_order=3, name="log_ndtr"):
    """log of the standard normal CDF: -ndtr(-x) for large x, log(ndtr(x)) in the middle,
    an asymptotic series for very negative x (TF's special_math.log_ndtr)."""
    with _graph.name_scope(name, values=[x]):
        x = convert_to_tensor(x, name="x")
        if x.dtype == _dtypes.float64:
            lower, upper = -20.0, 8.0
        elif x.dtype == _dtypes.float32:
            lower, upper = -10.0, 5.0
        else:
            raise TypeError(f"x.dtype={x.dtype} is not supported.")
        return where(
            x > upper, -ndtr(-x),
            where(x > lower, math_ops.log(ndtr(math_ops.maximum(x, lower))),
                   _log_ndtr_lower(math_ops.minimum(x, lower), series_order)))


def _log_ndtr_lower(x, series_order):
    x_2 = math_ops.square(x)
    log_scale = -0.5 * x_2 - math_ops.log(-x) - 0.5 * np.log(2.0 * np.pi)
    # 1 + sum_n (-1)^n (2n-1)!! / x^(2n)
    even_sum, odd_sum = 0.0, 0.0
    x_2n = x_2
    for n in range(1, series_order + 1):
        term = float(np.prod(np.arange(2 * n - 1, 0, -2))) / x_2n
        if n % 2:
            odd_sum += term
        else:
            even_sum += term
        x_2n = x_2n * x_2
    return log_scale + math_ops.log(1.0 + even_sum - odd_sum)


def log_cdf_laplace(x, name="log_cdf_laplace"):
    """log of the standard Laplace CDF, accurate in both tails."""
    with _graph.name_scope(name, values=[x]):
        x = convert_to_tensor(x, name="x")
        lower_solution = -np.log(2.0) + x
        safe_exp_neg_x = math_ops.exp(-math_ops.abs(x))
        upper_solution = math_ops.log1p(-0.5 * safe_exp_neg_x)
        return where(x < 0.0, lower_solution, upper_solution)


def embed_check_integer_casting_closed(x, target_dtype, name="embed_check_casting_closed"):
    """`x` after checks that its values are whole numbers that `target_dtype` holds
    (bool: 0 and 1)."""
    with _graph.name_scope(name, values=[x]):
        x = convert_to_tensor(x, name="x")
        target = _dtypes.as_dtype(target_dtype)
        if x.dtype.is_integer and target.is_integer and x.dtype.size <= target.size and \
                (x.dtype.is_unsigned == target.is_unsigned):
            return x
        lower, upper = (0, 1) if target == _dtypes.bool else (target.min, target.max)
        deps = []
        if not x.dtype.is_integer:
            deps.append(check_ops.assert_equal(x, math_ops.round(x),
                                               message="Elements must be int-like."))
        deps.append(check_ops.assert_less_equal(
            math_ops.cast(lower, x.dtype), x, message="Elements must be >= {}.".format(lower)))
        deps.append(check_ops.assert_less_equal(
            x, math_ops.cast(upper, x.dtype), message="Elements must be <= {}.".format(upper)))
        return with_dependencies(deps, x)
