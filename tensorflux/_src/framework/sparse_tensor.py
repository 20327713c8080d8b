"""`tf.SparseTensor`: a sparse value as three dense tensors, and its fetched form.

Like TF1's, a SparseTensor is not itself a Tensor: it holds `indices` (int64 [N, rank]),
`values` ([N]) and `dense_shape` (int64 [rank]). `Session.run` fetches it as a
`tf.SparseTensorValue(indices, values, dense_shape)` of numpy arrays (see
runtime/fetches.py). Sparse ops (sparse_tensor_to_dense, ...) are not implemented yet.
"""

from __future__ import annotations

import collections

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.default_session import eval_using_default_session
from tensorflux._src.framework.tensor_conversion import convert_to_tensor

__all__ = ["SparseTensor", "SparseTensorValue", "convert_to_tensor_or_sparse_tensor"]

SparseTensorValue = collections.namedtuple("SparseTensorValue",
                                           ["indices", "values", "dense_shape"])


class SparseTensor:
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
        """The static dense shape, as far as `dense_shape`'s value is known."""
        from tensorflux._src.ops.shape_fns import static_shape_from_tensor
        return static_shape_from_tensor(self._dense_shape)

    def get_shape(self):
        return self.shape

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
