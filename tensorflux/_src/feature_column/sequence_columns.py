"""Sequence columns (`tf.feature_column.sequence_*`): per example a sequence of values.

The categorical ones wrap a categorical column in `SequenceCategoricalColumn`, whose ids
get a third dimension, so `embedding_column` / `indicator_column` give one vector per time
step (`get_sequence_dense_tensor`) with the sequences' lengths. `sequence_numeric_column`
densifies a SparseTensor of values, padded with `default_value`, to [batch, time] + shape.
"""

from __future__ import annotations

import collections

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import tensor_shape
from tensorflux._src.feature_column import utils as fc_utils
from tensorflux._src.feature_column.categorical_columns import (
    ColumnTuple, KeyedColumn, SequenceCategoricalColumn, categorical_column_with_hash_bucket,
    categorical_column_with_identity, categorical_column_with_vocabulary_file,
    categorical_column_with_vocabulary_list)
from tensorflux._src.feature_column.utils import (SequenceDenseColumn,
                                                   TensorSequenceLengthPair,
                                                   _SequenceDenseColumn)
from tensorflux._src.ops.array import array_ops as A
from tensorflux._src.ops.sparse.sparse_ops import sparse_tensor_to_dense
from tensorflux._src.ops.strings.parsing_ops import VarLenFeature

__all__ = [
    "sequence_categorical_column_with_identity", "sequence_categorical_column_with_hash_bucket",
    "sequence_categorical_column_with_vocabulary_file",
    "sequence_categorical_column_with_vocabulary_list", "sequence_numeric_column",
]


def sequence_categorical_column_with_identity(key, num_buckets, default_value=None):
    """Sequences of integer ids in [0, num_buckets) (see categorical_column_with_identity)."""
    return SequenceCategoricalColumn(categorical_column_with_identity(
        key=key, num_buckets=num_buckets, default_value=default_value))


def sequence_categorical_column_with_hash_bucket(key, hash_bucket_size, dtype=_dtypes.string):
    """Sequences of hashed ids (see categorical_column_with_hash_bucket)."""
    return SequenceCategoricalColumn(categorical_column_with_hash_bucket(
        key=key, hash_bucket_size=hash_bucket_size, dtype=dtype))


def sequence_categorical_column_with_vocabulary_file(key, vocabulary_file,
                                                     vocabulary_size=None, num_oov_buckets=0,
                                                     default_value=None,
                                                     dtype=_dtypes.string):
    """Sequences of vocabulary-file ids (see categorical_column_with_vocabulary_file)."""
    return SequenceCategoricalColumn(categorical_column_with_vocabulary_file(
        key=key, vocabulary_file=vocabulary_file, vocabulary_size=vocabulary_size,
        num_oov_buckets=num_oov_buckets, default_value=default_value, dtype=dtype))


def sequence_categorical_column_with_vocabulary_list(key, vocabulary_list, dtype=None,
                                                     default_value=-1, num_oov_buckets=0):
    """Sequences of vocabulary-list ids (see categorical_column_with_vocabulary_list)."""
    return SequenceCategoricalColumn(categorical_column_with_vocabulary_list(
        key=key, vocabulary_list=vocabulary_list, dtype=dtype, default_value=default_value,
        num_oov_buckets=num_oov_buckets))


def sequence_numeric_column(key, shape=(1,), default_value=0., dtype=_dtypes.float32,
                            normalizer_fn=None):
    """Sequences of numeric values, `shape` per time step; `default_value` pads."""
    shape = fc_utils.check_shape(shape=shape, key=key)
    dtype = _dtypes.as_dtype(dtype)
    if not (dtype.is_integer or dtype.is_floating):
        raise ValueError(f"dtype must be convertible to float. dtype: {dtype}, key: {key}")
    if normalizer_fn is not None and not callable(normalizer_fn):
        raise TypeError(f"normalizer_fn must be a callable. Given: {normalizer_fn}")
    return SequenceNumericColumn(key, shape=shape, default_value=default_value, dtype=dtype,
                                 normalizer_fn=normalizer_fn)


class SequenceNumericColumn(
        ColumnTuple, KeyedColumn, SequenceDenseColumn, _SequenceDenseColumn,
        collections.namedtuple("SequenceNumericColumn",
                               ("key", "shape", "default_value", "dtype", "normalizer_fn"))):
    """See `sequence_numeric_column`."""

    @property
    def parse_example_spec(self):
        return {self.key: VarLenFeature(self.dtype)}

    def _transform_input_tensor(self, input_tensor):
        return input_tensor if self.normalizer_fn is None else self.normalizer_fn(input_tensor)

    @property
    def variable_shape(self):
        return tensor_shape.TensorShape(self.shape)

    def _sequence(self, sp_tensor):
        dense = sparse_tensor_to_dense(sp_tensor, default_value=self.default_value)
        # [batch, time] + shape: a 2-D input holds `shape`'s elements flattened per step.
        dense = A.reshape(dense, A.concat([A.shape(dense)[:1], [-1],
                                           self.variable_shape.as_list()], axis=0))
        num_elements = (self.variable_shape.num_elements() if sp_tensor.shape.ndims == 2
                        else 1)
        return TensorSequenceLengthPair(
            dense_tensor=dense, sequence_length=fc_utils.sequence_length_from_sparse_tensor(
                sp_tensor, num_elements=num_elements))

    def get_sequence_dense_tensor(self, transformation_cache, state_manager):
        return self._sequence(transformation_cache.get(self, state_manager))

    def _get_sequence_dense_tensor(self, inputs, weight_collections=None, trainable=None):
        del weight_collections, trainable
        return self._sequence(inputs.get(self))
