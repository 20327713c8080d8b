"""Pieces every canned estimator shares: feature checks, the partitioner TF picks from
the number of parameter servers, and the head for a classifier's n_classes."""

from tensorflux._src.estimator.canned import head as head_lib
from tensorflux._src.train import partitioned_variables


def check_features(features):
    if not isinstance(features, dict):
        raise ValueError("features should be a dictionary of `Tensor`s. "  # noqa: TRY004
                         f"Given type: {type(features)}")


def check_feature_columns(feature_columns, argument="feature_columns"):
    """A tuple of v1/v2 feature columns, with the feature_column library's own messages
    (TF's: 'Items of feature_columns must be a _FeatureColumn...')."""
    from tensorflux._src.feature_column import utils as fc_utils
    if feature_columns is None:
        raise ValueError(f"{argument} must be an iterable of feature columns; got None.")
    return tuple(fc_utils.normalize_feature_columns(feature_columns))


def default_partitioner(partitioner, config, min_slice_size=64 << 20):
    """TF partitions variables over the parameter servers of a cluster
    (min_max_variable_partitioner); a local run (no ps tasks) keeps one piece."""
    if partitioner is not None:
        return partitioner
    n_ps = config.num_ps_replicas if config is not None else 0
    if n_ps > 0:
        return partitioned_variables.min_max_variable_partitioner(max_partitions=n_ps,
                                               min_slice_size=min_slice_size)
    return None


def classifier_head(n_classes, weight_column, label_vocabulary, loss_reduction):
    return head_lib.binary_or_multi_class_head(n_classes, weight_column, label_vocabulary,
                                               loss_reduction)


def regression_head(label_dimension, weight_column, loss_reduction):
    return head_lib.RegressionHead(label_dimension=label_dimension,
                                   weight_column=weight_column,
                                   loss_reduction=loss_reduction)
