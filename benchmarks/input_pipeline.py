"""Input-pipeline throughput next to the training step it feeds, in one process.

The pipeline is the CIFAR-10 one TF1 programs use: a TFRecord file of tf.train.Examples
(a 32x32x3 uint8 image as raw bytes + an int64 label), shuffled with a 10k buffer,
repeated, then each record parsed, decoded, padded by 4 pixels and randomly cropped
back to 32x32, randomly flipped left-right and standardized per image, batched by 128
and prefetched. It is timed with num_parallel_calls = 1 and 2, in interleaved rounds (median
reported). `experimental.map_and_batch` builds the same map-then-batch pipeline.

The consumer is the small CNN of benchmarks/train_step.py (three 3x3 conv+ReLU, 32/64/128
channels, Momentum, batch 128), built in tensorflux and timed in the same process.
Target: the pipeline delivers at least 3x the images/sec the step consumes, and two
parallel calls beat one. Prints a table; writes benchmarks/results/input_pipeline.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time

import numpy as np

import tensorflux as tf

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import train_step  # noqa: E402  (the CNN definition is shared with that benchmark)

BATCH, SHUFFLE_BUFFER, RECORDS = 128, 10_000, 10_000


def write_records(path, count, seed=0):
    rng = np.random.default_rng(seed)
    images = rng.integers(0, 256, size=(count, 32, 32, 3), dtype=np.uint8)
    labels = rng.integers(0, 10, size=count)
    with tf.io.TFRecordWriter(path) as writer:
        for image, label in zip(images, labels):
            example = tf.train.Example(features=tf.train.Features(feature={
                "image": tf.train.Feature(bytes_list=tf.train.BytesList(value=[image.tobytes()])),
                "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[int(label)])),
            }))
            writer.write(example.SerializeToString())


def parse_and_augment(record):
    features = tf.parse_single_example(record, {
        "image": tf.FixedLenFeature([], tf.string),
        "label": tf.FixedLenFeature([], tf.int64),
    })
    image = tf.reshape(tf.decode_raw(features["image"], tf.uint8), [32, 32, 3])
    image = tf.image.resize_image_with_crop_or_pad(tf.cast(image, tf.float32), 40, 40)
    image = tf.random_crop(image, [32, 32, 3])
    image = tf.image.random_flip_left_right(image)
    image = tf.image.per_image_standardization(image)
    return image, tf.cast(features["label"], tf.int32)


def pipeline(path, parallel_calls):
    dataset = tf.data.TFRecordDataset(path).shuffle(SHUFFLE_BUFFER, seed=1).repeat()
    dataset = dataset.map(parse_and_augment, num_parallel_calls=parallel_calls)
    return dataset.batch(BATCH).prefetch(1)


class PipelineRun:
    """One pipeline in its own graph and session, warmed up (function compiled, shuffle
    buffer filled), timed over `batches` batches per call."""

    def __init__(self, path, parallel_calls):
        self.graph = tf.Graph()
        with self.graph.as_default():
            self.batch = pipeline(path, parallel_calls).make_one_shot_iterator().get_next()
            self.session = tf.Session()
        for _ in range(3):
            self.session.run(self.batch)

    def images_per_sec(self, batches):
        start = time.perf_counter()
        for _ in range(batches):
            self.session.run(self.batch)
        return batches * BATCH / (time.perf_counter() - start)


def cnn_images_per_sec(steps):
    with tf.Graph().as_default():
        run = train_step.tf1_cnn(tf, *train_step.cnn_data())
        for _ in range(12):
            run()
        times = []
        for _ in range(steps):
            start = time.perf_counter()
            run()
            times.append(time.perf_counter() - start)
        return train_step.CNN_BATCH / statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--batches", type=int, default=20, help="batches per timing")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "cifar.tfrecord")
        write_records(path, RECORDS)
        runs = {f"map ({calls} parallel call{'s' * (calls > 1)}) + batch":
                PipelineRun(path, calls) for calls in (1, 2)}
        samples = {name: [] for name in runs}
        for _ in range(args.rounds):  # interleaved rounds: fairer on a noisy machine
            for name, run in runs.items():
                samples[name].append(run.images_per_sec(args.batches))
        rows = {name: statistics.median(rates) for name, rates in samples.items()}
        for run in runs.values():
            run.session.close()
    step_rate = cnn_images_per_sec(args.steps)
    print(f"{'':36s} {'images/s':>10s} {'x CNN step':>11s}")
    for name, rate in rows.items():
        print(f"{name:36s} {rate:10.0f} {rate / step_rate:11.2f}")
    print(f"{'CNN training step (the consumer)':36s} {step_rate:10.0f} {1:11.2f}")
    results = {"pipeline_images_per_sec": rows, "samples": samples,
               "cnn_step_images_per_sec": step_rate,
               "ratios_vs_step": {k: v / step_rate for k, v in rows.items()},
               "cpu_count": os.cpu_count()}
    out_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")
    os.makedirs(out_dir, exist_ok=True)
    out = os.path.join(out_dir, "input_pipeline.json")
    with open(out + ".tmp", "w") as f:
        json.dump(results, f, indent=2)
    os.replace(out + ".tmp", out)


if __name__ == "__main__":
    main()
