"""`tf.saved_model` (TF 1.15's v1 names): SavedModelBuilder, simple_save, loader.load,
SignatureDefs and the tag and signature constants. The on-disk format is described in
tensorflux/_src/serving/saved_model.py."""

from tensorflux._src.serving.saved_model import (  # noqa: F401
    ASSETS_DIRECTORY, ASSETS_KEY, DEBUG_DIRECTORY, DEBUG_INFO_FILENAME_PB, LEGACY_INIT_OP_KEY,
    MAIN_OP_KEY, SAVED_MODEL_FILENAME, SAVED_MODEL_FILENAME_PB, SAVED_MODEL_FILENAME_PBTXT,
    SAVED_MODEL_SCHEMA_VERSION, VARIABLES_DIRECTORY, VARIABLES_FILENAME, Builder,
    contains_saved_model, load, maybe_saved_model_directory, simple_save,
)
from tensorflux._src.serving.signatures import (  # noqa: F401
    CLASSIFY_INPUTS, CLASSIFY_METHOD_NAME, CLASSIFY_OUTPUT_CLASSES, CLASSIFY_OUTPUT_SCORES,
    DEFAULT_SERVING_SIGNATURE_DEF_KEY, GPU, PREDICT_INPUTS, PREDICT_METHOD_NAME,
    PREDICT_OUTPUTS, REGRESS_INPUTS, REGRESS_METHOD_NAME, REGRESS_OUTPUTS, SERVING, TPU,
    TRAINING, build_signature_def, build_tensor_info, classification_signature_def,
    get_tensor_from_tensor_info, is_valid_signature, predict_signature_def,
    regression_signature_def,
)
from tensorflux.saved_model import (  # noqa: F401
    builder, constants, loader, main_op, signature_constants, signature_def_utils,
    tag_constants, utils,
)
from tensorflux._src.serving.saved_model_utils import main_op_with_restore  # noqa: F401


def save(obj, export_dir, signatures=None, options=None):
    """TF 1.15's `tf.saved_model.save` is TF2's object-based export (tf.Module and
    tf.function), which TF1 graphs do not have; use simple_save or Builder."""
    raise NotImplementedError("tf.saved_model.save exports TF2 trackable objects, which "
                              "tensorflux does not have; use tf.saved_model.simple_save or "
                              "tf.saved_model.Builder (SavedModelBuilder) for a TF1 graph.")
