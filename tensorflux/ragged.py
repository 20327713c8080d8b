"""`tf.ragged`: ragged tensors (rows of different lengths) and their functions."""

from tensorflux._src.ops.sparse.ragged_ops import (  # noqa: F401
    boolean_mask, constant, constant_value, cross, cross_hashed, map_flat_values,
    placeholder, range, row_splits_to_segment_ids, segment_ids_to_row_splits, stack,
    stack_dynamic_partitions,
)
from tensorflux._src.ops.sparse.ragged_tensor import RaggedTensorValue  # noqa: F401
from tensorflux._src.ops.sparse import ragged_dispatch as _ragged_dispatch  # noqa: F401,E402
