"""`tf.train.MonitoredSession` and `MonitoredTrainingSession`: a training loop's session.

It initializes or restores the variables (`Scaffold`, `ChiefSessionCreator`), calls the
hooks around every run, and ends cleanly: `OutOfRangeError` (end of input) stops the
loop without an error, and `close()` runs the hooks' `end`.

    with tf.train.MonitoredTrainingSession(checkpoint_dir=d, hooks=[...]) as sess:
        while not sess.should_stop():
            sess.run(train_op)
"""

from __future__ import annotations

import functools
import inspect
import logging

from tensorflux._src.framework import errors
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.graph_keys import GraphKeys
from tensorflux._src.train import basic_session_run_hooks as hooks_lib
from tensorflux._src.train.coordinator import Coordinator
from tensorflux._src.train.session_run_hook import (
    SessionRunArgs, SessionRunContext, SessionRunValues,
)

__all__ = ["Scaffold", "SessionCreator", "ChiefSessionCreator", "WorkerSessionCreator",
           "MonitoredSession", "SingularMonitoredSession", "MonitoredTrainingSession"]

logger = logging.getLogger("tensorflux")


class _UseDefault:
    def __repr__(self):
        return "USE_DEFAULT"


USE_DEFAULT = _UseDefault()


class Scaffold:
    """The ops that create and check a model's state; `finalize` fills in TF's defaults."""

    def __init__(self, init_op=None, init_feed_dict=None, init_fn=None, ready_op=None,
                 ready_for_local_init_op=None, local_init_op=None, summary_op=None,
                 saver=None, copy_from_scaffold=None):
        if copy_from_scaffold is not None:
            init_op = init_op or copy_from_scaffold.init_op
            init_feed_dict = init_feed_dict or copy_from_scaffold.init_feed_dict
            init_fn = init_fn or copy_from_scaffold.init_fn
            ready_op = ready_op or copy_from_scaffold.ready_op
            local_init_op = local_init_op or copy_from_scaffold.local_init_op
            summary_op = summary_op or copy_from_scaffold.summary_op
            saver = saver or copy_from_scaffold.saver
        self._init_fn = init_fn
        self.init_op, self.init_feed_dict = init_op, init_feed_dict
        self.ready_op, self.ready_for_local_init_op = ready_op, ready_for_local_init_op
        self.local_init_op, self.summary_op, self.saver = local_init_op, summary_op, saver
        self._finalized = False

    @property
    def init_fn(self):
        return self._init_fn

    @staticmethod
    def default_local_init_op():
        """TF1's default local init: the local variables' initializers and every table's
        (TABLE_INITIALIZERS), grouped."""
        from tensorflux._src.ops.control.control_ops import group
        from tensorflux._src.ops.state.table_init import tables_initializer
        from tensorflux._src.train import variables
        return group(variables.local_variables_initializer(), tables_initializer())

    def finalize(self):
        """Creates the default ops that were not given, then makes the graph read-only."""
        if self._finalized:
            return self
        from tensorflux._src.train import variables
        graph = _graph.get_default_graph()
        if self.init_op is None:
            self.init_op = variables.global_variables_initializer()
        if self.ready_op is None:
            self.ready_op = variables.report_uninitialized_variables()
        if self.local_init_op is None:
            self.local_init_op = _get_or_default(GraphKeys.LOCAL_INIT_OP,
                                                 Scaffold.default_local_init_op)
        if self.summary_op is None:
            from tensorflux._src.summary.summary_ops import merge_all
            self.summary_op = merge_all()
        if self.saver is None:
            savers = graph.get_collection(GraphKeys.SAVERS)
            if savers:
                self.saver = savers[0]
            else:
                from tensorflux._src.train.saver import Saver
                self.saver = Saver(allow_empty=True)
                graph.add_to_collection(GraphKeys.SAVERS, self.saver)
        graph.finalize()
        self._finalized = True
        return self


def _get_or_default(collection_key, default_constructor):
    """The op in `collection_key` (TF's Scaffold.get_or_default: one at most), else a new
    default one, added to the collection."""
    ops = _graph.get_collection(collection_key)
    if ops:
        if len(ops) > 1:
            raise RuntimeError(f"More than one item in collection {collection_key}. Please "
                               f"indicate which one to use by passing it to the constructor.")
        return ops[0]
    op = default_constructor()
    if op is not None:
        _graph.add_to_collection(collection_key, op)
    return op


class SessionCreator:
    def create_session(self):
        raise NotImplementedError


class ChiefSessionCreator(SessionCreator):
    """Creates a Session, then restores the latest checkpoint or runs the initializers."""

    def __init__(self, scaffold=None, master="", config=None, checkpoint_dir=None,
                 checkpoint_filename_with_path=None):
        self._scaffold = scaffold or Scaffold()
        self._master, self._config = master, config
        self._checkpoint_dir = checkpoint_dir
        self._checkpoint_path = checkpoint_filename_with_path

    def create_session(self):
        from tensorflux._src.runtime.session import Session
        from tensorflux._src.train.checkpoint_management import latest_checkpoint
        self._scaffold.finalize()
        session = Session(self._master, graph=_graph.get_default_graph(), config=self._config)
        path = self._checkpoint_path
        if path is None and self._checkpoint_dir:
            path = latest_checkpoint(self._checkpoint_dir)
        if path:
            self._scaffold.saver.restore(session, path)
            _run_missing_initializers(session)
        else:
            session.run(self._scaffold.init_op, feed_dict=self._scaffold.init_feed_dict)
            if self._scaffold.init_fn is not None:
                self._scaffold.init_fn(self._scaffold, session)
        if self._scaffold.local_init_op is not None:
            session.run(self._scaffold.local_init_op)
        not_ready = session.run(self._scaffold.ready_op)
        if getattr(not_ready, "size", 0):
            names = ", ".join(n.decode() if isinstance(n, bytes) else str(n) for n in not_ready)
            raise RuntimeError(f"Init operations did not make model ready. Variables not "
                               f"initialized: {names}")
        return session


def _run_missing_initializers(session):
    """Variables a checkpoint did not have (new in the model) start from their initializers."""
    from tensorflux._src.train import variables
    store = session._state.variables
    missing = [v for v in variables.global_variables() if v.op not in store]
    for v in missing:
        session.run(v.initializer)


class WorkerSessionCreator(ChiefSessionCreator):
    """In one process there is no chief to wait for: the same as ChiefSessionCreator."""

    def __init__(self, scaffold=None, master="", config=None, max_wait_secs=30 * 60):
        super().__init__(scaffold, master, config)


class MonitoredSession:
    """A session that runs hooks around each `run` and stops cleanly at the end of data."""

    def __init__(self, session_creator=None, hooks=None, stop_grace_period_secs=120):
        self._hooks = list(hooks or [])
        for hook in self._hooks:
            hook.begin()
        self._creator = session_creator or ChiefSessionCreator()
        self._sess = self._creator.create_session()
        self._coord = Coordinator()
        self._stop_grace_period_secs = stop_grace_period_secs
        # As TF1's coordinated session: the graph's queue runners start with the session
        # and are stopped and joined when it closes.
        self._runner_threads = _start_queue_runners(self._sess, self._coord)
        for hook in self._hooks:
            hook.after_create_session(self._sess, self._coord)
        self._should_stop = False
        self._closed = False

    @property
    def graph(self):
        return self._sess.graph

    def should_stop(self):
        return self._should_stop or self._closed or self._coord.should_stop()

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        """`Session.run` plus the hooks' extra fetches and feeds; hooks may stop the loop."""
        if self._closed:
            raise RuntimeError("Run called even after should_stop requested.")
        context = SessionRunContext(SessionRunArgs(fetches, feed_dict, options), self._sess)
        hook_args = [hook.before_run(context) for hook in self._hooks]
        options = _merge_run_options(options, [a.options for a in hook_args
                                               if a is not None and a.options is not None])
        if run_metadata is None:
            # As TF1, hooks always get a RunMetadata; the run records into it (a traced
            # run) only when asked to.
            from tensorflux._src.runtime.config import RunMetadata
            traced = options is not None and options.trace_level > 0
            hook_metadata = RunMetadata()
            run_metadata = hook_metadata if traced else None
        else:
            hook_metadata = run_metadata
        feeds = dict(feed_dict or {})
        for args in hook_args:
            if args is not None and args.feed_dict:
                overlap = set(feeds) & set(args.feed_dict)
                if overlap:
                    raise RuntimeError(f"Same tensor is fed by a SessionRunHook and user. "
                                       f"{sorted(str(t) for t in overlap)}")
                feeds.update(args.feed_dict)
        hook_fetches = {i: args.fetches for i, args in enumerate(hook_args)
                        if args is not None and args.fetches is not None}
        results = self._sess.run([fetches, hook_fetches], feed_dict=feeds, options=options,
                                 run_metadata=run_metadata)
        for i, hook in enumerate(self._hooks):
            hook.after_run(context, SessionRunValues(results[1].get(i), options,
                                                     hook_metadata))
        self._should_stop = self._should_stop or context.stop_requested
        return results[0]

    def run_step_fn(self, step_fn):
        """Calls `step_fn(step_context)` (a StepContext: `session` is the raw Session,
        `run_with_hooks` is `self.run`). `step_context.request_stop()` raises
        StopIteration out of here, which `with MonitoredSession()` swallows, and
        should_stop() is then True."""
        args = _fn_args(step_fn)
        if args != ("step_context",) and args != ("self", "step_context"):
            raise ValueError(f"`step_fn` may either have one `step_context` argument, or "
                             f"`self` and `step_context` arguments if it's an instance "
                             f"method. Got {args} instead.")
        try:
            return step_fn(MonitoredSession.StepContext(self._sess, self.run))
        except StopIteration:
            self._should_stop = True
            raise

    class StepContext:
        """What `run_step_fn` passes to `step_fn`."""

        def __init__(self, session, run_with_hooks_fn):
            self._session = session
            self._run_with_hooks_fn = run_with_hooks_fn

        @property
        def session(self):
            return self._session

        def run_with_hooks(self, *args, **kwargs):
            """Same as `MonitoredSession.run`."""
            return self._run_with_hooks_fn(*args, **kwargs)

        def request_stop(self):
            """Ends step_fn (StopIteration) and makes should_stop() True."""
            raise StopIteration("step_fn has requested the iterations to stop.")

    def close(self):
        self._close(run_hooks_end=True)

    def _close(self, run_hooks_end):
        if self._closed:
            return
        try:
            if run_hooks_end:
                for hook in self._hooks:
                    hook.end(self._sess)
        finally:
            self._coord.request_stop()
            self._closed = True
            try:
                if self._runner_threads:
                    self._coord.join(self._runner_threads,
                                     stop_grace_period_secs=self._stop_grace_period_secs,
                                     ignore_live_threads=True)
            finally:
                self._sess.close()

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        # End of input stops training cleanly, as in TF; hooks' end() runs only then
        # or on a normal exit, not after an error.
        clean = exc_type is None or issubclass(exc_type, (errors.OutOfRangeError,
                                                          StopIteration))
        self._close(run_hooks_end=clean)
        return exc_type is not None and clean


def _start_queue_runners(sess, coord):
    from tensorflux._src.queues.queue_runner import start_queue_runners
    if not sess.graph.get_collection(GraphKeys.QUEUE_RUNNERS):
        return []
    return start_queue_runners(sess, coord)


def _fn_args(fn):
    """The names of fn's positional arguments (as TF's function_utils.fn_args, but a
    bound method's `self` is left out; run_step_fn accepts both forms)."""
    if isinstance(fn, functools.partial):
        names = _fn_args(fn.func)
        return tuple(n for n in names[len(fn.args):] if n not in (fn.keywords or {}))
    target = fn.__call__ if not inspect.isroutine(fn) and callable(fn) else fn
    names = tuple(p.name for p in inspect.signature(target).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))
    return names


def _merge_run_options(options, hook_options):
    """The caller's RunOptions with the hooks' (the highest trace level, the shortest
    timeout), as TF1's hooked session merges them."""
    if not hook_options:
        return options
    from tensorflux._src.runtime.config import RunOptions
    merged = RunOptions(trace_level=options.trace_level if options else 0,
                        timeout_in_ms=options.timeout_in_ms if options else 0)
    for opts in hook_options:
        merged.trace_level = max(merged.trace_level, opts.trace_level)
        if opts.timeout_in_ms:
            merged.timeout_in_ms = min(t for t in (merged.timeout_in_ms, opts.timeout_in_ms)
                                       if t) if merged.timeout_in_ms else opts.timeout_in_ms
    return merged


class SingularMonitoredSession(MonitoredSession):
    """A MonitoredSession for one process, with access to the raw Session."""

    def __init__(self, hooks=None, scaffold=None, master="", config=None, checkpoint_dir=None,
                 stop_grace_period_secs=120, checkpoint_filename_with_path=None):
        creator = ChiefSessionCreator(scaffold, master, config, checkpoint_dir,
                                      checkpoint_filename_with_path)
        super().__init__(creator, hooks, stop_grace_period_secs)

    def raw_session(self):
        return self._sess


def MonitoredTrainingSession(master="", is_chief=True, checkpoint_dir=None,  # noqa: N802
                             scaffold=None, hooks=None, chief_only_hooks=None,
                             save_checkpoint_secs=USE_DEFAULT, save_summaries_steps=USE_DEFAULT,
                             save_summaries_secs=USE_DEFAULT, config=None,
                             stop_grace_period_secs=120, log_step_count_steps=100,
                             max_wait_secs=7200, save_checkpoint_steps=USE_DEFAULT,
                             summary_dir=None):
    """A MonitoredSession with TF1's default hooks for checkpoints, summaries and speed.

    Defaults as TF: a checkpoint every 600 s (or every `save_checkpoint_steps`), summaries
    every 100 steps, the step rate logged every 100 steps, all under `checkpoint_dir`.
    """
    if save_summaries_steps is USE_DEFAULT and save_summaries_secs is USE_DEFAULT:
        save_summaries_steps, save_summaries_secs = 100, None
    else:
        save_summaries_steps = None if save_summaries_steps is USE_DEFAULT \
            else save_summaries_steps
        save_summaries_secs = None if save_summaries_secs is USE_DEFAULT else save_summaries_secs
    if save_checkpoint_secs is USE_DEFAULT and save_checkpoint_steps is USE_DEFAULT:
        save_checkpoint_secs, save_checkpoint_steps = 600, None
    else:
        save_checkpoint_secs = None if save_checkpoint_secs is USE_DEFAULT \
            else save_checkpoint_secs
        save_checkpoint_steps = None if save_checkpoint_steps is USE_DEFAULT \
            else save_checkpoint_steps
    scaffold = scaffold or Scaffold()
    all_hooks = list(hooks or [])
    if not is_chief:
        return MonitoredSession(WorkerSessionCreator(scaffold, master, config), all_hooks,
                                stop_grace_period_secs)
    all_hooks.extend(chief_only_hooks or [])
    creator = ChiefSessionCreator(scaffold, master, config, checkpoint_dir)
    summary_dir = summary_dir or checkpoint_dir
    if summary_dir:
        if log_step_count_steps and log_step_count_steps > 0:
            all_hooks.append(hooks_lib.StepCounterHook(every_n_steps=log_step_count_steps,
                                                       output_dir=summary_dir))
        if save_summaries_steps or save_summaries_secs:
            all_hooks.append(hooks_lib.SummarySaverHook(
                scaffold=scaffold, save_steps=save_summaries_steps,
                save_secs=save_summaries_secs, output_dir=summary_dir))
    if checkpoint_dir and (save_checkpoint_secs or save_checkpoint_steps):
        all_hooks.append(hooks_lib.CheckpointSaverHook(
            checkpoint_dir, save_steps=save_checkpoint_steps, save_secs=save_checkpoint_secs,
            scaffold=scaffold))
    return MonitoredSession(creator, all_hooks, stop_grace_period_secs)
