"""TF1's readers (`tf.WholeFileReader`, `tf.TextLineReader`, `tf.FixedLengthRecordReader`,
`tf.TFRecordReader`, `tf.IdentityReader`, `tf.LMDBReader`) and `tf.read_file` / `tf.write_file`.

A reader is a resource of the Session (like a queue, queues/queue_ops.py). `read(queue)`
returns the next (key, value) record; when the current file is used up, the reader
dequeues the next filename (a *work unit*) from the queue, blocking as a dequeue does,
and a closed, empty queue ends the input with its OutOfRangeError. Keys are TF's:

    WholeFileReader         filename                      value: the file's bytes
    TextLineReader          filename:line (1-based)       value: the line, without \\n
    FixedLengthRecordReader filename:record index (0-based)
    TFRecordReader          filename:byte offset of the record
    IdentityReader          the work unit                 value: the work unit
    LMDBReader              the LMDB key (in key order)   value: its value

Readers hold a lock, so several threads may read one reader; each record goes to one.
"""

from __future__ import annotations

import os
import threading
import zlib

import numpy as np

from tensorflux._src.framework import errors
from tensorflux._src.framework.operation import Tensor
from tensorflux._src.framework.tensor_shape import TensorShape
from tensorflux._src.io import tfrecord
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.registry import OpDef, register
from tensorflux._src.queues import queue_ops

__all__ = ["ReaderBase", "WholeFileReader", "TextLineReader", "FixedLengthRecordReader",
           "TFRecordReader", "IdentityReader", "LMDBReader", "read_file", "write_file"]


def _text(value):
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


def _open(path):
    try:
        return open(path, "rb")  # noqa: SIM115 - callers close it
    except OSError as e:
        kind = errors.NotFoundError if isinstance(e, FileNotFoundError) else errors.UnknownError
        raise kind(None, None, f"{path}; {e.strerror or e}") from None


def _read_all(path):
    with _open(path) as f:
        return f.read()


# -- record sources: one generator of (key, value) per work unit -----------------------------
def _whole_file(work, attrs):
    yield work, _read_all(_text(work))


def _identity(work, attrs):
    yield work, work


def _text_lines(work, attrs):
    data, number = _read_all(_text(work)), 0
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()  # text after the last newline is a line only when not empty
    for line in lines:
        number += 1
        if number <= attrs["skip_header_lines"]:
            continue
        yield work + b":" + str(number).encode(), line[:-1] if line.endswith(b"\r") else line


def _decompressed(data, encoding, path):
    """The file's bytes, inflated for FixedLengthRecordReader's ZLIB / GZIP encoding (the
    header, records and footer are counted in the uncompressed stream, as TF's reader
    reads them through a ZlibInputStream)."""
    if not encoding:
        return data
    try:
        return zlib.decompressobj(15 + 16 if encoding == "GZIP" else 15).decompress(data)
    except zlib.error as e:
        raise errors.DataLossError(None, None, f"{path}: {e}") from None


def _fixed_length(work, attrs):
    data = _decompressed(_read_all(_text(work)), attrs["encoding"], _text(work))
    header, footer = attrs["header_bytes"], attrs["footer_bytes"]
    size, hop = attrs["record_bytes"], attrs["hop_bytes"] or attrs["record_bytes"]
    body = data[header:len(data) - footer if footer else len(data)]
    index, start = 0, 0
    while start + size <= len(body):
        yield work + b":" + str(index).encode(), body[start:start + size]
        index, start = index + 1, start + hop


def _tfrecords(work, attrs):
    offset = 0
    for record in tfrecord.iter_records(_text(work), attrs["compression_type"]):
        yield work + b":" + str(offset).encode(), record
        offset += 16 + len(record)  # length (8) + its CRC (4) + data + data CRC (4)


def _lmdb_records(work, attrs):
    """The (key, value) pairs of an LMDB environment's main database, in key order (a
    directory holding data.mdb, or the data file itself, as TF's reader opens them with
    MDB_NOSUBDIR for a regular file). TF's kernel CHECK-fails (aborts the process) on a
    missing or invalid database; here those are NotFoundError / DataLossError."""
    path = _text(work)
    try:
        import lmdb  # noqa: PLC0415 - optional dependency, loaded by the first LMDB read
    except ImportError:
        raise errors.UnimplementedError(
            None, None, "LMDBReader needs the lmdb package, an optional dependency: pip "
                        "install 'tensorflux[lmdb]' (or lmdb)") from None
    if not os.path.exists(path):
        raise errors.NotFoundError(None, None, f"{path}: No such file or directory")
    try:
        # lock=False: read-only, and no lock file is written next to the data.
        env = lmdb.open(path, subdir=not os.path.isfile(path), readonly=True, lock=False,
                        create=False)
    except lmdb.Error as e:
        raise errors.DataLossError(None, None, f"{path}: {e}") from None
    try:
        with env.begin(buffers=False) as txn:
            for key, value in txn.cursor():
                yield bytes(key), bytes(value)
    finally:
        env.close()


class Reader:
    """One reader's state in a Session: the records of the current work unit."""

    def __init__(self, name, source, attrs):
        self.name, self._source, self._attrs = name, source, attrs
        self._lock = threading.Lock()
        self._records = None  # generator over the current work unit, or None
        self.produced = 0
        self.completed = 0

    def _next_work(self, queue):
        work = queue.dequeue()[0]
        work = work.item() if isinstance(work, np.ndarray) else work
        return work if isinstance(work, bytes) else str(work).encode()

    def read(self, queue, limit):
        """Up to `limit` records (at least one) from one work unit."""
        with self._lock:
            while True:
                if self._records is None:
                    self._records = self._source(self._next_work(queue), self._attrs)
                out = []
                for key, value in self._records:
                    out.append((key, value))
                    if len(out) == limit:
                        break
                else:
                    self._records = None
                    self.completed += 1
                if out:
                    self.produced += len(out)
                    return out

    def reset(self):
        with self._lock:
            self._records, self.produced, self.completed = None, 0, 0


def _create(source, shared_name, node_name, session_state, **attrs):
    key = queue_ops.resource_key(shared_name, node_name)
    queue_ops.session_resources(session_state).get_or_create(
        key, node_name, shared_name, lambda name: Reader(name, source, attrs))
    return queue_ops.handle_value(key)


# A kernel's keyword parameters say which attrs it receives (registry.py).
def _whole_file_reader(*, shared_name, node_name, session_state):
    return _create(_whole_file, shared_name, node_name, session_state)


def _identity_reader(*, shared_name, node_name, session_state):
    return _create(_identity, shared_name, node_name, session_state)


def _text_line_reader(*, skip_header_lines, shared_name, node_name, session_state):
    return _create(_text_lines, shared_name, node_name, session_state,
                   skip_header_lines=skip_header_lines)


def _fixed_length_reader(*, header_bytes, record_bytes, footer_bytes, hop_bytes, encoding,
                         shared_name, node_name, session_state):
    return _create(_fixed_length, shared_name, node_name, session_state,
                   header_bytes=header_bytes, record_bytes=record_bytes,
                   footer_bytes=footer_bytes, hop_bytes=hop_bytes, encoding=encoding)


def _lmdb_reader(*, shared_name, node_name, session_state):
    return _create(_lmdb_records, shared_name, node_name, session_state)


def _tfrecord_reader(*, compression_type, shared_name, node_name, session_state):
    return _create(_tfrecords, shared_name, node_name, session_state,
                   compression_type=compression_type)


_READER_ATTRS = {"container": "", "shared_name": "", "node_name": ""}
for _type, _kernel, _extra in (
        ("WholeFileReaderV2", _whole_file_reader, {}),
        ("IdentityReaderV2", _identity_reader, {}),
        ("TextLineReaderV2", _text_line_reader, {"skip_header_lines": 0}),
        ("FixedLengthRecordReaderV2", _fixed_length_reader,
         {"header_bytes": 0, "record_bytes": 0, "footer_bytes": 0, "hop_bytes": 0,
          "encoding": ""}),
        ("TFRecordReaderV2", _tfrecord_reader, {"compression_type": ""}),
        # TF's LMDBReader outputs a Ref(string) handle; here a resource, like the V2 ops.
        ("LMDBReader", _lmdb_reader, {})):
    register(OpDef(_type, outputs=("reader_handle: resource",),
                   attrs={**_READER_ATTRS, **_extra}, shape=lambda op: TensorShape([]),
                   host=_kernel, uses_session=True, not_differentiable=True))


def _reader_read(reader_handle, queue_handle, *, session_state):
    reader = queue_ops.lookup(reader_handle, session_state)
    queue = queue_ops.lookup(queue_handle, session_state)
    ((key, value),) = reader.read(queue, 1)
    return np.array(key, dtype=object), np.array(value, dtype=object)


def _reader_read_up_to(reader_handle, queue_handle, num_records, *, session_state):
    n = int(num_records)
    if n <= 0:
        raise errors.InvalidArgumentError(
            None, None, f"num_records must be greater than 0, but got {n}")
    reader = queue_ops.lookup(reader_handle, session_state)
    records = reader.read(queue_ops.lookup(queue_handle, session_state), n)
    keys = np.empty(len(records), dtype=object)
    values = np.empty(len(records), dtype=object)
    for i, (k, v) in enumerate(records):
        keys[i], values[i] = k, v
    return keys, values


def _counter(attribute):
    def kernel(reader_handle, *, session_state):
        return np.int64(getattr(queue_ops.lookup(reader_handle, session_state), attribute))
    return kernel


def _reset(reader_handle, *, session_state):
    queue_ops.lookup(reader_handle, session_state).reset()
    return ()


_SESSION = dict(uses_session=True, not_differentiable=True)
register(OpDef("ReaderReadV2", inputs=("reader_handle: resource", "queue_handle: resource"),
               outputs=("key: string", "value: string"),
               shape=lambda op: [TensorShape([]), TensorShape([])], host=_reader_read,
               **_SESSION))
register(OpDef("ReaderReadUpToV2",
               inputs=("reader_handle: resource", "queue_handle: resource",
                       "num_records: int64"),
               outputs=("keys: string", "values: string"),
               shape=lambda op: [TensorShape([None]), TensorShape([None])],
               host=_reader_read_up_to, **_SESSION))
register(OpDef("ReaderNumRecordsProducedV2", inputs=("reader_handle: resource",),
               outputs=("records_produced: int64",), shape=lambda op: TensorShape([]),
               host=_counter("produced"), **_SESSION))
register(OpDef("ReaderNumWorkUnitsCompletedV2", inputs=("reader_handle: resource",),
               outputs=("units_completed: int64",), shape=lambda op: TensorShape([]),
               host=_counter("completed"), **_SESSION))
register(OpDef("ReaderResetV2", inputs=("reader_handle: resource",), outputs=(),
               host=_reset, **_SESSION))


class ReaderBase:
    """`read`, `read_up_to`, `num_records_produced`, `num_work_units_completed`, `reset`."""

    def __init__(self, reader_ref, supports_serialize=False):
        self._reader_ref = reader_ref
        self._supports_serialize = supports_serialize

    @property
    def reader_ref(self):
        return self._reader_ref

    @property
    def supports_serialize(self):
        return self._supports_serialize

    @staticmethod
    def _queue_ref(queue):
        return queue if isinstance(queue, Tensor) else queue.queue_ref

    def read(self, queue, name=None):
        """(key, value): the next record; dequeues a filename from `queue` when needed."""
        return tuple(apply_op("ReaderReadV2", name=name or "ReaderReadV2",
                              reader_handle=self._reader_ref,
                              queue_handle=self._queue_ref(queue)))

    def read_up_to(self, queue, num_records, name=None):
        """(keys, values): up to `num_records` records, all from one file."""
        return tuple(apply_op("ReaderReadUpToV2", name=name or "ReaderReadUpToV2",
                              reader_handle=self._reader_ref,
                              queue_handle=self._queue_ref(queue), num_records=num_records))

    def num_records_produced(self, name=None):
        return apply_op("ReaderNumRecordsProducedV2",
                        name=name or "ReaderNumRecordsProducedV2",
                        reader_handle=self._reader_ref)

    def num_work_units_completed(self, name=None):
        return apply_op("ReaderNumWorkUnitsCompletedV2",
                        name=name or "ReaderNumWorkUnitsCompletedV2",
                        reader_handle=self._reader_ref)

    def reset(self, name=None):
        return apply_op("ReaderResetV2", name=name or "ReaderResetV2",
                        reader_handle=self._reader_ref)

    def serialize_state(self, name=None):
        raise errors.UnimplementedError(None, None, "Reader state serialization is not "
                                        "supported by tensorflux's readers.")

    def restore_state(self, state, name=None):
        raise errors.UnimplementedError(None, None, "Reader state serialization is not "
                                        "supported by tensorflux's readers.")


def _make_reader(op_type, name, shared_name, **attrs):
    ref = apply_op(op_type, name=name or op_type, shared_name=shared_name or "", **attrs)
    ref.op._attrs["node_name"] = ref.op.name  # the resource's default name
    return ref


class WholeFileReader(ReaderBase):
    """Each file is one record: key the filename, value its contents."""

    def __init__(self, name=None):
        super().__init__(_make_reader("WholeFileReaderV2", name, None), True)


class IdentityReader(ReaderBase):
    """Each work unit is one record: key and value are the work unit itself."""

    def __init__(self, name=None):
        super().__init__(_make_reader("IdentityReaderV2", name, None), True)


class TextLineReader(ReaderBase):
    """Lines of text files, without their newline; `skip_header_lines` per file."""

    def __init__(self, skip_header_lines=None, name=None):
        super().__init__(_make_reader("TextLineReaderV2", name, None,
                                      skip_header_lines=int(skip_header_lines or 0)))


class FixedLengthRecordReader(ReaderBase):
    """Records of `record_bytes` bytes between a header and a footer of fixed sizes;
    `encoding` "ZLIB" or "GZIP" reads compressed files."""

    def __init__(self, record_bytes, header_bytes=None, footer_bytes=None, hop_bytes=None,
                 name=None, encoding=None):
        encoding = encoding or ""
        if encoding not in ("", "ZLIB", "GZIP"):
            raise ValueError(f"encoding must be '', 'ZLIB' or 'GZIP', got {encoding!r}")
        super().__init__(_make_reader(
            "FixedLengthRecordReaderV2", name, None, record_bytes=int(record_bytes),
            header_bytes=int(header_bytes or 0), footer_bytes=int(footer_bytes or 0),
            hop_bytes=int(hop_bytes or 0), encoding=encoding))


class TFRecordReader(ReaderBase):
    """Records of TFRecord files (optionally GZIP or ZLIB compressed, via `options`)."""

    def __init__(self, name=None, options=None):
        compression = tfrecord.TFRecordOptions.get_compression_type_string(options)
        super().__init__(_make_reader("TFRecordReaderV2", name, None,
                                      compression_type=compression))


class LMDBReader(ReaderBase):
    """Records of LMDB databases: each key and value of a file's main database, in key
    order (needs the optional `lmdb` package)."""

    def __init__(self, name=None, options=None):
        del options  # TF 1.15 accepts and ignores it too
        super().__init__(_make_reader("LMDBReader", name, None), True)


# -- ReadFile / WriteFile --------------------------------------------------------------------
def _read_file_kernel(filename):
    return np.array(_read_all(_text(filename.item())), dtype=object)


def _write_file_kernel(filename, contents):
    path = _text(filename.item())
    directory = os.path.dirname(path)
    if directory:
        os.makedirs(directory, exist_ok=True)
    with open(path, "wb") as f:
        f.write(contents.item())
    return ()


register(OpDef("ReadFile", inputs=("filename: string",), outputs=("contents: string",),
               shape=lambda op: TensorShape([]), host=_read_file_kernel, stateful=True,
               not_differentiable=True))
register(OpDef("WriteFile", inputs=("filename: string", "contents: string"), outputs=(),
               host=_write_file_kernel, stateful=True, not_differentiable=True))


def read_file(filename, name=None):
    """A string scalar: the contents of the file `filename` names."""
    return apply_op("ReadFile", name=name or "ReadFile", filename=filename)


def write_file(filename, contents, name=None):
    """An op writing `contents` to the file `filename` (creating directories)."""
    return apply_op("WriteFile", name=name or "WriteFile", filename=filename,
                    contents=contents)

