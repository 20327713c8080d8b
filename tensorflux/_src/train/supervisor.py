"""`tf.train.Supervisor` (TF1's pre-MonitoredSession training helper) and
`tf.train.basic_train_loop`.

    sv = tf.train.Supervisor(logdir=d)
    with sv.managed_session() as sess:
        while not sv.should_stop():
            sess.run(train_op)

A chief Supervisor fills in TF1's defaults from the graph's collections (READY_OP,
INIT_OP, LOCAL_INIT_OP, SAVERS, SUMMARY_OP, GLOBAL_STEP; created and added when
missing), finalizes the graph, prepares Sessions through a SessionManager (restoring
the latest checkpoint of `logdir`) and runs TF1's standard services as LooperThreads of
its Coordinator: a checkpoint every `save_model_secs` (the first right away, saved to
`logdir/model.ckpt-<step>`), the summary op and a `global_step/sec` summary every
`save_summaries_secs`, written to `logdir`'s event file. `stop()` stops and joins them
and writes a STOP SessionLog. The graph itself is added to the event file; TF's
`graph.pbtxt` needs GraphDef protos (tf.train.write_graph) and is not written.
"""

from __future__ import annotations

import contextlib
import logging
import os
import time

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import errors
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework import protos
from tensorflux._src.framework.graph_keys import GraphKeys
from tensorflux._src.train import coordinator, variables
from tensorflux._src.train.saver import Saver, global_step as _global_step_value
from tensorflux._src.train.session_manager import SessionManager

__all__ = ["Supervisor", "basic_train_loop"]

_log = logging.getLogger("tensorflux")


class Supervisor:
    """See the module docstring."""

    USE_DEFAULT = 0

    def __init__(self, graph=None, ready_op=USE_DEFAULT, ready_for_local_init_op=USE_DEFAULT,
                 is_chief=True, init_op=USE_DEFAULT, init_feed_dict=None,
                 local_init_op=USE_DEFAULT, logdir=None, summary_op=USE_DEFAULT,
                 saver=USE_DEFAULT, global_step=USE_DEFAULT, save_summaries_secs=120,
                 save_model_secs=600, recovery_wait_secs=30, stop_grace_secs=120,
                 checkpoint_basename="model.ckpt", session_manager=None,
                 summary_writer=USE_DEFAULT, init_fn=None, local_init_run_options=None):
        if graph is None:
            graph = _graph.get_default_graph()
        with graph.as_default():
            self._init_ready_op(ready_op, ready_for_local_init_op)
            self._init_init_op(init_op, init_feed_dict)
            self._init_local_init_op(local_init_op)
            self._init_saver(saver)
            self._init_summary_op(summary_op)
            self._init_global_step(global_step)
        self._graph = graph
        self._is_chief = is_chief
        self._coord = coordinator.Coordinator()
        self._recovery_wait_secs = recovery_wait_secs
        self._stop_grace_secs = stop_grace_secs
        self._init_fn = init_fn
        self._local_init_run_options = local_init_run_options
        # Only a chief writes checkpoints and events.
        self._logdir = None
        self._save_summaries_secs = None
        self._save_model_secs = None
        self._save_path = None
        self._summary_writer = None
        if self._is_chief:
            self._logdir = logdir
            self._save_summaries_secs = save_summaries_secs
            self._save_model_secs = save_model_secs
            if self._logdir:
                self._save_path = os.path.join(self._logdir, checkpoint_basename)
            if summary_writer is Supervisor.USE_DEFAULT:
                if self._logdir:
                    from tensorflux._src.summary.writer import FileWriter
                    self._summary_writer = FileWriter(self._logdir)
            else:
                self._summary_writer = summary_writer
            self._graph_added_to_summary = False
        if session_manager is None:
            session_manager = SessionManager(
                local_init_op=self._local_init_op, ready_op=self._ready_op,
                ready_for_local_init_op=self._ready_for_local_init_op, graph=self._graph,
                recovery_wait_secs=self._recovery_wait_secs,
                local_init_run_options=self._local_init_run_options)
        self._session_manager = session_manager
        self._verify_setup()
        graph.finalize()

    # -- defaults from the graph's collections --------------------------------------------
    @staticmethod
    def _get_first_op_from_collection(key):
        found = _graph.get_collection(key)
        if len(found) > 1:
            _log.info("Found %d %s operations. Returning the first one.", len(found), key)
        return found[0] if found else None

    def _init_ready_op(self, ready_op, ready_for_local_init_op):
        if ready_op is Supervisor.USE_DEFAULT:
            ready_op = self._get_first_op_from_collection(GraphKeys.READY_OP)
            if ready_op is None:
                ready_op = variables.report_uninitialized_variables()
                _graph.add_to_collection(GraphKeys.READY_OP, ready_op)
        self._ready_op = ready_op
        if ready_for_local_init_op is Supervisor.USE_DEFAULT:
            ready_for_local_init_op = self._get_first_op_from_collection(
                GraphKeys.READY_FOR_LOCAL_INIT_OP)
        self._ready_for_local_init_op = ready_for_local_init_op

    def _init_init_op(self, init_op, init_feed_dict):
        if init_op is Supervisor.USE_DEFAULT:
            init_op = self._get_first_op_from_collection(GraphKeys.INIT_OP)
            if init_op is None:
                init_op = variables.global_variables_initializer()
                _graph.add_to_collection(GraphKeys.INIT_OP, init_op)
        self._init_op = init_op
        self._init_feed_dict = init_feed_dict

    def _init_local_init_op(self, local_init_op):
        if local_init_op is Supervisor.USE_DEFAULT:
            local_init_op = self._get_first_op_from_collection(GraphKeys.LOCAL_INIT_OP)
            if local_init_op is None:
                from tensorflux._src.ops.control.control_ops import group
                from tensorflux._src.ops.state.table_init import tables_initializer
                local_init_op = group(variables.local_variables_initializer(),
                                      tables_initializer())
                _graph.add_to_collection(GraphKeys.LOCAL_INIT_OP, local_init_op)
        self._local_init_op = local_init_op

    def _init_saver(self, saver):
        if saver is Supervisor.USE_DEFAULT:
            saver = self._get_first_op_from_collection(GraphKeys.SAVERS)
            if saver is None and variables.global_variables():
                saver = Saver()
                _graph.add_to_collection(GraphKeys.SAVERS, saver)
        self._saver = saver

    def _init_summary_op(self, summary_op):
        if summary_op is Supervisor.USE_DEFAULT:
            summary_op = self._get_first_op_from_collection(GraphKeys.SUMMARY_OP)
            if summary_op is None:
                from tensorflux._src.summary.summary_ops import merge_all
                summary_op = merge_all()
                if summary_op is not None:
                    _graph.add_to_collection(GraphKeys.SUMMARY_OP, summary_op)
        self._summary_op = summary_op

    def _init_global_step(self, global_step):
        if global_step is Supervisor.USE_DEFAULT:
            global_step = self._get_first_op_from_collection(GraphKeys.GLOBAL_STEP)
            if global_step is None:
                global_step = self._default_global_step_tensor()
                if global_step is not None:
                    _graph.add_to_collection(GraphKeys.GLOBAL_STEP, global_step)
        self._global_step = global_step

    @staticmethod
    def _default_global_step_tensor():
        try:
            gs = _graph.get_default_graph().get_tensor_by_name("global_step:0")
        except (KeyError, ValueError):
            return None
        if gs.dtype.base_dtype in (_dtypes.int32, _dtypes.int64):
            return gs
        _log.warning("Found 'global_step' is not an int type: %s", gs.dtype)
        return None

    def _verify_setup(self):
        if not self._is_chief:
            for op in self._graph.get_operations():
                if op.type in ("Variable", "VariableV2") and not op.device:
                    raise ValueError(f"When using replicas, all Variables must have their "
                                     f"device set: {op}")

    # -- properties ---------------------------------------------------------------------
    is_chief = property(lambda self: self._is_chief)
    session_manager = property(lambda self: self._session_manager)
    coord = property(lambda self: self._coord)
    init_op = property(lambda self: self._init_op)
    init_feed_dict = property(lambda self: self._init_feed_dict)
    ready_op = property(lambda self: self._ready_op)
    ready_for_local_init_op = property(lambda self: self._ready_for_local_init_op)
    summary_writer = property(lambda self: self._summary_writer)
    summary_op = property(lambda self: self._summary_op)
    save_summaries_secs = property(lambda self: self._save_summaries_secs)
    global_step = property(lambda self: self._global_step)
    saver = property(lambda self: self._saver)
    save_model_secs = property(lambda self: self._save_model_secs)
    save_path = property(lambda self: self._save_path)

    # -- sessions and services ------------------------------------------------------------
    def _write_graph(self):
        if self._summary_writer and not self._graph_added_to_summary:
            self._summary_writer.add_graph(self._graph)
            self._graph_added_to_summary = True

    def start_standard_services(self, sess):
        """Starts the checkpoint, summary and step-rate threads; returns them."""
        if not self._is_chief:
            raise RuntimeError("Only chief supervisor can start standard services. Because "
                               "only chief supervisors can write events.")
        if not self._logdir:
            _log.warning("Standard services need a 'logdir' passed to the SessionManager")
            return []
        if self._global_step is not None and self._summary_writer:
            # TensorBoard purges expired events after a START that carries a step.
            self._summary_writer.add_session_log(
                protos.SessionLog(status=protos.SessionLog.START),
                _global_step_value(sess, self._global_step))
        threads = []
        if self._save_summaries_secs and self._summary_writer:
            if self._summary_op is not None:
                threads.append(SVSummaryThread(self, sess))
            if self._global_step is not None:
                threads.append(SVStepCounterThread(self, sess))
        if self.saver and self._save_model_secs:
            threads.append(SVTimerCheckpointThread(self, sess))
        for t in threads:
            t.start()
        return threads

    def prepare_or_wait_for_session(self, master="", config=None, wait_for_checkpoint=False,
                                    max_wait_secs=7200, start_standard_services=True):
        """A ready Session (the chief restores or initializes it), with the standard
        services and queue runners started."""
        self._coord.clear_stop()
        if self._summary_writer:
            self._summary_writer.reopen()
        if self._is_chief:
            sess = self._session_manager.prepare_session(
                master, init_op=self.init_op, saver=self.saver, checkpoint_dir=self._logdir,
                wait_for_checkpoint=wait_for_checkpoint, max_wait_secs=max_wait_secs,
                config=config, init_feed_dict=self._init_feed_dict, init_fn=self._init_fn)
            self._write_graph()
            if start_standard_services:
                _log.info("Starting standard services.")
                self.start_standard_services(sess)
        else:
            sess = self._session_manager.wait_for_session(master, config=config,
                                                          max_wait_secs=max_wait_secs)
        if start_standard_services:
            _log.info("Starting queue runners.")
            self.start_queue_runners(sess)
        return sess

    def start_queue_runners(self, sess, queue_runners=None):
        """Starts the graph's (or the given) queue runners under this Coordinator."""
        if queue_runners is None:
            queue_runners = self._graph.get_collection(GraphKeys.QUEUE_RUNNERS)
        threads = []
        for qr in queue_runners:
            threads.extend(qr.create_threads(sess, coord=self._coord, daemon=True,
                                             start=True))
        return threads

    def loop(self, timer_interval_secs, target, args=None, kwargs=None):
        """Starts a LooperThread calling `target` every `timer_interval_secs`."""
        looper = coordinator.LooperThread(self._coord, timer_interval_secs, target=target,
                                          args=args, kwargs=kwargs)
        looper.start()
        return looper

    def stop(self, threads=None, close_summary_writer=True, ignore_live_threads=False):
        """Stops the services and joins them (re-raising a thread's exception)."""
        self._coord.request_stop()
        try:
            self._coord.join(threads, stop_grace_period_secs=self._stop_grace_secs,
                             ignore_live_threads=ignore_live_threads)
        finally:
            if close_summary_writer and self._summary_writer:
                self._summary_writer.add_session_log(
                    protos.SessionLog(status=protos.SessionLog.STOP))
                self._summary_writer.close()
                self._graph_added_to_summary = False

    def request_stop(self, ex=None):
        self._coord.request_stop(ex=ex)

    def should_stop(self):
        return self._coord.should_stop()

    def stop_on_exception(self):
        return self._coord.stop_on_exception()

    def wait_for_stop(self):
        self._coord.wait_for_stop()

    def summary_computed(self, sess, summary, global_step=None):
        """Writes a summary computed by the caller (at the global step by default)."""
        if not self._summary_writer:
            raise RuntimeError("Writing a summary requires a summary writer.")
        if global_step is None and self.global_step is not None:
            global_step = _global_step_value(sess, self.global_step)
        self._summary_writer.add_summary(summary, global_step)

    @contextlib.contextmanager
    def managed_session(self, master="", config=None, start_standard_services=True,
                        close_summary_writer=True):
        """A context manager: a prepared Session; on exit the services are stopped
        (an exception in the block is re-raised by stop(), OutOfRangeError is not)
        and the Session closed."""
        sess = None
        try:
            sess = self.prepare_or_wait_for_session(
                master=master, config=config, start_standard_services=start_standard_services)
            yield sess
        except Exception as e:  # noqa: BLE001 - reported through stop(), as TF1
            self.request_stop(e)
        finally:
            try:
                self.stop(close_summary_writer=close_summary_writer)
            finally:
                try:
                    if sess is not None:
                        sess.close()
                except Exception:  # noqa: BLE001 - as TF1: ignored
                    pass

    # TF1's CamelCase names of the same methods.
    PrepareSession = prepare_or_wait_for_session  # noqa: N815
    StartQueueRunners = start_queue_runners  # noqa: N815
    StartStandardServices = start_standard_services  # noqa: N815
    Stop = stop  # noqa: N815
    RequestStop = request_stop  # noqa: N815
    Loop = loop  # noqa: N815
    ShouldStop = should_stop  # noqa: N815
    StopOnException = stop_on_exception  # noqa: N815
    WaitForStop = wait_for_stop  # noqa: N815
    SummaryComputed = summary_computed  # noqa: N815


class SVSummaryThread(coordinator.LooperThread):
    """Runs the summary op every save_summaries_secs and writes the result."""

    def __init__(self, sv, sess):
        super().__init__(sv.coord, sv.save_summaries_secs)
        self._sv, self._sess = sv, sess

    def run_loop(self):
        if self._sv.global_step is not None:
            summary_strs, step = self._sess.run([self._sv.summary_op, self._sv.global_step])
        else:
            summary_strs, step = self._sess.run(self._sv.summary_op), None
        if self._sv.summary_writer:
            _log.info("Recording summary at step %s.", step)
            self._sv.summary_writer.add_summary(summary_strs, step)


class SVStepCounterThread(coordinator.LooperThread):
    """Writes the `global_step/sec` summary every save_summaries_secs."""

    def __init__(self, sv, sess, step_counter=None):
        super().__init__(sv.coord, sv.save_summaries_secs)
        self._sv, self._sess = sv, sess
        self._last_time, self._last_step = 0.0, 0
        self._step_counter = sv.global_step if step_counter is None else step_counter
        self._summary_tag = f"{self._step_counter.op.name}/sec"

    def start_loop(self):
        self._last_time = time.time()
        self._last_step = _global_step_value(self._sess, self._step_counter)

    def run_loop(self):
        current_step = _global_step_value(self._sess, self._step_counter)
        added = current_step - self._last_step
        self._last_step = current_step
        now = time.time()
        elapsed, self._last_time = now - self._last_time, now
        steps_per_sec = added / elapsed if elapsed > 0.0 else float("inf")
        summary = protos.Summary(value=[protos.Summary.Value(tag=self._summary_tag,
                                                             simple_value=steps_per_sec)])
        if self._sv.summary_writer:
            self._sv.summary_writer.add_summary(summary, current_step)
        _log.info("%s: %g", self._summary_tag, steps_per_sec)


class SVTimerCheckpointThread(coordinator.LooperThread):
    """Saves a checkpoint every save_model_secs (the first when it starts)."""

    def __init__(self, sv, sess):
        super().__init__(sv.coord, sv.save_model_secs)
        self._sv, self._sess = sv, sess

    def run_loop(self):
        _log.info("Saving checkpoint to path %s", self._sv.save_path)
        self._sv.saver.save(self._sess, self._sv.save_path, global_step=self._sv.global_step)
        if self._sv.summary_writer and self._sv.global_step is not None:
            step = _global_step_value(self._sess, self._sv.global_step)
            self._sv.summary_writer.add_session_log(
                protos.SessionLog(status=protos.SessionLog.CHECKPOINT,
                                  checkpoint_path=self._sv.save_path), step)


def basic_train_loop(supervisor, train_step_fn, args=None, kwargs=None, master=""):
    """Calls `train_step_fn(sess, *args, **kwargs)` in a managed session until the
    supervisor stops; starts over after an AbortedError (a restarted server), as TF1."""
    args = [] if args is None else args
    kwargs = {} if kwargs is None else kwargs
    should_retry = True
    while should_retry:
        try:
            should_retry = False
            with supervisor.managed_session(master) as sess:
                while not supervisor.should_stop():
                    train_step_fn(sess, *args, **kwargs)
        except errors.AbortedError:
            should_retry = True
