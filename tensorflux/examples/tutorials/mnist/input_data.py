"""`from tensorflow.examples.tutorials.mnist import input_data`: TF 1.15's MNIST
tutorial loader (see tensorflux/_src/data/mnist_input_data.py)."""

from tensorflux._src.data.mnist_input_data import (  # noqa: F401
    DEFAULT_SOURCE_URL, DataSet, Datasets, dense_to_one_hot, extract_images,
    extract_labels, load_mnist, maybe_download, read_data_sets,
)
