"""`tf.contrib.tpu` (TF 1.15): TPUEstimator and its configuration, CrossShardOptimizer.
The shards run as tensorflux's SPMD replicas on whatever devices JAX has (TPU cores,
GPUs, or CPU devices forced with XLA_FLAGS=--xla_force_host_platform_device_count=N)."""

from tensorflux._src.estimator.tpu.cross_shard_optimizer import (  # noqa: F401
    CrossShardOptimizer,
)
from tensorflux._src.estimator.tpu.tpu_config import (  # noqa: F401
    InputPipelineConfig,
    RunConfig,
    TPUConfig,
)
from tensorflux._src.estimator.tpu.tpu_context import TPUContext  # noqa: F401
from tensorflux._src.estimator.tpu.tpu_estimator import TPUEstimator  # noqa: F401
from tensorflux._src.estimator.tpu.tpu_estimator_spec import TPUEstimatorSpec  # noqa: F401
