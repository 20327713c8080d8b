"""RunConfig: where and how often an Estimator checkpoints, and the cluster it runs in
(read from the TF_CONFIG environment variable, as TF 1.15)."""

from __future__ import annotations

import copy
import json
import os

_USE_DEFAULT = object()

# The properties `replace` may change (TF 1.15's list).
_DEFAULT_REPLACEABLE = frozenset([
    "model_dir", "tf_random_seed", "save_summary_steps", "save_checkpoints_steps",
    "save_checkpoints_secs", "session_config", "keep_checkpoint_max",
    "keep_checkpoint_every_n_hours", "log_step_count_steps", "train_distribute", "device_fn",
    "protocol", "eval_distribute", "experimental_distribute",
    "experimental_max_worker_delay_secs", "session_creation_timeout_secs"])


class TaskType:
    MASTER = "master"
    PS = "ps"
    WORKER = "worker"
    CHIEF = "chief"
    EVALUATOR = "evaluator"


def _positive(name, value, allow_zero=False):
    if value is None:
        return
    if not isinstance(value, (int, float)) or value < 0 or (value == 0 and not allow_zero):
        raise ValueError(f"{name} should be >{'=' if allow_zero else ''} 0, given: {value!r}")


def _validate_task(cluster_spec, task, chief_job):
    """(task type, task index) from TF_CONFIG's "task", checked against the cluster with
    TF 1.15's messages."""
    if chief_job not in cluster_spec.jobs:
        raise ValueError(f'If "cluster" is set in TF_CONFIG, it must have one "{chief_job}" '
                         f'node.')
    if len(cluster_spec.job_tasks(chief_job)) > 1:
        raise ValueError(f'The "cluster" in TF_CONFIG must have only one "{chief_job}" node.')
    task_type, task_id = task.get("type"), task.get("index")
    if not task_type:
        raise ValueError('If "cluster" is set in TF_CONFIG, task type must be set.')
    if task_id is None:
        raise ValueError('If "cluster" is set in TF_CONFIG, task index must be set.')
    task_id = int(task_id)
    if task_id < 0:
        raise ValueError("Task index must be non-negative number.")
    if task_type == TaskType.EVALUATOR:  # not in the training cluster: no upper bound
        return task_type, task_id
    if task_type not in cluster_spec.jobs:
        raise ValueError(f"{task_type} is not a valid task_type in the cluster_spec:\n"
                         f"{cluster_spec}\n\nNote that these values may be coming from the "
                         f"TF_CONFIG environment variable.")
    if not 0 <= task_id < len(cluster_spec.job_tasks(task_type)):
        raise ValueError(f"{task_id} is not a valid task_id for task_type {task_type} in "
                         f"the cluster_spec:\n{cluster_spec}\n\nNote that these values may "
                         f"be coming from the TF_CONFIG environment variable.")
    return task_type, task_id


def _default_session_config():
    from tensorflux._src.framework.protos import ConfigProto
    return ConfigProto(allow_soft_placement=True)


class RunConfig:
    """TF 1.15's tf.estimator.RunConfig (properties read-only; copy with `replace`)."""

    def __init__(self, model_dir=None, tf_random_seed=None, save_summary_steps=100,
                 save_checkpoints_steps=_USE_DEFAULT, save_checkpoints_secs=_USE_DEFAULT,
                 session_config=None, keep_checkpoint_max=5,
                 keep_checkpoint_every_n_hours=10000, log_step_count_steps=100,
                 train_distribute=None, device_fn=None, protocol=None, eval_distribute=None,
                 experimental_distribute=None, experimental_max_worker_delay_secs=None,
                 session_creation_timeout_secs=7200):
        if save_checkpoints_steps is _USE_DEFAULT and save_checkpoints_secs is _USE_DEFAULT:
            save_checkpoints_steps, save_checkpoints_secs = None, 600
        elif save_checkpoints_secs is _USE_DEFAULT:
            save_checkpoints_secs = None
        elif save_checkpoints_steps is _USE_DEFAULT:
            save_checkpoints_steps = None
        elif save_checkpoints_steps is not None and save_checkpoints_secs is not None:
            raise ValueError("Can not provide both save_checkpoints_steps and "
                             "save_checkpoints_secs.")
        self._model_dir = os.fspath(model_dir) if model_dir is not None else None
        self._tf_random_seed = tf_random_seed
        self._save_summary_steps = save_summary_steps
        self._save_checkpoints_steps = save_checkpoints_steps
        self._save_checkpoints_secs = save_checkpoints_secs
        self._session_config = session_config
        self._keep_checkpoint_max = keep_checkpoint_max
        self._keep_checkpoint_every_n_hours = keep_checkpoint_every_n_hours
        self._log_step_count_steps = log_step_count_steps
        self._train_distribute = train_distribute
        self._device_fn = device_fn
        self._protocol = protocol
        self._eval_distribute = eval_distribute
        self._experimental_distribute = experimental_distribute
        self._experimental_max_worker_delay_secs = experimental_max_worker_delay_secs
        self._session_creation_timeout_secs = session_creation_timeout_secs
        self._validate()
        if self._session_config is None:
            self._session_config = _default_session_config()
        self._init_cluster(json.loads(os.environ.get("TF_CONFIG") or "{}"))

    def _validate(self):
        _positive("save_summary_steps", self._save_summary_steps, allow_zero=True)
        _positive("save_checkpoints_steps", self._save_checkpoints_steps, allow_zero=True)
        _positive("save_checkpoints_secs", self._save_checkpoints_secs, allow_zero=True)
        _positive("keep_checkpoint_max", self._keep_checkpoint_max, allow_zero=True)
        _positive("keep_checkpoint_every_n_hours", self._keep_checkpoint_every_n_hours)
        _positive("log_step_count_steps", self._log_step_count_steps)
        if self._tf_random_seed is not None and not isinstance(self._tf_random_seed, int):
            raise ValueError(f"tf_random_seed must be integer, given: "
                             f"{self._tf_random_seed!r}")

    def _init_cluster(self, tf_config):
        """TF 1.15's rules and messages: no cluster -> a local worker 0 that is chief; a
        cluster needs one `chief` (or a legacy `master`) and task.type / task.index
        naming one of its tasks; an `evaluator` is outside the training cluster."""
        from tensorflux._src.train.server_lib import ClusterSpec
        cluster = tf_config.get("cluster") or {}
        task = tf_config.get("task") or {}
        self._cluster_spec = ClusterSpec(cluster)
        self._evaluation_master = ""
        if not cluster:
            self._task_type = task.get("type", TaskType.WORKER)
            self._task_id = int(task.get("index", 0))
            if self._task_type != TaskType.WORKER:
                raise ValueError('If "cluster" is not set in TF_CONFIG, task type must be '
                                 'WORKER.')
            if self._task_id != 0:
                raise ValueError('If "cluster" is not set in TF_CONFIG, task index must '
                                 'be 0.')
            self._master = tf_config.get("session_master", "")
            self._evaluation_master = tf_config.get("eval_session_master", "")
            self._num_ps_replicas, self._num_worker_replicas = 0, 1
            self._is_chief, self._global_id_in_cluster = True, 0
            return
        chief_job = TaskType.MASTER if TaskType.MASTER in cluster else TaskType.CHIEF
        if chief_job == TaskType.MASTER and TaskType.CHIEF in cluster:
            raise ValueError("If `master` node exists in `cluster`, job `chief` is not "
                             "supported.")
        self._task_type, self._task_id = _validate_task(self._cluster_spec, task, chief_job)
        if self._task_type == TaskType.EVALUATOR:
            if chief_job == TaskType.MASTER:
                raise ValueError("If `master` node exists in `cluster`, task_type "
                                 "`evaluator` is not supported.")
            # The evaluator is not part of the training cluster.
            self._evaluation_master = tf_config.get("eval_session_master", "")
            self._cluster_spec = ClusterSpec({})
            self._master, self._num_ps_replicas, self._num_worker_replicas = "", 0, 0
            self._global_id_in_cluster, self._is_chief = None, False
            return
        if "session_master" in tf_config:
            self._master = tf_config["session_master"]
        elif len(cluster) == 1 and len(next(iter(cluster.values()))) == 1:
            self._master = ""  # a one-node cluster runs locally
        else:
            self._master = "grpc://" + self._cluster_spec.job_tasks(
                self._task_type)[self._task_id]
        self._num_ps_replicas = len(self._cluster_spec.as_dict().get(TaskType.PS, []))
        self._num_worker_replicas = (
            len(self._cluster_spec.as_dict().get(TaskType.WORKER, []))
            + len(self._cluster_spec.as_dict().get(chief_job, [])))
        # TF's global ids: the chief first, then the other jobs by name, ps last.
        order = [chief_job] + [j for j in sorted(self._cluster_spec.jobs)
                               if j not in (chief_job, TaskType.PS)]
        order += [TaskType.PS] if TaskType.PS in cluster else []
        gid = 0
        for job in order:
            if job == self._task_type:
                self._global_id_in_cluster = gid + self._task_id
                break
            gid += len(self._cluster_spec.job_tasks(job))
        self._is_chief = self._task_type == chief_job

    def replace(self, **kwargs):
        """A copy with the given properties changed (TF's allowed list only)."""
        # Strategies hold devices and are shared, not copied.
        shared = {id(s): s for s in (self._train_distribute, self._eval_distribute)
                  if s is not None}
        new = copy.deepcopy(self, shared)
        for key, value in kwargs.items():
            if key not in _DEFAULT_REPLACEABLE:
                raise ValueError(f"Replacing {key} is not supported. Allowed properties are "
                                 f"{sorted(_DEFAULT_REPLACEABLE)}.")
            setattr(new, "_" + key, value)
        steps, secs = kwargs.get("save_checkpoints_steps"), kwargs.get("save_checkpoints_secs")
        if steps is not None and secs is not None:
            raise ValueError("Can not provide both save_checkpoints_steps and "
                             "save_checkpoints_secs.")
        # Setting one of the two checkpoint triggers turns the other off, as in TF.
        if "save_checkpoints_steps" in kwargs and steps is not None:
            new._save_checkpoints_secs = None
        if "save_checkpoints_secs" in kwargs and secs is not None:
            new._save_checkpoints_steps = None
        if "model_dir" in kwargs and kwargs["model_dir"] is not None:
            new._model_dir = os.fspath(kwargs["model_dir"])
        new._validate()
        return new

    def __repr__(self):
        fields = ", ".join(f"{k[1:]}={v!r}" for k, v in sorted(vars(self).items())
                           if k[1:] in _DEFAULT_REPLACEABLE)
        return f"RunConfig({fields})"


def _property(name):
    return property(lambda self: getattr(self, "_" + name))


for _name in sorted(_DEFAULT_REPLACEABLE | {
        "cluster_spec", "task_type", "task_id", "is_chief", "master", "num_ps_replicas",
        "num_worker_replicas", "evaluation_master", "global_id_in_cluster"}):
    setattr(RunConfig, _name, _property(_name))
del _name

RunConfig.service = property(lambda self: None)
