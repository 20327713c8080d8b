"""Structural ops: identity, shape queries, stacking (one OpDef record per op)."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.framework.tensor_shape import TensorShape, unknown_shape
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.registry import OpDef, register
from tensorflux._src.ops.shape_fns import unchanged

__all__ = ["identity", "rank", "shape", "size", "stack"]

register(OpDef("Identity", inputs=("input: T",), outputs=("output: T",),
               attrs={"T": _dtypes.ALL}, shape=unchanged, lower=lambda x: x))


def identity(input, name=None):  # noqa: A002 - TF's argument name
    """Returns a tensor with the same value as `input` (a new node in the graph)."""
    return apply_op("Identity", name=name, input=input)


# Shapes are static inside XLA, so these lower to numpy values that fold further.
register(OpDef("Shape", inputs=("input: T",), outputs=("output: out_type",),
               attrs={"T": _dtypes.ALL, "out_type": _dtypes.INDEX},
               shape=lambda op: TensorShape([op.inputs[0].shape.ndims]),
               lower=lambda x, out_type: np.array(x.shape, out_type.as_numpy_dtype),
               not_differentiable=True))
register(OpDef("Size", inputs=("input: T",), outputs=("output: out_type",),
               attrs={"T": _dtypes.ALL, "out_type": _dtypes.INDEX},
               shape=lambda op: TensorShape([]),
               lower=lambda x, out_type: np.array(int(np.prod(x.shape)), out_type.as_numpy_dtype),
               not_differentiable=True))
register(OpDef("Rank", inputs=("input: T",), outputs=("output: int32",),
               attrs={"T": _dtypes.ALL}, shape=lambda op: TensorShape([]),
               lower=lambda x: np.array(len(x.shape), np.int32), not_differentiable=True))


def shape(input, name=None, out_type=_dtypes.int32):  # noqa: A002
    """The shape of `input` as a 1-D tensor."""
    return apply_op("Shape", name=name, input=input, out_type=out_type)


def size(input, name=None, out_type=_dtypes.int32):  # noqa: A002
    """The number of elements of `input`."""
    return apply_op("Size", name=name, input=input, out_type=out_type)


def rank(input, name=None):  # noqa: A002
    """The number of dimensions of `input`."""
    return apply_op("Rank", name=name, input=input)


def _pack_shape(op):
    axis = op.get_attr("axis")
    shape = unknown_shape()
    for t in op.inputs:
        if not shape.is_compatible_with(t.shape):
            raise ValueError(f"Shapes must be equal rank, but are {shape.ndims} and "
                             f"{t.shape.ndims}" if shape.ndims != t.shape.ndims else
                             f"Shapes {shape} and {t.shape} are not compatible")
        shape = shape.merge_with(t.shape)
    if shape.ndims is None:
        return unknown_shape()
    rank_out = shape.ndims + 1
    if not -rank_out <= axis < rank_out:
        raise ValueError(f"Invalid axis: {axis}; must be in [{-rank_out},{rank_out})")
    axis %= rank_out
    dims = shape.as_list()
    return TensorShape(dims[:axis] + [len(op.inputs)] + dims[axis:])


register(OpDef("Pack", inputs=("values: N * T",), outputs=("output: T",),
               attrs={"T": _dtypes.ALL, "axis": 0}, shape=_pack_shape,
               lower=lambda *values, axis: jnp.stack(values, axis)))


def stack(values, axis=0, name="stack"):
    """Stacks a list of rank-R tensors into one rank-(R+1) tensor along `axis`."""
    return apply_op("Pack", name=name, values=list(values), axis=axis)


def _autopacking_helper(values, dtype, name):
    """Packs a nested list holding Tensors (TF's auto-packing in convert_to_tensor)."""
    with _graph.name_scope(name) as scope:
        elems = []
        for i, v in enumerate(values):
            if isinstance(v, (list, tuple)):
                elems.append(_autopacking_helper(v, dtype, str(i)))
            else:
                elems.append(convert_to_tensor(v, dtype=dtype) if dtype is not None
                             else v)
        return apply_op("Pack", name=scope, values=elems)
