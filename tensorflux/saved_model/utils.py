"""`tf.saved_model.utils`."""

from tensorflux._src.serving.signatures import (  # noqa: F401
    build_tensor_info, get_tensor_from_tensor_info,
)
