"""BoostedTreesClassifier vs LightGBM on the built-in breast-cancer table.

Same settings for both: 100 trees, depth 3 (LightGBM: max_depth=3, num_leaves=8),
learning rate 0.1, 100 quantile buckets (LightGBM max_bin=100), full-batch layers.
Prints a table and writes benchmarks/results/boosted_trees.json. LightGBM is only a
peer: when it is not installed its row is skipped with a message.

    python benchmarks/boosted_trees.py [--trees 100] [--depth 3]
"""

import argparse
import json
import os
import time

import numpy as np

import tensorflux as tf
from tensorflux import datasets


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


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--trees", type=int, default=100)
    parser.add_argument("--depth", type=int, default=3)
    parser.add_argument("--lr", type=float, default=0.1)
    args = parser.parse_args()
    (xtr, ytr), (xte, yte) = datasets.load_breast_cancer()
    import tempfile
    rows = []
    with tempfile.TemporaryDirectory() as d:
        rows.append(("tensorflux BoostedTreesClassifier",
                     *run_tensorflux(xtr, ytr, xte, yte, args, d)))
    try:
        rows.append(("lightgbm " + __import__("lightgbm").__version__,
                     *run_lightgbm(xtr, ytr, xte, yte, args)))
    except ImportError:
        print("lightgbm is not installed: skipping the LightGBM peer")
    print(f"breast cancer: {len(xtr)} train / {len(xte)} test, trees={args.trees} "
          f"depth={args.depth} lr={args.lr}")
    print(f"{'model':40s} {'train s':>9s} {'predict s':>10s} {'test acc':>9s}")
    for name, train_s, predict_s, acc in rows:
        print(f"{name:40s} {train_s:9.2f} {predict_s:10.3f} {acc:9.4f}")
    out = os.path.join(os.path.dirname(__file__), "results")
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "boosted_trees.json"), "w") as f:
        json.dump({"settings": vars(args), "rows": [
            {"model": n, "train_s": t, "predict_s": p, "test_accuracy": a}
            for n, t, p, a in rows]}, f, indent=2)


if __name__ == "__main__":
    main()
