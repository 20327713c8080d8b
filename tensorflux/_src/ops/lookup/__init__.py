"""Lookup tables: Session resources made and used by host records (TF's op types), the
tf.lookup / tf.contrib.lookup classes above them. See docs/architecture.md."""
