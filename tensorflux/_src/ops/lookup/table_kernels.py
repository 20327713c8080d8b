"""The tables themselves: one object per table per Session, used by the host records.

Classes follow TF's kernels (core/kernels/lookup_table_op.{h,cc}, initializable_lookup_
table.cc, lookup_util.cc), with their checks and messages:

- `HashTable`: initialized once (KeyValueTensorInitializer, TextFileInitializer), then
  read-only; a lookup before initialization is "Table not initialized.".
- `MutableHashTable`: insert / remove / import at any time; scalar values, or vectors
  (TF's MutableHashTableOfTensors).
- `MutableDenseHashTable`: TF's open-addressing table with quadratic probing over
  power-of-two bucket arrays, keyed by TF's hashes (hashing.py), so its exported bucket
  arrays (and checkpoints) have TF's layout; empty_key / deleted_key mark free slots.

A table lives in its Session's resources (`SessionTables`); the creating record returns a
`TableHandle` that carries the table itself, so a handle evaluated in the user's Session
and fed to a dataset function's private Session still reaches the user's table.
"""

from __future__ import annotations

import re
import threading

import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import errors
from tensorflux._src.ops.strings import hashing
from tensorflux._src.ops.op_helpers import dims_str

_KEY = "__lookup_tables__"
_create_lock = threading.Lock()
LINE_NUMBER, WHOLE_LINE = -1, -2


def _invalid(message):
    return errors.InvalidArgumentError(None, None, message)


def _precondition(message):
    return errors.FailedPreconditionError(None, None, message)


def _tf_name(dtype):
    return _dtypes.as_dtype(dtype)._tf_name


def _fmt(value):
    """A key or value as TF's C++ streams print it."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, (bool, np.bool_)):
        return str(int(value))
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def _py_list(array, dtype):
    """The elements of `array` (flattened) as hashable Python values."""
    if dtype == _dtypes.string:
        return [k.encode("utf-8") if isinstance(k, str) else bytes(k) for k in array.ravel()]
    return array.ravel().tolist()


def _array(values, dtype, shape):
    np_dtype = dtype.as_numpy_dtype
    if np_dtype is np.object_:
        out = np.empty(len(values), dtype=object)
        out[:] = values
    else:
        out = np.array(values, dtype=np_dtype)
    return out.reshape(shape)


# -- the Session's tables ---------------------------------------------------------------------
class TableHandle:
    """The value of a table's resource handle: the table it names."""

    __slots__ = ("table",)

    def __init__(self, table):
        self.table = table

    def __repr__(self):
        return f"<lookup table {self.table.name!r}>"


class SessionTables:
    """A Session's tables by (container, name); closing the Session drops them."""

    def __init__(self):
        self.lock = threading.Lock()
        self.by_key = {}

    def get_or_create(self, key, make):
        with self.lock:
            table = self.by_key.get(key)
            if table is None:
                table = self.by_key[key] = make()
            return table

    def close(self):
        with self.lock:
            self.by_key.clear()


def session_tables(session_state):
    tables = session_state.resources.get(_KEY)
    if tables is None:
        with _create_lock:
            tables = session_state.resources.setdefault(_KEY, SessionTables())
    return tables


def create(session_state, container, name, key_dtype, value_dtype, make):
    """The handle of table `name` in this Session, made by `make()` on first use."""
    table = session_tables(session_state).get_or_create((container, name), make)
    if table.key_dtype != key_dtype or table.value_dtype != value_dtype:
        raise _invalid(f"Conflicting key/value dtypes {_tf_name(key_dtype)}->"
                       f"{_tf_name(value_dtype)} with {_tf_name(table.key_dtype)}-"
                       f"{_tf_name(table.value_dtype)} for table {name}")
    out = np.empty((), dtype=object)
    out[()] = TableHandle(table)
    return out


def resolve(handle):
    """The table a handle value names."""
    value = handle.item() if isinstance(handle, np.ndarray) else handle
    if isinstance(value, TableHandle):
        return value.table
    raise errors.NotFoundError(None, None, f"Resource {_fmt(value)} does not exist.")


# -- tables -----------------------------------------------------------------------------------
class LookupTable:
    """What every table checks (TF's LookupInterface)."""

    initializable = False

    def __init__(self, name, key_dtype, value_dtype, key_shape=(), value_shape=()):
        self.name = name
        self.key_dtype = _dtypes.as_dtype(key_dtype)
        self.value_dtype = _dtypes.as_dtype(value_dtype)
        self.key_shape = tuple(key_shape)
        self.value_shape = tuple(value_shape)
        self.lock = threading.RLock()

    def match_signature(self, have_in, have_out, want_in, want_out):
        if list(have_in) != list(want_in) or list(have_out) != list(want_out):
            names = lambda ds: ", ".join(_tf_name(d) for d in ds)  # noqa: E731
            raise _invalid(f"Signature mismatch, have: {names(have_in)}->{names(have_out)} "
                           f"expected: {names(want_in)}->{names(want_out)}")

    def _check_key_shape(self, shape):
        k = len(self.key_shape)
        if len(shape) < k or tuple(shape[len(shape) - k:]) != self.key_shape:
            raise _invalid(f"Input key shape {dims_str(shape)} must end with the table's key "
                           f"shape {dims_str(self.key_shape)}")

    def _check_key_and_values(self, keys, values):
        self._check_key_shape(keys.shape)
        expected = self.output_shape(keys.shape)
        if tuple(values.shape) != expected:
            raise _invalid(f"Expected shape {dims_str(expected)} for value, got "
                           f"{dims_str(values.shape)}")

    def check_find(self, keys, default_value):
        self._check_key_shape(keys.shape)
        if tuple(default_value.shape) != self.value_shape:
            raise _invalid(f"Expected shape {dims_str(self.value_shape)} for default value, "
                           f"got {dims_str(default_value.shape)}")

    def check_insert(self, keys, values):
        self._check_key_and_values(keys, values)

    def check_import(self, keys, values):
        self._check_key_and_values(keys, values)

    def check_remove(self, keys):
        self._check_key_shape(keys.shape)

    def output_shape(self, keys_shape):
        return tuple(keys_shape[:len(keys_shape) - len(self.key_shape)]) + self.value_shape

    def insert(self, keys, values):
        raise errors.UnimplementedError(
            None, None, "Insert not supported by InitializableLookupTable implementations")

    def remove(self, keys):
        raise errors.UnimplementedError(
            None, None, "Remove not supported by InitializableLookupTable implementations")


class HashTable(LookupTable):
    """TF's HashTable: immutable once initialized."""

    initializable = True

    def __init__(self, name, key_dtype, value_dtype):
        super().__init__(name, key_dtype, value_dtype)
        self._table = {}
        self.initialized = False

    def size(self):
        return len(self._table) if self.initialized else 0

    def initialize(self, entries, total_size):
        """Fills the table from `entries` ((key, value) Python pairs). Initializing again
        with as many entries is accepted (TF's AreEntriesSame compares sizes)."""
        with self.lock:
            if self.initialized:
                if total_size() == len(self._table):
                    return
                raise _precondition("Table was already initialized with different data.")
            table = {}
            for key, value in entries:
                previous = table.setdefault(key, value)
                if previous != value:
                    raise _precondition(
                        f"HashTable has different value for same key. Key {_fmt(key)} has "
                        f"{_fmt(previous)} and trying to add value {_fmt(value)}")
            self._table = table
            self.initialized = True

    def initialize_from_tensors(self, keys, values):
        self.check_insert(keys, values)
        keys_list = _py_list(keys, self.key_dtype)
        values_list = _py_list(values, self.value_dtype)
        self.initialize(zip(keys_list, values_list), lambda: len(keys_list))

    def import_values(self, keys, values):
        self.initialize_from_tensors(keys, values)

    def find(self, keys, default_value):
        if not self.initialized:
            raise _precondition("Table not initialized.")
        default = _py_list(default_value, self.value_dtype)[0]
        table = self._table
        found = [table.get(k, default) for k in _py_list(keys, self.key_dtype)]
        return _array(found, self.value_dtype, keys.shape)

    def export(self):
        if not self.initialized:
            raise errors.AbortedError(None, None, "HashTable is not initialized.")
        with self.lock:
            keys, values = list(self._table), list(self._table.values())
        return (_array(keys, self.key_dtype, (len(keys),)),
                _array(values, self.value_dtype, (len(values),)))


class MutableHashTable(LookupTable):
    """TF's MutableHashTableOfScalars, or MutableHashTableOfTensors with vector values."""

    def __init__(self, name, key_dtype, value_dtype, value_shape=()):
        super().__init__(name, key_dtype, value_dtype, value_shape=value_shape)
        self._table = {}

    def size(self):
        return len(self._table)

    def _values(self, values):
        if not self.value_shape:
            return _py_list(values, self.value_dtype)
        return list(np.asarray(values).reshape(-1, *self.value_shape))

    def find(self, keys, default_value):
        key_list = _py_list(keys, self.key_dtype)
        with self.lock:
            if not self.value_shape:
                default = _py_list(default_value, self.value_dtype)[0]
                found = [self._table.get(k, default) for k in key_list]
                return _array(found, self.value_dtype, keys.shape)
            rows = [self._table.get(k, default_value) for k in key_list]
        out = np.empty((len(rows),) + self.value_shape, dtype=self.value_dtype.as_numpy_dtype)
        for i, row in enumerate(rows):
            out[i] = row
        return out.reshape(self.output_shape(keys.shape))

    def insert(self, keys, values, clear=False):
        pairs = zip(_py_list(keys, self.key_dtype), self._values(values))
        with self.lock:
            if clear:
                self._table.clear()
            self._table.update(pairs)

    def import_values(self, keys, values):
        self.insert(keys, values, clear=True)

    def remove(self, keys):
        with self.lock:
            for key in _py_list(keys, self.key_dtype):
                self._table.pop(key, None)

    def export(self):
        with self.lock:
            keys, values = list(self._table), list(self._table.values())
        keys = _array(keys, self.key_dtype, (len(keys),))
        if not self.value_shape:
            return keys, _array(values, self.value_dtype, (len(values),))
        out = np.empty((len(values),) + self.value_shape, dtype=self.value_dtype.as_numpy_dtype)
        for i, row in enumerate(values):
            out[i] = row
        return keys, out


class MutableDenseHashTable(LookupTable):
    """TF's MutableDenseHashTable: buckets [num_buckets, key_size] / [.., value_size]."""

    def __init__(self, name, key_dtype, value_dtype, empty_key, deleted_key, value_shape,
                 initial_num_buckets, max_load_factor):
        empty_key, deleted_key = np.asarray(empty_key), np.asarray(deleted_key)
        super().__init__(name, key_dtype, value_dtype, empty_key.shape, value_shape)
        self.max_load_factor = np.float32(max_load_factor)
        if not 0 < self.max_load_factor < 1:
            raise _invalid(f"max_load_factor must be between 0 and 1, got: "
                           f"{_fmt(float(self.max_load_factor))}")
        if len(self.value_shape) > 1:
            raise _invalid(f"Empty value must be a scalar or a vector, got shape "
                           f"{dims_str(self.value_shape)}")
        if len(self.key_shape) > 1:
            raise _invalid(f"Empty key must be a scalar or a vector, got shape "
                           f"{dims_str(self.key_shape)}")
        if deleted_key.shape != empty_key.shape:
            raise _invalid(f"Empty and deleted keys must have same shape, got shapes: "
                           f"{dims_str(empty_key.shape)} and {dims_str(deleted_key.shape)}")
        self.key_size = int(np.prod(self.key_shape, dtype=np.int64))
        self.value_size = int(np.prod(self.value_shape, dtype=np.int64))
        self.empty_key = tuple(_py_list(empty_key, self.key_dtype))
        self.deleted_key = tuple(_py_list(deleted_key, self.key_dtype))
        if self.empty_key == self.deleted_key:
            raise _invalid("Empty and deleted keys cannot be equal")
        self._allocate(int(initial_num_buckets))

    # -- TF's helpers --------------------------------------------------------------------
    def _hash_scalar(self, key):
        if isinstance(key, bytes):
            return hashing.hash64(key)
        return int(key) & ((1 << 64) - 1)  # static_cast<uint64>

    def _hash(self, key):
        if self.key_size == 1:
            return self._hash_scalar(key[0])
        result = 0
        for part in key:
            result = hashing.hash64_combine(result, self._hash_scalar(part))
        return result

    def _allocate(self, num_buckets):
        if num_buckets < 4 or num_buckets & (num_buckets - 1):
            raise _invalid(f"Number of buckets must be at least 4 and a power of 2, got: "
                           f"{num_buckets}")
        self.num_buckets = num_buckets
        self.num_entries = 0
        self._keys = [self.empty_key] * num_buckets  # key rows as tuples
        self._values = np.zeros((num_buckets, self.value_size),
                                dtype=self.value_dtype.as_numpy_dtype)
        if self.value_dtype == _dtypes.string:
            self._values[...] = b""

    def _rows(self, keys):
        """Keys as tuples of key_size Python values, after TF's shape check."""
        batch = 1 if keys.ndim == 0 else keys.shape[0]
        if keys.size != batch * self.key_size:
            raise _invalid(f"Expected key shape {dims_str((batch,) + self.key_shape)} got "
                           f"{dims_str(keys.shape)}")
        flat = _py_list(keys, self.key_dtype)
        return [tuple(flat[i * self.key_size:(i + 1) * self.key_size]) for i in range(batch)]

    def _check_reserved(self, key):
        if key == self.empty_key:
            raise _invalid("Using the empty_key as a table key is not allowed")
        if key == self.deleted_key:
            raise _invalid("Using the deleted_key as a table key is not allowed")

    def _probe(self, key):
        """Bucket indices in TF's quadratic probing order."""
        mask = self.num_buckets - 1
        index = self._hash(key) & mask
        for probes in range(1, self.num_buckets + 1):
            yield index
            index = (index + probes) & mask

    # -- the table -------------------------------------------------------------------------
    def size(self):
        return self.num_entries

    def find(self, keys, default_value):
        rows = self._rows(keys)
        default = np.asarray(default_value).reshape(self.value_size)
        out = np.empty((len(rows), self.value_size), dtype=self.value_dtype.as_numpy_dtype)
        with self.lock:
            for i, key in enumerate(rows):
                self._check_reserved(key)
                for index in self._probe(key):
                    if self._keys[index] == key:
                        out[i] = self._values[index]
                        break
                    if self._keys[index] == self.empty_key:
                        out[i] = default
                        break
                else:
                    raise errors.InternalError(
                        None, None, "Internal error in MutableDenseHashTable lookup")
        return out.reshape(self.output_shape(keys.shape))

    def _do_insert(self, rows, values, ignore_reserved):
        for key, value in zip(rows, values):
            if key == self.empty_key or key == self.deleted_key:
                if ignore_reserved:
                    continue
                self._check_reserved(key)
            for index in self._probe(key):
                current = self._keys[index]
                if current == key:
                    self._values[index] = value
                    break
                if current == self.empty_key or current == self.deleted_key:
                    self.num_entries += 1
                    self._keys[index] = key
                    self._values[index] = value
                    break
            else:
                raise errors.InternalError(
                    None, None, "Internal error in MutableDenseHashTable insert")

    def insert(self, keys, values):
        rows = self._rows(keys)
        values = np.asarray(values).reshape(len(rows), self.value_size)
        with self.lock:
            # TF grows for as if every key were new, doubling until the load fits.
            pending = self.num_entries + len(rows)
            if pending > np.float32(self.num_buckets) * self.max_load_factor:
                new_size = self.num_buckets
                while True:
                    new_size <<= 1
                    if not pending > np.float32(new_size) * self.max_load_factor:
                        break
                old_keys, old_values = self._keys, self._values
                self._allocate(new_size)
                self._do_insert(old_keys, old_values, ignore_reserved=True)
            self._do_insert(rows, values, ignore_reserved=False)

    def remove(self, keys):
        rows = self._rows(keys)
        with self.lock:
            for key in rows:
                self._check_reserved(key)
                for index in self._probe(key):
                    if self._keys[index] == key:
                        self.num_entries -= 1
                        self._keys[index] = self.deleted_key
                        break
                    if self._keys[index] == self.empty_key:
                        break
                else:
                    raise errors.InternalError(
                        None, None, "Internal error in MutableDenseHashTable remove")

    def check_import(self, keys, values):
        self._check_key_shape(keys.shape)
        key_shape = self.key_shape or (1,)
        expected = tuple(keys.shape[:len(keys.shape) - len(key_shape)]) + (
            self.value_shape or (1,))
        if tuple(values.shape) != expected:
            raise _invalid(f"Expected shape {dims_str(expected)} for value, got "
                           f"{dims_str(values.shape)}")

    def import_values(self, keys, values):
        num = keys.shape[0]
        flat = _py_list(keys, self.key_dtype)
        rows = [tuple(flat[i * self.key_size:(i + 1) * self.key_size]) for i in range(num)]
        with self.lock:
            self.num_buckets = num
            self._keys = rows
            self._values = np.array(values, dtype=self.value_dtype.as_numpy_dtype).reshape(
                num, self.value_size)
            self.num_entries = sum(1 for k in rows
                                   if k != self.empty_key and k != self.deleted_key)

    def export(self):
        with self.lock:
            keys = [part for key in self._keys for part in key]
            values = self._values.copy()
        return _array(keys, self.key_dtype, (self.num_buckets, self.key_size)), values


# -- text files (TF's TextFileLineIterator) --------------------------------------------------
_INT = re.compile(rb"\s*-?[0-9]+\s*\Z")
_INT_RANGES = {"int32": (-(1 << 31), (1 << 31) - 1), "int64": (-(1 << 63), (1 << 63) - 1)}


def _lines(data):
    """Lines as TF's InputBuffer::ReadLine gives them: no '\\n', no trailing '\\r'; a last
    line without '\\n' only when it is not empty."""
    pos, end = 0, len(data)
    while pos < end:
        newline = data.find(b"\n", pos)
        last = newline < 0
        line = data[pos:] if last else data[pos:newline]
        pos = end if last else newline + 1
        if line.endswith(b"\r"):
            line = line[:-1]
        if last and not line:
            return
        yield line


def _parse(token, dtype, line_number):
    name = _tf_name(dtype)
    if dtype == _dtypes.string:
        return token
    if name in _INT_RANGES:
        low, high = _INT_RANGES[name]
        if _INT.match(token) and low <= int(token) <= high:
            return int(token)
    elif name in ("float", "double"):
        text = token.strip()
        if b"_" not in text:
            try:
                value = float(text)
            except ValueError:
                pass
            else:
                return float(np.float32(value)) if name == "float" else value
    else:
        raise _invalid(f"Data type {name} not supported.")
    raise _invalid(f"Field {_fmt(token)} in line {line_number} is not a valid {name}.")


def read_text_file(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        kind = errors.NotFoundError if isinstance(e, FileNotFoundError) else errors.UnknownError
        raise kind(None, None, f"{path}; {e.strerror or e}") from None


def text_file_entries(path, data, vocab_size, delimiter, key_index, value_index, key_dtype,
                      value_dtype):
    """(key, value) pairs of a vocabulary file, with TF's errors naming file and line."""
    split = max(key_index, value_index) >= 0
    columns = max(key_index, value_index) + 1
    line_number = 0
    for line in _lines(data):
        if vocab_size != -1 and line_number >= vocab_size:
            return  # TF truncates the file at vocab_size lines
        tokens = line.split(delimiter) if split else []
        if split and len(tokens) < columns:
            raise _invalid(f"Invalid number of columns in {path} line {line_number} "
                           f"({_fmt(line)}) : expected at least {columns} got {len(tokens)}")
        pair = []
        for index, dtype in ((key_index, key_dtype), (value_index, value_dtype)):
            if index == LINE_NUMBER:
                pair.append(line_number)
            else:
                pair.append(_parse(line if index == WHOLE_LINE else tokens[index], dtype,
                                   line_number))
        yield tuple(pair)
        line_number += 1
    if vocab_size != -1 and line_number != vocab_size:
        raise _invalid(f"Invalid vocab_size in {path}: expected {vocab_size} but got "
                       f"{line_number}")


def check_text_file_dtypes(table, key_index, value_index):
    key, value = table.key_dtype, table.value_dtype
    if key_index == LINE_NUMBER and key != _dtypes.int64:
        raise _invalid(f"Key index for line number requires table key dtype of int64, got "
                       f"{_tf_name(key)}")
    if key_index == WHOLE_LINE and not key.is_integer and key != _dtypes.string:
        raise _invalid(f"Key index for whole line requires string or integer table key, got "
                       f"{_tf_name(key)}")
    if value_index == LINE_NUMBER and value != _dtypes.int64:
        raise _invalid(f"Value index for line number requires table value dtype of int64, "
                       f"got {_tf_name(value)}")
    if value_index == WHOLE_LINE and value != _dtypes.string:
        raise _invalid(f"Value index for whole line requires table value dtype of string, "
                       f"got {_tf_name(value)}")
