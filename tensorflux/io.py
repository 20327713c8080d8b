"""`tf.io`: TF1.15's TFRecord reading and writing (the parts of tf.io tensorflux has)
and `tf.io.gfile`."""

from tensorflux._src.io.tfrecord import (  # noqa: F401
    TFRecordCompressionType, TFRecordOptions, TFRecordWriter, tf_record_iterator,
)
from tensorflux._src.ops.strings.parsing_ops import (  # noqa: F401
    FixedLenFeature, FixedLenSequenceFeature, VarLenFeature, decode_raw, parse_example,
    parse_single_example, parse_tensor, serialize_tensor,
)
from tensorflux._src.io.readers import read_file, write_file  # noqa: F401
from tensorflux._src.queues.data_flow_ops import (  # noqa: F401
    FIFOQueue, PaddingFIFOQueue, QueueBase, RandomShuffleQueue,
)
from tensorflux import _io_gfile as gfile  # noqa: E402,F401

# Sparse tensors: serialize_sparse and friends.

# Files and strings: the rest of tf.io.

# Training utilities: match_filenames_once, PriorityQueue.
from tensorflux._src.queues.data_flow_ops import PriorityQueue  # noqa: F401,E402
from tensorflux._src.io.matching_files import match_filenames_once  # noqa: F401,E402
