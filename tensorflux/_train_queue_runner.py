"""`tf.train.queue_runner`: TF1's module of the queue runner names (the same objects as
`tf.train.QueueRunner`, `tf.train.add_queue_runner`, `tf.train.start_queue_runners`)."""

from tensorflux._src.queues.queue_runner import (  # noqa: F401
    QueueRunner, add_queue_runner, start_queue_runners,
)
