"""Dense columns: numeric values, their buckets, embeddings and multi-hot indicators.

- `numeric_column`: the feature as float32, after `normalizer_fn`;
- `bucketized_column`: TF's Bucketize op on a numeric column, dense as one-hot rows and
  categorical as ids `bucket + dimension * (len(boundaries) + 1)`;
- `embedding_column` / `shared_embedding_columns`: `tf.nn.safe_embedding_lookup_sparse`
  (fixed-shape, ops/sparse/embedding_ops.py) of a categorical column's ids (and weights)
  in an `embedding_weights` variable, combined per example by "mean", "sqrtn" or "sum"; shared columns find their variable in a graph
  collection named after the columns, so every column of the group uses one variable;
- `indicator_column`: per example, how often each id occurs (or the sum of its weights).
"""

from __future__ import annotations

import collections
import math

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework import tensor_shape
from tensorflux._src.framework.graph_keys import GraphKeys
from tensorflux._src.framework.sparse_tensor import SparseTensor
from tensorflux._src.feature_column import utils as fc_utils
from tensorflux._src.feature_column.categorical_columns import (
    ColumnTuple, KeyedColumn, OnCategoricalColumn, SequenceCategoricalColumn,
    WeightedCategoricalColumn)
from tensorflux._src.feature_column.utils import (
    CategoricalColumn, DenseColumn, FeatureColumn, IdWeightPair, SequenceDenseColumn,
    TensorSequenceLengthPair, _CategoricalColumn, _DenseColumn, _SequenceCategoricalColumn,
    _SequenceDenseColumn)
from tensorflux._src.ops.array import array_ops as A
from tensorflux._src.ops.array import gather_ops as G
from tensorflux._src.ops.math import math_ops as M
from tensorflux._src.ops.math import reduce_ops as R
from tensorflux._src.ops.math.bucketize import bucketize
from tensorflux._src.ops.sparse.embedding_ops import safe_embedding_lookup_sparse
from tensorflux._src.ops.sparse.sparse_compose import sparse_merge
from tensorflux._src.ops.sparse.sparse_ops import sparse_slice, sparse_tensor_to_dense
from tensorflux._src.ops.state import init_ops
from tensorflux._src.ops.strings.parsing_ops import FixedLenFeature
from tensorflux._src.train import checkpoint_utils
from tensorflux._src.train import variable_scope as vs

__all__ = ["numeric_column", "bucketized_column", "embedding_column",
           "shared_embedding_columns", "indicator_column"]


class NumericColumn(
        ColumnTuple, KeyedColumn, DenseColumn, _DenseColumn,
        collections.namedtuple("NumericColumn",
                               ("key", "shape", "default_value", "dtype", "normalizer_fn"))):
    """See `numeric_column`."""

    @property
    def parse_example_spec(self):
        return {self.key: FixedLenFeature(self.shape, self.dtype, self.default_value)}

    def _transform_input_tensor(self, input_tensor):
        if isinstance(input_tensor, SparseTensor):
            raise ValueError("The corresponding Tensor of numerical column must be a Tensor. "
                             f"SparseTensor is not supported. key: {self.key}")
        if self.normalizer_fn is not None:
            input_tensor = self.normalizer_fn(input_tensor)
        return M.cast(input_tensor, _dtypes.float32)

    @property
    def variable_shape(self):
        return tensor_shape.TensorShape(self.shape)

    @property
    def _variable_shape(self):
        return self.variable_shape

    def get_dense_tensor(self, transformation_cache, state_manager):
        return transformation_cache.get(self, state_manager)

    def _get_dense_tensor(self, inputs, weight_collections=None, trainable=None):
        del weight_collections, trainable
        return inputs.get(self)


class BucketizedColumn(
        ColumnTuple, DenseColumn, CategoricalColumn, _DenseColumn, _CategoricalColumn,
        collections.namedtuple("BucketizedColumn", ("source_column", "boundaries"))):
    """See `bucketized_column`."""

    @property
    def _is_v2_column(self):
        return isinstance(self.source_column, FeatureColumn) and self.source_column._is_v2_column

    @property
    def name(self):
        return f"{self.source_column.name}_bucketized"

    @property
    def parents(self):
        return [self.source_column]

    @property
    def parse_example_spec(self):
        return self.source_column.parse_example_spec

    @property
    def _parse_example_spec(self):
        return self.source_column._parse_example_spec

    def transform_feature(self, transformation_cache, state_manager):
        return bucketize(transformation_cache.get(self.source_column, state_manager),
                         boundaries=list(self.boundaries))

    def _transform_feature(self, inputs):
        return bucketize(inputs.get(self.source_column), boundaries=list(self.boundaries))

    @property
    def variable_shape(self):
        return tensor_shape.TensorShape(tuple(self.source_column.shape)
                                        + (len(self.boundaries) + 1,))

    @property
    def _variable_shape(self):
        return self.variable_shape

    def _one_hot(self, bucket_ids):
        return G.one_hot(indices=M.cast(bucket_ids, _dtypes.int64),
                         depth=len(self.boundaries) + 1, on_value=1., off_value=0.)

    def get_dense_tensor(self, transformation_cache, state_manager):
        return self._one_hot(transformation_cache.get(self, state_manager))

    def _get_dense_tensor(self, inputs, weight_collections=None, trainable=None):
        del weight_collections, trainable
        return self._one_hot(inputs.get(self))

    @property
    def num_buckets(self):
        # The source column is one-dimensional by construction.
        return (len(self.boundaries) + 1) * self.source_column.shape[0]

    @property
    def _num_buckets(self):
        return self.num_buckets

    def _sparse_ids(self, bucket_ids):
        # One id per source dimension, the i-th dimension's buckets offset by
        # i * (len(boundaries) + 1) so the dimensions' ids do not collide.
        batch_size = A.shape(bucket_ids)[0]
        source_dimension = self.source_column.shape[0]
        i1 = A.reshape(A.tile(A.expand_dims(M.range(0, batch_size), 1),
                              [1, source_dimension]), (-1,))
        i2 = A.tile(M.range(0, source_dimension), [batch_size])
        ids = A.reshape(bucket_ids, (-1,)) + (len(self.boundaries) + 1) * i2
        indices = M.cast(A.transpose(A.stack((i1, i2))), _dtypes.int64)
        dense_shape = M.cast(A.stack([batch_size, source_dimension]), _dtypes.int64)
        return IdWeightPair(SparseTensor(indices=indices, values=ids, dense_shape=dense_shape),
                            None)

    def get_sparse_tensors(self, transformation_cache, state_manager):
        return self._sparse_ids(transformation_cache.get(self, state_manager))

    def _get_sparse_tensors(self, inputs, weight_collections=None, trainable=None):
        del weight_collections, trainable
        return self._sparse_ids(inputs.get(self))


def _num_buckets_of(column):
    return column.num_buckets if isinstance(column, CategoricalColumn) else column._num_buckets


def _is_sequence_categorical(column):
    return isinstance(column, _SequenceCategoricalColumn)


def _not_sequence_error(kind, column):
    return ValueError(
        f"In {kind}: {column.name}. categorical_column must not be of type "
        "_SequenceCategoricalColumn. Suggested fix A: If you wish to use input_layer, use a "
        "non-sequence categorical_column_with_*. Suggested fix B: If you wish to create "
        "sequence input, use sequence_input_layer instead of input_layer. "
        f"Given (type {type(column.categorical_column)}): {column.categorical_column}")


def _sequence_error(kind, column):
    return ValueError(
        f"In {kind}: {column.name}. categorical_column must be of type "
        "_SequenceCategoricalColumn to use sequence_input_layer. Suggested fix: Use one of "
        "sequence_categorical_column_with_*. "
        f"Given (type {type(column.categorical_column)}): {column.categorical_column}")


def _with_lengths(dense_tensor, pair):
    """`dense_tensor` with the lengths of the sequences of `pair`'s ids."""
    return TensorSequenceLengthPair(
        dense_tensor=dense_tensor,
        sequence_length=fc_utils.sequence_length_from_sparse_tensor(pair.id_tensor))


def _restore_from_checkpoint(column, embedding_weights):
    if column.ckpt_to_load_from is not None:
        checkpoint_utils.init_from_checkpoint(
            column.ckpt_to_load_from, {column.tensor_name_in_ckpt: embedding_weights})


def _lookup(column, pair, embedding_weights):
    return safe_embedding_lookup_sparse(
        embedding_weights, pair.id_tensor,
        sparse_weights=pair.weight_tensor, combiner=column.combiner,
        name=f"{column.name}_weights", max_norm=column.max_norm)


class EmbeddingColumn(
        ColumnTuple, OnCategoricalColumn, DenseColumn, SequenceDenseColumn, _DenseColumn,
        _SequenceDenseColumn,
        collections.namedtuple("EmbeddingColumn", (
            "categorical_column", "dimension", "combiner", "initializer", "ckpt_to_load_from",
            "tensor_name_in_ckpt", "max_norm", "trainable"))):
    """See `embedding_column`."""

    @property
    def name(self):
        return f"{self.categorical_column.name}_embedding"

    def transform_feature(self, transformation_cache, state_manager):
        return transformation_cache.get(self.categorical_column, state_manager)

    def _transform_feature(self, inputs):
        return inputs.get(self.categorical_column)

    @property
    def variable_shape(self):
        return tensor_shape.TensorShape([self.dimension])

    @property
    def _variable_shape(self):
        return self.variable_shape

    def create_state(self, state_manager):
        state_manager.create_variable(
            self, name="embedding_weights",
            shape=(_num_buckets_of(self.categorical_column), self.dimension),
            dtype=_dtypes.float32, trainable=self.trainable, use_resource=True,
            initializer=self.initializer)

    def _v2_lookup(self, pair, state_manager):
        weights = state_manager.get_variable(self, name="embedding_weights")
        _restore_from_checkpoint(self, weights)
        return _lookup(self, pair, weights)

    def _v1_lookup(self, pair, weight_collections, trainable):
        if weight_collections and GraphKeys.GLOBAL_VARIABLES not in weight_collections:
            weight_collections.append(GraphKeys.GLOBAL_VARIABLES)
        weights = vs.get_variable(
            name="embedding_weights",
            shape=(self.categorical_column._num_buckets, self.dimension),
            dtype=_dtypes.float32, initializer=self.initializer,
            trainable=self.trainable and trainable, collections=weight_collections)
        _restore_from_checkpoint(self, weights)
        return _lookup(self, pair, weights)

    def get_dense_tensor(self, transformation_cache, state_manager):
        if _is_sequence_categorical(self.categorical_column):
            raise _not_sequence_error("embedding_column", self)
        pair = self.categorical_column.get_sparse_tensors(transformation_cache, state_manager)
        return self._v2_lookup(pair, state_manager)

    def _get_dense_tensor(self, inputs, weight_collections=None, trainable=None):
        if _is_sequence_categorical(self.categorical_column):
            raise _not_sequence_error("embedding_column", self)
        pair = self.categorical_column._get_sparse_tensors(inputs, weight_collections,
                                                           trainable)
        return self._v1_lookup(pair, weight_collections, trainable)

    def get_sequence_dense_tensor(self, transformation_cache, state_manager):
        if not _is_sequence_categorical(self.categorical_column):
            raise _sequence_error("embedding_column", self)
        pair = self.categorical_column.get_sparse_tensors(transformation_cache, state_manager)
        return _with_lengths(self._v2_lookup(pair, state_manager), pair)

    def _get_sequence_dense_tensor(self, inputs, weight_collections=None, trainable=None):
        if not _is_sequence_categorical(self.categorical_column):
            raise _sequence_error("embedding_column", self)
        pair = self.categorical_column._get_sparse_tensors(inputs)
        return _with_lengths(self._v1_lookup(pair, weight_collections, trainable), pair)


class _SharedEmbeddingColumn(
        ColumnTuple, _DenseColumn, _SequenceDenseColumn,
        collections.namedtuple("_SharedEmbeddingColumn", (
            "categorical_column", "dimension", "combiner", "initializer",
            "shared_embedding_collection_name", "ckpt_to_load_from", "tensor_name_in_ckpt",
            "max_norm", "trainable"))):
    """See `shared_embedding_columns`: a TF1 column whose variable is the one variable of
    the graph collection `shared_embedding_collection_name` (created by the first column
    of the group that a model reads)."""

    @property
    def name(self):
        return f"{self.categorical_column.name}_shared_embedding"

    @property
    def _var_scope_name(self):
        return self.shared_embedding_collection_name

    @property
    def _parse_example_spec(self):
        return self.categorical_column._parse_example_spec

    def _transform_feature(self, inputs):
        return inputs.get(self.categorical_column)

    @property
    def _variable_shape(self):
        return tensor_shape.TensorShape([self.dimension])

    def _shared_weights(self, weight_collections, trainable):
        shape = (self.categorical_column._num_buckets, self.dimension)
        collection = _graph.get_collection(self.shared_embedding_collection_name)
        if collection:
            if len(collection) > 1:
                raise ValueError(
                    f"Collection {collection} can only contain one variable. Suggested fix "
                    "A: Choose a unique name for this collection. Suggested fix B: Do not add "
                    "any variables to this collection. The feature_column library already "
                    "adds a variable under the hood.")
            weights = collection[0]
            if weights.get_shape() != shape:
                raise ValueError(
                    f"Shared embedding collection {self.shared_embedding_collection_name} "
                    f"contains variable {weights.name} of unexpected shape "
                    f"{weights.get_shape()}. Expected shape is {shape}. Suggested fix A: "
                    "Choose a unique name for this collection. Suggested fix B: Do not add "
                    "any variables to this collection. The feature_column library already "
                    "adds a variable under the hood.")
            return weights
        weights = vs.get_variable(
            name="embedding_weights", shape=shape, dtype=_dtypes.float32,
            initializer=self.initializer, trainable=self.trainable and trainable,
            collections=weight_collections)
        _graph.add_to_collection(self.shared_embedding_collection_name, weights)
        return weights

    def _dense(self, inputs, weight_collections, trainable):
        # Called in the group's shared variable scope: a name scope per column keeps the
        # columns' ops apart.
        with _graph.name_scope(None, default_name=self.name):
            pair = self.categorical_column._get_sparse_tensors(inputs, weight_collections,
                                                               trainable)
            weights = self._shared_weights(weight_collections, trainable)
            _restore_from_checkpoint(self, weights)
            return pair, _lookup(self, pair, weights)

    def _get_dense_tensor(self, inputs, weight_collections=None, trainable=None):
        if _is_sequence_categorical(self.categorical_column):
            raise _not_sequence_error("embedding_column", self)
        return self._dense(inputs, weight_collections, trainable)[1]

    def _get_sequence_dense_tensor(self, inputs, weight_collections=None, trainable=None):
        if not _is_sequence_categorical(self.categorical_column):
            raise _sequence_error("embedding_column", self)
        pair, dense = self._dense(inputs, weight_collections, trainable)
        return _with_lengths(dense, pair)


class IndicatorColumn(
        ColumnTuple, OnCategoricalColumn, DenseColumn, SequenceDenseColumn, _DenseColumn,
        _SequenceDenseColumn,
        collections.namedtuple("IndicatorColumn", ("categorical_column",))):
    """See `indicator_column`."""

    @property
    def name(self):
        return f"{self.categorical_column.name}_indicator"

    @property
    def variable_shape(self):
        return tensor_shape.TensorShape([1, _num_buckets_of(self.categorical_column)])

    @property
    def _variable_shape(self):
        return tensor_shape.TensorShape([1, self.categorical_column._num_buckets])

    @staticmethod
    def _multi_hot(pair, size):
        size = int(size)
        if pair.weight_tensor is not None:
            # Weighted ids: the weights summed per (example, id), through scatter_nd so
            # repeated ids add up.
            weighted = sparse_merge(sp_ids=pair.id_tensor, sp_values=pair.weight_tensor,
                                    vocab_size=size)
            weighted = sparse_slice(weighted, [0, 0], weighted.dense_shape)  # drops id -1
            return G.scatter_nd(weighted.indices, weighted.values, weighted.dense_shape)
        dense_ids = sparse_tensor_to_dense(pair.id_tensor, default_value=-1)
        # float32, as every other input_layer part is; -1 (missing) one-hots to zeros.
        one_hot = G.one_hot(dense_ids, depth=size, on_value=1.0, off_value=0.0)
        return R.reduce_sum(one_hot, axis=[-2])

    def transform_feature(self, transformation_cache, state_manager):
        pair = self.categorical_column.get_sparse_tensors(transformation_cache, state_manager)
        return self._multi_hot(pair, self.variable_shape[-1])

    def _transform_feature(self, inputs):
        pair = self.categorical_column._get_sparse_tensors(inputs)
        return self._multi_hot(pair, self._variable_shape[-1])

    def get_dense_tensor(self, transformation_cache, state_manager):
        if _is_sequence_categorical(self.categorical_column):
            raise _not_sequence_error("indicator_column", self)
        return transformation_cache.get(self, state_manager)

    def _get_dense_tensor(self, inputs, weight_collections=None, trainable=None):
        del weight_collections, trainable
        if _is_sequence_categorical(self.categorical_column):
            raise _not_sequence_error("indicator_column", self)
        return inputs.get(self)

    def get_sequence_dense_tensor(self, transformation_cache, state_manager):
        if not _is_sequence_categorical(self.categorical_column):
            raise _sequence_error("indicator_column", self)
        pair = self.categorical_column.get_sparse_tensors(transformation_cache, state_manager)
        return _with_lengths(transformation_cache.get(self, state_manager), pair)

    def _get_sequence_dense_tensor(self, inputs, weight_collections=None, trainable=None):
        del weight_collections, trainable
        if not _is_sequence_categorical(self.categorical_column):
            raise _sequence_error("indicator_column", self)
        pair = self.categorical_column._get_sparse_tensors(inputs)
        return _with_lengths(inputs.get(self), pair)


# ---------------------------------------------------------------------------------------
# Constructors (tf.feature_column.*), with TF 1.15's checks and messages.

def numeric_column(key, shape=(1,), default_value=None, dtype=_dtypes.float32,
                   normalizer_fn=None):
    """A dense column of the feature's values (float32), `shape` per example."""
    shape = fc_utils.check_shape(shape, key)
    dtype = _dtypes.as_dtype(dtype)
    if not (dtype.is_integer or dtype.is_floating):
        raise ValueError(f"dtype must be convertible to float. dtype: {dtype}, key: {key}")
    default_value = fc_utils.check_default_value(shape, default_value, dtype, key)
    if normalizer_fn is not None and not callable(normalizer_fn):
        raise TypeError(f"normalizer_fn must be a callable. Given: {normalizer_fn}")
    fc_utils.assert_key_is_string(key)
    return NumericColumn(key, shape=shape, default_value=default_value, dtype=dtype,
                         normalizer_fn=normalizer_fn)


def bucketized_column(source_column, boundaries):
    """A numeric column's values as bucket ids: buckets (-inf, b0), [b0, b1), ...,
    [b_last, inf)."""
    if not isinstance(source_column, NumericColumn):
        raise ValueError("source_column must be a column generated with numeric_column(). "
                         f"Given: {source_column}")
    if len(source_column.shape) > 1:
        raise ValueError(f"source_column must be one-dimensional column. Given: "
                         f"{source_column}")
    if not boundaries or not isinstance(boundaries, (list, tuple)):
        raise ValueError("boundaries must be a sorted list.")
    for i in range(len(boundaries) - 1):
        if boundaries[i] >= boundaries[i + 1]:
            raise ValueError("boundaries must be a sorted list.")
    return BucketizedColumn(source_column, tuple(boundaries))


def _check_embedding_args(dimension, ckpt_to_load_from, tensor_name_in_ckpt):
    if dimension is None or dimension < 1:
        raise ValueError(f"Invalid dimension {dimension}.")
    if (ckpt_to_load_from is None) != (tensor_name_in_ckpt is None):
        raise ValueError("Must specify both `ckpt_to_load_from` and `tensor_name_in_ckpt` or "
                         "none of them.")


def embedding_column(categorical_column, dimension, combiner="mean", initializer=None,
                     ckpt_to_load_from=None, tensor_name_in_ckpt=None, max_norm=None,
                     trainable=True):
    """A dense column of `dimension`-sized embeddings of a categorical column's ids,
    combined per example by `combiner`; the variable is `embedding_weights`, initialized
    truncated-normal with stddev 1/sqrt(dimension) unless `initializer` is given."""
    _check_embedding_args(dimension, ckpt_to_load_from, tensor_name_in_ckpt)
    if initializer is not None and not callable(initializer):
        raise ValueError("initializer must be callable if specified. Embedding of "
                         f"column_name: {categorical_column.name}")
    if initializer is None:
        initializer = init_ops.truncated_normal_initializer(mean=0.0,
                                                            stddev=1 / math.sqrt(dimension))
    return EmbeddingColumn(
        categorical_column=categorical_column, dimension=dimension, combiner=combiner,
        initializer=initializer, ckpt_to_load_from=ckpt_to_load_from,
        tensor_name_in_ckpt=tensor_name_in_ckpt, max_norm=max_norm, trainable=trainable)


def _unwrap(column):
    while isinstance(column, (WeightedCategoricalColumn, SequenceCategoricalColumn)):
        column = column.categorical_column
    return column


def shared_embedding_columns(categorical_columns, dimension, combiner="mean", initializer=None,
                             shared_embedding_collection_name=None, ckpt_to_load_from=None,
                             tensor_name_in_ckpt=None, max_norm=None, trainable=True):
    """Embedding columns, one per categorical column, sharing one `embedding_weights`
    variable (the columns must be of one kind with one number of buckets)."""
    _check_embedding_args(dimension, ckpt_to_load_from, tensor_name_in_ckpt)
    if initializer is not None and not callable(initializer):
        raise ValueError("initializer must be callable if specified.")
    if initializer is None:
        initializer = init_ops.truncated_normal_initializer(mean=0.0,
                                                            stddev=1. / math.sqrt(dimension))
    # Sorted, so the default collection name does not depend on the columns' order.
    sorted_columns = sorted(categorical_columns, key=lambda c: c.name)
    c0 = sorted_columns[0]
    if not isinstance(c0, _CategoricalColumn):
        raise ValueError("All categorical_columns must be subclasses of _CategoricalColumn. "
                         f"Given: {c0}, of type: {type(c0)}")
    num_buckets = c0._num_buckets
    c0 = _unwrap(c0)
    for c in sorted_columns[1:]:
        c = _unwrap(c)
        if not isinstance(c, type(c0)):
            raise ValueError(
                "To use shared_embedding_column, all categorical_columns must have the same "
                "type, or be weighted_categorical_column or sequence column of the same "
                f"type. Given column: {c0} of type: {type(c0)} does not match given column: "
                f"{c} of type: {type(c)}")
        if num_buckets != c._num_buckets:
            raise ValueError(
                "To use shared_embedding_column, all categorical_columns must have the same "
                f"number of buckets. Given column: {c0} with buckets: {num_buckets} does  "
                f"not match column: {c} with buckets: {c._num_buckets}")
    if not shared_embedding_collection_name:
        shared_embedding_collection_name = "_".join(c.name for c in sorted_columns)
        shared_embedding_collection_name += "_shared_embedding"
    return [_SharedEmbeddingColumn(
        categorical_column=column, initializer=initializer, dimension=dimension,
        combiner=combiner, shared_embedding_collection_name=shared_embedding_collection_name,
        ckpt_to_load_from=ckpt_to_load_from, tensor_name_in_ckpt=tensor_name_in_ckpt,
        max_norm=max_norm, trainable=trainable) for column in categorical_columns]


def indicator_column(categorical_column):
    """A dense multi-hot column: per example, the count of each id (or its weight sum)."""
    if not isinstance(categorical_column, (CategoricalColumn, _CategoricalColumn)):
        raise ValueError("Unsupported input type. Input must be a CategoricalColumn. "
                         f"Given: {categorical_column}")
    return IndicatorColumn(categorical_column)
