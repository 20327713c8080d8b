"""The report's pictures: confusion matrix, calibration, feature importance, residuals.

Each function takes numbers already computed by report.py (so the JSON and the picture
show the same values) and writes one PNG atomically. Figures are built on
matplotlib's `Figure` with the Agg canvas, never pyplot: no display, no global figure
state, safe inside a server thread.
"""

from __future__ import annotations

import numpy as np

from tensorflux._src.train import atomic_write

_BLUE = "#1f77b4"
_ORANGE = "#d62728"
_GREY = "#b0b0b0"
# More classes than this and the per-class pictures become unreadable: the confusion
# matrix drops its cell numbers, calibration shows the most frequent classes only.
MAX_ANNOTATED_CLASSES = 20
MAX_CALIBRATION_PANELS = 12
MAX_IMPORTANCE_BARS = 25
MAX_SCATTER_POINTS = 5000
SPARSE_BIN_ROWS = 5


def _figure(width, height):
    import matplotlib
    matplotlib.use("Agg")  # no display needed; also safe in threads and on servers
    from matplotlib.figure import Figure
    return Figure(figsize=(width, height), dpi=100)


def _save(figure, path):
    figure.tight_layout()
    atomic_write.write_with(path, lambda tmp: figure.savefig(tmp, format="png"))


def _short(label, width=18):
    text = str(label)
    return text if len(text) <= width else text[:width - 1] + "…"


def confusion_matrix(path, labels, counts, normalized):
    """Counts and row-normalized (recall per true class) side by side."""
    k = len(labels)
    side = min(max(4.0, 0.45 * k + 2.5), 11.0)
    figure = _figure(2 * side + 1, side)
    names = [_short(c, 12) for c in labels]
    for index, (values, title, fmt) in enumerate((
            (counts, "counts", "{:d}"),
            (normalized, "row-normalized (share of each true class)", "{:.2f}"))):
        axes = figure.add_subplot(1, 2, index + 1)
        top = values.max() if values.size and values.max() > 0 else 1
        image = axes.imshow(values, cmap="Blues", vmin=0, vmax=top, aspect="equal")
        figure.colorbar(image, ax=axes, fraction=0.046, pad=0.04)
        axes.set_title(title)
        axes.set_xlabel("predicted")
        axes.set_ylabel("true")
        axes.set_xticks(range(k))
        axes.set_yticks(range(k))
        axes.set_xticklabels(names, rotation=45 if k > 4 else 0, ha="right" if k > 4 else "center")
        axes.set_yticklabels(names)
        if k <= MAX_ANNOTATED_CLASSES:
            size = 11 if k <= 6 else 8 if k <= 12 else 6
            for i in range(k):
                for j in range(k):
                    value = values[i, j]
                    text = fmt.format(int(value) if fmt == "{:d}" else float(value))
                    axes.text(j, i, text, ha="center", va="center", fontsize=size,
                              color="white" if value > top / 2 else "black")
    _save(figure, path)


def calibration(path, curves, title):
    """One panel per class: the reliability curve (observed frequency against mean
    predicted probability per bin) above the diagonal of perfect calibration, with the
    histogram of predicted probabilities as grey bars on a second axis."""
    n = len(curves)
    cols = 1 if n == 1 else min(n, 4)
    rows = -(-n // cols)
    figure = _figure(4.6 * cols if n > 1 else 6.0, 4.0 * rows if n > 1 else 5.0)
    for index, curve in enumerate(curves):
        axes = figure.add_subplot(rows, cols, index + 1)
        edges = np.asarray(curve["bin_edges"])
        centers = (edges[:-1] + edges[1:]) / 2
        counts = np.asarray(curve["count"], dtype=float)
        hist = axes.twinx()
        hist.bar(centers, counts, width=np.diff(edges) * 0.9, color=_GREY, alpha=0.5,
                 zorder=0)
        hist.set_ylabel("predictions per bin", color="#707070", fontsize=8)
        hist.tick_params(axis="y", labelsize=7, colors="#707070")
        if counts.max() > 0.5 * counts.sum() and counts.sum() >= 50:
            # One-vs-rest probabilities pile up near 0: on a linear axis every other
            # bin would be invisible next to that one.
            hist.set_yscale("log")
            hist.set_ylim(0.8, max(counts.max(), 1) ** 3)  # bars in the lower third
            hist.set_yticks([10 ** i for i in range(int(np.log10(counts.max())) + 1)])
            hist.set_ylabel("predictions per bin (log)", color="#707070", fontsize=8)
        else:
            hist.set_ylim(0, max(counts.max(), 1) * 3)  # bars in the lower third
        axes.set_zorder(hist.get_zorder() + 1)
        axes.patch.set_visible(False)
        axes.plot([0, 1], [0, 1], "--", color="#505050", linewidth=1, label="perfect")
        seen = counts > 0
        x = np.asarray(curve["mean_predicted"], dtype=float)[seen]
        y = np.asarray(curve["observed"], dtype=float)[seen]
        # A bin of 1 row swings between 0 and 1: marker area follows the row count so
        # the eye weighs the points as the ECE does.
        sizes = 12 + 200 * np.sqrt(counts[seen] / counts.max())
        # The line joins only bins with enough rows to mean something; sparser bins
        # are hollow markers.
        solid = counts[seen] >= SPARSE_BIN_ROWS
        axes.plot(x[solid], y[solid], "-", color=_BLUE, alpha=0.6, linewidth=1.2)
        axes.scatter(x[solid], y[solid], s=sizes[solid], color=_BLUE, edgecolors="white",
                     linewidths=0.5, zorder=3, label="model (area ∝ rows)")
        if (~solid).any():
            axes.scatter(x[~solid], y[~solid], s=sizes[~solid], facecolors="none",
                         edgecolors=_BLUE, linewidths=0.8, zorder=3,
                         label=f"bin of < {SPARSE_BIN_ROWS} rows")
        axes.set_xlim(0, 1)
        axes.set_ylim(-0.02, 1.02)
        axes.set_title(f"{_short(curve['label'], 24)}   ECE {curve['ece']:.3f}   "
                       f"Brier {curve['brier']:.3f}", fontsize=9)
        axes.set_xlabel("predicted probability", fontsize=8)
        axes.set_ylabel("observed frequency", fontsize=8)
        axes.grid(alpha=0.3)
        if index == 0:
            axes.legend(loc="upper left", fontsize=8, markerscale=0.5)
    figure.suptitle(title, fontsize=11)
    _save(figure, path)


def feature_importance(path, names, values):
    """Horizontal bars, most important on top; negative importances (a permutation that
    helped) in red."""
    total = len(names)
    names, values = names[:MAX_IMPORTANCE_BARS], np.asarray(values[:MAX_IMPORTANCE_BARS])
    figure = _figure(8, max(2.5, 0.32 * len(names) + 1.2))
    axes = figure.add_subplot(1, 1, 1)
    positions = np.arange(len(names))[::-1]
    axes.barh(positions, values, color=[_BLUE if v >= 0 else _ORANGE for v in values])
    axes.set_yticks(positions)
    axes.set_yticklabels([_short(n, 30) for n in names], fontsize=9)
    axes.axvline(0, color="#505050", linewidth=0.8)
    axes.set_xlabel("importance")
    axes.set_title("feature importance" + (
        f" (top {len(names)} of {total})" if total > len(names) else ""))
    axes.grid(axis="x", alpha=0.3)
    _save(figure, path)


def _sample(n):
    """Indices of at most MAX_SCATTER_POINTS rows (fixed seed): a scatter of 100,000
    points is a blot and slow to draw; the histogram still uses every row."""
    if n <= MAX_SCATTER_POINTS:
        return np.arange(n)
    return np.sort(np.random.default_rng(0).choice(n, MAX_SCATTER_POINTS, replace=False))


def residuals(path, y_pred, residual):
    """Residual (actual - predicted) against prediction, and their histogram."""
    figure = _figure(11, 4.2)
    axes = figure.add_subplot(1, 2, 1)
    rows = _sample(len(residual))
    axes.scatter(y_pred[rows], residual[rows], s=10, alpha=0.6, color=_BLUE, edgecolors="none")
    axes.axhline(0, color="#505050", linewidth=1, linestyle="--")
    axes.set_xlabel("predicted")
    axes.set_ylabel("residual (actual - predicted)")
    axes.set_title("residuals against predictions")
    axes.grid(alpha=0.3)
    axes = figure.add_subplot(1, 2, 2)
    axes.hist(residual, bins=min(40, max(10, len(residual) // 10)), color=_BLUE, alpha=0.8)
    axes.axvline(0, color="#505050", linewidth=1, linestyle="--")
    axes.set_xlabel("residual")
    axes.set_ylabel("rows")
    axes.set_title(f"residuals: mean {np.mean(residual):.3g}, sd {np.std(residual):.3g}")
    axes.grid(alpha=0.3)
    _save(figure, path)


def predicted_vs_actual(path, y_true, y_pred, rmse, r2):
    figure = _figure(5.6, 5.4)
    axes = figure.add_subplot(1, 1, 1)
    rows = _sample(len(y_true))
    axes.scatter(y_true[rows], y_pred[rows], s=10, alpha=0.6, color=_BLUE, edgecolors="none")
    low = float(min(np.min(y_true), np.min(y_pred)))
    high = float(max(np.max(y_true), np.max(y_pred)))
    pad = (high - low) * 0.03 or 1.0
    axes.plot([low - pad, high + pad], [low - pad, high + pad], "--", color="#505050",
              linewidth=1, label="predicted = actual")
    axes.set_xlim(low - pad, high + pad)
    axes.set_ylim(low - pad, high + pad)
    axes.set_aspect("equal")
    axes.set_xlabel("actual")
    axes.set_ylabel("predicted")
    axes.set_title(f"predicted vs actual   RMSE {rmse:.4g}   R² {r2:.3f}")
    axes.legend(loc="upper left", fontsize=8)
    axes.grid(alpha=0.3)
    _save(figure, path)
