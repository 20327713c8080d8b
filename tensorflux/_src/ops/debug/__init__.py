"""Run-time checks and prints: Assert, Print, tf.print, CheckNumerics (debug_ops), the
tf.debugging asserts built on them (check_ops, check_shapes) and TF's text form of
tensors in their messages (tensor_format)."""
