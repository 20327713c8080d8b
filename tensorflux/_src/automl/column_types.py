"""What each column of a table is, read from its values.

    numeric      numbers (object columns count when at least 95% of their non-missing
                 values parse as numbers; the rest become missing at training time)
    boolean      two values that read as true/false (true/false, yes/no, y/n, t/f, 0/1)
    categorical  few distinct values (strings, or strings that are short labels)
    text         free text: strings of several words, mostly distinct
    datetime     strings that parse as dates; encoded as year/month/day/dayofweek
    identifier   a distinct value per row that is not a measurement (integer row numbers,
                 codes): dropped, it cannot generalize
    constant     one value (or none): dropped
"""

from __future__ import annotations

import warnings

import numpy as np

from tensorflux._src.automl.tables import MISSING_TOKENS

TYPES = ("numeric", "boolean", "categorical", "text", "datetime", "identifier", "constant")
USED = ("numeric", "boolean", "categorical", "text", "datetime")

_TRUE = {"true", "yes", "y", "t", "1"}
_FALSE = {"false", "no", "n", "f", "0"}


def is_stringish(series):
    import pandas as pd
    return (pd.api.types.is_object_dtype(series) or pd.api.types.is_string_dtype(series)
            or isinstance(series.dtype, pd.CategoricalDtype))


def as_numbers(series):
    """The column as float64 (non-numbers -> NaN) and how many non-missing did not parse."""
    import pandas as pd
    values = pd.to_numeric(series, errors="coerce") if is_stringish(series) else series
    values = np.asarray(values, dtype=np.float64)
    present = np.asarray(series.notna())
    return values, int((present & np.isnan(values)).sum())


def boolean_mapping(series):
    """{lower-cased text: 0/1} when the column's values read as true/false, else None."""
    import pandas as pd
    if pd.api.types.is_bool_dtype(series):
        return {"true": 1, "false": 0}
    distinct = {str(v).strip().lower() for v in series.dropna().unique()}
    if len(distinct) == 2 and distinct <= (_TRUE | _FALSE) and distinct & _TRUE \
            and distinct & _FALSE:
        return {v: int(v in _TRUE) for v in distinct}
    return None


def date_part(parsed, part):
    """float64 values of a datetime part (year, month, day, dayofweek, hour); NaN missing."""
    attribute = "day_of_week" if part == "dayofweek" else part
    return np.asarray(getattr(parsed.dt, attribute), dtype=np.float64)


def parse_datetimes(series):
    import pandas as pd
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return pd.to_datetime(series, errors="coerce", format="mixed")


def _looks_like_dates(sample):
    text = sample.astype(str)
    if not text.str.contains(r"\d", regex=True).all():
        return False
    if not text.str.contains(r"[-/:]|\d{4}", regex=True).all():
        return False
    parsed = parse_datetimes(sample)
    return parsed.notna().mean() >= 0.95


def infer_column_type(series) -> str:
    """One of TYPES for a column (the target excluded by the caller)."""
    import pandas as pd
    present = series.dropna()
    if is_stringish(series):
        tokens = {t.lower() for t in MISSING_TOKENS}
        present = present[~present.astype(str).str.strip().str.lower().isin(tokens)]
    n = len(present)
    if n == 0 or present.nunique() <= 1:
        return "constant"
    if boolean_mapping(present) is not None:
        return "boolean"
    if pd.api.types.is_datetime64_any_dtype(series):
        return "datetime"
    if not is_stringish(series):
        if pd.api.types.is_integer_dtype(series) and _is_row_number(present):
            return "identifier"
        return "numeric"
    numbers, failed = as_numbers(present)
    if failed <= 0.05 * n:
        return "identifier" if _is_row_number(pd.Series(numbers)) else "numeric"
    text = present.astype(str)
    sample = text.sample(min(n, 500), random_state=0)
    if _looks_like_dates(sample):
        return "datetime"
    unique_ratio = text.nunique() / n
    words = sample.str.split().str.len().mean()
    if words >= 3 and unique_ratio > 0.3:
        return "text"
    if unique_ratio > 0.95 and n > 50:
        return "identifier"
    return "categorical"


def _is_row_number(values):
    """Integer values, all distinct, forming (nearly) a contiguous run: a row id."""
    values = np.asarray(values, dtype=np.float64)
    n = len(values)
    if n < 20 or not np.all(values == np.round(values)):
        return False
    if len(np.unique(values)) != n:
        return False
    span = values.max() - values.min() + 1
    return span <= 1.5 * n


def infer_column_types(frame, target) -> dict:
    """{column: type} for every column but the target, in the table's order."""
    return {c: infer_column_type(frame[c]) for c in frame.columns if c != target}
