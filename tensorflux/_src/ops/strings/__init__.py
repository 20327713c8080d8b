"""Ops on string tensors (numpy object arrays of bytes, always host records): text
(string_ops) and serialized records, tf.train.Example and tensors (parsing_ops)."""
