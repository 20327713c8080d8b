"""`tf.layers` (being written)."""
