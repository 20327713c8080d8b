"""`tf.summary`: TF1.15's summary ops, the event-file writer and the summary protos."""

from tensorflux._src.framework.protos import (  # noqa: F401
    Event, SessionLog, Summary, SummaryDescription, SummaryMetadata, TaggedRunMetadata,
)
from tensorflux._src.summary.summary_ops import (  # noqa: F401
    audio, histogram, image, merge, merge_all, scalar, tensor_summary, text,
)
from tensorflux._src.summary.writer import FileWriter, FileWriterCache  # noqa: F401
from tensorflux._src.summary.summary_v2_compat import (  # noqa: F401,E402
    all_v2_summary_ops, get_summary_description, initialize,
)
