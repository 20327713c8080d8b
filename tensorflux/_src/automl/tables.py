"""Reading a table: a pandas DataFrame or a path to .csv / .tsv (optionally .gz) / .parquet.

Ragged CSV rows (more or fewer fields than the header) are found with the csv module
before pandas reads the file, so the error names the line: pandas silently fills short
rows with NaN and names only long ones.
"""

from __future__ import annotations

import csv
import gzip
import os

from tensorflux._src.automl.errors import DataError

# Values read as missing in every column (besides pandas' own defaults such as "" and NA).
MISSING_TOKENS = ("?", "NA", "N/A", "na", "n/a", "null", "NULL", "None", "none", "nan",
                  "NaN", "-", "")

_TEXT_SUFFIXES = {".csv": ",", ".tsv": "\t", ".tab": "\t", ".txt": None}


def read_table(source, what="data"):
    """`source` (DataFrame or path) as a DataFrame with stripped column names."""
    import pandas as pd

    if isinstance(source, pd.DataFrame):
        frame = source.copy()
    elif isinstance(source, (str, os.PathLike)):
        frame = _read_path(os.fspath(source), what)
    else:
        raise DataError(f"{what} must be a pandas DataFrame or a path to a .csv, .tsv or "
                        f".parquet file, got {type(source).__name__}")
    frame.columns = [str(c).strip() for c in frame.columns]
    duplicated = frame.columns[frame.columns.duplicated()].tolist()
    if duplicated:
        raise DataError(f"{what}: column {duplicated[0]!r} appears twice; rename one of them")
    if frame.shape[0] == 0:
        raise DataError(f"{what}: the table has no rows")
    return frame


def _suffix(path):
    base = path[:-3] if path.lower().endswith(".gz") else path
    return os.path.splitext(base)[1].lower()


def _read_path(path, what):
    import pandas as pd

    if not os.path.exists(path):
        raise DataError(f"{what} {path}: no such file; give the path of a .csv, .tsv or "
                        f".parquet table")
    if os.path.isdir(path):
        raise DataError(f"{what} {path} is a directory; give the path of a table file")
    suffix = _suffix(path)
    if suffix in (".parquet", ".pq"):
        try:
            return pd.read_parquet(path)
        except ImportError:
            raise DataError(f"{what} {path}: reading Parquet needs pyarrow "
                            f"(pip install pyarrow), or convert the table to CSV") from None
    if suffix not in _TEXT_SUFFIXES:
        raise DataError(f"{what} {path}: unknown table format {suffix or '(no suffix)'!r}; "
                        f"use .csv, .tsv or .parquet")
    sep = _TEXT_SUFFIXES[suffix] or _sniff(path)
    _check_rectangular(path, sep, what)
    try:
        return pd.read_csv(path, sep=sep, na_values=list(MISSING_TOKENS),
                           keep_default_na=True, skipinitialspace=True, low_memory=False)
    except pd.errors.EmptyDataError:
        raise DataError(f"{what} {path}: the file is empty") from None
    except (pd.errors.ParserError, UnicodeDecodeError) as exc:
        first = str(exc).strip().splitlines()[-1]
        raise DataError(f"{what} {path}: cannot read the table: {first}") from None


def _open_text(path):
    if path.lower().endswith(".gz"):
        return gzip.open(path, "rt", newline="", encoding="utf-8", errors="replace")
    return open(path, newline="", encoding="utf-8", errors="replace")


def _sniff(path):
    with _open_text(path) as f:
        head = f.read(65536)
    return "\t" if head.count("\t") > head.count(",") else ","


def _check_rectangular(path, sep, what):
    """DataError naming the first line whose field count differs from the header's."""
    with _open_text(path) as f:
        reader = csv.reader(f, delimiter=sep, skipinitialspace=True)
        header = None
        for row in reader:
            if not row or all(not cell.strip() for cell in row):
                continue  # blank lines are skipped (pandas does the same)
            if header is None:
                header = len(row)
                continue
            if len(row) != header:
                raise DataError(
                    f"{what} {path}, line {reader.line_num}: {len(row)} fields but the header "
                    f"has {header}; fix that row (quote values that contain {sep!r}, or add "
                    f"the missing fields as empty values)")
        if header is None:
            raise DataError(f"{what} {path}: the file is empty")
