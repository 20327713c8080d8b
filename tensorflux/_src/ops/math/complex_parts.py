"""`tf.math.imag` and `tf.math.angle`: the Imag and Angle records' wrappers.

A real tensor's imaginary part and angle are zeros (`zeros_like`), so these two sit
above generator_ops; the records, `real`, `conj` and `complex` are math_ops'.
"""

from __future__ import annotations

from tensorflux._src.framework import dispatch as _dispatch
from tensorflux._src.ops.array.generator_ops import zeros_like
from tensorflux._src.ops.math.math_ops import _complex_part

__all__ = ["angle", "imag"]

imag = _complex_part("Imag", "Imag", for_real=zeros_like)
imag.__module__ = __name__
imag.__doc__ = "The imaginary part of a complex tensor; zeros for a real tensor."
angle = _complex_part("Angle", "Angle", for_real=zeros_like)
angle.__module__ = __name__
angle.__doc__ = "The argument atan2(imag, real) of a complex tensor; zeros for a real one."


# RaggedTensor (and other composite) arguments dispatch to registered handlers
# (framework/dispatch.py; TF's ragged_dispatch list).
_dispatch.add_dispatch_support_to(globals(), [
    "imag", "angle",
])
