"""An Estimator's model_fn on parameter servers: what each Ray actor builds from it.

`ParameterServerTraining` (distribute/ps/) takes a model as a function returning its
loss and an optimizer applied on the ps tasks; an Estimator's model_fn instead returns
an EstimatorSpec whose train_op the user built with their optimizer. `EstimatorPsModel`
bridges the two by building the model_fn's TRAIN graph (input_fn, then model_fn, as
`Estimator.train` does) in a graph carrying an apply_gradients recorder
(train/optimizer.py: `apply_gradients_recorder`):

- on the driver and the workers (`__call__`), `apply_gradients` records the
  (gradient, variable) pairs and builds nothing: the worker fetches exactly the
  gradients the model_fn computed (clipped, scaled, several optimizers...) and keeps no
  optimizer state;
- on ps task k (`build_shard_apply`), the same build runs, and `apply_gradients` builds
  the user's own optimizer update for the variables ps k holds only, from a gradient
  placeholder per variable, so its slots (`w/Adam`), non-slot variables (`beta1_power`)
  and learning-rate schedules on `tf.train.get_global_step()` are the model_fn's; one
  global-step increment follows, as in the model_fn's train_op.

Variables are placed as TF's Estimator places them in a cluster: a
`replica_device_setter` over the config's ps tasks (or `RunConfig.device_fn`). Each
replica builds with its own RunConfig (replica 0 is the chief, replica i the worker
i - 1), so an input_fn or model_fn taking `config` can shard by `task_id` /
`global_id_in_cluster`. The object is pickled to every actor (cloudpickle), with the
Estimator and so its model_fn.
"""

from __future__ import annotations

import copy

from tensorflux._src.data.dataset_ops import Dataset
from tensorflux._src.distribute.ps.model_layout import BuiltModel
from tensorflux._src.estimator.model_fn import ModeKeys
from tensorflux._src.estimator.run_config import TaskType
from tensorflux._src.framework import graph as _graph
from tensorflux._src.ops.constant import placeholder
from tensorflux._src.ops.control.control_ops import no_op
from tensorflux._src.ops.state import state_ops

# TF's Estimator puts these op types on the ps tasks (its _get_replica_device_setter).
PS_OPS = ("Variable", "VariableV2", "AutoReloadVariable", "MutableHashTable",
          "MutableHashTableV2", "MutableHashTableOfTensors", "MutableHashTableOfTensorsV2",
          "MutableDenseHashTable", "MutableDenseHashTableV2", "VarHandleOp",
          "BoostedTreesEnsembleResourceHandleOp", "BoostedTreesQuantileStreamResourceHandleOp")


def replica_config(config, replica):
    """The RunConfig of training replica `replica`: 0 is the chief (or master), i > 0
    the worker task i - 1 (TF's global ids: chief first, then the workers)."""
    jobs = config.cluster_spec.as_dict()
    chief = TaskType.MASTER if TaskType.MASTER in jobs else TaskType.CHIEF
    new = copy.deepcopy(config)
    task_type, task_id = (chief, 0) if replica == 0 else (TaskType.WORKER, replica - 1)
    new._task_type, new._task_id = task_type, task_id
    new._is_chief = replica == 0
    new._global_id_in_cluster = replica
    if jobs.get(task_type):
        new._master = "grpc://" + jobs[task_type][task_id]
    return new


def _device_fn(config):
    if config.device_fn is not None:
        return config.device_fn
    from tensorflux._src.train.device_setter import replica_device_setter
    return replica_device_setter(
        ps_tasks=config.num_ps_replicas, merge_devices=True, ps_ops=list(PS_OPS),
        worker_device=f"/job:{config.task_type}/task:{config.task_id}",
        cluster=config.cluster_spec)


def _features_and_labels(result):
    """An input_fn's result as (features, labels). A Dataset is read by a one-shot
    iterator: the actors run no session hooks, so nothing would initialize another."""
    if isinstance(result, Dataset):
        result = result.make_one_shot_iterator().get_next()
    if isinstance(result, (list, tuple)):
        if len(result) != 2:
            raise ValueError("input_fn should return (features, labels) as a len 2 tuple.")
        return result[0], result[1]
    return result, None


class _RecordGradients:
    """The driver's and workers' recorder: keeps the pairs, builds no update."""

    def __init__(self):
        self.grads_and_vars = []

    def __call__(self, optimizer, grads_and_vars, global_step, name):
        _refuse_sync(optimizer)
        seen = {v.op.name for _, v in self.grads_and_vars}
        for grad, var in grads_and_vars:
            if grad is None:
                continue
            if var.op.name in seen:
                raise ValueError(f"Variable {var.op.name!r} is updated by two apply_gradients "
                                 f"calls in model_fn; parameter-server training applies one "
                                 f"gradient per variable")
            self.grads_and_vars.append((grad, var))
        return no_op(name=name or optimizer.get_name())


class _ApplyShard:
    """A ps task's recorder: the user's optimizer update for this task's variables only,
    from a placeholder per gradient (the workers' pushes)."""

    def __init__(self, shard):
        self.shard = shard  # names of the variables this ps holds and updates
        self.grad_feeds, self.applies, self.optimizers = {}, [], []

    def __call__(self, optimizer, grads_and_vars, global_step, name):
        _refuse_sync(optimizer)
        mine = [v for g, v in grads_and_vars if g is not None and v.op.name in self.shard]
        if mine:
            # No control dependencies of the model_fn's (update ops, the forward pass):
            # the ps runs its update from the pushed gradients alone.
            with _graph.control_dependencies(None), _graph.name_scope(None):
                pairs = []
                for var in mine:
                    feed = placeholder(var.dtype.base_dtype, var.shape,
                                       name="grad/" + var.op.name)
                    self.grad_feeds[var.op.name] = feed
                    pairs.append((feed, var))
            with _graph.control_dependencies(None):
                self.applies.append(optimizer._apply_gradients(pairs, None, name))
            self.optimizers.append(optimizer)
        return no_op(name=name or optimizer.get_name())


def _refuse_sync(optimizer):
    from tensorflux._src.train.sync_replicas_optimizer import SyncReplicasOptimizer
    if isinstance(optimizer, SyncReplicasOptimizer):
        raise NotImplementedError(
            "SyncReplicasOptimizer in an Estimator's model_fn: tensorflux trains "
            "Estimators on parameter servers with asynchronous SGD (TF's default); pass "
            "the wrapped optimizer, or use tf.distribute.ParameterServerTraining with a "
            "SyncReplicasOptimizer for synchronous training")


class EstimatorPsModel:
    """model_fn and optimizer of `ParameterServerTraining` for an Estimator (module
    docstring): called, it builds a worker's graph and returns a BuiltModel; its
    `build_shard_apply` builds a ps task's update."""

    replicas_to_aggregate = None  # asynchronous SGD, as TF's Estimator by default

    def __init__(self, estimator, input_fn, replica=0):
        self._estimator = estimator
        self._input_fn = input_fn
        self._replica = replica

    def for_worker(self, index, num_workers):
        """This model as worker `index` builds it (its own RunConfig)."""
        del num_workers
        return EstimatorPsModel(self._estimator, self._input_fn, index)

    def _build(self, recorder):
        """Builds the TRAIN graph in the default graph with `recorder`; returns the
        EstimatorSpec."""
        from tensorflux._src.framework.random_seed import set_random_seed
        from tensorflux._src.train.optimizer import get_or_create_global_step

        est = self._estimator
        config = replica_config(est.config, self._replica)
        graph = _graph.get_default_graph()
        graph._apply_gradients_recorder = recorder
        try:
            with graph.device(_device_fn(config)):
                if config.tf_random_seed is not None:
                    set_random_seed(config.tf_random_seed)
                get_or_create_global_step(graph)
                features, labels = _features_and_labels(
                    self._input_fn(**_input_fn_kwargs(est, self._input_fn, config)))
                return est._call_model_fn(features, labels, ModeKeys.TRAIN, config)
        finally:
            del graph._apply_gradients_recorder

    def __call__(self):
        graph = _graph.Graph()
        recorder = _RecordGradients()
        with graph.as_default():
            spec = self._build(recorder)
        if not recorder.grads_and_vars:
            raise ValueError("model_fn built its train_op without Optimizer.minimize or "
                             "apply_gradients: parameter-server training needs the "
                             "optimizer's gradients to send them to the ps tasks")
        return BuiltModel(spec.loss, {}, recorder.grads_and_vars)

    def build_shard_apply(self, layout, specs):
        """(global step, {name: variable}, {name: gradient placeholder}, update op,
        [optimizer]) for the ps holding `specs`, in the default graph (ps_task.py)."""
        from tensorflux._src.train.optimizer import get_global_step
        from tensorflux._src.train.variables import global_variables

        del layout
        recorder = _ApplyShard({s.name for s in specs if s.has_gradient})
        self._build(recorder)
        graph = _graph.get_default_graph()
        names = {s.name for s in specs}
        variables = {v.op.name: v for v in global_variables() if v.op.name in names}
        missing = names - set(variables)
        if missing:
            raise ValueError(f"the ps task's model_fn build has no variables "
                             f"{sorted(missing)}; model_fn must build the same model on "
                             f"every task")
        step = get_global_step(graph)
        with _graph.control_dependencies(None), \
                _graph.control_dependencies(recorder.applies):
            apply = state_ops.assign_add(step, 1, name="global_step_increment").op
        return step, variables, recorder.grad_feeds, apply, recorder.optimizers


def _input_fn_kwargs(estimator, input_fn, config):
    from tensorflux._src.estimator.estimator import _fn_args
    args, kwargs = _fn_args(input_fn), {}
    if "mode" in args:
        kwargs["mode"] = ModeKeys.TRAIN
    if "params" in args:
        kwargs["params"] = estimator.params
    if "config" in args:
        kwargs["config"] = config
    return kwargs
