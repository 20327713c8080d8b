"""`fit()` and the Predictor it returns: predictions, evaluation, save / load.

A saved predictor is a directory:
    predictor.json      task, target, classes, metric, column types, the encoder's state,
                        the ensemble's models (family, configuration, fold files, weight),
                        feature importance and the leaderboard
    leaderboard.csv     the same leaderboard as a table
    models/NAME/fold_I.txt|.npz   each ensemble member's fold models (LightGBM text
                        models; network weights as NumPy arrays, the graph is rebuilt)
It is written to a temporary sibling directory and moved into place with os.replace, so
a reader never sees half a model.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time

import numpy as np

from tensorflux._src.automl import column_types as column_types_lib
from tensorflux._src.automl import ensemble, gbm, metrics, search, tables
from tensorflux._src.automl import task as task_lib
from tensorflux._src.automl.errors import DataError
from tensorflux._src.automl.leaderboard import LiveLeaderboard
from tensorflux._src.automl.preprocess import Preprocessor

FORMAT_VERSION = 1
LEADERBOARD_COLUMNS = ["model", "val_score", "fit_time_s", "pred_time_s", "weight"]


def fit(data, target, time_limit=300, metric=None, task=None, validation=None,
        output_dir=None, seed=0, verbose=True, *, _portfolio=None, _max_models=None):
    """Trains and ensembles models predicting `target`; see docs/architecture.md, AutoML."""
    started = time.monotonic()
    if not isinstance(time_limit, (int, float)) or isinstance(time_limit, bool) \
            or time_limit <= 0:
        raise DataError(f"time_limit must be a positive number of seconds, got "
                        f"{time_limit!r}")
    frame = task_lib.clean_target(tables.read_table(data, "data"), target, "data")
    task = task_lib.detect_task(frame[target], task, target)
    metric = metrics.check_metric(metric, task)
    types = column_types_lib.infer_column_types(frame, target)
    preprocessor = Preprocessor.fit(frame, types)
    labels = None if task == "regression" else task_lib.Labels.fit(frame[target])
    y = _encode_target(frame[target], labels, target)
    if labels is not None and len(labels.classes) < 2:
        raise DataError(f"the target column {target!r} has one class")
    train = preprocessor.encode(frame, what="data")
    valid = y_valid = None
    if validation is not None:
        vframe = task_lib.clean_target(tables.read_table(validation, "validation"), target,
                                       "validation")
        valid = preprocessor.encode(vframe, what="validation")
        y_valid = _encode_target(vframe[target], labels, target)
    dense_names = preprocessor.dense_names
    context = {"task": task, "metric": metric, "seed": seed,
               "n_classes": 0 if labels is None else len(labels.classes),
               "n_dense": train[0].shape[1], "n_nn": train[1].shape[1],
               "cardinalities": preprocessor.cardinalities,
               "columns": preprocessor.input_columns}
    board = LiveLeaderboard(metric, metric not in metrics.LOWER_IS_BETTER, verbose)
    left = time_limit - (time.monotonic() - started)
    trained, weights, y_eval, folds = search.run(
        train, y, valid, y_valid, context, max(left, 1.0), board, _portfolio, _max_models)
    ensemble_prediction = ensemble.combine([t.val_prediction for t in trained], weights)
    for t, w in zip(trained, weights):
        if w == 0 and hasattr(t.family, "close"):
            t.family.close()  # a network left out: free its Session now
    importance = _importance(trained, preprocessor, dense_names)
    leaderboard = _leaderboard(trained, weights, metric)
    predictor = Predictor(
        task=task, target=target, metric=metric, preprocessor=preprocessor, labels=labels,
        members=[(t.name, t.family, t.folds, float(w)) for t, w in zip(trained, weights)
                 if w > 0],
        leaderboard=leaderboard, importance=importance,
        info={"rows": len(frame), "folds": folds,
              "validation": "given" if validation is not None else
              ("out-of-fold" if folds > 1 else "hold-out 20%"),
              "ensemble_val_score": metrics.compute(metric, y_eval, ensemble_prediction),
              "fit_time_s": time.monotonic() - started})
    predictor._val = (y_eval, ensemble_prediction)
    board.final(predictor.leaderboard())
    if output_dir is not None:
        predictor.save(output_dir)
        predictor.write_report(output_dir, y_eval, ensemble_prediction)
    return predictor


def _encode_target(y, labels, target):
    if labels is not None:
        return labels.encode(y)
    values, failed = column_types_lib.as_numbers(y)
    if failed:
        raise DataError(f"the regression target {target!r} holds values that are not "
                        f"numbers; clean the column or use task='multiclass'")
    return values


def _leaderboard(trained, weights, metric):
    import pandas as pd
    rows = [{"model": t.name, "val_score": float(t.val_score),
             "fit_time_s": float(t.fit_time_s), "pred_time_s": float(t.pred_time_s),
             "weight": float(w)} for t, w in zip(trained, weights)]
    table = pd.DataFrame(rows, columns=LEADERBOARD_COLUMNS)
    ascending = metric in metrics.LOWER_IS_BETTER
    return table.sort_values("val_score", ascending=ascending, kind="stable") \
        .reset_index(drop=True)


def _importance(trained, preprocessor, dense_names):
    """Gain of the best LightGBM model, summed per input column, normalized to 1."""
    import pandas as pd
    boosted = [t for t in trained if t.family.family == gbm.FAMILY]
    if not boosted:
        return pd.Series(dtype=np.float64)
    higher = trained[0].family.metric not in metrics.LOWER_IS_BETTER
    best = (max if higher else min)(boosted, key=lambda t: t.val_score)
    gains = np.mean([best.family.importance(fold) for fold in best.folds], axis=0)
    sources = [s for _, s in dense_names] + preprocessor.categorical_columns
    totals = {c: 0.0 for c in preprocessor.input_columns}
    for source, gain in zip(sources, gains):
        totals[source] += float(gain)
    series = pd.Series(totals, dtype=np.float64)
    if series.sum() > 0:
        series = series / series.sum()
    return series.sort_values(ascending=False, kind="stable")


class Predictor:
    """A trained AutoML model (the ensemble and its preprocessing)."""

    def __init__(self, task, target, metric, preprocessor, labels, members, leaderboard,
                 importance, info):
        self.task = task
        self.target = target
        self.metric = metric
        self.preprocessor = preprocessor
        self._labels = labels
        self._members = members  # [(name, family, folds, weight)]
        self._leaderboard = leaderboard
        self._importance = importance
        self.info = info
        self._val = None

    @property
    def classes_(self):
        return None if self._labels is None else list(self._labels.classes)

    @property
    def column_types(self):
        return dict(self.preprocessor.column_types)

    @property
    def ensemble_weights(self):
        return {name: weight for name, _, _, weight in self._members}

    def leaderboard(self):
        return self._leaderboard.copy()

    def feature_importance(self):
        return self._importance.copy()

    # -- predictions -----------------------------------------------------------------------

    def _raw(self, data, where="row", what="data"):
        frame = tables.read_table(data, what)
        encoded = self.preprocessor.encode(frame, where=where, what=what)
        predictions, weights = [], []
        for _, family, folds, weight in self._members:
            fold_predictions = [family.predict(fold, encoded) for fold in folds]
            predictions.append(np.mean(fold_predictions, axis=0))
            weights.append(weight)
        return frame, ensemble.combine(predictions, np.asarray(weights) / sum(weights))

    def predict_proba(self, data, *, where="row"):
        import pandas as pd
        if self.task == "regression":
            raise DataError("predict_proba is for classification; this model does "
                            "regression: use predict")
        frame, proba = self._raw(data, where)
        return pd.DataFrame(proba, index=frame.index, columns=self.classes_)

    def predict(self, data, *, where="row"):
        import pandas as pd
        frame, raw = self._raw(data, where)
        if self.task == "regression":
            return pd.Series(raw, index=frame.index, name=self.target)
        return pd.Series(self._labels.decode(np.argmax(raw, axis=1)), index=frame.index,
                         name=self.target)

    def predict_both(self, data, *, where="row", what="data"):
        """(frame, labels or values, probabilities [n, k] or None) from one pass."""
        frame, raw = self._raw(data, where, what)
        if self.task == "regression":
            return frame, raw, None
        return frame, self._labels.decode(np.argmax(raw, axis=1)), raw

    def evaluate(self, data):
        frame = tables.read_table(data, "data")
        if self.target not in frame.columns:
            raise DataError(f"evaluate needs the target column {self.target!r} in the data")
        frame = task_lib.clean_target(frame, self.target)
        y = _encode_target(frame[self.target], self._labels, self.target)
        _, raw = self._raw(frame)
        return metrics.all_metrics(self.task, y, raw)

    # -- report ----------------------------------------------------------------------------

    def write_report(self, output_dir, y_true_encoded, prediction, metric_values=None):
        """report.html, report.json and the plots (report.write_report) for held-out
        labels `y_true_encoded` and the ensemble's `prediction` on them."""
        if metric_values is None:
            metric_values = metrics.all_metrics(self.task, y_true_encoded, prediction)
        if self.task == "regression":
            y_true, y_pred, y_proba = y_true_encoded, prediction, None
        else:
            y_true = self._labels.decode(y_true_encoded)
            y_pred = self._labels.decode(np.argmax(prediction, axis=1))
            y_proba = prediction
        from tensorflux._src.automl import report  # matplotlib: only when a report is made
        return report.write_report(
            output_dir, task=self.task, target=self.target, metric=self.metric,
            leaderboard=self.leaderboard(), ensemble_weights=self.ensemble_weights,
            metrics=metric_values, y_true=np.asarray(y_true), y_pred=np.asarray(y_pred),
            y_proba=y_proba, class_labels=self.classes_,
            feature_importance=self.feature_importance(), column_types=self.column_types)

    # -- save / load -----------------------------------------------------------------------

    def save(self, directory):
        directory = os.path.abspath(os.fspath(directory))
        parent = os.path.dirname(directory)
        os.makedirs(parent, exist_ok=True)
        temp = tempfile.mkdtemp(prefix=".automl-", dir=parent)
        try:
            members = []
            for name, family, folds, weight in self._members:
                folder = os.path.join(temp, "models", name)
                os.makedirs(folder)
                for index, fold in enumerate(folds):
                    family.save(fold, os.path.join(folder, f"fold_{index}"))
                members.append({"name": name, "family": family.family, "weight": weight,
                                "folds": len(folds), **family.to_json()})
            document = {
                "format_version": FORMAT_VERSION, "task": self.task, "target": self.target,
                "metric": self.metric, "classes": self.classes_,
                "preprocessor": self.preprocessor.to_json(), "members": members,
                "leaderboard": self._leaderboard.to_dict(orient="records"),
                "feature_importance": {k: float(v) for k, v in self._importance.items()},
                "info": self.info}
            with open(os.path.join(temp, "predictor.json"), "w", encoding="utf-8") as f:
                json.dump(document, f, indent=1, default=_json_default)
            self._leaderboard.to_csv(os.path.join(temp, "leaderboard.csv"), index=False)
            _replace_directory(temp, directory)
        except BaseException:
            shutil.rmtree(temp, ignore_errors=True)
            raise
        return directory


def _json_default(value):
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"cannot write {type(value).__name__} to JSON")


def _replace_directory(temp, directory):
    """Moves `temp` to `directory`; an existing directory is swapped out, then removed."""
    old = None
    if os.path.exists(directory):
        old = tempfile.mkdtemp(prefix=".automl-old-", dir=os.path.dirname(directory))
        os.rmdir(old)
        os.replace(directory, old)
    os.replace(temp, directory)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def load(directory):
    """The Predictor saved in `directory` by Predictor.save."""
    import pandas as pd
    directory = os.fspath(directory)
    path = os.path.join(directory, "predictor.json")
    if not os.path.isfile(path):
        raise DataError(f"{directory}: not a saved automl model (no predictor.json); train "
                        f"one with `tensorflux automl train --output {directory}`")
    with open(path, encoding="utf-8") as f:
        document = json.load(f)
    if document.get("format_version") != FORMAT_VERSION:
        raise DataError(f"{directory}: model format {document.get('format_version')} is not "
                        f"{FORMAT_VERSION}; retrain it with this version")
    task = document["task"]
    labels = None if document["classes"] is None else task_lib.Labels(document["classes"])
    n_classes = 0 if labels is None else len(labels.classes)
    preprocessor = Preprocessor.from_json(document["preprocessor"])
    members = []
    for member in document["members"]:
        if member["family"] == gbm.FAMILY:
            family = gbm.Family(member["params"], task, n_classes, document["metric"],
                                n_dense=len(preprocessor.dense_names))
        else:
            from tensorflux._src.automl import networks
            family = networks.Family(member["config"], task, n_classes, document["metric"],
                                     member["cardinalities"], member["n_nn"])
        folder = os.path.join(directory, "models", member["name"])
        folds = [family.load(os.path.join(folder, f"fold_{i}"))
                 for i in range(member["folds"])]
        members.append((member["name"], family, folds, member["weight"]))
    leaderboard = pd.DataFrame(document["leaderboard"], columns=LEADERBOARD_COLUMNS)
    importance = pd.Series(document["feature_importance"], dtype=np.float64)
    return Predictor(task, document["target"], document["metric"], preprocessor, labels,
                     members, leaderboard, importance, document["info"])
