"""The time-budgeted search: train the portfolio's models on k folds (or on the train
part of a given validation split), score their out-of-fold predictions, then weight
them by ensemble selection on those same predictions.

Order: LightGBM first (fast, strong), then alternately a network and another LightGBM
configuration, then random configurations of both while time remains. A model starts
only when the time left (less a reserve for ensembling) looks enough for it: networks
need ~15 s at least (XLA compiles their step); the time a family took before is the
estimate for its next model. A model that reaches its deadline stops early (LightGBM at
the round, a network at the epoch) and is kept with what it learned.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from tensorflux._src.automl import ensemble, gbm, metrics, splits

NETWORK_MIN_SECONDS = 15.0


@dataclass
class Trained:
    name: str
    family: object
    folds: list
    val_prediction: np.ndarray
    val_score: float          # the metric's natural value
    fit_time_s: float
    pred_time_s: float
    extra: dict = field(default_factory=dict)


def _take(encoded, rows):
    return tuple(part[rows] for part in encoded)


def default_portfolio(seed):
    """(name, family, config) in the order they are tried; an endless iterator."""
    from tensorflux._src.automl import networks
    fixed_gbm, fixed_nn = list(gbm.PORTFOLIO), list(networks.PORTFOLIO)
    while fixed_gbm or fixed_nn:
        if fixed_gbm:
            yield (*fixed_gbm.pop(0), "lightgbm")
        if fixed_nn:
            yield (*fixed_nn.pop(0), "tensorflux")
    rng = np.random.default_rng(seed)
    for i in range(1, 10_000):
        yield f"LightGBM_r{i}", gbm.random_config(rng), "lightgbm"
        if i % 2 == 0:
            yield f"NeuralNet_r{i // 2}", networks.random_config(rng), "tensorflux"


def choose_folds(n_rows, n_features, time_limit):
    """5 folds where the table is small enough to train each model 5 times, else a
    single hold-out split (20%)."""
    cells = n_rows * max(1, n_features)
    if n_rows < 50:
        return 3
    if cells <= 2_000_000 or (cells <= 20_000_000 and time_limit >= 600):
        return 5
    return 1


def _make_family(family, config, context):
    if family == "lightgbm":
        return gbm.Family(config, context["task"], context["n_classes"], context["metric"],
                          context["n_dense"], seed=context["seed"])
    from tensorflux._src.automl import networks
    return networks.Family(config, context["task"], context["n_classes"],
                           context["metric"], context["cardinalities"], context["n_nn"],
                           seed=context["seed"])


def run(train, y, valid, y_valid, context, time_limit, board, portfolio=None,
        max_models=None):
    """[Trained], weights (array over them), evaluation rows' y, folds used."""
    start = time.monotonic()
    end = start + time_limit
    reserve = min(10.0, 0.05 * time_limit)
    task, metric = context["task"], context["metric"]
    if valid is None:
        folds = choose_folds(len(y), train[0].shape[1] + train[2].shape[1], time_limit)
        if folds > 1:
            parts = splits.kfold(y, task, folds, context["seed"])
            y_eval = y
        else:
            fit_rows, eval_rows = splits.holdout(y, task, 0.2, context["seed"])
            parts = [(fit_rows, eval_rows)]
            y_eval = y[eval_rows]
    else:
        folds = 1
        parts = None
        y_eval = y_valid
    board.start(len(y), len(context["columns"]), task, folds, time_limit)

    trained, spent, skipped = [], {}, set()
    candidates = portfolio if portfolio is not None else default_portfolio(context["seed"])
    for name, config, family_name in candidates:
        if max_models is not None and len(trained) >= max_models:
            break
        now = time.monotonic()
        left = end - reserve - now
        if trained and left <= 0.5:
            break
        need = spent.get(family_name, NETWORK_MIN_SECONDS if family_name == "tensorflux"
                         else 0.0)
        if family_name == "tensorflux":
            need = max(need, NETWORK_MIN_SECONDS)
        if trained and left < need:
            if family_name not in skipped:
                board.skipped(name, f"needs ~{need:.0f} s, {max(left, 0):.0f} s left")
            skipped.add(family_name)
            if family_name == "lightgbm" or len(skipped) == 2:
                break  # the fastest family no longer fits: nothing will
            continue
        # a model may use the time left, but no more than half of it while others wait
        budget = left if not trained else max(need * 1.5, 0.5 * left)
        budget = max(min(budget, left), 1.0)
        family = _make_family(family_name, config, context)
        model_start = time.monotonic()
        result = _train_folds(name, family, train, y, valid, y_valid, parts,
                              model_start + budget, len(y_eval))
        result.fit_time_s = time.monotonic() - model_start - result.pred_time_s
        result.val_score = metrics.compute(metric, y_eval, result.val_prediction)
        spent[family_name] = max(spent.get(family_name, 0.0),
                                 time.monotonic() - model_start)
        trained.append(result)
        board.model_done(name, result.val_score, result.fit_time_s)
    weights = ensemble.select([t.val_prediction for t in trained], y_eval, metric)
    return trained, weights, y_eval, folds


def _train_folds(name, family, train, y, valid, y_valid, parts, deadline, n_eval):
    fold_models, pred_time = [], 0.0
    if parts is None:
        model = family.fit(train, y, valid, y_valid, deadline)
        t0 = time.monotonic()
        prediction = family.predict(model, valid)
        pred_time = time.monotonic() - t0
        return Trained(name, family, [model], prediction, 0.0, 0.0, pred_time)
    prediction = None
    offset = 0
    start = time.monotonic()
    for index, (fit_rows, eval_rows) in enumerate(parts):
        # each fold gets an equal share of the model's remaining time
        share = (deadline - time.monotonic()) / (len(parts) - index)
        fold_deadline = time.monotonic() + max(share, 0.5)
        part_train, part_eval = _take(train, fit_rows), _take(train, eval_rows)
        model = family.fit(part_train, y[fit_rows], part_eval, y[eval_rows], fold_deadline)
        t0 = time.monotonic()
        fold_prediction = family.predict(model, part_eval)
        pred_time += time.monotonic() - t0
        if prediction is None:
            prediction = np.zeros((n_eval,) + fold_prediction.shape[1:])
        if len(parts) == 1:  # hold-out: the eval rows are the evaluation set, in order
            prediction[offset:offset + len(eval_rows)] = fold_prediction
        else:
            prediction[eval_rows] = fold_prediction
        fold_models.append(model)
    del start
    return Trained(name, family, fold_models, prediction, 0.0, 0.0, pred_time)
