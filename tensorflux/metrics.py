"""`tf.metrics` (being written)."""
