"""TrainSpec, EvalSpec and train_and_evaluate for one local process (no TF_CONFIG
cluster): train, evaluate after checkpoints (throttled), run the exporters."""

from __future__ import annotations

import json
import logging
import os
import time

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


def _cluster_role():
    tf_config = json.loads(os.environ.get("TF_CONFIG") or "{}")
    if tf_config.get("cluster"):
        return (tf_config.get("task") or {}).get("type", "<no task type>")
    return None


def train_and_evaluate(estimator, train_spec, eval_spec):
    """Trains `estimator`, evaluating after checkpoints and once at the end; returns
    (final eval result, export results), as TF 1.15 / TF 2.x do."""
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
    role = _cluster_role()
    if role is not None:
        raise NotImplementedError(
            f"train_and_evaluate: the distributed role {role!r} from TF_CONFIG is not "
            f"supported by tensorflux (only local training, with no 'cluster' in "
            f"TF_CONFIG).")
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
