"""`tf.strings`: the string ops under TF1.15's strings namespace."""

from tensorflux._src.ops.strings.string_ops import as_string  # noqa: F401
from tensorflux._src.ops.strings.string_ops import string_join as join  # noqa: F401
from tensorflux._src.ops.strings.string_ops import string_length as length  # noqa: F401
from tensorflux._src.ops.strings.string_ops import string_lower as lower  # noqa: F401
from tensorflux._src.ops.strings.string_ops import string_to_number as to_number  # noqa: F401
from tensorflux._src.ops.strings.string_ops import string_upper as upper  # noqa: F401
from tensorflux._src.ops.strings.string_ops import strings_split as split  # noqa: F401
