"""`tf.compat`: the TF1 surface again as `tensorflux.compat.v1`, plus small helpers."""

from tensorflux._src.framework.tensor_shape import dimension_value  # noqa: F401
from tensorflux.compat import v1  # noqa: F401
