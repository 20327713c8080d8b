"""Helpers every op family shares, below all of them (they import only the framework and
`shape_fns`):

- dtype sets for signatures: `ANY`;
- shape-function checks with TF's messages: `with_rank`, `with_rank_at_least`,
  `merge_shapes`, `static_scalar` (a scalar input's value when it is known) and
  `scalar_input_dim` (a scalar input that is a dimension size: k, depth, num_samples);
- for lowerings and host kernels: `static_input` (a shape-like input XLA needs at compile
  time), `kernel_error` (TF's run-time InvalidArgumentError) and `dims_str` ([2,3]);
- for wrappers: `shape_arg` (a Python shape argument as convertible values).
"""

from __future__ import annotations

import jax
import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import errors
from tensorflux._src.framework.tensor_shape import Dimension, TensorShape, unknown_shape
from tensorflux._src.ops.shape_fns import static_value

# Every type XLA can hold. TF's "type" also allows string, which has no XLA form yet.
ANY = _dtypes.NUMBERS + (_dtypes.bool,)


def static_input(value, op_type, input_name):
    """A shape-like lowering input as numpy; raises when it is only known at run time."""
    if isinstance(value, jax.core.Tracer):
        raise errors.StaticValueRequired(
            None, None, f"{op_type} needs its input '{input_name}' when the graph is compiled "
            f"(XLA requires static shapes), but it depends on a fed, variable or random value. "
            f"Compute '{input_name}' from constants and tf.shape() instead.")
    return np.asarray(value)


def kernel_error(message):
    """TF's run-time InvalidArgumentError, raised from a lowering with the kernel's text."""
    return errors.InvalidArgumentError(None, None, message)


def dims_str(shape) -> str:
    """A concrete shape as TF's runtime messages print it: [2,3]."""
    return "[" + ",".join(str(int(d)) for d in shape) + "]"


def with_rank(shape: TensorShape, rank: int) -> TensorShape:
    if shape.ndims is None:
        return unknown_shape(rank)
    if shape.ndims != rank:
        raise ValueError(f"Shape must be rank {rank} but is rank {shape.ndims}")
    return shape


def with_rank_at_least(shape: TensorShape, rank: int) -> TensorShape:
    if shape.ndims is not None and shape.ndims < rank:
        raise ValueError(f"Shape must be at least rank {rank} but is rank {shape.ndims}")
    return shape


def merge_shapes(a: TensorShape, b: TensorShape) -> TensorShape:
    """TF's shape Merge: fills unknowns from either side, with TF's mismatch messages."""
    if a.ndims is None:
        return b
    if b.ndims is None:
        return a
    if a.ndims != b.ndims:
        raise ValueError(f"Shapes must be equal rank, but are {a.ndims} and {b.ndims}")
    dims = []
    for i, (x, y) in enumerate(zip(a.as_list(), b.as_list())):
        if x is not None and y is not None and x != y:
            raise ValueError(f"Dimension {i} in both shapes must be equal, but are {x} and "
                             f"{y}. Shapes are {a._bracket_str()} and {b._bracket_str()}.")
        dims.append(x if x is not None else y)
    return TensorShape(dims)


def static_scalar(tensor):
    """The static value of a scalar tensor as an int, or None."""
    value = static_value(tensor)
    return None if value is None or value.size != 1 else int(value.reshape(-1)[0])


def scalar_input_dim(op, index):
    """TF's WithRank(input, 0) and MakeDimForScalarInput: the static value of scalar input
    `index` of `op` as a dimension size (None when unknown); a negative one is an error."""
    with_rank(op.inputs[index].shape, 0)
    n = static_scalar(op.inputs[index])
    if n is not None and n < 0:
        raise ValueError(f"Dimension size, given by scalar input {index}, must be non-negative "
                         f"but is {n}")
    return n


def shape_arg(shape):
    """A Python shape argument (list with Dimensions, TensorShape) as convertible values."""
    if isinstance(shape, TensorShape):
        if not shape.is_fully_defined():
            raise ValueError(f"Cannot convert a partially known TensorShape to a Tensor: "
                             f"{shape}")
        shape = shape.as_list()
    if isinstance(shape, (list, tuple)):
        if not shape:
            # TF converts Python values with the type attr's default (int32); an empty
            # list would otherwise become float32.
            return np.zeros([0], np.int32)
        return [d.value if isinstance(d, Dimension) else d for d in shape]
    return shape


def deprecated_argument_lookup(new_name, new_value, old_name, old_value):
    """TF's alias resolution for renamed arguments (`axis`/`dim`, `filters`/`filter`):
    the old name's value if given, else the new one's; both together are TF's ValueError."""
    if old_value is not None:
        if new_value is not None:
            raise ValueError(f"Cannot specify both '{old_name}' and '{new_name}'")
        return old_value
    return new_value
