"""Metrics in NumPy, on class indices / probabilities (classification) or values.

Keys (the contract's): accuracy, balanced_accuracy, log_loss, roc_auc, f1 (binary: of the
positive class, index 1; multiclass: macro), rmse, mae, r2. roc_auc for multiclass is the
macro average of one-vs-rest AUCs. `score(name, ...)` is "higher is better" for every
metric (losses negated), which is what the search and the ensemble maximize.
"""

from __future__ import annotations

import numpy as np

from tensorflux._src.automl.errors import DataError

CLASSIFICATION = ("accuracy", "balanced_accuracy", "log_loss", "roc_auc", "f1")
REGRESSION = ("rmse", "mae", "r2")
LOWER_IS_BETTER = {"log_loss", "rmse", "mae"}
DEFAULT = {"binary": "roc_auc", "multiclass": "log_loss", "regression": "rmse"}
_EPS = 1e-15


def check_metric(metric, task):
    if metric is None:
        return DEFAULT[task]
    allowed = REGRESSION if task == "regression" else CLASSIFICATION
    if metric not in allowed:
        raise DataError(f"metric {metric!r} does not apply to a {task} task; choose one of "
                        f"{', '.join(allowed)}")
    return metric


def accuracy(y, proba):
    return float(np.mean(np.argmax(proba, axis=1) == y))


def balanced_accuracy(y, proba):
    predicted = np.argmax(proba, axis=1)
    recalls = [np.mean(predicted[y == k] == k) for k in np.unique(y)]
    return float(np.mean(recalls))


def log_loss(y, proba):
    p = np.clip(proba, _EPS, 1.0)
    p = p / p.sum(axis=1, keepdims=True)
    return float(-np.mean(np.log(p[np.arange(len(y)), y])))


def binary_auc(positive, scores):
    """Mann-Whitney U / (n+ n-), ties counted half (average ranks)."""
    positive = np.asarray(positive, bool)
    n_pos, n_neg = positive.sum(), (~positive).sum()
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    order = np.argsort(scores, kind="mergesort")
    sorted_scores = np.asarray(scores)[order]
    ranks = np.empty(len(scores))
    # average ranks over ties
    _, first, counts = np.unique(sorted_scores, return_index=True, return_counts=True)
    average = first + (counts + 1) / 2.0
    ranks[order] = np.repeat(average, counts)
    return float((ranks[positive].sum() - n_pos * (n_pos + 1) / 2.0) / (n_pos * n_neg))


def roc_auc(y, proba):
    if proba.shape[1] == 2:
        return binary_auc(y == 1, proba[:, 1])
    aucs = [binary_auc(y == k, proba[:, k]) for k in range(proba.shape[1]) if (y == k).any()]
    return float(np.nanmean(aucs))


def _f1_of(y, predicted, k):
    tp = np.sum((predicted == k) & (y == k))
    fp = np.sum((predicted == k) & (y != k))
    fn = np.sum((predicted != k) & (y == k))
    return 0.0 if tp == 0 else float(2 * tp / (2 * tp + fp + fn))


def f1(y, proba):
    predicted = np.argmax(proba, axis=1)
    if proba.shape[1] == 2:
        return _f1_of(y, predicted, 1)
    return float(np.mean([_f1_of(y, predicted, k) for k in range(proba.shape[1])]))


def rmse(y, pred):
    return float(np.sqrt(np.mean((np.asarray(pred, float) - y) ** 2)))


def mae(y, pred):
    return float(np.mean(np.abs(np.asarray(pred, float) - y)))


def r2(y, pred):
    y = np.asarray(y, float)
    total = np.sum((y - y.mean()) ** 2)
    return float(1.0 - np.sum((y - pred) ** 2) / total) if total > 0 else float("nan")


FUNCTIONS = {"accuracy": accuracy, "balanced_accuracy": balanced_accuracy,
             "log_loss": log_loss, "roc_auc": roc_auc, "f1": f1,
             "rmse": rmse, "mae": mae, "r2": r2}


def compute(name, y, prediction):
    """The metric's natural value (losses as losses)."""
    return FUNCTIONS[name](y, prediction)


def score(name, y, prediction):
    """Higher is better: losses negated."""
    value = compute(name, y, prediction)
    return -value if name in LOWER_IS_BETTER else value


def all_metrics(task, y, prediction):
    names = REGRESSION if task == "regression" else CLASSIFICATION
    return {name: compute(name, y, prediction) for name in names}
