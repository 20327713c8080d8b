"""The report of an automl run: what was searched, what was chosen, how well it does.

`write_report` writes into `output_dir`:

- report.json: every number below, so a script can read what the page shows;
- confusion_matrix.png (counts and row-normalized) and calibration.png (reliability
  diagram with the histogram of predicted probabilities; the positive class for a
  binary task, each class one-vs-rest for a multiclass one) for classification;
- residuals.png and predicted_vs_actual.png for regression;
- feature_importance.png when importances are given;
- report.html last: one self-contained page (inline style, no scripts, no external
  assets) with the leaderboard, the ensemble weights, the held-out metrics, the column
  types and the pictures above, referenced by relative path so the folder can be moved
  or zipped as a whole.

Every file is written atomically (temporary file, fsync, rename): a reader, or a second
run writing the same folder, never sees a half-written file. The numbers are computed
here with NumPy from the labels and predictions given (the confusion matrix, the
calibration bins), never taken from the caller, so the page and the JSON agree.
"""

from __future__ import annotations

import datetime
import html
import json
import math
import os

import numpy as np

from tensorflux._src.automl import report_plots
from tensorflux._src.train import atomic_write

TASKS = ("binary", "multiclass", "regression")
CALIBRATION_BINS = 10
# Metrics shown first, in this order; others the caller passes follow alphabetically.
METRIC_ORDER = ("roc_auc", "log_loss", "accuracy", "balanced_accuracy", "f1",
                "rmse", "mae", "r2")


def write_report(output_dir, *, task, target, metric, leaderboard, ensemble_weights,
                 metrics, y_true, y_pred, y_proba=None, class_labels=None,
                 feature_importance=None, column_types=None) -> str:
    """Writes the report files into `output_dir` (created if missing); returns the
    absolute path of report.html. See the module docstring for what is written."""
    if task not in TASKS:
        raise ValueError(f"write_report: task must be one of {', '.join(TASKS)}; "
                         f"received {task!r}")
    y_true = _column(y_true, "y_true")
    y_pred = _column(y_pred, "y_pred")
    if len(y_true) != len(y_pred):
        raise ValueError(f"write_report: y_true has {len(y_true)} rows but y_pred has "
                         f"{len(y_pred)}; pass the labels and predictions of the same rows")
    if len(y_true) == 0:
        raise ValueError("write_report: y_true is empty; the report needs the held-out "
                         "rows' labels and predictions")
    os.makedirs(output_dir, exist_ok=True)
    rows = _records(leaderboard)
    weights = {str(k): _number(v) for k, v in dict(ensemble_weights or {}).items()}
    metric_values = _ordered_metrics(metrics)
    importance = _importance(feature_importance)
    types = {str(k): str(v) for k, v in dict(column_types or {}).items()}

    body = {"task": task, "target": str(target), "metric": str(metric),
            "created": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
            "n_rows": len(y_true), "metrics": metric_values, "leaderboard": rows,
            "ensemble_weights": weights, "column_types": types,
            "feature_importance": dict(importance)}
    figures = []
    if task == "regression":
        if y_proba is not None:
            raise ValueError("write_report: y_proba is for classification; a regression "
                             "report takes y_proba=None")
        body["regression"], figures = _regression(output_dir, y_true, y_pred)
    else:
        labels = _labels(class_labels, y_true, y_pred)
        body["class_labels"] = [_plain(c) for c in labels]
        true_codes = _codes(y_true, labels, "y_true")
        pred_codes = _codes(y_pred, labels, "y_pred")
        body["confusion_matrix"], figures = _confusion(output_dir, labels, true_codes,
                                                       pred_codes)
        if y_proba is not None:
            curves = _calibration_curves(labels, true_codes,
                                         _proba(y_proba, len(y_true), labels), task)
            body["calibration"] = curves
            title = ("calibration of the positive class" if task == "binary" else
                     "calibration per class (one-vs-rest)")
            shown = _most_frequent(curves, report_plots.MAX_CALIBRATION_PANELS)
            if len(shown) < len(curves):
                title += f": the {len(shown)} most frequent of {len(curves)} classes"
            report_plots.calibration(os.path.join(output_dir, "calibration.png"), shown,
                                     title)
            figures.append(("calibration.png", "Calibration"))
    if importance:
        report_plots.feature_importance(os.path.join(output_dir, "feature_importance.png"),
                                        [n for n, _ in importance], [v for _, v in importance])
        figures.append(("feature_importance.png", "Feature importance"))
    body["files"] = [name for name, _ in figures] + ["report.json", "report.html"]

    atomic_write.write_text(os.path.join(output_dir, "report.json"),
                            json.dumps(body, indent=2, allow_nan=False) + "\n")
    page = os.path.join(output_dir, "report.html")
    atomic_write.write_text(page, _html(body, figures))
    return os.path.abspath(page)


# ----------------------------------------------------------------------------- inputs

def _column(values, name):
    array = np.asarray(values)
    if array.ndim == 2 and array.shape[1] == 1:
        array = array[:, 0]
    if array.ndim != 1:
        raise ValueError(f"write_report: {name} must be one value per row (1-D); received "
                         f"shape {array.shape}")
    return array


def _plain(value):
    """A JSON-ready Python value from a NumPy/pandas scalar; NaN and inf become None."""
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    return str(value)


def _number(value):
    value = _plain(value)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) \
        else value


def _records(leaderboard):
    """Rows of the leaderboard (a DataFrame, or a list of dicts) as plain dicts."""
    if leaderboard is None:
        return []
    if hasattr(leaderboard, "to_dict"):
        leaderboard = leaderboard.to_dict("records")
    rows = []
    for row in leaderboard:
        if not isinstance(row, dict):
            raise TypeError("write_report: leaderboard must be a DataFrame or a list of "
                            f"dicts (model, val_score, ...); received a row {row!r}")
        rows.append({str(k): _plain(v) for k, v in row.items()})
    return rows


def _ordered_metrics(metrics):
    metrics = {str(k): _number(v) for k, v in dict(metrics or {}).items()}
    known = [k for k in METRIC_ORDER if k in metrics]
    return {k: metrics[k] for k in known + sorted(set(metrics) - set(known))}


def _importance(feature_importance):
    """(name, value) pairs, largest first."""
    if feature_importance is None:
        return []
    pairs = [(str(k), _number(v)) for k, v in dict(feature_importance).items()]
    pairs = [(k, v) for k, v in pairs if isinstance(v, float)]
    return sorted(pairs, key=lambda kv: -kv[1])


def _distinct(values):
    """The distinct values (as plain Python values) and each row's index into them,
    with one Python call per distinct value, not per row."""
    try:
        uniques, inverse = np.unique(values, return_inverse=True)
    except TypeError:  # mixed types that NumPy cannot order
        uniques = list(dict.fromkeys(_plain(v) for v in values))
        position = {u: i for i, u in enumerate(uniques)}
        return uniques, np.array([position[_plain(v)] for v in values])
    return [_plain(u) for u in uniques], inverse.reshape(-1)


def _labels(class_labels, y_true, y_pred):
    if class_labels is None:  # the labels seen, in sorted order
        seen = set(_distinct(y_true)[0]) | set(_distinct(y_pred)[0])
        return sorted(seen, key=lambda v: (str(type(v)), v))
    labels = [_plain(c) for c in class_labels]
    if len(set(labels)) != len(labels):
        raise ValueError(f"write_report: class_labels has repeated labels: {labels}")
    return labels


def _codes(values, labels, name):
    """Each row's position in `labels`."""
    uniques, inverse = _distinct(values)
    index = {label: i for i, label in enumerate(labels)}
    unknown = [u for u in uniques if u not in index]
    if unknown:
        raise ValueError(f"write_report: {name} holds labels not in class_labels "
                         f"{labels}: {sorted(map(str, unknown))[:5]}")
    return np.array([index[u] for u in uniques], dtype=np.int64)[inverse]


def _proba(y_proba, n, labels):
    proba = np.asarray(y_proba, dtype=np.float64)
    if proba.shape != (n, len(labels)):
        raise ValueError(f"write_report: y_proba must have shape (rows, classes) = "
                         f"({n}, {len(labels)}) in class_labels order; received "
                         f"{proba.shape}")
    return proba


# ------------------------------------------------------------------------ computations

def _confusion(output_dir, labels, t, p):
    """t, p: the true and predicted rows' positions in `labels`."""
    k = len(labels)
    counts = np.bincount(t * k + p, minlength=k * k).reshape(k, k)
    totals = counts.sum(axis=1, keepdims=True)
    normalized = np.divide(counts, totals, out=np.zeros((k, k)), where=totals > 0)
    report_plots.confusion_matrix(os.path.join(output_dir, "confusion_matrix.png"),
                                  labels, counts, normalized)
    body = {"labels": [_plain(c) for c in labels], "counts": counts.tolist(),
            "row_normalized": np.round(normalized, 6).tolist()}
    return body, [("confusion_matrix.png", "Confusion matrix")]


def _calibration_curves(labels, true_codes, proba, task):
    """Per class (binary: the positive class, labels[1]): equal-width bins of the
    predicted probability, with each bin's row count, mean prediction and observed
    frequency, plus the expected calibration error and the Brier score."""
    edges = np.linspace(0.0, 1.0, CALIBRATION_BINS + 1)
    columns = [1] if task == "binary" else range(len(labels))
    curves = []
    for c in columns:
        p = np.clip(proba[:, c], 0.0, 1.0)
        hit = (true_codes == c).astype(np.float64)
        bins = np.minimum((p * CALIBRATION_BINS).astype(int), CALIBRATION_BINS - 1)
        count = np.bincount(bins, minlength=CALIBRATION_BINS)
        sum_p = np.bincount(bins, weights=p, minlength=CALIBRATION_BINS)
        sum_hit = np.bincount(bins, weights=hit, minlength=CALIBRATION_BINS)
        safe = np.maximum(count, 1)
        mean_p, observed = sum_p / safe, sum_hit / safe
        curves.append({
            "label": labels[c], "bin_edges": edges.round(6).tolist(),
            "count": count.tolist(),
            "mean_predicted": [round(float(v), 6) if n else None for v, n in zip(mean_p, count)],
            "observed": [round(float(v), 6) if n else None for v, n in zip(observed, count)],
            "ece": float(np.sum(count * np.abs(observed - mean_p)) / len(p)),
            "brier": float(np.mean((p - hit) ** 2)),
            "prevalence": float(hit.mean())})
    return curves


def _most_frequent(curves, limit):
    if len(curves) <= limit:
        return curves
    keep = sorted(range(len(curves)), key=lambda i: -curves[i]["prevalence"])[:limit]
    return [curves[i] for i in sorted(keep)]


def _regression(output_dir, y_true, y_pred):
    try:
        y_true = y_true.astype(np.float64)
        y_pred = y_pred.astype(np.float64)
    except (TypeError, ValueError) as error:
        raise ValueError("write_report: a regression report needs numeric y_true and "
                         f"y_pred ({error})") from None
    residual = y_true - y_pred
    rmse = float(np.sqrt(np.mean(residual ** 2)))
    spread = float(np.sum((y_true - y_true.mean()) ** 2))
    r2 = 1.0 - float(np.sum(residual ** 2)) / spread if spread > 0 else 0.0
    report_plots.residuals(os.path.join(output_dir, "residuals.png"), y_pred, residual)
    report_plots.predicted_vs_actual(os.path.join(output_dir, "predicted_vs_actual.png"),
                                     y_true, y_pred, rmse, r2)
    quantiles = np.quantile(residual, [0.05, 0.25, 0.5, 0.75, 0.95])
    body = {"residual_mean": float(residual.mean()), "residual_std": float(residual.std()),
            "residual_quantiles": dict(zip(("5%", "25%", "50%", "75%", "95%"),
                                           map(float, quantiles))),
            "rmse": rmse, "r2": r2}
    return body, [("predicted_vs_actual.png", "Predicted against actual"),
                  ("residuals.png", "Residuals")]


# ------------------------------------------------------------------------------- page

def format_number(value):
    """How the page prints a number: four decimals, or four significant digits when
    very large or very small."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return "" if value is None else str(value)
    if isinstance(value, int):
        return str(value)
    if value != 0 and (abs(value) >= 1e5 or abs(value) < 1e-3):
        return f"{value:.4g}"
    return f"{value:.4f}"


_STYLE = """
body { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 2em auto;
       max-width: 1200px; color: #222; padding: 0 1em; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; } h2 { margin-top: 1.6em; border-bottom: 1px solid #ddd; }
.sub { color: #666; }
table { border-collapse: collapse; margin: 0.6em 0; font-size: 0.92em; }
th, td { border: 1px solid #ddd; padding: 4px 10px; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
th { background: #f3f5f8; } tr.chosen td { background: #eef6ee; }
figure { margin: 1em 0; } figure img { max-width: 100%; border: 1px solid #eee; }
figcaption { color: #666; font-size: 0.9em; }
"""


def _table(header, rows, numeric=(), classes=None):
    out = ["<table>", "<tr>" + "".join(f"<th>{html.escape(str(h))}</th>" for h in header)
           + "</tr>"]
    for index, row in enumerate(rows):
        css = f' class="{classes[index]}"' if classes and classes[index] else ""
        cells = []
        for column, value in zip(header, row):
            text = html.escape(format_number(value))
            cells.append(f'<td class="num">{text}</td>' if column in numeric
                         or isinstance(value, (int, float)) and not isinstance(value, bool)
                         else f"<td>{text}</td>")
        out.append(f"<tr{css}>" + "".join(cells) + "</tr>")
    out.append("</table>")
    return "\n".join(out)


def _html(body, figures):
    esc = html.escape
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             f"<title>automl report: {esc(body['target'])}</title>",
             f"<style>{_STYLE}</style></head><body>",
             f"<h1>automl report: predicting <code>{esc(body['target'])}</code></h1>",
             (f'<p class="sub">task {esc(body["task"])} · metric {esc(body["metric"])} · '
              f'{body["n_rows"]:,} held-out rows · {esc(body["created"])}</p>')]

    parts.append("<h2>Metrics on the held-out split</h2>")
    parts.append(_table(["metric", "value"], list(body["metrics"].items()), numeric=("value",)))

    parts.append("<h2>Leaderboard</h2>")
    rows = body["leaderboard"]
    if rows:
        header = list(dict.fromkeys(k for row in rows for k in row))
        weights = body["ensemble_weights"]
        chosen = ["chosen" if weights.get(str(row.get("model")), 0) else "" for row in rows]
        parts.append(_table(header, [[row.get(k) for k in header] for row in rows],
                            classes=chosen))
        parts.append('<p class="sub">Green rows are members of the chosen ensemble.</p>')
    else:
        parts.append("<p>No models were recorded.</p>")

    parts.append("<h2>Chosen ensemble</h2>")
    if body["ensemble_weights"]:
        ranked = sorted(body["ensemble_weights"].items(), key=lambda kv: -(kv[1] or 0))
        parts.append(_table(["model", "weight"], ranked, numeric=("weight",)))
    else:
        parts.append("<p>No ensemble weights were recorded.</p>")

    for name, caption in figures:
        parts.append(f"<h2>{esc(caption)}</h2>")
        parts.append(f'<figure><img src="{esc(name)}" alt="{esc(caption)}">'
                     f"<figcaption>{esc(_caption(name, body))}</figcaption></figure>")

    if body["feature_importance"]:
        parts.append("<h2>Feature importance (values)</h2>")
        parts.append(_table(["feature", "importance"],
                            list(body["feature_importance"].items()), numeric=("importance",)))
    parts.append("<h2>Column types</h2>")
    if body["column_types"]:
        parts.append(_table(["column", "inferred type"], list(body["column_types"].items())))
    else:
        parts.append("<p>No column types were recorded.</p>")
    parts.append('<p class="sub">All numbers are in report.json beside this page.</p>')
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def _caption(name, body):
    if name == "confusion_matrix.png":
        return ("Rows are true classes, columns predicted ones; the right panel divides "
                "each row by its total (the recall of that class on the diagonal).")
    if name == "calibration.png":
        return ("Observed frequency against mean predicted probability in ten equal-width "
                "bins; points on the diagonal are calibrated. Marker area follows the rows "
                "in a bin; hollow markers are bins of fewer than "
                f"{report_plots.SPARSE_BIN_ROWS} rows, left off the line. Grey bars: how "
                "many predictions fall in each bin. ECE: expected calibration error.")
    if name == "residuals.png":
        return "Residual = actual - predicted; a good model's residuals centre on zero."
    if name == "predicted_vs_actual.png":
        return "Each point is a held-out row; the dashed line is a perfect prediction."
    return "Largest first, as the predictor's feature_importance() gives them."
