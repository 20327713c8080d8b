"""`tf.estimator.tpu` / `tf.compat.v1.estimator.tpu` (TF 1.15): TPUEstimator,
TPUEstimatorSpec, RunConfig, TPUConfig, InputPipelineConfig."""

from tensorflux._src.estimator.tpu.tpu_config import (  # noqa: F401
    InputPipelineConfig,
    RunConfig,
    TPUConfig,
)
from tensorflux._src.estimator.tpu.tpu_estimator import TPUEstimator  # noqa: F401
from tensorflux._src.estimator.tpu.tpu_estimator_spec import TPUEstimatorSpec  # noqa: F401
