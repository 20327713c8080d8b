"""`tf.metrics`: streaming metrics, each a (value, update_op) pair over local variables."""

from tensorflux._src.layers.metrics_classes import (  # noqa: F401
    mean_iou, precision_at_k, precision_at_top_k, recall_at_k, recall_at_top_k,
    sparse_precision_at_k, sparse_recall_at_k,
)
from tensorflux._src.layers.metrics_impl import (  # noqa: F401
    accuracy, auc, false_negatives, false_negatives_at_thresholds, false_positives,
    false_positives_at_thresholds, mean, mean_absolute_error, mean_cosine_distance,
    mean_per_class_accuracy, mean_relative_error, mean_squared_error, mean_tensor,
    percentage_below, precision,
    precision_at_thresholds, recall, recall_at_thresholds, root_mean_squared_error,
    true_negatives, true_negatives_at_thresholds, true_positives, true_positives_at_thresholds,
)
from tensorflux._src.layers.metrics_ranking import (  # noqa: F401
    average_precision_at_k, sensitivity_at_specificity, sparse_average_precision_at_k,
    specificity_at_sensitivity,
)
