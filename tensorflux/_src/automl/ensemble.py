"""Greedy ensemble selection (Caruana, Niculescu-Mizil, Crew & Ksikes, ICML 2004).

Start from the empty ensemble; at each of `iterations` steps add (with replacement) the
model whose addition gives the best score of the averaged prediction; ties go to the
model listed first. The weights are the counts divided by the number of steps. Scores
are "higher is better" (metrics.score), computed on out-of-fold or validation rows.
"""

from __future__ import annotations

import numpy as np

from tensorflux._src.automl import metrics


def select(predictions, y, metric, iterations=25):
    """predictions: list of arrays (probabilities [n, k] or values [n]) -> weights."""
    if not predictions:
        raise ValueError("ensemble selection needs at least one model's predictions")
    counts = np.zeros(len(predictions), dtype=np.int64)
    total = np.zeros_like(np.asarray(predictions[0], dtype=np.float64))
    for step in range(1, iterations + 1):
        best_index, best_score = 0, -np.inf
        for index, prediction in enumerate(predictions):
            candidate = (total + prediction) / step
            value = metrics.score(metric, y, candidate)
            if value > best_score + 1e-12:
                best_index, best_score = index, value
        counts[best_index] += 1
        total = total + predictions[best_index]
    return counts / iterations


def combine(predictions, weights):
    """The weighted average of the models' predictions (models with weight 0 skipped)."""
    out = None
    for prediction, weight in zip(predictions, weights):
        if weight > 0:
            term = weight * np.asarray(prediction, dtype=np.float64)
            out = term if out is None else out + term
    return out
