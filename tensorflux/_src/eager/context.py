"""Turning eager execution on and off: `tf.enable_eager_execution` and its TF1 rules.

Eager execution is process-wide, as in TF1: enabling it makes the global default graph
an `EagerGraph` (`framework/graph.py`'s `_DefaultGraphStack.global_graph_class`), so
every op created outside a `with tf.Graph().as_default():` block runs at once.
`tf.executing_eagerly()` (framework/behaviour.py) asks the default graph.
"""

from __future__ import annotations

from tensorflux._src.eager.eager_graph import EagerGraph
from tensorflux._src.framework import behaviour
from tensorflux._src.framework import graph as _graph
from tensorflux._src.runtime import session as _session
from tensorflux._src.runtime import tf_config

DEVICE_PLACEMENT_EXPLICIT = 0
DEVICE_PLACEMENT_WARN = 1
DEVICE_PLACEMENT_SILENT = 2
DEVICE_PLACEMENT_SILENT_FOR_INT32 = 3
SYNC = 0
ASYNC = 1

_POLICY_NAMES = {DEVICE_PLACEMENT_EXPLICIT: "explicit", DEVICE_PLACEMENT_WARN: "warn",
                 DEVICE_PLACEMENT_SILENT: "silent",
                 DEVICE_PLACEMENT_SILENT_FOR_INT32: "silent_for_int32"}


def _graph_mode_has_been_used() -> bool:
    """TF1's test: the global default graph has ops, or a Session was created."""
    default = _graph._DefaultGraphStack._global_default
    used = default is not None and not getattr(default, "_is_eager_graph", False) and \
        default.num_operations() > 0
    return used or _session.BaseSession._created > 0


def enable_eager_execution(config=None, device_policy=None, execution_mode=None):
    """Enables eager execution for the lifetime of this program (TF1's rules: at program
    startup, before any graph was built or Session created)."""
    _check_config(config, device_policy, execution_mode)
    if eager_enabled():
        return
    if _graph_mode_has_been_used():
        raise ValueError("tf.enable_eager_execution must be called at program startup.")
    if device_policy is not None:
        tf_config.set_device_policy(_POLICY_NAMES[device_policy])
    if execution_mode is not None:
        tf_config.set_synchronous_execution(execution_mode == SYNC)
    _set_eager(True)
    return


def _check_config(config, device_policy, execution_mode):
    if config is not None and type(config).__name__ != "ConfigProto":
        raise TypeError(f"config must be a tf.ConfigProto, but got {type(config)}")
    if device_policy not in (None, *_POLICY_NAMES):
        raise ValueError("device_policy must be one of None, "
                         "tf.contrib.eager.DEVICE_PLACEMENT_*")
    if execution_mode not in (None, SYNC, ASYNC):
        raise ValueError("execution_mode must be one of None, tf.contrib.eager.SYNC, "
                         "tf.contrib.eager.ASYNC")


def eager_enabled() -> bool:
    return _graph._DefaultGraphStack.global_graph_class is EagerGraph


def _set_eager(enabled):
    stack = _graph._DefaultGraphStack
    if enabled == eager_enabled():
        return
    stack.global_graph_class = EagerGraph if enabled else _graph.Graph
    stack._global_default = None  # made on first use, of the new class


behaviour._eager_switch[:] = [_set_eager]
