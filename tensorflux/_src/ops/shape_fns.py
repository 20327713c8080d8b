"""Shape-inference helpers shared by op records, plus static values of tensors.

Shape functions take the new op and return its output shape(s); a ValueError here
becomes TF's "... for 'name' (op: 'Type') with input shapes: ..." message.
"""

from __future__ import annotations

import numpy as np

from tensorflux._src.framework.tensor_shape import Dimension, TensorShape, unknown_shape


def unchanged(op):
    """Output 0 has input 0's shape (elementwise unary ops)."""
    return op.inputs[0].shape


def scalar(op):
    return TensorShape([])


def broadcast(a: TensorShape, b: TensorShape) -> TensorShape:
    """NumPy broadcasting of two static shapes, with TF's rules for unknown dims."""
    if a.ndims is None or b.ndims is None:
        return unknown_shape()
    da, db = a.as_list(), b.as_list()
    n = max(len(da), len(db))
    da = [1] * (n - len(da)) + da
    db = [1] * (n - len(db)) + db
    out = []
    for x, y in zip(da, db):
        if x == 1:
            out.append(y)
        elif y == 1:
            out.append(x)
        elif x is None:
            out.append(y)  # an unknown dim broadcast against n>1 must be n (or 1)
        elif y is None:
            out.append(x)
        elif x == y:
            out.append(x)
        else:
            raise ValueError(f"Dimensions must be equal, but are {x} and {y}")
    return TensorShape(out)


def broadcast_binary(op):
    return broadcast(op.inputs[0].shape, op.inputs[1].shape)


def static_value(tensor):
    """The value of `tensor` if it can be known without running the graph, else None.

    Follows constants, shapes of tensors whose shape is fully known, and any stateless
    op over such values (evaluated with its own lowering), like TF's `constant_value`.
    """
    cache = {}
    return _static(tensor, cache, depth=0)


eager_value_reads = [0]  # counts reads of eager values (eager/fast_path.py's test)


def _static(tensor, cache, depth):
    if getattr(tensor, "_is_eager", False):  # eager: values are known (a ref changes)
        eager_value_reads[0] += 1
        return None if tensor.dtype._is_ref_dtype else tensor.numpy()
    if tensor in cache:
        return cache[tensor]
    op = tensor.op
    value = None
    if op.type == "Const":
        value = op.get_attr("value")
    elif op.type in ("Shape", "Size", "Rank") and op.inputs[0].shape.is_fully_defined():
        in_shape = op.inputs[0].shape.as_list()
        np_dtype = tensor.dtype.as_numpy_dtype
        value = {"Shape": np.array(in_shape, np_dtype),
                 "Size": np.array(int(np.prod(in_shape)), np_dtype),
                 "Rank": np.array(len(in_shape), np.int32)}[op.type]
    elif op.type == "Rank" and op.inputs[0].shape.ndims is not None:
        value = np.array(op.inputs[0].shape.ndims, np.int32)
    elif (depth < 64 and op.op_def.lower is not None and not op.op_def.stateful
          and op.type not in ("Placeholder", "PlaceholderWithDefault")):
        # Stop at the first input that is not static: walking the others would visit
        # up to 64 levels of graph per call (building transformer_base took a minute).
        inputs = []
        for t in op.inputs:
            inputs.append(_static(t, cache, depth + 1))
            if inputs[-1] is None:
                break
        if all(v is not None for v in inputs) and sum(v.size for v in inputs) <= 4096:
            from tensorflux._src.compiler import lowering
            try:
                outs = lowering.fold_op(op, inputs)
            except Exception:  # noqa: BLE001 - not statically computable after all
                outs = None
            if outs is not None:
                value = outs[tensor.value_index]
    cache[tensor] = value
    return value


def static_shape_from_tensor(tensor) -> TensorShape:
    """A partially known shape from a 1-D shape tensor, as TF's constant_value_as_shape.

    `tf.stack([tf.shape(x)[0], 3])` gives `(?, 3)` even when x's batch size is unknown.
    """
    value = static_value(tensor)
    if value is not None:
        return TensorShape([None if d < 0 else int(d) for d in np.reshape(value, -1)])
    op = tensor.op
    if tensor.shape.ndims == 0:
        return unknown_shape()
    if op.type == "Shape":
        return op.inputs[0].shape
    if op.type == "Pack":
        dims = []
        for t in op.inputs:
            v = static_value(t)
            dims.append(None if v is None or int(v) < 0 else int(v))
        return TensorShape(dims)
    if op.type == "ConcatV2":
        result = TensorShape([])
        for t in op.inputs[:-1]:
            result = result.concatenate(static_shape_from_tensor(t))
        return result
    if op.type == "StridedSlice" and op.inputs[0].op.type == "Shape":
        begin, end, strides = (static_value(t) for t in op.inputs[1:4])
        source = op.inputs[0].op.inputs[0].shape
        if None not in (begin, end, strides) and source.ndims is not None and \
                not any(op.get_attr(k) for k in ("ellipsis_mask", "new_axis_mask",
                                                 "shrink_axis_mask")):
            b = None if op.get_attr("begin_mask") & 1 else int(begin[0])
            e = None if op.get_attr("end_mask") & 1 else int(end[0])
            return TensorShape(source.dims[slice(b, e, int(strides[0]))])
    n = tensor.shape[0].value if tensor.shape.ndims == 1 else None
    return unknown_shape(n)


def dim_value(dim):
    return dim.value if isinstance(dim, Dimension) else dim
