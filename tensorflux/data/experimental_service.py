"""`tf.data.experimental.service`: the tf.data service (dispatcher, workers, and the
dataset transformations that read from it). Workers run datasets registered in their
own process: tensorflux cannot serialize dataset definitions (see
tensorflux/_src/data/service_servers.py)."""

from tensorflux._src.data.service_ops import (  # noqa: F401
    CrossTrainerCache, ShardingPolicy, distribute, from_dataset_id, register_dataset,
)
from tensorflux._src.data.service_servers import (  # noqa: F401
    DispatcherConfig, DispatchServer, WorkerConfig, WorkerServer,
)

__all__ = ["CrossTrainerCache", "DispatchServer", "DispatcherConfig", "ShardingPolicy",
           "WorkerConfig", "WorkerServer", "distribute", "from_dataset_id",
           "register_dataset"]
