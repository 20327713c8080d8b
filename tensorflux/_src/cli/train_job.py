"""`tensorflux train`: train a classifier, checkpoint each epoch, resume on rerun.

A run is identified by its directory. Its first invocation stores the options in
run.json; running the same command again restores the latest checkpoint and continues
from the epoch after it (or, when all epochs are done, only evaluates). The options a
checkpoint depends on (model, dataset, optimizer, batch size, seed) must not change
between invocations; the number of epochs and the learning rate may.
"""

from __future__ import annotations

import os
import time

import numpy as np

import tensorflux as tf
from tensorflux._src.cli import classifiers, data_source, report, teacher
from tensorflux._src.cli.errors import UsageError
from tensorflux._src.cli.model_graph import (
    ClassifierGraph, check_training, evaluate_splits, scalar_summary,
)
from tensorflux._src.cli.run_dir import RunDirectory

DEFAULTS = {"model": "auto", "dataset": "digits", "epochs": 25, "batch_size": 64,
            "lr": 3e-3, "optimizer": "adam", "seed": 0}
# The tables have 100-500 training rows: smaller batches and more epochs give the
# optimizer enough steps (measured: iris/wine/breast_cancer at 90/100/98% test accuracy).
TABLE_DEFAULTS = {"epochs": 100, "batch_size": 16, "lr": 1e-2}
FIXED_ON_RESUME = ("model", "dataset", "optimizer", "batch_size", "seed", "teacher",
                   "train_examples")
# Options of distillation (--teacher); stored in run.json only by a run that distills.
DISTILL_OPTIONS = ("teacher", "temperature", "soft_weight")
SUMMARY_EVERY_STEPS = 10


# Options that make `tensorflux train` parameter-server training (ps_train_job.py).
PS_OPTIONS = ("workers", "ps", "sync", "backup_workers", "address")


def default_logdir(model, dataset):
    return os.path.join("runs", f"{model}-{data_source.dataset_name(dataset)}")


def resolve_options(given, stored):
    """Stored options, then the ones given on the command line, then the defaults."""
    given = dict(given)
    dataset = given.get("dataset") or (stored or DEFAULTS)["dataset"]
    kind = data_source.kind_of(dataset)
    if given.get("model") is not None:
        given["model"] = classifiers.resolve(given["model"], kind)
    options = dict(DEFAULTS, **(TABLE_DEFAULTS if kind == "table" else {}))
    options["model"] = classifiers.resolve(options["model"], kind)
    options.update(stored or {})
    for key, value in given.items():
        if value is None:
            continue
        if stored is not None and key in FIXED_ON_RESUME and stored.get(key) != value:
            raise UsageError(
                f"this run was started with --{key.replace('_', '-')} {stored.get(key)}, "
                f"its checkpoints need that; pass another --logdir to start a new run")
        options[key] = value
    if options["epochs"] < 1:
        raise UsageError(f"--epochs must be at least 1, got {options['epochs']}")
    if options["batch_size"] < 1:
        raise UsageError(f"--batch-size must be at least 1, got {options['batch_size']}")
    if options.get("teacher") is None:
        for key in DISTILL_OPTIONS[1:]:
            if options.get(key) is not None:
                raise UsageError(f"--{key.replace('_', '-')} needs --teacher RUN_DIR")
            options.pop(key, None)
    else:
        options.setdefault("temperature", None)
        options.setdefault("soft_weight", None)
        if options["temperature"] is None:
            options["temperature"] = teacher.DEFAULT_TEMPERATURE
        if options["soft_weight"] is None:
            options["soft_weight"] = teacher.DEFAULT_SOFT_WEIGHT
        teacher.check_options(options["temperature"], options["soft_weight"])
    return options


def find_run(given):
    """The run directory and its stored options (None for a new run)."""
    logdir = given.get("logdir")
    if logdir is None:
        dataset = given.get("dataset") or DEFAULTS["dataset"]
        model = classifiers.resolve(given.get("model") or "auto", data_source.kind_of(dataset))
        logdir = default_logdir(model, dataset)
    run = RunDirectory(logdir)
    return run, run.read_config()


def prepare_run(given):
    """(run directory, its stored options or None, the options, the dataset) for a
    training command, after checking the optimizer options."""
    run, stored = find_run(given)
    options = resolve_options({k: v for k, v in given.items() if k != "logdir"}, stored)
    check_training(options["optimizer"], options["lr"])
    data = data_source.load(options["dataset"], seed=options["seed"])
    if options.get("train_examples") is not None:
        data = data_source.first_train_examples(data, options["train_examples"])
    if stored is None and os.path.exists(os.path.join(run.path, "checkpoint")):
        raise UsageError(f"{run.path} has checkpoints but no run.json; pass another "
                         f"--logdir or delete the directory")
    return run, stored, options, data


def train(**given):
    """Runs the training job; returns the final results as a dict."""
    if any(given.get(k) is not None for k in PS_OPTIONS):
        if any(given.get(k) is not None for k in DISTILL_OPTIONS):
            raise UsageError("--teacher is not supported with parameter-server training "
                             "(--workers); distill in one process")
        from tensorflux._src.cli import ps_train_job  # parameter-server training on Ray
        return ps_train_job.train(**given)
    run, stored, options, data = prepare_run(given)
    soft_targets = None
    if options.get("teacher") is not None:
        soft_targets, teacher_model = teacher.teacher_logits(options["teacher"], data)

    steps_per_epoch = -(-len(data.train) // options["batch_size"])
    total_steps = steps_per_epoch * options["epochs"]
    net = ClassifierGraph(options["model"], data.input_shape, data.num_classes,
                          seed=options["seed"])
    distill = None if soft_targets is None else (options["temperature"],
                                                 options["soft_weight"])
    net.add_training(options["optimizer"], options["lr"], total_steps, distill=distill)
    saver = net.saver()
    run.create()
    run.write_config(options)
    history = run.read_history()

    report.console.print(
        f"Training [bold]{options['model']}[/] on [bold]{data.name}[/] "
        f"({len(data.train):,} train / {len(data.validation):,} validation / "
        f"{len(data.test):,} test, input {'x'.join(map(str, data.input_shape))}, "
        f"{data.num_classes} classes) in {run.path}", soft_wrap=True)
    if soft_targets is not None:
        report.console.print(
            f"Distilling from the teacher {teacher_model} in {options['teacher']} "
            f"(temperature {options['temperature']:g}, soft weight "
            f"{options['soft_weight']:g})", soft_wrap=True)
    with tf.Session(graph=net.graph) as sess:
        start_step = _restore_or_initialize(sess, net, saver, run)
        first_epoch = start_step // steps_per_epoch + 1
        history = [r for r in history if r["epoch"] < first_epoch]
        if first_epoch > options["epochs"]:
            report.console.print(f"All {options['epochs']} epochs are done; pass a larger "
                                 f"--epochs to train longer", soft_wrap=True)
        else:
            history = _train_epochs(sess, net, saver, data, options, run, first_epoch,
                                    history, new_run=start_step == 0,
                                    soft_targets=soft_targets)
        report.plot_curves(history, run.plot_path)
        return _final_report(sess, net, data, run, history)


def _train_epochs(sess, net, saver, data, options, run, first_epoch, history, new_run,
                  soft_targets=None):
    writer = tf.summary.FileWriter(run.path, net.graph if new_run else None)
    eval_writer = tf.summary.FileWriter(run.eval_path)
    try:
        for epoch in range(first_epoch, options["epochs"] + 1):
            record = _train_epoch(sess, net, data, options, epoch, writer, soft_targets)
            record["val_loss"], record["val_accuracy"] = net.evaluate(sess, data.validation)
            eval_writer.add_summary(scalar_summary(loss=record["val_loss"],
                                                   accuracy=record["val_accuracy"]),
                                    record["step"])
            # Checkpoint first, then history: a run killed in between loses one history
            # record, never training; a resumed run drops records past its checkpoint.
            saver.save(sess, run.checkpoint_prefix, global_step=record["step"])
            history.append(record)
            run.write_history(history)
            report.epoch_line(record, options["epochs"])
    finally:
        writer.close()
        eval_writer.close()
    return history


def _restore_or_initialize(sess, net, saver, run):
    checkpoint = tf.train.latest_checkpoint(run.path)
    if checkpoint is None:
        sess.run(net.initializer())
        return 0
    try:
        saver.restore(sess, checkpoint)
    except (tf.errors.NotFoundError, tf.errors.InvalidArgumentError) as exc:
        raise UsageError(f"cannot resume from {checkpoint}: {exc.message.splitlines()[0]}; "
                         f"pass another --logdir to start a new run") from None
    step = int(sess.run(net.global_step))
    report.console.print(f"Resuming from {checkpoint} (step {step:,})")
    return step


def _train_epoch(sess, net, data, options, epoch, writer, soft_targets=None):
    """One epoch; `soft_targets` (the teacher's logits per training row) feed
    `net.teacher_logits` when distilling. The loss reported is the labels'
    cross-entropy either way, so students and plain runs compare."""
    # Each epoch's order depends only on (seed, epoch), so a resumed run sees the
    # same batches the uninterrupted run would have.
    order = np.random.default_rng([options["seed"], epoch]).permutation(len(data.train))
    batch_size = options["batch_size"]
    steps = -(-len(order) // batch_size)
    loss_sum = correct = seen = 0.0
    started = time.perf_counter()
    with report.epoch_progress(epoch, options["epochs"], steps) as update:
        for i, start in enumerate(range(0, len(order), batch_size)):
            batch = order[start:start + batch_size]
            feed = {net.inputs: data.train.x[batch], net.labels: data.train.y[batch],
                    net.training: True}
            if soft_targets is not None:
                feed[net.teacher_logits] = soft_targets[batch]
            fetches = [net.train_op, net.loss, net.accuracy]
            if i % SUMMARY_EVERY_STEPS == 0:
                _, loss, accuracy, summary = sess.run(fetches + [net.summaries], feed)
                # Stamped with the step the batch was trained at, as SummarySaverHook does.
                writer.add_summary(summary, (epoch - 1) * steps + i)
            else:
                _, loss, accuracy = sess.run(fetches, feed)
            loss_sum += float(loss) * len(batch)
            correct += float(accuracy) * len(batch)
            seen += len(batch)
            update(i + 1, loss_sum / seen, correct / seen, seen / (time.perf_counter() - started))
    seconds = time.perf_counter() - started
    return {"epoch": epoch, "step": int(sess.run(net.global_step)),
            "train_loss": loss_sum / seen, "train_accuracy": correct / seen,
            "examples_per_sec": seen / seconds, "seconds": seconds}


def _final_report(sess, net, data, run, history):
    results = evaluate_splits(net, sess, data, ("train", "validation", "test"))
    return report_results(results, int(sess.run(net.global_step)), data, run, history)


def report_results(results, step, data, run, history):
    """Prints the per-split table and the test accuracy; returns the job's result dict
    (shared with parameter-server training, ps_train_job.py)."""
    report.results_table(f"{run.path} at step {step:,}",
                         [(name, *values) for name, values in results.items()])
    if history:
        report.console.print(f"Learning curves: {run.plot_path}")
    test_accuracy = results["test"][2]
    report.console.print(f"Test accuracy: {test_accuracy:.2%} ({len(data.test):,} examples)")
    return {"step": step, "test_loss": results["test"][1], "test_accuracy": test_accuracy,
            "logdir": run.path}
