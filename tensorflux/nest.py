"""`tf.nest`: flatten, pack and map nested structures by TF's rules."""

from tensorflux._src.framework.nest import (  # noqa: F401
    assert_same_structure, flatten, is_nested, map_structure, pack_sequence_as,
)
