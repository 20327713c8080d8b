"""The report as `automl.fit(..., output_dir=)` writes it: the core's single call site
hands write_report the held-out labels and the ensemble's probabilities, and the page
and report.json show them (counts recomputed here with NumPy)."""

import json
import os

import numpy as np
import pytest

from tensorflux import automl
from tensorflux._src.automl import gbm

from .tables import mixed

GBM_ONLY = [(name, config, "lightgbm") for name, config in gbm.PORTFOLIO[:2]]


def test_fit_writes_the_report(tmp_path):
    pytest.importorskip("lightgbm")
    predictor = automl.fit(mixed(300), target="bought", time_limit=10, verbose=False,
                           output_dir=tmp_path, _portfolio=GBM_ONLY)
    for name in ("report.html", "report.json", "confusion_matrix.png", "calibration.png",
                 "feature_importance.png"):
        assert os.path.getsize(tmp_path / name) > 0, name
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["task"] == "binary" and report["target"] == "bought"
    assert report["class_labels"] == predictor.classes_

    # The held-out rows the core evaluated on, and its ensemble's probabilities.
    y_eval, proba = predictor._val
    truth = np.asarray(y_eval).astype(int)
    guess = np.argmax(proba, axis=1)
    counts = [[int(np.sum((truth == i) & (guess == j))) for j in range(2)] for i in range(2)]
    assert report["confusion_matrix"]["counts"] == counts
    assert report["n_rows"] == len(truth)
    assert report["metrics"]["accuracy"] == pytest.approx(np.mean(truth == guess))

    text = (tmp_path / "report.html").read_text()
    for model in predictor.leaderboard()["model"]:
        assert f"<td>{model}</td>" in text
    assert report["column_types"] == predictor.column_types
