"""`tensorflux train --teacher RUN_DIR`: the trained teacher a student distills from.

The teacher is another run directory of `tensorflux train` (its run.json names its model
and dataset, its latest checkpoint holds its weights). It is rebuilt in its own graph
(the same ClassifierGraph `eval` builds), restored in its own Session, and run once in
inference mode over the student's training split: its logits do not change during
training (no dropout, batch norm on its moving statistics), so computing them once gives
every batch exactly what a per-batch teacher pass would, at a fraction of the cost. The
student's graph takes them through a `teacher_logits` placeholder.
"""

from __future__ import annotations

import os

import numpy as np

import tensorflux as tf
from tensorflux._src.cli import data_source
from tensorflux._src.cli.errors import UsageError
from tensorflux._src.cli.model_graph import EVAL_BATCH, ClassifierGraph
from tensorflux._src.cli.run_dir import RunDirectory

DEFAULT_TEMPERATURE = 2.0
DEFAULT_SOFT_WEIGHT = 0.5


def check_options(temperature, soft_weight):
    if not temperature > 0:
        raise UsageError(f"--temperature must be positive, got {temperature}")
    if not 0.0 <= soft_weight <= 1.0:
        raise UsageError(f"--soft-weight must be between 0 and 1, got {soft_weight}")


def teacher_logits(teacher_dir, data):
    """(logits of the teacher for every row of data.train.x, the teacher's model name)."""
    run = RunDirectory(teacher_dir)
    stored = run.read_config() if os.path.isdir(teacher_dir) else None
    if stored is None:
        raise UsageError(f"--teacher {teacher_dir} is not a training run (no run.json); "
                         f"train the teacher first with `tensorflux train --logdir "
                         f"{teacher_dir}`")
    checkpoint = tf.train.latest_checkpoint(teacher_dir)
    if checkpoint is None:
        raise UsageError(f"--teacher {teacher_dir} has no checkpoint; train it first")
    if data_source.dataset_name(stored["dataset"]) != data.name:
        raise UsageError(f"--teacher {teacher_dir} was trained on {stored['dataset']}, but "
                         f"the student trains on {data.name}; distill on the teacher's "
                         f"dataset")
    teacher = ClassifierGraph(stored["model"], data.input_shape, data.num_classes)
    x = data.train.x
    with tf.Session(graph=teacher.graph) as sess:
        teacher.restore(sess, checkpoint, f"the teacher {stored['model']} on {data.name}")
        logits = [sess.run(teacher.logits, {teacher.inputs: x[i:i + EVAL_BATCH]})
                  for i in range(0, len(x), EVAL_BATCH)]
    return np.concatenate(logits).astype(np.float32), stored["model"]
