"""Gradient-boosted trees from LightGBM, the family that carries most tables.

LightGBM reads the `dense` encoding (NaN = missing, trees need no scaling) plus the
categorical codes as native categorical features (code 0, missing, becomes NaN). Each
fold trains up to 10,000 rounds with early stopping on the fold's validation rows and
stops early at the search's deadline.

The portfolio starts with configurations known to work across tables (as AutoGluon's
and FLAML's defaults do), then samples random ones while time remains.
"""

from __future__ import annotations

import os
import time

import numpy as np

FAMILY = "lightgbm"
MAX_ROUNDS = 10000

PORTFOLIO = [
    ("LightGBM", {"learning_rate": 0.05, "num_leaves": 31, "min_data_in_leaf": 20,
                  "feature_fraction": 0.9}),
    ("LightGBMXT", {"learning_rate": 0.05, "num_leaves": 31, "min_data_in_leaf": 10,
                    "extra_trees": True, "feature_fraction": 0.9}),
    ("LightGBMSmall", {"learning_rate": 0.05, "num_leaves": 8, "min_data_in_leaf": 5,
                       "lambda_l2": 1.0, "feature_fraction": 0.7, "bagging_fraction": 0.8,
                       "bagging_freq": 1}),
    ("LightGBMLarge", {"learning_rate": 0.03, "num_leaves": 128, "min_data_in_leaf": 3,
                       "feature_fraction": 0.9}),
]


def random_config(rng):
    return {"learning_rate": float(np.exp(rng.uniform(np.log(0.01), np.log(0.1)))),
            "num_leaves": int(rng.choice([4, 8, 15, 31, 63, 127])),
            "min_data_in_leaf": int(rng.choice([2, 5, 10, 20, 40])),
            "feature_fraction": float(rng.uniform(0.5, 1.0)),
            "bagging_fraction": float(rng.uniform(0.6, 1.0)), "bagging_freq": 1,
            "lambda_l2": float(np.exp(rng.uniform(np.log(1e-3), np.log(10.0)))),
            "extra_trees": bool(rng.random() < 0.3)}


def _threads(n_rows):
    """One thread below 20,000 rows: on small tables LightGBM's threads mostly wait on
    each other (12x slower with 2 threads on a busy 2-core machine, measured)."""
    return 1 if n_rows < 20_000 else min(8, os.cpu_count() or 1)


def _matrix(encoded):
    dense, _, cats = encoded
    codes = cats.astype(np.float64)
    codes[cats == 0] = np.nan
    return np.hstack([dense, codes])


def _objective(task, n_classes, metric):
    if task == "binary":
        return {"objective": "binary", "metric": "binary_logloss"}
    if task == "multiclass":
        return {"objective": "multiclass", "num_class": n_classes, "metric": "multi_logloss"}
    return {"objective": "regression_l1" if metric == "mae" else "regression",
            "metric": "l1" if metric == "mae" else "l2"}


class Family:
    """LightGBM with one parameter set: trains folds, predicts, saves."""

    family = FAMILY

    def __init__(self, params, task, n_classes, metric, n_dense, seed=0):
        self.params = dict(params)
        self.task, self.n_classes, self.metric = task, n_classes, metric
        self.n_dense = n_dense
        self.seed = seed

    def _full_params(self, n_rows):
        params = {"verbosity": -1, "seed": self.seed, "deterministic": True,
                  "num_threads": _threads(n_rows), "max_cat_to_onehot": 8,
                  "min_data_per_group": 10, "cat_smooth": 10.0, "max_bin": 255}
        params.update(_objective(self.task, self.n_classes, self.metric))
        params.update(self.params)
        # a leaf needs rows: never ask for more than a tenth of the training rows
        params["min_data_in_leaf"] = max(1, min(params.get("min_data_in_leaf", 20),
                                                n_rows // 10))
        return params

    def fit(self, train, y_train, valid, y_valid, deadline):
        import lightgbm as lgb
        x_train, x_valid = _matrix(train), _matrix(valid)
        categorical = list(range(self.n_dense, x_train.shape[1]))
        params = self._full_params(len(y_train))
        data = lgb.Dataset(x_train, y_train, categorical_feature=categorical,
                           free_raw_data=True, params={"verbosity": -1})
        checked = lgb.Dataset(x_valid, y_valid, reference=data,
                              categorical_feature=categorical)
        patience = 50 if len(y_train) > 1000 else 100

        def stop_at_deadline(env):
            if time.monotonic() > deadline:
                raise lgb.callback.EarlyStopException(env.iteration,
                                                      env.evaluation_result_list)

        booster = lgb.train(params, data, num_boost_round=MAX_ROUNDS, valid_sets=[checked],
                            callbacks=[lgb.early_stopping(patience, verbose=False),
                                       stop_at_deadline])
        return booster

    def predict(self, booster, encoded):
        raw = booster.predict(_matrix(encoded), num_iteration=booster.best_iteration or None)
        if self.task == "binary":
            return np.stack([1.0 - raw, raw], axis=1)
        return raw

    def importance(self, booster):
        """Total gain per feature (dense features, then categorical columns)."""
        return booster.feature_importance(importance_type="gain")

    def save(self, booster, path):
        booster.save_model(path + ".txt", num_iteration=booster.best_iteration or None)

    def load(self, path):
        import lightgbm as lgb
        return lgb.Booster(model_file=path + ".txt")

    def to_json(self):
        return {"params": self.params}
