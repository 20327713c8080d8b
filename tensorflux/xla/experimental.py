"""`tf.xla.experimental`: `compile` and `jit_scope`."""

from tensorflux._src.ops.control.xla_api import compile, jit_scope  # noqa: F401,A004
