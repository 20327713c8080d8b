"""`tf.py_function`: a Python function of eager tensors, as a graph op (EagerPyFunc).

TF1 runs the function with eager execution on. tensorflux has no eager mode, so the host
kernel runs it in a private *eager graph*: the inputs are constants there, and every op
the function creates is evaluated as soon as it is created (its lowering or host kernel on
the inputs' values), so its tensors are `EagerTensor`s with `.numpy()`, `__array__`,
`bool()`, `float()`, `len()` and iteration, as in eager mode. Results (tensors, arrays
or Python values) are converted to `Tout`.

The op has TF1's gradient (EagerPyFunc is differentiable in TF1 graphs): another
EagerPyFunc, whose function runs the forward function again on the forward inputs in an
eager graph and returns `tf.gradients` of its results there (zeros for inputs its
results do not depend on; TF1 gives a scalar 0.0).
Outputs have unknown shapes, as in TF.
"""

from __future__ import annotations

import numpy as np

from tensorflux._src.autodiff.gradients import gradients
from tensorflux._src.compiler import lowering
from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import errors
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.operation import Tensor
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.ops.array import generator_ops
from tensorflux._src.ops.constant import constant
from tensorflux._src.ops.control import script_ops
from tensorflux._src.ops.math import math_ops
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.registry import REQUIRED, OpDef, register

__all__ = ["py_function"]


class EagerTensor(Tensor):
    """A tensor of an eager graph: its value is known."""

    def numpy(self):
        value = self.graph._values.get(self)
        if value is None:
            raise errors.UnimplementedError(
                None, self.op, f"{self.op.type} cannot run eagerly inside tf.py_function "
                               f"(stateful, random or session ops need a Session)")
        return value

    def __array__(self, dtype=None, copy=None):
        value = self.numpy()
        return value if dtype is None else value.astype(dtype)

    def __bool__(self):
        return bool(self.numpy())

    def __float__(self):
        return float(self.numpy())

    def __int__(self):
        return int(self.numpy())

    def __index__(self):
        return int(self.numpy())

    def __len__(self):
        return len(self.numpy())

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def __repr__(self):
        return (f"<tf.Tensor: id={id(self)}, shape={self.shape}, dtype={self.dtype.name}, "
                f"numpy={self.numpy()!r}>")


class _EagerGraph(_graph.Graph):
    """Evaluates each op when it is added (see the module docstring)."""

    def __init__(self):
        super().__init__()
        self._values = {}

    def _add_op(self, op):
        super()._add_op(op)
        for t in op.outputs:
            t.__class__ = EagerTensor
        op_def = op.op_def
        values = [self._values.get(t) for t in op.inputs]
        if (any(v is None for v in values) or op_def.stateful or op_def.random
                or op_def.uses_session or op_def.functional):
            return
        if op_def.host is not None:
            outs = lowering.run_host_kernel(op, values)
        elif op_def.lower is not None:
            outs = lowering.fold_op(op, values, max_elements=None)
        else:
            return
        self._values.update(zip(op.outputs, outs))


def _eager_inputs(graph, values):
    with graph.as_default():
        return [constant(np.asarray(v)) for v in values]


def _as_output(value, dtype):
    """A result converted to `dtype` as TF's EagerFunc does."""
    if isinstance(value, EagerTensor):
        value = value.numpy()
    tensor = convert_to_tensor(value, dtype=dtype)
    return tensor.numpy() if isinstance(tensor, EagerTensor) else np.asarray(value)


def _run(token, inputs, Tout):  # noqa: N803
    func = script_ops._py_funcs.lookup(token)
    graph = _EagerGraph()
    with graph.as_default():
        args = _eager_inputs(graph, inputs)
        try:
            ret = func(*args)
        except errors.OpError:
            raise
        except Exception as exc:  # noqa: BLE001 - every Python error becomes an OpError
            error = next((e for py, e in script_ops._ERRORS if isinstance(exc, py)),
                         errors.UnknownError)
            raise error(None, None, script_ops._exception_text(exc)) from exc
        if ret is None:
            ret = []
        outs = list(ret) if isinstance(ret, (list, tuple)) else [ret]
        if len(outs) != len(Tout):
            raise errors.InvalidArgumentError(
                None, None, f"{token} returns {len(outs)} values, but expects to see "
                            f"{len(Tout)} values.")
        try:
            return [_as_output(v, dtype) for v, dtype in zip(outs, Tout)]
        except (TypeError, ValueError) as exc:
            raise errors.InvalidArgumentError(None, None, str(exc)) from exc


def _eager_py_func(*inputs, token, Tout, is_async=False):  # noqa: N803 - TF's attr names
    return _run(token, inputs, Tout)


register(OpDef("EagerPyFunc", inputs=("input: list(Tin)",), outputs=("output: list(Tout)",),
               attrs={"Tin": _dtypes.ALL, "Tout": REQUIRED, "token": REQUIRED,
                      "is_async": False},
               host=_eager_py_func, stateful=True,
               grad=lambda op, *dys: _gradient(op, dys)))

def _gradient(op, dys):
    """TF1's EagerPyFunc gradient: another EagerPyFunc, whose function runs the forward
    function again on the forward inputs (eagerly) and differentiates it."""
    func = script_ops._py_funcs.lookup(op.get_attr("token"))
    n = len(op.inputs)

    def eagerly_executed_grad(*args):
        xs, output_grads = list(args[:n]), list(args[n:])
        ret = func(*xs)
        ys = [convert_to_tensor(y) for y in (ret if isinstance(ret, (list, tuple)) else [ret])]
        grad_ys = [math_ops.cast(dy, y.dtype) for dy, y in zip(output_grads, ys)]
        grads = gradients(ys, xs, grad_ys=grad_ys)
        # TF gives 0.0 for an input the results do not depend on; zeros of its shape
        # here, so the gradient keeps the input's shape.
        return [g if g is not None else np.zeros_like(x.numpy())
                for g, x in zip(grads, xs)]

    dys = [dy if dy is not None else _zeros_like(y) for dy, y in zip(dys, op.outputs)]
    graph = op.graph
    graph._py_funcs_used_in_graph = getattr(graph, "_py_funcs_used_in_graph", [])
    graph._py_funcs_used_in_graph.append(eagerly_executed_grad)
    with _graph.control_dependencies(op.outputs):
        grads = apply_op("EagerPyFunc", input=list(op.inputs) + dys,
                         token=script_ops._py_funcs.insert(eagerly_executed_grad),
                         Tout=tuple(t.dtype for t in op.inputs))
    return list(grads)


def _zeros_like(t):
    return generator_ops.zeros_like(t)


def py_function(func, inp, Tout, name=None):  # noqa: N803
    """An op running `func` on eager tensors of `inp`'s values (see the module
    docstring); Tout is a dtype (one tensor is returned) or a list of dtypes."""
    if not callable(func):
        raise ValueError(f"Expected func to be callable, got func of type {type(func)}")
    is_list = isinstance(Tout, (list, tuple))
    dtypes = tuple(_dtypes.as_dtype(t) for t in (Tout if is_list else [Tout]))
    token = script_ops._py_funcs.insert(func)
    graph = _graph.graph_from_inputs(list(inp))
    if not hasattr(graph, "_py_funcs_used_in_graph"):
        graph._py_funcs_used_in_graph = []
    graph._py_funcs_used_in_graph.append(func)
    outputs = apply_op("EagerPyFunc", name=name, input=list(inp), token=token, Tout=dtypes)
    if not outputs:
        return graph.get_operations()[-1]
    return outputs if is_list else outputs[0]
