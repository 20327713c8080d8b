"""`tf.distribute`: training on several devices and tasks.

Replicas on one host (`MirroredStrategy`, `replicate`): one compiled training step,
sharded as SPMD over a device mesh (see `mirrored_strategy.py`). The TF1 cluster
surface (`Server`, `cluster_resolver`) describes multi-task jobs; `tf.train` has
`ClusterSpec`, `Server` and `replica_device_setter`.
"""

from tensorflux.distribute import cluster_resolver  # noqa: F401
from tensorflux.distribute.mirrored_strategy import MirroredStrategy, replicate  # noqa: F401
from tensorflux._src.train.server_lib import Server  # noqa: F401
# Many hosts: one process per host, SPMD with jax.distributed (multi_worker.py); launch
# local processes with `python -m tensorflux.distribute.launch`.
from tensorflux.distribute.multi_worker import (  # noqa: F401
    CollectiveCommunication, MultiWorkerMirroredStrategy)
from tensorflux.distribute import experimental  # noqa: F401
from tensorflux._src.distribute.ps.trainer import (  # noqa: F401
    CheckpointInfo, ParameterServerTraining, Progress, TrainingResult,
)
