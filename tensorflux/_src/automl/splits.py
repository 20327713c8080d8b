"""Row splits: a stratified hold-out and stratified k folds (by class for
classification, by quantile bins of the target for regression), seeded."""

from __future__ import annotations

import numpy as np


def _strata(y, task):
    if task == "regression":
        bins = min(10, max(1, len(y) // 20))
        edges = np.quantile(y, np.linspace(0, 1, bins + 1)[1:-1])
        return np.searchsorted(edges, y, side="right")
    return np.asarray(y)


def kfold(y, task, k, seed):
    """[(train_idx, valid_idx)] * k; each row is in exactly one valid part."""
    rng = np.random.default_rng(seed)
    strata = _strata(y, task)
    fold_of = np.empty(len(y), dtype=np.int64)
    offset = 0
    for label in np.unique(strata):
        members = np.flatnonzero(strata == label)
        rng.shuffle(members)
        # consecutive assignment continuing across strata keeps the folds' sizes even
        fold_of[members] = (np.arange(len(members)) + offset) % k
        offset += len(members)
    rows = np.arange(len(y))
    return [(rows[fold_of != f], rows[fold_of == f]) for f in range(k)]


def holdout(y, task, fraction, seed):
    """(train_idx, test_idx): `fraction` of every stratum held out (at least 1 row of
    every class with 2+ rows)."""
    rng = np.random.default_rng(seed)
    strata = _strata(y, task)
    test = np.zeros(len(y), bool)
    for label in np.unique(strata):
        members = np.flatnonzero(strata == label)
        rng.shuffle(members)
        count = round(len(members) * fraction)
        if count == 0 and len(members) >= 2:
            count = 1
        test[members[:count]] = True
    return np.flatnonzero(~test), np.flatnonzero(test)
