"""The training roles of `train_and_evaluate` in a TF_CONFIG cluster with ps tasks.

Process model. Every task's process runs the same program with its own TF_CONFIG and
calls `train_and_evaluate`, as in TF 1.x. There are no gRPC servers: the *chief*'s
call runs the whole training cluster as one `ParameterServerTraining` job on Ray
(distribute/ps/): one worker actor per training replica (the chief's replica 0 and one
per `worker` task) and one ps actor per `ps` task, on this process's Ray instance (a
local one unless the process has joined a cluster with `ray.init(address=...)`). The
model is the Estimator's model_fn (ps_model_fn.py); training is asynchronous SGD, as
TF's Estimator. The chief writes, into model_dir, the checkpoints (the ps tasks' shards
committed by the driver: `model.ckpt-N.*` + `checkpoint`), `graph.pbtxt`, and an
events file with the `loss` and `global_step/sec` scalars every `save_summary_steps`.
When training ends it writes `DONE_FILE` ({"global_step": N}).

The `worker` and `ps` processes have no work of their own (their replicas run as the
chief's actors): they wait until `DONE_FILE` says training reached `max_steps` (or
just ended, without max_steps) and return. TF's ps blocks in `server.join()` forever;
ours ends with the job, so a launcher sees every task finish.
"""

from __future__ import annotations

import json
import logging
import os
import time

from tensorflux._src.estimator import ps_model_fn
from tensorflux._src.framework.graph_keys import GraphKeys
from tensorflux._src.train import checkpoint_utils

logger = logging.getLogger("tensorflux.estimator")

DONE_FILE = "training_done.json"
POLL_SECS = 0.2
UNBOUNDED_STEPS = 2 ** 62  # "train until the input ends" (train_spec.max_steps=None)


def read_done(model_dir):
    """The global step training ended at, from model_dir's DONE_FILE (None: not yet)."""
    try:
        with open(os.path.join(model_dir, DONE_FILE)) as f:
            return int(json.load(f)["global_step"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _write_done(model_dir, step):
    path = os.path.join(model_dir, DONE_FILE)
    with open(path + ".tmp", "w") as f:
        json.dump({"global_step": int(step), "time": time.time()}, f)
    os.replace(path + ".tmp", path)


def _checkpoint_step(estimator):
    path = estimator.latest_checkpoint()
    return 0 if not path else int(checkpoint_utils.load_variable(path, GraphKeys.GLOBAL_STEP))


def wait_for_training_end(estimator, max_steps, role):
    """A worker or ps task: wait until the chief's job has ended (module docstring)."""
    logger.info("%s task: its share of training runs as Ray actors of the chief's job; "
                "waiting for training to end (%s in %s).", role, DONE_FILE,
                estimator.model_dir)
    while True:
        step = read_done(estimator.model_dir)
        if step is not None and (max_steps is None or step >= max_steps):
            logger.info("%s task: training ended at global step %d.", role, step)
            return
        time.sleep(POLL_SECS)


class _Summaries:
    """The chief's training summaries from the loss the chief ps task reports per step:
    `loss` and `global_step/sec` every `save_summary_steps` steps, as TF's
    MonitoredTrainingSession writes them."""

    def __init__(self, model_dir, every_steps):
        from tensorflux._src.summary.writer import FileWriterCache
        self._writer = FileWriterCache.get(model_dir) if every_steps else None
        self._every = every_steps
        self._last_step, self._last_time = None, time.time()

    def __call__(self, step, metrics):
        from tensorflux._src.framework.protos import Summary
        if self._writer is None or "loss" not in metrics:
            return
        if self._last_step is not None and step < self._last_step + self._every:
            return
        now = time.time()
        summary = Summary()
        summary.value.add(tag="loss", simple_value=float(metrics["loss"]))
        if self._last_step is not None:
            rate = (step - self._last_step) / max(now - self._last_time, 1e-9)
            summary.value.add(tag="global_step/sec", simple_value=rate)
        self._writer.add_summary(summary, step)
        self._last_step, self._last_time = step, now

    def close(self):
        if self._writer is not None:
            self._writer.flush()


def _write_graph(model, model_dir):
    from tensorflux._src.framework import graph as _graph
    from tensorflux._src.io.write_graph import write_graph
    graph = _graph.Graph()
    with graph.as_default():
        model._build(ps_model_fn._RecordGradients())
    write_graph(graph.as_graph_def(add_shapes=True), model_dir, "graph.pbtxt")


def _check_supported(estimator, train_spec, config):
    if config.num_ps_replicas == 0:
        raise NotImplementedError(
            f"TF_CONFIG's cluster has {config.num_worker_replicas} training tasks and no "
            f"'ps' job: tensorflux trains an Estimator on several tasks only with parameter "
            f"servers (add a 'ps' job), or on one task (a cluster of only the chief).")
    if estimator._warm_start_settings is not None:
        raise NotImplementedError("warm_start_from with parameter-server training: the ps "
                                  "tasks start from the model_fn's initializers (or "
                                  "model_dir's latest checkpoint)")
    if train_spec.hooks:
        logger.warning("TrainSpec.hooks are not run in parameter-server training: no "
                       "session on this process runs the training steps (the Ray worker "
                       "actors do); ignoring %s", list(train_spec.hooks))


def train_on_parameter_servers(estimator, train_spec, on_checkpoint=None):
    """The chief's (or master's) training: the cluster as one ParameterServerTraining
    job on Ray (module docstring). `on_checkpoint(step, prefix)` is called after each
    committed checkpoint. Returns the final global step."""
    from tensorflux._src.distribute.ps.trainer import ParameterServerTraining

    config = estimator.config
    _check_supported(estimator, train_spec, config)
    model_dir, max_steps = estimator.model_dir, train_spec.max_steps
    stale = os.path.join(model_dir, DONE_FILE)
    if os.path.exists(stale):
        os.remove(stale)
    if max_steps is not None and _checkpoint_step(estimator) >= max_steps:
        logger.info("Skipping training since max_steps has already saved.")
        step = _checkpoint_step(estimator)
        _write_done(model_dir, step)
        return step
    if not config.save_checkpoints_steps:
        logger.warning("RunConfig.save_checkpoints_secs=%s: the ps tasks checkpoint by "
                       "steps only, so this job writes its final checkpoint only; set "
                       "save_checkpoints_steps for checkpoints during training.",
                       config.save_checkpoints_secs)
    model = ps_model_fn.EstimatorPsModel(estimator, train_spec.input_fn)
    os.makedirs(model_dir, exist_ok=True)
    _write_graph(model, model_dir)
    summaries = _Summaries(model_dir, config.save_summary_steps)
    callback = None
    if on_checkpoint is not None:
        def callback(info):
            on_checkpoint(info.step, info.prefix)
    logger.info("Parameter-server training: %d workers (the chief's replica included), "
                "%d ps tasks, asynchronous SGD, checkpoints in %s", config.num_worker_replicas,
                config.num_ps_replicas, model_dir)
    with ParameterServerTraining(
            model, model, None, num_workers=config.num_worker_replicas,
            num_ps=config.num_ps_replicas, checkpoint_dir=model_dir,
            save_checkpoint_steps=config.save_checkpoints_steps or None,
            max_to_keep=config.keep_checkpoint_max or None) as job:
        result = job.train(max_steps=max_steps or UNBOUNDED_STEPS, on_step=summaries,
                           on_checkpoint=callback)
    summaries.close()
    logger.info("Loss for final step: %s.", (result.metrics_log[-1][1].get("loss")
                                             if result.metrics_log else None))
    _write_done(model_dir, result.global_step)
    return result.global_step
