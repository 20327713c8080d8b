"""Batch sizes, shard count and devices of a TPUEstimator run (TF 1.15's
_InternalTPUContext rules), and `TPUContext`, the object input_fn and model_fn get as
params['context']."""

from __future__ import annotations

import jax

from tensorflux._src.estimator.model_fn import ModeKeys
from tensorflux._src.estimator.tpu.tpu_config import InputPipelineConfig
from tensorflux._src.runtime import devices as _devices


class InternalContext:
    """What one TPUEstimator knows about shards and batch sizes, per mode."""

    def __init__(self, config, train_batch_size, eval_batch_size, predict_batch_size,
                 use_tpu, eval_on_tpu):
        self._config = config
        self._batch_sizes = {ModeKeys.TRAIN: train_batch_size,
                             ModeKeys.EVAL: eval_batch_size,
                             ModeKeys.PREDICT: predict_batch_size}
        self.use_tpu, self.eval_on_tpu = use_tpu, eval_on_tpu
        self._replicas = None

    @property
    def tpu_config(self):
        return self._config.tpu_config

    @property
    def num_replicas(self):
        """TPUConfig.num_shards, or every device of JAX's default backend."""
        return self.tpu_config.num_shards or len(jax.devices())

    num_hosts = property(lambda self: 1)
    iterations_per_loop = property(lambda self: self.tpu_config.iterations_per_loop)

    def is_running_on_cpu(self, mode, is_export_mode=False):
        if not self.use_tpu or is_export_mode:
            return True
        return mode == ModeKeys.EVAL and not self.eval_on_tpu

    def deployment(self, mode):
        """The input pipeline deployment for `mode`: training follows
        per_host_input_for_training; evaluation and prediction run per host, except
        PER_HOST_V2 and BROADCAST, which apply to every mode (as TF)."""
        mode_config = self.tpu_config.per_host_input_for_training
        if mode != ModeKeys.TRAIN and mode_config == InputPipelineConfig.PER_SHARD_V1:
            return InputPipelineConfig.PER_HOST_V1
        return mode_config

    def global_batch_size(self, mode):
        return self._batch_sizes[mode]

    def batch_size_for_input_fn(self, mode):
        size = self.global_batch_size(mode)
        if size is None or self.is_running_on_cpu(mode):
            return size
        deployment = self.deployment(mode)
        if deployment == InputPipelineConfig.BROADCAST:
            return size
        if deployment in (InputPipelineConfig.PER_SHARD_V1, InputPipelineConfig.PER_HOST_V2):
            return size // self.num_replicas
        return size // self.num_hosts

    def batch_size_for_model_fn(self, mode):
        size = self.global_batch_size(mode)
        if size is None or self.is_running_on_cpu(mode):
            return size
        if self.deployment(mode) == InputPipelineConfig.BROADCAST:
            return size
        return size // self.num_replicas

    def elements_per_step(self, mode):
        """How many input_fn Dataset elements make one step's global batch."""
        if self.deployment(mode) == InputPipelineConfig.PER_HOST_V2:
            return self.num_replicas
        return 1

    def validate(self, mode):
        """TF's checks before a run on the replicas (TF's messages)."""
        deployment = self.deployment(mode)
        if deployment == InputPipelineConfig.PER_SHARD_V1:
            raise NotImplementedError(
                "per_host_input_for_training=False (PER_SHARD_V1: input_fn called once per "
                "shard) is not supported by tensorflux's TPUEstimator; use True "
                "(PER_HOST_V1), PER_HOST_V2 or BROADCAST.")
        num_replicas = self.num_replicas
        size = self.global_batch_size(mode)
        broadcast = deployment == InputPipelineConfig.BROADCAST
        if mode == ModeKeys.TRAIN:
            if size % num_replicas != 0 and not broadcast:
                raise ValueError(f"train batch size {size} must be divisible by number of "
                                 f"replicas {num_replicas}")
        elif mode == ModeKeys.EVAL:
            if size is None:
                raise ValueError("eval_batch_size in TPUEstimator constructor cannot be "
                                 "`None` if .evaluate is running on TPU.")
            if size % num_replicas != 0 and not broadcast:
                raise ValueError(f"eval batch size {size} must be divisible by number of "
                                 f"replicas {num_replicas}")
        else:
            if size is None:
                raise ValueError("predict_batch_size in TPUEstimator constructor should "
                                 "not be `None` if .predict is running on TPU.")
            if size % num_replicas != 0 and not broadcast:
                raise ValueError(f"predict batch size {size} must be divisible by number "
                                 f"of replicas {num_replicas}")
        self.replicas()

    def replicas(self):
        """The SPMD `Replicas` the model step runs on: the first num_shards devices."""
        if self._replicas is None:
            available = jax.devices()
            n = self.num_replicas
            if n > len(available):
                raise ValueError(
                    f"TPUConfig.num_shards is not set correctly. This process has "
                    f"{len(available)} {available[0].platform.upper()} device(s), so "
                    f"num_replicas should be at most ({len(available)}), got ({n}). On a "
                    f"CPU machine, set XLA_FLAGS=--xla_force_host_platform_device_count="
                    f"{n} before JAX starts to get {n} devices, or leave num_shards as "
                    f"`None` to use every device.")
            self._replicas = _devices.Replicas(available[:n])
        return self._replicas


class TPUContext:
    """params['context'] (TF's TPUContext, the parts that mean something here)."""

    def __init__(self, internal, mode, call_from_input_fn):
        self._internal, self._mode = internal, mode
        self._call_from_input_fn = call_from_input_fn

    mode = property(lambda self: self._mode)
    num_replicas = property(lambda self: self._internal.num_replicas)
    num_hosts = property(lambda self: 1)
    current_host = property(lambda self: 0)
    num_of_replicas_per_host = property(lambda self: self._internal.num_replicas)

    @property
    def input_pipeline_deployment(self):
        return self._internal.deployment(self._mode)

    def current_input_fn_deployment(self):
        """(host_device, invocation_index, total_invocations): one input_fn call."""
        return "/job:localhost/replica:0/task:0/device:CPU:0", 0, 1

    def device_for_replica(self, replica_id):
        devices = self._internal.replicas().devices
        device = devices[replica_id]
        name = f"/job:localhost/replica:0/task:0/device:{device.platform.upper()}:{device.id}"
        return name, [0]
