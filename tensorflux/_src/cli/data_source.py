"""The datasets `tensorflux train` and `eval` accept: built-in names or a directory.

Either way the result is a `DataSource`: train / validation / test splits of float32
inputs and int64 labels, ready to feed. Images are NHWC scaled to [0, 1]; tables are
standardized with the training split's mean and deviation. The validation split is a
seeded slice of the training data, so the test split stays untouched until the end.
"""

from __future__ import annotations

import dataclasses
import glob
import os

import numpy as np

from tensorflux import datasets
from tensorflux._src.data import file_formats
from tensorflux._src.cli.errors import UsageError

BUILTIN = {
    "digits": ("image", datasets.load_digits, 16.0),
    "iris": ("table", datasets.load_iris, None),
    "wine": ("table", datasets.load_wine, None),
    "breast_cancer": ("table", datasets.load_breast_cancer, None),
}


@dataclasses.dataclass(frozen=True)
class Split:
    x: np.ndarray
    y: np.ndarray

    def __len__(self):
        return len(self.y)


@dataclasses.dataclass(frozen=True)
class DataSource:
    name: str
    kind: str  # "image" or "table"
    train: Split
    validation: Split
    test: Split
    num_classes: int

    @property
    def input_shape(self):
        return self.train.x.shape[1:]

    def split(self, name) -> Split:
        if name not in ("train", "validation", "test"):
            raise UsageError(f"--split must be train, validation or test, got {name!r}")
        return getattr(self, name)


def dataset_name(spec: str) -> str:
    """A short name for run directories: the built-in name or the directory's name."""
    if spec in BUILTIN:
        return spec
    return os.path.basename(os.path.normpath(spec)) or "data"


def kind_of(spec: str) -> str:
    """"image" or "table", known before loading (directories hold images)."""
    return BUILTIN[spec][0] if spec in BUILTIN else "image"


def load(spec: str, *, seed: int = 0, validation_fraction: float = 0.1) -> DataSource:
    if spec in BUILTIN:
        kind, loader, scale = BUILTIN[spec]
        (x_train, y_train), (x_test, y_test) = loader()
    elif os.path.isdir(spec):
        kind, scale = "image", None
        x_train, y_train, x_test, y_test = _read_directory(spec)
    else:
        raise UsageError(f"--dataset {spec!r} is neither a built-in dataset "
                         f"({', '.join(BUILTIN)}) nor a directory")
    train, validation = _hold_out(Split(x_train, y_train), validation_fraction, seed)
    if kind == "image":
        train, validation, test = (_scale_images(s, scale) for s in
                                   (train, validation, Split(x_test, y_test)))
    else:
        train, validation, test = _standardize(train, validation, Split(x_test, y_test))
    num_classes = int(max(train.y.max(), test.y.max(initial=0)) + 1)
    return DataSource(dataset_name(spec), kind, train, validation, test, num_classes)


def first_train_examples(data: DataSource, count: int) -> DataSource:
    """`data` training on its first `count` training rows only (the training split is
    already in the seed's random order, so this is a random subset per seed; the
    validation and test splits stay whole)."""
    if not isinstance(count, int) or not 1 <= count <= len(data.train):
        raise UsageError(f"--train-examples: expected a count from 1 to "
                         f"{len(data.train)} (the training split), got {count!r}")
    subset = Split(data.train.x[:count], data.train.y[:count])
    return dataclasses.replace(data, train=subset)


def _hold_out(train: Split, fraction: float, seed: int):
    order = np.random.default_rng(seed).permutation(len(train))
    n_validation = int(round(len(order) * fraction))
    keep, held = order[n_validation:], order[:n_validation]
    return Split(train.x[keep], train.y[keep]), Split(train.x[held], train.y[held])


def _scale_images(split: Split, scale):
    x = split.x
    if x.ndim == 3:  # grayscale without a channel axis, as IDX and the digits store it
        x = x[..., None]
    if scale is None:
        scale = float(np.iinfo(x.dtype).max) if np.issubdtype(x.dtype, np.integer) else 1.0
    return Split((x / scale).astype(np.float32), split.y.astype(np.int64))


def _standardize(train: Split, validation: Split, test: Split):
    mean = train.x.mean(axis=0)
    std = np.where(train.x.std(axis=0) > 0, train.x.std(axis=0), 1.0)
    return tuple(Split(((s.x - mean) / std).astype(np.float32), s.y.astype(np.int64))
                 for s in (train, validation, test))


# --- directories of dataset files ---------------------------------------------------

def _read_directory(directory):
    for reader in (_read_idx_files, _read_cifar_binary, _read_cifar_python):
        found = reader(directory)
        if found is not None:
            return found
    raise UsageError(
        f"--dataset {directory!r} holds no dataset files; expected MNIST IDX files "
        f"(train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-images-idx3-ubyte, "
        f"t10k-labels-idx1-ubyte, optionally .gz) or CIFAR-10 batches "
        f"(data_batch_1.bin ... test_batch.bin, or the python data_batch_1 ... test_batch)")


def _find(directory, pattern):
    """Matches in the directory or one level below (archives unpack into a folder)."""
    return sorted(glob.glob(os.path.join(directory, pattern))
                  + glob.glob(os.path.join(directory, "*", pattern)))


def _read_idx_files(directory):
    names = ["train-images-idx3-ubyte", "train-labels-idx1-ubyte",
             "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"]
    paths = [_find(directory, name) + _find(directory, name + ".gz") for name in names]
    if not any(paths):
        return None
    missing = [name for name, found in zip(names, paths) if not found]
    if missing:
        raise UsageError(f"--dataset {directory!r} has MNIST IDX files but lacks "
                         f"{', '.join(missing)}")
    x_train, y_train, x_test, y_test = (file_formats.read_idx(p[0]) for p in paths)
    return x_train, y_train.astype(np.int64), x_test, y_test.astype(np.int64)


def _read_cifar_binary(directory):
    return _read_cifar(directory, "data_batch_*.bin", "test_batch.bin",
                       file_formats.read_cifar_binary)


def _read_cifar_python(directory):
    return _read_cifar(directory, "data_batch_[0-9]", "test_batch",
                       file_formats.read_cifar_python)


def _read_cifar(directory, train_pattern, test_name, read):
    train_paths, test_paths = _find(directory, train_pattern), _find(directory, test_name)
    if not train_paths and not test_paths:
        return None
    if not train_paths or not test_paths:
        raise UsageError(f"--dataset {directory!r} has CIFAR batches but lacks "
                         f"{'the training batches' if not train_paths else test_name}")
    batches = [read(path) for path in train_paths]
    x_test, y_test = read(test_paths[0])
    return (np.concatenate([b[0] for b in batches]), np.concatenate([b[1] for b in batches]),
            x_test, y_test)
