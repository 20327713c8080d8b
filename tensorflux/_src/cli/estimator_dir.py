"""`tensorflux eval --logdir MODEL_DIR` on a tf.estimator model_dir (TF1's layout:
`checkpoint`, `model.ckpt-N.*`, `graph.pbtxt`, `eval*/events.out.tfevents.*`).

A model_dir holds no description of the model_fn, so nothing can be re-run from it;
what the command reads is what TF's own tools read: the latest checkpoint's step and
the evaluations `Estimator.evaluate` recorded (one row per eval directory, the values
at its newest step)."""

from __future__ import annotations

import glob
import os

from rich.table import Table

from tensorflux._src.cli import report
from tensorflux._src.summary.summary_iterator import summary_iterator
from tensorflux._src.train import checkpoint_management


def is_estimator_dir(path):
    return (os.path.exists(os.path.join(path, "checkpoint"))
            and not os.path.exists(os.path.join(path, "run.json")))


def latest_evaluations(path):
    """{eval dir name: {"global_step": step, tag: value}} from each eval*/ directory's
    event files, at the newest step recorded there."""
    results = {}
    for directory in sorted(glob.glob(os.path.join(path, "eval*"))):
        newest = {}
        for events in sorted(glob.glob(os.path.join(directory, "events.out.tfevents.*"))):
            for event in summary_iterator(events):
                if not event.HasField("summary"):
                    continue
                values = {v.tag: v.simple_value for v in event.summary.value
                          if v.HasField("simple_value")}
                if values and event.step >= newest.get("global_step", -1):
                    if event.step > newest.get("global_step", -1):
                        newest = {"global_step": event.step}
                    newest.update(values)
        if newest:
            results[os.path.basename(directory)] = newest
    return results


def report_estimator_dir(path):
    """Prints and returns the model_dir's latest checkpoint and evaluations."""
    checkpoint = checkpoint_management.latest_checkpoint(path)
    evaluations = latest_evaluations(path)
    report.console.print(f"tf.estimator model_dir {path}: latest checkpoint {checkpoint}",
                         soft_wrap=True)
    if not evaluations:
        report.console.print("No evaluations recorded (no eval*/ event files): run "
                             "Estimator.evaluate or train_and_evaluate to record some.")
    for name, values in evaluations.items():
        table = Table(title=f"{name} at step {values['global_step']:,}")
        table.add_column("metric")
        table.add_column("value", justify="right")
        for tag, value in sorted(values.items()):
            if tag != "global_step":
                table.add_row(tag, f"{value:.4f}")
        report.console.print(table)
    return {"checkpoint": checkpoint, "evaluations": evaluations}
