"""`tf.distribute.experimental`: TF1's names for strategies still marked experimental."""

from tensorflux.distribute.multi_worker import (  # noqa: F401
    CollectiveCommunication, MultiWorkerMirroredStrategy)
