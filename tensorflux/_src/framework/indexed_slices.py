"""`tf.IndexedSlices`: rows of a larger tensor, the form of sparse gradients.

As in TF1, an IndexedSlices is not a Tensor: it holds `values` ([N, d1, ...]),
`indices` ([N], rows of dimension 0 the values belong to) and an optional `dense_shape`.
The dense tensor it stands for is the sum of `values[i]` into row `indices[i]` (repeated
indices add up). Gradients of `tf.gather` along axis 0 (and so of embedding lookups) are
IndexedSlices, which optimizers apply as sparse updates. It is a `CompositeTensor`, so
`Session.run` fetches one as a `tf.IndexedSlicesValue(values, indices, dense_shape)` of
numpy arrays (dense_shape None when it has none) and a feed keyed by one takes such a
value. Converting one to a Tensor (`tf.convert_to_tensor`, or passing it
to any op) densifies it with an unsorted segment sum: that conversion is registered by
`ops/math/indexed_slices_ops.py`, which has the ops it needs.
"""

from __future__ import annotations

import collections

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import tensor_shape
from tensorflux._src.framework.composite_tensor import CompositeTensor
from tensorflux._src.framework.sparse_tensor import SparseTensor
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.framework.type_spec import TensorSpec, TypeSpec

__all__ = ["IndexedSlices", "IndexedSlicesValue", "IndexedSlicesSpec",
           "convert_to_tensor_or_indexed_slices"]

IndexedSlicesValue = collections.namedtuple("IndexedSlicesValue",
                                            ["values", "indices", "dense_shape"])


class IndexedSlices(CompositeTensor):
    """`tf.IndexedSlices(values, indices, dense_shape=None)`: `values[i]` is row
    `indices[i]` (of dimension 0) of a tensor of shape `dense_shape`."""

    def __init__(self, values, indices, dense_shape=None):
        # TF stores the three as given (no conversion, no checks).
        self._values = values
        self._indices = indices
        self._dense_shape = dense_shape

    @property
    def values(self):
        return self._values

    @property
    def indices(self):
        return self._indices

    @property
    def dense_shape(self):
        return self._dense_shape

    @property
    def shape(self):
        """The dense shape, as far as `dense_shape`'s value is known statically."""
        if self._dense_shape is None:
            return tensor_shape.TensorShape(None)
        from tensorflux._src.ops.shape_fns import static_shape_from_tensor
        return static_shape_from_tensor(self._dense_shape)

    @property
    def name(self):
        return self._values.name

    @property
    def device(self):
        return self._values.device

    @property
    def op(self):
        return self._values.op

    @property
    def dtype(self):
        return self._values.dtype

    @property
    def graph(self):
        return self._values.graph

    # -- CompositeTensor ----------------------------------------------------------------
    def _components(self):
        parts = [self._values, self._indices]
        return parts if self._dense_shape is None else parts + [self._dense_shape]

    def _from_components(self, components):
        return IndexedSlices(*components)

    def _value_from_components(self, values):
        values = list(values)
        return IndexedSlicesValue(values[0], values[1], values[2] if len(values) == 3 else None)

    def _feed_components(self, value):
        """Fed with an IndexedSlicesValue (or any sequence of its parts); a None
        dense_shape part is skipped when this IndexedSlices has none."""
        if isinstance(value, IndexedSlices):
            raise TypeError(f"The value of a feed cannot be a tf.IndexedSlices object. "
                            f"Feed a tf.IndexedSlicesValue or a (values, indices"
                            f"[, dense_shape]) tuple; the key was {self}.")
        parts = tuple(value)
        components = self._components()
        if len(parts) == 3 and parts[2] is None and len(components) == 2:
            parts = parts[:2]
        if len(parts) != len(components):
            raise ValueError(f"This IndexedSlices is fed with {len(components)} parts "
                             f"(values, indices{', dense_shape' if len(components) == 3 else ''}"
                             f"); got {len(parts)}.")
        return list(zip(components, parts))

    @property
    def _type_spec(self):
        indices_shape = self._indices.shape.merge_with(self._values.shape[:1])
        dense_shape = tensor_shape.TensorShape([None]).concatenate(self._values.shape[1:])
        dense_shape_dtype = None
        if self._dense_shape is not None:
            dense_shape_dtype = self._dense_shape.dtype
            dense_shape = dense_shape.merge_with(self.shape)
        return IndexedSlicesSpec(dense_shape, self.dtype, self._indices.dtype,
                                 dense_shape_dtype, indices_shape)

    def __str__(self):
        shape = "" if self._dense_shape is None else f", dense_shape={self._dense_shape}"
        return f"IndexedSlices(indices={self._indices}, values={self._values}{shape})"

    __repr__ = __str__

    def __neg__(self):
        return IndexedSlices(-self._values, self._indices, self._dense_shape)


class IndexedSlicesSpec(TypeSpec):
    """`tf.IndexedSlicesSpec(shape=None, dtype=tf.float32, indices_dtype=tf.int64,
    dense_shape_dtype=None, indices_shape=None)`: the type of an IndexedSlices."""

    __slots__ = ("_shape", "_values_dtype", "_indices_dtype", "_dense_shape_dtype",
                 "_indices_shape")

    def __init__(self, shape=None, dtype=_dtypes.float32, indices_dtype=_dtypes.int64,
                 dense_shape_dtype=None, indices_shape=None):
        self._shape = tensor_shape.as_shape(shape)
        self._values_dtype = _dtypes.as_dtype(dtype)
        self._indices_dtype = _dtypes.as_dtype(indices_dtype)
        self._dense_shape_dtype = (None if dense_shape_dtype is None
                                   else _dtypes.as_dtype(dense_shape_dtype))
        self._indices_shape = tensor_shape.as_shape(indices_shape).with_rank(1)

    @property
    def value_type(self):
        return IndexedSlices

    @property
    def shape(self):
        return self._shape

    @property
    def dtype(self):
        return self._values_dtype

    def _serialize(self):
        return (self._shape, self._values_dtype, self._indices_dtype,
                self._dense_shape_dtype, self._indices_shape)

    @property
    def _component_specs(self):
        specs = [TensorSpec(self._indices_shape.concatenate(self._shape[1:]),
                            self._values_dtype),
                 TensorSpec(self._indices_shape, self._indices_dtype)]
        if self._dense_shape_dtype is not None:
            specs.append(TensorSpec([self._shape.ndims], self._dense_shape_dtype))
        return tuple(specs)

    def _to_components(self, value):
        if value.dense_shape is None:
            return (value.values, value.indices)
        return (value.values, value.indices, value.dense_shape)

    def _from_components(self, components):
        components = list(components)
        if len(components) == 2:
            components.append(None)
        if all(not hasattr(c, "graph") for c in components):
            return IndexedSlicesValue(*components)  # numpy values, as TF1 graph mode
        return IndexedSlices(*components)

    def is_compatible_with(self, spec_or_value):
        other = spec_or_value
        if isinstance(other, IndexedSlices):
            other = other._type_spec
        if type(other) is not IndexedSlicesSpec:
            return False
        return (self._values_dtype.is_compatible_with(other._values_dtype)
                and self._indices_dtype.is_compatible_with(other._indices_dtype)
                and self._dense_shape_dtype == other._dense_shape_dtype
                and self._shape.is_compatible_with(other._shape)
                and self._indices_shape.is_compatible_with(other._indices_shape))

    def most_specific_compatible_type(self, other):
        if type(other) is not IndexedSlicesSpec or self._serialize()[1:4] != \
                other._serialize()[1:4]:
            raise ValueError(f"No TypeSpec is compatible with both {self} and {other}")
        return IndexedSlicesSpec(
            self._shape.most_specific_compatible_shape(other._shape), self._values_dtype,
            self._indices_dtype, self._dense_shape_dtype,
            self._indices_shape.most_specific_compatible_shape(other._indices_shape))

    def _key(self):
        def dims(shape):
            return None if shape.ndims is None else tuple(shape.as_list())
        return (dims(self._shape), self._values_dtype, self._indices_dtype,
                self._dense_shape_dtype, dims(self._indices_shape))

    def __eq__(self, other):
        return type(self) is type(other) and self._key() == other._key()

    def __ne__(self, other):
        return not self == other

    def __hash__(self):
        return hash(self._key())

    def __repr__(self):
        return (f"IndexedSlicesSpec({self._shape}, {self._values_dtype!r}, "
                f"{self._indices_dtype!r}, {self._dense_shape_dtype!r}, "
                f"{self._indices_shape})")

    def __reduce__(self):
        return IndexedSlicesSpec, self._serialize()


def convert_to_tensor_or_indexed_slices(value, dtype=None, name=None):
    """An IndexedSlices (or SparseTensor) as it is, anything else through
    `convert_to_tensor`."""
    if isinstance(value, (IndexedSlices, SparseTensor)):
        if dtype and not _dtypes.as_dtype(dtype).is_compatible_with(value.dtype):
            raise ValueError(f"Tensor conversion requested dtype "
                             f"{_dtypes.as_dtype(dtype).name} for Tensor with dtype "
                             f"{value.dtype.name}: {str(value)!r}")
        return value
    return convert_to_tensor(value, dtype=dtype, name=name)


def convert_n_to_tensor_or_indexed_slices(values, dtype=None, name=None):
    """`convert_to_tensor_or_indexed_slices` of each value (None stays None)."""
    return [None if v is None else convert_to_tensor_or_indexed_slices(
        v, dtype=dtype, name=None if name is None else f"{name}_{i}")
        for i, v in enumerate(values)]
