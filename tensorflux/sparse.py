"""`tf.sparse`: SparseTensor ops (TF1.15's names; the same objects as the top-level
`tf.sparse_*` functions where TF aliases them)."""

from tensorflux._src.framework.sparse_tensor import SparseTensor  # noqa: F401
from tensorflux._src.ops.math.sparse_segments import (  # noqa: F401
    sparse_segment_mean as segment_mean, sparse_segment_sqrt_n as segment_sqrt_n,
    sparse_segment_sum as segment_sum,
)
from tensorflux._src.ops.sparse.sparse_cross import (  # noqa: F401
    bincount, sparse_cross as cross, sparse_cross_hashed as cross_hashed,
)
from tensorflux._src.ops.sparse.sparse_math import (  # noqa: F401
    sparse_add as add, sparse_maximum as maximum, sparse_minimum as minimum,
    sparse_reduce_max as reduce_max, sparse_reduce_max_sparse as reduce_max_sparse,
    sparse_reduce_sum as reduce_sum, sparse_reduce_sum_sparse as reduce_sum_sparse,
    sparse_softmax as softmax, sparse_tensor_dense_matmul as matmul,
    sparse_tensor_dense_matmul as sparse_dense_matmul,
)
from tensorflux._src.ops.sparse.sparse_ops import (  # noqa: F401
    sparse_concat as concat, sparse_fill_empty_rows as fill_empty_rows,
    sparse_reorder as reorder, sparse_reshape as reshape, sparse_slice as slice,
    sparse_split as split, sparse_tensor_to_dense as to_dense,
)
from tensorflux._src.ops.sparse.sparse_compose import (  # noqa: F401
    from_dense, sparse_expand_dims as expand_dims, sparse_eye as eye, sparse_mask as mask,
    sparse_merge as merge, sparse_placeholder as placeholder,
    sparse_reset_shape as reset_shape, sparse_retain as retain,
    sparse_to_indicator as to_indicator, sparse_transpose as transpose,
)

# The accumulator of sparse gradients lives with the other accumulators (queues).
from tensorflux._src.queues.accumulators import SparseConditionalAccumulator  # noqa: E402,F401
