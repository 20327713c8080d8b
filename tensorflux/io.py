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
from tensorflux._src.ops.sparse.sparse_io import (  # noqa: F401,E402
    deserialize_many_sparse, serialize_many_sparse, serialize_sparse,
)

# Files and strings: the rest of tf.io.
from tensorflux._src.ops.strings.ragged_feature import RaggedFeature  # noqa: E402,F401
from tensorflux._src.io.matching_files import matching_files  # noqa: E402,F401
from tensorflux._src.ops.image.image_codec import (  # noqa: E402,F401
    decode_bmp, decode_gif, decode_image, decode_jpeg, decode_png, encode_jpeg, encode_png,
)
from tensorflux._src.ops.image.image_codec_more import decode_jxl, decode_webp  # noqa
from tensorflux._src.ops.image.image_jpeg import (  # noqa: E402,F401
    decode_and_crop_jpeg, extract_jpeg_shape, is_jpeg,
)
from tensorflux._src.ops.strings.csv_ops import decode_csv  # noqa: E402,F401
from tensorflux._src.ops.strings.encoding_ops import (  # noqa: E402,F401
    decode_base64, decode_compressed, encode_base64,
)
from tensorflux._src.ops.strings.json_example_ops import decode_json_example  # noqa: E402,F401
from tensorflux._src.ops.strings.sequence_parsing_ops import (  # noqa: E402,F401
    parse_sequence_example, parse_single_sequence_example,
)
from tensorflux._src.ops.strings.sparse_feature import SparseFeature  # noqa: E402,F401
from tensorflux._src.ops.strings.proto_ops import decode_proto, encode_proto  # noqa: E402,F401

# Training utilities: match_filenames_once, PriorityQueue.
from tensorflux._src.queues.data_flow_ops import PriorityQueue  # noqa: F401,E402
from tensorflux._src.io.matching_files import match_filenames_once  # noqa: F401,E402

# GraphDefs to files (TF 1.15 exports write_graph under tf.train and tf.io).
from tensorflux._src.io.write_graph import write_graph  # noqa: F401,E402
