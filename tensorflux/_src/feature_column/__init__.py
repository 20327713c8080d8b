"""tf.feature_column: a library over the ops (sparse ops, lookup tables, string hashing,
embedding lookups), like layers/; it adds one op record of its own (ops/math/bucketize.py)."""
