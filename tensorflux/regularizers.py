"""Weight regularizers (`tf.contrib.layers` semantics): l1, l2, l1_l2, sum, and
`apply_regularization`."""

from tensorflux._src.layers.regularizers import (  # noqa: F401
    apply_regularization, l1_l2_regularizer, l1_regularizer, l2_regularizer, sum_regularizer,
)
