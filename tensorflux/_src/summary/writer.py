"""`tf.summary.FileWriter`: writes `Event` protocol buffers to a TensorBoard event file.

An event file is a TFRecord file of serialized `Event`s named
`<logdir>/events.out.tfevents.<seconds>.<hostname><filename_suffix>`, whose first event
carries `file_version: "brain.Event:2"` (TF's EventsWriter). Each `add_*` call wraps
its payload in an Event stamped with the wall time and, if given, the global step.

TF1 writes from a background thread fed by a queue of `max_queue` events; here events
are framed and written to the file's buffer by the caller (there is no queue to fill,
so `max_queue` has nothing to bound). As in TF, the buffer is flushed on the first
event after `flush_secs` have passed since the last flush, and on `flush()`/`close()`.
The file streams to its final name (TensorBoard reads event files while they grow);
`close()` syncs it to disk.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import warnings

from tensorflux._src.framework import graph as _graph
from tensorflux._src.io import graph_def as _graph_def
from tensorflux._src.framework import protos
from tensorflux._src.io.tfrecord import TFRecordWriter

__all__ = ["FileWriter", "FileWriterCache"]

_log = logging.getLogger("tensorflux")
FILE_VERSION = "brain.Event:2"


def _event_file_path(logdir: str, suffix: str) -> str:
    """TF's `events.out.tfevents.%010d.<hostname><suffix>`. Two writers opened in the
    same second would get the same name (TF1 then truncates the first file); the second
    gets `.1`, `.2`, ... before the suffix instead, which TensorBoard reads the same."""
    stem = os.path.join(logdir, f"events.out.tfevents.{int(time.time()):010d}."
                                f"{socket.gethostname()}")
    path, count = stem + suffix, 0
    while os.path.exists(path):
        count += 1
        path = f"{stem}.{count}{suffix}"
    return path


class EventFileWriter:
    """Writes serialized Events to one event file at a time (TF's EventFileWriter)."""

    def __init__(self, logdir, max_queue=10, flush_secs=120, filename_suffix=None):
        self._logdir = str(logdir)
        os.makedirs(self._logdir, exist_ok=True)
        del max_queue  # events go straight to the file's buffer; see the module docstring
        self._flush_secs = flush_secs
        self._suffix = filename_suffix or ""
        self._lock = threading.Lock()  # add_event may come from several threads
        self._closed = False
        self._open_file()

    def _open_file(self):
        self._path = _event_file_path(self._logdir, self._suffix)
        self._records = TFRecordWriter(self._path)
        # TF stamps the version event with whole seconds and flushes it at once, so the
        # file is recognizable as soon as it exists.
        self._records.write(protos.Event(wall_time=float(int(time.time())),
                                         file_version=FILE_VERSION).SerializeToString())
        self._records.flush()
        self._next_flush = time.time() + self._flush_secs

    def get_logdir(self) -> str:
        return self._logdir

    @property
    def path(self) -> str:
        """The event file being written (the latest one after `reopen`)."""
        return self._path

    def add_event(self, event):
        """Writes an Event (ours, any object with SerializeToString, or bytes)."""
        if self._closed:
            return
        data = event if isinstance(event, (bytes, bytearray)) else event.SerializeToString()
        with self._lock:
            self._records.write(data)
            now = time.time()
            if now > self._next_flush:
                self._records.flush()
                self._next_flush = now + self._flush_secs

    def flush(self):
        if self._closed:
            return
        with self._lock:
            self._records.flush()

    def close(self):
        if self._closed:
            return
        with self._lock:
            self._records.close()
            self._closed = True

    def reopen(self):
        """After `close()`, starts a new event file in the same logdir."""
        if self._closed:
            self._open_file()
            self._closed = False


class FileWriter:
    """Writes `Summary` protocol buffers and other events to an event file in `logdir`
    (TF1's `tf.summary.FileWriter`). Usable as a context manager (closes on exit)."""

    def __init__(self, logdir, graph=None, max_queue=10, flush_secs=120, graph_def=None,
                 filename_suffix=None, session=None):
        if session is not None:
            raise NotImplementedError(
                "FileWriter(session=...) wraps TF2's graph-based summary writer "
                "(tf.contrib.summary), which tensorflux does not have; leave session=None.")
        self.event_writer = EventFileWriter(logdir, max_queue, flush_secs, filename_suffix)
        self._closed = False
        self._session_run_tags = {}
        # Only the first Value of each tag keeps its SummaryMetadata (saves space;
        # TensorBoard reads the metadata of the first one).
        self._seen_summary_tags = set()
        if graph is not None or graph_def is not None:
            self.add_graph(graph=graph, graph_def=graph_def)

    # -- adding events ---------------------------------------------------------------------
    def add_summary(self, summary, global_step=None):
        """Adds a `Summary` (as a summary op's serialized output, or a Summary message)."""
        summary = _as_summary(summary)
        for value in summary.value:
            if not value.HasField("metadata"):
                continue
            if value.tag in self._seen_summary_tags:
                value.ClearField("metadata")
            else:
                self._seen_summary_tags.add(value.tag)
        self._add_event(protos.Event(summary=summary), global_step)

    def add_session_log(self, session_log, global_step=None):
        """Adds a `SessionLog` (e.g. `SessionLog(status=SessionLog.START)`)."""
        if not isinstance(session_log, protos.SessionLog):
            session_log = protos.SessionLog.FromString(_serialized(session_log))
        self._add_event(protos.Event(session_log=session_log), global_step)

    def add_graph(self, graph, global_step=None, graph_def=None):
        """Adds a Graph (as its GraphDef with output shapes) for TensorBoard's graph
        dashboard. A serialized or message GraphDef is accepted but deprecated, as in TF."""
        if graph is not None and graph_def is not None:
            raise ValueError("Please pass only graph, or graph_def (deprecated), "
                             "but not both.")
        if isinstance(graph_def, _graph.Graph):
            _log.warning("When passing a `Graph` object, please use the `graph` named "
                         "argument instead of `graph_def`.")
            graph, graph_def = graph_def, None
        if isinstance(graph, _graph.Graph):
            data = _graph_def.graph_def(graph, add_shapes=True).SerializeToString()
        elif _is_graph_def(graph) or _is_graph_def(graph_def):
            _log.warning("Passing a `GraphDef` to the SummaryWriter is deprecated. Pass a "
                         "`Graph` object instead, such as `sess.graph`.")
            data = _serialized(graph if graph is not None else graph_def)
        else:
            raise TypeError("The passed graph must be an instance of `Graph` or the "
                            "deprecated `GraphDef`")
        self._add_event(protos.Event(graph_def=data), global_step)

    def add_meta_graph(self, meta_graph_def, global_step=None):
        """Adds a serialized MetaGraphDef (bytes, or a message with SerializeToString)."""
        if not (isinstance(meta_graph_def, (bytes, bytearray))
                or hasattr(meta_graph_def, "SerializeToString")):
            raise TypeError(f"meta_graph_def must be type MetaGraphDef, saw type: "
                            f"{type(meta_graph_def)}")
        self._add_event(protos.Event(meta_graph_def=_serialized(meta_graph_def)), global_step)

    def add_run_metadata(self, run_metadata, tag, global_step=None):
        """Adds a serialized RunMetadata under `tag` (each tag once per writer)."""
        if tag in self._session_run_tags:
            raise ValueError("The provided tag was already used for this event type")
        if not hasattr(run_metadata, "SerializeToString"):
            raise TypeError("run_metadata must be a serializable RunMetadata protocol buffer; "
                            f"got {type(run_metadata).__name__}")
        self._session_run_tags[tag] = True
        tagged = protos.TaggedRunMetadata(tag=tag,
                                          run_metadata=run_metadata.SerializeToString())
        self._add_event(protos.Event(tagged_run_metadata=tagged), global_step)

    def add_event(self, event):
        """Adds an `Event` as given (its wall_time and step are not changed)."""
        self._warn_if_closed()
        self.event_writer.add_event(event)

    def _add_event(self, event, step):
        self._warn_if_closed()
        event.wall_time = time.time()
        if step is not None:
            event.step = int(step)
        self.event_writer.add_event(event)

    def _warn_if_closed(self):
        if self._closed:
            warnings.warn("Attempting to use a closed FileWriter. The operation will be a "
                          "noop unless the FileWriter is explicitly reopened.", stacklevel=3)

    # -- file management -------------------------------------------------------------------
    def get_logdir(self):
        """The directory the event file is written to."""
        return self.event_writer.get_logdir()

    def flush(self):
        """Writes every event added so far to the file."""
        self._warn_if_closed()
        self.event_writer.flush()

    def close(self):
        """Flushes and closes the event file; later events are dropped (with a warning)
        until `reopen()`."""
        self.event_writer.close()
        self._closed = True

    def reopen(self):
        """After `close()`, continues in a new event file in the same logdir."""
        self.event_writer.reopen()
        self._closed = False

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()


def _serialized(message) -> bytes:
    if isinstance(message, (bytes, bytearray)):
        return bytes(message)
    return message.SerializeToString()


def _as_summary(summary) -> protos.Summary:
    """A Summary message we may edit: parsed from bytes, or a copy of a message."""
    if isinstance(summary, (bytes, bytearray)):
        return protos.Summary.FromString(bytes(summary))
    if hasattr(summary, "SerializeToString"):
        return protos.Summary.FromString(summary.SerializeToString())
    raise TypeError(f"add_summary expects a Summary or its serialized bytes, got "
                    f"{type(summary).__name__}")


def _is_graph_def(value) -> bool:
    return (isinstance(value, (protos.GraphDef, bytes, bytearray))
            or type(value).__name__ == "GraphDef" and hasattr(value, "SerializeToString"))


class FileWriterCache:
    """One FileWriter per logdir, shared by everything that asks for it (TF1's
    `tf.summary.FileWriterCache`)."""

    _cache: dict = {}
    _lock = threading.RLock()

    @staticmethod
    def clear():
        """Closes and forgets every cached FileWriter."""
        with FileWriterCache._lock:
            for writer in FileWriterCache._cache.values():
                writer.close()
            FileWriterCache._cache = {}

    @staticmethod
    def get(logdir):
        """The FileWriter for `logdir`, created with the default graph on first use."""
        with FileWriterCache._lock:
            if logdir not in FileWriterCache._cache:
                FileWriterCache._cache[logdir] = FileWriter(
                    logdir, graph=_graph.get_default_graph())
            return FileWriterCache._cache[logdir]
