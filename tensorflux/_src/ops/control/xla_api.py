"""`tf.xla.experimental`: TF1's explicit XLA controls.

Every op of a tensorflux run that XLA can compile is compiled (host ops aside), so the
clustering TF1 asked for with these is what already happens: `jit_scope` checks its
arguments and marks nothing, and `compile(computation, inputs)` builds `computation`
in the graph and returns its outputs in TF's structure.
"""

from __future__ import annotations

import contextlib

from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.operation import Operation, Tensor
from tensorflux._src.ops.control.control_ops import group, no_op

__all__ = ["compile", "jit_scope"]


@contextlib.contextmanager
def jit_scope(compile_ops=True, separate_compiled_gradients=False):
    """Ops built inside are compiled with XLA (tensorflux compiles them anyway; TF calls
    the scope a best-effort hint). `compile_ops` is a bool or a callable of a node_def."""
    if not (isinstance(compile_ops, bool) or callable(compile_ops)):
        raise TypeError(f"compile_ops must be a Python bool or a callable that accepts a "
                        f"node_def, got {compile_ops!r}")
    yield


def compile(computation, inputs=None):  # noqa: A001 - TF's public name
    """`computation(*inputs)` built into the graph, compiled with XLA when run. As TF's:
    a None result becomes a NoOp, a single tensor a 1-tuple, and operations (alone or
    mixed in a list) become a NoOp that depends on them, after the tensors."""
    if not callable(computation):
        raise TypeError(f"computation must be callable, got {computation!r}")
    with _graph.name_scope("XLACompile"):
        result = computation(*(inputs or []))
    if result is None:
        return [no_op()]
    if isinstance(result, (Tensor, Operation)):
        result = [result]
    result = list(result)
    tensors = [r for r in result if isinstance(r, Tensor)]
    ops = [r for r in result if isinstance(r, Operation)]
    if ops:
        return tensors + [group(*ops)] if tensors else [group(*ops)]
    return tuple(tensors) if len(tensors) == 1 else tensors
