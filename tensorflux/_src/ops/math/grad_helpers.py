"""Building blocks for gradient functions: undoing broadcasting (`unbroadcast`, over the
`BroadcastGradientArgs` record). Above array_ops and reduce_ops, below every grads module.

Gradient functions build ordinary graph ops. Shapes are static whenever a run is
compiled, so `BroadcastGradientArgs` over `tf.shape` values folds to constants and
the reductions below cost nothing at run time beyond the sum itself.
"""

from __future__ import annotations

import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework.tensor_shape import TensorShape
from tensorflux._src.ops.array import array_ops
from tensorflux._src.ops.math import reduce_ops
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.registry import OpDef, register


def _broadcast_gradient_args(s0, s1):
    # Which axes of each input were broadcast (and so must be summed over in backprop).
    s0, s1 = [int(d) for d in np.asarray(s0)], [int(d) for d in np.asarray(s1)]
    n = max(len(s0), len(s1))
    p0, p1 = [1] * (n - len(s0)) + s0, [1] * (n - len(s1)) + s1
    r0 = [i for i in range(n) if p0[i] == 1 and p1[i] != 1 or i < n - len(s0)]
    r1 = [i for i in range(n) if p1[i] == 1 and p0[i] != 1 or i < n - len(s1)]
    # Axes where both are 1 (and were not prepended) need no reduction; where both were
    # prepended they are reduced for both.
    return np.array(r0, np.int32), np.array(r1, np.int32)


register(OpDef(
    "BroadcastGradientArgs",
    inputs=("s0: T", "s1: T"), outputs=("r0: T", "r1: T"), attrs={"T": _dtypes.INDEX},
    shape=lambda op: [TensorShape([None]), TensorShape([None])],
    lower=_broadcast_gradient_args,  # shapes are always static when a run is compiled
    not_differentiable=True,
))


def unbroadcast(grad, x):
    """Sums `grad` over the axes along which `x` was broadcast, then reshapes to x."""
    if (x.shape.is_fully_defined() and grad.shape.is_fully_defined()
            and x.shape == grad.shape):
        return grad
    sx = array_ops.shape(x)
    sg = array_ops.shape(grad)
    rx, _ = apply_op("BroadcastGradientArgs", s0=sx, s1=sg)
    return array_ops.reshape(reduce_ops.reduce_sum(grad, rx), sx)
