"""tf.data.experimental's readers: CsvDataset and make_csv_dataset, SqlDataset,
parse_example_dataset and make_batched_features_dataset.

CsvDataset parses as TF's CSV kernel does (RFC 4180 with TF's rules: quoted fields
with doubled quotes, records ending at \\n, \\r or \\r\\n, an empty field taking the
column's default, na_value); a malformed record fails as that element, with TF's
message followed by the file and record, and reading goes on with the next record
(so ignore_errors skips it).
"""

from __future__ import annotations

import collections
import csv
import glob
import gzip
import re
import sqlite3
import zlib

import numpy as np

from tensorflux._src.data import structure as _structure
from tensorflux._src.data.dataset_ops import AUTOTUNE, Dataset, ElementError
from tensorflux._src.data.element_ops import IgnoreErrorsDataset
from tensorflux._src.data.readers import TFRecordDataset, _names
from tensorflux._src.data.sources import TensorSliceDataset
from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import errors
from tensorflux._src.framework.operation import Tensor
from tensorflux._src.framework.tensor_conversion import convert_to_tensor

_CSV_TYPES = (_dtypes.float32, _dtypes.float64, _dtypes.int32, _dtypes.int64, _dtypes.string)
_INT = re.compile(rb"\s*[+-]?\d+\s*\Z")
_FLOAT = re.compile(rb"\s*[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf|infinity|nan)\s*\Z",
                    re.IGNORECASE)


# -- the CSV record parser ----------------------------------------------------------------
class _Record:
    """One record's fields as parsed, with the first error met (TF reports the first and
    still consumes the whole record)."""

    def __init__(self):
        self.fields, self.error = [], None

    def fail(self, message):
        if self.error is None:
            self.error = message


def _parse_record(buf, pos, delim, use_quote):
    """(record, position after it). `pos` is the record's first byte (< len(buf))."""
    record, n = _Record(), len(buf)
    while True:
        if pos >= n:  # the previous field ended with the delimiter at the end of input
            record.fields.append(b"")
            return record, pos
        if use_quote and buf[pos] == 0x22:  # '"'
            i, parts, include = pos + 1, [], True
            while True:
                j = buf.find(b'"', i)
                if j < 0:
                    record.fail("Reached end of file without closing quoted field in record")
                    record.fields.append(b"")
                    return record, n
                parts.append(buf[i:j])
                if j + 1 >= n:
                    record.fields.append(b"".join(parts) if include else b"")
                    return record, n
                following = buf[j + 1]
                if following == 0x22:
                    parts.append(b'"')
                    i = j + 2
                    continue
                if following == delim:
                    record.fields.append(b"".join(parts) if include else b"")
                    pos = j + 2
                    break
                if following in (0x0A, 0x0D):
                    record.fields.append(b"".join(parts) if include else b"")
                    return record, _after_newline(buf, j + 1)
                record.fail("Quote inside a string has to be escaped by another quote")
                include = False
                parts.append(buf[j:j + 2])
                i = j + 2
            continue
        end = pos
        while end < n and buf[end] not in (delim, 0x0A, 0x0D):
            end += 1
        field = buf[pos:end]
        if use_quote and b'"' in field:
            record.fail("Unquoted fields cannot have quotes inside")
        record.fields.append(field)
        if end >= n:
            return record, n
        if buf[end] == delim:
            pos = end + 1
            continue
        return record, _after_newline(buf, end)


def _after_newline(buf, i):
    return i + 2 if buf[i] == 0x0D and i + 1 < len(buf) and buf[i + 1] == 0x0A else i + 1


def _convert(field, index, dtype, default, na_value):
    """One field as its column's value (TF's FieldToOutput)."""
    if field == b"" or field == na_value:
        if default.size != 1:
            raise ValueError(f"Field {index} is required but missing in record!")
        return default.reshape(())
    if dtype == _dtypes.string:
        return np.array(field, dtype=object)
    text = field.decode("latin-1")
    if dtype in (_dtypes.int32, _dtypes.int64):
        info = np.iinfo(dtype.as_numpy_dtype)
        if _INT.match(field) and info.min <= int(field) <= info.max:
            return np.asarray(int(field), dtype.as_numpy_dtype)
    elif _FLOAT.match(field):
        with np.errstate(over="ignore"):
            return np.asarray(float(field), dtype.as_numpy_dtype)
    kind = {"float32": "float", "float64": "double"}.get(dtype.name, dtype.name)
    raise ValueError(f"Field {index} in record is not a valid {kind}: {text}")


class CsvDataset(Dataset):
    """`tf.data.experimental.CsvDataset`: one element per CSV record, a tuple of scalars
    typed by `record_defaults` (a dtype or empty tensor: required; a one-element
    tensor: its default)."""

    def __init__(self, filenames, record_defaults, compression_type=None, buffer_size=None,
                 header=False, field_delim=",", use_quote_delim=True, na_value="",
                 select_cols=None, exclude_cols=None):
        defaults = []
        for value in record_defaults:
            if isinstance(value, _dtypes.DType) and value in _CSV_TYPES:
                value = np.zeros([0], _dtypes.as_dtype(value).as_numpy_dtype) \
                    if value != _dtypes.string else np.zeros([0], object)
            defaults.append(value if isinstance(value, Tensor) else
                            _structure.to_array(value))
        for i, value in enumerate(defaults):
            dtype = value.dtype if isinstance(value, Tensor) else _dtypes.as_dtype(value.dtype)
            if dtype.base_dtype not in _CSV_TYPES:
                raise TypeError(f"record_defaults[{i}]: the type {dtype.name} is not a CSV "
                                f"type (float32, float64, int32, int64 or string)")
        self._defaults = defaults
        types = [d.dtype.base_dtype if isinstance(d, Tensor) else _dtypes.as_dtype(d.dtype)
                 for d in defaults]
        self._types = types
        self._args = dict(filenames=filenames, compression_type=compression_type or "",
                          header=header, field_delim=field_delim,
                          use_quote_delim=use_quote_delim, na_value=na_value,
                          select_cols=[] if select_cols is None else select_cols,
                          exclude_cols=[] if exclude_cols is None else exclude_cols)
        self._tensor_args = tuple(self._args.values()) + tuple(defaults)
        self._structure = _structure.Structure.from_specs(
            tuple(None for _ in types), types, [[] for _ in types])

    def _settings(self, ctx):
        value = {k: ctx.value(v) for k, v in self._args.items()}
        delim = _bytes(value["field_delim"])
        if len(delim) != 1:
            raise errors.InvalidArgumentError(None, None, "field_delim should be only 1 char")
        compression = _bytes(value["compression_type"]).decode()
        if compression not in ("", "GZIP", "ZLIB"):
            raise errors.InvalidArgumentError(
                None, None, f"Unsupported compression_type: {compression}.")
        select = [int(c) for c in np.ravel(value["select_cols"])]
        exclude = [int(c) for c in np.ravel(value["exclude_cols"])]
        defaults = [np.asarray(ctx.value(d)) for d in self._defaults]
        for i, d in enumerate(defaults):
            if d.ndim > 1:
                raise errors.InvalidArgumentError(
                    None, None, "Each record default should be at most rank 1")
            if d.size > 1:
                raise errors.InvalidArgumentError(
                    None, None, f"There should only be 1 default per field but field {i} "
                    f"has {d.size}")
        if select and len(select) != len(defaults):
            raise errors.InvalidArgumentError(None, None, "select_cols should match output size")
        for cols, what in ((select, "select_cols"), (exclude, "exclude_cols")):
            if any(a >= b for a, b in zip(cols, cols[1:])):
                raise errors.InvalidArgumentError(
                    None, None, f"{what} should be strictly increasing indices")
            if cols and cols[0] < 0:
                raise errors.InvalidArgumentError(
                    None, None, f"{what} should be non-negative indices")
        if select and exclude:
            raise errors.InvalidArgumentError(
                None, None, "Either select_cols or exclude_cols should be empty")
        return dict(files=_names(value["filenames"]), compression=compression,
                    header=bool(value["header"]), delim=delim[0],
                    use_quote=bool(value["use_quote_delim"]), na=_bytes(value["na_value"]),
                    select=select, exclude=exclude, defaults=defaults)

    def _iterate(self, ctx):
        settings = self._settings(ctx)
        for path in settings["files"]:
            yield from self._file(path, settings)

    def _file(self, path, s):
        buf = _read(path, s["compression"])
        pos, number, line = 0, 0, 1
        if s["header"]:
            if not buf:
                raise errors.InvalidArgumentError(None, None, "Can't read header of file")
            record, end = _parse_record(buf, 0, s["delim"], s["use_quote"])
            if record.error:
                raise errors.InvalidArgumentError(None, None, "Can't read header of file")
            line += buf.count(b"\n", 0, end)
            pos = end
        while pos < len(buf):
            record, end = _parse_record(buf, pos, s["delim"], s["use_quote"])
            where = f" (file {path}, record {number}, line {line})"
            line += buf.count(b"\n", pos, end)
            pos, number = end, number + 1
            try:
                yield self._element(record, s)
            except ValueError as exc:
                yield ElementError(errors.InvalidArgumentError(None, None, str(exc) + where))

    def _element(self, record, s):
        if record.error:
            raise ValueError(record.error)
        values, n = [], len(self._types)
        select, exclude = s["select"], set(s["exclude"])
        for index, field in enumerate(record.fields):
            if select:
                if index not in select:
                    continue
            elif index in exclude:
                continue
            out = len(values)
            if out >= n:
                raise ValueError(f"Expect {n} fields but have more in record")
            values.append(_convert(field, out, self._types[out], s["defaults"][out], s["na"]))
        if len(values) != n:
            raise ValueError(f"Expect {n} fields but have {len(values)} in record")
        return tuple(values)


def _bytes(value):
    value = np.asarray(value).item() if not isinstance(value, (str, bytes)) else value
    return value.encode() if isinstance(value, str) else bytes(value)


def _read(path, compression):
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise errors.NotFoundError(None, None, f"{path}; No such file or directory") from None
    if compression == "GZIP":
        return gzip.decompress(data)
    if compression == "ZLIB":
        return zlib.decompress(data)
    return data


# -- make_csv_dataset ---------------------------------------------------------------------
def _file_names(file_pattern):
    patterns = file_pattern if isinstance(file_pattern, list) else [file_pattern]
    if isinstance(file_pattern, list) and not file_pattern:
        raise ValueError("File pattern is empty.")
    names = [name for pattern in patterns for name in glob.glob(pattern)]
    if not names:
        raise ValueError(f"No files match {file_pattern}.")
    return sorted(names)


def _opener(compression_type):
    if compression_type is None or compression_type == "":
        return lambda name: open(name, newline="")
    if compression_type == "GZIP":
        return lambda name: gzip.open(name, "rt", newline="")
    if compression_type == "ZLIB":
        raise ValueError(f"compression_type ({compression_type}) is not supported for "
                         f"probing columns")
    raise ValueError(f"compression_type ({compression_type}) is not supported")


def _csv_rows(filenames, field_delim, use_quote_delim, header, opener):
    for name in filenames:
        with opener(name) as f:
            reader = csv.reader(f, delimiter=field_delim, quoting=csv.QUOTE_MINIMAL
                                if use_quote_delim else csv.QUOTE_NONE)
            if header:
                next(reader, None)
            yield from reader


def _infer_type(text, na_value, previous):
    """TF's inference: the least permissive of int32, int64, float32, float64, string
    that fits this value and every earlier one of the column."""
    if text in ("", na_value):
        return previous
    order = [_dtypes.int32, _dtypes.int64, _dtypes.float32, _dtypes.float64, _dtypes.string]

    def fits(dtype):
        try:
            if dtype in (_dtypes.int32, _dtypes.int64):
                value = int(np.int64(text))
                info = np.iinfo(dtype.as_numpy_dtype)
                return info.min <= value <= info.max
            if dtype in (_dtypes.float32, _dtypes.float64):
                with np.errstate(over="ignore"):
                    return bool(dtype.as_numpy_dtype(text) < np.inf)
        except (ValueError, OverflowError):
            return False
        return True

    for i, dtype in enumerate(order):
        if fits(dtype) and (previous is None or previous in order[:i + 1]):
            return dtype
    return _dtypes.string


def _infer_defaults(filenames, num_cols, field_delim, use_quote_delim, na_value, header,
                    num_rows, select_columns, opener):
    columns = range(num_cols) if select_columns is None else select_columns
    types = [None] * len(columns)
    for i, row in enumerate(_csv_rows(filenames, field_delim, use_quote_delim, header,
                                      opener)):
        if num_rows is not None and i >= num_rows:
            break
        if len(row) != num_cols:
            raise ValueError("Problem inferring types: CSV row has different number of "
                             "fields than expected.")
        for j, column in enumerate(columns):
            types[j] = _infer_type(row[column], na_value, types[j])
    types = [t or _dtypes.string for t in types]
    return [np.array([b""], object) if t == _dtypes.string else
            np.zeros([1], t.as_numpy_dtype) for t in types]


def _column_names(filenames, field_delim, use_quote_delim, opener):
    def first_row(name):
        with opener(name) as f:
            row = next(csv.reader(f, delimiter=field_delim, quoting=csv.QUOTE_MINIMAL
                                  if use_quote_delim else csv.QUOTE_NONE), None)
        if row is None:
            raise ValueError(f"Received StopIteration when reading the header line of "
                             f"{filenames[0]}.  Empty file?")
        return row

    names = first_row(filenames[0])
    for name in filenames[1:]:
        if first_row(name) != names:
            raise ValueError("Files have different column names in the header row.")
    return names


def _sorted_column_indices(select_columns, column_names):
    positions = {n: i for i, n in enumerate(column_names)}
    out = []
    for v in select_columns:
        if isinstance(v, int):
            if v < 0 or v >= len(column_names):
                raise ValueError(f"Column index {v} specified in select_columns out of valid "
                                 f"range.")
            out.append(v)
        elif v not in positions:
            raise ValueError(f"Value '{v}' specified in select_columns not a valid column "
                             f"index or name.")
        else:
            out.append(positions[v])
    result = sorted(set(out))
    if len(result) != len(select_columns):
        raise ValueError("select_columns contains duplicate columns")
    return result


def _shuffle_and_repeat(dataset, num_epochs, shuffle, buffer_size, seed):
    if shuffle:
        dataset = dataset.shuffle(buffer_size, seed)
    if num_epochs != 1:
        dataset = dataset.repeat(num_epochs)
    return dataset


def make_csv_dataset(file_pattern, batch_size, column_names=None, column_defaults=None,
                     label_name=None, select_columns=None, field_delim=",",
                     use_quote_delim=True, na_value="", header=True, num_epochs=None,
                     shuffle=True, shuffle_buffer_size=10000, shuffle_seed=None,
                     prefetch_buffer_size=None, num_parallel_reads=None, sloppy=False,
                     num_rows_for_inference=100, compression_type=None, ignore_errors=False):
    """Batches of (features dict, label) from CSV files, as TF builds them: column
    names from the header, types inferred from the first rows when not given."""
    num_parallel_reads = 1 if num_parallel_reads is None else num_parallel_reads
    prefetch_buffer_size = AUTOTUNE if prefetch_buffer_size is None else prefetch_buffer_size
    filenames = _file_names(file_pattern)
    dataset = TensorSliceDataset(np.array([n.encode() for n in filenames], object))
    if shuffle:
        dataset = dataset.shuffle(len(filenames), shuffle_seed)
    opener = None
    if column_names is None or column_defaults is None:
        opener = _opener(compression_type)
    if column_names is None:
        if not header:
            raise ValueError("Cannot infer column names without a header line.")
        column_names = _column_names(filenames, field_delim, use_quote_delim, opener)
    if len(column_names) != len(set(column_names)):
        raise ValueError("Cannot have duplicate column names.")
    if select_columns is not None:
        select_columns = _sorted_column_indices(select_columns, column_names)
    if column_defaults is None:
        column_defaults = _infer_defaults(filenames, len(column_names), field_delim,
                                          use_quote_delim, na_value, header,
                                          num_rows_for_inference, select_columns, opener)
    if select_columns is not None and len(column_defaults) != len(select_columns):
        raise ValueError("If specified, column_defaults and select_columns must have same "
                         "length.")
    if select_columns is not None and len(column_names) > len(select_columns):
        column_names = [column_names[i] for i in select_columns]
    if label_name is not None and label_name not in column_names:
        raise ValueError("`label_name` provided must be one of the columns.")

    def filename_to_dataset(filename):
        ds = CsvDataset(filename, record_defaults=column_defaults, field_delim=field_delim,
                        use_quote_delim=use_quote_delim, na_value=na_value,
                        select_cols=select_columns, header=header,
                        compression_type=compression_type)
        return IgnoreErrorsDataset(ds) if ignore_errors else ds

    def map_fn(*columns):
        features = collections.OrderedDict(zip(column_names, columns))
        if label_name is not None:
            label = features.pop(label_name)
            return features, label
        return features

    cycle = 2 if num_parallel_reads == AUTOTUNE else num_parallel_reads
    dataset = dataset.interleave(filename_to_dataset, cycle_length=cycle)
    dataset = _shuffle_and_repeat(dataset, num_epochs, shuffle, shuffle_buffer_size,
                                  shuffle_seed)
    dataset = dataset.batch(batch_size, drop_remainder=num_epochs is None)
    dataset = dataset.map(map_fn)
    return dataset.prefetch(prefetch_buffer_size)


# -- SqlDataset ---------------------------------------------------------------------------
_SQL_TYPES = (_dtypes.string, _dtypes.int8, _dtypes.int16, _dtypes.int32, _dtypes.int64,
              _dtypes.uint8, _dtypes.uint16, _dtypes.bool, _dtypes.float64)


class SqlDataset(Dataset):
    """`tf.data.experimental.SqlDataset(driver_name, data_source_name, query,
    output_types)`: the rows of a SQLite query (Python's sqlite3), one scalar per
    column."""

    def __init__(self, driver_name, data_source_name, query, output_types):
        self._driver = convert_to_tensor(driver_name, _dtypes.string, name="driver_name")
        self._source = convert_to_tensor(data_source_name, _dtypes.string,
                                         name="data_source_name")
        self._query = convert_to_tensor(query, _dtypes.string, name="query")
        self._tensor_args = (self._driver, self._source, self._query)
        types = [_dtypes.as_dtype(t) for t in _structure.flatten(output_types)]
        self._types = types
        self._structure = _structure.Structure.from_specs(output_types, types,
                                                          [[] for _ in types])

    def _iterate(self, ctx):
        driver = _bytes(ctx.value(self._driver)).decode()
        if any(t not in _SQL_TYPES for t in self._types):
            raise errors.InvalidArgumentError(
                None, None, "Each element of `output_types_` must be one of: DT_STRING, "
                "DT_INT8, DT_INT16, DT_INT32, DT_INT64, DT_UINT8, DT_UINT16, DT_BOOL, "
                "DT_DOUBLE ")
        if driver != "sqlite":
            raise errors.InvalidArgumentError(
                None, None, f"The database type, {driver}, is not supported by SqlDataset. "
                f"The set of supported databases is: {{'sqlite'}}.")
        source = _bytes(ctx.value(self._source)).decode()
        query = _bytes(ctx.value(self._query)).decode()
        try:
            connection = sqlite3.connect(f"file:{source}?mode=ro", uri=True)
        except sqlite3.Error as exc:
            raise errors.UnknownError(None, None, f"Failed to open database {source}: "
                                                  f"{exc}") from None
        try:
            try:
                cursor = connection.execute(query)
            except sqlite3.Error as exc:
                raise errors.UnknownError(None, None, f"{exc} in query: {query}") from None
            count = len(cursor.description or ())
            if count != len(self._types):
                raise errors.InvalidArgumentError(
                    None, None, f"The number of columns in query ({count}) must match the "
                    f"number of elements in output_types ({len(self._types)}).")
            for row in cursor:
                yield tuple(_sql_value(v, t) for v, t in zip(row, self._types))
        finally:
            connection.close()


def _sql_value(value, dtype):
    """A column value as SQLite's C API converts it (NULL: 0 or b"")."""
    if dtype == _dtypes.string:
        if value is None:
            value = b""
        elif not isinstance(value, bytes):
            value = str(value).encode()
        return np.array(value, dtype=object)
    if dtype == _dtypes.float64:
        return np.float64(0.0 if value is None else float(value))
    number = 0 if value is None else int(float(value)) if isinstance(value, (str, float)) \
        else int(value)
    if dtype == _dtypes.bool:
        return np.bool_(number != 0)
    return np.asarray(number).astype(dtype.as_numpy_dtype)


# -- Example protos -------------------------------------------------------------------
def parse_example_dataset(features, num_parallel_calls=1, deterministic=None):
    """A transformation: batches of serialized Examples into dicts of Tensors and
    SparseTensors (tf.io.parse_example over each element)."""
    from tensorflux._src.ops.strings import parsing_ops
    if features is None:
        raise ValueError("Argument `features` is required, but not specified.")

    def apply(dataset):
        specs = dataset._structure.specs
        if len(specs) != 1 or not isinstance(specs[0], _structure.TensorSpec) or \
                specs[0].dtype != _dtypes.string or \
                not specs[0].shape.is_compatible_with([None]):
            raise TypeError("Input dataset should be a dataset of vectors of strings")
        return dataset.map(lambda serialized: parsing_ops.parse_example(serialized, features),
                           num_parallel_calls)

    return apply


def make_batched_features_dataset(file_pattern, batch_size, features, reader=None,
                                  label_key=None, reader_args=None, num_epochs=None,
                                  shuffle=True, shuffle_buffer_size=10000, shuffle_seed=None,
                                  prefetch_buffer_size=None, reader_num_threads=None,
                                  parser_num_threads=None, sloppy_ordering=False,
                                  drop_final_batch=False):
    """Batches of feature dicts (or (features, label)) parsed from Example records."""
    from tensorflux._src.data.readers import list_files
    reader = TFRecordDataset if reader is None else reader
    reader_num_threads = 1 if reader_num_threads is None else reader_num_threads
    parser_num_threads = 2 if parser_num_threads is None else parser_num_threads
    prefetch_buffer_size = AUTOTUNE if prefetch_buffer_size is None else prefetch_buffer_size
    dataset = list_files(file_pattern, shuffle=shuffle, seed=shuffle_seed)
    if isinstance(reader, type) and not issubclass(reader, Dataset):
        raise TypeError("The `reader` argument must return a `Dataset` object. "
                        "`tf.ReaderBase` subclasses are not supported. For example, pass "
                        "`tf.data.TFRecordDataset` instead of `tf.TFRecordReader`.")
    reader_args = [] if reader_args is None else reader_args
    cycle = 2 if reader_num_threads == AUTOTUNE else reader_num_threads
    dataset = dataset.interleave(lambda filename: reader(filename, *reader_args),
                                 cycle_length=cycle)
    if dataset.output_types == (_dtypes.string, _dtypes.string):
        dataset = dataset.map(lambda _, v: v)
    dataset = _shuffle_and_repeat(dataset, num_epochs, shuffle, shuffle_buffer_size,
                                  shuffle_seed)
    dataset = dataset.batch(batch_size, drop_remainder=drop_final_batch or num_epochs is None)
    dataset = dataset.apply(parse_example_dataset(features, parser_num_threads))
    if label_key:
        if label_key not in features:
            raise ValueError(f"The `label_key` provided ({label_key!r}) must be one of the "
                             f"`features` keys.")
        dataset = dataset.map(lambda x: (x, x.pop(label_key)))
    return dataset.prefetch(prefetch_buffer_size)
