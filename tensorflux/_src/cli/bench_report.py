"""What `tensorflux bench` leaves: a rich table on the console, bench.json and bench.png.

Both files are written atomically (a temporary file, then os.replace), so a run killed
while writing never leaves half a file for a dashboard to choke on.
"""

from __future__ import annotations

import json
import os

from rich.console import Console
from rich.table import Table

from tensorflux._src.cli.report import console

# Logs and pipes get 80 columns by default, too few for the table with three peers.
TABLE_WIDTH = 180


def cost_per_million(price_per_hour, per_sec):
    """Dollars to train on a million images (or tokens) at `price_per_hour` dollars per
    hour and `per_sec` of them a second."""
    return price_per_hour / (per_sec * 3600.0) * 1e6


# Short names for the table's columns.
_UNIT_ABBREVIATIONS = {"images": "img", "tokens": "tok"}


def _title(results):
    if results.get("unit") == "tokens":
        return (f"tensorflux bench {results['model']} ({results['seq_len']} tokens, "
                f"{results['device']})")
    return (f"tensorflux bench {results['model']} "
            f"({results['image_size']}x{results['image_size']}, {results['device']})")


def results_table(results):
    rows = results["rows"]
    unit = results.get("unit", "images")
    short = _UNIT_ABBREVIATIONS.get(unit, unit)
    table = Table(title=_title(results))
    columns = [("precision", "left"), ("batch", "right"), (f"{unit}/sec", "right")]
    if unit == "tokens":
        columns.append(("seq/sec", "right"))
    columns += [("min-max", "right"), ("first step s", "right")]
    optional = [("real data img/s", "real_data_images_per_sec"),
                ("slowdown", "real_data_slowdown")]
    for peer in results.get("peers") or []:
        label = peer.get("short", peer["name"])
        optional += [(f"{label} {short}/s", f"{peer['key']}_{unit}_per_sec"),
                     (f"time tfx/{label}", f"time_ratio_vs_{peer['key']}")]
    optional.append((f"$/M {unit}", f"cost_per_million_{unit}"))
    optional = [(title, key) for title, key in optional if any(key in r for r in rows)]
    for title, justify in columns:
        table.add_column(title, justify=justify)
    for title, _ in optional:
        table.add_column(title, justify="right")
    for r in rows:
        cells = [r["precision"], str(r["batch_size"]), f"{r[f'{unit}_per_sec']:,.1f}"]
        if unit == "tokens":
            cells.append(f"{r['sequences_per_sec']:,.2f}")
        cells += [f"{r[f'min_{unit}_per_sec']:,.0f}-{r[f'max_{unit}_per_sec']:,.0f}",
                  f"{r['first_step_seconds']:.1f}"]
        cells += [_cell(key, r.get(key)) for _, key in optional]
        table.add_row(*cells)
    if console.is_terminal:
        console.print(table)
    else:  # print(width=...) cannot widen a console past its own width
        Console(file=console.file, width=TABLE_WIDTH, highlight=False).print(table)


def _cell(key, value):
    if value is None:
        return "-"
    if key.startswith("time_ratio_vs_") or key == "real_data_slowdown":
        return f"{value:.2f}x"
    if key.startswith("cost_per_million_"):
        return f"${value:,.2f}"
    return f"{value:,.1f}"


def time_to_accuracy_line(tta):
    if tta["reached"]:
        console.print(f"Reached {tta['target']:.1%} test accuracy after {tta['epochs']} "
                      f"epoch(s), {tta['seconds']:.1f}s of training", soft_wrap=True)
    else:
        console.print(f"Did not reach {tta['target']:.1%} test accuracy within "
                      f"{tta['epochs']} epoch(s) ({tta['seconds']:.1f}s; final "
                      f"{tta['test_accuracy']:.1%}); pass a larger --max-epochs",
                      soft_wrap=True)


def write_json(results, path):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(results, f, indent=2)
        f.write("\n")
    os.replace(tmp, path)


def plot(results, path):
    """Images (or tokens) per second against batch size: one color per implementation
    (tensorflux, then each peer), solid for float32 and dashed for bfloat16."""
    import matplotlib
    matplotlib.use("Agg")  # no display needed
    from matplotlib.figure import Figure

    unit = results.get("unit", "images")
    lines = [("tensorflux", f"{unit}_per_sec", "o")]
    lines += [(peer["name"], f"{peer['key']}_{unit}_per_sec", "s")
              for peer in results.get("peers") or []]
    figure = Figure(figsize=(7.5, 4), dpi=100)
    axes = figure.add_subplot(1, 1, 1)
    for color, (name, key, marker) in enumerate(lines):
        for precision in results["precisions"]:
            points = [(r["batch_size"], r[key]) for r in results["rows"]
                      if r["precision"] == precision and r.get(key)]
            if points:
                axes.plot(*zip(*points), marker=marker, color=f"C{color}",
                          linestyle="-" if precision == "float32" else "--",
                          label=f"{name} {precision}")
    axes.set_xscale("log", base=2)
    axes.set_xlabel("batch size")
    axes.set_ylabel(f"{unit}/sec")
    size = (f"{results['seq_len']} tokens" if unit == "tokens"
            else f"{results['image_size']}px")
    axes.set_title(f"{results['model']} training step, {size}")
    axes.grid(alpha=0.3)
    axes.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.02, 1.0))
    figure.tight_layout()
    tmp = path + ".tmp"
    figure.savefig(tmp, format="png")
    os.replace(tmp, path)
