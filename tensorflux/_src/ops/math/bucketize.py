"""TF's Bucketize op (`math_ops._bucketize`, used by `tf.feature_column.bucketized_column`).

The id of a value is the number of boundaries at or below it (C++'s `std::upper_bound`),
so `boundaries=[0, 10, 100]` makes buckets (-inf, 0), [0, 10), [10, 100), [100, inf).
The boundaries are a list(float) attr, float32 as in TF's kernel, which compares each
value with them in C++'s promoted type: float for the integer and float inputs, double
for double inputs (against the float boundaries widened). Not differentiable, as in TF.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.op_helpers import kernel_error
from tensorflux._src.ops.registry import OpDef, REQUIRED, register
from tensorflux._src.ops.shape_fns import unchanged

__all__ = []


def _bucketize_lower(input, boundaries):  # noqa: A002 - TF's argument name
    bounds = np.asarray(boundaries, np.float32)
    # TF's kernel constructor refuses unsorted boundaries when the op runs.
    if np.any(bounds[1:] < bounds[:-1]):
        raise kernel_error("Expected sorted boundaries")
    wide = input.dtype == jnp.float64
    values = input if wide else input.astype(jnp.float32)
    bounds = bounds.astype(np.float64) if wide else bounds
    flat = jnp.searchsorted(bounds, values.reshape(-1), side="right")
    return flat.reshape(input.shape).astype(jnp.int32)


register(OpDef(
    "Bucketize", inputs=("input: T",), outputs=("output: int32",),
    attrs={"T": (_dtypes.int32, _dtypes.int64, _dtypes.float32, _dtypes.float64),
           "boundaries": REQUIRED},
    shape=unchanged, lower=_bucketize_lower, not_differentiable=True,
))


def bucketize(input, boundaries, name=None):  # noqa: A002 - TF's argument name
    """Bucket ids (int32) of `input`'s values among the sorted `boundaries`."""
    if not isinstance(boundaries, (list, tuple)):
        raise TypeError("Expected list for 'boundaries' argument to 'bucketize' Op, not "
                        f"{boundaries!r}.")
    return apply_op("Bucketize", name, input=input,
                    boundaries=[float(b) for b in boundaries])
