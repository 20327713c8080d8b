"""`tf.SparseTensor`: a sparse value as three dense tensors, and its fetched form.

Like TF1's, a SparseTensor is not itself a Tensor: it holds `indices` (int64 [N, rank]),
`values` ([N]) and `dense_shape` (int64 [rank]). `Session.run` fetches it as a
`tf.SparseTensorValue(indices, values, dense_shape)` of numpy arrays (see
runtime/fetches.py). Sparse ops (sparse_tensor_to_dense, ...) are not implemented yet.
"""

from __future__ import annotations

import collections

import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework import tensor_shape as _tensor_shape
from tensorflux._src.framework.composite_tensor import CompositeTensor
from tensorflux._src.framework.default_session import eval_using_default_session
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.framework.type_spec import TensorSpec, TypeSpec

__all__ = ["SparseTensor", "SparseTensorSpec", "SparseTensorValue",
           "convert_to_tensor_or_sparse_tensor"]

SparseTensorValue = collections.namedtuple("SparseTensorValue",
                                           ["indices", "values", "dense_shape"])


class SparseTensor(CompositeTensor):
    """`tf.SparseTensor(indices, values, dense_shape)`: value `values[i]` sits at
    `indices[i]` of a tensor of shape `dense_shape`; every other element is zero."""

    def __init__(self, indices, values, dense_shape):
        with _graph.name_scope(None, "SparseTensor", [indices, values, dense_shape]):
            indices = convert_to_tensor(indices, name="indices", dtype=_dtypes.int64)
            values = convert_to_tensor(values, name="values")
            dense_shape = convert_to_tensor(dense_shape, name="dense_shape",
                                            dtype=_dtypes.int64)
        indices_shape = indices.shape.with_rank(2)
        values_shape = values.shape.with_rank(1)
        dense_shape_shape = dense_shape.shape.with_rank(1)
        # One row of indices per value, one column per dimension of the dense shape.
        indices_shape[0].merge_with(values_shape[0])
        indices_shape[1].merge_with(dense_shape_shape[0])
        self._indices, self._values, self._dense_shape = indices, values, dense_shape
        self._shape_hint = _tensor_shape.unknown_shape()  # what set_shape added

    @classmethod
    def from_value(cls, sparse_tensor_value):
        """A SparseTensor from a SparseTensorValue (or a SparseTensor, returned as is)."""
        if isinstance(sparse_tensor_value, SparseTensor):
            return sparse_tensor_value
        return cls(sparse_tensor_value.indices, sparse_tensor_value.values,
                   sparse_tensor_value.dense_shape)

    @property
    def indices(self):
        return self._indices

    @property
    def values(self):
        return self._values

    @property
    def dense_shape(self):
        return self._dense_shape

    @property
    def dtype(self):
        return self._values.dtype

    @property
    def op(self):
        return self._values.op

    @property
    def graph(self):
        return self._indices.graph

    @property
    def shape(self):
        """The static dense shape, as far as `dense_shape`'s value (and `set_shape`)
        tell it."""
        from tensorflux._src.ops.shape_fns import static_shape_from_tensor
        shape = static_shape_from_tensor(self._dense_shape)
        if shape.ndims is None and self._dense_shape.shape.ndims == 1:
            shape = _tensor_shape.unknown_shape(self._dense_shape.shape[0].value)
        return shape.merge_with(self._shape_hint) if self._shape_hint.ndims is not None \
            else shape

    def get_shape(self):
        return self.shape

    def set_shape(self, shape):
        """Merges `shape` into the static dense shape (TF's ValueError when they
        disagree)."""
        shape = _tensor_shape.as_shape(shape)
        self.shape.merge_with(shape)  # TF's "Shapes ... are not compatible"
        self._shape_hint = self._shape_hint.merge_with(shape)

    def with_values(self, new_values):
        """This SparseTensor's indices and dense_shape with `new_values` (same length)."""
        new_values = convert_to_tensor(new_values)
        new_values.shape.with_rank(1)[0].merge_with(self._values.shape.with_rank(1)[0])
        result = SparseTensor(self._indices, new_values, self._dense_shape)
        result._shape_hint = self._shape_hint
        return result

    @property
    def _type_spec(self):
        return SparseTensorSpec(self.shape, self.dtype)

    # -- CompositeTensor ----------------------------------------------------------------
    def _components(self):
        return [self._indices, self._values, self._dense_shape]

    def _from_components(self, components):
        return SparseTensor(*components)

    def _value_from_components(self, values):
        return SparseTensorValue(*values)

    def _feed_components(self, value):
        if isinstance(value, SparseTensor):
            raise TypeError(f"The value of a feed cannot be a tf.SparseTensor object. "
                            f"Feed a tf.SparseTensorValue or an (indices, values, "
                            f"dense_shape) tuple; the key was {self}.")
        parts = tuple(value)
        if len(parts) != 3:
            raise ValueError(f"A SparseTensor is fed with (indices, values, dense_shape); "
                             f"got {len(parts)} parts.")
        return list(zip(self._components(), parts))

    def eval(self, feed_dict=None, session=None):
        """Evaluates the three tensors in `session` (or the default session)."""
        return eval_using_default_session(self, feed_dict, self.graph, session)

    def __str__(self):
        return (f"SparseTensor(indices={self._indices}, values={self._values}, "
                f"dense_shape={self._dense_shape})")

    __repr__ = __str__


def convert_to_tensor_or_sparse_tensor(value, dtype=None, name=None):
    """A SparseTensor for a SparseTensor or SparseTensorValue, else a Tensor."""
    if dtype is not None:
        dtype = _dtypes.as_dtype(dtype)
    if isinstance(value, SparseTensorValue):
        value = SparseTensor.from_value(value)
    if isinstance(value, SparseTensor):
        if dtype and not dtype.is_compatible_with(value.dtype):
            raise RuntimeError(f"Sparse dtype: requested = {dtype}, actual = {value.dtype}")
        return value
    return convert_to_tensor(value, dtype=dtype, name=name)


class SparseTensorSpec(TypeSpec):
    """`tf.SparseTensorSpec(shape=None, dtype=tf.float32)`: the type of a SparseTensor."""

    __slots__ = ("_shape", "_dtype")

    def __init__(self, shape=None, dtype=_dtypes.float32):
        self._shape = _tensor_shape.as_shape(shape)
        self._dtype = _dtypes.as_dtype(dtype)

    @classmethod
    def from_value(cls, value):
        if isinstance(value, SparseTensor):
            return cls(value.shape, value.dtype)
        if isinstance(value, SparseTensorValue):
            return cls(np.asarray(value.dense_shape).tolist(),
                       _dtypes.as_dtype(np.asarray(value.values).dtype))
        raise TypeError(f"Expected SparseTensor or SparseTensorValue, got {value!r}")

    @property
    def shape(self):
        return self._shape

    @property
    def dtype(self):
        return self._dtype

    @property
    def value_type(self):
        return SparseTensor

    def is_compatible_with(self, spec_or_value) -> bool:
        other = spec_or_value
        if isinstance(other, (SparseTensor, SparseTensorValue)):
            other = SparseTensorSpec.from_value(other)
        if not isinstance(other, SparseTensorSpec):
            return False
        return (self._dtype.is_compatible_with(other.dtype)
                and self._shape.is_compatible_with(other.shape))

    def most_specific_compatible_type(self, other):
        if type(other) is not SparseTensorSpec or self._dtype != other.dtype:
            raise ValueError(f"No TypeSpec is compatible with both {self} and {other}")
        return SparseTensorSpec(self._shape.most_specific_compatible_shape(other.shape),
                                self._dtype)

    def _key(self):
        return self._dtype, self._shape.as_tuple_or_none()

    def __repr__(self):
        dims = self._shape.as_list() if self._shape.ndims is not None else None
        return f"SparseTensorSpec(TensorShape({dims}), {self._dtype!r})"

    def __reduce__(self):
        return SparseTensorSpec, (self._shape, self._dtype)

    @property
    def _component_specs(self):
        # TF's: indices [nnz, rank] int64, values [nnz], dense_shape [rank] int64.
        rank = self._shape.ndims
        return [TensorSpec([None, rank], _dtypes.int64), TensorSpec([None], self._dtype),
                TensorSpec([rank], _dtypes.int64)]

    def _from_components(self, components):
        if all(isinstance(c, np.ndarray) for c in components):
            return SparseTensorValue(*components)  # numpy values, as TF1 graph mode
        return SparseTensor(*components)
