"""`tf.saved_model.tag_constants`."""

from tensorflux._src.serving.signatures import EVAL, GPU, SERVING, TPU, TRAINING  # noqa: F401
