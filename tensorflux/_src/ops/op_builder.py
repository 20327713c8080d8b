"""`apply_op`: turns an OpDef plus Python arguments into an Operation in the graph.

This is where TF's construction-time rules live once for every op: input conversion
with type-attr inference, TF's dtype error messages, attr defaults, name scopes,
device scopes, control dependencies and shape inference.
"""

from __future__ import annotations

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework import tensor_shape
from tensorflux._src.framework.operation import Operation, Tensor
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.ops.registry import REQUIRED, lookup


def apply_op(op_type: str, name=None, **kwargs):
    """Creates an op of `op_type`; returns its Tensor, list of Tensors, or the Operation."""
    default = _graph.get_default_graph()
    fast = getattr(default, "_fast_apply", None)
    if fast is not None and not _numerics_checking[0]:  # eager: eager/fast_path.py
        return fast(op_type, name, kwargs, _apply_op)
    return _apply_op(op_type, name, kwargs, default)


def _apply_op(op_type, name, kwargs, default=None):
    """apply_op's full path: conversion, TF's dtype rules, attrs, shapes, the Operation."""
    op_def = lookup(op_type)
    if default is None:
        default = _graph.get_default_graph()
    if hasattr(default, "capture_value"):  # a traced function: outer tensors become inputs
        kwargs = {k: default.capture_value(v) if k in op_def._input_names else v
                  for k, v in kwargs.items()}
    graph = _graph.graph_from_inputs(_graph_inputs(op_def, kwargs))
    with graph.as_default(), graph.name_scope(name or op_type) as scope:
        inputs, attrs = _convert_inputs(op_def, kwargs)
        attrs.update(_resolve_attrs(op_def, kwargs, attrs))
        op = _create_op(graph, op_def, scope[:-1], inputs, attrs)
    outs = op.outputs
    if _numerics_checking[0] and op_type not in _NOT_CHECKED and not op_def.host:
        outs = _checked_outputs(op, outs)
    if not op_def.output_args:
        return op
    if len(op_def.output_args) == 1 and not op_def.output_args[0].is_list:
        return outs[0]
    return outs


# -- tf.debugging.enable_check_numerics -----------------------------------------------------
_numerics_checking = [False]
# Sources of values (a NaN fed or written on purpose is not a fault of the op) and the
# check itself.
_NOT_CHECKED = frozenset({"CheckNumerics", "Const", "Placeholder", "PlaceholderWithDefault",
                          "VariableV2", "Identity"})


def set_numerics_checking(enabled):
    """Ops created from now on have their floating-point outputs checked (see
    `tf.debugging.enable_check_numerics`)."""
    _numerics_checking[0] = bool(enabled)


def _checked_outputs(op, outs):
    checked = []
    for i, t in enumerate(outs):
        if t.dtype.is_floating and not t.dtype._is_ref_dtype:
            message = (f"\n\n!!! Detected Infinity or NaN in output {i} of graph op "
                       f"\"{op.type}\" (# of outputs: {len(outs)}) !!!\n  dtype: {t.dtype}\n"
                       f"  shape: {t.shape}\n\n  Graph op name: {op.name}\n")
            t = apply_op("CheckNumerics", name=op.name + "/CheckNumerics", tensor=t,
                         message=message)
        checked.append(t)
    return checked


def _graph_inputs(op_def, kwargs):
    values = []
    for arg in op_def.input_args:
        v = kwargs.get(arg.name)
        values.extend(v if isinstance(v, (list, tuple)) else [v])
    return [v for v in values if isinstance(v, Tensor)]


def _convert_inputs(op_def, kwargs):
    inferred = {}  # type attr -> (DType, name of the argument it came from)
    inputs, attrs = [], {}
    for arg in op_def.input_args:
        if arg.name not in kwargs:
            raise TypeError(f"{op_def.name} Op is missing its input '{arg.name}'.")
        value = kwargs.pop(arg.name)
        if arg.type_list_attr is not None:
            tensors = [convert_to_tensor(v) for v in value]
            attrs[arg.type_list_attr] = tuple(t.dtype.base_dtype for t in tensors)
            inputs.extend(tensors)
        elif arg.is_list:
            tensors = _convert_list(op_def, arg, value, inferred)
            attrs[arg.number_attr] = len(tensors)
            inputs.extend(tensors)
        else:
            inputs.append(_convert_one(op_def, arg, value, inferred))
    for attr, (dtype, _) in inferred.items():
        attrs[attr] = dtype
    return inputs, attrs


def _wanted_dtype(op_def, arg, inferred):
    if arg.fixed_dtype is not None:
        return arg.fixed_dtype
    if arg.type_attr in inferred:
        return inferred[arg.type_attr][0]
    return None


def _convert_one(op_def, arg, value, inferred, list_name=None):
    wanted = _wanted_dtype(op_def, arg, inferred)
    if isinstance(value, Tensor) or hasattr(value, "_as_graph_element"):
        tensor = convert_to_tensor(value)
    else:
        preferred = op_def.type_defaults.get(arg.type_attr) if wanted is None else None
        try:
            tensor = convert_to_tensor(value, dtype=wanted, name=arg.name,
                                       preferred_dtype=preferred)
        except TypeError as e:
            if wanted is None:
                raise
            raise TypeError(f"Expected {wanted.name} passed to parameter '{arg.name}' of op "
                            f"'{op_def.name}', got {value!r} of type "
                            f"'{type(value).__name__}' instead. Error: {e}") from None
    if arg.is_ref and not tensor.dtype._is_ref_dtype:
        raise TypeError(f"'{op_def.name}' Op requires that input '{arg.name}' be a mutable "
                        "tensor (e.g.: a tf.Variable)")
    got = tensor.dtype.base_dtype
    if wanted is not None and got != wanted:
        if arg.fixed_dtype is not None:
            raise TypeError(f"Input '{arg.name}' of '{op_def.name}' Op has type {got.name} "
                            f"that does not match expected type of {wanted.name}.")
        source = inferred[arg.type_attr][1]
        raise TypeError(f"Input '{arg.name}' of '{op_def.name}' Op has type {got.name} that "
                        f"does not match type {wanted.name} of argument '{source}'.")
    if arg.type_attr is not None and arg.type_attr not in inferred:
        allowed = op_def.type_attrs.get(arg.type_attr)
        if allowed is not None and got not in allowed:
            raise TypeError(f"Value passed to parameter '{arg.name}' has DataType {got.name} "
                            f"not in list of allowed values: "
                            f"{', '.join(d.name for d in allowed)}")
        inferred[arg.type_attr] = (got, list_name or arg.name)
    return tensor


def _convert_list(op_def, arg, value, inferred):
    if not isinstance(value, (list, tuple)):
        raise TypeError(f"Expected list for '{arg.name}' argument to '{op_def.name}' Op, "
                        f"not {value!r}.")
    # A Tensor in the list fixes the type for the Python values beside it.
    if arg.type_attr is not None and arg.type_attr not in inferred:
        for v in value:
            if isinstance(v, Tensor):
                _convert_one(op_def, arg, v, inferred)
                break
    tensors = []
    for v in value:
        try:
            tensors.append(_convert_one(op_def, arg, v, inferred))
        except TypeError:
            types = [getattr(getattr(x, "dtype", None), "name", type(x).__name__) for x in value]
            raise TypeError(f"Tensors in list passed to '{arg.name}' of '{op_def.name}' Op "
                            f"have types [{', '.join(types)}] that don't all match.") from None
    return tensors


def _resolve_attrs(op_def, kwargs, inferred_attrs):
    attrs = {}
    for key, value in kwargs.items():
        if key in op_def.type_attrs:
            dtype = _dtypes.as_dtype(value).base_dtype
            allowed = op_def.type_attrs[key]
            if dtype not in allowed:
                raise TypeError(f"Value passed to parameter '{key}' has DataType {dtype.name} "
                                f"not in list of allowed values: "
                                f"{', '.join(d.name for d in allowed)}")
            attrs[key] = dtype
        elif key in op_def.default_attrs:
            attrs[key] = value
        else:
            raise TypeError(f"{op_def.name} Op got an unexpected keyword argument '{key}'.")
    for key, default in op_def.default_attrs.items():
        if key not in attrs:
            if default is REQUIRED:
                raise TypeError(f"No argument for attr {key} of {op_def.name} Op.")
            attrs[key] = default
    list_attrs = {a.type_list_attr for a in op_def.input_args if a.type_list_attr}
    for key in op_def.type_attrs:
        if key not in attrs and key not in inferred_attrs and key not in list_attrs:
            if key in op_def.type_defaults:
                attrs[key] = op_def.type_defaults[key]
                continue
            raise TypeError(f"No argument for attr {key} of {op_def.name} Op.")
    return attrs


def _output_dtypes(op_def, attrs):
    dtypes = []
    for arg in op_def.output_args:
        if arg.type_list_attr is not None:
            dtypes.extend(attrs[arg.type_list_attr])
            continue
        dtype = arg.fixed_dtype or attrs[arg.type_attr]
        dtype = dtype._as_ref if arg.is_ref else dtype
        dtypes.extend([dtype] * (attrs[arg.number_attr] if arg.is_list else 1))
    return dtypes


def _create_op(graph, op_def, name, inputs, attrs) -> Operation:
    graph._check_not_finalized()
    if name in graph._nodes_by_name:
        raise ValueError(f"Cannot add op with name {name} as that name is already used")
    dtypes = _output_dtypes(op_def, attrs)
    op = Operation(graph, op_def, name, inputs, attrs, dtypes,
                   [tensor_shape.unknown_shape()] * len(dtypes))
    if op_def.shape is not None:
        try:
            shapes = op_def.shape(op)
        except ValueError as e:
            input_shapes = ", ".join(t.shape._bracket_str() for t in inputs)
            raise ValueError(f"{e} for '{name}' (op: '{op_def.name}') with input shapes: "
                             f"{input_shapes}.") from None
        if isinstance(shapes, tensor_shape.TensorShape) or not isinstance(shapes, list):
            shapes = [shapes]
        for t, s in zip(op.outputs, shapes):
            t._shape = tensor_shape.as_shape(s)
    op._control_inputs = graph._control_inputs_for({t.op for t in inputs})
    graph._apply_device_functions(op)
    graph._apply_colocation(op)
    if op_def.stateful and graph._container:
        op._container = graph._container
    op._gradient_override = graph._gradient_override_map.get(op_def.name)
    graph._add_op(op)
    return op
