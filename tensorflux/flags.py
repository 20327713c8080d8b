"""`tf.flags` (also `tf.app.flags`): absl-py's flags as TF1 re-exported them."""

from tensorflux._src.platform.flags import *  # noqa: F401,F403
from tensorflux._src.platform.flags import FLAGS, __all__, tf_decorator  # noqa: F401
