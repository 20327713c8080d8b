"""Top-level graph utilities of TF1: scopes that lift or place ops (`init_scope`,
`colocate_with`, `container`), questions about tensors (`is_tensor`, `get_static_value`),
gradient wrappers (`grad_pass_through`, `recompute_grad`), `switch_case`,
`vectorized_map`, `timestamp` and `assert_variables_initialized`.
"""

from __future__ import annotations

import contextlib
import functools
import time

import numpy as np

from tensorflux._src.autodiff.custom_gradient import custom_gradient
from tensorflux._src.autodiff.gradients import NotDifferentiable, gradients
from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework import tensor_shape
from tensorflux._src.framework.operation import Tensor
from tensorflux._src.framework.sparse_tensor import SparseTensor
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.ops.array import array_ops
from tensorflux._src.ops.control import control_flow_ops, functional_ops
from tensorflux._src.ops.control.bodies import outside_bodies
from tensorflux._src.ops.math.math_ops import equal
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.registry import OpDef, register
from tensorflux._src.ops.shape_fns import static_value

__all__ = [
    "init_scope", "colocate_with", "container", "is_tensor", "is_symbolic_tensor",
    "get_static_value", "no_gradient", "grad_pass_through", "recompute_grad",
    "switch_case", "vectorized_map", "timestamp", "dimension_at_index", "op_scope",
]


# -- scopes -----------------------------------------------------------------------------------
@contextlib.contextmanager
def init_scope():
    """Ops created inside go to the outermost graph (out of traced functions and
    control-flow bodies), with no control dependencies, under the current name scope:
    where TF1 builds variables' initializers and other one-time state."""
    graph = _graph.get_default_graph()
    scope = graph.get_name_scope()
    outer = graph
    while getattr(outer, "outer_graph", None) is not None:
        outer = outer.outer_graph
    with outer.as_default(), outside_bodies(outer), _graph.control_dependencies(None), \
            outer.name_scope(scope + "/" if scope else ""):
        yield


def colocate_with(op, ignore_existing=False):
    """Ops created inside run on `op`'s device, in its colocation group."""
    return _graph.get_default_graph().colocate_with(op, ignore_existing)


def container(container_name):
    """Stateful ops created inside belong to resource container `container_name`."""
    return _graph.get_default_graph().container(container_name)


@contextlib.contextmanager
def op_scope(values, name, default_name=None):
    """TF1's deprecated spelling of `tf.name_scope(name, default_name, values)`."""
    with _graph.name_scope(name, default_name, values) as scope:
        yield scope


# -- questions about values ------------------------------------------------------------------
def is_tensor(x) -> bool:
    """True for the graph's tensor-like values: Tensor, SparseTensor, and anything that
    declares itself one (`is_tensor_like`), e.g. a Variable's conversion target."""
    return isinstance(x, (Tensor, SparseTensor)) or getattr(x, "is_tensor_like", False)


def is_symbolic_tensor(tensor) -> bool:
    """True for a graph Tensor (a value known only when a Session runs it)."""
    return isinstance(tensor, Tensor)


def get_static_value(tensor, partial=False):
    """The value of `tensor` as a numpy array when the graph alone determines it (TF's
    constant folding at graph-construction time), else None. `partial` is accepted for
    TF's signature; values are never partially known here."""
    if isinstance(tensor, (np.ndarray, np.generic)):
        return tensor
    if not is_tensor(tensor):
        raise TypeError(f"{tensor!r} is not a Tensor, but get_static_value is only defined "
                        f"for Tensors.")
    if isinstance(tensor, SparseTensor):
        return None
    value = static_value(tensor)
    return None if value is None else np.asarray(value)


def dimension_at_index(shape, index):
    """Dimension `index` of `shape` as a `tf.Dimension` (unknown for an unknown rank)."""
    shape = tensor_shape.as_shape(shape)
    if shape.ndims is None:
        return tensor_shape.Dimension(None)
    return shape.dims[index]


# -- gradients ---------------------------------------------------------------------------------
def no_gradient(op_type):
    """Declares that ops of `op_type` have no gradient (TF 1.15's name for
    NotDifferentiable)."""
    NotDifferentiable(op_type)


def grad_pass_through(f):
    """`f`, whose gradient is taken to be the identity: `y = f(x)`, `dy/dx := I`
    (a straight-through estimator, e.g. around a quantizer or an assign)."""

    @functools.wraps(f)
    def wrapped(*args):
        @custom_gradient
        def passthrough(*xs):
            def grad(*dys):
                return list(dys) if len(dys) == len(xs) else [dys[0]] * len(xs)
            return f(*xs), grad
        return passthrough(*args)

    return wrapped


def recompute_grad(f):
    """`f`, whose backward pass recomputes its forward values instead of keeping them
    (gradient checkpointing). The gradient is that of `f`."""

    @functools.wraps(f)
    def wrapped(*args):
        @custom_gradient
        def checkpointed(*xs):
            result = f(*xs)

            def grad(*dys):
                with _graph.name_scope("recompute"):
                    fresh = [array_ops.identity(x) for x in xs]
                    again = f(*fresh)
                again = list(again) if isinstance(again, (list, tuple)) else [again]
                return gradients(again, fresh, grad_ys=list(dys))
            return result, grad
        return checkpointed(*args)

    return wrapped


# -- control flow ------------------------------------------------------------------------------
def switch_case(branch_index, branch_fns, default=None, name="switch_case"):
    """Runs `branch_fns[branch_index]()` (a list, or a dict of int -> fn); an index
    outside them runs `default`, or the last branch when there is none (TF's rule)."""
    if isinstance(branch_fns, dict):
        items = sorted(branch_fns.items())
        if not all(isinstance(k, int) for k, _ in items):
            raise TypeError("branch_fns dict keys must be integers.")
    else:
        items = list(enumerate(branch_fns))
    if not items:
        raise ValueError("Must provide at least one item in branch_fns")
    for key, fn in items:
        if not callable(fn):
            raise TypeError(f"fn for branch {key} must be callable.")
    with _graph.name_scope(name) as scope:
        index = convert_to_tensor(branch_index, name="branch_index")
        if index.dtype.base_dtype != _dtypes.int32:
            raise TypeError(f"branch_index must an int32 Tensor; got {index.dtype.name}")
        if default is None:
            *items, (_, default) = items
        pairs = [(equal(index, key), fn) for key, fn in items]
        if not pairs:
            return default()
        return control_flow_ops.case(pairs, default=default, exclusive=False,
                                     name=scope.rstrip("/").rsplit("/", 1)[-1])


def vectorized_map(fn, elems, fallback_to_while_loop=True):
    """`fn` applied to each slice of `elems` along axis 0, results stacked: the values
    of `tf.map_fn(fn, elems)`, compiled as one loop."""
    with _graph.name_scope("vectorized_map"):
        return functional_ops.map_fn(fn, elems)


# -- timestamp ---------------------------------------------------------------------------------
register(OpDef(
    "Timestamp", inputs=(), outputs=("ts: float64",), attrs={},
    shape=lambda op: tensor_shape.TensorShape([]), stateful=True, not_differentiable=True,
    # A host kernel: the time when the run reaches this op, not when it was compiled.
    host=lambda: np.float64(time.time()),
))


def timestamp(name=None):
    """Seconds since the epoch (float64) when the op runs; a new value each run."""
    return apply_op("Timestamp", name=name)
