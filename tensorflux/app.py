"""`tf.app`: `tf.app.run()` and `tf.app.flags` (the same module as `tf.flags`)."""

from tensorflux import flags  # noqa: F401
from tensorflux._src.platform.app import run  # noqa: F401

__all__ = ["flags", "run"]
