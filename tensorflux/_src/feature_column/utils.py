"""The feature-column abstractions and what every column shares.

Two class families, as in TF 1.15: the v1 protocol (`_FeatureColumn`, `_DenseColumn`,
`_CategoricalColumn`; methods `_transform_feature(inputs)`, `_get_dense_tensor`,
`_get_sparse_tensors`, properties `_parse_example_spec`, `_variable_shape`,
`_num_buckets`), read through a `_LazyBuilder`, which `input_layer`, `linear_model` and
TF1's canned estimators call; and the v2 protocol (`FeatureColumn`, `DenseColumn`,
`CategoricalColumn`; `transform_feature(transformation_cache, state_manager)`, ...),
read through a `FeatureTransformationCache`. The columns `tf.feature_column` makes
implement both, as TF's do. Both caches transform each column once per model, so a
bucketized column used alone and in a cross is bucketized once.
"""

from __future__ import annotations

import abc
import collections
import collections.abc

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework import tensor_shape
from tensorflux._src.framework.sparse_tensor import (SparseTensor,
                                                      convert_to_tensor_or_sparse_tensor)
from tensorflux._src.ops.array import array_ops as A
from tensorflux._src.ops.array import gather_ops as G
from tensorflux._src.ops.array import generator_ops as GEN
from tensorflux._src.ops.control import control_flow_ops as CF
from tensorflux._src.ops.debug import check_ops
from tensorflux._src.ops.math import math_ops as M
from tensorflux._src.ops.math.segment_reductions import segment_max
from tensorflux._src.ops.sparse.sparse_ops import sparse_reshape
from tensorflux._src.platform import tf_logging

IdWeightPair = collections.namedtuple("IdWeightPair", ("id_tensor", "weight_tensor"))
TensorSequenceLengthPair = collections.namedtuple(
    "TensorSequenceLengthPair", ("dense_tensor", "sequence_length"))


# ---------------------------------------------------------------------------------------
# The v1 protocol (tensorflow/python/feature_column/feature_column.py).

class _FeatureColumn(metaclass=abc.ABCMeta):
    """A feature column: how one model input is read from a features dict."""

    @property
    @abc.abstractmethod
    def name(self):
        """The column's name, used for name and variable scopes."""

    @property
    def _var_scope_name(self):
        return self.name

    @abc.abstractmethod
    def _transform_feature(self, inputs):
        """The column's intermediate tensor, read from the `_LazyBuilder` `inputs`."""

    @property
    @abc.abstractmethod
    def _parse_example_spec(self):
        """{feature key: FixedLenFeature / VarLenFeature} for tf.parse_example."""

    def _reset_config(self):
        """Resets state some columns keep between models (none here)."""


class _DenseColumn(_FeatureColumn):
    """A column with a dense representation ([batch] + `_variable_shape`)."""

    @property
    @abc.abstractmethod
    def _variable_shape(self):
        """TensorShape of `_get_dense_tensor`'s result without the batch dimension."""

    @abc.abstractmethod
    def _get_dense_tensor(self, inputs, weight_collections=None, trainable=None):
        """The dense Tensor, creating the column's variables if it has any."""


class _CategoricalColumn(_FeatureColumn):
    """A column of sparse int64 ids in [0, `_num_buckets`), maybe with weights."""

    IdWeightPair = IdWeightPair

    @property
    @abc.abstractmethod
    def _num_buckets(self):
        """The number of distinct ids."""

    @abc.abstractmethod
    def _get_sparse_tensors(self, inputs, weight_collections=None, trainable=None):
        """An `IdWeightPair` of SparseTensors (weights None for all-ones)."""


class _SequenceDenseColumn(_FeatureColumn):
    """A column of dense sequences ([batch, time] + shape) with their lengths."""

    TensorSequenceLengthPair = TensorSequenceLengthPair

    @abc.abstractmethod
    def _get_sequence_dense_tensor(self, inputs, weight_collections=None, trainable=None):
        """A `TensorSequenceLengthPair`."""


class _SequenceCategoricalColumn(_CategoricalColumn):
    """Marks categorical columns whose ids are sequences (see sequence_columns.py)."""


# ---------------------------------------------------------------------------------------
# The v2 protocol (feature_column_v2.py).

class FeatureColumn(metaclass=abc.ABCMeta):
    """A feature column of the v2 protocol (transformation cache + state manager)."""

    @property
    @abc.abstractmethod
    def name(self):
        """The column's name."""

    def __lt__(self, other):
        # Sortable next to strings, as TF's are (by their text form).
        return str(self) < str(other)

    def __gt__(self, other):
        return str(self) > str(other)

    @abc.abstractmethod
    def transform_feature(self, transformation_cache, state_manager):
        """The column's intermediate tensor, read from the transformation cache."""

    @property
    @abc.abstractmethod
    def parse_example_spec(self):
        """{feature key: FixedLenFeature / VarLenFeature} for tf.io.parse_example."""

    def create_state(self, state_manager):
        """Creates the column's variables and resources through `state_manager`."""

    @property
    @abc.abstractmethod
    def _is_v2_column(self):
        """Whether every column this one reads is a v2 column."""

    @property
    @abc.abstractmethod
    def parents(self):
        """The raw feature keys and columns this column reads."""


class DenseColumn(FeatureColumn):
    """A v2 column with a dense representation."""

    @property
    @abc.abstractmethod
    def variable_shape(self):
        """TensorShape of `get_dense_tensor`'s result without the batch dimension."""

    @abc.abstractmethod
    def get_dense_tensor(self, transformation_cache, state_manager):
        """The dense Tensor."""


class CategoricalColumn(FeatureColumn):
    """A v2 column of sparse ids."""

    IdWeightPair = IdWeightPair

    @property
    @abc.abstractmethod
    def num_buckets(self):
        """The number of distinct ids."""

    @abc.abstractmethod
    def get_sparse_tensors(self, transformation_cache, state_manager):
        """An `IdWeightPair`."""


class SequenceDenseColumn(FeatureColumn):
    """A v2 column of dense sequences."""

    TensorSequenceLengthPair = TensorSequenceLengthPair

    @abc.abstractmethod
    def get_sequence_dense_tensor(self, transformation_cache, state_manager):
        """A `TensorSequenceLengthPair`."""


def is_feature_column_v2(feature_columns):
    """True when every column is a v2 column reading only v2 columns."""
    return all(isinstance(c, FeatureColumn) and c._is_v2_column for c in feature_columns)


class StateManager:
    """Creates and holds the variables and resources of v2 columns."""

    def create_variable(self, feature_column, name, shape, dtype=None, trainable=True,
                        use_resource=True, initializer=None):
        raise NotImplementedError("StateManager.create_variable")

    def add_variable(self, feature_column, var):
        raise NotImplementedError("StateManager.add_variable")

    def get_variable(self, feature_column, name):
        raise NotImplementedError("StateManager.get_var")

    def add_resource(self, feature_column, name, resource):
        raise NotImplementedError("StateManager.add_resource")

    def has_resource(self, feature_column, name):
        raise NotImplementedError("StateManager.has_resource")

    def get_resource(self, feature_column, name):
        raise NotImplementedError("StateManager.get_resource")


# ---------------------------------------------------------------------------------------
# The caches.

def shape(value):
    """The shape of a Tensor (int32) or SparseTensor (its int64 dense shape, which
    sparse_reshape takes as it is)."""
    if isinstance(value, SparseTensor):
        return value.dense_shape
    return A.shape(value)


def _expand_rank_1(key, feature):
    """A raw feature of rank 1 as [batch, 1]; rank 0 is refused, as TF does."""
    def expand(value):
        if isinstance(value, SparseTensor):
            return sparse_reshape(value, [shape(value)[0], 1])
        return A.expand_dims(value, -1)

    rank = feature.get_shape().ndims
    if rank is not None:
        if rank == 0:
            raise ValueError(f"Feature (key: {key}) cannot have rank 0. Given: {feature}")
        return feature if rank != 1 else expand(feature)
    message = f"Feature (key: {key}) cannot have rank 0. Given: {feature}"
    with _graph.control_dependencies([check_ops.assert_positive(A.rank(feature),
                                                                message=message)]):
        return CF.cond(M.equal(1, A.rank(feature)), lambda: expand(feature),
                       lambda: feature)


class _Cache:
    """What both caches share: raw features converted once, transformations once."""

    _column_type = None

    def __init__(self, features):
        self._features = features.copy()
        self._feature_tensors = {}

    def _lookup(self, key, transform):
        if key in self._feature_tensors:
            return self._feature_tensors[key]
        if key in self._features:
            tensor = _expand_rank_1(key, convert_to_tensor_or_sparse_tensor(self._features[key]))
            self._feature_tensors[key] = tensor
            return tensor
        if isinstance(key, str):
            raise ValueError(f"Feature {key} is not in features dictionary.")
        if not isinstance(key, self._column_type):
            raise TypeError(f'"key" must be either a "str" or "{self._column_type.__name__}". '
                            f"Provided: {key}")
        tf_logging.debug("Transforming feature_column %s.", key)
        transformed = transform(key)
        if transformed is None:
            raise ValueError(f"Column {key.name} is not supported.")
        self._feature_tensors[key] = transformed
        return transformed


class _LazyBuilder(_Cache):
    """TF1's cache of raw and transformed features, keyed by feature key or column."""

    _column_type = _FeatureColumn

    def get(self, key):
        return self._lookup(key, lambda column: column._transform_feature(self))


class FeatureTransformationCache(_Cache):
    """The v2 columns' cache of raw and transformed features."""

    _column_type = FeatureColumn

    def get(self, key, state_manager, training=None):
        def transform(column):
            try:
                return column.transform_feature(self, state_manager, training=training)
            except TypeError:
                return column.transform_feature(self, state_manager)
        return self._lookup(key, transform)


# ---------------------------------------------------------------------------------------
# Helpers the columns share (TF's fc_utils and feature_column.py helpers).

def to_sparse_input_and_drop_ignore_values(input_tensor, ignore_value=None):
    """A SparseTensor of `input_tensor`'s cells that differ from `ignore_value` ('' for
    strings, -1 for integers, 0 for floats by default); SparseTensors pass through."""
    input_tensor = convert_to_tensor_or_sparse_tensor(input_tensor)
    if isinstance(input_tensor, SparseTensor):
        return input_tensor
    with _graph.name_scope(None, "to_sparse_input", (input_tensor, ignore_value)):
        dtype = input_tensor.dtype
        if ignore_value is None:
            if dtype == _dtypes.string:
                ignore_value = ""
            elif dtype.is_integer:
                ignore_value = -1  # -1 marks a missing feature
            else:
                ignore_value = dtype.as_numpy_dtype()
        ignore_value = M.cast(ignore_value, dtype, name="ignore_value")
        indices = G.where(M.not_equal(input_tensor, ignore_value), name="indices")
        return SparseTensor(
            indices=indices, values=G.gather_nd(input_tensor, indices, name="values"),
            dense_shape=A.shape(input_tensor, out_type=_dtypes.int64, name="dense_shape"))


def normalize_feature_columns(feature_columns, column_type=_FeatureColumn, v2=False):
    """`feature_columns` as a list of columns, checked as TF does (non-empty, unique
    names); the v2 form is also sorted by name."""
    if isinstance(feature_columns, column_type):
        feature_columns = [feature_columns]
    if isinstance(feature_columns, collections.abc.Iterator):
        feature_columns = list(feature_columns)
    if isinstance(feature_columns, dict):
        raise ValueError("Expected feature_columns to be iterable, found dict.")
    kind = "FeatureColumn" if v2 else "_FeatureColumn"
    for column in feature_columns:
        if not isinstance(column, column_type):
            raise ValueError(f"Items of feature_columns must be a {kind}. "
                             f"Given (type {type(column)}): {column}.")
    if not feature_columns:
        raise ValueError("feature_columns must not be empty.")
    by_name = {}
    for column in feature_columns:
        if column.name in by_name:
            raise ValueError(
                f"Duplicate feature column name found for columns: {column} and "
                f"{by_name[column.name]}. This usually means that these columns refer to "
                "same base feature. Either one must be discarded or a duplicated but "
                "renamed item must be inserted in features dict.")
        by_name[column.name] = column
    return sorted(feature_columns, key=lambda c: c.name) if v2 else list(feature_columns)


def verify_static_batch_size_equality(tensors, columns):
    """Refuses static batch sizes (first dimensions) that differ between columns."""
    expected, first = None, None
    for i, tensor in enumerate(tensors):
        size = tensor.shape.dims[0] if tensor.shape.ndims else tensor_shape.Dimension(None)
        if size.value is None:
            continue
        if expected is None:
            expected, first = size, i
        elif not expected.is_compatible_with(size):
            raise ValueError(
                "Batch size (first dimension) of each feature must be same. Batch size of "
                f"columns ({columns[first].name}, {columns[i].name}): ({expected}, {size})")


def sequence_length_from_sparse_tensor(sp_tensor, num_elements=1):
    """Per example, 1 + the largest time index holding a value, in groups of
    `num_elements` (rounded up); 0 for rows without values."""
    with _graph.name_scope(None, "sequence_length") as scope:
        row_ids = sp_tensor.indices[:, 0]
        column_ids = sp_tensor.indices[:, 1] + GEN.ones_like(sp_tensor.indices[:, 1])
        seq_length = segment_max(column_ids, segment_ids=row_ids)
        seq_length = M.cast(M.ceil(seq_length / num_elements), _dtypes.int64)
        # Trailing rows without values have no segment: pad them with zeros.
        n_pad = M.cast(shape(sp_tensor)[:1], _dtypes.int32) - A.shape(seq_length)[:1]
        padding = GEN.zeros(n_pad, dtype=seq_length.dtype)
        return A.concat([seq_length, padding], axis=0, name=scope)


def _is_sequence(value):
    return isinstance(value, collections.abc.Sequence) and not isinstance(value, (str, bytes))


def check_shape(shape, key):
    """`shape` as a tuple of positive ints (an int is a 1-D shape)."""
    assert shape is not None
    if not _is_sequence(shape):
        shape = [shape]
    shape = tuple(shape)
    for dimension in shape:
        if not isinstance(dimension, int) or isinstance(dimension, bool):
            raise TypeError(f"shape dimensions must be integer. shape: {shape}, key: {key}")
        if dimension < 1:
            raise ValueError(f"shape dimensions must be greater than 0. shape: {shape}, "
                             f"key: {key}")
    return shape


def _create_tuple(shape, value):
    if shape:
        return tuple(_create_tuple(shape[1:], value) for _ in range(shape[0]))
    return value


def _as_tuple(value):
    return tuple(_as_tuple(v) for v in value) if _is_sequence(value) else value


def _compatible(default_value, shape):
    if _is_sequence(default_value) != bool(shape):
        return False
    if not shape:
        return True
    if len(default_value) != shape[0]:
        return False
    return all(_compatible(v, shape[1:]) for v in default_value)


def _flatten(value):
    if _is_sequence(value):
        return [x for v in value for x in _flatten(v)]
    return [value]


def check_default_value(shape, default_value, dtype, key):
    """`default_value` as nested tuples of `shape` (a scalar is repeated), checked
    against `shape` and `dtype` with TF's messages."""
    if default_value is None:
        return None
    if isinstance(default_value, int):
        return _create_tuple(shape, default_value)
    if isinstance(default_value, float) and dtype.is_floating:
        return _create_tuple(shape, default_value)
    if callable(getattr(default_value, "tolist", None)):  # numpy arrays
        default_value = default_value.tolist()
    if _is_sequence(default_value):
        if not _compatible(default_value, shape):
            raise ValueError("The shape of default_value must be equal to given shape. "
                             f"default_value: {default_value}, shape: {shape}, key: {key}")
        flat = _flatten(default_value)
        if all(isinstance(v, int) for v in flat):
            return _as_tuple(default_value)
        if any(isinstance(v, float) for v in flat) and dtype.is_floating:
            return _as_tuple(default_value)
    raise TypeError("default_value must be compatible with dtype. "
                    f"default_value: {default_value}, dtype: {dtype}, key: {key}")


def assert_string_or_int(dtype, prefix):
    if dtype != _dtypes.string and not dtype.is_integer:
        raise ValueError(f"{prefix} dtype must be string or integer. dtype: {dtype}.")


def assert_key_is_string(key):
    if not isinstance(key, str):
        raise ValueError(f"key must be a string. Got: type {type(key)}. Given key: {key}.")
