"""`tf.gradients`: reverse-mode differentiation that builds gradient ops in the graph.

Walks the ops between `xs` and `ys` in reverse topological order, calling each op's
gradient function (its OpDef's `grad`, or one registered with `tf.RegisterGradient`
and selected by `Graph.gradient_override_map`). Gradient ops are ordinary graph ops
(`gradients/add_grad/...`), so they can be inspected, clipped, and differentiated
again (`tf.hessians`).

Sparse gradients: gather's gradient along axis 0 is a `tf.IndexedSlices`. As in TF1,
contributions that include one are summed by concatenating values and indices (a dense
term joins as all of its rows), gradient functions that pass them on (Identity, Cast,
IdentityN, tf.RegisterGradient functions) receive them as they are, and the others get
them densified, which is what TF's functions do when they use them in an op.
"""

from __future__ import annotations

import contextlib
import enum

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.behaviour import executing_eagerly
from tensorflux._src.framework.indexed_slices import IndexedSlices
from tensorflux._src.framework.operation import Operation, Tensor
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.ops.array.array_ops import stop_gradient  # noqa: F401 - tf.stop_gradient
from tensorflux._src.ops.array.generator_ops import zeros_like
from tensorflux._src.ops.math.indexed_slices_ops import aggregate_indexed_slices
from tensorflux._src.ops.registry import lookup

__all__ = ["gradients", "RegisterGradient", "NotDifferentiable", "NoGradient",
           "stop_gradient", "AggregationMethod"]

_CUSTOM_GRADIENTS = {}  # name given to RegisterGradient -> function
_NOT_DIFFERENTIABLE = set()


class RegisterGradient:
    """Decorator registering a gradient function under a name, for op types or overrides."""

    def __init__(self, op_type):
        if not isinstance(op_type, str):
            raise TypeError("op_type must be a string")
        self._op_type = op_type

    def __call__(self, fn):
        if self._op_type in _CUSTOM_GRADIENTS:
            raise KeyError(f"Registering two gradient with name '{self._op_type}'! (Previous "
                           f"registration was for {_CUSTOM_GRADIENTS[self._op_type]!r})")
        _CUSTOM_GRADIENTS[self._op_type] = fn
        return fn


def NotDifferentiable(op_type):  # noqa: N802 - TF's public name
    """Declares that ops of `op_type` have no gradient (their inputs get None)."""
    if not isinstance(op_type, str):
        raise TypeError("op_type must be a string")
    _NOT_DIFFERENTIABLE.add(op_type)


NoGradient = NotDifferentiable


class UnconnectedGradients(enum.Enum):
    """What `tf.gradients` returns for an x that ys do not depend on: None, or zeros."""

    NONE = "none"
    ZERO = "zero"


class AggregationMethod:
    ADD_N = 0
    DEFAULT = ADD_N
    EXPERIMENTAL_TREE = 1
    EXPERIMENTAL_ACCUMULATE_N = 2


def _gradient_function(op):
    """The gradient function for `op`, None if not differentiable; raises if missing."""
    override = getattr(op, "_gradient_override", None)
    if override is not None:
        if override in _CUSTOM_GRADIENTS:
            return _CUSTOM_GRADIENTS[override]
        if override in _NOT_DIFFERENTIABLE:
            return None
        op_def = lookup(override)
    else:
        if op.type in _CUSTOM_GRADIENTS:
            return _CUSTOM_GRADIENTS[op.type]
        if op.type in _NOT_DIFFERENTIABLE:
            return None
        op_def = op.op_def
    if op_def.grad is not None:
        return op_def.grad
    if op_def.not_differentiable:
        return None
    raise LookupError(f"No gradient defined for operation '{op.name}' (op type: {op.type})")


def _is_backpropagatable(tensor) -> bool:
    dtype = tensor.dtype.base_dtype
    return dtype.is_floating or dtype.is_complex or dtype in (_dtypes.resource,
                                                              _dtypes.variant)


def _as_list(x):
    return list(x) if isinstance(x, (list, tuple)) else [x]


def _between_ops(ys, xs, stop_ops):
    """Ops on some path from an x to a y (not passing through a stop op)."""
    reached = set()
    stack = [x.op for x in xs]
    while stack:  # forward from xs
        op = stack.pop()
        if op in reached:
            continue
        reached.add(op)
        for t in op.outputs:
            stack.extend(c for c in t._consumers if c not in reached)
    between = set()
    stack = [y.op for y in ys]
    while stack:  # backward from ys, staying inside what the xs reach
        op = stack.pop()
        if op in between or op not in reached:
            continue
        between.add(op)
        if op in stop_ops:
            continue
        stack.extend(t.op for t in op.inputs)
    return between


def _aggregate(grads, name):
    from tensorflux._src.ops.math.math_ops import add_n
    grads = [g for g in grads if g is not None]
    if not grads:
        return None
    if len(grads) == 1:
        return grads[0]
    if any(isinstance(g, IndexedSlices) for g in grads):
        return aggregate_indexed_slices(grads)  # TF1: concatenated, not densified
    return add_n(grads, name=name)


def _densified(grads, fn):
    """The output gradients `fn` receives: IndexedSlices stay sparse for functions that
    pass them on (Identity's, Cast's, ...; TF's own) and for functions registered with
    tf.RegisterGradient (TF hands them whatever it has); the others get dense tensors,
    which is what TF's gradient functions make of them when they use them in an op."""
    if not any(isinstance(g, IndexedSlices) for g in grads) or getattr(
            fn, "accepts_indexed_slices", False) or fn in _CUSTOM_GRADIENTS.values():
        return grads
    return [convert_to_tensor(g) if isinstance(g, IndexedSlices) else g for g in grads]


def gradients(ys, xs, grad_ys=None, name="gradients", colocate_gradients_with_ops=False,
              gate_gradients=False, aggregation_method=None, stop_gradients=None,
              unconnected_gradients=UnconnectedGradients.NONE):
    """d(sum(ys))/d(x) for each x in xs; for an x that ys do not depend on, None or (with
    `unconnected_gradients=tf.UnconnectedGradients.ZERO` or "zero") zeros shaped like x."""
    if executing_eagerly():
        raise RuntimeError("tf.gradients is not supported when eager execution is enabled. "
                           "Use tf.GradientTape instead.")
    try:
        unconnected_gradients = UnconnectedGradients(unconnected_gradients)
    except ValueError:
        raise ValueError(f"Unknown value for unconnected_gradients: "
                         f"{unconnected_gradients!r}") from None
    ys = [convert_to_tensor(y) if not isinstance(y, Tensor) else y for y in _as_list(ys)]
    xs = [_as_ref_tensor(x) for x in _as_list(xs)]
    grad_ys = [None] * len(ys) if grad_ys is None else _as_list(grad_ys)
    if len(grad_ys) != len(ys):
        raise ValueError(f"Passed {len(grad_ys)} grad_ys for {len(ys)} ys")
    stop_ops = {_as_ref_tensor(t).op for t in _as_list(stop_gradients or [])}
    graph = _graph.graph_from_inputs(ys + xs)
    with graph.as_default(), _graph.name_scope(name, "gradients", ys + xs):
        pending = {}  # tensor -> list of gradient contributions
        for i, (y, gy) in enumerate(zip(ys, grad_ys)):
            if gy is None:
                if not _is_backpropagatable(y):
                    raise TypeError(f"Gradients of complex tensors must set grad_ys (y.dtype = "
                                    f"{y.dtype.name})" if y.dtype.is_complex else
                                    f"Cannot compute gradient of non-floating point tensor "
                                    f"{y.name} ({y.dtype.name}): pass grad_ys.")
                from tensorflux._src.ops.array.generator_ops import ones_like
                gy = ones_like(y, name=f"grad_ys_{i}")
            else:
                gy = convert_to_tensor(gy, dtype=y.dtype.base_dtype, name=f"grad_ys_{i}")
            pending.setdefault(y, []).append(gy)

        between = _between_ops(ys, xs, stop_ops)
        for op in sorted(between, key=lambda o: o._id, reverse=True):
            if op in stop_ops:
                continue
            with _colocated_with(op, colocate_gradients_with_ops):
                out_grads = [_aggregate(pending.get(t, []), name=f"{op.name}_grad/AddN")
                             for t in op.outputs]
            if all(g is None for g in out_grads):
                continue
            if not any(_is_backpropagatable(t) for t in op.inputs):
                continue  # e.g. ops consuming only integers: nothing flows further
            fn = _gradient_function(op)
            if fn is None:
                continue
            with _graph.name_scope(op.name + "_grad"), \
                    _colocated_with(op, colocate_gradients_with_ops):
                out_grads = [g if g is not None else _zeros_for(t)
                             for g, t in zip(out_grads, op.outputs)]
                in_grads = _as_list(fn(op, *_densified(out_grads, fn)))
            if len(in_grads) != len(op.inputs):
                raise ValueError(f"Num gradients {len(in_grads)} generated for op "
                                 f"{op.node_def.name} do not match num inputs "
                                 f"{len(op.inputs)}")
            for t, g in zip(op.inputs, in_grads):
                if g is None or not _is_backpropagatable(t) or t.op not in between:
                    continue
                pending.setdefault(t, []).append(g)
        return [_aggregate(pending[x], name=None) if pending.get(x) else
                _unconnected(x, unconnected_gradients) for x in xs]


def _unconnected(x, unconnected_gradients):
    if unconnected_gradients is UnconnectedGradients.NONE:
        return None
    from tensorflux._src.ops.array.generator_ops import zeros_like
    return zeros_like(x, dtype=x.dtype.base_dtype)


@contextlib.contextmanager
def _colocated_with(op, colocate):
    """`colocate_gradients_with_ops=True`: an op's gradient ops get its device (model
    parallelism: the backward pass of a layer runs where its forward pass did)."""
    if not colocate:
        yield
        return
    with _graph.device(None), _graph.device(op.device):
        yield


def _zeros_for(tensor):
    return zeros_like(tensor) if _is_backpropagatable(tensor) else None


def _as_ref_tensor(x):
    if isinstance(x, (Tensor, Operation)):
        return x
    if hasattr(x, "_ref"):
        return x._ref()  # Variables: differentiate with respect to the variable itself
    return convert_to_tensor(x)
