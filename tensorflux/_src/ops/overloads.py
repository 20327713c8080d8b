"""Python operators on Tensors (`a + b`, `x[1:, ::2]`, `a @ b`) with TF1's op names.

`t + 1` converts the Python value to t's dtype inside a name scope named after the
operator, so the graph reads `add/y` and `add`, exactly as TF1 builds it.
"""

from __future__ import annotations

from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.composite_tensor import CompositeTensor
from tensorflux._src.framework.operation import Tensor
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.ops.array.slicing_ops import slice_helper
from tensorflux._src.ops.linalg.linalg_ops import matmul
from tensorflux._src.ops.math import math_ops


def _binary(fn, op_name):
    def forward(x, y):
        if isinstance(y, CompositeTensor) and hasattr(type(y), f"__r{op_name}__"):
            # As TF: a tensor-aware right operand (a RaggedTensor) applies the operator.
            return NotImplemented
        with _graph.name_scope(None, op_name, [x, y]) as name:
            if not isinstance(y, Tensor):
                y = convert_to_tensor(y, dtype=x.dtype.base_dtype, name="y")
            return fn(x, y, name=name)

    def reflected(y, x):
        with _graph.name_scope(None, op_name, [x, y]) as name:
            x = convert_to_tensor(x, dtype=y.dtype.base_dtype, name="x")
            return fn(x, y, name=name)

    return forward, reflected


def _matmul(x, y, name=None):
    return matmul(x, y, name=name)


_BINARY = {
    "add": (math_ops.add, "add"),
    "sub": (math_ops.subtract, "sub"),
    "mul": (math_ops.multiply, "mul"),
    "truediv": (math_ops.truediv, "truediv"),
    "floordiv": (math_ops.floordiv, "floordiv"),
    "mod": (math_ops.floormod, "mod"),
    "pow": (math_ops.pow, "pow"),
    "matmul": (_matmul, "matmul"),
    "and": (math_ops.logical_and, "and"),
    "or": (math_ops.logical_or, "or"),
    "xor": (math_ops.logical_xor, "xor"),
}

for _dunder, (_fn, _name) in _BINARY.items():
    _fwd, _rev = _binary(_fn, _name)
    setattr(Tensor, f"__{_dunder}__", _fwd)
    setattr(Tensor, f"__r{_dunder}__", _rev)

# Comparisons keep the generated ops' default names (Less, Greater...), as in TF1.
Tensor.__lt__ = lambda x, y: math_ops.less(x, y)
Tensor.__le__ = lambda x, y: math_ops.less_equal(x, y)
Tensor.__gt__ = lambda x, y: math_ops.greater(x, y)
Tensor.__ge__ = lambda x, y: math_ops.greater_equal(x, y)
Tensor.__neg__ = lambda x: math_ops.negative(x)
Tensor.__abs__ = lambda x: math_ops.abs(x)
Tensor.__invert__ = lambda x: math_ops.logical_not(x)


def _getitem(tensor, slice_spec):
    return slice_helper(tensor, slice_spec)


Tensor.__getitem__ = _getitem
