"""`tf.NoneTensorSpec`: the TypeSpec of a `None` value (TF's data/util/structure.py in
1.15, framework/none_tensor.py later): no components, compatible only with itself, so
`tf.nest` with `expand_composites=True` flattens it to nothing and packs it back to None.
"""

from __future__ import annotations

from tensorflux._src.framework.composite_tensor import CompositeTensor
from tensorflux._src.framework.type_spec import TypeSpec

__all__ = ["NoneTensor", "NoneTensorSpec"]


class NoneTensor(CompositeTensor):
    """The composite form of `None`: no components."""

    @property
    def _type_spec(self):
        return NoneTensorSpec()

    def _components(self):
        return []

    def _from_components(self, components):
        return NoneTensor()

    def _value_from_components(self, values):
        return None

    def _feed_components(self, value):
        return []


class NoneTensorSpec(TypeSpec):
    """Type specification for a `None` value."""

    __slots__ = ()

    @property
    def value_type(self):
        return NoneTensor

    @staticmethod
    def from_value(value):
        return NoneTensorSpec()

    def _serialize(self):
        return ()

    def _key(self):
        return self._serialize()

    @property
    def _component_specs(self):
        return []

    def _to_components(self, value):
        return []

    def _from_components(self, components):
        return None

    def _to_tensor_list(self, value):
        return []

    def _to_batched_tensor_list(self, value):
        return []

    def _batch(self, batch_size):
        return NoneTensorSpec()

    def _unbatch(self):
        return NoneTensorSpec()

    def _to_legacy_output_types(self):
        return self

    def _to_legacy_output_shapes(self):
        return self

    def _to_legacy_output_classes(self):
        return self

    def is_compatible_with(self, spec_or_value) -> bool:
        # TF's TypeSpec: a value is compared through its spec; None is a NoneTensor.
        other = spec_or_value
        if other is None or isinstance(other, NoneTensor):
            return True
        return type(other) is NoneTensorSpec

    def most_specific_compatible_type(self, other):
        if type(other) is not NoneTensorSpec:
            raise ValueError(f"No TypeSpec is compatible with both {self} and {other}")
        return self

    most_specific_compatible_shape = most_specific_compatible_type

    def __repr__(self):
        return "NoneTensorSpec()"  # TF's TypeSpec repr: name + serialization
