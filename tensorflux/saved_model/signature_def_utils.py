"""`tf.saved_model.signature_def_utils`."""

from tensorflux._src.serving.signatures import (  # noqa: F401
    build_signature_def, classification_signature_def, is_valid_signature,
    predict_signature_def, regression_signature_def,
)
from tensorflux._src.serving.saved_model_utils import MethodNameUpdater  # noqa: F401,E402
