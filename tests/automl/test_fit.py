"""fit -> predict -> save -> load on small tables, with small time limits."""

import numpy as np
import pandas as pd
import pytest

from tensorflux import automl
from tensorflux._src.automl import gbm, metrics, networks

from .tables import mixed, uci

GBM_ONLY = [(name, config, "lightgbm") for name, config in gbm.PORTFOLIO[:2]]


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    frame = mixed(400)
    predictor = automl.fit(frame.iloc[:300], target="bought", time_limit=20,
                           verbose=False, _portfolio=GBM_ONLY)
    return frame, predictor


def test_types_task_and_quality(trained):
    frame, predictor = trained
    assert predictor.task == "binary"
    assert predictor.classes_ == ["no_buy", "yes_buy"]
    assert predictor.column_types == {"id": "identifier", "age": "numeric",
                                      "city": "categorical", "member": "boolean",
                                      "income": "numeric", "joined": "datetime"}
    test = frame.iloc[300:]
    scores = predictor.evaluate(test)
    assert set(scores) == set(metrics.CLASSIFICATION)
    assert scores["roc_auc"] > 0.9 and scores["accuracy"] > 0.8
    proba = predictor.predict_proba(test)
    assert list(proba.columns) == ["no_buy", "yes_buy"]
    assert list(proba.index) == list(test.index)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    labels = predictor.predict(test)
    np.testing.assert_array_equal(labels, np.where(proba["yes_buy"] > 0.5, "yes_buy",
                                                   "no_buy"))
    # the metrics agree with NumPy on the same probabilities
    y = (test["bought"] == "yes_buy").to_numpy()
    assert scores["accuracy"] == pytest.approx(np.mean((proba["yes_buy"] > 0.5) == y))


def test_leaderboard_weights_and_importance(trained):
    _, predictor = trained
    board = predictor.leaderboard()
    assert list(board.columns) == ["model", "val_score", "fit_time_s", "pred_time_s",
                                   "weight"]
    assert set(board["model"]) == {"LightGBM", "LightGBMXT"}
    assert board["weight"].sum() == pytest.approx(1.0)
    assert board["val_score"].is_monotonic_decreasing   # roc_auc: higher first
    importance = predictor.feature_importance()
    assert importance.is_monotonic_decreasing
    assert "id" not in importance.index and importance.sum() == pytest.approx(1.0)
    assert set(importance.index[:3]) >= {"age"}


def test_save_load_round_trip(trained, tmp_path):
    frame, predictor = trained
    target = tmp_path / "model"
    predictor.save(target)
    predictor.save(target)   # replacing an existing model works too
    loaded = automl.load(target)
    test = frame.iloc[300:]
    pd.testing.assert_frame_equal(loaded.predict_proba(test), predictor.predict_proba(test))
    pd.testing.assert_frame_equal(loaded.leaderboard(), predictor.leaderboard())
    assert loaded.classes_ == predictor.classes_ and loaded.task == "binary"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".automl")]


def test_prediction_time_errors_and_unseen_categories(trained):
    frame, predictor = trained
    rows = frame.drop(columns="bought").iloc[:3].copy()
    rows["city"] = ["atlantis", None, "paris"]          # unseen and missing: no error
    assert len(predictor.predict(rows)) == 3
    with pytest.raises(automl.DataError, match=r"column 'income' is missing; the model "
                                               r"was trained with it: add the column"):
        predictor.predict(rows.drop(columns="income"))
    rows["age"] = rows["age"].astype(object)
    rows.loc[rows.index[1], "age"] = "forty"
    with pytest.raises(automl.DataError,
                       match=r"column 'age', row 1: 'forty' is not a number.*leave it empty"):
        predictor.predict(rows)
    rows.loc[rows.index[1], "age"] = "?"                 # a missing-value token is fine
    assert len(predictor.predict(rows)) == 3


def test_regression_on_a_known_rule(tmp_path):
    rng = np.random.default_rng(1)
    x = rng.uniform(-2, 2, (500, 3))
    y = 3 * x[:, 0] - 2 * x[:, 1] ** 2 + rng.normal(0, 0.1, 500)
    frame = pd.DataFrame(x, columns=["a", "b", "noise"]).assign(y=y)
    predictor = automl.fit(frame.iloc[:400], target="y", time_limit=20, verbose=False,
                           _portfolio=GBM_ONLY[:1], output_dir=tmp_path / "out")
    assert automl.load(tmp_path / "out").task == "regression"
    assert predictor.task == "regression" and predictor.metric == "rmse"
    scores = predictor.evaluate(frame.iloc[400:])
    prediction = predictor.predict(frame.iloc[400:]).to_numpy()
    truth = frame["y"].to_numpy()[400:]
    assert scores["rmse"] == pytest.approx(np.sqrt(np.mean((prediction - truth) ** 2)))
    assert scores["r2"] > 0.95


@pytest.mark.slow
def test_tensorflux_networks_train_and_reload(tmp_path):
    frame = uci("iris")
    portfolio = [("Linear", networks.PORTFOLIO[1][1], "tensorflux"),
                 ("NeuralNet", {"kind": "dnn", "hidden": [16], "lr": 1e-2, "dropout": 0.1},
                  "tensorflux")]
    predictor = automl.fit(frame, target="label", time_limit=60, verbose=False,
                           _portfolio=portfolio)
    board = predictor.leaderboard()
    assert list(board["model"]) and set(board["model"]) <= {"Linear", "NeuralNet"}
    # out-of-fold log loss of a multinomial model on iris is far below chance (ln 3)
    assert board["val_score"].min() < 0.25
    predictor.save(tmp_path / "m")
    loaded = automl.load(tmp_path / "m")
    np.testing.assert_allclose(loaded.predict_proba(frame).to_numpy(),
                               predictor.predict_proba(frame).to_numpy(), rtol=1e-5,
                               atol=1e-6)
    assert (loaded.predict(frame) == frame["label"]).mean() > 0.9


def test_validation_table_and_live_leaderboard(capsys):
    frame = uci("wine_data")
    rng = np.random.default_rng(0)
    rows = rng.permutation(len(frame))
    train, valid = frame.iloc[rows[:130]], frame.iloc[rows[130:]]
    predictor = automl.fit(train, target="label", time_limit=20, validation=valid,
                           _portfolio=GBM_ONLY[:1])
    assert predictor.task == "multiclass" and predictor.metric == "log_loss"
    assert predictor.info["validation"] == "given" and predictor.info["folds"] == 1
    # the leaderboard's score is the validation table's log loss
    proba = predictor.predict_proba(valid).to_numpy()
    y = np.array([predictor.classes_.index(v) for v in valid["label"]])
    expected = -np.mean(np.log(np.clip(proba[np.arange(len(y)), y], 1e-15, 1)))
    assert predictor.leaderboard()["val_score"][0] == pytest.approx(expected, rel=1e-6)
    err = capsys.readouterr().err
    assert "3-class" not in err and "validation log_loss" in err
    assert any(line.strip().startswith("LightGBM ") for line in err.splitlines())
