"""`tf.contrib.lookup`: TF1's lookup tables under their contrib names.

The classes are tf.lookup's (contrib's HashTable takes a `shared_name`); the functions
taking `mapping` are contrib's spellings of the index-table helpers.
"""

from __future__ import annotations

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.ops.lookup import static_tables as _static
from tensorflux._src.ops.lookup.initializers import (  # noqa: F401
    KeyValueTensorInitializer, TableInitializerBase, TextFileIdTableInitializer,
    TextFileIndex, TextFileInitializer, TextFileStringTableInitializer,
)
from tensorflux._src.ops.lookup.mutable_tables import MutableHashTable  # noqa: F401
from tensorflux._src.ops.lookup.mutable_tables import DenseHashTable as MutableDenseHashTable
from tensorflux._src.ops.lookup.static_tables import (  # noqa: F401
    FastHashSpec, HasherSpec, HashTable, IdTableWithHashBuckets, InitializableLookupTableBase,
    LookupInterface, StrongHashSpec, index_table_from_file, index_to_string_table_from_file,
)

__all__ = ["string_to_index", "string_to_index_table_from_file",
           "string_to_index_table_from_tensor", "index_to_string",
           "index_to_string_table_from_file", "index_to_string_table_from_tensor",
           "index_table_from_file", "index_table_from_tensor", "LookupInterface",
           "InitializableLookupTableBase", "IdTableWithHashBuckets", "HashTable",
           "MutableHashTable", "MutableDenseHashTable", "TableInitializerBase",
           "KeyValueTensorInitializer", "TextFileIndex", "TextFileInitializer",
           "TextFileIdTableInitializer", "TextFileStringTableInitializer", "HasherSpec",
           "StrongHashSpec", "FastHashSpec"]


def index_table_from_tensor(mapping, num_oov_buckets=0, default_value=-1,
                            hasher_spec=FastHashSpec, dtype=_dtypes.string, name=None):
    """A table from the keys in the 1-D `mapping` to their positions (int64)."""
    if mapping is None:
        raise ValueError("mapping must be specified.")
    return _static.index_table_from_tensor(
        vocabulary_list=mapping, num_oov_buckets=num_oov_buckets, default_value=default_value,
        hasher_spec=hasher_spec, dtype=dtype, name=name)


def index_to_string_table_from_tensor(mapping, default_value="UNK", name=None):
    """A table from positions (int64) in the 1-D string `mapping` to its strings."""
    if mapping is None:
        raise ValueError("mapping must be specified.")
    return _static.index_to_string_table_from_tensor(
        vocabulary_list=mapping, default_value=default_value, name=name)


def string_to_index_table_from_file(vocabulary_file=None, num_oov_buckets=0,
                                    vocab_size=None, default_value=-1,
                                    hasher_spec=FastHashSpec, name=None):
    """Deprecated: `index_table_from_file`."""
    return index_table_from_file(vocabulary_file, num_oov_buckets, vocab_size, default_value,
                                 hasher_spec, key_dtype=_dtypes.string, name=name)


def string_to_index_table_from_tensor(mapping, num_oov_buckets=0, default_value=-1,
                                      hasher_spec=FastHashSpec, name=None):
    """Deprecated: `index_table_from_tensor` (string mappings only)."""
    with _graph.name_scope(name, "string_to_index") as scope:
        mapping = convert_to_tensor(mapping)
    if mapping.dtype.base_dtype != _dtypes.string:
        raise ValueError("string_to_index_table_from_tensor requires string.")
    return index_table_from_tensor(mapping, num_oov_buckets, default_value, hasher_spec,
                                   name=scope)


def string_to_index(tensor, mapping, default_value=-1, name=None):
    """Deprecated: the positions of `tensor`'s strings in `mapping` (int64)."""
    table = index_table_from_tensor(mapping=mapping, default_value=default_value, name=name)
    return table.lookup(tensor)


def index_to_string(tensor, mapping, default_value="UNK", name=None):
    """Deprecated: the strings of `mapping` at the int64 positions `tensor`."""
    table = index_to_string_table_from_tensor(mapping=mapping, default_value=default_value,
                                              name=name)
    return table.lookup(tensor)
