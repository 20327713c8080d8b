"""`tf.losses` (being written)."""
