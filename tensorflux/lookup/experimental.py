"""`tf.lookup.experimental`: the mutable tables."""

from tensorflux._src.ops.lookup.mutable_tables import (  # noqa: F401
    DenseHashTable, MutableHashTable,
)

__all__ = ["DenseHashTable", "MutableHashTable"]
