"""`tf.saved_model.constants`."""

from tensorflux._src.serving.saved_model import (  # noqa: F401
    ASSETS_DIRECTORY, ASSETS_KEY, LEGACY_INIT_OP_KEY, MAIN_OP_KEY, SAVED_MODEL_FILENAME,
    SAVED_MODEL_SCHEMA_VERSION, VARIABLES_DIRECTORY, VARIABLES_FILENAME,
)
