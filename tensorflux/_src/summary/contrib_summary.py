"""`tf.contrib.summary`: TF 1.15's summary writers that work eagerly and in graphs
(python/ops/summary_ops_v2.py).

A writer is a resource named by its shared name (`logdir:<logdir>` by default, so two
writers of one logdir share it). Its ops are stateful host ops carrying that name as the
`shared_name` attr:

- `CreateSummaryFileWriter` opens the event file `<logdir>/events.out.tfevents.<secs>.
  <host><suffix>` (suffix `.v2` by default) unless the resource is open already;
  `FlushSummaryWriter`, `CloseSummaryWriter` (which drops the resource, so a later init
  opens a new file);
- `WriteScalarSummary`, `WriteHistogramSummary`, `WriteImageSummary`,
  `WriteAudioSummary`, `WriteSummary` (generic tensor) write one Event stamped with the
  step and wall time. Their Summary values are those of tf.summary's kernels (simple
  value; TF's histogram buckets; PNG images tagged `tag/image/i`; WAV clips).

Eagerly, creating a writer opens it and a summary call runs its write op at once when
the recording condition holds (a Python bool, or the every-n lambda evaluated per call).
In a graph, the init ops go to the `_SUMMARY_WRITER_V2` collection
(`summary_writer_initializer_op()`), each summary call makes one write op whose first
input is the recording condition (TF builds a smart_cond around the write; a bool input
the kernel tests is the same run-time choice) and whose bool output (whether it
recorded) goes to the `_SUMMARY_V2` collection (`all_summary_ops()`).

Deviation: TF keeps resources in each Session's resource manager; here the open writers
live in one process-wide table keyed by shared name, so Sessions of one process share
them (as a single Session would see them).
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time

import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import errors, protos
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.behaviour import executing_eagerly
from tensorflux._src.framework.operation import Tensor
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.registry import OpDef, register
from tensorflux._src.summary import summary_ops
from tensorflux._src.summary.writer import EventFileWriter

__all__ = ["SummaryWriter", "all_summary_ops", "always_record_summaries", "audio",
           "create_file_writer", "create_summary_file_writer", "flush", "generic",
           "histogram", "image", "never_record_summaries",
           "record_summaries_every_n_global_steps", "scalar", "should_record_summaries",
           "summary_writer_initializer_op"]

_log = logging.getLogger("tensorflux")
_SUMMARY_COLLECTION = "_SUMMARY_V2"  # TF's GraphKeys._SUMMARY_COLLECTION
_WRITER_INIT_COLLECTION = "_SUMMARY_WRITER_V2"


# -- the resources: open event files by shared name -------------------------------------------
_writers: dict = {}
_writers_lock = threading.Lock()


def _writer(shared_name: str) -> EventFileWriter:
    writer = _writers.get(shared_name)
    if writer is None:
        raise errors.NotFoundError(
            None, None, f"Resource localhost/{shared_name}/N10tensorflow22SummaryWriter"
                        f"InterfaceE does not exist. (Run the writer's init op first: "
                        f"tf.contrib.summary.summary_writer_initializer_op().)")
    return writer


def _text(value) -> str:
    value = value[()] if isinstance(value, np.ndarray) else value
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


def _create_kernel(logdir, max_queue, flush_millis, filename_suffix, shared_name):
    with _writers_lock:
        if shared_name not in _writers:  # TF's LookupOrCreate: an open writer is kept
            _writers[shared_name] = EventFileWriter(
                _text(logdir), int(max_queue), float(flush_millis) / 1000.0,
                _text(filename_suffix))
    return ()


def _flush_kernel(shared_name):
    _writer(shared_name).flush()
    return ()


def _close_kernel(shared_name):
    with _writers_lock:
        writer = _writers.pop(shared_name, None)
    if writer is not None:
        writer.close()
    return ()


_STATEFUL = {"stateful": True, "not_differentiable": True}
register(OpDef("CreateSummaryFileWriter",
               inputs=("logdir: string", "max_queue: int32", "flush_millis: int32",
                       "filename_suffix: string"), outputs=(),
               attrs={"shared_name": ""}, host=_create_kernel, **_STATEFUL))
register(OpDef("FlushSummaryWriter", outputs=(), attrs={"shared_name": ""},
               host=_flush_kernel, **_STATEFUL))
register(OpDef("CloseSummaryWriter", outputs=(), attrs={"shared_name": ""},
               host=_close_kernel, **_STATEFUL))


def _write_event(shared_name, step, serialized_summary):
    event = protos.Event(summary=protos.Summary.FromString(bytes(serialized_summary[()])))
    event.step = int(np.asarray(step).reshape(-1)[0])
    event.wall_time = time.time()
    _writer(shared_name).add_event(event)


def _record(condition, shared_name, step, make_summary):
    """Writes the Summary `make_summary()` builds (tf.summary's kernels) as one Event if
    `condition`; returns whether it wrote."""
    if not bool(condition):
        return np.asarray(False)
    _write_event(shared_name, step, make_summary())
    return np.asarray(True)


def _scalar_kernel(condition, step, tag, value, shared_name):
    def make():
        if value.size != 1:
            raise summary_ops.kernel_error(
                f"tensor must be a scalar to write a scalar summary, got shape "
                f"{summary_ops.dims_str(value.shape)}")
        return summary_ops._scalar_summary_kernel(tag, value.reshape(tag.shape))
    return _record(condition, shared_name, step, make)


def _histogram_kernel(condition, step, tag, values, shared_name):
    return _record(condition, shared_name, step,
                   lambda: summary_ops._histogram_summary_kernel(tag, values))


def _image_kernel(condition, step, tag, tensor, bad_color, shared_name, max_images):
    return _record(condition, shared_name, step,
                   lambda: summary_ops._image_summary_kernel(tag, tensor, max_images,
                                                             bad_color))


def _audio_kernel(condition, step, tag, tensor, sample_rate, shared_name, max_outputs):
    return _record(condition, shared_name, step,
                   lambda: summary_ops._audio_summary_kernel(tag, tensor, sample_rate,
                                                             max_outputs))


def _generic_kernel(condition, step, tag, tensor, summary_metadata, shared_name, T):
    return _record(condition, shared_name, step,
                   lambda: summary_ops._tensor_summary_kernel(tag, tensor, summary_metadata,
                                                              T))


def _scalar_shape(op):
    return summary_ops.TensorShape([])


_WRITE_INPUTS = ("condition: bool", "step: int64")
_IMAGE_TYPES = (_dtypes.uint8, _dtypes.float32, _dtypes.float16, _dtypes.float64)
for _name, _inputs, _attrs, _kernel in (
        ("WriteScalarSummary", ("tag: string", "value: T"), {"T": _dtypes.REAL},
         _scalar_kernel),
        ("WriteHistogramSummary", ("tag: string", "values: T"), {"T": _dtypes.REAL},
         _histogram_kernel),
        ("WriteImageSummary", ("tag: string", "tensor: T", "bad_color: uint8"),
         {"max_images": 3, "T": _IMAGE_TYPES}, _image_kernel),
        ("WriteAudioSummary", ("tag: string", "tensor: float32", "sample_rate: float32"),
         {"max_outputs": 3}, _audio_kernel),
        ("WriteSummary", ("tag: string", "tensor: T", "summary_metadata: string"),
         {"T": _dtypes.ALL}, _generic_kernel)):
    register(OpDef(_name, inputs=_WRITE_INPUTS + _inputs, outputs=("recorded: bool",),
                   attrs=dict(_attrs, shared_name=""), shape=_scalar_shape, host=_kernel,
                   **_STATEFUL))


# -- thread state: default writer and recording condition --------------------------------------
class _SummaryState(threading.local):
    def __init__(self):
        super().__init__()
        self.writer = None
        self.is_recording = None  # None: not set (contrib's default is not to record)


_state = _SummaryState()


@contextlib.contextmanager
def _record_if(condition):
    old = _state.is_recording
    try:
        _state.is_recording = condition
        yield
    finally:
        _state.is_recording = old


def always_record_summaries():
    """Within this context, summaries are recorded."""
    return _record_if(True)


def never_record_summaries():
    """Within this context, summaries are not recorded."""
    return _record_if(False)


def record_summaries_every_n_global_steps(n, global_step=None):
    """Within this context, summaries are recorded when `global_step % n == 0` (the step's
    value when each summary is written eagerly; when each write op runs in a graph)."""
    from tensorflux._src.ops.math import math_ops
    from tensorflux._src.train.optimizer import get_or_create_global_step
    if global_step is None:
        global_step = get_or_create_global_step()
    should = lambda: math_ops.equal(global_step % n, 0)
    return _record_if(should if executing_eagerly() else should())


def _condition():
    """The recording condition: a Python bool, or a bool tensor."""
    cond = _state.is_recording
    cond = cond() if callable(cond) else cond
    return False if cond is None else cond


def should_record_summaries():
    """A bool tensor: whether summaries are recorded here (False without a default
    writer, or when no recording context is set)."""
    from tensorflux._src.ops.math import math_ops
    if _state.writer is None:
        return convert_to_tensor(False)
    return math_ops.logical_and(True, _condition())


# -- writers -----------------------------------------------------------------------------------
class SummaryWriter:
    """A summary file writer (TF's ResourceSummaryWriter): `as_default()` makes summaries
    write to it; `init()`, `flush()`, `close()` run at once eagerly and return ops in a
    graph."""

    def __init__(self, shared_name, logdir, max_queue, flush_millis, filename_suffix):
        self._shared_name = shared_name
        self._init_args = (logdir, max_queue, flush_millis, filename_suffix)
        self._init_op = self.init()
        if not executing_eagerly():
            _graph.add_to_collection(_WRITER_INIT_COLLECTION, self._init_op)

    def set_as_default(self):
        """Makes this writer the default of the current thread."""
        _state.writer = self

    @contextlib.contextmanager
    def as_default(self):
        """A context in which this is the default writer; flushes on exit."""
        old = _state.writer
        try:
            _state.writer = self
            yield self
            self.flush()
        finally:
            _state.writer = old

    def init(self):
        """The op creating the writer's resource (it opens the event file)."""
        logdir, max_queue, flush_millis, filename_suffix = self._init_args
        return apply_op("CreateSummaryFileWriter", logdir=logdir,
                        max_queue=convert_to_tensor(max_queue, _dtypes.int32),
                        flush_millis=convert_to_tensor(flush_millis, _dtypes.int32),
                        filename_suffix=filename_suffix, shared_name=self._shared_name)

    def flush(self):
        """Writes the buffered events to the file."""
        return flush(writer=self)

    def close(self):
        """Flushes and closes the event file (a later `init()` opens a new one)."""
        return apply_op("CloseSummaryWriter", shared_name=self._shared_name)


class _NoopSummaryWriter:
    """What `create_file_writer(None)` returns: a writer that does nothing."""

    def set_as_default(self):
        pass

    @contextlib.contextmanager
    def as_default(self):
        yield

    def init(self):
        pass

    def flush(self):
        pass

    def close(self):
        pass


def create_file_writer(logdir, max_queue=None, flush_millis=None, filename_suffix=None,
                       name=None):
    """A summary writer of the event file in `logdir` (None: a writer doing nothing).
    max_queue defaults to 10, flush_millis to 120000, filename_suffix to ".v2"; `name`
    is the shared resource name, by default "logdir:" + logdir."""
    if logdir is None:
        return _NoopSummaryWriter()
    logdir = str(logdir)
    return SummaryWriter(
        shared_name=name if name is not None else "logdir:" + logdir, logdir=logdir,
        max_queue=10 if max_queue is None else max_queue,
        flush_millis=120000 if flush_millis is None else flush_millis,
        filename_suffix=".v2" if filename_suffix is None else filename_suffix)


def create_summary_file_writer(*args, **kwargs):
    """Deprecated name of `create_file_writer`."""
    _log.warning("Deprecation Warning: create_summary_file_writer was renamed to "
                 "create_file_writer")
    return create_file_writer(*args, **kwargs)


def flush(writer=None, name=None):
    """Flushes `writer` (default: the thread's default writer; a no-op without one)."""
    from tensorflux._src.ops.control.control_ops import no_op
    if writer is None:
        writer = _state.writer
        if writer is None:
            return no_op()
    if not isinstance(writer, SummaryWriter):
        raise TypeError(f"flush expects a SummaryWriter made by create_file_writer, got "
                        f"{type(writer).__name__}")
    return apply_op("FlushSummaryWriter", name=name, shared_name=writer._shared_name)


def all_summary_ops():
    """The graph's contrib summary ops (None when executing eagerly)."""
    if executing_eagerly():
        return None
    return _graph.get_collection(_SUMMARY_COLLECTION)


def summary_writer_initializer_op():
    """The init ops of the graph's summary writers (graph mode only)."""
    if executing_eagerly():
        raise RuntimeError("tf.contrib.summary.summary_writer_initializer_op is only "
                           "supported in graph mode.")
    return _graph.get_collection(_WRITER_INIT_COLLECTION)


# -- summaries ---------------------------------------------------------------------------------
def _choose_step(step):
    from tensorflux._src.train.optimizer import get_or_create_global_step
    if step is None:
        step = get_or_create_global_step()
    if isinstance(step, Tensor) and step.dtype.base_dtype == _dtypes.int64:
        return step
    return convert_to_tensor(step, _dtypes.int64)


def _write(op_type, name, values, family, step, /, **inputs):
    """Writes one summary through `op_type` if there is a default writer and the
    recording condition holds; returns the bool `recorded` (a no-op without a writer)."""
    from tensorflux._src.ops.control.control_ops import no_op
    writer = _state.writer
    if writer is None:
        return no_op()
    condition = _condition()
    eager = executing_eagerly()
    if eager:
        condition = bool(condition.numpy() if hasattr(condition, "numpy") else condition)
        if not condition:
            return convert_to_tensor(False)
    # TF re-enters the caller's name scope inside its cond; the tag is the same.
    with summary_ops.summary_scope(name, family, values=[values]) as (tag, scope):
        recorded = apply_op(op_type, name=scope, condition=condition,
                            step=_choose_step(step), tag=tag, shared_name=writer._shared_name,
                            **inputs)
    if not eager:
        _graph.add_to_collection(_SUMMARY_COLLECTION, recorded)
    return recorded


def scalar(name, tensor, family=None, step=None):
    """Writes a scalar summary (a simple_value) at `step` (default: the global step)."""
    return _write("WriteScalarSummary", name, tensor, family, step, value=tensor)


def histogram(name, tensor, family=None, step=None):
    """Writes a histogram of `tensor` in TF's default buckets."""
    return _write("WriteHistogramSummary", name, tensor, family, step, values=tensor)


def image(name, tensor, bad_color=None, max_images=3, family=None, step=None):
    """Writes up to `max_images` PNG images of a [batch, h, w, 1|3|4] tensor."""
    summary_ops._check_min("WriteImageSummary", "max_images", max_images, 1)
    if bad_color is None:
        bad_color = np.array([255, 0, 0, 255], np.uint8)
    return _write("WriteImageSummary", name, tensor, family, step, tensor=tensor,
                  bad_color=convert_to_tensor(bad_color, _dtypes.uint8),
                  max_images=max_images)


def audio(name, tensor, sample_rate, max_outputs, family=None, step=None):
    """Writes up to `max_outputs` WAV clips of a float32 [batch, frames(, channels)]."""
    summary_ops._check_min("WriteAudioSummary", "max_outputs", max_outputs, 1)
    return _write("WriteAudioSummary", name, tensor, family, step, tensor=tensor,
                  sample_rate=convert_to_tensor(sample_rate, _dtypes.float32),
                  max_outputs=max_outputs)


def generic(name, tensor, metadata=None, family=None, step=None):
    """Writes `tensor` itself (a TensorProto) with `metadata` (a SummaryMetadata or its
    serialized bytes) naming the plugin that reads it."""
    if metadata is None:
        metadata = b""
    elif hasattr(metadata, "SerializeToString"):
        metadata = metadata.SerializeToString()
    return _write("WriteSummary", name, tensor, family, step, tensor=tensor,
                  summary_metadata=convert_to_tensor(metadata, _dtypes.string))


def write_graph(writer, graph):
    """Writes `graph` (a tf.Graph, or a GraphDef) to `writer`'s open event file at step 0
    (what `tf.summary.initialize(graph=...)` does)."""
    from tensorflux._src.io import graph_def as _graph_def
    if isinstance(graph, _graph.Graph):
        data = _graph_def.graph_def(graph, add_shapes=True).SerializeToString()
    else:
        data = graph.SerializeToString()
    _writer(writer._shared_name).add_event(
        protos.Event(graph_def=data, step=0, wall_time=time.time()))
