"""`tf.config.optimizer`."""

from tensorflux._src.runtime.tf_config import (  # noqa: F401
    get_optimizer_experimental_options as get_experimental_options,
    get_optimizer_jit as get_jit,
    set_optimizer_experimental_options as set_experimental_options,
    set_optimizer_jit as set_jit,
)

__all__ = ["get_experimental_options", "get_jit", "set_experimental_options", "set_jit"]
