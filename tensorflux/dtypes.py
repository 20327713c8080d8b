"""`tf.dtypes`: the DType class and TF's element types."""

from tensorflux._src.framework.dtypes import *  # noqa: F401,F403
from tensorflux._src.framework.dtypes import DType, as_dtype  # noqa: F401
