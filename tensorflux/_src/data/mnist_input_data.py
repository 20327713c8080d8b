"""`tensorflow.examples.tutorials.mnist.input_data` (TF 1.15's tutorial loader, also
`tf.contrib.learn.datasets.mnist`): the four MNIST IDX files of `train_dir` as
`Datasets(train, validation, test)` of `DataSet`s with `next_batch`.

The files are read from `train_dir` under their standard names and fetched from
`source_url` only when missing (written atomically), so a program runs offline once the
files are there. Semantics follow TF 1.15: images become [n, 784] float32 in [0, 1]
(`reshape`, `dtype`), labels uint8 class ids or float one-hot rows, the first
`validation_size` training examples are the validation set, and `next_batch` shuffles
with NumPy's global generator at every epoch start, joining an epoch's tail with the
next epoch's head.
"""

from __future__ import annotations

import collections
import gzip
import os

import numpy as np

from tensorflux._src.framework import dtypes
from tensorflux._src.framework.random_seed import get_seed
from tensorflux._src.platform.get_file import fetch_atomically

DEFAULT_SOURCE_URL = "https://storage.googleapis.com/cvdf-datasets/mnist/"
TRAIN_IMAGES = "train-images-idx3-ubyte.gz"
TRAIN_LABELS = "train-labels-idx1-ubyte.gz"
TEST_IMAGES = "t10k-images-idx3-ubyte.gz"
TEST_LABELS = "t10k-labels-idx1-ubyte.gz"

Datasets = collections.namedtuple("Datasets", ["train", "validation", "test"])


def _read32(f):
    return int(np.frombuffer(f.read(4), dtype=">u4")[0])


def extract_images(f):
    """[index, y, x, depth] uint8 images from a (gzipped) IDX3 file object."""
    print("Extracting", f.name)
    with gzip.GzipFile(fileobj=f) as stream:
        magic = _read32(stream)
        if magic != 2051:
            raise ValueError(f"Invalid magic number {magic} in MNIST image file: {f.name}")
        num_images, rows, cols = _read32(stream), _read32(stream), _read32(stream)
        data = np.frombuffer(stream.read(rows * cols * num_images), dtype=np.uint8)
        return data.reshape(num_images, rows, cols, 1)


def dense_to_one_hot(labels_dense, num_classes):
    """Class ids -> one-hot rows (float64, as TF's tutorial code)."""
    one_hot = np.zeros((labels_dense.shape[0], num_classes))
    one_hot[np.arange(labels_dense.shape[0]), labels_dense.ravel()] = 1
    return one_hot


def extract_labels(f, one_hot=False, num_classes=10):
    """uint8 labels [index] (or one-hot rows) from a (gzipped) IDX1 file object."""
    print("Extracting", f.name)
    with gzip.GzipFile(fileobj=f) as stream:
        magic = _read32(stream)
        if magic != 2049:
            raise ValueError(f"Invalid magic number {magic} in MNIST label file: {f.name}")
        num_items = _read32(stream)
        labels = np.frombuffer(stream.read(num_items), dtype=np.uint8)
        return dense_to_one_hot(labels, num_classes) if one_hot else labels


class DataSet:
    """One split: `images`, `labels`, `num_examples`, `epochs_completed`, `next_batch`."""

    def __init__(self, images, labels, fake_data=False, one_hot=False,
                 dtype=dtypes.float32, reshape=True, seed=None):
        seed1, seed2 = get_seed(seed)
        # The same seed for every split, as TF's tutorial code (None: from entropy).
        np.random.seed(seed1 if seed is None else seed2)
        dtype = dtypes.as_dtype(dtype).base_dtype
        if dtype not in (dtypes.uint8, dtypes.float32):
            raise TypeError(f"Invalid image dtype {dtype!r}, expected uint8 or float32")
        if fake_data:
            self._num_examples = 10000
            self.one_hot = one_hot
        else:
            if images.shape[0] != labels.shape[0]:
                raise ValueError(f"images.shape: {images.shape} labels.shape: "
                                 f"{labels.shape}")
            self._num_examples = images.shape[0]
            if reshape:
                if images.shape[3] != 1:
                    raise ValueError(f"reshape=True needs single-channel images; got "
                                     f"shape {images.shape}")
                images = images.reshape(images.shape[0], images.shape[1] * images.shape[2])
            if dtype == dtypes.float32:
                images = images.astype(np.float32) * (1.0 / 255.0)
        self._images, self._labels = images, labels
        self._epochs_completed, self._index_in_epoch = 0, 0

    images = property(lambda self: self._images)
    labels = property(lambda self: self._labels)
    num_examples = property(lambda self: self._num_examples)
    epochs_completed = property(lambda self: self._epochs_completed)

    def _shuffle(self):
        perm = np.arange(self._num_examples)
        np.random.shuffle(perm)
        self._images, self._labels = self._images[perm], self._labels[perm]

    def next_batch(self, batch_size, fake_data=False, shuffle=True):
        """The next `batch_size` examples: (images, labels)."""
        if fake_data:
            fake_image = [1] * 784
            fake_label = [1] + [0] * 9 if self.one_hot else 0
            return [fake_image] * batch_size, [fake_label] * batch_size
        start = self._index_in_epoch
        if self._epochs_completed == 0 and start == 0 and shuffle:
            self._shuffle()
        if start + batch_size <= self._num_examples:
            self._index_in_epoch += batch_size
            return (self._images[start:self._index_in_epoch],
                    self._labels[start:self._index_in_epoch])
        # The epoch's tail, then the head of the next (reshuffled) epoch.
        self._epochs_completed += 1
        images_rest = self._images[start:self._num_examples]
        labels_rest = self._labels[start:self._num_examples]
        if shuffle:
            self._shuffle()
        self._index_in_epoch = batch_size - (self._num_examples - start)
        end = self._index_in_epoch
        return (np.concatenate((images_rest, self._images[:end]), axis=0),
                np.concatenate((labels_rest, self._labels[:end]), axis=0))


def maybe_download(filename, work_directory, source_url):
    """`work_directory/filename`, fetched from `source_url` first if it is missing."""
    os.makedirs(work_directory, exist_ok=True)
    filepath = os.path.join(work_directory, filename)
    if not os.path.exists(filepath):
        print("Downloading data from", source_url)
        fetch_atomically(source_url, filepath)
        print("Successfully downloaded", filename, os.path.getsize(filepath), "bytes.")
    return filepath


def read_data_sets(train_dir, fake_data=False, one_hot=False, dtype=dtypes.float32,
                   reshape=True, validation_size=5000, seed=None,
                   source_url=DEFAULT_SOURCE_URL):
    """Datasets(train, validation, test) from the MNIST files in `train_dir`."""
    if fake_data:
        def fake():
            return DataSet([], [], fake_data=True, one_hot=one_hot, dtype=dtype, seed=seed)
        return Datasets(train=fake(), validation=fake(), test=fake())
    source_url = source_url or DEFAULT_SOURCE_URL

    def load(name, extract, **kwargs):
        with open(maybe_download(name, train_dir, source_url + name), "rb") as f:
            return extract(f, **kwargs)

    train_images = load(TRAIN_IMAGES, extract_images)
    train_labels = load(TRAIN_LABELS, extract_labels, one_hot=one_hot)
    test_images = load(TEST_IMAGES, extract_images)
    test_labels = load(TEST_LABELS, extract_labels, one_hot=one_hot)
    if not 0 <= validation_size <= len(train_images):
        raise ValueError(f"Validation size should be between 0 and {len(train_images)}. "
                         f"Received: {validation_size}.")
    options = dict(dtype=dtype, reshape=reshape, seed=seed)
    validation = DataSet(train_images[:validation_size], train_labels[:validation_size],
                         **options)
    train = DataSet(train_images[validation_size:], train_labels[validation_size:],
                    **options)
    test = DataSet(test_images, test_labels, **options)
    return Datasets(train=train, validation=validation, test=test)


def load_mnist(train_dir="MNIST-data"):
    return read_data_sets(train_dir)
