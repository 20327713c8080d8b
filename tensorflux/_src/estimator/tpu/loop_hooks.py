"""Session hooks of TPUEstimator's training loop: how many steps the next loop runs
(so max_steps lands exactly), host_call on each step's tensors, and TF's
ExamplesPerSecondHook ("global_step/sec", "examples/sec")."""

from __future__ import annotations

import logging
import time

import numpy as np

from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.graph_keys import GraphKeys
from tensorflux._src.train.session_run_hook import SessionRunArgs, SessionRunHook

logger = logging.getLogger("tensorflux.estimator")


class LoopIterationsHook(SessionRunHook):
    """Feeds each loop its number of steps: iterations_per_loop, or fewer for the last
    loop so that the global step ends at max_steps (or start + steps) exactly, as TF's
    _TPUStopAtStepHook; stops when it is reached."""

    def __init__(self, iterations, global_step_after, per_loop, steps, max_steps):
        self._iterations, self._after = iterations, global_step_after
        self._per_loop, self._steps, self._max_steps = per_loop, steps, max_steps

    def after_create_session(self, session, coord):
        graph = session.graph
        (global_step,) = graph.get_collection(GraphKeys.GLOBAL_STEP)
        self._step = int(session.run(global_step))
        self._last = self._max_steps
        if self._last is None and self._steps is not None:
            self._last = self._step + self._steps

    def before_run(self, run_context):
        n = self._per_loop
        if self._last is not None:
            n = max(0, min(n, self._last - self._step))
        return SessionRunArgs(self._after, feed_dict={self._iterations: n})

    def after_run(self, run_context, run_values):
        self._step = int(run_values.results)
        if self._last is not None and self._step >= self._last:
            run_context.request_stop()


class HostCallLoopHook(SessionRunHook):
    """TF's host_call in a training loop: after each loop, runs the host_call ops once
    per step with that step's tensors (every `every_n` global steps), as TF's outfeed
    dequeue thread does."""

    def __init__(self, stacked, steps_run, placeholders, ops, global_step_after, every_n):
        self._stacked, self._steps_run = stacked, steps_run
        self._placeholders, self._ops = placeholders, ops
        self._after, self._every_n = global_step_after, every_n

    def before_run(self, run_context):
        return SessionRunArgs((self._stacked, self._steps_run, self._after))

    def after_run(self, run_context, run_values):
        stacked, n, end = run_values.results
        first = int(end) - int(n) + 1  # the global step the first iteration ran as
        for i in range(int(n)):
            if (first + i - 1) % self._every_n:
                continue
            feed = {p: value[i] for p, value in zip(self._placeholders, stacked)}
            run_context.session.run(self._ops, feed)


class ExamplesPerSecondHook(SessionRunHook):
    """TF's ExamplesPerSecondHook: logs (and writes as summaries) global_step/sec and
    examples/sec every `every_n_steps` global steps; with loops it measures whole loops."""

    def __init__(self, batch_size, every_n_steps=100, output_dir=None):
        self._batch_size, self._every_n = batch_size, every_n_steps
        self._output_dir = output_dir

    def begin(self):
        self._global_step = _graph.get_default_graph().get_collection(
            GraphKeys.GLOBAL_STEP)[0]
        self._last_time = self._last_step = None

    def before_run(self, run_context):
        return SessionRunArgs(self._global_step)

    def after_run(self, run_context, run_values):
        # results: the global step at the start of the run; read its end value.
        step = int(run_context.session.run(self._global_step))
        now = time.time()
        if self._last_step is None:
            self._last_time, self._last_step = now, int(run_values.results)
            return
        if step - self._last_step < self._every_n:
            return
        steps_per_sec = (step - self._last_step) / max(now - self._last_time, 1e-9)
        examples_per_sec = steps_per_sec * (self._batch_size or 0)
        logger.info("global_step/sec: %g", steps_per_sec)
        logger.info("examples/sec: %g", examples_per_sec)
        if self._output_dir:
            from tensorflux._src.framework.protos import Summary
            from tensorflux._src.summary.writer import FileWriterCache
            summary = Summary()
            summary.value.add(tag="global_step/sec", simple_value=float(steps_per_sec))
            summary.value.add(tag="examples/sec", simple_value=float(examples_per_sec))
            FileWriterCache.get(self._output_dir).add_summary(summary, step)
        self._last_time, self._last_step = now, step


def as_numpy(value):
    return np.asarray(value)
