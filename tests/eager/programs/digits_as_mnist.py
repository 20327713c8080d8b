"""A stand-in for `tensorflow.examples.tutorials.mnist.input_data` (no network here):
the UCI digits shipped with tensorflux, each 8x8 image scaled 3x to 24x24 and padded
to MNIST's 28x28 frame (784 floats in [0, 1]), labels 0-9 as uint8 (or one-hot)."""

import collections

import numpy as np

from tensorflux.datasets import load_digits

_Split = collections.namedtuple("_Split", ["images", "labels", "num_examples"])
_Sets = collections.namedtuple("_Sets", ["train", "validation", "test"])


def _to_mnist(x, y, one_hot):
    big = np.kron(x.astype(np.float32) / 16.0, np.ones((3, 3), np.float32))  # (n, 24, 24)
    images = np.pad(big, ((0, 0), (2, 2), (2, 2))).reshape(len(x), 784)
    labels = np.eye(10, dtype=np.float32)[y] if one_hot else y.astype(np.uint8)
    return _Split(images, labels, len(x))


def read_data_sets(train_dir, one_hot=False):
    (x_train, y_train), (x_test, y_test) = load_digits()
    train = _to_mnist(x_train, y_train, one_hot)
    test = _to_mnist(x_test, y_test, one_hot)
    return _Sets(train, test, test)
