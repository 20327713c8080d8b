"""`tf.TypeSpec` and `tf.TensorSpec`: descriptions of values (dtype and static shape),
used where TF1.15 code declares signatures (`tf.TensorSpec([None, 28, 28], tf.float32)`).
"""

from __future__ import annotations

import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import tensor_shape
from tensorflux._src.framework.operation import Tensor

__all__ = ["TypeSpec", "TensorSpec", "type_spec_from_value"]


class TypeSpec:
    """The type of a value: subclasses say what they describe (`value_type`) and how
    two specs relate."""

    @property
    def value_type(self):
        raise NotImplementedError

    def is_compatible_with(self, spec_or_value) -> bool:
        raise NotImplementedError

    def most_specific_compatible_type(self, other) -> "TypeSpec":
        raise NotImplementedError

    def _key(self):
        """What equality and hashing compare, as TF's TypeSpec compares its serialization:
        a hashable tuple of the spec's fields, shapes as `as_tuple_or_none()`."""
        raise NotImplementedError

    def __eq__(self, other):
        return type(self) is type(other) and self._key() == other._key()

    def __ne__(self, other):
        return not self == other

    def __hash__(self):
        return hash(self._key())

    # TF 2.x's TraceType names for the same relations.
    def is_subtype_of(self, other) -> bool:
        return type(self) is type(other) and other.is_compatible_with(self) and \
            self.most_specific_compatible_type(other) == other

    def most_specific_common_supertype(self, others):
        result = self
        for other in others:
            try:
                result = result.most_specific_compatible_type(other)
            except (TypeError, ValueError):
                return None
        return result


class TensorSpec(TypeSpec):
    """`TensorSpec(shape, dtype=tf.float32, name=None)`: a tensor's static shape and dtype."""

    __slots__ = ("_shape", "_dtype", "_name")

    def __init__(self, shape, dtype=_dtypes.float32, name=None):
        self._shape = tensor_shape.as_shape(shape)
        self._dtype = _dtypes.as_dtype(dtype)
        self._name = name

    @classmethod
    def from_spec(cls, spec, name=None):
        return cls(spec.shape, spec.dtype, name or getattr(spec, "name", None))

    @classmethod
    def from_tensor(cls, tensor, name=None):
        if isinstance(tensor, Tensor):
            return cls(tensor.shape, tensor.dtype, name or tensor.op.name)
        if hasattr(tensor, "shape") and hasattr(tensor, "dtype"):
            return cls(tensor.shape, tensor.dtype, name)
        raise ValueError(f"`tensor` should be a tf.Tensor, but got type {type(tensor)}.")

    @property
    def shape(self):
        return self._shape

    @property
    def dtype(self):
        return self._dtype

    @property
    def name(self):
        return self._name

    @property
    def value_type(self):
        return Tensor

    def is_compatible_with(self, spec_or_tensor) -> bool:
        """Same dtype and compatible shapes (a Tensor, TensorSpec or numpy value)."""
        other = spec_or_tensor
        if not isinstance(other, (Tensor, TensorSpec)):
            if isinstance(other, TypeSpec):
                return False
            other = np.asarray(other)
        return (self._dtype.is_compatible_with(_dtypes.as_dtype(other.dtype)) and
                self._shape.is_compatible_with(tensor_shape.as_shape(other.shape)))

    def most_specific_compatible_type(self, other):
        if type(self) is not type(other) or self._dtype != other.dtype:
            raise ValueError(f"No TypeSpec is compatible with both {self} and {other}")
        return TensorSpec(self._shape.most_specific_compatible_shape(other.shape),
                          self._dtype, self._name if self._name == other.name else None)

    def _key(self):
        return self._dtype, self._shape.as_tuple_or_none(), self._name

    def __repr__(self):
        return f"TensorSpec(shape={self._shape}, dtype={self._dtype!r}, name={self._name!r})"

    def __reduce__(self):
        return TensorSpec, (self._shape, self._dtype, self._name)


def type_spec_from_value(value) -> TypeSpec:
    """The TypeSpec describing `value`: a Tensor's, or that of the tensor it converts to."""
    if isinstance(value, TypeSpec):
        raise TypeError(f"Could not build a TypeSpec for {value!r} of unsupported type "
                        f"{type(value)}.")
    if isinstance(value, Tensor):
        return TensorSpec(value.shape, value.dtype)
    spec = getattr(value, "_type_spec", None)
    if isinstance(spec, TypeSpec):
        return spec
    try:
        array = np.asarray(value)
        dtype = _dtypes.as_dtype(array.dtype if array.dtype.kind not in "iuf" or
                                 isinstance(value, np.ndarray | np.generic)
                                 else _default_python_dtype(value))
    except (TypeError, ValueError):
        raise TypeError(f"Could not build a TypeSpec for {value!r} of unsupported type "
                        f"{type(value)}.") from None
    return TensorSpec(array.shape, dtype)


def _default_python_dtype(value):
    # Python floats are float32 and ints int32 in TF, as `tf.constant` converts them.
    flat = np.asarray(value)
    if flat.dtype.kind == "f":
        return _dtypes.float32
    if flat.dtype.kind in "iu":
        return _dtypes.int32 if flat.size == 0 or (
            np.iinfo(np.int32).min <= flat.min() and flat.max() <= np.iinfo(np.int32).max) \
            else _dtypes.int64
    return flat.dtype
