"""Table initializers: `tf.lookup.KeyValueTensorInitializer`, `TextFileInitializer`,
`TextFileIndex` and the contrib id/string text-file initializers.

`initialize(table)` builds the table's init op (InitializeTableV2 or
InitializeTableFromTextFileV2) and adds it to the TABLE_INITIALIZERS collection, which
`tf.tables_initializer()` groups, as TF1 does.
"""

from __future__ import annotations

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.graph_keys import GraphKeys
from tensorflux._src.framework.operation import Tensor
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.ops.lookup import lookup_ops

__all__ = ["TableInitializerBase", "KeyValueTensorInitializer", "TextFileIndex",
           "TextFileInitializer", "TextFileStringTableInitializer",
           "TextFileIdTableInitializer", "check_table_dtypes"]


def check_table_dtypes(table, key_dtype, value_dtype):
    """TypeError unless the dtypes are the table's."""
    if key_dtype.base_dtype != table.key_dtype:
        raise TypeError(f"Invalid key dtype, expected {table.key_dtype} but got {key_dtype}.")
    if value_dtype.base_dtype != table.value_dtype:
        raise TypeError(f"Invalid value dtype, expected {table.value_dtype} but got "
                        f"{value_dtype}.")


class TableInitializerBase:
    """Base class for table initializers."""

    def __init__(self, key_dtype, value_dtype):
        self._key_dtype = _dtypes.as_dtype(key_dtype)
        self._value_dtype = _dtypes.as_dtype(value_dtype)

    @property
    def key_dtype(self):
        """The expected table key dtype."""
        return self._key_dtype

    @property
    def value_dtype(self):
        """The expected table value dtype."""
        return self._value_dtype

    def initialize(self, table):
        """Returns the table initialization op."""
        raise NotImplementedError

    @property
    def _shared_name(self):
        """A shared name for the table ("" : none)."""
        return ""


class KeyValueTensorInitializer(TableInitializerBase):
    """Initializes a table from a 1-D `keys` tensor and a `values` tensor."""

    def __init__(self, keys, values, key_dtype=None, value_dtype=None, name=None):
        with lookup_ops.init_scope():
            self._keys = convert_to_tensor(keys, dtype=key_dtype, name="keys")
            self._values = convert_to_tensor(values, dtype=value_dtype, name="values")
        self._name = name if name is not None else "key_value_init"
        super().__init__(self._keys.dtype, self._values.dtype)

    def initialize(self, table):
        """The InitializeTableV2 op filling `table` from the keys and values."""
        check_table_dtypes(table, self._keys.dtype, self._values.dtype)
        with _graph.name_scope(self._name, values=(table.resource_handle, self._keys,
                                                   self._values)) as scope:
            init_op = lookup_ops.initialize_table_v2(table.resource_handle, self._keys,
                                                     self._values, name=scope)
        _graph.add_to_collection(GraphKeys.TABLE_INITIALIZERS, init_op)
        return init_op


class TextFileIndex:
    """What a text file line gives a key or value: a column (>= 0), the whole line or
    the line number."""

    WHOLE_LINE = -2
    LINE_NUMBER = -1


class TextFileInitializer(TableInitializerBase):
    """Initializes a table from a text file, one entry per line.

    `key_index` / `value_index`: a column of the line split at `delimiter` (>= 0),
    `TextFileIndex.WHOLE_LINE` (the line; string or integer keys, string values) or
    `TextFileIndex.LINE_NUMBER` (the 0-based line number, int64).
    """

    def __init__(self, filename, key_dtype, key_index, value_dtype, value_index,
                 vocab_size=None, delimiter="\t", name=None):
        if not isinstance(filename, Tensor) and not filename:
            raise ValueError(f"Filename required for {name}.")
        key_dtype = _dtypes.as_dtype(key_dtype)
        value_dtype = _dtypes.as_dtype(value_dtype)
        if key_index < -2:
            raise ValueError(f"Invalid key index {key_index}.")
        if key_index == TextFileIndex.LINE_NUMBER and key_dtype != _dtypes.int64:
            raise ValueError(f"Signature mismatch. Keys must be dtype {_dtypes.int64}, got "
                             f"{key_dtype}.")
        if (key_index == TextFileIndex.WHOLE_LINE and not key_dtype.is_integer
                and key_dtype != _dtypes.string):
            raise ValueError(f"Signature mismatch. Keys must be integer or string, got "
                             f"{key_dtype}.")
        if value_index < -2:
            raise ValueError(f"Invalid value index {value_index}.")
        if value_index == TextFileIndex.LINE_NUMBER and value_dtype != _dtypes.int64:
            raise ValueError(f"Signature mismatch. Values must be dtype {_dtypes.int64}, got "
                             f"{value_dtype}.")
        if value_index == TextFileIndex.WHOLE_LINE and value_dtype != _dtypes.string:
            raise ValueError(f"Signature mismatch. Values must be dtype {_dtypes.string}, got "
                             f"{value_dtype}.")
        if vocab_size is not None and vocab_size <= 0:
            raise ValueError(f"Invalid vocab_size {vocab_size}.")
        self._filename_arg = filename
        self._filename = filename
        self._key_index = key_index
        self._value_index = value_index
        self._vocab_size = vocab_size
        self._delimiter = delimiter
        self._name = name
        super().__init__(key_dtype, value_dtype)

    def initialize(self, table):
        """The InitializeTableFromTextFileV2 op filling `table` from the file."""
        check_table_dtypes(table, self.key_dtype, self.value_dtype)
        with _graph.name_scope(self._name, "text_file_init",
                               (table.resource_handle,)) as scope:
            filename = convert_to_tensor(self._filename, _dtypes.string, name="asset_filepath")
            init_op = lookup_ops.initialize_table_from_text_file_v2(
                table.resource_handle, filename, self._key_index, self._value_index,
                -1 if self._vocab_size is None else self._vocab_size, self._delimiter,
                name=scope)
        _graph.add_to_collection(GraphKeys.TABLE_INITIALIZERS, init_op)
        # A constant file name is an asset of the graph (SavedModel copies it); a fed or
        # computed one is not.
        if filename.op.type == "Const":
            _graph.add_to_collection(GraphKeys.ASSET_FILEPATHS, filename)
        return init_op

    @property
    def _shared_name(self):
        # TF shares tables initialized from the same file, columns and size: their
        # resource is one per Session, initialized once.
        if self._vocab_size:
            return (f"hash_table_{self._filename_arg}_{self._vocab_size:d}_{self._key_index}_"
                    f"{self._value_index}")
        return f"hash_table_{self._filename_arg}_{self._key_index}_{self._value_index}"


class TextFileStringTableInitializer(TextFileInitializer):
    """int64 ids to strings from a text file (line number -> whole line by default)."""

    def __init__(self, filename, key_column_index=TextFileIndex.LINE_NUMBER,
                 value_column_index=TextFileIndex.WHOLE_LINE, vocab_size=None,
                 delimiter="\t", name="text_file_string_table_init"):
        super().__init__(filename, _dtypes.int64, key_column_index, _dtypes.string,
                         value_column_index, vocab_size=vocab_size, delimiter=delimiter,
                         name=name)


class TextFileIdTableInitializer(TextFileInitializer):
    """Strings (or integers) to int64 ids from a text file (whole line -> line number by
    default)."""

    def __init__(self, filename, key_column_index=TextFileIndex.WHOLE_LINE,
                 value_column_index=TextFileIndex.LINE_NUMBER, vocab_size=None,
                 delimiter="\t", name="text_file_id_table_init", key_dtype=_dtypes.string):
        super().__init__(filename, key_dtype, key_column_index, _dtypes.int64,
                         value_column_index, vocab_size=vocab_size, delimiter=delimiter,
                         name=name)
