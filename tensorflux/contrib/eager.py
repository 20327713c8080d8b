"""`tf.contrib.eager` (tfe): eager execution's helpers in TF 1.x.

    tf.enable_eager_execution()
    tfe = tf.contrib.eager
    grad = tfe.implicit_gradients(loss_fn)
    optimizer.apply_gradients(grad(model, x, y))
"""

from tensorflux._src.data.iterator_ops import EagerIterator as Iterator  # noqa: F401
from tensorflux._src.eager.backprop import (  # noqa: F401
    gradients_function,
    implicit_gradients,
    implicit_value_and_gradients,
    val_and_grad_function,
    value_and_gradients_function,
)
from tensorflux._src.eager.context import (  # noqa: F401
    ASYNC,
    DEVICE_PLACEMENT_EXPLICIT,
    DEVICE_PLACEMENT_SILENT,
    DEVICE_PLACEMENT_SILENT_FOR_INT32,
    DEVICE_PLACEMENT_WARN,
    SYNC,
    enable_eager_execution,
)
from tensorflux._src.eager.eager_tensor import EagerTensor  # noqa: F401
from tensorflux._src.eager.function import defun, function  # noqa: F401
from tensorflux._src.eager.network import Network  # noqa: F401
from tensorflux._src.eager.tape import GradientTape  # noqa: F401
from tensorflux._src.framework.behaviour import executing_eagerly
from tensorflux._src.train.variables import Variable  # noqa: F401


def in_eager_mode():
    """TF's older name for executing_eagerly()."""
    return executing_eagerly()


def num_gpus():
    import jax
    return sum(1 for d in jax.devices() if d.platform == "gpu")
