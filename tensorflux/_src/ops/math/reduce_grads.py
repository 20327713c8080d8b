"""Gradients of the reductions and scans in reduce_ops.py (TF1's math_grad.py), attached
to the records with `register_gradient`.

They reshape and broadcast with array ops and, when a rank is known only at run time,
sort axes with `argsort` (sort_ops, which itself builds on reduce_ops), so they sit above
the records.
"""

from __future__ import annotations

import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.ops.array import array_ops, sort_ops
from tensorflux._src.ops.constant import constant
from tensorflux._src.ops.math import math_ops, reduce_ops
from tensorflux._src.ops.registry import register_gradient
from tensorflux._src.ops.shape_fns import static_value

_d = _dtypes

def _reduced_mask(x, axes):
    """int32 vector over x's axes: 1 where reduced. Known only when a run is compiled."""
    rank = array_ops.rank(x)
    axes = math_ops.cast(array_ops.reshape(axes, [-1]), _d.int32)
    axes = math_ops.floormod(axes + rank, rank)
    expand = array_ops.expand_dims
    hit = reduce_ops.reduce_any(
        math_ops.equal(expand(math_ops.range(rank), 1), expand(axes, 0)), 1)
    return math_ops.cast(hit, _d.int32)


def _kept_dims_shape(x, axes):
    """x's shape with the reduced axes set to 1: the output shape under keep_dims (TF's
    reduced_shape). A Python list when x's shape is known, else a shape tensor; either way
    it is a constant once a run is compiled."""
    rank = x.shape.ndims
    axes_value = static_value(axes)
    if rank is not None and axes_value is not None:
        reduced = {int(a) % rank for a in np.reshape(axes_value, -1)} if rank else set()
        if x.shape.is_fully_defined():
            return [1 if i in reduced else d for i, d in enumerate(x.shape.as_list())]
        keep = np.array([i not in reduced for i in range(rank)], np.int32)
        return array_ops.shape(x) * keep + (1 - keep)
    reduced = _reduced_mask(x, axes)  # rank or axes known only at run time
    return array_ops.shape(x) * (1 - reduced) + reduced


def _broadcast_to_input(grad, x):
    if x.shape.is_fully_defined() and grad.shape.is_fully_defined() and x.shape == grad.shape:
        return grad
    shape = x.shape.as_list() if x.shape.is_fully_defined() else array_ops.shape(x)
    return array_ops.broadcast_to(grad, shape)


def _kept(op, *tensors):
    """`tensors` (the output and its gradient) reshaped as if keep_dims had been set."""
    if op.get_attr("keep_dims"):
        return tensors
    shape = _kept_dims_shape(op.inputs[0], op.inputs[1])
    return tuple(array_ops.reshape(t, shape) for t in tensors)


@register_gradient("Sum")
def _sum_grad(op, grad):
    (grad,) = _kept(op, grad)
    return [_broadcast_to_input(grad, op.inputs[0]), None]


@register_gradient("Mean")
def _mean_grad(op, grad):
    sum_grad = _sum_grad(op, grad)[0]
    x, y = op.inputs[0], op.outputs[0]
    if x.shape.is_fully_defined() and y.shape.is_fully_defined():
        size = lambda s: int(np.prod(s.as_list(), dtype=np.int64))  # noqa: E731
        factor = constant(size(x.shape) // max(size(y.shape), 1), dtype=sum_grad.dtype)
    else:
        shape = array_ops.shape
        factor = math_ops.floordiv(reduce_ops.reduce_prod(shape(x)),
                                   math_ops.maximum(reduce_ops.reduce_prod(shape(y)), 1))
        factor = math_ops.cast(factor, sum_grad.dtype)
    return [math_ops.truediv(sum_grad, factor), None]


@register_gradient("Max", "Min")
def _min_or_max_grad(op, grad):
    # The gradient is split equally among the elements equal to the result (ties).
    x, axes = op.inputs
    y, grad = _kept(op, op.outputs[0], grad)
    indicators = math_ops.cast(math_ops.equal(y, x), grad.dtype)
    num_selected = reduce_ops.reduce_sum(indicators, axes, keepdims=True)
    return [math_ops.truediv(indicators, num_selected) * grad, None]


@register_gradient("EuclideanNorm")
def _euclidean_norm_grad(op, grad):
    norm, grad = _kept(op, op.outputs[0], grad)
    return [math_ops.truediv(op.inputs[0], norm / grad), None]


@register_gradient("Prod")
def _prod_grad(op, grad):
    """Product of all the other elements, as the product of two exclusive cumprods (one
    from each end), so zeros in the input need no division."""
    x, axes = op.inputs
    reshape, transpose, shape = array_ops.reshape, array_ops.transpose, array_ops.shape
    (grad,) = _kept(op, grad)
    grad = _broadcast_to_input(grad, x)
    # Permute the reduced axes to the front and flatten to a (reduced, other) matrix.
    rank, axes_value = x.shape.ndims, static_value(axes)
    static = rank is not None and axes_value is not None
    if static:
        reduced = list(dict.fromkeys(int(a) % rank for a in np.reshape(axes_value, -1)))
        other = [i for i in range(rank) if i not in reduced]
        perm, inverse = reduced + other, np.argsort(reduced + other).tolist()
        in_reduced = np.array([i in reduced for i in range(rank)], np.int32)
    else:  # the same permutation from ops: reduced axes first, each group in order
        in_reduced = _reduced_mask(x, axes)
        positions = math_ops.range(array_ops.rank(x))
        perm = sort_ops.argsort((1 - in_reduced) * array_ops.size(in_reduced) + positions)
        inverse = sort_ops.argsort(perm)
    permuted = transpose(x, perm)
    if static and x.shape.is_fully_defined():
        dims = x.shape.as_list()
        size = lambda idx: int(np.prod([dims[i] for i in idx], dtype=np.int64))  # noqa: E731
        matrix_shape, permuted_shape = [size(reduced), size(other)], [dims[i] for i in perm]
    else:
        shape_x = shape(x)
        matrix_shape = array_ops.stack(
            [reduce_ops.reduce_prod(shape_x * in_reduced + (1 - in_reduced)),
             reduce_ops.reduce_prod(shape_x * (1 - in_reduced) + in_reduced)])
        permuted_shape = shape(permuted)
    matrix = reshape(permuted, matrix_shape)  # (reduced, other)
    left = reduce_ops.cumprod(matrix, 0, exclusive=True)
    right = reduce_ops.cumprod(matrix, 0, exclusive=True, reverse=True)
    others = reshape(math_ops.conj(left) * math_ops.conj(right), permuted_shape)
    return [grad * transpose(others, inverse), None]


@register_gradient("Cumsum")
def _cumsum_grad(op, grad):
    return [reduce_ops.cumsum(grad, op.inputs[1], exclusive=op.get_attr("exclusive"),
                   reverse=not op.get_attr("reverse")), None]


@register_gradient("Cumprod")
def _cumprod_grad(op, grad):
    # TF's formula divides by x, so it is NaN where x has zeros (as in TF).
    x, axis = op.inputs
    exclusive, reverse = op.get_attr("exclusive"), op.get_attr("reverse")
    prod = reduce_ops.cumprod(x, axis, exclusive=exclusive, reverse=reverse)
    out = reduce_ops.cumsum(prod * grad, axis, exclusive=exclusive, reverse=not reverse)
    return [out / x, None]
