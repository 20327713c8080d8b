import numpy as np
import pandas as pd
import pytest

from tensorflux._src.automl import column_types
from tensorflux._src.automl.preprocess import Preprocessor


@pytest.mark.parametrize("values, expected", [
    (np.random.default_rng(0).normal(size=100), "numeric"),
    (["1.5", "2", "?", "3.25"] * 25, "numeric"),           # "?" read as missing
    (["yes", "no"] * 50, "boolean"),
    ([True, False] * 50, "boolean"),
    (["red", "green", "blue", "red"] * 25, "categorical"),
    ([f"user{i:04d}" for i in range(100)], "identifier"),
    (list(range(500, 600)), "identifier"),                  # a row number
    (["2021-03-04", "2022-11-30", "2020-01-01", "2023-07-15"] * 25, "datetime"),
    ([f"the quick brown fox number {i} jumps" for i in range(100)], "text"),
    ([7] * 100, "constant"),
    ([np.nan] * 100, "constant"),
])
def test_column_type_inference(values, expected):
    assert column_types.infer_column_type(pd.Series(values)) == expected


def test_repeated_integers_are_numeric_not_identifiers():
    assert column_types.infer_column_type(pd.Series([1, 2, 3, 4] * 30)) == "numeric"


def test_encoding_dates_skew_rare_categories_and_missing_values():
    frame = pd.DataFrame({
        "when": ["2021-03-04", "2022-11-30"] * 50,
        "city": ["a"] * 60 + ["b"] * 39 + ["z"],
        "size": [1.0, np.nan] * 50,
        "wealth": np.exp(np.linspace(0, 10, 100)),
    })
    types = column_types.infer_column_types(frame, target=None)
    assert types == {"when": "datetime", "city": "categorical", "size": "constant",
                     "wealth": "numeric"}
    pre = Preprocessor.fit(frame, types)
    dense, nn, cats = pre.encode(frame)
    # year, month, day, dayofweek of 2021-03-04 (a Thursday, dayofweek 3)
    np.testing.assert_array_equal(dense[0, :4], [2021, 3, 4, 3])
    np.testing.assert_array_equal(dense[1, :4], [2022, 11, 30, 2])
    assert pre.specs["wealth"]["transform"] == "log1p"
    np.testing.assert_allclose(dense[:, 4], frame["wealth"])        # trees: raw values
    logged = np.log1p(frame["wealth"].to_numpy())
    expected = (logged - logged.mean()) / logged.std()
    np.testing.assert_allclose(nn[:, -1], np.clip(expected, -5, 5), rtol=1e-5, atol=1e-6)
    # "z" (seen once) is rare: code 1; "a" most frequent: 2; "b": 3
    assert cats[0, 0] == 2 and cats[60, 0] == 3 and cats[99, 0] == 1
    unseen = pre.encode(frame.assign(city=["mars"] + [None] * 99))[2]
    assert unseen[0, 0] == 1 and unseen[1, 0] == 0   # unseen -> rare, missing -> 0


def test_missing_values_are_imputed_with_an_indicator():
    frame = pd.DataFrame({"x": [1.0, 2.0, np.nan, 4.0, 5.0] * 20})
    pre = Preprocessor.fit(frame, {"x": "numeric"})
    _, nn, _ = pre.encode(frame)
    assert nn.shape == (100, 2)
    assert nn[2, 1] == 1.0 and nn[0, 1] == 0.0
    present = np.array([1.0, 2.0, 4.0, 5.0] * 20)
    filled = np.array([1.0, 2.0, 3.0, 4.0, 5.0] * 20)   # the median of present is 3
    np.testing.assert_allclose(nn[:, 0], (filled - present.mean()) / present.std(),
                               rtol=1e-5)
