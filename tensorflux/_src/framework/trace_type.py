"""TF 2.x's TraceType protocol, as far as TF1-era values use it: a type that describes
itself (DType, TensorShape) is its own placeholder and carries no tensors."""

from __future__ import annotations


class SelfDescribingType:
    """Defaults for types whose value is the type itself; subclasses give
    `is_subtype_of` and `most_specific_common_supertype`."""

    __slots__ = ()

    def placeholder_value(self, placeholder_context=None):
        return self

    def to_tensors(self, value):
        return []

    def from_tensors(self, tensors):
        return self

    def flatten(self):
        return []

    def cast(self, value, cast_context=None):
        if not self._coerce(value).is_subtype_of(self):
            raise ValueError(f"Can not cast {value!r} to type {self!r}")
        return self._coerce(value)

    def _coerce(self, value):
        return value
