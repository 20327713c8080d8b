"""The graph both jobs build: a classifier with its loss, accuracy and (for training)
the optimizer step, learning-rate schedule and summaries.

Training and evaluation build the same variables under the same names, so a checkpoint
written by `tensorflux train` restores into the graph `tensorflux eval` builds.
"""

from __future__ import annotations

import numpy as np

import tensorflux as tf
from tensorflux import distillation
from tensorflux._src.cli import classifiers
from tensorflux._src.cli.errors import UsageError

OPTIMIZERS = {
    "adam": tf.train.AdamOptimizer,
    "sgd": tf.train.GradientDescentOptimizer,
    "momentum": lambda lr: tf.train.MomentumOptimizer(lr, momentum=0.9),
    "rmsprop": tf.train.RMSPropOptimizer,
    "adagrad": tf.train.AdagradOptimizer,
}
EVAL_BATCH = 1000  # large batches evaluate fast; bounded so big test sets fit in memory


def check_training(optimizer, learning_rate):
    """UsageError unless --optimizer names one of OPTIMIZERS and --lr is positive."""
    if optimizer not in OPTIMIZERS:
        raise UsageError(f"--optimizer {optimizer!r} is unknown; choose one of "
                         f"{', '.join(OPTIMIZERS)}")
    if not learning_rate > 0:
        raise UsageError(f"--lr must be positive, got {learning_rate}")


def scheduled_optimizer(optimizer, learning_rate, global_step, total_steps):
    """(optimizer, its rate tensor): `optimizer` on a cosine decay of `learning_rate`
    over `total_steps` of `global_step`, in the default graph."""
    rate = tf.train.cosine_decay(learning_rate, global_step, max(total_steps, 1))
    return OPTIMIZERS[optimizer](rate), rate


class ClassifierGraph:
    """Placeholders in, per-batch loss sum and correct count out."""

    def __init__(self, model, input_shape, num_classes, seed=None, examples_key=None):
        """`examples_key` (for exports): `inputs` defaults to the float feature of that
        name parsed from `examples`, serialized tf.Examples; feeding `inputs` skips it.
        It adds no variables, so checkpoints restore either way."""
        self.graph = tf.Graph()
        with self.graph.as_default():
            tf.set_random_seed(seed)  # before any op: initializers take their seeds from it
            if examples_key is None:
                self.inputs = tf.placeholder(tf.float32, [None, *input_shape], name="inputs")
            else:
                self.examples = tf.placeholder(tf.string, [None], name="tf_example")
                parsed = tf.parse_example(self.examples, {examples_key: tf.FixedLenFeature(
                    list(input_shape), tf.float32)})[examples_key]
                self.inputs = tf.placeholder_with_default(parsed, [None, *input_shape],
                                                          name="inputs")
            self.labels = tf.placeholder(tf.int64, [None], name="labels")
            self.training = tf.placeholder_with_default(False, [], name="training")
            self.logits = classifiers.build(model, self.inputs, num_classes, self.training)
            per_example = tf.nn.sparse_softmax_cross_entropy_with_logits(
                labels=self.labels, logits=self.logits)
            self.loss = tf.reduce_mean(per_example, name="mean_cross_entropy")
            self.loss_sum = tf.reduce_sum(per_example)
            correct = tf.cast(tf.equal(tf.argmax(self.logits, 1), self.labels), tf.float32)
            self.accuracy = tf.reduce_mean(correct, name="batch_accuracy")
            self.correct_count = tf.reduce_sum(correct)
            self.global_step = tf.train.get_or_create_global_step()

    def add_training(self, optimizer, learning_rate, total_steps, distill=None):
        """The train op (with batch norm's UPDATE_OPS), a cosine schedule, summaries.

        `distill` (temperature, soft_weight) trains on tensorflux.distillation's loss
        against the `teacher_logits` placeholder (fed per batch) instead of the labels'
        cross-entropy alone. It adds no variables: checkpoints stay the plain model's."""
        check_training(optimizer, learning_rate)
        with self.graph.as_default():
            opt, self.learning_rate = scheduled_optimizer(optimizer, learning_rate,
                                                          self.global_step, total_steps)
            objective = self.loss
            if distill is not None:
                self.teacher_logits = tf.placeholder(tf.float32, self.logits.shape,
                                                     name="teacher_logits")
                temperature, soft_weight = distill
                objective = distillation.distillation_loss(
                    self.labels, self.logits, self.teacher_logits, temperature=temperature,
                    soft_weight=soft_weight, loss_collection=None)
                tf.summary.scalar("distillation_loss", objective)
            with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS)):
                self.train_op = opt.minimize(objective, global_step=self.global_step)
            # The same tags as the validation summaries, so TensorBoard overlays the
            # training and eval runs in one chart per metric.
            tf.summary.scalar("loss", self.loss)
            tf.summary.scalar("accuracy", self.accuracy)
            tf.summary.scalar("learning_rate", self.learning_rate)
            self.summaries = tf.summary.merge_all()

    def saver(self):
        with self.graph.as_default():
            return tf.train.Saver(max_to_keep=3)

    def restore(self, sess, checkpoint, what):
        """Restores `checkpoint` into this graph; returns its global step. A checkpoint of
        another model or shape is a one-line UsageError naming `what` was expected."""
        try:
            self.saver().restore(sess, checkpoint)
        except (tf.errors.NotFoundError, tf.errors.InvalidArgumentError) as exc:
            raise UsageError(f"cannot restore {checkpoint} into {what}: "
                             f"{exc.message.splitlines()[0]}") from None
        return int(sess.run(self.global_step))

    def initializer(self):
        with self.graph.as_default():
            return tf.global_variables_initializer()

    def evaluate(self, sess, split):
        """(mean loss, accuracy) over a whole split, in inference mode."""
        if len(split) == 0:
            return float("nan"), float("nan")
        loss_sum = correct = 0.0
        for start in range(0, len(split), EVAL_BATCH):
            feed = {self.inputs: split.x[start:start + EVAL_BATCH],
                    self.labels: split.y[start:start + EVAL_BATCH]}
            batch_loss, batch_correct = sess.run([self.loss_sum, self.correct_count], feed)
            loss_sum += float(batch_loss)
            correct += float(batch_correct)
        return loss_sum / len(split), correct / len(split)


def evaluate_splits(net, sess, data, names):
    """{split name: (examples, mean loss, accuracy)}."""
    return {name: (len(data.split(name)), *net.evaluate(sess, data.split(name)))
            for name in names}


def scalar_summary(**values) -> tf.Summary:
    """A Summary of plain numbers, for values computed outside the graph (validation)."""
    return tf.Summary(value=[tf.Summary.Value(tag=tag, simple_value=float(value))
                             for tag, value in values.items() if np.isfinite(value)])
