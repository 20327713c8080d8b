"""Attaches every gradient that a family's grads module holds to its record.

A record names its gradient itself when the function needs nothing above the record's
module; gradients built from wrappers above it (slices, reductions, `where`,
`unbroadcast`) live in the family's grads module, which attaches them with
`registry.register_gradient`, as TF's math_grad.py does with `@ops.RegisterGradient`.
This module imports all of those, so it sits at the top of the op layer;
`tensorflux/__init__.py` imports it, which runs before any `tf.gradients` can.
"""

from tensorflux._src.ops.array import array_grads  # noqa: F401
from tensorflux._src.ops.math import math_grads, reduce_grads  # noqa: F401
