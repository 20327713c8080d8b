"""searchsorted (LowerBound / UpperBound) and fixed-width histograms.

HistogramFixedWidth follows TF's CPU kernel: bin = (max(v, lo) - lo) / ((hi - lo) / nbins)
computed in double and truncated, capped at nbins - 1, so values below the range count
in the first bin and values at or above its end in the last. nbins decides the output
shape and must be known when XLA compiles; value_range may be computed at run time (its
check `value_range[0] < value_range[1]` then runs inside the cluster).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from tensorflux._src.compiler import effects
from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.framework.tensor_shape import TensorShape
from tensorflux._src.ops.array import array_ops
from tensorflux._src.ops.array.array_ops import reshape, shape
from tensorflux._src.ops.index_checks import is_traced
from tensorflux._src.ops.math import math_ops
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.op_helpers import (ANY, kernel_error, static_input, static_scalar,
                                            with_rank)
from tensorflux._src.ops.registry import OpDef, register

__all__ = ["histogram_fixed_width", "histogram_fixed_width_bins", "searchsorted"]

_I = _dtypes.INDEX


# -- LowerBound / UpperBound ----------------------------------------------------------------
def _bound_shape(op):
    with_rank(op.inputs[0].shape, 2)
    return with_rank(op.inputs[1].shape, 2)


def _bound_lower(side):
    def lower(sorted_inputs, values, out_type):
        if sorted_inputs.shape[0] != values.shape[0]:
            raise kernel_error("Leading dim_size of both tensors must match.")
        search = jax.vmap(lambda row, v: jnp.searchsorted(row, v, side=side))
        return search(jnp.asarray(sorted_inputs), jnp.asarray(values)).astype(
            out_type.as_numpy_dtype)
    return lower


for _op_type, _side in (("LowerBound", "left"), ("UpperBound", "right")):
    register(OpDef(
        _op_type, inputs=("sorted_inputs: T", "values: T"), outputs=("output: out_type",),
        attrs={"T": ANY, "out_type": _I}, shape=_bound_shape, lower=_bound_lower(_side),
        not_differentiable=True, type_defaults={"out_type": _dtypes.int32}))


def searchsorted(sorted_sequence, values, side="left", out_type=_dtypes.int32, name=None):
    """For each value, its insertion index in the innermost dimension of sorted_sequence
    (leading dimensions are batch dimensions shared with values)."""
    sequence_size = shape(sorted_sequence)[-1]
    values_size = shape(values)[-1]
    sorted_2d = reshape(sorted_sequence, [-1, sequence_size])
    values_2d = reshape(values, [-1, values_size])
    if side == "right":
        output = apply_op("UpperBound", name=name, sorted_inputs=sorted_2d, values=values_2d,
                          out_type=out_type)
    elif side == "left":
        output = apply_op("LowerBound", name=name, sorted_inputs=sorted_2d, values=values_2d,
                          out_type=out_type)
    else:
        raise ValueError(f"side must be either 'right' or 'left'.  Saw: {side}.")
    return reshape(output, shape(values))


# -- HistogramFixedWidth --------------------------------------------------------------------
def _histogram_shape(op):
    range_shape = with_rank(op.inputs[1].shape, 1)
    if range_shape.dims[0].value not in (None, 2):
        raise ValueError(f"Dimension must be 2 but is {range_shape.dims[0].value}")
    with_rank(op.inputs[2].shape, 0)
    nbins = static_scalar(op.inputs[2])
    if nbins is None:
        return TensorShape([None])
    if nbins <= 0:
        raise ValueError(f"Requires nbins > 0: {nbins}")
    return TensorShape([nbins])


def bin_indices(values, lo, hi, nbins):
    """TF's CPU kernel's bin of each value (int32), for lo < hi."""
    step = (jnp.asarray(hi, jnp.float64) - jnp.asarray(lo, jnp.float64)) / nbins
    shifted = (jnp.maximum(values, lo) - lo).astype(jnp.float64)
    return jnp.minimum(shifted / step, nbins - 1).astype(jnp.int32)


def _histogram_lower(values, value_range, nbins, dtype):
    n = int(static_input(nbins, "HistogramFixedWidth", "nbins"))
    if np.ndim(value_range) != 1:
        raise kernel_error("value_range should be a vector.")
    if np.shape(value_range)[0] != 2:
        raise kernel_error("value_range should be a vector of 2 elements.")
    lo, hi = value_range[0], value_range[1]

    def message(lo, hi):
        return (f"value_range should satisfy value_range[0] < value_range[1], but got "
                f"'[{lo.item()}, {hi.item()}]'")

    ok = (lo < hi) if is_traced(value_range) else bool(np.asarray(lo) < np.asarray(hi))
    effects.check(ok, message, data=(lo, hi))
    if n <= 0:
        raise kernel_error(f"nbins should be a positive number, but got '{n}'")
    index = bin_indices(jnp.reshape(jnp.asarray(values), (-1,)), lo, hi, n)
    return jnp.zeros(n, dtype.as_numpy_dtype).at[index].add(1)


register(OpDef(
    "HistogramFixedWidth", inputs=("values: T", "value_range: T", "nbins: int32"),
    outputs=("out: dtype",),
    attrs={"T": (_dtypes.int32, _dtypes.int64, _dtypes.float32, _dtypes.float64),
           "dtype": _I},
    shape=_histogram_shape, lower=_histogram_lower, not_differentiable=True,
    type_defaults={"dtype": _dtypes.int32}))


def histogram_fixed_width(values, value_range, nbins=100, dtype=_dtypes.int32, name=None):
    """Counts of `values` in `nbins` equal bins over value_range; values outside the range
    count in the first or last bin."""
    with _graph.name_scope(name, "histogram_fixed_width",
                           [values, value_range, nbins]) as scope:
        return apply_op("HistogramFixedWidth", name=scope, values=values,
                        value_range=value_range, nbins=nbins, dtype=dtype)


def histogram_fixed_width_bins(values, value_range, nbins=100, dtype=_dtypes.int32,
                               name=None):
    """The bin of each of `values` (int32, shape of values), for histogram_fixed_width's
    bins: floor(nbins * (v - lo) / (hi - lo)) clipped to [0, nbins - 1]. As in TF,
    `dtype` is not used."""
    del dtype
    with _graph.name_scope(name, "histogram_fixed_width_bins",
                           [values, value_range, nbins]):
        values = convert_to_tensor(values, name="values")
        shape = array_ops.shape(values)
        values = array_ops.reshape(values, [-1])
        value_range = convert_to_tensor(value_range, name="value_range")
        nbins = convert_to_tensor(nbins, dtype=_dtypes.int32, name="nbins")
        nbins_float = math_ops.cast(nbins, values.dtype)
        scaled = math_ops.truediv(values - value_range[0], value_range[1] - value_range[0],
                                  name="scaled_values")
        indices = math_ops.floor(nbins_float * scaled, name="indices")
        indices = math_ops.cast(math_ops.clip_by_value(indices, 0, nbins_float - 1),
                                _dtypes.int32)
        return array_ops.reshape(indices, shape)
