"""TF1's switches between 1.x and 2.x behaviour, as tensorflux has them.

tensorflux runs TF1's graph mode: no eager execution (yet), ref variables, tensors
compared by identity, `Dimension` shape entries. The `disable_*` switches therefore
confirm the state a program asks for. `enable_control_flow_v2` flips what
`control_flow_v2_enabled()` reports; tensorflux builds functional control flow (If and
While ops compiled to XLA) either way, which is what TF's v2 control flow is.
"""

from __future__ import annotations

__all__ = [
    "executing_eagerly", "executing_eagerly_outside_functions", "disable_eager_execution",
    "disable_v2_behavior", "control_flow_v2_enabled", "enable_control_flow_v2",
    "disable_control_flow_v2", "resource_variables_enabled", "disable_resource_variables",
    "disable_tensor_equality", "disable_v2_tensorshape",
]

_control_flow_v2 = [False]


def executing_eagerly() -> bool:
    """False: ops build a graph, and a Session runs it."""
    return False


def executing_eagerly_outside_functions() -> bool:
    return False


def disable_eager_execution():
    """Graph mode is what tensorflux runs; nothing to turn off."""


def control_flow_v2_enabled() -> bool:
    return _control_flow_v2[0]


def enable_control_flow_v2():
    _control_flow_v2[0] = True


def disable_control_flow_v2():
    _control_flow_v2[0] = False


def resource_variables_enabled() -> bool:
    """False: `tf.Variable` makes TF1 ref variables."""
    return False


def disable_resource_variables():
    """Ref variables are what tensorflux makes; nothing to turn off."""


def disable_tensor_equality():
    """Tensors compare by identity (and hash), as in TF1; nothing to turn off."""


def disable_v2_tensorshape():
    """Shapes hold `Dimension` objects, as in TF1; nothing to turn off."""


def disable_v2_behavior():
    """Every switch back to TF1's behaviour."""
    disable_control_flow_v2()
