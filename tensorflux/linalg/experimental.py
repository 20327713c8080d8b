"""`tf.linalg.experimental`."""

from tensorflux._src.ops.linalg.conjugate_gradient import conjugate_gradient  # noqa: F401
