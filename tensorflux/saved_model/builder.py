"""`tf.saved_model.builder`."""

from tensorflux._src.serving.saved_model import SavedModelBuilder  # noqa: F401
