"""`tensorflow.examples.tutorials.mnist`: `input_data.read_data_sets(train_dir, ...)`."""

from tensorflux.examples.tutorials.mnist import input_data  # noqa: F401
