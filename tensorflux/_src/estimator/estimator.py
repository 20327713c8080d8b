"""tf.estimator.Estimator: a model_fn plus a model_dir; train / evaluate / predict /
export_saved_model each build a fresh graph, run it in a (Monitored)Session and leave
TF1's files in model_dir (checkpoint, model.ckpt-N.*, graph.pbtxt, events, eval/)."""

from __future__ import annotations

import collections
import contextlib
import logging
import os
import shutil
import tempfile
import time

import numpy as np

from tensorflux._src.data.dataset_ops import Dataset
from tensorflux._src.estimator import distribute as distribute_lib
from tensorflux._src.estimator import run_config as run_config_lib
from tensorflux._src.estimator.model_fn import EstimatorSpec, ModeKeys
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.graph_keys import GraphKeys
from tensorflux._src.train import basic_session_run_hooks as hooks_lib
from tensorflux._src.train import checkpoint_management, checkpoint_utils
from tensorflux._src.train import monitored_session as ms
from tensorflux._src.train.session_run_hook import SessionRunHook

logger = logging.getLogger("tensorflux.estimator")


class WarmStartSettings(collections.namedtuple("WarmStartSettings", [
        "ckpt_to_initialize_from", "vars_to_warm_start", "var_name_to_vocab_info",
        "var_name_to_prev_var_name"])):
    """Which variables to initialize from which checkpoint (TF's fields and defaults)."""

    def __new__(cls, ckpt_to_initialize_from, vars_to_warm_start=".*",
                var_name_to_vocab_info=None, var_name_to_prev_var_name=None):
        if not ckpt_to_initialize_from:
            raise ValueError("`ckpt_to_initialize_from` MUST be set in WarmStartSettings")
        return super().__new__(cls, ckpt_to_initialize_from, vars_to_warm_start,
                               var_name_to_vocab_info or {}, var_name_to_prev_var_name or {})


def _fn_args(fn):
    return ms._fn_args(fn)


def _verify_model_fn_args(model_fn, params):
    args = set(_fn_args(model_fn))
    if "features" not in args:
        raise ValueError(f"model_fn ({model_fn}) must include features argument.")
    if params is not None and "params" not in args:
        raise ValueError(f"model_fn ({model_fn}) does not include params argument, but "
                         f"params ({params}) is passed to Estimator.")
    unknown = args - {"features", "labels", "mode", "params", "config", "self"}
    if unknown:
        raise ValueError(f"model_fn ({model_fn}) has following not expected args: "
                         f"{sorted(unknown)}")


class _DatasetInitializerHook(SessionRunHook):
    """Initializes the iterator an input_fn's Dataset became, once the session exists."""

    def __init__(self, iterator):
        self._iterator = iterator

    def begin(self):
        self._initializer = self._iterator.initializer

    def after_create_session(self, session, coord):
        session.run(self._initializer)


class _GraphWriterHook(SessionRunHook):
    """Writes model_dir/graph.pbtxt once the graph is complete, as TF's
    CheckpointSaverHook does, so TensorBoard's graph tab shows the training graph."""

    def __init__(self, model_dir):
        self._model_dir = model_dir

    def after_create_session(self, session, coord):
        from tensorflux._src.io.write_graph import write_graph
        write_graph(session.graph.as_graph_def(add_shapes=True), self._model_dir,
                    "graph.pbtxt")


class _StopAfterNEvalsHook(SessionRunHook):
    def __init__(self, num_evals):
        self._num_evals, self._done = num_evals, 0

    def after_run(self, run_context, run_values):
        self._done += 1
        if self._done >= self._num_evals:
            run_context.request_stop()


def parse_input_fn_result(result):
    """(features, labels, hooks) from what an input_fn returned: a Dataset (iterated by
    an initializable iterator) or features / (features, labels)."""
    hooks = []
    if isinstance(result, Dataset):
        iterator = result.make_initializable_iterator()
        hooks.append(_DatasetInitializerHook(iterator))
        result = iterator.get_next()
    if isinstance(result, (list, tuple)):
        if len(result) != 2:
            raise ValueError("input_fn should return (features, labels) as a len 2 tuple.")
        return result[0], result[1], hooks
    return result, None, hooks


def model_fn_kwargs(args, labels, mode, config):
    """The labels / mode / config keyword arguments a model_fn taking `args` gets (TF's
    rules: labels from an input_fn must be taken); params are the caller's."""
    kwargs = {}
    if "labels" in args:
        kwargs["labels"] = labels
    elif labels is not None:
        raise ValueError("model_fn does not take labels, but input_fn returns labels.")
    if "mode" in args:
        kwargs["mode"] = mode
    if "config" in args:
        kwargs["config"] = config
    return kwargs


class Estimator:
    """TF 1.15's tf.estimator.Estimator (see the module docstring)."""

    def __init__(self, model_fn, model_dir=None, config=None, params=None,
                 warm_start_from=None):
        if not callable(model_fn):
            raise ValueError(f"model_fn must be callable, given: {model_fn!r}")
        _verify_model_fn_args(model_fn, params)
        if config is None:
            config = run_config_lib.RunConfig()
        elif not isinstance(config, run_config_lib.RunConfig):
            raise ValueError(f"config must be an instance of `RunConfig`, but provided "
                             f"{config}.")
        if model_dir is not None:
            model_dir = os.fspath(model_dir)
            if config.model_dir is not None and config.model_dir != model_dir:
                raise ValueError(f"`model_dir` are set both in constructor and `RunConfig`, "
                                 f"but with different values. In constructor: '{model_dir}', "
                                 f"in `RunConfig`: '{config.model_dir}' ")
        model_dir = model_dir or config.model_dir
        if model_dir is None:
            model_dir = tempfile.mkdtemp()
            logger.warning("Using temporary folder as model directory: %s", model_dir)
        distribute_lib.check_strategy(config.train_distribute, "train_distribute")
        distribute_lib.check_strategy(config.eval_distribute, "eval_distribute")
        self._config = config.replace(model_dir=model_dir)
        self._model_dir = model_dir
        self._model_fn = model_fn
        self._params = dict(params or {})
        if isinstance(warm_start_from, (str, os.PathLike)):
            warm_start_from = WarmStartSettings(os.fspath(warm_start_from))
        self._warm_start_settings = warm_start_from
        logger.info("Using config: %s", self._config)

    model_dir = property(lambda self: self._model_dir)
    config = property(lambda self: self._config)
    params = property(lambda self: dict(self._params))
    model_fn = property(lambda self: self._model_fn)

    # ------------------------------------------------------------------ checkpoints
    def latest_checkpoint(self):
        return checkpoint_management.latest_checkpoint(self._model_dir)

    def _check_checkpoint_available(self):
        path = self.latest_checkpoint()
        if not path:
            raise ValueError(f"Could not find trained model in model_dir: {self._model_dir}.")
        return path

    def get_variable_names(self):
        return [name for name, _ in
                checkpoint_utils.list_variables(self._check_checkpoint_available())]

    def get_variable_value(self, name):
        return checkpoint_utils.load_variable(self._check_checkpoint_available(), name)

    # ------------------------------------------------------------------ graph building
    def _call_input_fn(self, input_fn, mode):
        if not callable(input_fn):
            raise ValueError(f"input_fn must be callable, given: {input_fn!r}")
        args, kwargs = _fn_args(input_fn), {}
        if "mode" in args:
            kwargs["mode"] = mode
        if "params" in args:
            kwargs["params"] = self.params
        if "config" in args:
            kwargs["config"] = self._config
        result = input_fn(**kwargs)
        strategy = self._distribution(mode)
        if strategy is not None:
            result = distribute_lib.distribute_input(result, strategy)
        return parse_input_fn_result(result)

    def _distribution(self, mode):
        """The strategy this mode runs under: RunConfig's train_distribute for TRAIN,
        eval_distribute for EVAL (no fallback to train_distribute, as TF 1.15)."""
        if mode == ModeKeys.TRAIN:
            return self._config.train_distribute
        if mode == ModeKeys.EVAL:
            return self._config.eval_distribute
        return None

    def _call_model_fn(self, features, labels, mode, config):
        args = _fn_args(self._model_fn)
        kwargs = model_fn_kwargs(args, labels, mode, config)
        if "params" in args:
            kwargs["params"] = self.params
        strategy = self._distribution(mode)
        # In the scope, the model's ops run replicated (SPMD) over the strategy's devices.
        with strategy.scope() if strategy is not None else contextlib.nullcontext():
            spec = self._model_fn(features=features, **kwargs)
        if not isinstance(spec, EstimatorSpec):
            raise ValueError(f"model_fn should return an EstimatorSpec. Received: "
                             f"{type(spec).__name__} {spec!r}")
        return spec

    def _new_graph(self):
        from tensorflux._src.framework.random_seed import set_random_seed
        from tensorflux._src.train.optimizer import get_or_create_global_step
        graph = _graph.Graph()
        with graph.as_default():
            if self._config.tf_random_seed is not None:
                set_random_seed(self._config.tf_random_seed)
            global_step = get_or_create_global_step(graph)
        return graph, global_step

    def _default_saver(self):
        from tensorflux._src.train.saver import Saver
        graph = _graph.get_default_graph()
        if not graph.get_collection(GraphKeys.SAVERS):
            graph.add_to_collection(GraphKeys.SAVERS, Saver(
                sharded=True, max_to_keep=self._config.keep_checkpoint_max,
                keep_checkpoint_every_n_hours=self._config.keep_checkpoint_every_n_hours,
                save_relative_paths=True))

    # ------------------------------------------------------------------ train
    def train(self, input_fn, hooks=None, steps=None, max_steps=None, saving_listeners=None):
        if steps is not None and max_steps is not None:
            raise ValueError("Can not provide both steps and max_steps.")
        if steps is not None and steps <= 0:
            raise ValueError(f"Must specify steps > 0, given: {steps}")
        if max_steps is not None and max_steps <= 0:
            raise ValueError(f"Must specify max_steps > 0, given: {max_steps}")
        if max_steps is not None:
            path = self.latest_checkpoint()
            done = 0 if not path else int(checkpoint_utils.load_variable(
                path, GraphKeys.GLOBAL_STEP))
            if max_steps <= done:
                logger.info("Skipping training since max_steps has already saved.")
                return self
        hooks = list(hooks or [])
        for hook in hooks:
            if not isinstance(hook, SessionRunHook):
                raise TypeError(f"hooks must be a list of SessionRunHook instances, given: "
                                f"{hook!r}")
        loss = self._train_model(input_fn, hooks, steps, max_steps, list(saving_listeners or []))
        logger.info("Loss for final step: %s.", loss)
        return self

    def _train_model(self, input_fn, hooks, steps, max_steps, saving_listeners):
        from tensorflux._src.summary.summary_ops import scalar
        graph, global_step = self._new_graph()
        with graph.as_default():
            features, labels, input_hooks = self._call_input_fn(input_fn, ModeKeys.TRAIN)
            spec = self._call_model_fn(features, labels, ModeKeys.TRAIN, self._config)
            scalar("loss", spec.loss)
            if self._warm_start_settings is not None:
                from tensorflux._src.train.warm_starting import warm_start
                logger.info("Warm-starting with WarmStartSettings: %s",
                            self._warm_start_settings)
                warm_start(*self._warm_start_settings)
            self._default_saver()
            cfg = self._config
            all_hooks = input_hooks + hooks + list(spec.training_hooks) + [
                hooks_lib.NanTensorHook(spec.loss)]
            if steps is not None or max_steps is not None:
                # Neither: train until the input_fn's data ends (OutOfRange), as TF.
                all_hooks.append(hooks_lib.StopAtStepHook(steps, max_steps))
            if cfg.log_step_count_steps:
                all_hooks.append(hooks_lib.LoggingTensorHook(
                    {"loss": spec.loss, "step": global_step},
                    every_n_iter=cfg.log_step_count_steps))
            chief_hooks = list(spec.training_chief_hooks) + [_GraphWriterHook(self._model_dir)]
            if cfg.save_checkpoints_steps or cfg.save_checkpoints_secs:
                # Our own saver hook (not MonitoredTrainingSession's) so that the
                # saving_listeners hear every checkpoint, as in TF.
                saver_hook = hooks_lib.CheckpointSaverHook(
                    self._model_dir, save_secs=cfg.save_checkpoints_secs,
                    save_steps=cfg.save_checkpoints_steps, scaffold=spec.scaffold,
                    listeners=saving_listeners)
                saver_hook._set_steps_per_run(self._steps_per_run())
                chief_hooks.append(saver_hook)
            elif saving_listeners:
                raise ValueError("There should be a CheckpointSaverHook to use "
                                 "saving_listeners. Please set one of the RunConfig."
                                 "save_checkpoints_steps or RunConfig.save_checkpoints_secs.")
            loss = None
            with ms.MonitoredTrainingSession(
                    checkpoint_dir=self._model_dir, scaffold=spec.scaffold, hooks=all_hooks,
                    chief_only_hooks=chief_hooks, save_checkpoint_secs=None,
                    save_checkpoint_steps=None, save_summaries_steps=cfg.save_summary_steps,
                    config=cfg.session_config,
                    log_step_count_steps=cfg.log_step_count_steps) as sess:
                while not sess.should_stop():
                    _, loss = sess.run([spec.train_op, spec.loss])
        return loss

    def _steps_per_run(self):
        """Training steps one Session.run of train_op makes (TPUEstimator: a loop)."""
        return 1

    # ------------------------------------------------------------------ evaluate
    def eval_dir(self, name=None):
        return os.path.join(self._model_dir, "eval" if not name else "eval_" + name)

    def evaluate(self, input_fn, steps=None, hooks=None, checkpoint_path=None, name=None):
        if steps is not None and steps <= 0:
            raise ValueError(f"Must specify steps > 0, given: {steps}")
        checkpoint_path = checkpoint_path or self.latest_checkpoint()
        if not checkpoint_path:
            logger.info("Could not find trained model in model_dir: %s, running "
                        "initialization to evaluate.", self._model_dir)
        from tensorflux._src.layers.metrics_impl import mean
        from tensorflux._src.ops.control.control_ops import group
        graph, global_step = self._new_graph()
        with graph.as_default():
            features, labels, input_hooks = self._call_input_fn(input_fn, ModeKeys.EVAL)
            spec = self._call_model_fn(features, labels, ModeKeys.EVAL, self._config)
            metrics = dict(spec.eval_metric_ops)
            if "loss" in metrics:
                raise ValueError("Metric with name \"loss\" is not allowed, because Estimator "
                                 "already defines a default metric with the same name.")
            metrics["loss"] = mean(spec.loss)
            update_op = group(*[m[1] for m in metrics.values()])
            values = {k: m[0] for k, m in metrics.items()}
            values["global_step"] = global_step
            self._default_saver()
            final = hooks_lib.FinalOpsHook(values)
            all_hooks = input_hooks + list(hooks or []) + list(spec.evaluation_hooks) + [final]
            if steps is not None:
                all_hooks.append(_StopAfterNEvalsHook(steps))
            creator = ms.ChiefSessionCreator(scaffold=spec.scaffold, config=self._config.
                                             session_config,
                                             checkpoint_filename_with_path=checkpoint_path)
            logger.info("Starting evaluation at %s", time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                                                   time.gmtime()))
            with ms.MonitoredSession(creator, all_hooks) as sess:
                while not sess.should_stop():
                    sess.run(update_op)
        result = final.final_ops_values
        result = {k: (v.item() if isinstance(v, np.ndarray) and v.ndim == 0 else v)
                  for k, v in result.items()}
        logger.info("Saving dict for global step %d: %s", result["global_step"],
                    ", ".join(f"{k} = {v}" for k, v in sorted(result.items())))
        _write_dict_to_summary(self.eval_dir(name), result, int(result["global_step"]))
        return result

    # ------------------------------------------------------------------ predict
    def predict(self, input_fn, predict_keys=None, hooks=None, checkpoint_path=None,
                yield_single_examples=True):
        checkpoint_path = checkpoint_path or self.latest_checkpoint()
        if not checkpoint_path:
            logger.info("Could not find trained model in model_dir: %s, running "
                        "initialization to predict.", self._model_dir)
        graph, _ = self._new_graph()
        with graph.as_default():
            features, _labels, input_hooks = self._call_input_fn(input_fn, ModeKeys.PREDICT)
            spec = self._call_model_fn(features, None, ModeKeys.PREDICT, self._config)
            predictions = _extract_keys(spec.predictions, predict_keys)
            self._default_saver()
            creator = ms.ChiefSessionCreator(scaffold=spec.scaffold,
                                             config=self._config.session_config,
                                             checkpoint_filename_with_path=checkpoint_path)
            all_hooks = input_hooks + list(hooks or []) + list(spec.prediction_hooks)
            with ms.MonitoredSession(creator, all_hooks) as sess:
                while not sess.should_stop():
                    batch = sess.run(predictions)  # end of input: OutOfRange ends the with
                    if not yield_single_examples:
                        yield batch
                        continue
                    if not isinstance(batch, dict):
                        yield from batch
                        continue
                    for i in range(_batch_length(batch)):
                        yield {k: v[i] for k, v in batch.items()}

    # ------------------------------------------------------------------ export
    def export_saved_model(self, export_dir_base, serving_input_receiver_fn,
                           assets_extra=None, as_text=False, checkpoint_path=None):
        from tensorflux._src.estimator import export as export_lib
        return export_lib.export_estimator(self, export_dir_base, serving_input_receiver_fn,
                                           assets_extra, as_text, checkpoint_path)

    def export_savedmodel(self, export_dir_base, serving_input_receiver_fn,
                          assets_extra=None, as_text=False, checkpoint_path=None,
                          strip_default_attrs=False):
        """TF 1.x's older name for export_saved_model."""
        del strip_default_attrs
        return self.export_saved_model(export_dir_base, serving_input_receiver_fn,
                                       assets_extra, as_text, checkpoint_path)


def _extract_keys(predictions, predict_keys):
    if predict_keys is None:
        return predictions
    if not isinstance(predictions, dict):
        raise ValueError("predict_keys argument is not valid in case of non-dict "
                         "predictions.")
    if isinstance(predict_keys, str):
        predict_keys = [predict_keys]
    existing = predictions
    predictions = {k: v for k, v in existing.items() if k in predict_keys}
    if not predictions:
        raise ValueError(f"Expected to run at least one output from {list(existing)}, "
                         f"provided {list(predict_keys)}.")
    return predictions


def _batch_length(batch):
    lengths = {k: (v.shape[0] if np.ndim(v) else None) for k, v in batch.items()}
    first = None
    for key, n in lengths.items():
        if n is None:
            raise ValueError(f"Prediction {key!r} is a scalar; with yield_single_examples="
                             f"True every prediction needs a batch dimension.")
        if first is None:
            first = n
        elif n != first:
            raise ValueError(f"Batch length of predictions should be same. {key} has "
                             f"different batch length than others.")
    return first or 0


def _write_dict_to_summary(output_dir, dictionary, current_global_step):
    """Scalar metric values as summaries in output_dir (TF's eval/ event files)."""
    from tensorflux._src.framework.protos import Summary
    from tensorflux._src.summary.writer import FileWriterCache
    logger.info("Saving '%s' summary for global step %d", output_dir, current_global_step)
    writer = FileWriterCache.get(output_dir)
    summary = Summary()
    for key, value in dictionary.items():
        if key == "global_step" or value is None:
            continue
        if isinstance(value, (bool, np.bool_)):
            continue
        if isinstance(value, (int, float, np.integer, np.floating)):
            summary.value.add(tag=key, simple_value=float(value))
        else:
            logger.warning("Skipping summary for %s, must be a float, np.float32, np.int64, "
                           "np.int32 or int.", key)
    writer.add_summary(summary, current_global_step)
    writer.flush()


def _copy_assets_extra(export_dir, assets_extra):
    for dest, source in (assets_extra or {}).items():
        target = os.path.join(export_dir, "assets.extra", dest)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copyfile(source, target)
