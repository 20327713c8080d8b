"""`tf.strings`: the string ops under TF1.15's strings namespace."""

from tensorflux._src.ops.strings.string_ops import as_string  # noqa: F401
from tensorflux._src.ops.strings.string_ops import string_join as join  # noqa: F401
from tensorflux._src.ops.strings.string_ops import string_length as length  # noqa: F401
from tensorflux._src.ops.strings.string_ops import string_lower as lower  # noqa: F401
from tensorflux._src.ops.strings.string_ops import string_to_number as to_number  # noqa: F401
from tensorflux._src.ops.strings.string_ops import string_upper as upper  # noqa: F401
from tensorflux._src.ops.strings.string_ops import strings_split as split  # noqa: F401
from tensorflux._src.ops.strings.hash_ops import (  # noqa: F401
    string_to_hash_bucket as to_hash_bucket,
    string_to_hash_bucket_fast as to_hash_bucket_fast,
    string_to_hash_bucket_strong as to_hash_bucket_strong,
)
from tensorflux._src.ops.strings.ngram_ops import ngrams  # noqa: F401
from tensorflux._src.ops.strings.regex_ops import regex_full_match, regex_replace  # noqa: F401
from tensorflux._src.ops.strings.text_ops import (  # noqa: F401
    reduce_join, string_format as format, string_strip as strip, substr, unsorted_segment_join,
)
from tensorflux._src.ops.strings.unicode_ops import (  # noqa: F401
    bytes_split, unicode_decode, unicode_decode_with_offsets, unicode_encode, unicode_script,
    unicode_split, unicode_split_with_offsets, unicode_transcode,
)
