"""Categorical columns: sparse int64 ids from hashing, vocabularies, identity, crosses.

Each column turns its raw feature (a SparseTensor, or a dense Tensor whose -1 / ''
cells count as missing) into a SparseTensor of ids in [0, num_buckets):
- hash buckets: StringToHashBucketFast (FarmHash Fingerprint64 % size) of the strings,
  integers first through AsString, as TF does;
- vocabularies: TF's index tables (`index_table_from_tensor` / `_from_file`), out of
  vocabulary values to `default_value` or to `num_oov_buckets` hash buckets;
- identity: the integer values, checked (or replaced by `default_value`) when out of range;
- crosses: SparseCrossHashed (FingerprintCat64 of the values' fingerprints, % size).
The string hashing and table lookups are host ops; everything downstream is compiled.
"""

from __future__ import annotations

import collections

import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.sparse_tensor import (SparseTensor,
                                                      convert_to_tensor_or_sparse_tensor)
from tensorflux._src.feature_column import utils as fc_utils
from tensorflux._src.feature_column.utils import (CategoricalColumn, FeatureColumn,
                                                   IdWeightPair, _CategoricalColumn,
                                                   _FeatureColumn, _SequenceCategoricalColumn)
from tensorflux._src.ops.array import array_ops as A
from tensorflux._src.ops.array import gather_ops as G
from tensorflux._src.ops.array import generator_ops as GEN
from tensorflux._src.ops.debug import check_ops
from tensorflux._src.ops.lookup.static_tables import (index_table_from_file,
                                                      index_table_from_tensor)
from tensorflux._src.ops.math import math_ops as M
from tensorflux._src.ops.math import reduce_ops as R
from tensorflux._src.ops.sparse.sparse_cross import sparse_cross_hashed
from tensorflux._src.ops.sparse.sparse_ops import sparse_reshape
from tensorflux._src.ops.strings.hash_ops import string_to_hash_bucket_fast
from tensorflux._src.ops.strings.parsing_ops import VarLenFeature
from tensorflux._src.ops.strings.string_ops import as_string
from tensorflux._src.platform import gfile, tf_logging

__all__ = [
    "categorical_column_with_hash_bucket", "categorical_column_with_vocabulary_file",
    "categorical_column_with_vocabulary_list", "categorical_column_with_identity",
    "weighted_categorical_column", "crossed_column",
]


class ColumnTuple:
    """Columns are namedtuples (hashable, compared by value); two columns of different
    kinds are never equal, even with equal fields."""

    __slots__ = ()

    def __eq__(self, other):
        return type(self) is type(other) and tuple.__eq__(self, other)

    def __ne__(self, other):
        return not self == other

    def __hash__(self):
        return hash((type(self).__name__,) + tuple(self))


class KeyedColumn:
    """The protocol methods of a column read from one raw feature, `key`: it is its own
    name and parent, and its transformation is `_transform_input_tensor` of the raw
    tensor."""

    __slots__ = ()

    @property
    def _is_v2_column(self):
        return True

    @property
    def name(self):
        return self.key

    @property
    def parents(self):
        return [self.key]

    @property
    def _parse_example_spec(self):
        return self.parse_example_spec

    def transform_feature(self, transformation_cache, state_manager):
        return self._transform_input_tensor(transformation_cache.get(self.key, state_manager))

    def _transform_feature(self, inputs):
        return self._transform_input_tensor(inputs.get(self.key))


class OnCategoricalColumn:
    """The protocol methods of a column built on `categorical_column`: v2 when that column
    is, its parent, parsing what it parses."""

    __slots__ = ()

    @property
    def _is_v2_column(self):
        return (isinstance(self.categorical_column, FeatureColumn)
                and self.categorical_column._is_v2_column)

    @property
    def parents(self):
        return [self.categorical_column]

    @property
    def parse_example_spec(self):
        return self.categorical_column.parse_example_spec

    @property
    def _parse_example_spec(self):
        return self.categorical_column._parse_example_spec


class UnweightedIdsColumn:
    """The protocol methods of a categorical column whose ids are its transformed tensor,
    without weights."""

    __slots__ = ()

    @property
    def _num_buckets(self):
        return self.num_buckets

    def get_sparse_tensors(self, transformation_cache, state_manager):
        return IdWeightPair(transformation_cache.get(self, state_manager), None)

    def _get_sparse_tensors(self, inputs, weight_collections=None, trainable=None):
        del weight_collections, trainable
        return IdWeightPair(inputs.get(self), None)


def cast_sparse(sp, dtype, name=None):
    """A SparseTensor with its values cast to `dtype`."""
    values = sp.values if sp.dtype == dtype else M.cast(sp.values, dtype, name=name)
    return SparseTensor(sp.indices, values, sp.dense_shape)


def _check_input_dtype(key, column_dtype, input_dtype):
    if column_dtype.is_integer != input_dtype.is_integer:
        raise ValueError("Column dtype and SparseTensors dtype must be compatible. "
                         f"key: {key}, column dtype: {column_dtype}, tensor dtype: "
                         f"{input_dtype}")
    fc_utils.assert_string_or_int(input_dtype, prefix=f"column_name: {key} input_tensor")


class _SimpleCategorical(ColumnTuple, KeyedColumn, UnweightedIdsColumn, CategoricalColumn,
                         _CategoricalColumn):
    """A categorical column read from one raw feature (`key`), its ids being the
    transformed tensor."""

    __slots__ = ()

    @property
    def parse_example_spec(self):
        return {self.key: VarLenFeature(self.dtype)}

    # Raw values become sparse (their missing cells dropped) before the lookups.
    def transform_feature(self, transformation_cache, state_manager):
        return self._transform_input_tensor(
            fc_utils.to_sparse_input_and_drop_ignore_values(
                transformation_cache.get(self.key, state_manager)), state_manager)

    def _transform_feature(self, inputs):
        return self._transform_input_tensor(
            fc_utils.to_sparse_input_and_drop_ignore_values(inputs.get(self.key)))


class HashedCategoricalColumn(
        _SimpleCategorical,
        collections.namedtuple("HashedCategoricalColumn", ("key", "hash_bucket_size", "dtype"))):
    """See `categorical_column_with_hash_bucket`."""

    @property
    def num_buckets(self):
        return self.hash_bucket_size

    def _transform_input_tensor(self, input_tensor, state_manager=None):
        if not isinstance(input_tensor, SparseTensor):
            raise ValueError("SparseColumn input must be a SparseTensor.")
        fc_utils.assert_string_or_int(input_tensor.dtype,
                                      prefix=f"column_name: {self.key} input_tensor")
        if self.dtype.is_integer != input_tensor.dtype.is_integer:
            raise ValueError("Column dtype and SparseTensors dtype must be compatible. "
                             f"key: {self.key}, column dtype: {self.dtype}, tensor dtype: "
                             f"{input_tensor.dtype}")
        values = input_tensor.values
        if self.dtype != _dtypes.string:
            values = as_string(values)  # integers hash as their decimal text, as in TF
        ids = string_to_hash_bucket_fast(values, self.hash_bucket_size, name="lookup")
        return SparseTensor(input_tensor.indices, ids, input_tensor.dense_shape)


def _lookup_with(column, input_tensor, state_manager, make_table):
    """The ids of a vocabulary column: integer keys as int64, through the column's table
    (one per state manager when there is one, as TF's v2 columns keep them)."""
    _check_input_dtype(column.key, column.dtype, input_tensor.dtype)
    key_dtype = column.dtype
    if input_tensor.dtype.is_integer:
        key_dtype = _dtypes.int64  # TF's index tables take 64-bit integer keys
        input_tensor = cast_sparse(input_tensor, _dtypes.int64)
    name = f"{column.key}_lookup"
    if state_manager is not None and state_manager.has_resource(column, name):
        table = state_manager.get_resource(column, name)
    else:
        table = make_table(key_dtype, name)
        if state_manager is not None:
            state_manager.add_resource(column, name, table)
    return table.lookup(input_tensor)


class VocabularyFileCategoricalColumn(
        _SimpleCategorical,
        collections.namedtuple("VocabularyFileCategoricalColumn", (
            "key", "vocabulary_file", "vocabulary_size", "num_oov_buckets", "dtype",
            "default_value"))):
    """See `categorical_column_with_vocabulary_file`."""

    @property
    def num_buckets(self):
        return self.vocabulary_size + self.num_oov_buckets

    def _transform_input_tensor(self, input_tensor, state_manager=None):
        return _lookup_with(self, input_tensor, state_manager, lambda key_dtype, name:
                            index_table_from_file(
                                vocabulary_file=self.vocabulary_file,
                                num_oov_buckets=self.num_oov_buckets,
                                vocab_size=self.vocabulary_size,
                                default_value=self.default_value, key_dtype=key_dtype,
                                name=name))


class VocabularyListCategoricalColumn(
        _SimpleCategorical,
        collections.namedtuple("VocabularyListCategoricalColumn", (
            "key", "vocabulary_list", "dtype", "default_value", "num_oov_buckets"))):
    """See `categorical_column_with_vocabulary_list`."""

    @property
    def num_buckets(self):
        return len(self.vocabulary_list) + self.num_oov_buckets

    def _transform_input_tensor(self, input_tensor, state_manager=None):
        return _lookup_with(self, input_tensor, state_manager, lambda key_dtype, name:
                            index_table_from_tensor(
                                vocabulary_list=tuple(self.vocabulary_list),
                                default_value=self.default_value,
                                num_oov_buckets=self.num_oov_buckets, dtype=key_dtype,
                                name=name))


class IdentityCategoricalColumn(
        _SimpleCategorical,
        collections.namedtuple("IdentityCategoricalColumn",
                               ("key", "number_buckets", "default_value"))):
    """See `categorical_column_with_identity`."""

    @property
    def parse_example_spec(self):
        return {self.key: VarLenFeature(_dtypes.int64)}

    @property
    def num_buckets(self):
        return self.number_buckets

    def _transform_input_tensor(self, input_tensor, state_manager=None):
        if not input_tensor.dtype.is_integer:
            raise ValueError(f"Invalid input, not integer. key: {self.key} dtype: "
                             f"{input_tensor.dtype}")
        values = M.cast(input_tensor.values, _dtypes.int64, name="values")
        num_buckets = M.cast(self.num_buckets, _dtypes.int64, name="num_buckets")
        zero = M.cast(0, _dtypes.int64, name="zero")
        if self.default_value is None:
            # Out-of-range values fail the run (TF 1.15's asserts).
            assert_less = check_ops.assert_less(values, num_buckets,
                                                data=(values, num_buckets),
                                                name="assert_less_than_num_buckets")
            assert_greater = check_ops.assert_greater_equal(values, zero, data=(values,),
                                                            name="assert_greater_or_equal_0")
            with _graph.control_dependencies((assert_less, assert_greater)):
                values = A.identity(values)
        else:
            values = G.where(
                M.logical_or(M.less(values, zero), M.greater_equal(values, num_buckets),
                             name="out_of_range"),
                GEN.fill(dims=A.shape(values),
                         value=M.cast(self.default_value, _dtypes.int64),
                         name="default_values"),
                values)
        return SparseTensor(input_tensor.indices, values, input_tensor.dense_shape)


def _transform_weight_tensor(column, weight_tensor):
    if weight_tensor is None:
        raise ValueError(f"Missing weights {column.weight_feature_key}.")
    weight_tensor = convert_to_tensor_or_sparse_tensor(weight_tensor)
    if column.dtype != weight_tensor.dtype.base_dtype:
        raise ValueError(f"Bad dtype, expected {column.dtype}, but got {weight_tensor.dtype}.")
    if not isinstance(weight_tensor, SparseTensor):
        # Dense weights: their zeros are missing values.
        weight_tensor = fc_utils.to_sparse_input_and_drop_ignore_values(weight_tensor,
                                                                        ignore_value=0.0)
    if not weight_tensor.dtype.is_floating:
        weight_tensor = cast_sparse(weight_tensor, _dtypes.float32)
    return weight_tensor


class WeightedCategoricalColumn(
        ColumnTuple, OnCategoricalColumn, CategoricalColumn, _CategoricalColumn,
        collections.namedtuple("WeightedCategoricalColumn",
                               ("categorical_column", "weight_feature_key", "dtype"))):
    """See `weighted_categorical_column`."""

    @property
    def name(self):
        return f"{self.categorical_column.name}_weighted_by_{self.weight_feature_key}"

    @property
    def parents(self):
        return [self.categorical_column, self.weight_feature_key]

    def _with_weights(self, config):
        if self.weight_feature_key in config:
            raise ValueError(f"Parse config {config[self.weight_feature_key]} already exists "
                             f"for {self.weight_feature_key}.")
        config[self.weight_feature_key] = VarLenFeature(self.dtype)
        return config

    @property
    def parse_example_spec(self):
        return self._with_weights(dict(self.categorical_column.parse_example_spec))

    @property
    def _parse_example_spec(self):
        return self._with_weights(dict(self.categorical_column._parse_example_spec))

    @property
    def num_buckets(self):
        return self.categorical_column.num_buckets

    @property
    def _num_buckets(self):
        return self.categorical_column._num_buckets

    def transform_feature(self, transformation_cache, state_manager):
        weights = _transform_weight_tensor(
            self, transformation_cache.get(self.weight_feature_key, state_manager))
        ids = fc_utils.to_sparse_input_and_drop_ignore_values(
            transformation_cache.get(self.categorical_column, state_manager))
        return (ids, weights)

    def _transform_feature(self, inputs):
        weights = _transform_weight_tensor(self, inputs.get(self.weight_feature_key))
        return (inputs.get(self.categorical_column), weights)

    def get_sparse_tensors(self, transformation_cache, state_manager):
        return IdWeightPair(*transformation_cache.get(self, state_manager))

    def _get_sparse_tensors(self, inputs, weight_collections=None, trainable=None):
        del weight_collections, trainable
        return IdWeightPair(*inputs.get(self))


def _collect_leaf_level_keys(cross):
    keys = []
    for key in cross.keys:
        if isinstance(key, CrossedColumn):
            keys.extend(_collect_leaf_level_keys(key))
        else:
            keys.append(key)
    return keys


class CrossedColumn(
        ColumnTuple, UnweightedIdsColumn, CategoricalColumn, _CategoricalColumn,
        collections.namedtuple("CrossedColumn", ("keys", "hash_bucket_size", "hash_key"))):
    """See `crossed_column`."""

    @property
    def _is_v2_column(self):
        return all(isinstance(k, str) or (isinstance(k, FeatureColumn) and k._is_v2_column)
                   for k in _collect_leaf_level_keys(self))

    @property
    def name(self):
        names = [k if isinstance(k, str) else k.name for k in _collect_leaf_level_keys(self)]
        return "_X_".join(sorted(names))

    @property
    def parents(self):
        return list(self.keys)

    @property
    def parse_example_spec(self):
        config = {}
        for key in self.keys:
            if isinstance(key, FeatureColumn):
                config.update(key.parse_example_spec)
            elif isinstance(key, _FeatureColumn):
                config.update(key._parse_example_spec)
            else:  # a raw string feature
                config.update({key: VarLenFeature(_dtypes.string)})
        return config

    @property
    def _parse_example_spec(self):
        return self.parse_example_spec

    @property
    def num_buckets(self):
        return self.hash_bucket_size

    def _cross(self, raw, id_pair):
        tensors = []
        for key in _collect_leaf_level_keys(self):
            if isinstance(key, str):
                tensors.append(raw(key))
            elif isinstance(key, (CategoricalColumn, _CategoricalColumn)):
                pair = id_pair(key)
                if pair.weight_tensor is not None:
                    raise ValueError("crossed_column does not support weight_tensor, but the "
                                     "given column populates weight_tensor. Given column: "
                                     f"{key.name}")
                tensors.append(pair.id_tensor)
            else:
                raise ValueError(f"Unsupported column type. Given: {key}")
        return sparse_cross_hashed(inputs=tensors, num_buckets=self.hash_bucket_size,
                                   hash_key=self.hash_key)

    def transform_feature(self, transformation_cache, state_manager):
        def id_pair(column):
            if isinstance(column, CategoricalColumn):
                return column.get_sparse_tensors(transformation_cache, state_manager)
            raise ValueError(f"Unsupported column type. Given: {column}")
        return self._cross(lambda k: transformation_cache.get(k, state_manager), id_pair)

    def _transform_feature(self, inputs):
        return self._cross(inputs.get, lambda column: column._get_sparse_tensors(inputs))


class SequenceCategoricalColumn(
        ColumnTuple, OnCategoricalColumn, CategoricalColumn, _SequenceCategoricalColumn,
        collections.namedtuple("SequenceCategoricalColumn", ("categorical_column",))):
    """A categorical column whose ids are sequences: its id SparseTensor gets a third
    dimension so an embedding lookup keeps one embedding per time step."""

    @property
    def name(self):
        return self.categorical_column.name

    @property
    def num_buckets(self):
        return self.categorical_column.num_buckets

    @property
    def _num_buckets(self):
        return self.categorical_column._num_buckets

    def transform_feature(self, transformation_cache, state_manager):
        return self.categorical_column.transform_feature(transformation_cache, state_manager)

    def _transform_feature(self, inputs):
        return self.categorical_column._transform_feature(inputs)

    @staticmethod
    def _to_3d(pair):
        # The third dimension is computed, not -1: sequences may be empty at run time.
        shape = fc_utils.shape(pair.id_tensor)
        target = [shape[0], shape[1], R.reduce_prod(shape[2:])]
        ids = sparse_reshape(pair.id_tensor, target)
        weights = pair.weight_tensor
        if weights is not None:
            weights = sparse_reshape(weights, target)
        return IdWeightPair(ids, weights)

    def get_sparse_tensors(self, transformation_cache, state_manager):
        return self._to_3d(self.categorical_column.get_sparse_tensors(transformation_cache,
                                                                      state_manager))

    def _get_sparse_tensors(self, inputs, weight_collections=None, trainable=None):
        return self._to_3d(self.categorical_column._get_sparse_tensors(inputs))


# ---------------------------------------------------------------------------------------
# Constructors (tf.feature_column.*), with TF 1.15's checks and messages.

def categorical_column_with_hash_bucket(key, hash_bucket_size, dtype=_dtypes.string):
    """A categorical column of `Fingerprint64(value) % hash_bucket_size` ids (integers
    hashed as their decimal text)."""
    if hash_bucket_size is None:
        raise ValueError(f"hash_bucket_size must be set. key: {key}")
    if hash_bucket_size < 1:
        raise ValueError("hash_bucket_size must be at least 1. "
                         f"hash_bucket_size: {hash_bucket_size}, key: {key}")
    fc_utils.assert_key_is_string(key)
    fc_utils.assert_string_or_int(dtype, prefix=f"column_name: {key}")
    return HashedCategoricalColumn(key, hash_bucket_size, dtype)


def categorical_column_with_vocabulary_file(key, vocabulary_file, vocabulary_size=None,
                                            num_oov_buckets=0, default_value=None,
                                            dtype=_dtypes.string):
    """A categorical column of line numbers in `vocabulary_file`; other values get
    `default_value` (-1: dropped) or one of `num_oov_buckets` hash buckets."""
    if not vocabulary_file:
        raise ValueError(f"Missing vocabulary_file in {key}.")
    if vocabulary_size is None:
        if not gfile.file_exists_v2(vocabulary_file):
            raise ValueError(f"vocabulary_file in {key} does not exist.")
        with gfile.GFile(vocabulary_file, mode="rb") as f:
            vocabulary_size = sum(1 for _ in f)
        tf_logging.info("vocabulary_size = %d in %s is inferred from the number of elements "
                        "in the vocabulary_file %s.", vocabulary_size, key, vocabulary_file)
    # The size is not needed by the lookup, but num_buckets needs it.
    if vocabulary_size < 1:
        raise ValueError(f"Invalid vocabulary_size in {key}.")
    if num_oov_buckets:
        if default_value is not None:
            raise ValueError(f"Can't specify both num_oov_buckets and default_value in {key}.")
        if num_oov_buckets < 0:
            raise ValueError(f"Invalid num_oov_buckets {num_oov_buckets} in {key}.")
    fc_utils.assert_string_or_int(dtype, prefix=f"column_name: {key}")
    fc_utils.assert_key_is_string(key)
    return VocabularyFileCategoricalColumn(
        key=key, vocabulary_file=vocabulary_file, vocabulary_size=vocabulary_size,
        num_oov_buckets=0 if num_oov_buckets is None else num_oov_buckets,
        default_value=-1 if default_value is None else default_value, dtype=dtype)


def _vocabulary_dtype(vocabulary_list):
    # numpy infers the vocabulary's dtype, as TF does.
    kind = np.array(vocabulary_list).dtype
    if kind.kind in "USO":
        return _dtypes.string
    return _dtypes.as_dtype(kind)


def categorical_column_with_vocabulary_list(key, vocabulary_list, dtype=None, default_value=-1,
                                            num_oov_buckets=0):
    """A categorical column of positions in `vocabulary_list`; other values get
    `default_value` (-1: dropped) or one of `num_oov_buckets` hash buckets."""
    if vocabulary_list is None or len(vocabulary_list) < 1:
        raise ValueError(f"vocabulary_list {vocabulary_list} must be non-empty, "
                         f"column_name: {key}")
    if len(set(vocabulary_list)) != len(vocabulary_list):
        raise ValueError(f"Duplicate keys in vocabulary_list {vocabulary_list}, "
                         f"column_name: {key}")
    vocabulary_dtype = _vocabulary_dtype(vocabulary_list)
    if num_oov_buckets:
        if default_value != -1:
            raise ValueError(f"Can't specify both num_oov_buckets and default_value in {key}.")
        if num_oov_buckets < 0:
            raise ValueError(f"Invalid num_oov_buckets {num_oov_buckets} in {key}.")
    fc_utils.assert_string_or_int(vocabulary_dtype,
                                  prefix=f"column_name: {key} vocabulary")
    if dtype is None:
        dtype = vocabulary_dtype
    elif dtype.is_integer != vocabulary_dtype.is_integer:
        raise ValueError(f"dtype {dtype} and vocabulary dtype {vocabulary_dtype} do not "
                         f"match, column_name: {key}")
    fc_utils.assert_string_or_int(dtype, prefix=f"column_name: {key}")
    fc_utils.assert_key_is_string(key)
    return VocabularyListCategoricalColumn(
        key=key, vocabulary_list=tuple(vocabulary_list), dtype=dtype,
        default_value=default_value, num_oov_buckets=num_oov_buckets)


def categorical_column_with_identity(key, num_buckets, default_value=None):
    """A categorical column whose ids are the integer values themselves, in
    [0, num_buckets); others fail the run, or become `default_value` when given."""
    if num_buckets < 1:
        raise ValueError(f"num_buckets {num_buckets} < 1, column_name {key}")
    if default_value is not None and (default_value < 0 or default_value >= num_buckets):
        raise ValueError(f"default_value {default_value} not in range [0, {num_buckets}), "
                         f"column_name {key}")
    fc_utils.assert_key_is_string(key)
    return IdentityCategoricalColumn(key=key, number_buckets=num_buckets,
                                     default_value=default_value)


def weighted_categorical_column(categorical_column, weight_feature_key, dtype=_dtypes.float32):
    """`categorical_column`'s ids weighted by the values of feature `weight_feature_key`
    (same indices)."""
    if dtype is None or not (dtype.is_integer or dtype.is_floating):
        raise ValueError(f"dtype {dtype} is not convertible to float.")
    return WeightedCategoricalColumn(categorical_column=categorical_column,
                                     weight_feature_key=weight_feature_key, dtype=dtype)


def crossed_column(keys, hash_bucket_size, hash_key=None):
    """The hashed cross of string features and categorical columns:
    FingerprintCat64 of the crossed values' fingerprints % `hash_bucket_size`."""
    if not hash_bucket_size or hash_bucket_size < 1:
        raise ValueError(f"hash_bucket_size must be > 1. hash_bucket_size: {hash_bucket_size}")
    if not keys or len(keys) < 2:
        raise ValueError(f"keys must be a list with length > 1. Given: {keys}")
    for key in keys:
        if not isinstance(key, (str, CategoricalColumn, _CategoricalColumn)):
            raise ValueError("Unsupported key type. All keys must be either string, or "
                             "categorical column except HashedCategoricalColumn. "
                             f"Given: {key}")
        if isinstance(key, HashedCategoricalColumn):
            raise ValueError("categorical_column_with_hash_bucket is not supported for "
                             "crossing. Hashing before crossing will increase probability of "
                             f"collision. Instead, use the feature name as a string. Given: "
                             f"{key}")
    return CrossedColumn(keys=tuple(keys), hash_bucket_size=hash_bucket_size, hash_key=hash_key)
