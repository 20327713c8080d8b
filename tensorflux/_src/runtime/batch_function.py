"""`tf.nondifferentiable_batch_function` and its op, BatchFunction (a host record with
TF's name and attrs; TF's kernels/batch_kernels.cc).

The decorated function is traced once per call of the decorator's result, on
placeholders whose first dimension is unknown, in a `FunctionGraph` of its own; tensors
it uses from the outer graph become the op's `captured_tensors` (evaluated in the
caller's run and fed to the function). Running it is a `Session.run` of that graph on
a private Session, so the run plan compiles it (cached after the first batch).

The batcher is a resource of the outer Session (one per `shared_name`, i.e. per call of
the decorated function), so concurrent `Session.run` calls of one BatchFunction op meet
in it. Each call is a task; the first task of a batch leads it: it waits until the batch
is full (`max_batch_size` rows) or `batch_timeout_micros` passed, concatenates the
tasks' inputs along dimension 0, pads them to the next entry of `allowed_batch_sizes`
with the first row (as TF's ConcatInputTensors), runs the function once (at most
`num_batch_threads` batches at a time) and hands every task its own rows. A task that
does not fit in the open batch closes it and starts the next one.
"""

from __future__ import annotations

import bisect
import itertools
import threading
import time
import weakref

import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import errors
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework import nest
from tensorflux._src.framework.func_graph import FunctionGraph
from tensorflux._src.framework.operation import Operation, Tensor
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.framework.tensor_shape import TensorShape
from tensorflux._src.ops import constant
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.registry import REQUIRED, OpDef, register
from tensorflux._src.queues import queue_ops
from tensorflux._src.runtime.session import Session

__all__ = ["nondifferentiable_batch_function"]

_FUNCTIONS = weakref.WeakValueDictionary()  # token -> _TracedFunction (the graph holds it)
_tokens = itertools.count()


class _TracedFunction:
    """The decorated function traced on batch-shaped placeholders."""

    def __init__(self, fn, args):
        outer = _graph.get_default_graph()
        self.graph = FunctionGraph(outer, "the function given to batch_function")
        with self.graph.as_default():
            self.inputs = [constant.placeholder(a.dtype.base_dtype,
                                                TensorShape([None]).concatenate(a.shape[1:])
                                                if a.shape.rank else a.shape,
                                                name=f"batch_{i}")
                           for i, a in enumerate(args)]
            result = fn(*self.inputs)
            self.structure = result
            flat = nest.flatten(result)
            outputs = []
            for leaf in flat:
                if isinstance(leaf, Operation) or leaf is None:
                    raise TypeError(f"The function given to batch_function must return "
                                    f"tensors; got {leaf!r}")
                if isinstance(leaf, Tensor) and leaf.graph is not self.graph:
                    leaf = self.graph.capture_value(leaf)
                outputs.append(leaf if isinstance(leaf, Tensor) else convert_to_tensor(leaf))
            self.outputs = outputs
        self.captured = list(self.graph.captures)
        self._captured_inputs = [self.graph.captures[t] for t in self.captured]
        self.token = f"batch_function_{next(_tokens)}"
        _FUNCTIONS[self.token] = self

    def run(self, session, inputs, captured):
        feeds = dict(zip(self.inputs, inputs))
        feeds.update(zip(self._captured_inputs, captured))
        return session.run(self.outputs, feeds)


class _Task:
    def __init__(self, inputs, captured):
        self.inputs, self.captured = inputs, captured
        self.size = inputs[0].shape[0]
        self.done = threading.Event()
        self.outputs = self.error = None


class _Batch:
    def __init__(self, deadline):
        self.tasks, self.size, self.deadline, self.closed = [], 0, deadline, False


class Batcher:
    """One BatchFunction op's batching queue in one Session."""

    def __init__(self, name, function, num_batch_threads, max_batch_size,
                 batch_timeout_micros, allowed_batch_sizes, max_enqueued_batches):
        self.name, self.function = name, function
        self.max_batch_size = max_batch_size
        self.timeout = batch_timeout_micros / 1e6
        self.allowed = list(allowed_batch_sizes)
        self.max_enqueued = max_enqueued_batches
        self._cond = threading.Condition()
        self._open = None  # the batch tasks join
        self._waiting = 0  # batches formed and not yet running
        self._threads = threading.Semaphore(max(1, num_batch_threads))
        self._session = Session(graph=function.graph)
        self._compiled = False
        self._compile_lock = threading.Lock()
        self._cancelled = False
        self.batches_run = 0

    def submit(self, inputs, captured):
        task = _Task(inputs, captured)
        if task.size > self.max_batch_size:
            raise errors.InvalidArgumentError(
                None, None, f"Task size {task.size} is larger than maximum batch size "
                            f"{self.max_batch_size}")
        with self._cond:
            if self._cancelled:
                raise errors.CancelledError(None, None, "Session has been closed.")
            batch = self._open
            if batch is not None and batch.size + task.size > self.max_batch_size:
                batch.closed = True  # full: its leader runs it now
                self._cond.notify_all()
                batch = None
            leader = batch is None
            if leader:
                if self._waiting >= self.max_enqueued:
                    raise errors.UnavailableError(
                        None, None, "The batch scheduling queue to which this task was "
                                    "submitted is full")
                batch = self._open = _Batch(time.monotonic() + self.timeout)
                self._waiting += 1
            batch.tasks.append(task)
            batch.size += task.size
            if batch.size >= self.max_batch_size:
                batch.closed = True
                self._cond.notify_all()
            if leader:
                while not batch.closed and not self._cancelled:
                    left = batch.deadline - time.monotonic()
                    if left <= 0:
                        break
                    self._cond.wait(left)
                batch.closed = True
                if self._open is batch:
                    self._open = None
        if leader:
            try:
                self._process(batch)
            finally:
                with self._cond:
                    self._waiting -= 1
        else:
            task.done.wait()
        if task.error is not None:
            raise task.error
        return task.outputs

    def _process(self, batch):
        try:
            with self._threads:
                if self._cancelled:
                    raise errors.CancelledError(None, None, "Session has been closed.")
                outputs = self._run(batch)
            offset = 0
            for task in batch.tasks:
                task.outputs = [o[offset:offset + task.size] for o in outputs]
                offset += task.size
        except errors.OpError as e:
            for task in batch.tasks:
                task.error = e
        finally:
            for task in batch.tasks:
                task.done.set()

    def _run(self, batch):
        n_inputs = len(batch.tasks[0].inputs)
        columns = [np.concatenate([t.inputs[i] for t in batch.tasks]) for i in range(n_inputs)]
        size = batch.size
        padded = size
        if self.allowed:
            padded = self.allowed[bisect.bisect_left(self.allowed, size)]
        if padded > size:  # TF pads with the first row of the first task's tensors
            columns = [np.concatenate([c, np.repeat(c[:1], padded - size, axis=0)])
                       for c in columns]
        captured = batch.tasks[0].captured
        if not self._compiled:
            with self._compile_lock:
                outputs = self.function.run(self._session, columns, captured)
                self._compiled = True
        else:
            outputs = self.function.run(self._session, columns, captured)
        self.batches_run += 1
        result = []
        for out in outputs:
            out = np.asarray(out)
            if out.ndim == 0:
                raise errors.FailedPreconditionError(
                    None, None, "Batched output tensor has 0 dimensions")
            if out.shape[0] != padded:
                raise errors.FailedPreconditionError(
                    None, None, "Batched output tensor's 0th dimension does not equal the "
                                "sum of the 0th dimension sizes of the input tensors")
            result.append(out[:size])
        return result

    def cancel(self):
        with self._cond:
            self._cancelled = True
            self._cond.notify_all()
        self._session.close()


def _check_allowed_batch_sizes(allowed, max_batch_size):
    """TF's ValidateAllowedBatchSizes (run when the kernel is built: the first run)."""
    last = 0
    for i, size in enumerate(allowed):
        if i > 0 and size <= last:
            raise errors.InvalidArgumentError(
                None, None, "allowed_batch_sizes entries must be monotonically increasing")
        if i == len(allowed) - 1 and size != max_batch_size:
            raise errors.InvalidArgumentError(
                None, None, "final entry in allowed_batch_sizes must equal max_batch_size")
        last = size


def _batch_function_kernel(*tensors, f, num_batch_threads, max_batch_size,
                           batch_timeout_micros, max_enqueued_batches, allowed_batch_sizes,
                           container, shared_name, batching_queue, Tin, node_name,  # noqa: N803
                           session_state):
    _check_allowed_batch_sizes(list(allowed_batch_sizes), max_batch_size)
    function = _FUNCTIONS.get(f)
    if function is None:
        raise errors.NotFoundError(None, None, f"Function {f} is not defined.")
    inputs, captured = list(tensors[:len(Tin)]), list(tensors[len(Tin):])
    for x in inputs:
        if np.ndim(x) == 0:
            raise errors.InvalidArgumentError(
                None, None, "Batching input tensors must have at least one dimension")
    if len({np.shape(x)[0] for x in inputs}) > 1:
        raise errors.InvalidArgumentError(
            None, None, "Batching input tensors must have equal 0th-dimension size")
    key = queue_ops.resource_key(shared_name, node_name) + "/" + batching_queue
    batcher = queue_ops.session_resources(session_state).get_or_create(
        key, node_name, shared_name,
        lambda name: Batcher(name, function, num_batch_threads, max_batch_size,
                             batch_timeout_micros, allowed_batch_sizes, max_enqueued_batches))
    return tuple(batcher.submit([np.asarray(x) for x in inputs], captured))


register(OpDef(
    "BatchFunction", inputs=("in_tensors: list(Tin)", "captured_tensors: list(Tcaptured)"),
    outputs=("out_tensors: list(Tout)",),
    attrs={"f": REQUIRED, "num_batch_threads": REQUIRED, "max_batch_size": REQUIRED,
           "batch_timeout_micros": REQUIRED, "max_enqueued_batches": 10,
           "allowed_batch_sizes": (), "container": "", "shared_name": "",
           "batching_queue": "", "Tin": _dtypes.ALL, "Tcaptured": _dtypes.ALL,
           "Tout": REQUIRED, "node_name": ""},
    # TF's shape function: unknown shapes.
    shape=lambda op: [TensorShape(None) for _ in op.attrs["Tout"]],
    host=_batch_function_kernel, uses_session=True, not_differentiable=True))


def nondifferentiable_batch_function(num_batch_threads, max_batch_size, batch_timeout_micros,
                                     allowed_batch_sizes=None, max_enqueued_batches=10,
                                     autograph=True):
    """Batches the computation of the decorated function: concurrent Session.run calls
    computing its result have their inputs concatenated along dimension 0, the function
    runs once on the batch, and each call gets its own rows back."""

    def decorator(fn):
        def decorated(*args):
            with _graph.name_scope("batch") as name:
                for a in args:
                    if not isinstance(a, Tensor):
                        raise ValueError(f"All arguments to functions decorated with "
                                         f"`batch_function`  are supposed to be Tensors; "
                                         f"found {a!r}.")
                function = _TracedFunction(fn, args)
                graph = _graph.get_default_graph()
                if not hasattr(graph, "_batch_functions"):
                    graph._batch_functions = []
                graph._batch_functions.append(function)  # keeps the token's function
                outputs = apply_op(
                    "BatchFunction", in_tensors=list(args), captured_tensors=function.captured,
                    f=function.token, num_batch_threads=num_batch_threads,
                    max_batch_size=max_batch_size, batch_timeout_micros=batch_timeout_micros,
                    allowed_batch_sizes=tuple(allowed_batch_sizes or ()),
                    max_enqueued_batches=max_enqueued_batches, shared_name=name,
                    Tout=tuple(t.dtype.base_dtype for t in function.outputs))
                outputs = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
                outputs[0].op._attrs["node_name"] = outputs[0].op.name
                return nest.pack_sequence_as(function.structure, outputs)

        return decorated

    return decorator
