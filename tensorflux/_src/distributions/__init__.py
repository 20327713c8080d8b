"""tf.distributions (TF 1.15): distributions composed from graph ops."""
