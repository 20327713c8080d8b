"""`tf.train.QueueRunner`, `add_queue_runner`, `start_queue_runners`.

A QueueRunner owns the threads that keep a queue filled: one per enqueue op, each
running its op in a loop. When the input ends (an enqueue fails with one of
`queue_closed_exception_types`, by default OutOfRangeError) the thread ends quietly,
and the last one to end runs `close_op`, so consumers drain the queue and then get
OutOfRangeError. With a Coordinator, one more thread waits for a stop request and runs
`cancel_op` (closing the queue and failing pending enqueues), and other errors are
reported through `coord.request_stop(e)`.

Unlike TF, a runner whose Session was closed under it (its blocked op cancelled, or the
Session refusing new runs) also ends quietly: closing the Session is how a program
without a Coordinator stops its runners.
"""

from __future__ import annotations

import logging
import threading
import weakref

from tensorflux._src.framework import errors
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.graph_keys import GraphKeys

__all__ = ["QueueRunner", "add_queue_runner", "start_queue_runners"]

_log = logging.getLogger("tensorflux")


class QueueRunner:
    """Holds a queue, the ops that fill it and the ops that close it."""

    def __init__(self, queue=None, enqueue_ops=None, close_op=None, cancel_op=None,
                 queue_closed_exception_types=None, queue_runner_def=None,
                 import_scope=None):
        if queue_runner_def is not None:
            raise NotImplementedError("QueueRunner(queue_runner_def=...) is not supported; "
                                      "build the QueueRunner from a queue and its ops.")
        if not queue or not enqueue_ops:
            raise ValueError("Must provide queue and enqueue_ops.")
        self._queue = queue
        self._enqueue_ops = list(enqueue_ops)
        self._close_op = close_op if close_op is not None else queue.close()
        self._cancel_op = cancel_op if cancel_op is not None else queue.close(
            cancel_pending_enqueues=True)
        if queue_closed_exception_types is None:
            queue_closed_exception_types = (errors.OutOfRangeError,)
        self._queue_closed_exception_types = tuple(queue_closed_exception_types)
        if not self._queue_closed_exception_types or not all(
                isinstance(t, type) and issubclass(t, errors.OpError)
                for t in self._queue_closed_exception_types):
            raise TypeError("queue_closed_exception_types, when provided, must be a tuple "
                            "of tf.error types, but saw: "
                            f"{queue_closed_exception_types}")
        self._lock = threading.Lock()
        self._runs_per_session = weakref.WeakKeyDictionary()  # session -> live threads
        self._exceptions_raised = []

    @property
    def queue(self):
        return self._queue

    @property
    def enqueue_ops(self):
        return self._enqueue_ops

    @property
    def close_op(self):
        return self._close_op

    @property
    def cancel_op(self):
        return self._cancel_op

    @property
    def queue_closed_exception_types(self):
        return self._queue_closed_exception_types

    @property
    def exceptions_raised(self):
        """Exceptions raised but not handled by the threads (when run without coord)."""
        return self._exceptions_raised

    @property
    def name(self):
        return self._queue.name

    # -- threads -----------------------------------------------------------------------
    def _run(self, sess, enqueue_op, coord):
        decremented = False
        try:
            while True:
                if coord is not None and coord.should_stop():
                    break
                try:
                    sess.run(enqueue_op)
                except self._queue_closed_exception_types:
                    # The input ended: the last thread closes the queue for consumers.
                    with self._lock:
                        self._runs_per_session[sess] -= 1
                        decremented = True
                        last = self._runs_per_session[sess] == 0
                    if last:
                        try:
                            sess.run(self._close_op)
                        except Exception as e:  # noqa: BLE001 - as TF: ignored
                            _log.debug("Ignored exception: %s", e)
                    return
        except Exception as e:  # noqa: BLE001
            if _session_closed(sess):
                return  # the Session was closed under us: a stop, not a failure
            if coord is not None:
                coord.request_stop(e)
            else:
                _log.error("Exception in QueueRunner: %s", e)
                with self._lock:
                    self._exceptions_raised.append(e)
                raise
        finally:
            if not decremented:
                with self._lock:
                    self._runs_per_session[sess] -= 1

    def _close_on_stop(self, sess, cancel_op, coord):
        coord.wait_for_stop()
        try:
            sess.run(cancel_op)
        except Exception as e:  # noqa: BLE001 - as TF: ignored
            _log.debug("Ignored exception: %s", e)

    def create_threads(self, sess, coord=None, daemon=False, start=False):
        """Threads running the enqueue ops in `sess` (plus, with `coord`, one that cancels
        the queue when a stop is requested). None are made if some still run."""
        with self._lock:
            if self._runs_per_session.get(sess, 0) > 0:
                return []
            self._runs_per_session[sess] = len(self._enqueue_ops)
            self._exceptions_raised = []
        threads = [threading.Thread(target=self._run, args=(sess, op, coord),
                                    name=f"QueueRunnerThread-{self.name}-{op.name}")
                   for op in self._enqueue_ops]
        if coord is not None:
            threads.append(threading.Thread(
                target=self._close_on_stop, args=(sess, self._cancel_op, coord),
                name=f"QueueRunnerThread-{self.name}-close_on_stop"))
        for t in threads:
            if coord is not None:
                coord.register_thread(t)
            if daemon:
                t.daemon = True
            if start:
                t.start()
        return threads


def _session_closed(sess):
    return bool(getattr(sess, "_closed", False))


def add_queue_runner(qr, collection=GraphKeys.QUEUE_RUNNERS):
    """Adds `qr` to the graph's QUEUE_RUNNERS collection (start_queue_runners uses it)."""
    _graph.add_to_collection(collection, qr)


def start_queue_runners(sess=None, coord=None, daemon=True, start=True,
                        collection=GraphKeys.QUEUE_RUNNERS):
    """Starts the threads of every QueueRunner in `collection`; returns them."""
    if sess is None:
        from tensorflux._src.framework.default_session import get_default_session
        sess = get_default_session()
        if not sess:
            raise ValueError("Cannot start queue runners: No default session is registered. "
                             "Use `with sess.as_default()` or pass an explicit session to "
                             "tf.start_queue_runners(sess=sess)")
    if type(sess).__name__ in ("MonitoredSession", "SingularMonitoredSession"):
        return []  # those start their queue runners themselves
    from tensorflux._src.runtime.session import BaseSession
    if not isinstance(sess, BaseSession):
        raise TypeError(f"sess must be a `tf.Session` object. Given class: {sess.__class__}")
    runners = sess.graph.get_collection(collection)
    if not runners:
        _log.warning("`tf.train.start_queue_runners()` was called when no queue runners "
                     "were defined. You can safely remove the call to this deprecated "
                     "function.")
    threads = []
    with sess.graph.as_default():
        for qr in runners:
            threads.extend(qr.create_threads(sess, coord=coord, daemon=daemon, start=start))
    return threads
