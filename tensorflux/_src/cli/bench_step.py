"""The graphs `tensorflux bench` times: a zoo classifier's training step on synthetic data
or behind a tf.data pipeline, or a zoo Transformer's on synthetic tokens, in float32 or
mixed bfloat16, and the timing loop itself.

A classifier's training step is forward + softmax cross-entropy + Momentum(0.9) with
batch norm's UPDATE_OPS. A Transformer's is the zoo's own `model_fn` train step: forward
with dropout, label-smoothed cross-entropy, Adam with the warm-up schedule. Synthetic
images, labels and tokens live in (non-trainable, local) variables, so a step reads
device buffers and the timing excludes host feeding.
"""

from __future__ import annotations

import dataclasses
import statistics
import time

import numpy as np

import tensorflux as tf
from tensorflux import models
from tensorflux.models.precision import bfloat16_getter

LEARNING_RATE, MOMENTUM = 0.1, 0.9


def classifier_logits(name, images, num_classes, precision, training=True):
    """float32 logits of zoo model `name` on float32 NHWC `images`."""
    if precision == "float32":
        return models.build(name, images, num_classes=num_classes, training=training)
    with tf.variable_scope(tf.get_variable_scope(), custom_getter=bfloat16_getter):
        logits = models.build(name, tf.cast(images, tf.bfloat16), num_classes=num_classes,
                              training=training)
    return tf.cast(logits, tf.float32)  # the softmax and its loss stay in float32


def add_train_op(logits, labels):
    """Mean cross-entropy and a Momentum step that also runs batch norm's updates."""
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=labels, logits=logits))
    with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS)):
        train_op = tf.train.MomentumOptimizer(LEARNING_RATE, MOMENTUM).minimize(loss)
    return loss, train_op


# -- inputs --------------------------------------------------------------------------------------
def synthetic_batch(batch_size, image_size, num_classes, seed=0):
    """Random images and labels held in local variables (fed to the device once)."""
    rng = np.random.default_rng(seed)
    images = rng.standard_normal((batch_size, image_size, image_size, 3)).astype(np.float32)
    labels = rng.integers(0, num_classes, batch_size).astype(np.int64)
    local = [tf.GraphKeys.LOCAL_VARIABLES]
    return (tf.Variable(images, trainable=False, collections=local, name="synthetic_images"),
            tf.Variable(labels, trainable=False, collections=local, name="synthetic_labels"))


def digits_images(x, image_size):
    """(N, 8, 8, 1) digits in [0, 1] -> (N, S, S, 3) bilinear-upscaled RGB, in the graph."""
    resized = tf.image.resize_images(x, [image_size, image_size])
    return tf.tile(resized, [1, 1, 1, 3])


def digits_pipeline(batch_size, image_size, seed=0):
    """A tf.data pipeline over the built-in digits: shuffle, per-image upscale to RGB,
    batch, prefetch. What a real input pipeline adds to a step, without a download."""
    from tensorflux import datasets
    (x, y), _ = datasets.load_digits()
    x = (x[..., None] / 16.0).astype(np.float32)

    def preprocess(image, label):
        return digits_images(image[None], image_size)[0], label

    data = (tf.data.Dataset.from_tensor_slices((x, y.astype(np.int64)))
            .shuffle(len(x), seed=seed).repeat()
            .map(preprocess)
            .batch(batch_size, drop_remainder=True)
            .prefetch(2))
    return tf.data.make_one_shot_iterator(data).get_next()


# -- one timed configuration ----------------------------------------------------------------------
class _SessionStep:
    """A session over `self.graph` holding `self.train_op` and `self.loss`; `run()` does
    one step and returns the loss."""

    def _start(self, config=None):
        with self.graph.as_default():
            init = [tf.global_variables_initializer(), tf.local_variables_initializer()]
        started = time.perf_counter()
        self.session = tf.Session(graph=self.graph, config=config)
        self.session.run(init)
        self.init_seconds = time.perf_counter() - started  # compiling the initializer

    def run(self):
        return self.session.run([self.train_op, self.loss])[1]

    def tuning(self):
        """Whether a compiled run of the session is still choosing its compiler options."""
        return any(executable.tuning for executable in self.session._executables.values())

    def close(self):
        self.session.close()


class TrainStep(_SessionStep):
    """A session holding one model's training step; `run()` does one step."""

    def __init__(self, model, batch_size, image_size, num_classes, precision,
                 real_data=False, seed=0, config=None):
        self.graph = tf.Graph()
        with self.graph.as_default():
            tf.set_random_seed(seed)
            if real_data:
                images, labels = digits_pipeline(batch_size, image_size, seed)
            else:
                images, labels = synthetic_batch(batch_size, image_size, num_classes, seed)
            self.images = images
            self.logits = classifier_logits(model, images, num_classes, precision)
            self.loss, self.train_op = add_train_op(self.logits, labels)
        self._start(config)


MAX_TUNING_STEPS = 100


def time_steps(run, batch_size, warmup, steps, windows, unit="images", tuning=None):
    """`unit`/sec per timed window after `warmup` steps (the first one compiles), and
    after more while `tuning()` says the compiler-option autotuner is still timing its
    candidates; `batch_size` is the number of `unit` (images, tokens) one step trains
    on."""
    started = time.perf_counter()
    first_loss = float(run())
    first_step = time.perf_counter() - started
    for _ in range(max(warmup - 1, 0)):
        run()
    for _ in range(MAX_TUNING_STEPS if tuning is not None else 0):
        if not tuning():
            break
        run()
    rates = []
    for _ in range(windows):
        started = time.perf_counter()
        for _ in range(steps):
            loss = run()
        rates.append(batch_size * steps / (time.perf_counter() - started))
    return {f"{unit}_per_sec": statistics.median(rates), f"min_{unit}_per_sec": min(rates),
            f"max_{unit}_per_sec": max(rates), f"window_{unit}_per_sec": rates,
            "first_step_seconds": first_step, "first_loss": first_loss,
            "last_loss": float(loss) if windows and steps else first_loss}


def bench_tensorflux(model, batch_size, image_size, num_classes, precision, timing,
                     real_data=False):
    step = TrainStep(model, batch_size, image_size, num_classes, precision, real_data)
    try:
        return time_steps(step.run, batch_size, **timing, tuning=step.tuning)
    finally:
        step.close()


# -- the Transformer -------------------------------------------------------------------------------
def transformer_config(spec, precision):
    """The zoo config of Transformer `spec` (its model_fn's vocabulary is the config's),
    computing in `precision`."""
    return dataclasses.replace(spec.config, activation_dtype=precision)


class TransformerTrainStep(_SessionStep):
    """A session holding a zoo Transformer's `model_fn` training step on fixed random
    tokens: a language model reads seq_len + 1 tokens and predicts each next one, a
    seq2seq model maps a random source of seq_len tokens to random targets of seq_len."""

    def __init__(self, spec, batch_size, seq_len, precision, seed=0):
        from tensorflux.models import transformer
        config = transformer_config(spec, precision)
        rng = np.random.default_rng(seed)
        local = [tf.GraphKeys.LOCAL_VARIABLES]

        def tokens(length, name):
            # Real tokens only: no padding, no end-of-sequence.
            ids = rng.integers(transformer.EOS_ID + 1, config.vocab_size,
                               (batch_size, length)).astype(np.int32)
            return tf.Variable(ids, trainable=False, collections=local, name=name)

        self.graph = tf.Graph()
        with self.graph.as_default():
            tf.set_random_seed(seed)
            if config.decoder_only:
                ids = tokens(seq_len + 1, "synthetic_tokens")
                features, labels = ids[:, :-1], ids[:, 1:]
            else:
                features = tokens(seq_len, "synthetic_source")
                labels = tokens(seq_len, "synthetic_targets")
            out = transformer.model_fn(features, labels, "train", config)
            self.logits, self.loss, self.train_op = (out.predictions["logits"], out.loss,
                                                     out.train_op)
        self._start()


def bench_transformer(spec, batch_size, seq_len, precision, timing):
    """Tokens/sec (and sequences/sec) of Transformer `spec`'s training step."""
    step = TransformerTrainStep(spec, batch_size, seq_len, precision)
    try:
        row = time_steps(step.run, batch_size * seq_len, **timing, unit="tokens",
                         tuning=step.tuning)
    finally:
        step.close()
    row["sequences_per_sec"] = row["tokens_per_sec"] / seq_len
    return row


# -- time to accuracy -----------------------------------------------------------------------------
def time_to_accuracy(model, target, max_epochs, image_size, batch_size=64,
                     learning_rate=0.05, seed=0):
    """Trains `model` on the built-in digits upscaled to image_size x image_size x 3 and
    evaluates the test split after each epoch; returns when the test accuracy reaches
    `target` (a fraction) or after `max_epochs`. Seconds count training only."""
    from tensorflux._src.cli import data_source
    data = data_source.load("digits", seed=seed)
    graph = tf.Graph()
    with graph.as_default():
        tf.set_random_seed(seed)
        x = tf.placeholder(tf.float32, [None, 8, 8, 1], name="digits")
        y = tf.placeholder(tf.int64, [None], name="labels")
        images = digits_images(x, image_size)
        with tf.variable_scope("net"):
            logits = models.build(model, images, num_classes=data.num_classes, training=True)
        _, train_op = add_train_op(logits, y)
        # The evaluation tower shares the variables and uses batch norm's moving averages.
        with tf.variable_scope("net", reuse=True):
            eval_logits = models.build(model, images, num_classes=data.num_classes,
                                       training=False)
        correct = tf.reduce_sum(tf.cast(tf.equal(tf.argmax(eval_logits, 1), y), tf.int32))
        init = tf.global_variables_initializer()
    history, seconds = [], 0.0
    rng = np.random.default_rng(seed)
    with tf.Session(graph=graph) as sess:
        sess.run(init)
        for epoch in range(1, max_epochs + 1):
            order = rng.permutation(len(data.train))
            started = time.perf_counter()
            # Whole batches only: one compiled step shape, as a real input pipeline gives.
            for start in range(0, len(order) - batch_size + 1, batch_size):
                batch = order[start:start + batch_size]
                sess.run(train_op, {x: data.train.x[batch], y: data.train.y[batch]})
            seconds += time.perf_counter() - started
            hits = sum(int(sess.run(correct, {x: data.test.x[i:i + 500],
                                               y: data.test.y[i:i + 500]}))
                       for i in range(0, len(data.test), 500))
            accuracy = hits / len(data.test)
            history.append({"epoch": epoch, "test_accuracy": accuracy, "seconds": seconds})
            if accuracy >= target:
                break
    reached = bool(history) and history[-1]["test_accuracy"] >= target
    return {"target": target, "reached": reached, "epochs": len(history),
            "seconds": seconds, "test_accuracy": history[-1]["test_accuracy"],
            "image_size": image_size, "batch_size": batch_size, "history": history}
