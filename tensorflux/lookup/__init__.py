"""`tf.lookup`: tables from keys to values that live in the Session.

    table = tf.lookup.StaticHashTable(
        tf.lookup.KeyValueTensorInitializer(["a", "b"], [1, 2]), default_value=-1)
    ids = table.lookup(words)
    sess.run(tf.tables_initializer())     # fills every table of the graph

`experimental` has the mutable tables (MutableHashTable, DenseHashTable).
"""

from tensorflux._src.ops.lookup.initializers import (  # noqa: F401
    KeyValueTensorInitializer, TextFileIndex, TextFileInitializer,
)
from tensorflux._src.ops.lookup.static_tables import (  # noqa: F401
    StaticHashTable, StaticVocabularyTable,
)
from tensorflux.lookup import experimental  # noqa: F401

__all__ = ["KeyValueTensorInitializer", "StaticHashTable", "StaticVocabularyTable",
           "TextFileIndex", "TextFileInitializer", "experimental"]
