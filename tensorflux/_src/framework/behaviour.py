"""TF1's switches between 1.x and 2.x behaviour, as tensorflux has them.

tensorflux runs TF1's graph mode unless `tf.enable_eager_execution()` was called
(`_src/eager/context.py`): ref variables, tensors compared by identity, `Dimension`
shape entries. Eager execution is on while the default graph is the eager context's
graph (a `with tf.Graph().as_default():` block inside an eager program builds a graph,
as in TF). The other `disable_*` switches confirm the state a program asks for. `enable_control_flow_v2` flips what
`control_flow_v2_enabled()` reports; tensorflux builds functional control flow (If and
While ops compiled to XLA) either way, which is what TF's v2 control flow is.
"""

from __future__ import annotations

__all__ = [
    "executing_eagerly", "executing_eagerly_outside_functions", "disable_eager_execution",
    "disable_v2_behavior", "enable_v2_behavior", "control_flow_v2_enabled", "enable_control_flow_v2",
    "disable_control_flow_v2", "resource_variables_enabled", "disable_resource_variables",
    "disable_tensor_equality", "disable_v2_tensorshape",
]

_control_flow_v2 = [False]


def executing_eagerly() -> bool:
    """True when ops run as they are created (eager execution, and not inside a
    `tf.Graph().as_default()` block or a function being traced)."""
    from tensorflux._src.framework.graph import get_default_graph
    return getattr(get_default_graph(), "_is_eager_graph", False)


def executing_eagerly_outside_functions() -> bool:
    """True when eager execution is on for the program, even while a function traces."""
    from tensorflux._src.framework.graph import _DefaultGraphStack
    return getattr(_DefaultGraphStack.global_graph_class, "_is_eager_graph", False)


def disable_eager_execution():
    """Back to graph mode: the eager context's switch (`_src/eager/context.py`), when
    eager execution was enabled."""
    if _eager_switch:
        _eager_switch[0](False)


# Set by the eager context module when it loads: its enable/disable function, so this
# framework module need not import the layer above it.
_eager_switch = []


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
    """Every switch back to TF1's behaviour (graph mode included)."""
    disable_control_flow_v2()
    disable_eager_execution()


def enable_v2_behavior():
    """TF2's switches that tensorflux has: eager execution and control flow v2 (ref
    variables, identity comparison and `Dimension` shapes stay TF1's)."""
    enable_control_flow_v2()
    if _eager_switch:
        _eager_switch[0](True)
