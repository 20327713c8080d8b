"""Mutable tables: `tf.lookup.experimental.MutableHashTable` and `DenseHashTable`
(tf.contrib.lookup's MutableHashTable / MutableDenseHashTable).

With `checkpoint=True` (the default) a table adds a saveable to SAVEABLE_OBJECTS, as TF1
does, so `tf.train.Saver` writes its keys and values as `<name>-keys` / `<name>-values`
and restores them. The saveable speaks the Saver's protocol (train/saver.py):
`_saveables_for_saver()`, `_saver_read(sess)` (host arrays, one per spec) and
`_saver_restore(sess, arrays)` (checks them, returns the function that imports them).
"""

from __future__ import annotations

import numpy as np

from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.graph_keys import GraphKeys
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.ops.lookup import lookup_ops, table_kernels
from tensorflux._src.ops.lookup.static_tables import LookupInterface

__all__ = ["MutableHashTable", "DenseHashTable", "SaveSpec", "SaveableObject"]


class SaveSpec:
    """One tensor of a saveable: its value tensor and its checkpoint name."""

    def __init__(self, tensor, slice_spec, name, dtype=None, device=None):
        self.tensor = tensor
        self.slice_spec = slice_spec
        self.name = name
        self.dtype = dtype if dtype is not None else tensor.dtype
        self.device = device if device is not None else getattr(tensor, "device", None)


class SaveableObject:
    """TF's BaseSaverBuilder.SaveableObject: `op` (what is saved), `specs`, `name`."""

    def __init__(self, op, specs, name):
        self.op = op
        self.specs = specs
        self.name = name

    def _saveables_for_saver(self):
        return [self]


class _TableSaveable(SaveableObject):
    """A mutable table's keys and values under `<name>-keys` and `<name>-values`."""

    def __init__(self, table, name):
        keys, values = table.export()  # TF builds the export op here as well
        super().__init__(table, [SaveSpec(keys, "", name + "-keys"),
                                 SaveSpec(values, "", name + "-values")], name)

    def _saver_read(self, sess):
        return [np.asarray(v) for v in sess.run([spec.tensor for spec in self.specs])]

    def _saver_restore(self, sess, arrays):
        table = table_kernels.resolve(sess.run(self.op.resource_handle))
        keys, values = (np.asarray(a) for a in arrays)
        table.check_import(keys, values)
        return lambda: table.import_values(keys, values)


class _MutableTable(LookupInterface):
    """What both mutable tables share: ops named after the table, a saveable."""

    def __init__(self, key_dtype, value_dtype, name, checkpoint):
        # Subclasses store their own arguments first: `_create_resource` reads them.
        self._checkpoint = checkpoint
        self._name = name
        self._shared_name = None
        super().__init__(key_dtype, value_dtype)
        with lookup_ops.init_scope():
            self._resource_handle = self._create_resource()
        if checkpoint:
            _graph.add_to_collection(GraphKeys.SAVEABLE_OBJECTS, _TableSaveable(self, name))

    def _saveables_for_saver(self):
        return [_TableSaveable(self, self._name)]

    @property
    def name(self):
        return self._table_name

    @property
    def default_value(self):
        return self._default_value

    def size(self, name=None):
        """The number of entries (int64 scalar)."""
        with _graph.name_scope(name, f"{self.name}_Size", [self.resource_handle]) as scope:
            with _graph.get_default_graph().colocate_with(self.resource_handle):
                return lookup_ops.lookup_table_size_v2(self.resource_handle, name=scope)

    def _find(self, keys, name, scope_values):
        with _graph.name_scope(name, f"{self.name}_lookup_table_find", scope_values):
            keys = convert_to_tensor(keys, dtype=self._key_dtype, name="keys")
            with _graph.get_default_graph().colocate_with(self.resource_handle):
                return lookup_ops.lookup_table_find_v2(self.resource_handle, keys,
                                                       self._default_value)

    def _insert(self, keys, values, name):
        with _graph.name_scope(name, f"{self.name}_lookup_table_insert",
                               [self.resource_handle, keys, values]):
            keys = convert_to_tensor(keys, self._key_dtype, name="keys")
            values = convert_to_tensor(values, self._value_dtype, name="values")
            with _graph.get_default_graph().colocate_with(self.resource_handle):
                return lookup_ops.lookup_table_insert_v2(self.resource_handle, keys, values)

    def _remove(self, keys, name):
        if not hasattr(keys, "dtype"):
            keys = convert_to_tensor(keys, dtype=self._key_dtype)
        if keys.dtype != self._key_dtype:
            raise TypeError(f"Signature mismatch. Keys must be dtype {self._key_dtype}, got "
                            f"{keys.dtype}.")
        with _graph.name_scope(name, f"{self.name}_lookup_table_remove",
                               (self.resource_handle, keys, self._default_value)):
            return lookup_ops.lookup_table_remove_v2(self.resource_handle, keys)

    def export(self, name=None):
        """(keys, values) tensors of the table's contents."""
        with _graph.name_scope(name, f"{self.name}_lookup_table_export_values",
                               [self.resource_handle]):
            with _graph.get_default_graph().colocate_with(self.resource_handle):
                return lookup_ops.lookup_table_export_v2(self.resource_handle,
                                                         self._key_dtype, self._value_dtype)


class MutableHashTable(_MutableTable):
    """A hash table with `insert`, `remove` and `lookup` at any time (no initializer);
    scalar values, or vector values when `default_value` is a vector."""

    def __init__(self, key_dtype, value_dtype, default_value, name="MutableHashTable",
                 checkpoint=True):
        self._default_value = convert_to_tensor(default_value, dtype=value_dtype)
        self._value_shape = self._default_value.shape
        super().__init__(key_dtype, value_dtype, name, checkpoint)

    def _create_resource(self):
        # A checkpointed table is shared under its op's name (TF: so that the workers of
        # a multi-worker job restore the same table).
        node_sharing = self._checkpoint and self._shared_name is None
        if self._default_value.shape.ndims == 0:
            handle = lookup_ops.mutable_hash_table_v2(
                key_dtype=self._key_dtype, value_dtype=self._value_dtype,
                shared_name=self._shared_name, use_node_name_sharing=node_sharing,
                name=self._name)
        else:
            handle = lookup_ops.mutable_hash_table_of_tensors_v2(
                key_dtype=self._key_dtype, value_dtype=self._value_dtype,
                shared_name=self._shared_name, use_node_name_sharing=node_sharing,
                value_shape=self._default_value.shape, name=self._name)
        self._table_name = handle.op.name.split("/")[-1]
        return handle

    def lookup(self, keys, name=None):
        """The values of `keys` (any shape), `default_value` where missing."""
        return self._find(keys, name, (self.resource_handle, keys, self._default_value))

    def insert(self, keys, values, name=None):
        """The op associating `keys` with `values` (shape: keys' then the value shape)."""
        return self._insert(keys, values, name)

    def remove(self, keys, name=None):
        """The op removing `keys` (missing keys are ignored)."""
        return self._remove(keys, name)


class DenseHashTable(_MutableTable):
    """A mutable hash table with open addressing (TF's MutableDenseHashTable): faster
    lookups, more memory. `empty_key` and `deleted_key` mark free buckets and can never
    be inserted, removed or looked up."""

    def __init__(self, key_dtype, value_dtype, default_value, empty_key, deleted_key,
                 initial_num_buckets=None, name="MutableDenseHashTable", checkpoint=True):
        self._default_value = convert_to_tensor(default_value, dtype=value_dtype,
                                                name="default_value")
        self._value_shape = self._default_value.shape
        self._initial_num_buckets = initial_num_buckets
        self._empty_key = empty_key
        self._deleted_key = deleted_key
        super().__init__(key_dtype, value_dtype, name, checkpoint)

    def _create_resource(self):
        empty_key = convert_to_tensor(self._empty_key, dtype=self._key_dtype, name="empty_key")
        deleted_key = convert_to_tensor(self._deleted_key, dtype=self._key_dtype,
                                        name="deleted_key")
        extra = {}
        if self._initial_num_buckets is not None:
            extra["initial_num_buckets"] = self._initial_num_buckets
        handle = lookup_ops.mutable_dense_hash_table_v2(
            empty_key=empty_key, deleted_key=deleted_key, value_dtype=self._value_dtype,
            shared_name=self._shared_name,
            use_node_name_sharing=self._checkpoint and self._shared_name is None,
            value_shape=self._value_shape, name=self._name, **extra)
        self._table_name = handle.op.name.split("/")[-1]
        return handle

    def lookup(self, keys, name=None):
        """The values of `keys` ([n] + key shape), `default_value` where missing."""
        return self._find(keys, name, [self.resource_handle, keys])

    def insert_or_assign(self, keys, values, name=None):
        """The op associating `keys` with `values`."""
        return self._insert(keys, values, name)

    def insert(self, keys, values, name=None):
        """The op associating `keys` with `values`."""
        return self.insert_or_assign(keys, values, name)

    def erase(self, keys, name=None):
        """The op removing `keys` (missing keys are ignored)."""
        return self._remove(keys, name)

    def remove(self, keys, name=None):
        """The op removing `keys` (missing keys are ignored)."""
        return self.erase(keys, name)

