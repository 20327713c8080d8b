"""Mixed precision for the zoo: float32 master weights read in bfloat16.

    with tf.variable_scope(scope, custom_getter=precision.bfloat16_getter):
        logits = models.build(...)     # on bfloat16 inputs
"""

from __future__ import annotations

import tensorflux as tf


def bfloat16_getter(getter, name, *args, **kwargs):
    """TPU-style bfloat16 scope: a variable requested in bfloat16 (layers take their dtype
    from their bfloat16 inputs) is created in float32 (the master copy the optimizer
    updates) and read through a cast to bfloat16."""
    requested = kwargs.get("dtype")
    if requested == tf.bfloat16:
        kwargs["dtype"] = tf.float32
    variable = getter(name, *args, **kwargs)
    if requested == tf.bfloat16:
        return tf.cast(variable, tf.bfloat16)
    return variable
