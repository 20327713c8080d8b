"""The task a target column asks for, and its labels <-> class indices.

Strings, booleans and categories are classes; numbers are classes when they are whole
and few (at most 20 distinct values and each seen on average 10+ times, e.g. 0/1 or
ratings 1-5), a quantity otherwise. `task=` overrides the guess.
"""

from __future__ import annotations

import numpy as np

from tensorflux._src.automl import column_types
from tensorflux._src.automl.errors import DataError

TASKS = ("binary", "multiclass", "regression")
MAX_CLASSES_GUESSED = 20


def clean_target(frame, target, what="data"):
    """The frame's rows with a target value (rows without one cannot teach anything)."""
    if not isinstance(target, str) or not target:
        raise DataError(f"target must be a column name, got {target!r}")
    if target not in frame.columns:
        close = [c for c in frame.columns if c.lower() == target.lower()]
        hint = (f"; did you mean {close[0]!r}?" if close else
                f"; the columns are: {', '.join(map(str, frame.columns[:20]))}"
                + (" ..." if len(frame.columns) > 20 else ""))
        raise DataError(f"{what}: there is no target column {target!r}{hint}")
    y = frame[target]
    if column_types.is_stringish(y):
        y = y.where(y.astype(str).str.strip() != "")
    keep = np.asarray(y.notna())
    if not keep.any():
        raise DataError(f"{what}: the target column {target!r} has no values (every row "
                        f"is missing); fill it in or choose another target column")
    return frame.loc[keep]


def detect_task(y, task=None, target="target") -> str:
    import pandas as pd
    distinct = y.dropna().unique()
    if len(distinct) == 0:
        raise DataError(f"the target column {target!r} has no values (every row is "
                        f"missing); fill it in or choose another target column")
    if len(distinct) < 2:
        value = distinct[0].item() if hasattr(distinct[0], "item") else distinct[0]
        raise DataError(f"the target column {target!r} has the same value "
                        f"({value!r}) in every row; there is nothing to predict; "
                        f"choose another target column")
    numeric = pd.api.types.is_numeric_dtype(y) and not pd.api.types.is_bool_dtype(y)
    if task is not None:
        if task not in TASKS:
            raise DataError(f"task must be one of {', '.join(TASKS)}, got {task!r}")
        if task == "regression" and not numeric:
            values, failed = column_types.as_numbers(y)
            if failed:
                raise DataError(f"task='regression' needs a numeric target, but column "
                                f"{target!r} holds text such as {_first_text(y)!r}; use "
                                f"task='multiclass' or clean the column")
        if task == "binary" and len(distinct) != 2:
            raise DataError(f"task='binary' needs 2 classes, but the target column "
                            f"{target!r} has {len(distinct)}; use task='multiclass'")
        return task
    if not numeric:
        return "binary" if len(distinct) == 2 else "multiclass"
    values = np.asarray(distinct, dtype=np.float64)
    if len(distinct) == 2:
        return "binary"
    whole = np.all(values == np.round(values))
    if whole and len(distinct) <= MAX_CLASSES_GUESSED and len(y) >= 10 * len(distinct):
        return "multiclass"
    return "regression"


def _first_text(y):
    values, _ = column_types.as_numbers(y)
    bad = np.flatnonzero(np.isnan(values) & np.asarray(y.notna()))
    return y.iloc[bad[0]] if len(bad) else None


class Labels:
    """Class labels (sorted original values) <-> indices 0..k-1."""

    def __init__(self, classes):
        self.classes = list(classes)
        self._index = {_key(c): i for i, c in enumerate(self.classes)}

    @classmethod
    def fit(cls, y):
        values = y.dropna().unique().tolist()
        try:
            values = sorted(values)
        except TypeError:
            values = sorted(values, key=str)
        return cls([_plain(v) for v in values])

    def encode(self, y):
        out = np.empty(len(y), dtype=np.int64)
        for i, value in enumerate(y):
            index = self._index.get(_key(_plain(value)))
            if index is None:
                raise DataError(f"the target value {value!r} (row {y.index[i]!r}) is not one "
                                f"of the classes the model knows: {self.classes[:20]}")
            out[i] = index
        return out

    def decode(self, indices):
        return np.asarray([self.classes[i] for i in indices], dtype=object)


def _plain(value):
    """Python scalars (JSON-friendly) instead of NumPy ones."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and value == int(value):
        return int(value)
    return value


def _key(value):
    return str(value)
