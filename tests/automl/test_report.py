"""automl's report: the files it writes and the numbers in them.

Expectations are computed here with NumPy (confusion counts, calibration bins, residual
summaries), never read back from the report module's own helpers.
"""

from __future__ import annotations

import json
import os
import struct

import numpy as np
import pytest

from tensorflux._src.automl.report import write_report

pd = pytest.importorskip("pandas")

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _png_size(path):
    """(width, height) from the PNG's IHDR chunk, after checking the signature."""
    with open(path, "rb") as f:
        head = f.read(24)
    assert head[:8] == PNG_MAGIC, f"{path} is not a PNG"
    assert head[12:16] == b"IHDR"
    return struct.unpack(">II", head[16:24])


def _check_png(path):
    from PIL import Image
    width, height = _png_size(path)
    assert 300 <= width <= 4000 and 200 <= height <= 4000, (path, width, height)
    assert os.path.getsize(path) > 5000  # a drawn figure, not an empty canvas
    with Image.open(path) as image:
        image.verify()  # the whole file decodes (CRCs, zlib stream)
    with Image.open(path) as image:
        pixels = np.asarray(image.convert("L"))
    assert pixels.std() > 10  # not a blank page


def _leaderboard():
    return pd.DataFrame({
        "model": ["WeightedEnsemble", "GradientBoosted", "DNN_64x64", "Linear"],
        "val_score": [0.97125, 0.96543, 0.95016, 0.94431],
        "fit_time_s": [0.5, 3.25, 12.5, 1.375],
        "pred_time_s": [0.05, 0.0125, 0.03, 0.002],
        "weight": [np.nan, 0.625, 0.375, 0.0]})


def _common():
    return {"leaderboard": _leaderboard(),
            "ensemble_weights": {"GradientBoosted": 0.625, "DNN_64x64": 0.375},
            "feature_importance": pd.Series({"bill_length_mm": 0.21, "island": 0.125,
                                             "sex": -0.004}),
            "column_types": {"bill_length_mm": "numeric", "island": "categorical",
                             "sex": "categorical", "row_id": "identifier (dropped)"}}


def _classification(rng, labels, n):
    k = len(labels)
    true = rng.integers(0, k, n)
    logits = rng.normal(size=(n, k))
    logits[np.arange(n), true] += 1.5
    proba = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    names = np.asarray(labels, dtype=object)
    return names[true], names[proba.argmax(axis=1)], proba


def test_multiclass_report_files_counts_and_page(tmp_path):
    rng = np.random.default_rng(0)
    labels = ["Adelie", "Chinstrap", "Gentoo"]
    y_true, y_pred, proba = _classification(rng, labels, 240)
    metrics = {"log_loss": 0.483917, "accuracy": 0.7875, "balanced_accuracy": 0.781234}
    page = write_report(tmp_path, task="multiclass", target="species", metric="log_loss",
                        metrics=metrics, y_true=y_true, y_pred=y_pred, y_proba=proba,
                        class_labels=labels, **_common())

    assert page == os.path.join(os.path.abspath(tmp_path), "report.html")
    names = sorted(os.listdir(tmp_path))
    assert names == ["calibration.png", "confusion_matrix.png", "feature_importance.png",
                     "report.html", "report.json"]  # nothing half-written left behind
    for name in names:
        if name.endswith(".png"):
            _check_png(tmp_path / name)

    report = json.loads((tmp_path / "report.json").read_text())
    expected = np.array([[np.sum((y_true == a) & (y_pred == b)) for b in labels]
                         for a in labels])
    assert report["confusion_matrix"]["labels"] == labels
    assert report["confusion_matrix"]["counts"] == expected.tolist()
    np.testing.assert_allclose(report["confusion_matrix"]["row_normalized"],
                               expected / expected.sum(axis=1, keepdims=True), atol=1e-6)
    assert report["metrics"] == metrics
    assert report["n_rows"] == 240
    assert [row["model"] for row in report["leaderboard"]] == list(_leaderboard()["model"])
    assert report["leaderboard"][0]["weight"] is None  # NaN is not JSON

    # One-vs-rest calibration, one curve per class, bins recomputed here.
    curves = report["calibration"]
    assert [c["label"] for c in curves] == labels
    for c, curve in enumerate(curves):
        p, hit = proba[:, c], (y_true == labels[c]).astype(float)
        bins = np.minimum((p * 10).astype(int), 9)
        for b in range(10):
            members = bins == b
            assert curve["count"][b] == members.sum()
            if members.any():
                assert curve["mean_predicted"][b] == pytest.approx(p[members].mean(), abs=1e-6)
                assert curve["observed"][b] == pytest.approx(hit[members].mean(), abs=1e-6)
        assert curve["brier"] == pytest.approx(np.mean((p - hit) ** 2))

    text = (tmp_path / "report.html").read_text()
    for model, score in zip(_leaderboard()["model"], _leaderboard()["val_score"]):
        assert f"<td>{model}</td>" in text
        assert f"{score:.4f}" in text
    for value in ("0.4839", "0.7875", "0.7812"):  # the metrics, four decimals
        assert value in text
    for name in ("confusion_matrix.png", "calibration.png", "feature_importance.png"):
        assert f'src="{name}"' in text  # relative: the folder moves as a whole
    assert "http://" not in text and "https://" not in text and "<script" not in text
    assert "identifier (dropped)" in text


def test_binary_report_calibrates_the_positive_class(tmp_path):
    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, 400)
    p1 = 1 / (1 + np.exp(-(rng.normal(size=400) + 2 * y - 1)))
    proba = np.stack([1 - p1, p1], axis=1)
    labels = [False, True]
    y_pred = p1 > 0.5
    write_report(tmp_path, task="binary", target="default", metric="roc_auc",
                 metrics={"roc_auc": 0.8123, "accuracy": 0.74}, y_true=y.astype(bool),
                 y_pred=y_pred, y_proba=proba, class_labels=labels, **_common())
    report = json.loads((tmp_path / "report.json").read_text())
    tn = np.sum((y == 0) & ~y_pred)
    fp = np.sum((y == 0) & y_pred)
    fn = np.sum((y == 1) & ~y_pred)
    tp = np.sum((y == 1) & y_pred)
    assert report["confusion_matrix"]["counts"] == [[tn, fp], [fn, tp]]
    assert [c["label"] for c in report["calibration"]] == [True]
    curve = report["calibration"][0]
    bins = np.minimum((p1 * 10).astype(int), 9)
    ece = sum(abs(y[bins == b].mean() - p1[bins == b].mean()) * np.sum(bins == b)
              for b in range(10) if np.any(bins == b)) / len(y)
    assert curve["ece"] == pytest.approx(ece)
    assert sum(curve["count"]) == 400
    _check_png(tmp_path / "calibration.png")


def test_regression_report(tmp_path):
    rng = np.random.default_rng(2)
    y_true = rng.normal(50.0, 10.0, 300)
    y_pred = y_true + rng.normal(1.0, 3.0, 300)
    metrics = {"rmse": 3.1416, "mae": 2.5, "r2": 0.9123}
    write_report(tmp_path, task="regression", target="price", metric="rmse",
                 metrics=metrics, y_true=y_true, y_pred=y_pred, **_common())
    assert sorted(os.listdir(tmp_path)) == [
        "feature_importance.png", "predicted_vs_actual.png", "report.html", "report.json",
        "residuals.png"]
    for name in ("feature_importance.png", "predicted_vs_actual.png", "residuals.png"):
        _check_png(tmp_path / name)
    report = json.loads((tmp_path / "report.json").read_text())
    residual = y_true - y_pred
    assert report["regression"]["rmse"] == pytest.approx(np.sqrt(np.mean(residual ** 2)))
    assert report["regression"]["residual_mean"] == pytest.approx(residual.mean())
    assert report["regression"]["residual_quantiles"]["50%"] == pytest.approx(
        np.median(residual))
    r2 = 1 - np.sum(residual ** 2) / np.sum((y_true - y_true.mean()) ** 2)
    assert report["regression"]["r2"] == pytest.approx(r2)
    assert "confusion_matrix" not in report
    text = (tmp_path / "report.html").read_text()
    for value in ("3.1416", "2.5000", "0.9123"):
        assert value in text
    assert list(report["feature_importance"]) == ["bill_length_mm", "island", "sex"]


def test_rewriting_a_report_replaces_it(tmp_path):
    rng = np.random.default_rng(3)
    for accuracy in (0.5, 0.625):
        y_true, y_pred, _proba = _classification(rng, ["a", "b", "c"], 60)
        write_report(tmp_path, task="multiclass", target="t", metric="accuracy",
                     leaderboard=None, ensemble_weights=None,
                     metrics={"accuracy": accuracy}, y_true=y_true, y_pred=y_pred)
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["metrics"] == {"accuracy": 0.625}
    assert "calibration" not in report  # no probabilities given
    assert not [n for n in os.listdir(tmp_path) if ".tmp" in n]


@pytest.mark.parametrize("kwargs, message", [
    ({"task": "ranking"}, "task must be one of binary, multiclass, regression"),
    ({"y_pred": ["a"] * 5}, "y_true has 4 rows but y_pred has 5"),
    ({"y_pred": ["a", "b", "z", "a"]}, "y_pred holds labels not in class_labels"),
    ({"y_proba": np.full((4, 3), 0.5)}, r"y_proba must have shape \(rows, classes\) = \(4, 2\)"),
    ({"task": "regression"}, "y_proba is for classification"),
])
def test_bad_input_names_the_argument(tmp_path, kwargs, message):
    args = {"task": "binary", "target": "t", "metric": "roc_auc", "leaderboard": None,
            "ensemble_weights": {}, "metrics": {}, "y_true": ["a", "b", "a", "b"],
            "y_pred": ["a", "b", "b", "b"], "y_proba": np.full((4, 2), 0.5),
            "class_labels": ["a", "b"]}
    args.update(kwargs)
    with pytest.raises(ValueError, match=message):
        write_report(tmp_path, **args)
