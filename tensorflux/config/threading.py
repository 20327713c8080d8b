"""`tf.config.threading`."""

from tensorflux._src.runtime.tf_config import (  # noqa: F401
    get_inter_op_parallelism_threads, get_intra_op_parallelism_threads,
    set_inter_op_parallelism_threads, set_intra_op_parallelism_threads,
)

__all__ = ["get_inter_op_parallelism_threads", "get_intra_op_parallelism_threads",
           "set_inter_op_parallelism_threads", "set_intra_op_parallelism_threads"]
