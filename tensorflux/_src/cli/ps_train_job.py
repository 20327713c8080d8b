"""`tensorflux train --workers N --ps M [--sync [--backup-workers B]] [--address ADDR]`.

The classifier `tensorflux train` trains (same model, dataset, optimizer, schedule and
variable names), trained by parameter-server tasks on Ray
(`tf.distribute.ParameterServerTraining`): N worker actors each take a shard of the
training set and push gradients to M ps actors holding the variables. Asynchronous
SGD by default; `--sync` wraps the optimizer in a SyncReplicasOptimizer that averages
the gradients of N - B workers per step (B backup workers). A local Ray instance is
started unless `--address` names a cluster.

The run directory is the one `tensorflux train` writes: run.json, a checkpoint per
epoch (committed from the ps shards, in the normal format, so `tensorflux eval` and
`export` read it), history.json with per-epoch validation, event files, curves.png.
Running the same command again resumes from the latest checkpoint. An epoch is
ceil(train examples / (batch size x gradients per step)) global steps: each
asynchronous step applies one worker's batch, each synchronous step N - B of them.
"""

from __future__ import annotations

import time

import numpy as np

import tensorflux as tf
from tensorflux._src.cli import report, train_job
from tensorflux._src.cli.errors import UsageError
from tensorflux._src.cli.model_graph import (
    ClassifierGraph, evaluate_splits, scalar_summary, scheduled_optimizer,
)

PROGRESS_EVERY_S = 2.0


class ClassifierModel:
    """model_fn: the classifier graph of `tensorflux train`, with its loss and accuracy."""

    def __init__(self, model, input_shape, num_classes, seed):
        self.model, self.input_shape = model, tuple(input_shape)
        self.num_classes, self.seed = num_classes, seed

    def __call__(self):
        net = ClassifierGraph(self.model, self.input_shape, self.num_classes, seed=self.seed)
        return {"loss": net.loss, "accuracy": net.accuracy}


class ClassifierOptimizer:
    """The optimizer function the ps tasks call: `--optimizer` with a cosine schedule
    over the ps task's global step, wrapped in SyncReplicasOptimizer with --sync."""

    def __init__(self, name, learning_rate, total_steps, replicas_to_aggregate, workers):
        self.name, self.learning_rate, self.total_steps = name, learning_rate, total_steps
        self.replicas_to_aggregate, self.workers = replicas_to_aggregate, workers

    def __call__(self):
        opt, _ = scheduled_optimizer(self.name, self.learning_rate,
                                     tf.train.get_or_create_global_step(), self.total_steps)
        if self.replicas_to_aggregate is not None:
            opt = tf.train.SyncReplicasOptimizer(opt, self.replicas_to_aggregate, self.workers)
        return opt


class ClassifierInput:
    """input_fn: worker i of n takes every n-th training example and reshuffles its
    shard each epoch, with an order that depends only on (seed, worker, epoch)."""

    def __init__(self, x, y, batch_size, seed):
        self.x, self.y, self.batch_size, self.seed = x, y, batch_size, seed

    def __call__(self, worker_index, num_workers):
        shard = np.arange(len(self.y))[worker_index::num_workers]
        epoch = 0
        while True:
            epoch += 1
            order = shard[np.random.default_rng([self.seed, worker_index, epoch])
                          .permutation(len(shard))]
            for start in range(0, len(order), self.batch_size):
                batch = order[start:start + self.batch_size]
                yield {"inputs": self.x[batch], "labels": self.y[batch], "training": True}


def check_options(workers, ps, sync, backup_workers):
    """(ps tasks, gradients per step or None for async) after checking the flags."""
    if workers is None:
        given = [f"--{k.replace('_', '-')}" for k, v in
                 (("ps", ps), ("sync", sync), ("backup_workers", backup_workers)) if v]
        raise UsageError(f"{', '.join(given) or '--address'} belong to parameter-server "
                         f"training; add --workers N to train with N worker tasks on Ray")
    if workers < 1:
        raise UsageError(f"--workers must be at least 1, got {workers}")
    ps = 1 if ps is None else ps
    if ps < 1:
        raise UsageError(f"--ps must be at least 1, got {ps}")
    if backup_workers is not None and not sync:
        raise UsageError("--backup-workers needs --sync: asynchronous training never "
                         "waits for a worker, so it has no backups")
    backups = backup_workers or 0
    if not 0 <= backups < workers:
        raise UsageError(f"--backup-workers must be between 0 and --workers - 1 = "
                         f"{workers - 1}, got {backups}")
    return ps, (workers - backups if sync else None)


def train(workers=None, ps=None, sync=None, backup_workers=None, address=None, **given):
    """Runs the parameter-server training job; returns the final results as a dict."""
    ps, replicas = check_options(workers, ps, sync, backup_workers)
    run, stored, options, data = train_job.prepare_run(given)
    per_step = (replicas or 1) * options["batch_size"]
    steps_per_epoch = -(-len(data.train) // per_step)
    total_steps = steps_per_epoch * options["epochs"]
    run.create()
    run.write_config(dict(options, parameter_servers={
        "workers": workers, "ps": ps, "sync": bool(sync),
        "backup_workers": workers - replicas if replicas else 0}))
    mode = (f"synchronous SGD, {replicas} of {workers} gradients per step" if replicas
            else "asynchronous SGD")
    report.console.print(
        f"Training [bold]{options['model']}[/] on [bold]{data.name}[/] with {workers} "
        f"worker{'s' * (workers > 1)} and {ps} ps task{'s' * (ps > 1)} on Ray ({mode}; "
        f"{len(data.train):,} train / {len(data.validation):,} validation / "
        f"{len(data.test):,} test) in {run.path}", soft_wrap=True)

    net = ClassifierGraph(options["model"], data.input_shape, data.num_classes)
    job = tf.distribute.ParameterServerTraining(
        ClassifierModel(options["model"], data.input_shape, data.num_classes, options["seed"]),
        ClassifierOptimizer(options["optimizer"], options["lr"], total_steps, replicas,
                            workers),
        ClassifierInput(data.train.x, data.train.y, options["batch_size"], options["seed"]),
        num_workers=workers, num_ps=ps, checkpoint_dir=run.path,
        save_checkpoint_steps=steps_per_epoch, max_to_keep=3, address=address)
    epochs = _Epochs(net, data, run, options, steps_per_epoch, per_step)
    try:
        job.start()
        if job.global_step:
            report.console.print(f"Resuming from {job.latest_checkpoint} "
                                 f"(step {job.global_step:,})")
        epochs.resume(job.global_step)
        if job.global_step >= total_steps:
            report.console.print(f"All {options['epochs']} epochs are done; pass a larger "
                                 f"--epochs to train longer", soft_wrap=True)
        else:
            result = job.train(max_steps=total_steps, on_progress=epochs.progress,
                               on_checkpoint=epochs.checkpoint,
                               progress_every_s=PROGRESS_EVERY_S)
            report.console.print(
                f"Reached step {result.global_step:,} in {result.seconds:.1f}s "
                f"({result.steps_per_sec:.1f} steps/s; {result.bytes_per_sec / 1e6:.1f} MB/s "
                f"of parameters and gradients; {result.stale_gradients_dropped} stale "
                f"gradients dropped; {result.worker_restarts} worker and "
                f"{result.ps_restarts} ps restarts)", soft_wrap=True)
        checkpoint = job.latest_checkpoint
    finally:
        job.close()
        epochs.close()
    report.plot_curves(epochs.history, run.plot_path)
    return _final_report(net, data, run, checkpoint, epochs.history, options)


class _Epochs:
    """Per-epoch records: each committed checkpoint is evaluated on the validation split
    and written to history.json and the event files, as `tensorflux train` does."""

    def __init__(self, net, data, run, options, steps_per_epoch, examples_per_step):
        self.net, self.data, self.run, self.options = net, data, run, options
        self.steps_per_epoch, self.examples_per_step = steps_per_epoch, examples_per_step
        self.sess = tf.Session(graph=net.graph)
        self.history = run.read_history()
        self.writer = tf.summary.FileWriter(run.path)
        self.eval_writer = tf.summary.FileWriter(run.eval_path)
        self.started, self.last_step = time.time(), 0

    def resume(self, step):
        self.last_step = step
        self.history = [r for r in self.history if r["step"] <= step]
        self.started = time.time()

    def progress(self, p):
        metrics = "  ".join(f"{k} {v:.4f}" for k, v in p.metrics.items())
        report.console.print(f"step {p.step:>6,}/{p.max_steps:,}  {metrics}  "
                             f"{p.steps_per_sec:.1f} steps/s", soft_wrap=True)

    def checkpoint(self, info):
        step, metrics = info.step, info.metrics
        self.net.restore(self.sess, info.prefix, f"{self.options['model']} on {self.data.name}")
        val_loss, val_accuracy = self.net.evaluate(self.sess, self.data.validation)
        seconds = info.saved_at - self.started  # when the epoch's last update was saved
        record = {"epoch": -(-step // self.steps_per_epoch), "step": step,
                  "train_loss": metrics.get("loss", float("nan")),
                  "train_accuracy": metrics.get("accuracy", float("nan")),
                  "val_loss": val_loss, "val_accuracy": val_accuracy,
                  "examples_per_sec": (step - self.last_step) * self.examples_per_step
                  / max(seconds, 1e-9), "seconds": seconds}
        self.writer.add_summary(scalar_summary(loss=record["train_loss"],
                                               accuracy=record["train_accuracy"]), step)
        self.eval_writer.add_summary(scalar_summary(loss=val_loss, accuracy=val_accuracy),
                                     step)
        self.history = [r for r in self.history if r["step"] < step] + [record]
        self.run.write_history(self.history)
        report.epoch_line(record, self.options["epochs"])
        self.started, self.last_step = info.saved_at, step

    def close(self):
        self.writer.close()
        self.eval_writer.close()
        self.sess.close()


def _final_report(net, data, run, checkpoint, history, options):
    with tf.Session(graph=net.graph) as sess:
        step = net.restore(sess, checkpoint, f"{options['model']} on {data.name}")
        results = evaluate_splits(net, sess, data, ("train", "validation", "test"))
    return train_job.report_results(results, step, data, run, history)
