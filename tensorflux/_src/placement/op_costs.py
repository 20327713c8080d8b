"""Per-op FLOPs and bytes accessed, from XLA's HLO cost analysis of the op's own lowering
at its static shapes (cached per op signature), with an analytic fallback.

The fallback (documented in docs/architecture.md, "Learned device placement") covers ops
XLA does not see as one computation: variables, their updates, random and host ops,
control-flow constructs, and ops with a dimension unknown before run time. It counts one
FLOP per output element and the bytes of all inputs and outputs.
"""

from __future__ import annotations

import dataclasses

import jax
import numpy as np

from tensorflux._src.compiler import lowering

# Ops that cost nothing on a device: they only name or feed values.
FREE_OPS = frozenset({"NoOp", "Const", "Placeholder", "PlaceholderWithDefault",
                      "VariableV2", "VarHandleOp", "Identity", "StopGradient"})


@dataclasses.dataclass(frozen=True)
class OpCost:
    flops: float
    bytes_accessed: float
    source: str  # "xla", "analytic" or "free"


def tensor_bytes(tensor) -> int:
    """Bytes of a tensor with unknown dimensions counted as 1."""
    dims = tensor.shape.as_list() if tensor.shape.ndims is not None else []
    elements = int(np.prod([d if d is not None else 1 for d in dims], dtype=np.int64))
    try:
        itemsize = np.dtype(tensor.dtype.base_dtype.as_numpy_dtype).itemsize
    except (TypeError, AttributeError):
        itemsize = 8  # strings, resources and variants: a pointer
    return elements * itemsize


def _static_shape(tensor):
    if tensor.shape.ndims is None:
        return None
    dims = tensor.shape.as_list()
    return None if any(d is None for d in dims) else tuple(dims)


def _analytic(op) -> OpCost:
    out = sum(tensor_bytes(t) for t in op.outputs)
    elements = sum(tensor_bytes(t) // max(1, _itemsize(t)) for t in op.outputs)
    return OpCost(float(elements), float(out + sum(tensor_bytes(t) for t in op.inputs)),
                  "analytic")


def _itemsize(tensor):
    try:
        return np.dtype(tensor.dtype.base_dtype.as_numpy_dtype).itemsize
    except (TypeError, AttributeError):
        return 8


class CostCache:
    """Costs of ops, computed once per signature (type, attrs, input shapes, the values
    of constant inputs)."""

    def __init__(self):
        self._cache = {}

    def cost(self, op) -> OpCost:
        if op.type in FREE_OPS:
            return OpCost(0.0, 0.0, "free")
        op_def = op.op_def
        if (op_def.stateful or op_def.host is not None or op_def.functional
                or op_def.lower is None):
            return _analytic(op)
        shapes = [_static_shape(t) for t in op.inputs]
        if any(s is None for s in shapes) or any(_static_shape(t) is None for t in op.outputs):
            return _analytic(op)
        statics = [_const_value(t) for t in op.inputs]
        key = (op.type, repr(sorted((k, repr(op._attrs[k])) for k in op_def.lower_attrs)),
               tuple((s, t.dtype.name) for s, t in zip(shapes, op.inputs)),
               tuple(None if v is None else (v.dtype.str, v.tobytes()) for v in statics))
        if key not in self._cache:
            self._cache[key] = self._xla(op, shapes, statics)
        return self._cache[key]

    @staticmethod
    def _xla(op, shapes, statics) -> OpCost:
        traced = [i for i, v in enumerate(statics) if v is None]

        def one_op(*values):
            inputs = list(statics)
            for i, v in zip(traced, values):
                inputs[i] = v
            return lowering._call_lower(op, inputs)

        structs = [jax.ShapeDtypeStruct(shapes[i], op.inputs[i].dtype.base_dtype.as_numpy_dtype)
                   for i in traced]
        try:
            analysis = jax.jit(one_op).lower(*structs).cost_analysis()
        except Exception:  # noqa: BLE001 - any lowering failure falls back to the estimate
            return _analytic(op)
        if isinstance(analysis, (list, tuple)):
            analysis = analysis[0] if analysis else {}
        if not analysis:
            return _analytic(op)
        return OpCost(float(analysis.get("flops", 0.0)),
                      float(analysis.get("bytes accessed", 0.0)), "xla")


def _const_value(tensor):
    if tensor.op.type != "Const":
        return None
    try:
        return np.asarray(tensor.op.get_attr("value"))
    except (ValueError, KeyError):
        return None
