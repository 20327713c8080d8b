"""TPUConfig, InputPipelineConfig and the RunConfig that carries them (TF 1.15's fields,
defaults and checks)."""

from __future__ import annotations

import collections

import numpy as np

from tensorflux._src.estimator import run_config as run_config_lib


def check_positive_integer(value, name):
    """TF's tpu util check, with its messages."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be int, got {type(value)}")
    if value <= 0:
        raise ValueError(f"{name} must be positive, got {value}")


class InputPipelineConfig:
    """How input_fn is deployed (see TPUConfig.per_host_input_for_training)."""
    PER_SHARD_V1 = 1
    PER_HOST_V1 = 2
    PER_HOST_V2 = 3
    BROADCAST = 4


_TPU_CONFIG_FIELDS = ("iterations_per_loop", "num_shards", "num_cores_per_replica",
                      "per_host_input_for_training", "tpu_job_name",
                      "initial_infeed_sleep_secs", "input_partition_dims",
                      "eval_training_input_configuration",
                      "experimental_host_call_every_n_steps")


class TPUConfig(collections.namedtuple("TPUConfig", _TPU_CONFIG_FIELDS)):
    """TF 1.15's TPUConfig. Here `num_shards` is the number of SPMD replicas (devices of
    JAX's default backend; None: all of them), `iterations_per_loop` the number of
    training steps one Session.run executes as one compiled loop."""

    def __new__(cls, iterations_per_loop=2, num_shards=None, num_cores_per_replica=None,
                per_host_input_for_training=True, tpu_job_name=None,
                initial_infeed_sleep_secs=None, input_partition_dims=None,
                eval_training_input_configuration=InputPipelineConfig.PER_HOST_V1,
                experimental_host_call_every_n_steps=1):
        check_positive_integer(iterations_per_loop, "TPUConfig iterations_per_loop")
        if num_shards is not None:
            check_positive_integer(num_shards, "TPUConfig num_shards")
        if input_partition_dims is not None:
            if len(input_partition_dims) not in (1, 2):
                raise ValueError("input_partition_dims must be a list/tuple with one or two"
                                 " elements.")
            if per_host_input_for_training is not InputPipelineConfig.PER_HOST_V2:
                raise ValueError("input_partition_dims is only supported in PER_HOST_V2 "
                                 "mode.")
            if num_cores_per_replica is None:
                raise ValueError("input_partition_dims requires setting "
                                 "num_cores_per_replica.")
        if num_cores_per_replica is not None and num_cores_per_replica not in (
                1, 2, 4, 8, 16, 32):
            raise ValueError(f"num_cores_per_replica must be 1, 2, 4, 8, 16, or 32; got "
                             f"{num_cores_per_replica}")
        if per_host_input_for_training is False:
            per_host_input_for_training = InputPipelineConfig.PER_SHARD_V1
        elif per_host_input_for_training is True:
            per_host_input_for_training = InputPipelineConfig.PER_HOST_V1
        if initial_infeed_sleep_secs:
            check_positive_integer(initial_infeed_sleep_secs,
                                   "TPUConfig initial_infeed_sleep_secs")
        check_positive_integer(experimental_host_call_every_n_steps,
                               "TPUConfig experimental_host_call_every_n_steps")
        return super().__new__(
            cls, iterations_per_loop, num_shards, num_cores_per_replica,
            per_host_input_for_training, tpu_job_name, initial_infeed_sleep_secs,
            input_partition_dims, eval_training_input_configuration,
            experimental_host_call_every_n_steps)


class RunConfig(run_config_lib.RunConfig):
    """tf.estimator RunConfig plus `tpu_config`, `master`, `evaluation_master` and a
    cluster resolver (`cluster`: its master() and cluster_spec() are used as TF does)."""

    def __init__(self, tpu_config=None, evaluation_master=None, master=None, cluster=None,
                 **kwargs):
        super().__init__(**kwargs)
        if tpu_config is not None and not isinstance(tpu_config, TPUConfig):
            raise TypeError(f"tpu_config must be a TPUConfig, given: {tpu_config!r}")
        self._tpu_config = tpu_config or TPUConfig()
        self._cluster = cluster
        if master is not None:
            if cluster is not None:
                raise ValueError("Both master and cluster are set.")
            self._master = master
        elif cluster:
            self._master = cluster.master()
        if evaluation_master is not None:
            self._evaluation_master = evaluation_master
        elif (not self._evaluation_master
              and self.task_type != run_config_lib.TaskType.EVALUATOR):
            self._evaluation_master = self._master
        if cluster:
            self._cluster_spec = cluster.cluster_spec()

    tpu_config = property(lambda self: self._tpu_config)
    cluster = property(lambda self: self._cluster)

    def replace(self, **kwargs):
        if "tpu_config" not in kwargs:
            return super().replace(**kwargs)
        tpu_config = kwargs.pop("tpu_config")
        new = super().replace(**kwargs)
        new._tpu_config = tpu_config
        return new
