"""`tf.train.summary_iterator`: the Events of an event file, in order.

An event file is a TFRecord file of serialized `Event` messages (writer.py); a damaged
record is TF's DataLossError naming the file and offset (io/tfrecord.py).
"""

from __future__ import annotations

from tensorflux._src.framework import protos
from tensorflux._src.io.tfrecord import tf_record_iterator

__all__ = ["summary_iterator"]


def summary_iterator(path):
    """Yields each `tf.Event` of the event file `path` (the first is its file_version
    event)."""
    for record in tf_record_iterator(path):
        yield protos.Event.FromString(record)
