"""`tf.saved_model.loader`."""

from tensorflux._src.serving.saved_model import (  # noqa: F401
    load, maybe_saved_model_directory,
)
