"""`tf.data.experimental.Optional`: a value that may be absent.

TF represents an Optional as a variant tensor. Here it is a graph-side pair: a scalar
bool tensor `has_value` and the value's flat component tensors (placeholder values of
the right dtype when absent). `get_value()` is the host op OptionalGetValue, which
raises TF's InvalidArgumentError when there is no value.
"""

from __future__ import annotations

import numpy as np

from tensorflux._src.data import structure as _structure
from tensorflux._src.data.type_specs import OptionalSpec
from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import errors, graph as _graph
from tensorflux._src.framework.operation import Tensor
from tensorflux._src.framework.sparse_tensor import SparseTensor, SparseTensorValue
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.ops import constant
from tensorflux._src.ops.array import array_ops
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.sparse.ragged_tensor import RaggedTensor, RaggedTensorValue
from tensorflux._src.ops.registry import REQUIRED, OpDef, register


def empty_arrays(output_types, output_shapes):
    """Placeholder values for absent components: zeros (b"" for strings), unknown
    dimensions of size 0."""
    out = []
    for dtype, shape in zip(output_types, output_shapes):
        dims = [] if shape.ndims is None else [d or 0 for d in shape.as_list()]
        dtype = _dtypes.as_dtype(dtype)
        if dtype == _dtypes.string:
            value = np.full(dims, b"", dtype=object)
        else:
            value = np.zeros(dims, dtype.as_numpy_dtype)
        out.append(value)
    return out


def _get_value(has_value, *components, output_types):
    if not bool(has_value):
        raise errors.InvalidArgumentError(None, None, "The optional does not have a value.")
    return tuple(components)


register(OpDef(
    "OptionalGetValue", inputs=("has_value: bool", "components: list(output_types)"),
    outputs=("values: list(output_types)",), attrs={"output_types": REQUIRED},
    host=_get_value, not_differentiable=True,
))


class Optional:
    """Represents a value that may or may not be present (TF1.15's
    `tf.data.experimental.Optional`)."""

    def __init__(self, has_value, components, structure):
        self._has_value = has_value
        self._components = list(components)
        self._structure = structure

    @staticmethod
    def from_value(value):
        """An Optional holding `value` (a nested structure of tensors)."""
        with _graph.name_scope(None, "optional"):
            with _graph.name_scope("value"):
                leaves = [_as_component(leaf) for leaf in _structure.flatten(value)]
            structure = _structure.Structure(
                value, [_structure.spec_of_graph_value(leaf) for leaf in leaves])
            has_value = constant.constant(True, name="has_value")
        return Optional(has_value, structure.graph_flat(leaves), structure)

    @staticmethod
    def none_from_structure(value_structure):
        """An empty Optional for values described by `value_structure` (TypeSpecs)."""
        structure = _structure.Structure.from_element_spec(value_structure)
        flat = structure.flat_tensor_specs()
        values = empty_arrays([d for d, _ in flat], [s for _, s in flat])
        components = [constant.constant(v, dtype=d) for v, (d, _) in zip(values, flat)]
        return Optional(constant.constant(False), components, structure)

    empty = none_from_structure  # TF 2's name

    def has_value(self, name=None):
        """A scalar bool tensor: whether this Optional holds a value."""
        return array_ops.identity(self._has_value, name=name or "OptionalHasValue")

    def get_value(self, name=None):
        """The value; running it on an empty Optional raises InvalidArgumentError."""
        flat = self._structure.flat_tensor_specs()
        values = apply_op("OptionalGetValue", name=name or "OptionalGetValue",
                          has_value=self._has_value, components=self._components,
                          output_types=tuple(d for d, _ in flat))
        values = list(values) if isinstance(values, (list, tuple)) else [values]
        for tensor, (_, shape) in zip(values, flat):
            tensor.set_shape(shape)
        return self._structure.graph_pack(values)

    @property
    def element_spec(self):
        return self._structure.element_spec

    value_structure = element_spec  # TF 1.15's name

    @property
    def _type_spec(self):
        return OptionalSpec(self.element_spec)


def make_optional(has_value, components, structure):
    return Optional(has_value, components, structure)


def _as_component(leaf):
    if isinstance(leaf, SparseTensorValue):
        return SparseTensor.from_value(leaf)
    if isinstance(leaf, RaggedTensorValue):
        return _structure.to_graph_ragged(leaf)
    if isinstance(leaf, (Tensor, SparseTensor, RaggedTensor)):
        return leaf
    return convert_to_tensor(leaf)
