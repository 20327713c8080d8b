"""Reductions (`reduce_sum`, `argmax`, ...) and scans (`cumsum`), one OpDef per op.

Reduction ops take the axes as an input tensor ("reduction_indices"), as TF does. Shape
inference reads it when it is statically known (constants, shapes, anything folded from
them) and otherwise keeps only what it can: the rank with keep_dims, else nothing.
XLA needs the axes at compile time, so a lowering reads them as a static numpy value;
axes fed at run time are reported as such.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from tensorflux._src.framework import dispatch as _dispatch
from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.operation import Tensor
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.framework.tensor_shape import TensorShape, unknown_shape
from tensorflux._src.ops.array import array_ops, gather_ops, generator_ops
from tensorflux._src.ops.constant import constant
from tensorflux._src.ops.math import math_ops
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.op_helpers import deprecated_argument_lookup
from tensorflux._src.ops.registry import OpDef, register
from tensorflux._src.ops.shape_fns import static_value, unchanged

_d = _dtypes

__all__ = [
    "arg_max", "arg_min", "argmax", "argmin", "count_nonzero", "cumprod", "cumsum",
    "reduce_all", "reduce_any", "reduce_euclidean_norm", "reduce_logsumexp", "reduce_max",
    "reduce_mean", "reduce_min", "reduce_prod", "reduce_std", "reduce_sum", "reduce_variance",
]


def static_axes(op_type, axes, what="reduction_indices"):
    """The numpy value of an axes input inside a lowering; XLA needs it at compile time."""
    if isinstance(axes, jax.core.Tracer):
        raise ValueError(f"{op_type} needs its '{what}' input at compile time (XLA has "
                         f"static shapes), but it is only known at run time. Compute it "
                         f"from constants or tensor shapes instead of feeding it.")
    return np.asarray(axes)


# -- shape inference (TF's ReductionShape) --------------------------------------------------
def reduction_shape(op):
    """TF's ReductionShape, for every op with (input, reduction_indices) and keep_dims
    (also the strings' ReduceJoin)."""
    input_shape, indices = op.inputs[0].shape, op.inputs[1]
    if indices.shape.ndims is not None and indices.shape.ndims > 1:
        raise ValueError(f"Shape must be at most rank 1 but is rank {indices.shape.ndims}")
    keep_dims = op.get_attr("keep_dims")
    axes = static_value(indices)
    if axes is None or input_shape.ndims is None:
        if keep_dims and input_shape.ndims is not None:
            return unknown_shape(input_shape.ndims)
        return unknown_shape()
    rank = input_shape.ndims
    reduced = set()
    for axis in np.reshape(axes, -1).tolist():
        if not -rank <= axis < rank:
            raise ValueError(f"Invalid reduction dimension {axis} for input with {rank} "
                             f"dimensions.")
        reduced.add(axis % rank)  # duplicates are fine here; the kernel rejects them
    dims = []
    for i, dim in enumerate(input_shape.dims):
        if i not in reduced:
            dims.append(dim)
        elif keep_dims:
            dims.append(1)
    return TensorShape(dims)


def _axes_tuple(op_type, x, axes):
    """Normalised axes, with the TF kernel's errors for bad or repeated ones."""
    rank = x.ndim
    result = []
    for axis in np.reshape(static_axes(op_type, axes), -1).tolist():
        if not -rank <= axis < rank:
            raise ValueError(f"Invalid reduction dimension ({axis} for input with {rank} "
                             f"dimension(s)")
        axis %= rank
        if axis in result:
            raise ValueError(f"Invalid reduction arguments: Axes contains duplicate "
                             f"dimension: {axis}")
        result.append(axis)
    return tuple(result)


def _keep(x, out, axes, keep_dims):
    return jnp.reshape(out, [1 if i in axes else d for i, d in enumerate(x.shape)]) \
        if keep_dims else out


def _sum(x, axes, keep_dims):
    return jnp.sum(x, axis=axes, keepdims=keep_dims, dtype=x.dtype)  # no int upcast


def _mean(x, axes, keep_dims):
    if jnp.issubdtype(x.dtype, jnp.integer):
        # Integer mean is sum // count in C: truncation toward zero, in the input type.
        count = int(np.prod([x.shape[a] for a in axes], dtype=np.int64))
        return jax.lax.div(_sum(x, axes, keep_dims), jnp.asarray(count, x.dtype))
    return jnp.mean(x, axis=axes, keepdims=keep_dims)


def _euclidean_norm(x, axes, keep_dims):
    if jnp.issubdtype(x.dtype, jnp.integer):
        # TF takes the C sqrt of the integer sum of squares, truncating the result.
        total = _sum(x * x, axes, keep_dims)
        return jnp.sqrt(total.astype(np.float64)).astype(x.dtype)
    return jnp.sqrt(_sum(x * jnp.conj(x), axes, keep_dims))


_REDUCERS = {
    "Sum": _sum,
    "Mean": _mean,
    "Prod": lambda x, axes, keep: jnp.prod(x, axis=axes, keepdims=keep, dtype=x.dtype),
    # lax reductions, unlike jnp.max, accept empty inputs (giving -inf / the type's min).
    "Max": lambda x, axes, keep: _keep(x, jax.lax.reduce_max(x, axes), axes, keep),
    "Min": lambda x, axes, keep: _keep(x, jax.lax.reduce_min(x, axes), axes, keep),
    "Any": lambda x, axes, keep: jnp.any(x, axis=axes, keepdims=keep),
    "All": lambda x, axes, keep: jnp.all(x, axis=axes, keepdims=keep),
    "EuclideanNorm": _euclidean_norm,
}


def _register_reduction(op_type, dtypes):
    reducer = _REDUCERS[op_type]

    def lower(x, reduction_indices, keep_dims):
        return reducer(x, _axes_tuple(op_type, x, reduction_indices), keep_dims)

    typed = dtypes is not None
    register(OpDef(
        op_type,
        inputs=("input: T" if typed else "input: bool", "reduction_indices: Tidx"),
        outputs=("output: T" if typed else "output: bool",),
        attrs={**({"T": dtypes} if typed else {}), "Tidx": _d.INDEX, "keep_dims": False},
        shape=reduction_shape, lower=lower,
        not_differentiable=not typed,  # Any, All
    ))


for _op_type, _types in (("Sum", _d.NUMBERS), ("Mean", _d.NUMBERS), ("Prod", _d.NUMBERS),
                         ("Max", _d.REAL), ("Min", _d.REAL), ("EuclideanNorm", _d.NUMBERS),
                         ("Any", None), ("All", None)):
    _register_reduction(_op_type, _types)


# -- public reductions ------------------------------------------------------------------------
def _reduction_dims(x, axis):
    """`axis`, or all of x's dimensions: a constant when x's rank is known, else range(rank)."""
    if isinstance(axis, (list, tuple)) and not axis:
        # TF converts with Tidx's default type; an empty list would become float32 here.
        return np.zeros([0], np.int32)
    if axis is not None:
        return axis
    if isinstance(x, Tensor) and x.shape.ndims is not None:
        return constant(np.arange(x.shape.ndims, dtype=np.int32))
    return math_ops.range(0, array_ops.rank(x))


def _may_reduce_to_scalar(keepdims, axis, output):
    # Reducing every axis gives a scalar even when the input's rank is unknown.
    if not output.shape.is_fully_defined() and not keepdims and axis is None:
        output.set_shape(())
    return output


def _reduce(op_type, input_tensor, axis, keepdims, name, reduction_indices, keep_dims):
    axis = deprecated_argument_lookup("axis", axis, "reduction_indices", reduction_indices)
    keepdims = deprecated_argument_lookup("keepdims", keepdims, "keep_dims", keep_dims)
    keepdims = bool(keepdims) if keepdims is not None else False
    out = apply_op(op_type, name=name, input=input_tensor,
                   reduction_indices=_reduction_dims(input_tensor, axis), keep_dims=keepdims)
    return _may_reduce_to_scalar(keepdims, axis, out)


def _reduction_fn(public_name, op_type, doc):
    def fn(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None,
           keep_dims=None):
        return _reduce(op_type, input_tensor, axis, keepdims, name, reduction_indices,
                       keep_dims)
    fn.__name__ = fn.__qualname__ = public_name
    fn.__module__ = __name__
    fn.__doc__ = doc + ("\n\n    `axis` (alias `reduction_indices`) is None for all axes, an int, "
                        "a list or a tensor;\n    `keepdims` (alias `keep_dims`) keeps reduced "
                        "axes with length 1.")
    return fn


reduce_sum = _reduction_fn("reduce_sum", "Sum", "Sum of elements across axes.")
reduce_mean = _reduction_fn(
    "reduce_mean", "Mean", "Mean across axes; integer inputs give the truncated integer mean.")
reduce_prod = _reduction_fn("reduce_prod", "Prod", "Product of elements across axes.")
reduce_max = _reduction_fn("reduce_max", "Max", "Maximum across axes.")
reduce_min = _reduction_fn("reduce_min", "Min", "Minimum across axes.")
reduce_any = _reduction_fn("reduce_any", "Any", "Logical OR across axes.")
reduce_all = _reduction_fn("reduce_all", "All", "Logical AND across axes.")


def reduce_euclidean_norm(input_tensor, axis=None, keepdims=False, name=None):
    """sqrt(sum(|x|^2)) across axes (truncated to an integer for integer inputs)."""
    return _reduce("EuclideanNorm", input_tensor, axis, keepdims, name, None, None)


def reduce_logsumexp(input_tensor, axis=None, keepdims=None, name=None,
                     reduction_indices=None, keep_dims=None):
    """log(sum(exp(x))) across axes, computed stably: max + log(sum(exp(x - max))).

    Built as TF builds it; an infinite max is replaced by 0 so inf/-inf inputs work.
    """
    keepdims = deprecated_argument_lookup("keepdims", keepdims, "keep_dims", keep_dims)
    keepdims = bool(keepdims) if keepdims is not None else False
    axis = deprecated_argument_lookup("axis", axis, "reduction_indices", reduction_indices)
    input_tensor = convert_to_tensor(input_tensor)
    with _graph.name_scope(name, "ReduceLogSumExp", [input_tensor]) as scope:
        raw_max = reduce_max(input_tensor, axis=axis, keepdims=True)
        my_max = array_ops.stop_gradient(gather_ops.where(
            math_ops.is_finite(raw_max), raw_max, generator_ops.zeros_like(raw_max)))
        result = math_ops.log(reduce_sum(
            math_ops.exp(math_ops.subtract(input_tensor, my_max)), axis, keepdims=keepdims))
        if not keepdims:
            my_max = array_ops.reshape(my_max, array_ops.shape(result))
        result = math_ops.add(result, my_max, name=scope)
        return _may_reduce_to_scalar(keepdims, axis, result)


def reduce_variance(input_tensor, axis=None, keepdims=False, name=None):
    """Mean squared deviation from the mean across axes."""
    with _graph.name_scope(name or "reduce_variance"):
        means = reduce_mean(input_tensor, axis=axis, keepdims=True)
        squared_deviations = math_ops.square(input_tensor - means)
        return reduce_mean(squared_deviations, axis=axis, keepdims=keepdims)


def reduce_std(input_tensor, axis=None, keepdims=False, name=None):
    """Standard deviation (square root of reduce_variance) across axes."""
    with _graph.name_scope(name or "reduce_std"):
        return math_ops.sqrt(reduce_variance(input_tensor, axis=axis, keepdims=keepdims))


def count_nonzero(input_tensor, axis=None, keepdims=None, dtype=_d.int64, name=None,
                  reduction_indices=None, keep_dims=None):
    """Number of nonzero elements across axes, as `dtype` (int64 by default)."""
    keepdims = deprecated_argument_lookup("keepdims", keepdims, "keep_dims", keep_dims)
    axis = deprecated_argument_lookup("axis", axis, "reduction_indices", reduction_indices)
    keepdims = bool(keepdims) if keepdims is not None else False
    with _graph.name_scope(name, "count_nonzero", [input_tensor]):
        input_tensor = convert_to_tensor(input_tensor, name="input_tensor")
        zero = constant(False if input_tensor.dtype == _d.bool else 0,
                        dtype=input_tensor.dtype.base_dtype, name="zeros")
        nonzero = math_ops.cast(math_ops.not_equal(input_tensor, zero), _d.int64)
        return math_ops.cast(reduce_sum(nonzero, axis=axis, keepdims=keepdims), dtype=dtype)


# -- argmax / argmin --------------------------------------------------------------------------
def _arg_shape(op):
    dim_shape = op.inputs[1].shape
    if dim_shape.ndims not in (None, 0):
        raise ValueError(f"Shape must be rank 0 but is rank {dim_shape.ndims}")
    input_shape = op.inputs[0].shape
    if input_shape.ndims is None:
        return unknown_shape()
    rank = input_shape.ndims
    if rank <= 1:
        return TensorShape([])  # reducing a scalar or vector gives a scalar
    value = static_value(op.inputs[1])
    if value is None:
        return unknown_shape(rank - 1)
    dimension = int(value)
    axis = dimension + rank if dimension < 0 else dimension
    if not 0 <= axis < rank:
        raise ValueError(f"Dimension ({dimension}) must be in the range [{-rank}, {rank}), "
                         f"where {rank} is the number of dimensions in the input.")
    return TensorShape([d for i, d in enumerate(input_shape.dims) if i != axis])


def _arg_lower(op_type, fn):
    def lower(x, dimension, output_type):
        axis = int(static_axes(op_type, dimension, "dimension"))
        rank = x.ndim
        if not -rank <= axis < rank:
            raise ValueError(f"Expected dimension in the range [{-rank}, {rank}), but got "
                             f"{axis}")
        return fn(x, axis=axis).astype(output_type.as_numpy_dtype)  # first index on ties
    return lower


for _op_type, _fn in (("ArgMax", jnp.argmax), ("ArgMin", jnp.argmin)):
    register(OpDef(
        _op_type, inputs=("input: T", "dimension: Tidx"), outputs=("output: output_type",),
        attrs={"T": _d.REAL, "Tidx": _d.INDEX, "output_type": _d.INDEX},
        shape=_arg_shape, lower=_arg_lower(_op_type, _fn), not_differentiable=True))


def argmax(input, axis=None, name=None, dimension=None,  # noqa: A002 - TF's name
           output_type=_d.int64):
    """Index of the largest value along `axis` (default 0); the first one on ties."""
    axis = deprecated_argument_lookup("axis", axis, "dimension", dimension)
    return apply_op("ArgMax", name=name, input=input, dimension=0 if axis is None else axis,
                    output_type=output_type)


def argmin(input, axis=None, name=None, dimension=None,  # noqa: A002 - TF's name
           output_type=_d.int64):
    """Index of the smallest value along `axis` (default 0); the first one on ties."""
    axis = deprecated_argument_lookup("axis", axis, "dimension", dimension)
    return apply_op("ArgMin", name=name, input=input, dimension=0 if axis is None else axis,
                    output_type=output_type)


def arg_max(input, dimension, output_type=_d.int64, name=None):  # noqa: A002
    """Deprecated alias of argmax with TF's generated-op signature."""
    return apply_op("ArgMax", name=name, input=input, dimension=dimension,
                    output_type=output_type)


def arg_min(input, dimension, output_type=_d.int64, name=None):  # noqa: A002
    """Deprecated alias of argmin with TF's generated-op signature."""
    return apply_op("ArgMin", name=name, input=input, dimension=dimension,
                    output_type=output_type)


# -- cumulative sums and products -------------------------------------------------------------
def _scan_lower(op_type, scan, identity):
    def lower(x, axis, exclusive, reverse):
        axis_value = static_axes(op_type, axis, "axis")
        if axis_value.ndim != 0:
            raise ValueError(f"ScanOp: axis must be a scalar, not {list(axis_value.shape)}")
        rank = x.ndim
        a = int(axis_value)
        a = a + rank if a < 0 else a
        if not 0 <= a < rank:
            raise ValueError(f"ScanOp: Expected scan axis in the range [{-rank}, {rank}), "
                             f"but got {a}")
        if exclusive and x.shape[a] > 0:
            # Shift by one along the axis, filling with the identity: exact, no division.
            first = jax.lax.slice_in_dim(x, 0, 1, axis=a)
            fill = jnp.full_like(first, identity)
            n = x.shape[a]
            x = (jnp.concatenate([jax.lax.slice_in_dim(x, 1, n, axis=a), fill], axis=a)
                 if reverse else
                 jnp.concatenate([fill, jax.lax.slice_in_dim(x, 0, n - 1, axis=a)], axis=a))
        return scan(x, axis=a, reverse=reverse)
    return lower


for _op_type, _scan, _identity in (("Cumsum", jax.lax.cumsum, 0),
                                   ("Cumprod", jax.lax.cumprod, 1)):
    register(OpDef(
        _op_type, inputs=("x: T", "axis: Tidx"), outputs=("out: T",),
        attrs={"T": _d.NUMBERS, "Tidx": _d.INDEX, "exclusive": False, "reverse": False},
        shape=unchanged, lower=_scan_lower(_op_type, _scan, _identity)))


def cumsum(x, axis=0, exclusive=False, reverse=False, name=None):
    """Running sum along `axis`: [a, a + b, a + b + c]; exclusive starts from 0."""
    with _graph.name_scope(name, "Cumsum", [x]) as scope:
        x = convert_to_tensor(x, name="x")
        return apply_op("Cumsum", name=scope, x=x, axis=axis, exclusive=exclusive,
                        reverse=reverse)


def cumprod(x, axis=0, exclusive=False, reverse=False, name=None):
    """Running product along `axis`: [a, a * b, a * b * c]; exclusive starts from 1."""
    with _graph.name_scope(name, "Cumprod", [x]) as scope:
        x = convert_to_tensor(x, name="x")
        return apply_op("Cumprod", name=scope, x=x, axis=axis, exclusive=exclusive,
                        reverse=reverse)


# RaggedTensor (and other composite) arguments dispatch to registered handlers
# (framework/dispatch.py; TF's ragged_dispatch list).
_dispatch.add_dispatch_support_to(globals(), [
    "reduce_sum", "reduce_prod", "reduce_min", "reduce_max", "reduce_mean", "reduce_any",
    "reduce_all",
])
