"""`tf.xla`: TF1's explicit XLA controls (`tf.xla.experimental`)."""

from tensorflux.xla import experimental  # noqa: F401
