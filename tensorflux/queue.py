"""`tf.queue`: TF1.15's queue classes (also at the top level: `tf.FIFOQueue`, ...)."""

from tensorflux._src.queues.data_flow_ops import (  # noqa: F401
    FIFOQueue, PaddingFIFOQueue, PriorityQueue, QueueBase, RandomShuffleQueue,
)
