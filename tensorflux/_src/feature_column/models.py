"""TF1's model functions over feature columns: `input_layer`, `linear_model`,
`make_parse_example_spec`, and the transformation helpers.

Both model functions read the columns sorted by name, each in its own variable scope
named after the column, as TF 1.15 does, so variables get TF's names:
`input_layer/<column>_embedding/embedding_weights`, `linear_model/<column>/weights`,
`linear_model/bias_weights`. Variables join GLOBAL_VARIABLES and MODEL_VARIABLES (and
`weight_collections`); `linear_model`'s weights start at zero. A categorical column in
`linear_model` is a multi-hot indicator in effect: its weighted sum is a
sparse embedding lookup (`tf.nn.safe_embedding_lookup_sparse`) of its ids in the (num_buckets, units) weights, combined
by `sparse_combiner`.
"""

from __future__ import annotations

import collections

from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.graph_keys import GraphKeys
from tensorflux._src.feature_column import utils as fc_utils
from tensorflux._src.feature_column.utils import (FeatureColumn, StateManager,
                                                   _CategoricalColumn, _DenseColumn,
                                                   _FeatureColumn, _LazyBuilder)
from tensorflux._src.ops.array import array_ops as A
from tensorflux._src.ops.linalg.linalg_ops import matmul
from tensorflux._src.ops.math import math_ops as M
from tensorflux._src.ops.nn.nn_ops import bias_add
from tensorflux._src.ops.sparse.embedding_ops import safe_embedding_lookup_sparse
from tensorflux._src.ops.sparse.sparse_ops import sparse_reshape
from tensorflux._src.ops.state import init_ops
from tensorflux._src.train import variable_scope as vs

__all__ = ["input_layer", "linear_model", "make_parse_example_spec"]


def _with_model_collections(weight_collections):
    weight_collections = list(weight_collections or [])
    for key in (GraphKeys.GLOBAL_VARIABLES, GraphKeys.MODEL_VARIABLES):
        if key not in weight_collections:
            weight_collections.append(key)
    return weight_collections


def _scope_variables():
    return _graph.get_collection(GraphKeys.GLOBAL_VARIABLES,
                                 scope=vs.get_variable_scope().name)


def _internal_input_layer(features, feature_columns, weight_collections=None, trainable=True,
                          cols_to_vars=None, scope=None, cols_to_output_tensors=None,
                          from_template=False):
    """`input_layer` in variable scope `scope` (default a new "input_layer"), or in the
    current scope when called from a template."""
    feature_columns = fc_utils.normalize_feature_columns(feature_columns)
    for column in feature_columns:
        if not isinstance(column, _DenseColumn):
            raise ValueError("Items of feature_columns must be a _DenseColumn. You can wrap a "
                             "categorical column with an embedding_column or "
                             f"indicator_column. Given: {column}")
    weight_collections = _with_model_collections(weight_collections)

    def build():
        builder = _LazyBuilder(features)
        outputs, ordered = [], []
        for column in sorted(feature_columns, key=lambda c: c.name):
            ordered.append(column)
            with vs.variable_scope(None, default_name=column._var_scope_name):
                tensor = column._get_dense_tensor(builder,
                                                  weight_collections=weight_collections,
                                                  trainable=trainable)
                num_elements = column._variable_shape.num_elements()
                batch_size = A.shape(tensor)[0]
                output = A.reshape(tensor, shape=(batch_size, num_elements))
                outputs.append(output)
                if cols_to_vars is not None:
                    # Columns without variables map to [].
                    cols_to_vars[column] = _scope_variables()
                if cols_to_output_tensors is not None:
                    cols_to_output_tensors[column] = output
        fc_utils.verify_static_batch_size_equality(outputs, ordered)
        return A.concat(outputs, 1)

    if from_template:
        return build()
    with vs.variable_scope(scope, default_name="input_layer", values=list(features.values())):
        return build()


def input_layer(features, feature_columns, weight_collections=None, trainable=True,
                cols_to_vars=None, cols_to_output_tensors=None):
    """The dense [batch, sum of the columns' sizes] float32 input of a model: each dense
    column's tensor, flattened per example, concatenated in the order of the columns'
    names. Embedding variables are created here (`cols_to_vars` receives them)."""
    return _internal_input_layer(features, feature_columns,
                                 weight_collections=weight_collections, trainable=trainable,
                                 cols_to_vars=cols_to_vars,
                                 cols_to_output_tensors=cols_to_output_tensors)


def _categorical_weighted_sum(column, builder, units, sparse_combiner, weight_collections,
                              trainable):
    pair = column._get_sparse_tensors(builder, weight_collections=weight_collections,
                                      trainable=trainable)
    ids = sparse_reshape(pair.id_tensor, [fc_utils.shape(pair.id_tensor)[0], -1])
    weights = pair.weight_tensor
    if weights is not None:
        weights = sparse_reshape(weights, [fc_utils.shape(weights)[0], -1])
    weight = vs.get_variable(name="weights", shape=(column._num_buckets, units),
                             initializer=init_ops.zeros_initializer(), trainable=trainable,
                             collections=weight_collections)
    # Multi-hot ids times the weights, as an embedding lookup.
    return safe_embedding_lookup_sparse(weight, ids, sparse_weights=weights,
                                        combiner=sparse_combiner, name="weighted_sum")


def _dense_weighted_sum(column, builder, units, weight_collections, trainable):
    tensor = column._get_dense_tensor(builder, weight_collections=weight_collections,
                                      trainable=trainable)
    num_elements = column._variable_shape.num_elements()
    tensor = A.reshape(tensor, shape=(A.shape(tensor)[0], num_elements))
    weight = vs.get_variable(name="weights", shape=[num_elements, units],
                             initializer=init_ops.zeros_initializer(), trainable=trainable,
                             collections=weight_collections)
    return matmul(tensor, weight, name="weighted_sum")


def linear_model(features, feature_columns, units=1, sparse_combiner="sum",
                 weight_collections=None, trainable=True, cols_to_vars=None):
    """A linear prediction [batch, units]: per column a weighted sum (categorical columns
    as multi-hot ids combined by `sparse_combiner`, dense ones by matmul), summed, plus
    `bias_weights`. Weights start at zero. `cols_to_vars` receives each column's
    variables and the bias under the key 'bias'."""
    feature_columns = fc_utils.normalize_feature_columns(feature_columns)
    weight_collections = _with_model_collections(weight_collections)
    for column in feature_columns:
        if not isinstance(column, (_DenseColumn, _CategoricalColumn)):
            raise ValueError("Items of feature_columns must be either a _DenseColumn or "
                             f"_CategoricalColumn. Given: {column}")
    with vs.variable_scope(None, default_name="linear_model", values=list(features.values())):
        builder = _LazyBuilder(features)
        weighted_sums, ordered, found = [], [], {}
        for column in sorted(feature_columns, key=lambda c: c.name):
            ordered.append(column)
            with vs.variable_scope(None, default_name=column._var_scope_name):
                if isinstance(column, _CategoricalColumn):
                    weighted_sums.append(_categorical_weighted_sum(
                        column, builder, units, sparse_combiner, weight_collections,
                        trainable))
                else:
                    weighted_sums.append(_dense_weighted_sum(
                        column, builder, units, weight_collections, trainable))
                found[column] = _scope_variables()
        fc_utils.verify_static_batch_size_equality(weighted_sums, ordered)
        predictions_no_bias = M.add_n(weighted_sums, name="weighted_sum_no_bias")
        bias = vs.get_variable("bias_weights", shape=[units],
                               initializer=init_ops.zeros_initializer(), trainable=trainable,
                               collections=weight_collections)
        found["bias"] = [bias]
        predictions = bias_add(predictions_no_bias, bias, name="weighted_sum")
    if cols_to_vars is not None:
        cols_to_vars.update(found)
    return predictions


def _transform_features(features, feature_columns):
    """{column: its transformed Tensor or SparseTensor} (TF1's `_transform_features`)."""
    feature_columns = fc_utils.normalize_feature_columns(feature_columns)
    outputs = {}
    with _graph.name_scope(None, default_name="transform_features",
                           values=list(features.values())):
        builder = _LazyBuilder(features)
        for column in sorted(feature_columns, key=lambda c: c.name):
            with _graph.name_scope(None, default_name=column.name):
                outputs[column] = builder.get(column)
    return outputs


def make_parse_example_spec(feature_columns):
    """The `tf.parse_example` features dict every column needs: {key: FixedLenFeature
    or VarLenFeature}; two columns asking different specs for one key is an error."""
    result = {}
    for column in feature_columns:
        if not isinstance(column, _FeatureColumn):
            raise ValueError(f"All feature_columns must be _FeatureColumn instances. "
                             f"Given: {column}")
        config = column._parse_example_spec
        for key, value in config.items():
            if key in result and value != result[key]:
                raise ValueError(f"feature_columns contain different parse_spec for key "
                                 f"{key}. Given {value} and {result[key]}")
        result.update(config)
    return result


def make_parse_example_spec_v2(feature_columns):
    """`make_parse_example_spec` for v2 columns (TF2's tf.feature_column version)."""
    result = {}
    for column in feature_columns:
        if not isinstance(column, FeatureColumn):
            raise ValueError(f"All feature_columns must be FeatureColumn instances. "
                             f"Given: {column}")
        for key, value in column.parse_example_spec.items():
            if key in result and value != result[key]:
                raise ValueError(f"feature_columns contain different parse_spec for key "
                                 f"{key}. Given {value} and {result[key]}")
        result.update(column.parse_example_spec)
    return result


class _StateManagerImpl(StateManager):
    """A state manager creating v2 columns' variables with `get_variable` in the current
    variable scope (one per column and name) and keeping their lookup tables."""

    def __init__(self, layer=None, trainable=True):
        self._layer = layer
        self._trainable = trainable
        self._cols_to_vars_map = collections.defaultdict(dict)
        self._cols_to_resources_map = collections.defaultdict(dict)

    def create_variable(self, feature_column, name, shape, dtype=None, trainable=True,
                        use_resource=True, initializer=None):
        if name in self._cols_to_vars_map[feature_column]:
            raise ValueError("Variable already exists.")
        var = vs.get_variable(name=name, shape=shape, dtype=dtype, initializer=initializer,
                              trainable=self._trainable and trainable)
        self._cols_to_vars_map[feature_column][name] = var
        return var

    def get_variable(self, feature_column, name):
        if name in self._cols_to_vars_map[feature_column]:
            return self._cols_to_vars_map[feature_column][name]
        raise ValueError("Variable does not exist.")

    def add_resource(self, feature_column, resource_name, resource):
        self._cols_to_resources_map[feature_column][resource_name] = resource

    def has_resource(self, feature_column, resource_name):
        return resource_name in self._cols_to_resources_map[feature_column]

    def get_resource(self, feature_column, resource_name):
        if (feature_column not in self._cols_to_resources_map
                or resource_name not in self._cols_to_resources_map[feature_column]):
            raise ValueError("Resource does not exist.")
        return self._cols_to_resources_map[feature_column][resource_name]


def _transform_features_v2(features, feature_columns, state_manager):
    """{column: its transformed tensor} through a FeatureTransformationCache."""
    feature_columns = fc_utils.normalize_feature_columns(feature_columns, FeatureColumn,
                                                         v2=True)
    outputs = {}
    with _graph.name_scope(None, default_name="transform_features",
                           values=list(features.values())):
        cache = fc_utils.FeatureTransformationCache(features)
        for column in feature_columns:
            with _graph.name_scope(None, default_name=column.name):
                outputs[column] = cache.get(column, state_manager)
    return outputs
