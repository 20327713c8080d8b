"""Small real datasets shipped with tensorflux (UCI, CC BY 4.0; see data/ATTRIBUTION.md).

Each loader returns `((x_train, y_train), (x_test, y_test))` like Keras' loaders, from
a deterministic, class-stratified split, so results are comparable across runs:

    (x_train, y_train), (x_test, y_test) = tensorflux.datasets.load_digits()
    x_train.shape  # (1438, 8, 8), uint8 pixel values 0-16
"""

from __future__ import annotations

import gzip
import os

import numpy as np

__all__ = ["load_digits", "load_iris", "load_wine", "load_breast_cancer", "class_names"]

_DATA = os.path.join(os.path.dirname(__file__), "data")


def _read(name):
    path = os.path.join(_DATA, name)
    opener = gzip.open if name.endswith(".gz") else open
    with opener(path, "rt") as f:
        return f.read().splitlines()


def _split(x, y, test_fraction, seed):
    """Stratified split: the same fraction of every class goes to the test set."""
    if not 0.0 < test_fraction < 1.0:
        raise ValueError(f"test_fraction must be in (0, 1), got {test_fraction}")
    rng = np.random.default_rng(seed)
    test = np.zeros(len(y), bool)
    for label in np.unique(y):
        members = np.flatnonzero(y == label)
        rng.shuffle(members)
        test[members[:int(round(len(members) * test_fraction))]] = True
    train_idx, test_idx = np.flatnonzero(~test), np.flatnonzero(test)
    rng.shuffle(train_idx)
    rng.shuffle(test_idx)
    return (x[train_idx], y[train_idx]), (x[test_idx], y[test_idx])


def load_digits(test_fraction=0.2, seed=0):
    """1,797 handwritten digits as (n, 8, 8) uint8 images (values 0-16), labels 0-9."""
    rows = np.array([line.split(",") for line in _read("digits.csv.gz")], dtype=np.int64)
    x = rows[:, :64].reshape(-1, 8, 8).astype(np.uint8)
    y = rows[:, 64]
    return _split(x, y, test_fraction, seed)


def _load_table(name, test_fraction, seed):
    lines = _read(name)
    header = lines[0].split(",")
    n, n_features = int(header[0]), int(header[1])
    rows = np.array([line.split(",") for line in lines[1:n + 1]], dtype=np.float64)
    x, y = rows[:, :n_features].astype(np.float32), rows[:, n_features].astype(np.int64)
    return _split(x, y, test_fraction, seed)


def load_iris(test_fraction=0.2, seed=0):
    """150 iris flowers: 4 float32 features, 3 classes."""
    return _load_table("iris.csv", test_fraction, seed)


def load_wine(test_fraction=0.2, seed=0):
    """178 wines: 13 float32 features, 3 classes."""
    return _load_table("wine_data.csv", test_fraction, seed)


def load_breast_cancer(test_fraction=0.2, seed=0):
    """569 tumours: 30 float32 features, 2 classes (malignant, benign)."""
    return _load_table("breast_cancer.csv", test_fraction, seed)


def class_names(dataset):
    """Class names from a table's header (digits are their own names)."""
    if dataset == "digits":
        return [str(i) for i in range(10)]
    files = {"iris": "iris.csv", "wine": "wine_data.csv", "breast_cancer": "breast_cancer.csv"}
    if dataset not in files:
        raise ValueError(f"Unknown dataset {dataset!r}; expected one of "
                         f"{['digits'] + sorted(files)}")
    return _read(files[dataset])[0].split(",")[2:]
