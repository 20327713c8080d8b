"""The public tables of the automl benchmark, all available offline from PyPI packages.

Runs in the peer venv (it needs scikit-learn, palmerpenguins, ISLP and vega_datasets;
tensorflux never imports this file). Each table is a loader returning a DataFrame,
the target column, and the task. `prepare` writes one fixed held-out split per table
(seed 0, 25% test, stratified for classification) as train.csv / test.csv plus
meta.json, so every system reads the very same rows.

Columns that leak the target are dropped where the source ships them (Wage's logwage,
Bikeshare's casual/registered, Hitters' rows without a Salary); nothing else is cleaned:
categoricals, dates, identifier-like names and missing values stay as the source has
them, since handling them is part of what is measured.
"""

from __future__ import annotations

import json
import os


def _sklearn(name, target_names=True):
    def load():
        import sklearn.datasets
        bunch = getattr(sklearn.datasets, f"load_{name}")(as_frame=True)
        frame = bunch.frame.copy()
        if target_names and hasattr(bunch, "target_names") and len(bunch.target_names):
            names = list(bunch.target_names)
            frame["target"] = [str(names[int(i)]) for i in frame["target"]]
        return frame
    return load


def _islp(name, drop=(), dropna_target=None):
    def load():
        from ISLP import load_data
        frame = load_data(name).drop(columns=list(drop))
        if dropna_target:
            frame = frame[frame[dropna_target].notna()]
        return frame.reset_index(drop=True)
    return load


def _penguins():
    import palmerpenguins
    return palmerpenguins.load_penguins()


def _vega(name):
    def load():
        from vega_datasets import local_data
        return getattr(local_data, name)()
    return load


# name -> (loader, target, task, what it exercises)
TABLES = {
    # binary
    "breast_cancer": (_sklearn("breast_cancer"), "target", "binary",
                      "sklearn; 30 numeric features"),
    "oj": (_islp("OJ"), "Purchase", "binary",
           "ISLP; orange-juice brand choice, categorical Store7"),
    "default": (_islp("Default"), "default", "binary",
                "ISLP; 10,000 rows, 3% positives, categorical student"),
    "college": (_islp("College"), "Private", "binary", "ISLP; 17 numeric features"),
    "caravan": (_islp("Caravan"), "Purchase", "binary",
                "ISLP; 5,822 rows, 85 features, 6% positives"),
    # multiclass
    "penguins": (_penguins, "species", "multiclass",
                 "palmerpenguins; categorical island/sex, missing values"),
    "wine": (_sklearn("wine"), "target", "multiclass", "sklearn; 13 numeric features"),
    "digits": (_sklearn("digits", target_names=False), "target", "multiclass",
               "sklearn; 8x8 images, 64 features, 10 classes"),
    "iris": (_sklearn("iris"), "target", "multiclass", "sklearn; 150 rows"),
    "cars_origin": (_vega("cars"), "Origin", "multiclass",
                    "vega_datasets; missing values, identifier-like Name, date Year"),
    "seattle_weather": (_vega("seattle_weather"), "weather", "multiclass",
                        "vega_datasets; date column, 5 imbalanced classes"),
    # regression
    "diabetes": (_sklearn("diabetes", target_names=False), "target", "regression",
                 "sklearn; 10 numeric features"),
    "carseats": (_islp("Carseats"), "Sales", "regression",
                 "ISLP; categorical ShelveLoc/Urban/US"),
    "wage": (_islp("Wage", drop=("logwage",)), "wage", "regression",
             "ISLP; 7 categorical columns (logwage dropped: it is the target)"),
    "hitters": (_islp("Hitters", dropna_target="Salary"), "Salary", "regression",
                "ISLP; categorical League/Division, skewed target"),
    "bikeshare": (_islp("Bikeshare", drop=("casual", "registered")), "bikers", "regression",
                  ("ISLP; 8,645 hourly rows, categorical mnth/hr/weathersit "
                  "(casual + registered dropped: they sum to the target)")),
}

# The default selection: 3 binary, 5 multiclass, 4 regression; categoricals, missing
# values, dates and identifier-like columns among them.
DEFAULT_TABLES = ("breast_cancer", "oj", "default", "penguins", "wine", "digits",
                  "cars_origin", "seattle_weather", "diabetes", "carseats", "wage",
                  "bikeshare")

METRIC = {"binary": "roc_auc", "multiclass": "log_loss", "regression": "rmse"}
TEST_SIZE = 0.25
SEED = 0


def prepare(name, out_dir):
    """Writes out_dir/{train,test}.csv and meta.json for table `name`."""
    from sklearn.model_selection import train_test_split
    loader, target, task, note = TABLES[name]
    frame = loader()
    frame = frame[frame[target].notna()].reset_index(drop=True)
    stratify = frame[target].astype(str) if task != "regression" else None
    train, test = train_test_split(frame, test_size=TEST_SIZE, random_state=SEED,
                                   stratify=stratify)
    os.makedirs(out_dir, exist_ok=True)
    train.to_csv(os.path.join(out_dir, "train.csv"), index=False)
    test.to_csv(os.path.join(out_dir, "test.csv"), index=False)
    features = [c for c in frame.columns if c != target]
    categorical = [c for c in features if not _is_numeric(frame[c])]
    meta = {"name": name, "target": target, "task": task, "metric": METRIC[task],
            "note": note, "n_train": len(train), "n_test": len(test),
            "n_features": len(features), "categorical": categorical,
            "missing_cells": int(frame[features].isna().sum().sum())}
    if task != "regression":
        meta["classes"] = sorted(frame[target].astype(str).unique().tolist())
    with open(os.path.join(out_dir, "meta.json"), "w") as f:
        json.dump(meta, f, indent=2)
    return meta


def _is_numeric(column):
    import pandas as pd
    return pd.api.types.is_numeric_dtype(column) and not pd.api.types.is_bool_dtype(column)
