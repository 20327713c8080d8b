"""`tf.train`: optimizers, the global step and (later) checkpoints and training loops."""

from tensorflux._src.train.optimizer import (  # noqa: F401
    Optimizer, create_global_step, get_global_step, get_or_create_global_step,
)
from tensorflux._src.train.optimizers import *  # noqa: F401,F403
from tensorflux._src.train.learning_rate_decay import *  # noqa: F401,F403
