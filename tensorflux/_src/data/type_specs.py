"""The TypeSpecs of tf.data's element components besides `tf.TensorSpec` and
`tf.SparseTensorSpec` (framework/sparse_tensor.py): `DatasetSpec` (a component that is itself a dataset, as `window`
makes) and `OptionalSpec` (the type of a `tf.data.experimental.Optional`).

TF 1.15 exports them also under their older names (`tf.data.experimental.
SparseTensorStructure`, `DatasetStructure`, `OptionalStructure`); `tf.data.experimental.
TensorStructure(dtype, shape)`, `RaggedTensorStructure(dtype, shape, ragged_rank)` and
`TensorArrayStructure(dtype, element_shape, dynamic_size, infer_shape)` are deprecated
constructors of `tf.TensorSpec`, `tf.RaggedTensorSpec` and `tf.TensorArraySpec`.
"""

from __future__ import annotations

from tensorflux._src.framework import tensor_shape
from tensorflux._src.framework.sparse_tensor import SparseTensorSpec
from tensorflux._src.framework.type_spec import TensorSpec, TypeSpec
from tensorflux._src.ops.control.tensor_array_ops import TensorArraySpec
from tensorflux._src.ops.sparse.ragged_tensor import RaggedTensorSpec

__all__ = ["SparseTensorSpec", "DatasetSpec", "OptionalSpec", "TensorStructure",
           "SparseTensorStructure", "RaggedTensorStructure", "TensorArrayStructure"]


class DatasetSpec(TypeSpec):
    """`tf.data.DatasetSpec(element_spec, dataset_shape=())`: the type of a dataset."""

    __slots__ = ("_element_spec", "_dataset_shape")

    def __init__(self, element_spec, dataset_shape=()):
        self._element_spec = element_spec
        self._dataset_shape = tensor_shape.as_shape(dataset_shape)

    @staticmethod
    def from_value(value):
        return DatasetSpec(value.element_spec)

    @property
    def element_spec(self):
        return self._element_spec

    @property
    def shape(self):
        return self._dataset_shape

    @property
    def value_type(self):
        from tensorflux._src.data.dataset_ops import Dataset
        return Dataset

    def is_compatible_with(self, spec_or_value) -> bool:
        other = spec_or_value
        if not isinstance(other, TypeSpec) and hasattr(other, "element_spec"):
            other = DatasetSpec.from_value(other)
        if type(other) is not DatasetSpec:
            return False
        from tensorflux._src.data import structure as _structure
        return (_structure.specs_compatible(self._element_spec, other.element_spec)
                and self._dataset_shape.is_compatible_with(other.shape))

    def most_specific_compatible_type(self, other):
        if type(other) is not DatasetSpec or not self.is_compatible_with(other):
            raise ValueError(f"No TypeSpec is compatible with both {self} and {other}")
        from tensorflux._src.data import structure as _structure
        return DatasetSpec(_structure.most_specific_specs(self._element_spec,
                                                          other.element_spec),
                           self._dataset_shape.most_specific_compatible_shape(other.shape))

    def _key(self):
        return self._element_spec, self._dataset_shape.as_tuple_or_none()

    def __hash__(self):  # element specs may be dicts
        return hash((DatasetSpec, repr(self._element_spec)))

    def __repr__(self):
        return f"DatasetSpec({self._element_spec!r}, {self._dataset_shape!r})"


class OptionalSpec(TypeSpec):
    """`tf.OptionalSpec(element_spec)`: the type of a `tf.data.experimental.Optional`."""

    __slots__ = ("_element_spec",)

    def __init__(self, element_spec):
        self._element_spec = element_spec

    @staticmethod
    def from_value(value):
        return OptionalSpec(value.element_spec)

    @property
    def element_spec(self):
        return self._element_spec

    @property
    def value_type(self):
        from tensorflux._src.data.optional_ops import Optional
        return Optional

    def is_compatible_with(self, spec_or_value) -> bool:
        other = spec_or_value
        if not isinstance(other, TypeSpec) and hasattr(other, "element_spec"):
            other = OptionalSpec.from_value(other)
        from tensorflux._src.data import structure as _structure
        return type(other) is OptionalSpec and _structure.specs_compatible(
            self._element_spec, other.element_spec)

    def most_specific_compatible_type(self, other):
        if type(other) is not OptionalSpec or not self.is_compatible_with(other):
            raise ValueError(f"No TypeSpec is compatible with both {self} and {other}")
        from tensorflux._src.data import structure as _structure
        return OptionalSpec(_structure.most_specific_specs(self._element_spec,
                                                           other.element_spec))

    def _key(self):
        return (self._element_spec,)

    def __hash__(self):  # element specs may be dicts
        return hash((OptionalSpec, repr(self._element_spec)))

    def __repr__(self):
        return f"OptionalSpec({self._element_spec!r})"


def TensorStructure(dtype, shape):  # noqa: N802 - TF's exported name
    """Deprecated (TF 1.15): `tf.TensorSpec(shape, dtype)`."""
    return TensorSpec(shape, dtype)


def SparseTensorStructure(dtype, shape):  # noqa: N802 - TF's exported name
    """Deprecated (TF 1.15): `tf.SparseTensorSpec(shape, dtype)`."""
    return SparseTensorSpec(shape, dtype)


def RaggedTensorStructure(dtype, shape, ragged_rank):  # noqa: N802 - TF's exported name
    """Deprecated (TF 1.15): `tf.RaggedTensorSpec(shape, dtype, ragged_rank)`."""
    return RaggedTensorSpec(shape, dtype, ragged_rank)


def TensorArrayStructure(dtype, element_shape, dynamic_size, infer_shape):  # noqa: N802
    """Deprecated (TF 1.15): `tf.TensorArraySpec(element_shape, dtype, dynamic_size,
    infer_shape)`."""
    return TensorArraySpec(element_shape, dtype, dynamic_size, infer_shape)
