"""BoostedTreesClassifier vs LightGBM on the built-in breast-cancer table.

Same settings for both: 100 trees, depth 3 (LightGBM: max_depth=3, num_leaves=8),
learning rate 0.1, 100 quantile buckets (LightGBM max_bin=100), full-batch layers.
Prints a table and writes benchmarks/results/boosted_trees.json. LightGBM is only a
peer: when it is not installed its row is skipped with a message.

tensorflux runs twice, each time in a fresh process sharing one new compilation-cache
directory: "cold" compiles every executable (what a first run on a machine pays), "warm"
reads them from the cache (every later run of the same program).

    python benchmarks/boosted_trees.py [--trees 100] [--depth 3]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.dirname(HERE)]  # timing.py; this checkout's tensorflux

import tensorflux as tf  # noqa: E402
from tensorflux import datasets  # noqa: E402
from timing import write_json_atomically  # noqa: E402


def run_tensorflux(xtr, ytr, xte, yte, args, model_dir):
    keys = [f"f{i:02d}" for i in range(xtr.shape[1])]
    cols = [tf.feature_column.numeric_column(k) for k in keys]

    def train_input():
        feats = {k: xtr[:, i] for i, k in enumerate(keys)}
        return tf.data.Dataset.from_tensors(
            (feats, ytr.astype(np.float32).reshape(-1, 1))).repeat()

    def test_input():
        return tf.data.Dataset.from_tensors({k: xte[:, i] for i, k in enumerate(keys)})

    est = tf.estimator.BoostedTreesClassifier(
        cols, n_batches_per_layer=1, n_trees=args.trees, max_depth=args.depth,
        learning_rate=args.lr, model_dir=model_dir)
    start = time.perf_counter()
    est.train(train_input, max_steps=10 ** 6)
    train_s = time.perf_counter() - start
    start = time.perf_counter()
    probs = np.array([p["logistic"][0] for p in est.predict(test_input)])
    predict_s = time.perf_counter() - start
    return train_s, predict_s, float(np.mean((probs > 0.5) == yte))


def run_lightgbm(xtr, ytr, xte, yte, args):
    import lightgbm
    params = {"objective": "binary", "max_depth": args.depth,
              "num_leaves": 2 ** args.depth, "learning_rate": args.lr, "max_bin": 100,
              "min_data_in_leaf": 1, "verbose": -1, "num_threads": 2}
    start = time.perf_counter()
    booster = lightgbm.train(params, lightgbm.Dataset(xtr, ytr),
                             num_boost_round=args.trees)
    train_s = time.perf_counter() - start
    start = time.perf_counter()
    pred = (booster.predict(xte) > 0.5).astype(int)
    predict_s = time.perf_counter() - start
    return train_s, predict_s, float(np.mean(pred == yte))


def _tensorflux_in_a_process(args, cache_dir):
    """(train s, predict s, test accuracy) from a fresh process using `cache_dir`."""
    env = dict(os.environ, TENSORFLUX_CACHE_DIR=cache_dir, TENSORFLUX_COMPILATION_CACHE="1")
    out = subprocess.run(
        [sys.executable, __file__, "--trees", str(args.trees), "--depth", str(args.depth),
         "--lr", str(args.lr), "--child"], env=env, check=True, capture_output=True,
        text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--trees", type=int, default=100)
    parser.add_argument("--depth", type=int, default=3)
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    (xtr, ytr), (xte, yte) = datasets.load_breast_cancer()
    if args.child:
        with tempfile.TemporaryDirectory() as d:
            print(json.dumps(run_tensorflux(xtr, ytr, xte, yte, args, d)))
        return
    rows = []
    with tempfile.TemporaryDirectory() as cache_dir:
        for kind in ("cold", "warm"):
            rows.append((f"tensorflux BoostedTreesClassifier ({kind})",
                         *_tensorflux_in_a_process(args, cache_dir)))
    try:
        rows.append(("lightgbm " + __import__("lightgbm").__version__,
                     *run_lightgbm(xtr, ytr, xte, yte, args)))
    except ImportError:
        print("lightgbm is not installed: skipping the LightGBM peer")
    print(f"breast cancer: {len(xtr)} train / {len(xte)} test, trees={args.trees} "
          f"depth={args.depth} lr={args.lr}")
    print(f"{'model':44s} {'train s':>9s} {'predict s':>10s} {'test acc':>9s}")
    for name, train_s, predict_s, acc in rows:
        print(f"{name:44s} {train_s:9.2f} {predict_s:10.3f} {acc:9.4f}")
    write_json_atomically(os.path.join(HERE, "results", "boosted_trees.json"), {
        "settings": vars(args), "rows": [
            {"model": n, "train_s": t, "predict_s": p, "test_accuracy": a}
            for n, t, p, a in rows]})


if __name__ == "__main__":
    main()
