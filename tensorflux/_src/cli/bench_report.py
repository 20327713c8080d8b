"""What `tensorflux bench` leaves: a rich table on the console, bench.json and bench.png.

Both files are written atomically (a temporary file, then os.replace), so a run killed
while writing never leaves half a file for a dashboard to choke on.
"""

from __future__ import annotations

import json
import os

from rich.table import Table

from tensorflux._src.cli.report import console


def cost_per_million_images(price_per_hour, images_per_sec):
    """Dollars to train on a million images at `price_per_hour` dollars per hour."""
    return price_per_hour / (images_per_sec * 3600.0) * 1e6


def results_table(results):
    rows = results["rows"]
    table = Table(title=f"tensorflux bench {results['model']} "
                        f"({results['image_size']}x{results['image_size']}, "
                        f"{results['device']})")
    columns = [("precision", "left"), ("batch", "right"), ("images/sec", "right"),
               ("min-max", "right"), ("first step s", "right")]
    optional = [("real data img/s", "real_data_images_per_sec"),
                ("slowdown", "real_data_slowdown"),
                ("JAX img/s", "jax_images_per_sec"), ("time tfx/JAX", "time_ratio_vs_jax"),
                ("$/M images", "cost_per_million_images")]
    optional = [(title, key) for title, key in optional if any(key in r for r in rows)]
    for title, justify in columns:
        table.add_column(title, justify=justify)
    for title, _ in optional:
        table.add_column(title, justify="right")
    for r in rows:
        cells = [r["precision"], str(r["batch_size"]), f"{r['images_per_sec']:,.1f}",
                 f"{r['min_images_per_sec']:,.0f}-{r['max_images_per_sec']:,.0f}",
                 f"{r['first_step_seconds']:.1f}"]
        cells += [_cell(key, r.get(key)) for _, key in optional]
        table.add_row(*cells)
    # Logs and pipes get 80 columns by default, too few for this table.
    console.print(table, width=None if console.is_terminal else 150)


def _cell(key, value):
    if value is None:
        return "-"
    if key in ("time_ratio_vs_jax", "real_data_slowdown"):
        return f"{value:.2f}x"
    if key == "cost_per_million_images":
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
    """Images/sec against batch size: one line per precision, and per precision's peer."""
    import matplotlib
    matplotlib.use("Agg")  # no display needed
    from matplotlib.figure import Figure

    figure = Figure(figsize=(6, 4), dpi=100)
    axes = figure.add_subplot(1, 1, 1)
    for precision in results["precisions"]:
        rows = [r for r in results["rows"] if r["precision"] == precision]
        sizes = [r["batch_size"] for r in rows]
        axes.plot(sizes, [r["images_per_sec"] for r in rows], "o-",
                  label=f"tensorflux {precision}")
        peer = [(r["batch_size"], r["jax_images_per_sec"]) for r in rows
                if r.get("jax_images_per_sec")]
        if peer:
            axes.plot(*zip(*peer), "s--", label=f"JAX {precision}")
    axes.set_xscale("log", base=2)
    axes.set_xlabel("batch size")
    axes.set_ylabel("images/sec")
    axes.set_title(f"{results['model']} training step, {results['image_size']}px")
    axes.grid(alpha=0.3)
    axes.legend()
    figure.tight_layout()
    tmp = path + ".tmp"
    figure.savefig(tmp, format="png")
    os.replace(tmp, path)
