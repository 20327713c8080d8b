"""benchmarks/automl_summary.py: ranks, gaps to AutoGluon and the markdown table of the
automl benchmark, on a hand-made result (expected values worked out in the test)."""

from __future__ import annotations

import importlib.util
import pathlib

import pytest

# Loaded by path: putting benchmarks/ on sys.path would let its scripts shadow modules.
_PATH = pathlib.Path(__file__).resolve().parents[2] / "benchmarks" / "automl_summary.py"
_SPEC = importlib.util.spec_from_file_location("automl_summary", _PATH)
automl_summary = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(automl_summary)

SYSTEMS = ["tensorflux", "autogluon", "flaml", "baseline"]


def _run(**scores):
    return {"status": "ok", "wall_s": 20.0, "fit_s": 15.0, "predict_s": 0.5,
            "scores": scores}


def _payload():
    meta = {"n_train": 300, "n_test": 100, "n_features": 5, "categorical": ["c"],
            "missing_cells": 3, "note": "test table"}
    return {"time_limit_s": 15, "systems": SYSTEMS, "command": "python automl.py", "tables": {
        "bin": {"meta": {**meta, "task": "binary", "metric": "roc_auc"}, "runs": {
            "tensorflux": _run(roc_auc=0.98), "autogluon": _run(roc_auc=0.99),
            "flaml": _run(roc_auc=0.98), "baseline": _run(roc_auc=0.90)}},
        "multi": {"meta": {**meta, "task": "multiclass", "metric": "log_loss"}, "runs": {
            "tensorflux": _run(log_loss=0.10, accuracy=0.96),
            "autogluon": _run(log_loss=0.20, accuracy=0.95),
            "flaml": {"status": "failed: ValueError: boom", "wall_s": 3.0},
            "baseline": _run(log_loss=0.40, accuracy=0.90)}},
        "reg": {"meta": {**meta, "task": "regression", "metric": "rmse"}, "runs": {
            "tensorflux": _run(rmse=2.2), "autogluon": _run(rmse=2.0),
            "flaml": {"status": "not installed (No module named 'flaml')"},
            "baseline": {"status": "timed out after 345 s", "wall_s": 345.0}}}}}


def test_ranks_share_ties_and_put_failures_last():
    ranks = automl_summary._ranks({"a": 0.9, "b": 0.95, "c": 0.9}, ["a", "b", "c", "d", "e"],
                                  higher=True)
    assert ranks == {"b": 1.0, "a": 2.5, "c": 2.5, "d": 4.5, "e": 4.5}
    assert automl_summary._ranks({"a": 1.0, "b": 0.5}, ["a", "b"], higher=False) == \
        {"b": 1.0, "a": 2.0}


def test_summary_mean_rank_wins_and_relative_gap():
    summary = automl_summary.summarize(_payload())["systems"]
    # bin: autogluon 1, tensorflux/flaml 2.5, baseline 4; multi: tf 1, ag 2, baseline 3,
    # flaml (failed) 4; reg: ag 1, tf 2, baseline (timed out) 3, flaml not installed.
    assert summary["tensorflux"]["mean_rank"] == pytest.approx((2.5 + 1 + 2) / 3)
    assert summary["autogluon"]["mean_rank"] == pytest.approx((1 + 2 + 1) / 3)
    assert summary["flaml"]["mean_rank"] == pytest.approx((2.5 + 4) / 2)
    assert summary["baseline"]["mean_rank"] == pytest.approx((4 + 3 + 3) / 3)
    assert summary["tensorflux"]["wins"] == 1 and summary["autogluon"]["wins"] == 2
    gaps = [(0.99 - 0.98) / 0.99, (0.10 - 0.20) / 0.20, (2.2 - 2.0) / 2.0]
    assert summary["tensorflux"]["mean_relative_gap_to_autogluon"] == pytest.approx(
        sum(gaps) / 3)
    assert summary["tensorflux"]["median_relative_gap_to_autogluon"] == pytest.approx(
        (0.99 - 0.98) / 0.99)
    assert summary["autogluon"]["mean_relative_gap_to_autogluon"] == 0.0
    assert summary["flaml"]["tables_compared_to_autogluon"] == 1


def test_markdown_shows_scores_failures_and_missing_systems():
    payload = _payload()
    payload["summary"] = automl_summary.summarize(payload)
    text = automl_summary.markdown(payload)
    assert "| bin | binary (ROC AUC ↑) | 300/100 | 0.9800, 16 s | 0.9900, 16 s |" in text
    assert "0.1000 (acc 0.960)" in text
    assert "| not installed |" in text
    assert "- multi / flaml: failed: ValueError: boom" in text
    assert "- reg / baseline: timed out after 345 s" in text
    assert "| tensorflux | 1.83 | 1 | -13.00% | +1.01% | 3 |" in text
