import numpy as np
import pandas as pd
import pytest

from tensorflux import automl
from tensorflux._src.automl import tables, task

from .tables import mixed


@pytest.mark.parametrize("values, expected", [
    (["a", "b"] * 20, "binary"),
    ([0, 1] * 20, "binary"),
    ([1, 2, 3] * 20, "multiclass"),
    (["x", "y", "z"] * 20, "multiclass"),
    (np.linspace(0, 1, 60), "regression"),
    (list(range(60)), "regression"),          # 60 distinct integers: a quantity
])
def test_task_detection(values, expected):
    assert task.detect_task(pd.Series(values)) == expected


def test_task_override_and_its_checks():
    assert task.detect_task(pd.Series([1, 2, 3] * 20), "regression") == "regression"
    with pytest.raises(automl.DataError, match="task='regression' needs a numeric target"):
        task.detect_task(pd.Series(["a", "b", "c"] * 5), "regression", "kind")
    with pytest.raises(automl.DataError, match="task='binary' needs 2 classes"):
        task.detect_task(pd.Series([1, 2, 3]), "binary")
    with pytest.raises(automl.DataError, match="task must be one of"):
        task.detect_task(pd.Series([1, 2]), "ranking")


def test_missing_file(tmp_path):
    with pytest.raises(automl.DataError, match=r"no such file; give the path of a \.csv"):
        automl.fit(str(tmp_path / "nope.csv"), target="y")


def test_ragged_rows_name_the_line(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("a,b,y\n1,2,0\n3,4,1\n5,6,7,0\n7,8,1\n")
    with pytest.raises(automl.DataError,
                       match=r"t\.csv, line 4: 4 fields but the header has 3; fix that row"):
        tables.read_table(str(path))
    path.write_text("a,b,y\n1,2,0\n3,4\n")
    with pytest.raises(automl.DataError, match=r"line 3: 2 fields but the header has 3"):
        tables.read_table(str(path))


def test_missing_target_column():
    with pytest.raises(automl.DataError,
                       match=r"there is no target column 'Bought'; did you mean 'bought'\?"):
        automl.fit(mixed(50), target="Bought")


def test_all_constant_target():
    frame = mixed(50).assign(bought="yes")
    with pytest.raises(automl.DataError, match=r"the target column 'bought' has the same "
                                               r"value \('yes'\) in every row"):
        automl.fit(frame, target="bought")
    numbers = mixed(50).assign(bought=3)
    with pytest.raises(automl.DataError, match=r"has the same value \(3\) in every row"):
        automl.fit(numbers, target="bought")
    empty = mixed(50).assign(bought=np.nan)
    with pytest.raises(automl.DataError, match=r"'bought' has no values \(every row is "
                                               r"missing\)"):
        automl.fit(empty, target="bought")


def test_unknown_suffix(tmp_path):
    path = tmp_path / "t.xlsx"
    path.write_text("x")
    with pytest.raises(automl.DataError, match="unknown table format '.xlsx'"):
        tables.read_table(str(path))


def test_parquet_needs_pyarrow(tmp_path):
    try:
        import pyarrow  # noqa: F401
        pytest.skip("pyarrow is installed")
    except ImportError:
        pass
    path = tmp_path / "t.parquet"
    path.write_bytes(b"PAR1")
    with pytest.raises(automl.DataError, match=r"reading Parquet needs pyarrow"):
        tables.read_table(str(path))
