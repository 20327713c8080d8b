"""TrainSpec, EvalSpec and train_and_evaluate: locally (no TF_CONFIG cluster) train,
evaluate after checkpoints (throttled), run the exporters; in a cluster, each task's
role as TF 1.15's _TrainingExecutor defines it (distributed_training.py)."""

from __future__ import annotations

import logging
import os
import time

from tensorflux._src.estimator.run_config import TaskType
from tensorflux._src.train.basic_session_run_hooks import CheckpointSaverListener
from tensorflux._src.train.session_run_hook import SessionRunHook

logger = logging.getLogger("tensorflux.estimator")


def _check_hooks(hooks):
    hooks = tuple(hooks or [])
    for hook in hooks:
        if not isinstance(hook, SessionRunHook):
            raise TypeError(f"All hooks must be SessionRunHook instances, given: {hook}")
    return hooks


class TrainSpec:
    def __init__(self, input_fn, max_steps=None, hooks=None):
        if not callable(input_fn):
            raise TypeError(f"`input_fn` must be callable, given: {input_fn}")
        if max_steps is not None and max_steps <= 0:
            raise ValueError(f"Must specify max_steps > 0, given: {max_steps}")
        self.input_fn, self.max_steps, self.hooks = input_fn, max_steps, _check_hooks(hooks)


class EvalSpec:
    def __init__(self, input_fn, steps=100, name=None, hooks=None, exporters=None,
                 start_delay_secs=120, throttle_secs=600):
        if not callable(input_fn):
            raise TypeError(f"`input_fn` must be callable, given: {input_fn}")
        if steps is not None and steps <= 0:
            raise ValueError(f"Must specify steps > 0, given: {steps}")
        if name is not None and not isinstance(name, str):
            raise TypeError(f"`name` must be string, given: {name}")
        if start_delay_secs < 0:
            raise ValueError(f"Must specify start_delay_secs >= 0, given: {start_delay_secs}")
        if throttle_secs < 0:
            raise ValueError(f"Must specify throttle_secs >= 0, given: {throttle_secs}")
        from tensorflux._src.estimator.export import Exporter
        if exporters is None:
            exporters = ()
        elif isinstance(exporters, Exporter):
            exporters = (exporters,)
        exporters = tuple(exporters)
        names = set()
        for exporter in exporters:
            if not isinstance(exporter, Exporter):
                raise TypeError(f"`exporters` must be an Exporter, an iterable of Exporter, "
                                f"or `None`, found {exporter}.")
            if exporter.name in names:
                raise ValueError(f"`exporters` must have unique names. Such a name cannot be "
                                 f"`None`. {[e.name for e in exporters]} was given.")
            names.add(exporter.name)
        self.input_fn, self.steps, self.name = input_fn, steps, name
        self.hooks, self.exporters = _check_hooks(hooks), exporters
        self.start_delay_secs, self.throttle_secs = start_delay_secs, throttle_secs


class _Evaluator:
    """Evaluates a checkpoint and runs the exporters on it (TF's _Evaluator)."""

    def __init__(self, estimator, eval_spec, max_training_steps):
        self._estimator, self._spec = estimator, eval_spec
        self._max_steps = max_training_steps
        self._previous_ckpt = None
        self.last_result, self.last_exports = None, []
        self._last_warning_time = 0.0

    @property
    def previous_checkpoint(self):
        return self._previous_ckpt

    def evaluate_new_checkpoint(self):
        """Evaluates and exports the latest checkpoint if it is new (the evaluator
        task); returns the result, or None when there is no new checkpoint."""
        checkpoint = self._estimator.latest_checkpoint()
        if not checkpoint:
            self._warn_every_10_minutes("Estimator is not trained yet. Will start an "
                                        "evaluation when a checkpoint is ready.")
            return None
        if checkpoint == self._previous_ckpt:
            self._warn_every_10_minutes(
                "No new checkpoint ready for evaluation. Skip the current evaluation pass "
                "as evaluation results are expected to be same for the same checkpoint.")
            return None
        self._last_warning_time = 0.0
        return self.evaluate_and_export()[0]

    def _warn_every_10_minutes(self, message):
        now = time.time()
        if now - self._last_warning_time > 600:
            logger.warning(message)
            self._last_warning_time = now

    def evaluate_and_export(self, is_final=False):
        checkpoint = self._estimator.latest_checkpoint()
        if not checkpoint:
            logger.warning("Estimator is not trained yet. Will start an evaluation when a "
                           "checkpoint is ready.")
            return self.last_result, self.last_exports
        if checkpoint == self._previous_ckpt and not is_final:
            logger.warning("Skipping the current checkpoint eval due to throttle secs.")
            return self.last_result, self.last_exports
        if checkpoint != self._previous_ckpt or self.last_result is None:
            self.last_result = self._estimator.evaluate(
                self._spec.input_fn, steps=self._spec.steps, hooks=self._spec.hooks,
                checkpoint_path=checkpoint, name=self._spec.name)
        step = self.last_result["global_step"]
        is_final = is_final or (self._max_steps is not None and step >= self._max_steps)
        exports = []
        for exporter in self._spec.exporters:
            path = os.path.join(self._estimator.model_dir, "export", exporter.name)
            exports.append(exporter.export(self._estimator, path, checkpoint,
                                           self.last_result, is_final))
        self._previous_ckpt = checkpoint
        self.last_exports = exports
        return self.last_result, exports


class _NewCheckpointListenerForEvaluate(CheckpointSaverListener):
    """Evaluates after a checkpoint is written, at most once per throttle_secs."""

    def __init__(self, evaluator, throttle_secs):
        self._evaluator, self._throttle_secs = evaluator, throttle_secs
        self._last_eval_time = None

    def begin(self):
        self._last_eval_time = time.time()  # TF: the first eval waits throttle_secs too

    def after_save(self, session, global_step_value):
        if time.time() - self._last_eval_time >= self._throttle_secs:
            self._last_eval_time = time.time()
            self._evaluator.evaluate_and_export()


def train_and_evaluate(estimator, train_spec, eval_spec):
    """Trains `estimator`, evaluating after checkpoints and once at the end; returns
    (final eval result, export results), as TF 1.15 / TF 2.x do. In a TF_CONFIG cluster
    each task does its role's part (TF's _TrainingExecutor.run_<task type>) and the call
    returns None; see distributed_training.py for how the roles map onto Ray."""
    from tensorflux._src.estimator.estimator import Estimator
    if not isinstance(estimator, Estimator):
        raise TypeError(f"`estimator` must have type `tf.estimator.Estimator`. Got: "
                        f"{type(estimator)}")
    if not isinstance(train_spec, TrainSpec):
        raise TypeError(f"`train_spec` must have type `tf.estimator.TrainSpec`. Got: "
                        f"{type(train_spec)}")
    if not isinstance(eval_spec, EvalSpec):
        raise TypeError(f"`eval_spec` must have type `tf.estimator.EvalSpec`. Got: "
                        f"{type(eval_spec)}")
    config = estimator.config
    if not config.cluster_spec and config.task_type != TaskType.EVALUATOR:
        return _run_local(estimator, train_spec, eval_spec)
    if not config.task_type:
        raise ValueError("`estimator.config` must have task_type set. This usually means "
                         "TF_CONFIG environment is not set correctly.")
    if config.task_type == "local":
        raise ValueError("`task.type` in TF_CONFIG cannot be `local`. Leaving `cluster` and "
                         "`task` properties in TF_CONFIG absent triggers train and evaluate "
                         "`Estimator` locally (non-distributed).")
    run = _ROLES.get(config.task_type)
    if run is None:
        raise ValueError(f"Task type {config.task_type} is not supported. Supported task "
                         f"types are {sorted(_ROLES)}")
    run(estimator, train_spec, eval_spec)
    return None


def _run_local(estimator, train_spec, eval_spec):
    if train_spec.max_steps is None:
        logger.warning("train_spec.max_steps is None: training runs until input_fn ends.")
    evaluator = _Evaluator(estimator, eval_spec, train_spec.max_steps)
    listener = _NewCheckpointListenerForEvaluate(evaluator, eval_spec.throttle_secs)
    config = estimator.config
    if not (config.save_checkpoints_steps or config.save_checkpoints_secs):
        raise ValueError("train_and_evaluate needs checkpoints: set one of "
                         "RunConfig.save_checkpoints_steps or save_checkpoints_secs.")
    logger.info("Start train and evaluate loop. The evaluate will happen after every "
                "checkpoint. Checkpoint frequency is determined based on RunConfig "
                "arguments: save_checkpoints_steps %s or save_checkpoints_secs %s.",
                config.save_checkpoints_steps, config.save_checkpoints_secs)
    estimator.train(train_spec.input_fn, hooks=list(train_spec.hooks),
                    max_steps=train_spec.max_steps, saving_listeners=[listener])
    return evaluator.evaluate_and_export(is_final=True)


# -- the roles of a TF_CONFIG cluster (TF 1.15's _TrainingExecutor.run_<type>) -------------
def _train_distributed(estimator, train_spec, on_checkpoint=None):
    from tensorflux._src.estimator import distributed_training
    config = estimator.config
    if config.num_ps_replicas == 0 and config.num_worker_replicas == 1:
        # A one-node cluster trains locally, as TF (its session master is '').
        estimator.train(train_spec.input_fn, hooks=list(train_spec.hooks),
                        max_steps=train_spec.max_steps)
        return
    distributed_training.train_on_parameter_servers(estimator, train_spec, on_checkpoint)


def _run_chief(estimator, train_spec, eval_spec):
    _train_distributed(estimator, train_spec)


def _run_master(estimator, train_spec, eval_spec):
    """The legacy `master`: trains like the chief and evaluates after checkpoints
    (throttled), and once the training has ended."""
    evaluator = _Evaluator(estimator, eval_spec, train_spec.max_steps)
    last = [time.time()]

    def on_checkpoint(step, prefix):
        if time.time() - last[0] >= eval_spec.throttle_secs:
            last[0] = time.time()
            evaluator.evaluate_and_export()
        else:
            logger.info("Skip the current checkpoint eval due to throttle secs (%s secs).",
                        eval_spec.throttle_secs)

    _train_distributed(estimator, train_spec, on_checkpoint)
    evaluator.evaluate_and_export(is_final=True)


def _run_worker(estimator, train_spec, eval_spec):
    from tensorflux._src.estimator import distributed_training
    distributed_training.wait_for_training_end(estimator, train_spec.max_steps, "worker")


def _run_ps(estimator, train_spec, eval_spec):
    from tensorflux._src.estimator import distributed_training
    distributed_training.wait_for_training_end(estimator, train_spec.max_steps, "ps")


def _run_evaluator(estimator, train_spec, eval_spec):
    """TF's continuous evaluation: after start_delay_secs, evaluate (and export) each
    new checkpoint at most once per throttle_secs, until one reaches train max_steps
    (or, without max_steps, until the chief has ended training and its last
    checkpoint is evaluated)."""
    from tensorflux._src.estimator import distributed_training
    if eval_spec.start_delay_secs:
        logger.info("Waiting %f secs before starting eval.", eval_spec.start_delay_secs)
        time.sleep(eval_spec.start_delay_secs)
    evaluator = _Evaluator(estimator, eval_spec, train_spec.max_steps)
    max_steps = train_spec.max_steps
    while True:
        start = time.time()
        ended = distributed_training.read_done(estimator.model_dir)  # before evaluating
        result = evaluator.evaluate_new_checkpoint()
        if result is not None and max_steps and result["global_step"] >= max_steps:
            logger.info("Exiting evaluation, global_step=%s >= train max_steps=%s",
                        result["global_step"], max_steps)
            return
        if ended is not None and result is None and \
                evaluator.previous_checkpoint == estimator.latest_checkpoint():
            logger.info("Exiting evaluation: training ended at global step %d and its "
                        "last checkpoint is evaluated.", ended)
            return
        difference = eval_spec.throttle_secs - (time.time() - start)
        if difference > 0:
            logger.info("Waiting %f secs before starting next eval run.", difference)
            time.sleep(difference)
        elif eval_spec.throttle_secs == 0 and result is None:
            logger.warning("EvalSpec.throttle_secs is set as 0. This might overload the "
                           "job before finding (next) new checkpoint. Please consider to "
                           "increase it.")
            time.sleep(distributed_training.POLL_SECS)


_ROLES = {TaskType.CHIEF: _run_chief, TaskType.WORKER: _run_worker,
          TaskType.MASTER: _run_master, TaskType.PS: _run_ps,
          TaskType.EVALUATOR: _run_evaluator}
