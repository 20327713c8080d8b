"""`tf.bitwise`: bitwise and/or/xor, invert and shifts on integer tensors."""

from tensorflux._src.ops.math.bitwise_ops import (  # noqa: F401
    bitwise_and, bitwise_or, bitwise_xor, invert, left_shift, right_shift,
)
