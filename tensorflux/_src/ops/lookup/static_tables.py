"""Tables filled once by an initializer: `tf.lookup.StaticHashTable`,
`StaticVocabularyTable`, contrib's `HashTable` and `IdTableWithHashBuckets`, and the
index-table helpers (`index_table_from_file`, `index_to_string_table_from_tensor`, ...).

The table op is created in an init scope (outside control dependencies and cond/loop
bodies, as TF's init_scope), its init op goes to TABLE_INITIALIZERS. Out-of-vocabulary
keys go to buckets `hash(key) % num_oov_buckets + table size`, hash being FarmHash's
Fingerprint64 (TF's StringToHashBucketFast) unless a HasherSpec says otherwise.
"""

from __future__ import annotations

import collections
import uuid

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.operation import Tensor
from tensorflux._src.framework.sparse_tensor import SparseTensor
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.framework.tensor_shape import TensorShape
from tensorflux._src.ops.array.array_ops import size as _size
from tensorflux._src.ops.array.gather_ops import where
from tensorflux._src.ops.control.control_ops import no_op
from tensorflux._src.ops.lookup import lookup_ops
from tensorflux._src.ops.lookup.initializers import (
    KeyValueTensorInitializer, TextFileIdTableInitializer, TextFileIndex,
    TextFileStringTableInitializer,
)
from tensorflux._src.ops.math.math_ops import add, cast, not_equal
from tensorflux._src.ops.math.math_ops import range as _range
from tensorflux._src.ops.shape_fns import static_value
from tensorflux._src.ops.strings import hash_ops
from tensorflux._src.ops.strings.string_ops import as_string

__all__ = ["LookupInterface", "InitializableLookupTableBase", "StaticHashTable", "HashTable",
           "HasherSpec", "FastHashSpec", "StrongHashSpec", "IdTableWithHashBuckets",
           "StaticVocabularyTable", "index_table_from_file", "index_table_from_tensor",
           "index_to_string_table_from_file", "index_to_string_table_from_tensor"]


def _signature_mismatch(expected, got):
    return TypeError(f"Signature mismatch. Keys must be dtype {expected}, got {got}.")


class LookupInterface:
    """A lookup table that persists across Session runs (in the Session)."""

    def __init__(self, key_dtype, value_dtype):
        self._key_dtype = _dtypes.as_dtype(key_dtype)
        self._value_dtype = _dtypes.as_dtype(value_dtype)

    @property
    def key_dtype(self):
        """The table key dtype."""
        return self._key_dtype

    @property
    def value_dtype(self):
        """The table value dtype."""
        return self._value_dtype

    @property
    def name(self):
        """The name of the table."""
        return NotImplementedError

    @property
    def resource_handle(self):
        """The table's resource handle (a scalar `resource` tensor)."""
        return self._resource_handle

    def size(self, name=None):
        """The number of elements in this table."""
        raise NotImplementedError

    def lookup(self, keys, name=None):
        """Looks up `keys` in a table, outputs the corresponding values."""
        raise NotImplementedError

    def __getitem__(self, keys):
        return self.lookup(keys)


class InitializableLookupTableBase(LookupInterface):
    """A table filled by its initializer's op, then read-only."""

    def __init__(self, default_value, initializer):
        super().__init__(initializer.key_dtype, initializer.value_dtype)
        self._default_value = convert_to_tensor(default_value, dtype=self._value_dtype)
        self._default_value.shape.merge_with(TensorShape([]))
        self._initializer = initializer
        with lookup_ops.init_scope():
            self._resource_handle = self._create_resource()
        self._init_op = self._initialize()

    def _create_resource(self):
        raise NotImplementedError

    def _initialize(self):
        return self._initializer.initialize(self)

    @property
    def initializer(self):
        """The op that fills the table (also in TABLE_INITIALIZERS)."""
        return self._init_op

    @property
    def init(self):
        """Deprecated: use `initializer`."""
        return self.initializer

    @property
    def default_value(self):
        """The value of keys missing from the table."""
        return self._default_value

    def size(self, name=None):
        """The number of elements in this table (int64 scalar)."""
        with _graph.name_scope(name, f"{self.name}_Size", [self.resource_handle]) as scope:
            return lookup_ops.lookup_table_size_v2(self.resource_handle, name=scope)

    def lookup(self, keys, name=None):
        """The values of `keys` (a Tensor or SparseTensor), `default_value` where missing."""
        if not isinstance(keys, (Tensor, SparseTensor)):
            keys = convert_to_tensor(keys, dtype=self._key_dtype)
        key_tensor = keys.values if isinstance(keys, SparseTensor) else keys
        if keys.dtype.base_dtype != self._key_dtype:
            raise _signature_mismatch(self._key_dtype, keys.dtype)
        with _graph.name_scope(name, f"{self.name}_Lookup",
                               (self.resource_handle, key_tensor, self._default_value)) as scope:
            values = lookup_ops.lookup_table_find_v2(self.resource_handle, key_tensor,
                                                     self._default_value, name=scope)
        values.set_shape(key_tensor.shape)
        if isinstance(keys, SparseTensor):
            return SparseTensor(keys.indices, values, keys.dense_shape)
        return values


class StaticHashTable(InitializableLookupTableBase):
    """A hash table filled once by `initializer` (run `tf.tables_initializer()`), then
    immutable; keys missing from it give `default_value`."""

    def __init__(self, initializer, default_value, name=None):
        self._initializer = initializer
        self._shared_name = initializer._shared_name
        if not self._shared_name:
            # TF gives every static table its own shared name, so each one is its own
            # resource (the shared names of text-file tables are shared on purpose).
            self._shared_name = f"hash_table_{uuid.uuid4()}"
        self._name = name or "hash_table"
        self._table_name = None
        super().__init__(default_value, initializer)
        self._value_shape = self._default_value.shape

    def _create_resource(self):
        handle = lookup_ops.hash_table_v2(
            key_dtype=self._initializer.key_dtype, value_dtype=self._initializer.value_dtype,
            shared_name=self._shared_name, name=self._name)
        self._table_name = handle.op.name.split("/")[-1]
        return handle

    @property
    def name(self):
        return self._table_name

    def export(self, name=None):
        """(keys, values) tensors of every entry in the table."""
        with _graph.name_scope(name, f"{self.name}_Export", [self.resource_handle]) as scope:
            keys, values = lookup_ops.lookup_table_export_v2(
                self.resource_handle, self._key_dtype, self._value_dtype, name=scope)
        values.set_shape(keys.shape.concatenate(self._value_shape))
        return keys, values


class HashTable(StaticHashTable):
    """TF1's HashTable (tf.contrib.lookup.HashTable): a StaticHashTable whose resource is
    shared under `shared_name` within a Session, or is its op's own without one."""

    def __init__(self, initializer, default_value, shared_name=None, name=None):
        self._given_shared_name = shared_name or ""
        super().__init__(initializer, default_value, name=name)

    def _create_resource(self):
        self._shared_name = self._given_shared_name
        return super()._create_resource()


class HasherSpec(collections.namedtuple("HasherSpec", ["hasher", "key"])):
    """The hash function for out-of-vocabulary buckets: "fasthash" (FarmHash
    Fingerprint64), "legacy" (TF's Hash64) or "stronghash" (keyed SipHash-2-4)."""

    __slots__ = ()


FastHashSpec = HasherSpec("fasthash", None)


class StrongHashSpec(HasherSpec):
    """The keyed strong hash; `key` is two unsigned integers."""

    __slots__ = ()

    def __new__(cls, key):
        if len(key) != 2:
            raise ValueError(f"key must have size 2, got {len(key)}.")
        if not isinstance(key[0], int) or not isinstance(key[1], int):
            raise TypeError(f"Invalid key {key}. Must be unsigned integer values.")
        return super().__new__(cls, "stronghash", key)


def _as_string(tensor):
    if tensor.dtype.base_dtype == _dtypes.string:
        return tensor
    return as_string(tensor)


def _hash_bucket_fn(hasher_spec):
    if not isinstance(hasher_spec, HasherSpec):
        raise TypeError(f"hasher_spec must be of type HasherSpec {hasher_spec}")
    # TF's StringToHashBucketFast / StringToHashBucket (legacy) / ...Strong (keyed).
    if hasher_spec.hasher == "fasthash":
        return hash_ops.string_to_hash_bucket_fast
    if hasher_spec.hasher == "legacy":
        return lambda strings, num_buckets, name: hash_ops.string_to_hash_bucket(
            strings, num_buckets, name=name)
    if hasher_spec.hasher == "stronghash":
        return lambda strings, num_buckets, name: hash_ops.string_to_hash_bucket_strong(
            strings, num_buckets, hasher_spec.key, name=name)
    raise ValueError(f"{hasher_spec.hasher} is not supported.")


def _check_vocabulary_key_dtypes(table_key_dtype, key_dtype, value_dtype):
    supported = (_dtypes.int64, _dtypes.string)
    if table_key_dtype not in supported:
        raise TypeError(f"Invalid key dtype, expected one of {supported}, but got "
                        f"{table_key_dtype}.")
    if table_key_dtype.is_integer != key_dtype.is_integer:
        raise TypeError(f"Invalid key dtype, expected "
                        f"{'integer' if key_dtype.is_integer else 'non-integer'} but got "
                        f"{table_key_dtype}.")
    if value_dtype != _dtypes.int64:
        raise TypeError(f"Invalid value dtype, expected {_dtypes.int64} but got "
                        f"{value_dtype}.")


class _BucketedTable(LookupInterface):
    """What IdTableWithHashBuckets and StaticVocabularyTable share: ids from a table,
    out-of-vocabulary keys to `num_oov_buckets` hash buckets after the table's ids."""

    def _finish(self, table, num_oov_buckets, key_dtype, name):
        if not key_dtype.is_integer and key_dtype != _dtypes.string:
            raise TypeError(f"Invalid key_dtype, expected integer or string, got "
                            f"{key_dtype}.")
        self._table = table
        self._num_oov_buckets = num_oov_buckets
        self._table_name = name.split("/")[-1] if name else None
        super().__init__(key_dtype, _dtypes.int64)

    @property
    def initializer(self):
        if self._table is not None:
            return self._table._init_op
        with _graph.name_scope(None, "init"):
            return no_op()

    @property
    def resource_handle(self):
        return self._table.resource_handle if self._table is not None else None

    @property
    def name(self):
        return self._table_name

    def size(self, name=None):
        """The table's size plus the number of buckets (int64 scalar)."""
        with _graph.name_scope(name, f"{self.name}_Size"):
            if self._table is not None:
                table_size = self._table.size()
            else:
                table_size = convert_to_tensor(0, dtype=_dtypes.int64)
            return table_size + self._num_oov_buckets

    def _lookup(self, keys, name, hash_bucket, where_name):
        if not isinstance(keys, (Tensor, SparseTensor)):
            keys = convert_to_tensor(keys, dtype=self._key_dtype)
        if keys.dtype.base_dtype != self._key_dtype:
            raise _signature_mismatch(self._key_dtype, keys.dtype)
        values = keys.values if isinstance(keys, SparseTensor) else keys
        if self._table is not None and self._table.key_dtype.base_dtype == _dtypes.int64:
            values = cast(values, _dtypes.int64, name="ToInt64")
        if self._num_oov_buckets == 0:
            ids = self._table.lookup(values, name=name)
        else:
            with _graph.name_scope(name, f"{self.name}_Lookup") as scope:
                buckets = hash_bucket(_as_string(values), self._num_oov_buckets,
                                      name="hash_bucket")
                if self._table is not None:
                    ids = self._table.lookup(values)
                    buckets = add(buckets, self._table.size())
                    found = not_equal(ids, self._table.default_value)
                    ids = where(found, ids, buckets, name=scope if where_name else None)
                else:
                    ids = buckets
        if isinstance(keys, SparseTensor):
            return SparseTensor(keys.indices, ids, keys.dense_shape)
        return ids


class IdTableWithHashBuckets(_BucketedTable):
    """Ids from `table` (string or int64 keys to int64 ids); other keys to
    `num_oov_buckets` buckets `hash(key) % num_oov_buckets + table.size()`."""

    def __init__(self, table, num_oov_buckets, hasher_spec=FastHashSpec, name=None,
                 key_dtype=None):
        if name:
            name = name.rstrip("/")
        if table:
            if key_dtype is None:
                key_dtype = table.key_dtype
            _check_vocabulary_key_dtypes(table.key_dtype, key_dtype, table.value_dtype)
            name = name or table.name
        else:
            if num_oov_buckets <= 0:
                raise ValueError("oov_buckets must be > 0 if no table is supplied.")
            key_dtype = _dtypes.string if key_dtype is None else key_dtype
            name = name or "hash_bucket"
        key_dtype = _dtypes.as_dtype(key_dtype)
        if not isinstance(hasher_spec, HasherSpec):
            raise TypeError(f"hasher_spec must be of type HasherSpec, got {hasher_spec}")
        self._hasher_spec = hasher_spec
        self._finish(table or None, num_oov_buckets, key_dtype, name)

    def lookup(self, keys, name=None):
        """Ids of `keys` (a Tensor or SparseTensor): the table's, or a bucket's."""
        return self._lookup(keys, name, _hash_bucket_fn(self._hasher_spec), where_name=True)


class StaticVocabularyTable(_BucketedTable):
    """Ids from `initializer`'s vocabulary (string or int64 keys to int64 ids); other keys
    to `num_oov_buckets` buckets `Fingerprint64(key) % num_oov_buckets + vocabulary size`.
    Without an initializer every key goes to a bucket."""

    def __init__(self, initializer, num_oov_buckets, lookup_key_dtype=None, name=None):
        if num_oov_buckets <= 0:
            raise ValueError("oov_buckets must be > 0.")
        if name:
            name = name.rstrip("/")
        table = None
        if initializer:
            if lookup_key_dtype is None:
                lookup_key_dtype = initializer.key_dtype
            _check_vocabulary_key_dtypes(initializer.key_dtype,
                                         _dtypes.as_dtype(lookup_key_dtype),
                                         initializer.value_dtype)
            table = StaticHashTable(initializer, default_value=-1)
            name = name or table.name
        else:
            lookup_key_dtype = _dtypes.string
            name = name or "hash_bucket"
        self._finish(table, num_oov_buckets, _dtypes.as_dtype(lookup_key_dtype), name)

    def lookup(self, keys, name=None):
        """Ids of `keys` (a Tensor or SparseTensor): the vocabulary's, or a bucket's."""
        return self._lookup(keys, name, _hash_bucket_fn(FastHashSpec), where_name=False)


# -- index tables -----------------------------------------------------------------------------
def _check_oov(num_oov_buckets):
    if num_oov_buckets < 0:
        raise ValueError(f"num_oov_buckets must be greater or equal than 0, got "
                         f"{num_oov_buckets}.")


def index_table_from_file(vocabulary_file=None, num_oov_buckets=0, vocab_size=None,
                          default_value=-1, hasher_spec=FastHashSpec, key_dtype=_dtypes.string,
                          name=None, key_column_index=TextFileIndex.WHOLE_LINE,
                          value_column_index=TextFileIndex.LINE_NUMBER, delimiter="\t"):
    """A table from keys (strings, or integers) to int64 ids, the ids being line numbers
    of `vocabulary_file`; out-of-vocabulary keys get `default_value`, or one of
    `num_oov_buckets` hash buckets after the vocabulary."""
    if vocabulary_file is None or (isinstance(vocabulary_file, str) and not vocabulary_file):
        raise ValueError("vocabulary_file must be specified and must not be empty.")
    _check_oov(num_oov_buckets)
    if vocab_size is not None and vocab_size < 1:
        shown = vocabulary_file
        if isinstance(vocabulary_file, Tensor):
            value = static_value(vocabulary_file)
            shown = value.item() if value is not None else "?"
        raise ValueError(f"vocab_size must be greater than 0, got {vocab_size}. "
                         f"vocabulary_file: {shown}")
    key_dtype = _dtypes.as_dtype(key_dtype)
    if not key_dtype.is_integer and key_dtype.base_dtype != _dtypes.string:
        raise TypeError("Only integer and string keys are supported.")
    with _graph.name_scope(name, "string_to_index"):
        with _graph.name_scope(None, "hash_table"):
            init = TextFileIdTableInitializer(
                vocabulary_file, vocab_size=vocab_size,
                key_dtype=_dtypes.int64 if key_dtype.is_integer else key_dtype,
                name="table_init", key_column_index=key_column_index,
                value_column_index=value_column_index, delimiter=delimiter)
            table = StaticHashTable(init, default_value)
        if num_oov_buckets:
            table = IdTableWithHashBuckets(table, num_oov_buckets=num_oov_buckets,
                                           hasher_spec=hasher_spec, key_dtype=key_dtype)
        return table


def index_table_from_tensor(vocabulary_list, num_oov_buckets=0, default_value=-1,
                            hasher_spec=FastHashSpec, dtype=_dtypes.string, name=None):
    """A table from keys (strings, or integers) to int64 ids, the ids being positions in
    the 1-D `vocabulary_list`; out-of-vocabulary keys get `default_value`, or one of
    `num_oov_buckets` hash buckets after the vocabulary."""
    if vocabulary_list is None:
        raise ValueError("vocabulary_list must be specified.")
    _check_oov(num_oov_buckets)
    dtype = _dtypes.as_dtype(dtype)
    if not dtype.is_integer and dtype.base_dtype != _dtypes.string:
        raise TypeError("Only integer and string keys are supported.")
    with _graph.name_scope(name, "string_to_index"):
        keys = convert_to_tensor(vocabulary_list)
        if keys.dtype.is_integer != dtype.is_integer:
            raise ValueError(f"Expected {'integer' if dtype.is_integer else 'non-integer'}, "
                             f"got {keys.dtype}.")
        if not dtype.is_integer and keys.dtype.base_dtype != dtype:
            raise ValueError(f"Expected {dtype}, got {keys.dtype}.")
        num_elements = _size(keys)
        values = cast(_range(num_elements), _dtypes.int64)
        with _graph.name_scope(None, "hash_table"):
            table_keys = cast(keys, _dtypes.int64) if keys.dtype.is_integer else keys
            init = KeyValueTensorInitializer(table_keys, values, table_keys.dtype.base_dtype,
                                             _dtypes.int64, name="table_init")
            table = StaticHashTable(init, default_value)
        if num_oov_buckets:
            table = IdTableWithHashBuckets(table, num_oov_buckets=num_oov_buckets,
                                           hasher_spec=hasher_spec, key_dtype=dtype)
        return table


def index_to_string_table_from_file(vocabulary_file, vocab_size=None, default_value="UNK",
                                    name=None, key_column_index=TextFileIndex.LINE_NUMBER,
                                    value_column_index=TextFileIndex.WHOLE_LINE,
                                    delimiter="\t"):
    """A table from int64 ids (line numbers of `vocabulary_file`) to its lines; other ids
    give `default_value`."""
    if vocabulary_file is None or (isinstance(vocabulary_file, str) and not vocabulary_file):
        raise ValueError("vocabulary_file must be specified and must not be empty.")
    if vocab_size is not None and vocab_size < 1:
        raise ValueError(f"vocab_size must be greater than 0, got {vocab_size}.")
    with _graph.name_scope(name, "index_to_string"):
        init = TextFileStringTableInitializer(
            vocabulary_file, vocab_size=vocab_size, name="table_init",
            key_column_index=key_column_index, value_column_index=value_column_index,
            delimiter=delimiter)
        return StaticHashTable(init, default_value)


def index_to_string_table_from_tensor(vocabulary_list, default_value="UNK", name=None):
    """A table from int64 ids (positions in the 1-D `vocabulary_list`) to its strings;
    other ids give `default_value`."""
    if vocabulary_list is None:
        raise ValueError("vocabulary_list must be specified.")
    with _graph.name_scope(name, "index_to_string"):
        vocabulary_list = convert_to_tensor(vocabulary_list, _dtypes.string)
        num_elements = _size(vocabulary_list)
        keys = cast(_range(num_elements), _dtypes.int64)
        init = KeyValueTensorInitializer(keys, vocabulary_list, _dtypes.int64, _dtypes.string,
                                         name="table_init")
        return StaticHashTable(init, default_value)
