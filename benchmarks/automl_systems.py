"""The worker side of benchmarks/automl.py: one subprocess per step.

    python automl_systems.py prepare --table NAME --out DIR        (peer venv)
    python automl_systems.py check --system NAME                    (either venv)
    python automl_systems.py run --system NAME --table-dir DIR --out DIR --time-limit T
    python automl_systems.py score --work DIR --tables ... --systems ...   (peer venv)

`run` fits one system on DIR/train.csv within the time limit and writes its test-set
predictions to OUT/pred.csv (classification: one `proba:<label>` column per class;
regression: `pred`) and OUT/run.json (fit and predict seconds). Every system reads the
same CSV files with pandas and is handed the raw DataFrame: type inference, missing
values and categoricals are each system's own work. `score` reads every pred.csv and
scores them all with one scorer (sklearn.metrics), so no system grades itself.

This file imports only the standard library, NumPy and pandas at the top: the
tensorflux run happens in tensorflux's own venv, which has no scikit-learn.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time

SYSTEMS = ("tensorflux", "autogluon", "flaml", "baseline")


# ----------------------------------------------------------------------------- systems

def _fit_tensorflux(train, target, task, metric, time_limit, work):
    from tensorflux import automl
    predictor = automl.fit(train, target=target, time_limit=time_limit, task=task,
                           output_dir=os.path.join(work, "model"), seed=0, verbose=False)

    def predict(test):
        if task == "regression":
            return predictor.predict(test)
        return predictor.predict_proba(test)
    return predict


_AG_METRIC = {"roc_auc": "roc_auc", "log_loss": "log_loss", "rmse": "root_mean_squared_error"}


def _fit_autogluon(train, target, task, metric, time_limit, work):
    from autogluon.tabular import TabularPredictor
    predictor = TabularPredictor(label=target, problem_type=task,
                                 eval_metric=_AG_METRIC[metric],
                                 path=os.path.join(work, "model"), verbosity=0)
    predictor.fit(train, time_limit=time_limit, presets="medium_quality")

    def predict(test):
        if task == "regression":
            return predictor.predict(test)
        return predictor.predict_proba(test, as_multiclass=True)
    return predict


def _fit_flaml(train, target, task, metric, time_limit, work):
    import pandas as pd
    from flaml import AutoML
    automl = AutoML()
    x, y = train.drop(columns=[target]), train[target]
    automl.fit(X_train=x, y_train=y, task="regression" if task == "regression"
               else "classification", metric=metric, time_budget=time_limit, seed=0,
               verbose=0, log_file_name=os.path.join(work, "flaml.log"))

    def predict(test):
        if task == "regression":
            return pd.Series(automl.predict(test), index=test.index)
        return pd.DataFrame(automl.predict_proba(test), columns=list(automl.classes_),
                            index=test.index)
    return predict


def _fit_baseline(train, target, task, metric, time_limit, work):
    """What Amazon ML trained: one L2-regularised linear model (logistic regression for
    classes, ridge regression for numbers) on one-hot categoricals and standardised,
    median-imputed numerics. Identifier-like text columns (mostly distinct values) are
    dropped; there is no search and no time limit to use."""
    import pandas as pd
    from sklearn.compose import ColumnTransformer
    from sklearn.impute import SimpleImputer
    from sklearn.linear_model import LogisticRegression, Ridge
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    x, y = train.drop(columns=[target]), train[target]
    numeric = [c for c in x.columns if pd.api.types.is_numeric_dtype(x[c])
               and not pd.api.types.is_bool_dtype(x[c])]
    categorical = [c for c in x.columns if c not in numeric
                   and x[c].nunique() <= max(20, 0.5 * len(x))]
    prep = ColumnTransformer([
        ("num", make_pipeline(SimpleImputer(strategy="median"), StandardScaler()), numeric),
        ("cat", make_pipeline(SimpleImputer(strategy="most_frequent"),
                              OneHotEncoder(handle_unknown="ignore")), categorical)])
    model = Ridge(alpha=1.0) if task == "regression" else LogisticRegression(max_iter=2000)
    pipeline = make_pipeline(prep, model)
    pipeline.fit(x.astype({c: str for c in categorical}), y)

    def predict(test):
        test = test.astype({c: str for c in categorical})
        if task == "regression":
            return pd.Series(pipeline.predict(test), index=test.index)
        return pd.DataFrame(pipeline.predict_proba(test), columns=list(pipeline.classes_),
                            index=test.index)
    return predict


FIT = {"tensorflux": _fit_tensorflux, "autogluon": _fit_autogluon, "flaml": _fit_flaml,
       "baseline": _fit_baseline}


def check(system):
    """Raises (ImportError, AttributeError) when `system` cannot run here."""
    import importlib
    if system == "tensorflux":
        from tensorflux import automl
        automl.fit  # noqa: B018  (the contract's entry point must exist)
    else:
        importlib.import_module({"autogluon": "autogluon.tabular", "flaml": "flaml.automl",
                                 "baseline": "sklearn.linear_model"}[system])


# ------------------------------------------------------------------------------- steps

def run(system, table_dir, out, time_limit):
    import pandas as pd
    with open(os.path.join(table_dir, "meta.json")) as f:
        meta = json.load(f)
    target, task = meta["target"], meta["task"]
    train = pd.read_csv(os.path.join(table_dir, "train.csv"))
    test = pd.read_csv(os.path.join(table_dir, "test.csv")).drop(columns=[target])
    os.makedirs(out, exist_ok=True)
    check(system)  # import the package before the clock starts: fit_s is fitting time
    with tempfile.TemporaryDirectory(prefix=f"automl-{system}-") as work:
        start = time.perf_counter()
        predict = FIT[system](train, target, task, meta["metric"], time_limit, work)
        fit_s = time.perf_counter() - start
        start = time.perf_counter()
        result = predict(test)
        predict_s = time.perf_counter() - start
    if task == "regression":
        frame = pd.DataFrame({"pred": list(result)})
    else:
        frame = pd.DataFrame({f"proba:{c}": list(result[c]) for c in result.columns})
    frame.to_csv(os.path.join(out, "pred.csv"), index=False)
    with open(os.path.join(out, "run.json"), "w") as f:
        json.dump({"fit_s": fit_s, "predict_s": predict_s, "rows": len(frame)}, f)


def score(work, tables, systems):
    """{table: {system: {metric: value}}} for every system that left predictions."""
    import numpy as np
    import pandas as pd
    from sklearn import metrics as m
    out = {}
    for table in tables:
        table_dir = os.path.join(work, "tables", table)
        with open(os.path.join(table_dir, "meta.json")) as f:
            meta = json.load(f)
        target, task = meta["target"], meta["task"]
        truth = pd.read_csv(os.path.join(table_dir, "test.csv"),
                            dtype={target: str} if task != "regression" else None)[target]
        out[table] = {}
        for system in systems:
            path = os.path.join(work, "runs", table, system, "pred.csv")
            if not os.path.exists(path):
                continue
            pred = pd.read_csv(path)
            if len(pred) != len(truth):
                out[table][system] = {"error": f"{len(pred)} predictions for "
                                               f"{len(truth)} test rows"}
                continue
            if task == "regression":
                y, p = truth.to_numpy(float), pred["pred"].to_numpy(float)
                out[table][system] = {"rmse": float(np.sqrt(m.mean_squared_error(y, p))),
                                      "mae": float(m.mean_absolute_error(y, p)),
                                      "r2": float(m.r2_score(y, p))}
                continue
            classes = meta["classes"]
            given = {c.split(":", 1)[1]: c for c in pred.columns}
            missing = [c for c in classes if c not in given]
            if len(missing) == len(classes):
                given = _match_numeric_labels(given, classes)
                missing = [c for c in classes if c not in given]
            proba = np.column_stack([pred[given[c]].to_numpy(float) if c in given
                                     else np.zeros(len(pred)) for c in classes])
            proba = np.clip(proba, 0.0, None)
            proba /= np.maximum(proba.sum(axis=1, keepdims=True), 1e-15)
            label = np.asarray(classes, dtype=object)[proba.argmax(axis=1)]
            row = {"accuracy": float(m.accuracy_score(truth, label)),
                   "balanced_accuracy": float(m.balanced_accuracy_score(truth, label)),
                   "log_loss": float(m.log_loss(truth, proba, labels=classes))}
            if task == "binary":
                row["roc_auc"] = float(m.roc_auc_score(truth == classes[1], proba[:, 1]))
            else:
                row["roc_auc"] = float(m.roc_auc_score(truth, proba, labels=classes,
                                                       multi_class="ovr"))
            if missing:
                row["note"] = f"no probability column for {missing} (taken as 0)"
            out[table][system] = row
    return out


def _match_numeric_labels(given, classes):
    """Integer labels written as floats by one system ("1.0") against "1" in the data."""
    matched = {}
    for name, column in given.items():
        try:
            as_number = float(name)
        except ValueError:
            continue
        for c in classes:
            try:
                if float(c) == as_number:
                    matched[c] = column
            except ValueError:
                pass
    return matched


def versions():
    """{distribution: version} of what the peer venv runs (for the results file)."""
    from importlib import metadata
    out = {}
    for name in ("autogluon.tabular", "flaml", "scikit-learn", "lightgbm", "catboost",
                 "xgboost", "torch", "pandas", "numpy"):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            pass
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    steps = parser.add_subparsers(dest="step", required=True)
    p = steps.add_parser("prepare")
    p.add_argument("--table", required=True)
    p.add_argument("--out", required=True)
    p = steps.add_parser("check")
    p.add_argument("--system", choices=SYSTEMS, required=True)
    p = steps.add_parser("run")
    p.add_argument("--system", choices=SYSTEMS, required=True)
    p.add_argument("--table-dir", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--time-limit", type=float, required=True)
    steps.add_parser("versions")
    p = steps.add_parser("score")
    p.add_argument("--work", required=True)
    p.add_argument("--tables", nargs="+", required=True)
    p.add_argument("--systems", nargs="+", required=True)
    args = parser.parse_args(argv)
    if args.step == "prepare":
        from automl_tables import prepare
        print(json.dumps(prepare(args.table, args.out)))
    elif args.step == "check":
        check(args.system)  # an ImportError/AttributeError exits non-zero
    elif args.step == "versions":
        print(json.dumps(versions()))
    elif args.step == "run":
        run(args.system, args.table_dir, args.out, args.time_limit)
    else:
        json.dump(score(args.work, args.tables, args.systems), sys.stdout)


if __name__ == "__main__":
    main()
