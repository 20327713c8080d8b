"""Outputs that one op's lowering computes for a later op of the same trace.

A lowering sees one op. Some kernels do two ops' work in one call faster than in two:
a convolution layer's input and filter gradients run side by side in one oneDNN call
(conv_onednn.backprop_pair). The op lowered first then computes both and hands the
other op its outputs here; when that op's turn comes, lowering.lower_op takes them
instead of lowering it.

Only within one traced cluster (`scope`, opened by cluster.py around its trace), and
only for an op that is lowered later in it and reads no variable (`later_inputs`): a
read's value could depend on a write in between.
"""

from __future__ import annotations

import contextlib
import threading

from tensorflux._src.compiler import effects

_local = threading.local()


class _Scope:
    def __init__(self, ops, inputs_of):
        self.position = {op: i for i, op in enumerate(ops)}
        self.inputs_of = inputs_of  # op -> its input values, or None (see `scope`)
        self.handed = {}  # op -> its outputs, computed by an earlier op's lowering


@contextlib.contextmanager
def scope(ops, inputs_of):
    """Ops lowered in this order, in one trace; `inputs_of(op)` gives an op's input
    values (None for one not computed yet), or None when it reads a variable."""
    previous = getattr(_local, "scope", None)
    _local.scope = _Scope(ops, inputs_of)
    try:
        yield
    finally:
        _local.scope = previous


def later_inputs(op):
    """The input values of `op` (None for one not computed yet) when it is lowered
    after the op being lowered now, in this trace, and reads no variable; else None."""
    current = getattr(_local, "scope", None)
    now = effects.current_op()
    if current is None or now not in current.position or op in current.handed:
        return None
    if current.position.get(op, -1) <= current.position[now]:
        return None
    return current.inputs_of(op)


def hand_over(op, outputs):
    """Records `outputs` as `op`'s, for when its turn comes (see `later_inputs`)."""
    _local.scope.handed[op] = list(outputs)


def take(op):
    """The outputs handed over to `op`, once; None when there are none."""
    current = getattr(_local, "scope", None)
    return None if current is None else current.handed.pop(op, None)
