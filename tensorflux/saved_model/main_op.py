"""`tf.saved_model.main_op`."""

from tensorflux._src.serving.saved_model_utils import (  # noqa: F401
    main_op, main_op_with_restore,
)
