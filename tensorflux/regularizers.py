"""`tf.regularizers` (being written)."""
