"""`tensorflux.examples.tutorials.mnist.input_data`: TF 1.15's MNIST tutorial loader on
IDX files written here (file:// origins stand in for the download)."""

import gzip

import numpy as np
import pytest

import tensorflux as tf
from tensorflux.examples.tutorials.mnist import input_data


def _idx(array, magic):
    header = np.array([magic, *array.shape], ">u4").tobytes()
    return gzip.compress(header + array.astype(np.uint8).tobytes())


def write_mnist(directory, n_train=30, n_test=10, seed=0):
    rng = np.random.RandomState(seed)
    data = {"train": (rng.randint(0, 256, (n_train, 28, 28)), rng.randint(0, 10, n_train)),
            "t10k": (rng.randint(0, 256, (n_test, 28, 28)), rng.randint(0, 10, n_test))}
    directory.mkdir(parents=True, exist_ok=True)
    for split, (images, labels) in data.items():
        (directory / f"{split}-images-idx3-ubyte.gz").write_bytes(_idx(images, 2051))
        (directory / f"{split}-labels-idx1-ubyte.gz").write_bytes(_idx(labels, 2049))
    return data


def test_read_data_sets_splits_scales_and_one_hots(tmp_path, capsys):
    data = write_mnist(tmp_path / "mnist")
    mnist = input_data.read_data_sets(str(tmp_path / "mnist"), one_hot=True,
                                      validation_size=5)
    assert capsys.readouterr().out.count("Extracting") == 4
    train_x, train_y = data["train"]
    assert mnist.validation.num_examples == 5 and mnist.train.num_examples == 25
    np.testing.assert_allclose(mnist.validation.images,
                               train_x[:5].reshape(5, 784) / 255.0, rtol=1e-6)
    assert mnist.train.images.dtype == np.float32 and mnist.train.images.shape == (25, 784)
    np.testing.assert_array_equal(mnist.test.labels.argmax(1), data["t10k"][1])
    assert mnist.test.labels.shape == (10, 10)

    raw = input_data.read_data_sets(str(tmp_path / "mnist"), dtype=tf.uint8, reshape=False,
                                    validation_size=0)
    assert raw.train.images.shape == (30, 28, 28, 1) and raw.train.images.dtype == np.uint8
    np.testing.assert_array_equal(raw.train.labels, train_y)


def test_next_batch_shuffles_each_epoch_and_joins_the_tail(tmp_path):
    write_mnist(tmp_path)
    mnist = input_data.read_data_sets(str(tmp_path), validation_size=0, seed=7)
    train = mnist.train
    rows = {tuple(row[:20]): i for i, row in enumerate(train.images)}
    first = [train.next_batch(10) for _ in range(3)]          # exactly one epoch of 30
    seen = [rows[tuple(r[:20])] for images, _ in first for r in images]
    assert sorted(seen) == list(range(30)) and seen != list(range(30))
    assert train.epochs_completed == 0
    images, labels = train.next_batch(25)
    images, labels = train.next_batch(10)                      # 5 of epoch 2, 5 of epoch 3
    assert train.epochs_completed == 2 and len(images) == len(labels) == 10
    ordered = input_data.read_data_sets(str(tmp_path), validation_size=0)
    images, _ = ordered.train.next_batch(4, shuffle=False)
    np.testing.assert_array_equal(images, ordered.train.images[:4])


def test_missing_files_are_fetched_from_source_url(tmp_path, capsys):
    write_mnist(tmp_path / "mirror")
    mnist = input_data.read_data_sets(str(tmp_path / "data"), validation_size=5,
                                      source_url=(tmp_path / "mirror").as_uri() + "/")
    out = capsys.readouterr().out
    assert out.count("Successfully downloaded") == 4, out
    assert mnist.train.num_examples == 25 and mnist.validation.num_examples == 5
    assert sorted(p.name for p in (tmp_path / "data").iterdir()) == sorted(
        p.name for p in (tmp_path / "mirror").iterdir())


def test_errors_name_the_problem(tmp_path):
    write_mnist(tmp_path)
    with pytest.raises(ValueError, match=r"Validation size should be between 0 and 30. "
                                         r"Received: 31."):
        input_data.read_data_sets(str(tmp_path), validation_size=31)
    with pytest.raises(TypeError, match="Invalid image dtype"):
        input_data.read_data_sets(str(tmp_path), dtype=tf.int32, validation_size=0)
    (tmp_path / "train-images-idx3-ubyte.gz").write_bytes(_idx(np.zeros((1, 2, 2)), 2049))
    with pytest.raises(ValueError, match="Invalid magic number 2049 in MNIST image file"):
        input_data.read_data_sets(str(tmp_path))
    fake = input_data.read_data_sets("", fake_data=True, one_hot=True)
    images, labels = fake.train.next_batch(3, fake_data=True)
    assert np.shape(images) == (3, 784) and labels[0] == [1] + [0] * 9
