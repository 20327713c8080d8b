"""`tensorflux eval`: evaluate a run's checkpoint on its dataset's splits.

The model and dataset come from the run's run.json, so `tensorflux eval --logdir DIR`
needs nothing else; `--checkpoint` picks an older checkpoint than the latest and
`--dataset` evaluates on other data of the same shape.
"""

from __future__ import annotations

import tensorflux as tf
from tensorflux._src.cli import data_source, estimator_dir, report, train_job
from tensorflux._src.cli.errors import UsageError
from tensorflux._src.cli.model_graph import ClassifierGraph, evaluate_splits

SPLITS = ("train", "validation", "test")


def evaluate(logdir=None, checkpoint=None, dataset=None, split="test", model=None):
    """Returns {split: (examples, loss, accuracy)} for the requested split(s); for a
    tf.estimator model_dir, what it recorded (estimator_dir.py)."""
    if logdir is not None and estimator_dir.is_estimator_dir(logdir):
        return estimator_dir.report_estimator_dir(logdir)
    run, stored = train_job.find_run({"logdir": logdir, "model": model, "dataset": dataset})
    if stored is None:
        raise UsageError(f"{run.path} is not a training run (no run.json); train one with "
                         f"`tensorflux train --logdir {run.path}` or pass its --logdir")
    options = train_job.resolve_options({}, stored)
    checkpoint = checkpoint or tf.train.latest_checkpoint(run.path)
    if checkpoint is None or not tf.train.checkpoint_exists(checkpoint):
        raise UsageError(f"no checkpoint {'at ' + repr(checkpoint) if checkpoint else 'in '}"
                         f"{'' if checkpoint else run.path}; train first or pass --checkpoint")
    splits = SPLITS if split == "all" else (split,)
    for name in splits:
        if name not in SPLITS:
            raise UsageError(f"--split must be one of {', '.join(SPLITS)} or all, got {name!r}")

    data = data_source.load(dataset or options["dataset"], seed=options["seed"])
    net = ClassifierGraph(options["model"], data.input_shape, data.num_classes)
    with tf.Session(graph=net.graph) as sess:
        step = net.restore(sess, checkpoint, f"{options['model']} on {data.name}")
        results = evaluate_splits(net, sess, data, splits)
    report.results_table(f"{checkpoint} (step {step:,}) on {data.name}",
                         [(name, *values) for name, values in results.items()])
    for name, (_, _, accuracy) in results.items():
        report.console.print(f"{name.capitalize()} accuracy: {accuracy:.2%}")
    return results
