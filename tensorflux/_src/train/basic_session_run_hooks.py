"""TF1's standard hooks: stop at a step, check for NaN, log, save checkpoints and
summaries, count steps per second, run final ops, feed inputs."""

from __future__ import annotations

import logging
import os
import time

import numpy as np

from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.operation import Tensor
from tensorflux._src.train.session_run_hook import SessionRunArgs, SessionRunHook
from tensorflux._src.train.timeline import Timeline, run_metadata_proto

__all__ = ["SecondOrStepTimer", "StopAtStepHook", "NanLossDuringTrainingError",
           "NanTensorHook", "LoggingTensorHook", "CheckpointSaverListener",
           "CheckpointSaverHook", "SummarySaverHook", "StepCounterHook", "FinalOpsHook",
           "FeedFnHook", "GlobalStepWaiterHook", "ProfilerHook"]

logger = logging.getLogger("tensorflux")


def _global_step_tensor(hook_name):
    from tensorflux._src.train.optimizer import get_global_step
    step = get_global_step()
    if step is None:
        raise RuntimeError(f"Global step should be created to use {hook_name}.")
    return step


def _as_graph_element(obj):
    graph = _graph.get_default_graph()
    if isinstance(obj, str):
        return graph.as_graph_element(obj)
    if hasattr(obj, "_as_graph_element") and not isinstance(obj, Tensor):
        return obj._as_graph_element()
    return obj


class SecondOrStepTimer:
    """Says when a hook is due: every `every_secs` seconds or every `every_steps` steps."""

    def __init__(self, every_secs=None, every_steps=None):
        if (every_secs is None) == (every_steps is None):
            raise ValueError("Either every_secs or every_steps should be provided.")
        self._every_secs, self._every_steps = every_secs, every_steps
        self.reset()

    def reset(self):
        self._last_time, self._last_step = None, None

    def should_trigger_for_step(self, step):
        if self._last_step is None:
            return True
        if self._last_step == step:
            return False
        if self._every_secs is not None:
            return time.time() >= self._last_time + self._every_secs
        return step >= self._last_step + self._every_steps

    def update_last_triggered_step(self, step):
        """Records a trigger; returns (seconds, steps) since the previous one, or Nones."""
        now = time.time()
        elapsed = (None, None) if self._last_time is None else (now - self._last_time,
                                                                step - self._last_step)
        self._last_time, self._last_step = now, step
        return elapsed

    def last_triggered_step(self):
        return self._last_step


class StopAtStepHook(SessionRunHook):
    """Requests a stop once the global step reaches `last_step` (or start + num_steps)."""

    def __init__(self, num_steps=None, last_step=None):
        if num_steps is None and last_step is None:
            raise ValueError("One of num_steps or last_step must be specified.")
        if num_steps is not None and last_step is not None:
            raise ValueError("Only one of num_steps or last_step can be specified.")
        if num_steps is not None and num_steps < 0:
            raise ValueError("num_steps should be non-negative.")
        self._num_steps, self._last_step = num_steps, last_step

    def begin(self):
        self._global_step = _global_step_tensor("StopAtStepHook")

    def after_create_session(self, session, coord):
        step = session.run(self._global_step)
        if self._last_step is None:
            self._last_step = step + self._num_steps

    def before_run(self, run_context):
        return SessionRunArgs(self._global_step)

    def after_run(self, run_context, run_values):
        # The fetched value is from before this step's update: +1 is the step just done.
        if run_values.results + 1 >= self._last_step:
            step = run_context.session.run(self._global_step)
            if step >= self._last_step:
                run_context.request_stop()


class NanLossDuringTrainingError(RuntimeError):
    def __str__(self):
        return "NaN loss during training."


class NanTensorHook(SessionRunHook):
    """Fails (or stops) training when `loss_tensor` becomes NaN."""

    def __init__(self, loss_tensor, fail_on_nan_loss=True):
        self._loss_tensor, self._fail = loss_tensor, fail_on_nan_loss

    def before_run(self, run_context):
        return SessionRunArgs(self._loss_tensor)

    def after_run(self, run_context, run_values):
        if np.isnan(run_values.results):
            if self._fail:
                logger.error("Model diverged with loss = NaN.")
                raise NanLossDuringTrainingError
            logger.warning("Model diverged with loss = NaN.")
            run_context.request_stop()


class LoggingTensorHook(SessionRunHook):
    """Logs tensors' values every N local steps, every N seconds, and/or at the end."""

    def __init__(self, tensors, every_n_iter=None, every_n_secs=None, at_end=False,
                 formatter=None):
        only_log_at_end = at_end and every_n_iter is None and every_n_secs is None
        if not only_log_at_end and (every_n_iter is None) == (every_n_secs is None):
            raise ValueError("either at_end and/or exactly one of every_n_iter and "
                             "every_n_secs must be provided.")
        if every_n_iter is not None and every_n_iter <= 0:
            raise ValueError(f"invalid every_n_iter={every_n_iter}.")
        if not isinstance(tensors, dict):
            self._tag_order = list(tensors)
            tensors = {item: item for item in tensors}
        else:
            self._tag_order = sorted(tensors)
        self._tensors = tensors
        self._formatter = formatter
        self._timer = (SecondOrStepTimer(every_secs=every_n_secs, every_steps=every_n_iter)
                       if not only_log_at_end else None)
        self._log_at_end = at_end

    def begin(self):
        if self._timer is not None:
            self._timer.reset()
        self._iter_count = 0
        self._current = {tag: _as_graph_element(t) for tag, t in self._tensors.items()}

    def before_run(self, run_context):
        self._should_trigger = (self._timer is not None
                                and self._timer.should_trigger_for_step(self._iter_count))
        return SessionRunArgs(self._current) if self._should_trigger else None

    def _log(self, values):
        if self._formatter:
            logger.info(self._formatter(values))
            return
        stats = ", ".join(f"{tag} = {values[tag]}" for tag in self._tag_order)
        elapsed = self._timer.update_last_triggered_step(self._iter_count)[0] \
            if self._timer is not None else None
        logger.info("%s (%.3f sec)" % (stats, elapsed) if elapsed is not None else stats)

    def after_run(self, run_context, run_values):
        if self._should_trigger:
            self._log(run_values.results)
        self._iter_count += 1

    def end(self, session):
        if self._log_at_end:
            self._log(session.run(self._current))


class CheckpointSaverListener:
    """Called around each checkpoint a CheckpointSaverHook writes."""

    def begin(self):
        pass

    def before_save(self, session, global_step_value):
        pass

    def after_save(self, session, global_step_value):
        """Return True to request that training stops."""

    def end(self, session, global_step_value):
        pass


class CheckpointSaverHook(SessionRunHook):
    """Saves a checkpoint every N seconds or steps, after the first step, and at the end."""

    def __init__(self, checkpoint_dir, save_secs=None, save_steps=None, saver=None,
                 checkpoint_basename="model.ckpt", scaffold=None, listeners=None):
        if saver is not None and scaffold is not None:
            raise ValueError("You cannot provide both saver and scaffold.")
        self._saver, self._scaffold = saver, scaffold
        self._checkpoint_dir = checkpoint_dir
        self._save_path = os.path.join(checkpoint_dir, checkpoint_basename)
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)
        self._listeners = list(listeners or [])

    def begin(self):
        self._global_step = _global_step_tensor("CheckpointSaverHook")
        for listener in self._listeners:
            listener.begin()

    def after_create_session(self, session, coord):
        step = session.run(self._global_step)
        self._save(session, step)  # TF saves right away, so a restart has a checkpoint
        self._timer.update_last_triggered_step(step)

    def before_run(self, run_context):
        return SessionRunArgs(self._global_step)

    def _set_steps_per_run(self, steps_per_run):
        """TF's hook for loops running several steps per Session.run (TPUEstimator's
        iterations_per_loop): the global step moves that much in one run."""
        self._steps_per_run = steps_per_run

    def after_run(self, run_context, run_values):
        step = run_values.results + getattr(self, "_steps_per_run", 1)
        if self._timer.should_trigger_for_step(step):
            step = run_context.session.run(self._global_step)
            if self._timer.should_trigger_for_step(step):
                self._timer.update_last_triggered_step(step)
                if self._save(run_context.session, step):
                    run_context.request_stop()

    def end(self, session):
        step = session.run(self._global_step)
        if step != self._timer.last_triggered_step():
            self._save(session, step)
        for listener in self._listeners:
            listener.end(session, step)

    def _get_saver(self):
        if self._saver is not None:
            return self._saver
        if self._scaffold is not None:
            return self._scaffold.saver
        from tensorflux._src.train.saver import Saver
        self._saver = Saver()
        return self._saver

    def _save(self, session, step):
        logger.info("Saving checkpoints for %d into %s.", step, self._save_path)
        for listener in self._listeners:
            listener.before_save(session, step)
        self._get_saver().save(session, self._save_path, global_step=step)
        stop = False
        for listener in self._listeners:
            stop = bool(listener.after_save(session, step)) or stop
        return stop


class SummarySaverHook(SessionRunHook):
    """Runs the summary op every N steps or seconds and writes it to an event file."""

    def __init__(self, save_steps=None, save_secs=None, output_dir=None, summary_writer=None,
                 scaffold=None, summary_op=None):
        if (scaffold is None) == (summary_op is None):
            raise ValueError("Exactly one of scaffold or summary_op must be provided.")
        self._summary_op, self._scaffold = summary_op, scaffold
        self._writer, self._output_dir = summary_writer, output_dir
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)

    def begin(self):
        if self._writer is None and self._output_dir:
            from tensorflux._src.summary.writer import FileWriterCache
            self._writer = FileWriterCache.get(self._output_dir)
        self._global_step = _global_step_tensor("SummarySaverHook")
        self._next_step = None

    def _summary(self):
        return self._summary_op if self._summary_op is not None else self._scaffold.summary_op

    def before_run(self, run_context):
        self._request = self._next_step is None or self._timer.should_trigger_for_step(
            self._next_step)
        fetches = {"global_step": self._global_step}
        if self._request and self._summary() is not None:
            fetches["summary"] = self._summary()
        return SessionRunArgs(fetches)

    def after_run(self, run_context, run_values):
        if self._writer is None:
            return
        step = int(run_values.results["global_step"])
        if self._next_step is None:
            from tensorflux._src.framework.protos import SessionLog
            self._writer.add_session_log(SessionLog(status=SessionLog.START), step)
        if self._request:
            self._timer.update_last_triggered_step(step)
            if "summary" in run_values.results:
                self._writer.add_summary(run_values.results["summary"], step)
        self._next_step = step + 1

    def end(self, session):
        if self._writer is not None:
            self._writer.flush()


class StepCounterHook(SessionRunHook):
    """Logs (and writes as the `global_step/sec` summary) the training speed."""

    def __init__(self, every_n_steps=100, every_n_secs=None, output_dir=None,
                 summary_writer=None):
        if (every_n_steps is None) == (every_n_secs is None):
            raise ValueError("exactly one of every_n_steps and every_n_secs should be "
                             "provided.")
        self._timer = SecondOrStepTimer(every_steps=every_n_steps, every_secs=every_n_secs)
        self._writer, self._output_dir = summary_writer, output_dir
        self._tag = "global_step/sec"

    def begin(self):
        if self._writer is None and self._output_dir:
            from tensorflux._src.summary.writer import FileWriterCache
            self._writer = FileWriterCache.get(self._output_dir)
        self._global_step = _global_step_tensor("StepCounterHook")

    def before_run(self, run_context):
        return SessionRunArgs(self._global_step)

    def after_run(self, run_context, run_values):
        step = int(run_values.results) + 1
        if self._timer.should_trigger_for_step(step):
            seconds, steps = self._timer.update_last_triggered_step(step)
            if seconds:
                rate = steps / seconds
                logger.info("%s: %g", self._tag, rate)
                if self._writer is not None:
                    from tensorflux._src.framework.protos import Summary
                    self._writer.add_summary(
                        Summary(value=[Summary.Value(tag=self._tag, simple_value=rate)]), step)


class FinalOpsHook(SessionRunHook):
    """Runs `final_ops` when the session ends; their values are in `final_ops_values`."""

    def __init__(self, final_ops, final_ops_feed_dict=None):
        self._final_ops, self._feed = final_ops, final_ops_feed_dict
        self._final_ops_values = None

    @property
    def final_ops_values(self):
        return self._final_ops_values

    def end(self, session):
        if self._final_ops is not None:
            self._final_ops_values = session.run(self._final_ops, feed_dict=self._feed)


class FeedFnHook(SessionRunHook):
    """Adds `feed_fn()` to the feeds of every run."""

    def __init__(self, feed_fn):
        self.feed_fn = feed_fn

    def before_run(self, run_context):
        return SessionRunArgs(fetches=None, feed_dict=self.feed_fn())


class GlobalStepWaiterHook(SessionRunHook):
    """Delays the first run until the global step reaches `wait_until_step` (a worker
    waiting for the chief), polling every half second."""

    def __init__(self, wait_until_step):
        self._wait_until_step = wait_until_step

    def begin(self):
        self._worker_is_started = False
        self._global_step = _global_step_tensor("_GlobalStepWaiterHook")

    def before_run(self, run_context):
        if self._worker_is_started:
            return None
        if self._wait_until_step <= 0:
            self._worker_is_started = True
            return None
        logger.info("Waiting for global step %d before starting training.",
                    self._wait_until_step)
        last_logged_step = 0
        while True:
            current_step = run_context.session.run(self._global_step)
            if current_step >= self._wait_until_step:
                self._worker_is_started = True
                return None
            if current_step - last_logged_step > 1000:
                logger.info("Waiting for global step %d before starting training. Current "
                            "step is %d.", self._wait_until_step, current_step)
                last_logged_step = current_step
            time.sleep(0.5)


class ProfilerHook(SessionRunHook):
    """Every `save_steps` steps (or `save_secs` seconds) traces a run and writes its
    Chrome trace to `output_dir/timeline-<step>.json` (and the RunMetadata to the
    event file as `step_<step>`)."""

    def __init__(self, save_steps=None, save_secs=None, output_dir="", show_dataflow=True,
                 show_memory=False):
        self._output_file = os.path.join(output_dir, "timeline-{}.json")
        self._output_dir = output_dir
        self._file_writer = None
        self._show_dataflow = show_dataflow
        self._show_memory = show_memory
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)

    def begin(self):
        from tensorflux._src.summary.writer import FileWriterCache
        self._file_writer = FileWriterCache.get(self._output_dir)
        self._next_step = None
        self._global_step = _global_step_tensor("ProfilerHook")

    def before_run(self, run_context):
        from tensorflux._src.runtime.config import RunOptions
        self._request_summary = (self._next_step is not None
                                 and self._timer.should_trigger_for_step(self._next_step))
        options = RunOptions(trace_level=RunOptions.FULL_TRACE) if self._request_summary \
            else None
        return SessionRunArgs({"global_step": self._global_step}, options=options)

    def after_run(self, run_context, run_values):
        stale_step = int(run_values.results["global_step"])
        if self._next_step is None:
            # The timer starts now: the first trace is N steps or seconds away.
            self._timer.update_last_triggered_step(stale_step)
        step = stale_step + 1
        if self._request_summary:
            step = int(run_context.session.run(self._global_step))
            self._timer.update_last_triggered_step(step)
            self._save(step, self._output_file.format(step),
                       run_values.run_metadata.step_stats, run_context.session.graph)
            self._file_writer.add_run_metadata(run_metadata_proto(run_values.run_metadata),
                                               f"step_{step}")
        self._next_step = step + 1

    def _save(self, step, save_path, step_stats, graph):
        logger.info("Saving timeline for %d into '%s'.", step, save_path)
        trace = Timeline(step_stats, graph).generate_chrome_trace_format(
            show_dataflow=self._show_dataflow, show_memory=self._show_memory)
        with open(save_path, "w") as f:
            f.write(trace)
