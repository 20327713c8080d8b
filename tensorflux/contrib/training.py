"""`tf.contrib.training`: the parameter-server placement strategies."""

from tensorflux._src.train.device_setter import (  # noqa: F401
    GreedyLoadBalancingStrategy, byte_size_load_fn,
)
