"""The feature encoder fitted on the training table, applied to every later table.

One encoding feeds every model family:
    dense  float64 [n, d]  numbers as given (NaN = missing), booleans 0/1, datetime parts
                           (year, month, day, dayofweek, and hour when times vary), text
                           length / word count / presence of its most frequent words.
                           What the trees read.
    nn     float32 [n, d'] the same columns made friendly to gradient descent: missing
                           values imputed with the training median (plus a 0/1 "was
                           missing" column where training had missing values), skewed
                           columns log1p-transformed (non-negative) or quantile-mapped
                           (with negatives), then standardized and clipped to +-5.
    cats   int64 [n, c]    categorical codes: 0 missing, 1 rare or unseen, 2.. the values
                           seen at least `min_count` times in training (most frequent
                           first, at most 1000). Unseen values at prediction time land in
                           the rare bucket: no error.

Errors at prediction time are one line naming the column and row: a column the model
needs is missing, or a numeric column holds a value that is not a number.
"""

from __future__ import annotations

import math
import re

import numpy as np

from tensorflux._src.automl import column_types
from tensorflux._src.automl.errors import DataError
from tensorflux._src.automl.tables import MISSING_TOKENS

MAX_VOCAB = 1000
TEXT_TOKENS = 30
SKEW_LIMIT = 1.0
CLIP = 5.0
_MISSING = {t.lower() for t in MISSING_TOKENS}
_WORD = re.compile(r"[a-z0-9]+")


def category_key(value):
    """The text a categorical value is known by (1, 1.0 and "1" are the same value)."""
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        value = int(value)
    elif isinstance(value, np.generic):
        value = value.item()
    return str(value).strip()


def _is_missing(value):
    if value is None:
        return True
    if isinstance(value, float) and math.isnan(value):
        return True
    try:
        import pandas as pd
        if value is pd.NA or value is pd.NaT:
            return True
    except ImportError:  # pragma: no cover
        pass
    return isinstance(value, str) and value.strip().lower() in _MISSING


def _skew(values):
    centered = values - values.mean()
    m2 = np.mean(centered ** 2)
    return 0.0 if m2 == 0 else float(np.mean(centered ** 3) / m2 ** 1.5)


def _row_label(frame, position, where):
    if where == "line":  # a file read with its default index: row 0 is line 2
        return f"line {position + 2}"
    return f"{where} {frame.index[position]!r}"


class Preprocessor:
    """Fitted encoding state per column (JSON-serializable); see the module docstring."""

    def __init__(self, specs, column_types_):
        self.specs = specs                # {column: spec dict}, used columns only
        self.column_types = column_types_  # {column: inferred type}, all columns

    # -- fitting ---------------------------------------------------------------------------

    @classmethod
    def fit(cls, frame, types):
        specs = {}
        n = len(frame)
        min_count = min(10, max(2, round(0.01 * n)))
        for column, kind in types.items():
            if kind not in column_types.USED:
                continue
            series = frame[column]
            if kind == "numeric":
                values = _numbers(series, column, frame, "row", strict=False)
                specs[column] = {"type": "numeric", **_numeric_spec(values, "numeric")}
            elif kind == "boolean":
                spec = {"type": "boolean", "mapping": column_types.boolean_mapping(series)}
                spec.update(_numeric_spec(_booleans(series, spec["mapping"]), "boolean"))
                specs[column] = spec
            elif kind == "categorical":
                keys = [category_key(v) for v in series if not _is_missing(v)]
                values, counts = np.unique(np.asarray(keys, dtype=object).astype(str),
                                           return_counts=True)
                order = np.argsort(-counts, kind="stable")
                vocab = [str(values[i]) for i in order if counts[i] >= min_count][:MAX_VOCAB]
                specs[column] = {"type": "categorical", "vocab": vocab}
            elif kind == "datetime":
                parsed = column_types.parse_datetimes(series)
                parts = ["year", "month", "day", "dayofweek"]
                hours = parsed.dt.hour.dropna()
                if len(hours) and hours.nunique() > 1:
                    parts.append("hour")
                spec = {"type": "datetime", "parts": parts, "stats": {}}
                for part in parts:
                    spec["stats"][part] = _numeric_spec(
                        column_types.date_part(parsed, part), "numeric")
                specs[column] = spec
            elif kind == "text":
                text = series.fillna("").astype(str).str.lower()
                counts = {}
                for document in text:
                    for word in set(_WORD.findall(document)):
                        counts[word] = counts.get(word, 0) + 1
                frequent = sorted((w for w, c in counts.items() if c >= 5),
                                  key=lambda w: (-counts[w], w))[:TEXT_TOKENS]
                spec = {"type": "text", "tokens": frequent, "stats": {}}
                dense, names = _text_features(series, frequent)
                for j, name in enumerate(names):
                    spec["stats"][name] = _numeric_spec(dense[:, j], "numeric")
                specs[column] = spec
        if not specs:
            raise DataError("no usable feature columns: every column other than the target "
                            "is constant or an identifier; the column types are "
                            + ", ".join(f"{c}: {t}" for c, t in list(types.items())[:20]))
        return cls(specs, dict(types))

    # -- encoding --------------------------------------------------------------------------

    @property
    def input_columns(self):
        return list(self.specs)

    def check_columns(self, frame, what="data"):
        missing = [c for c in self.specs if c not in frame.columns]
        if missing:
            more = f" (and {len(missing) - 1} more: {', '.join(missing[1:6])})" \
                if len(missing) > 1 else ""
            raise DataError(f"{what}: column {missing[0]!r} is missing{more}; the model "
                            f"was trained with it: add the column (empty values are "
                            f"allowed and read as missing)")

    def encode(self, frame, where="row", what="data"):
        """(dense, nn, cats) arrays for the rows of `frame` (see the module docstring)."""
        self.check_columns(frame, what)
        dense_parts, nn_parts, cat_parts = [], [], []
        for column, spec in self.specs.items():
            series = frame[column]
            kind = spec["type"]
            if kind in ("numeric", "boolean"):
                values = (_numbers(series, column, frame, where, strict=True)
                          if kind == "numeric" else _booleans(series, spec["mapping"]))
                dense_parts.append(values[:, None])
                nn_parts.append(_nn_columns(values, spec))
            elif kind == "categorical":
                cat_parts.append(_codes(series, spec["vocab"])[:, None])
            elif kind == "datetime":
                parsed = column_types.parse_datetimes(series)
                for part in spec["parts"]:
                    values = column_types.date_part(parsed, part)
                    dense_parts.append(values[:, None])
                    nn_parts.append(_nn_columns(values, spec["stats"][part]))
            elif kind == "text":
                dense, names = _text_features(series, spec["tokens"])
                dense_parts.append(dense)
                for j, name in enumerate(names):
                    nn_parts.append(_nn_columns(dense[:, j], spec["stats"][name]))
        n = len(frame)
        dense = np.hstack(dense_parts) if dense_parts else np.zeros((n, 0))
        nn = (np.hstack(nn_parts) if nn_parts else np.zeros((n, 0))).astype(np.float32)
        cats = np.hstack(cat_parts) if cat_parts else np.zeros((n, 0), np.int64)
        return dense, nn, cats

    @property
    def dense_names(self):
        """Feature names of `dense` (then the categorical columns), with their source."""
        names = []
        for column, spec in self.specs.items():
            if spec["type"] in ("numeric", "boolean"):
                names.append((column, column))
            elif spec["type"] == "datetime":
                names += [(f"{column}.{p}", column) for p in spec["parts"]]
            elif spec["type"] == "text":
                names += [(f"{column}.{n}", column) for n in _text_names(spec["tokens"])]
        return names

    @property
    def categorical_columns(self):
        return [c for c, s in self.specs.items() if s["type"] == "categorical"]

    @property
    def cardinalities(self):
        """Codes per categorical column (missing + rare + vocabulary)."""
        return [len(s["vocab"]) + 2 for s in self.specs.values() if s["type"] == "categorical"]

    def to_json(self):
        return {"specs": self.specs, "column_types": self.column_types}

    @classmethod
    def from_json(cls, document):
        return cls(document["specs"], document["column_types"])


def _numeric_spec(values, kind):
    present = values[~np.isnan(values)]
    if len(present) == 0:
        present = np.zeros(1)
    spec = {"median": float(np.median(present)), "indicator": bool(np.isnan(values).any()),
            "transform": "none"}
    if kind == "numeric" and len(np.unique(present)) > 10 and abs(_skew(present)) > SKEW_LIMIT:
        if present.min() >= 0:
            spec["transform"] = "log1p"
        else:
            spec["transform"] = "quantile"
            spec["quantiles"] = np.quantile(present, np.linspace(0, 1, 101)).tolist()
    transformed = _transform(present, spec)
    spec["mean"] = float(transformed.mean())
    spec["std"] = float(transformed.std()) or 1.0
    return spec


def _transform(values, spec):
    if spec["transform"] == "log1p":
        return np.log1p(np.maximum(values, 0.0))
    if spec["transform"] == "quantile":
        return np.interp(values, spec["quantiles"], np.linspace(0.0, 1.0, 101))
    return values


def _nn_columns(values, spec):
    filled = np.where(np.isnan(values), spec["median"], values)
    scaled = np.clip((_transform(filled, spec) - spec["mean"]) / spec["std"], -CLIP, CLIP)
    if spec["indicator"]:
        return np.stack([scaled, np.isnan(values).astype(np.float64)], axis=1)
    return scaled[:, None]


def _numbers(series, column, frame, where, strict):
    """float64 values; a non-number raises DataError naming the row (strict) or is
    read as missing (training, where the column type allows up to 5% of them)."""
    import pandas as pd
    if pd.api.types.is_bool_dtype(series):
        return np.asarray(series, dtype=np.float64)
    if pd.api.types.is_numeric_dtype(series):
        return np.asarray(series, dtype=np.float64)
    values = np.asarray(pd.to_numeric(series, errors="coerce"), dtype=np.float64)
    for position in np.flatnonzero(np.isnan(values)):
        raw = series.iloc[position]
        if _is_missing(raw):
            continue
        if strict:
            raise DataError(f"column {column!r}, {_row_label(frame, position, where)}: "
                            f"{raw!r} is not a number, but the model reads {column!r} as "
                            f"numbers; fix the value or leave it empty (missing)")
    return values


def _booleans(series, mapping):
    out = np.full(len(series), np.nan)
    for i, value in enumerate(series):
        if not _is_missing(value):
            key = str(category_key(value)).lower()
            out[i] = mapping.get(key, np.nan)
    return out


def _codes(series, vocab):
    index = {v: i + 2 for i, v in enumerate(vocab)}
    return np.asarray([0 if _is_missing(v) else index.get(category_key(v), 1)
                       for v in series], dtype=np.int64)


def _text_names(tokens):
    return ["chars", "words"] + [f"has_{t}" for t in tokens]


def _text_features(series, tokens):
    text = series.fillna("").astype(str)
    lower = text.str.lower()
    words = [set(_WORD.findall(t)) for t in lower]
    dense = np.zeros((len(series), 2 + len(tokens)))
    dense[:, 0] = text.str.len().to_numpy(dtype=np.float64)
    dense[:, 1] = text.str.split().str.len().fillna(0).to_numpy(dtype=np.float64)
    for j, token in enumerate(tokens):
        dense[:, 2 + j] = [token in w for w in words]
    return dense, _text_names(tokens)
