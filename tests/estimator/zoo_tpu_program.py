"""The zoo's ResNet model_fn under TPUEstimator, unchanged, on N forced CPU shards; run by
test_zoo_estimator.py in a subprocess (JAX fixes its device count at start). Prints one
JSON line: eval results and the final loss per shard count."""

import json
import logging
import sys
import tempfile

import tensorflux as tf
from tensorflux.models import resnet
from tests.estimator.test_zoo_estimator import FAST_COMPILE, quadrant_images

PARAMS = {"model": "resnet20", "num_classes": 4, "depth": 8, "width": 8,
          "learning_rate": 0.05, "weight_decay": 0.0}


def run(num_shards):
    train_x, train_y = quadrant_images(256, seed=0)
    test_x, test_y = quadrant_images(64, seed=1)

    def train_input_fn(params):
        return tf.data.Dataset.from_tensor_slices((train_x, train_y)).repeat().batch(
            params["batch_size"], drop_remainder=True)

    def eval_input_fn(params):
        return tf.data.Dataset.from_tensor_slices((test_x, test_y)).batch(
            params["batch_size"], drop_remainder=True)

    config = tf.contrib.tpu.RunConfig(
        model_dir=tempfile.mkdtemp(), tf_random_seed=3, session_config=FAST_COMPILE,
        tpu_config=tf.contrib.tpu.TPUConfig(iterations_per_loop=25, num_shards=num_shards))
    est = tf.contrib.tpu.TPUEstimator(resnet.model_fn, config=config, params=PARAMS,
                                      train_batch_size=32, eval_batch_size=32)
    est.train(train_input_fn, max_steps=100)
    result = est.evaluate(eval_input_fn, steps=2)
    return {k: float(v) for k, v in result.items()}


if __name__ == "__main__":
    logging.disable(logging.WARNING)
    print(json.dumps({n: run(int(n)) for n in sys.argv[1].split(",")}))
