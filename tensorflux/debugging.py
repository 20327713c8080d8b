"""`tf.debugging`: TF1.15's run-time checks, asserts and numerics checks."""

from tensorflux._src.ops.debug.check_ops import *  # noqa: F401,F403
from tensorflux._src.ops.debug.debug_ops import (  # noqa: F401
    Assert, check_numerics, verify_tensor_all_finite as assert_all_finite,
)
from tensorflux._src.ops.math.math_ops import is_finite, is_inf, is_nan  # noqa: F401
from tensorflux._src.ops.debug.check_shapes import assert_shapes  # noqa: F401,E402
from tensorflux._src.ops.math.counting import (  # noqa: F401,E402
    is_non_decreasing, is_strictly_increasing,
)
from tensorflux._src.runtime.devices import (  # noqa: F401,E402
    get_log_device_placement, set_log_device_placement,
)



def enable_check_numerics(stack_height_limit=30, path_length_limit=50):
    """Ops created from now on fail the run with InvalidArgumentError, naming the op,
    when one of their floating-point outputs holds an Inf or NaN."""
    from tensorflux._src.ops.op_builder import set_numerics_checking
    set_numerics_checking(True)


def disable_check_numerics():
    """Ops created from now on are no longer checked (ones already checked stay so)."""
    from tensorflux._src.ops.op_builder import set_numerics_checking
    set_numerics_checking(False)
