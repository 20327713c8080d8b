"""`tensorflux export`: a training run's latest checkpoint as a SavedModel to serve.

The run's graph (model_graph.ClassifierGraph, in inference mode) is rebuilt, the latest
checkpoint restored into it, and exported under the tag "serve" with two signatures:

    serving_default / predict   inputs  "images" (image data) or "features" (tables):
                                        float32 [batch, *input shape]
                                outputs "probabilities" float32 [batch, classes],
                                        "classes" int64 [batch] (the most likely class)
    classify                    TF Serving's Classify API: inputs "inputs", serialized
                                tf.Examples whose float feature "images"/"features" holds
                                one example; outputs "scores" (probabilities) and
                                "classes" (the class indices as strings, per score)

The export goes to `<export_dir>/<version>` (default version: the checkpoint's global
step), the integer version directories TensorFlow Serving and `tensorflux serve` watch.
"""

from __future__ import annotations

import os

import tensorflux as tf
from tensorflux._src.cli import data_source, train_job
from tensorflux._src.cli.errors import UsageError
from tensorflux._src.cli.model_graph import ClassifierGraph

CLASSIFY_SIGNATURE = "classify"


def export_run(logdir, export_dir, version=None):
    """Exports the latest checkpoint of the run in `logdir`; returns the directory written."""
    run, stored = train_job.find_run({"logdir": logdir})
    if stored is None:
        raise UsageError(f"{run.path} is not a training run (no run.json); pass the --logdir "
                         f"of a `tensorflux train` run")
    options = train_job.resolve_options({}, stored)
    checkpoint = tf.train.latest_checkpoint(run.path)
    if checkpoint is None:
        raise UsageError(f"no checkpoint in {run.path}; train first")
    if export_dir is None:
        raise UsageError("--export_dir is required")
    if version is not None and (not isinstance(version, int) or version < 0):
        raise UsageError(f"--version must be a non-negative integer, got {version!r}")

    data = data_source.load(options["dataset"], seed=options["seed"])
    key = "images" if data.kind == "image" else "features"
    net = ClassifierGraph(options["model"], data.input_shape, data.num_classes,
                          examples_key=key)
    with net.graph.as_default():
        probabilities = tf.nn.softmax(net.logits, name="probabilities")
        classes = tf.argmax(net.logits, 1, name="classes")
        class_ids = tf.zeros_like(classes)[:, None] + tf.range(data.num_classes,
                                                                dtype=tf.int64)
        class_table = tf.as_string(class_ids, name="class_names")
        predict = tf.saved_model.predict_signature_def(
            {key: net.inputs}, {"probabilities": probabilities, "classes": classes})
        classify = tf.saved_model.classification_signature_def(
            net.examples, class_table, probabilities)
    with tf.Session(graph=net.graph) as sess:
        step = net.restore(sess, checkpoint, options["model"])
        target = os.path.join(export_dir, str(step if version is None else version))
        try:
            builder = tf.saved_model.builder.SavedModelBuilder(target)
        except AssertionError:
            raise UsageError(f"{target} already exists; pass another --version or "
                             f"--export_dir") from None
        builder.add_meta_graph_and_variables(
            sess, [tf.saved_model.tag_constants.SERVING],
            signature_def_map={
                tf.saved_model.signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY: predict,
                CLASSIFY_SIGNATURE: classify},
            clear_devices=True)
        builder.save()
    return target
