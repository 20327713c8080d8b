"""Neural models on feature columns, trained by a tensorflux Session program.

Three architectures over the same inputs (standardized numbers `x`, categorical codes
`c`):
    linear     logits = x W + sum_j onehot(c_j) V_j          (a wide model; each V_j is
               an embedding of dimension n_outputs, which is a one-hot linear term)
    dnn        an MLP over [x, embeddings of c_j] (embedding size min(16, 1.6 k^0.56),
               the rule fastai and AutoGluon use), ReLU, dropout
    wide_deep  the sum of the two (Cheng et al., 2016: DNNLinearCombined)
The search varies widths, depths and learning rates.

One graph per configuration serves all folds: every fold re-runs the initializer, so
training compiles once. Batches always have the same size (the last one of an epoch is
filled from the start of the next permutation) and predictions run in padded chunks of
a fixed size, so every run reuses one XLA executable. Adam, early stopping on the fold's
validation loss (patience 10 epochs) restoring the best weights, stops at the deadline.

This module builds a user-facing TF1 program through the public API (`import tensorflux
as tf`), as the playground's network does.
"""

from __future__ import annotations

import time

import numpy as np

import tensorflux as tf

FAMILY = "tensorflux"
PREDICT_CHUNK = 512
MAX_EPOCHS = 300
PATIENCE = 10

PORTFOLIO = [
    ("NeuralNet", {"kind": "dnn", "hidden": [128, 64], "lr": 3e-3, "dropout": 0.1}),
    ("Linear", {"kind": "linear", "hidden": [], "lr": 1e-2, "dropout": 0.0}),
    ("WideDeep", {"kind": "wide_deep", "hidden": [128, 64], "lr": 3e-3, "dropout": 0.1}),
    ("NeuralNetWide", {"kind": "dnn", "hidden": [256, 128], "lr": 1e-3, "dropout": 0.2}),
    ("NeuralNetDeep", {"kind": "dnn", "hidden": [256, 128, 64], "lr": 3e-4,
                       "dropout": 0.1}),
]


def random_config(rng):
    depth = int(rng.integers(1, 4))
    width = int(rng.choice([64, 128, 256, 512]))
    return {"kind": str(rng.choice(["dnn", "wide_deep"])),
            "hidden": [max(16, width // (2 ** i)) for i in range(depth)],
            "lr": float(np.exp(rng.uniform(np.log(3e-4), np.log(1e-2)))),
            "dropout": float(rng.choice([0.0, 0.1, 0.2, 0.3]))}


def embedding_size(cardinality):
    return int(min(16, round(1.6 * cardinality ** 0.56)))


class _Program:
    """The graph and Session of one configuration."""

    def __init__(self, config, n_dense, cardinalities, n_outputs, task, seed):
        self.task = task
        self.graph = tf.Graph()
        with self.graph.as_default():
            tf.set_random_seed(seed)
            self.x = tf.placeholder(tf.float32, [None, n_dense], name="x")
            self.c = tf.placeholder(tf.int64, [None, len(cardinalities)], name="c")
            if task == "regression":
                self.y = tf.placeholder(tf.float32, [None], name="y")
            else:
                self.y = tf.placeholder(tf.int64, [None], name="y")
            self.training = tf.placeholder_with_default(False, [], name="training")
            logits = None
            if config["kind"] in ("linear", "wide_deep"):
                logits = self._wide(cardinalities, n_outputs)
            if config["kind"] in ("dnn", "wide_deep"):
                deep = self._deep(config, cardinalities, n_outputs)
                logits = deep if logits is None else logits + deep
            if task == "regression":
                self.output = logits[:, 0]
                loss = tf.reduce_mean(tf.square(self.output - self.y))
            else:
                self.output = tf.nn.softmax(logits)
                loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
                    labels=self.y, logits=logits))
            self.loss = loss
            self.train_op = tf.train.AdamOptimizer(config["lr"]).minimize(loss)
            self.variables = tf.global_variables()
            self.trainable = tf.trainable_variables()
            self.init = tf.global_variables_initializer()
            self.feeds = [tf.placeholder(v.dtype.base_dtype, v.shape) for v in self.trainable]
            self.assign = tf.group(*[tf.assign(v, p) for v, p in
                                     zip(self.trainable, self.feeds)])
        self.session = tf.Session(graph=self.graph)

    def _wide(self, cardinalities, n_outputs):
        with tf.variable_scope("wide"):
            logits = tf.layers.dense(self.x, n_outputs, name="numeric")
            for j, cardinality in enumerate(cardinalities):
                table = tf.get_variable(f"categorical_{j}", [cardinality, n_outputs],
                                        initializer=tf.zeros_initializer())
                logits = logits + tf.nn.embedding_lookup(table, self.c[:, j])
        return logits

    def _deep(self, config, cardinalities, n_outputs):
        with tf.variable_scope("deep"):
            parts = [self.x]
            for j, cardinality in enumerate(cardinalities):
                table = tf.get_variable(f"embedding_{j}",
                                        [cardinality, embedding_size(cardinality)])
                parts.append(tf.nn.embedding_lookup(table, self.c[:, j]))
            h = tf.concat(parts, axis=1) if len(parts) > 1 else parts[0]
            for i, units in enumerate(config["hidden"]):
                h = tf.layers.dense(h, units, activation=tf.nn.relu, name=f"hidden_{i}")
                if config["dropout"]:
                    h = tf.layers.dropout(h, rate=config["dropout"], training=self.training)
            return tf.layers.dense(h, n_outputs, name="logits")

    def weights(self):
        return self.session.run(self.trainable)

    def set_weights(self, values):
        self.session.run(self.assign, dict(zip(self.feeds, values)))

    def predict(self, x, c):
        n = len(x)
        outputs = []
        for start in range(0, n, PREDICT_CHUNK):
            xb, cb = x[start:start + PREDICT_CHUNK], c[start:start + PREDICT_CHUNK]
            pad = PREDICT_CHUNK - len(xb)
            if pad:
                xb = np.concatenate([xb, np.zeros((pad, x.shape[1]), x.dtype)])
                cb = np.concatenate([cb, np.zeros((pad, c.shape[1]), c.dtype)])
            out = self.session.run(self.output, {self.x: xb, self.c: cb})
            outputs.append(out[:PREDICT_CHUNK - pad])
        return np.concatenate(outputs) if outputs else np.zeros((0,))


class Family:
    """One network configuration: trains folds, predicts, saves."""

    family = FAMILY

    def __init__(self, config, task, n_classes, metric, cardinalities, n_nn, seed=0):
        self.config = dict(config)
        self.task, self.n_classes, self.metric = task, n_classes, metric
        self.cardinalities = list(cardinalities)
        self.n_nn = n_nn
        self.seed = seed
        self._program = None

    @property
    def program(self):
        if self._program is None:
            outputs = 1 if self.task == "regression" else self.n_classes
            self._program = _Program(self.config, self.n_nn, self.cardinalities, outputs,
                                     self.task, self.seed)
        return self._program

    def fit(self, train, y_train, valid, y_valid, deadline):
        program = self.program
        _, x, c = train
        _, xv, cv = valid
        scale = (0.0, 1.0)
        if self.task == "regression":
            scale = (float(np.mean(y_train)), float(np.std(y_train)) or 1.0)
            y_train = (y_train - scale[0]) / scale[1]
        y_fit = y_train.astype(np.float32 if self.task == "regression" else np.int64)
        n = len(y_fit)
        batch = int(min(256, max(16, n // 10), n))
        steps = max(1, int(np.ceil(n / batch)))
        rng = np.random.default_rng(self.seed)
        program.session.run(program.init)
        best, best_loss, waited = program.weights(), np.inf, 0
        for _ in range(MAX_EPOCHS):
            order = np.concatenate([rng.permutation(n), rng.permutation(n)])
            for step in range(steps):
                rows = order[step * batch:(step + 1) * batch]
                program.session.run(program.train_op, {
                    program.x: x[rows], program.c: c[rows], program.y: y_fit[rows],
                    program.training: True})
            loss = self._loss(program.predict(xv, cv), y_valid, scale)
            if loss < best_loss - 1e-6:
                best, best_loss, waited = program.weights(), loss, 0
            else:
                waited += 1
            if waited >= PATIENCE or time.monotonic() > deadline:
                break
        return {"weights": best, "scale": scale}

    def _loss(self, output, y, scale):
        if self.task == "regression":
            return float(np.mean((output * scale[1] + scale[0] - y) ** 2))
        p = np.clip(output[np.arange(len(y)), y], 1e-15, 1.0)
        return float(-np.mean(np.log(p)))

    def predict(self, fold, encoded):
        _, x, c = encoded
        program = self.program
        program.set_weights(fold["weights"])
        out = program.predict(x, c).astype(np.float64)
        if self.task == "regression":
            return out * fold["scale"][1] + fold["scale"][0]
        return out / out.sum(axis=1, keepdims=True)

    def save(self, fold, path):
        arrays = {f"w{i}": w for i, w in enumerate(fold["weights"])}
        np.savez(path + ".npz", scale=np.asarray(fold["scale"]), **arrays)

    def load(self, path):
        with np.load(path + ".npz") as data:
            count = sum(1 for k in data.files if k.startswith("w"))
            return {"weights": [data[f"w{i}"] for i in range(count)],
                    "scale": tuple(float(v) for v in data["scale"])}

    def close(self):
        """Frees the graph's Session (models left out of the ensemble)."""
        if self._program is not None:
            self._program.session.close()
            self._program = None

    def to_json(self):
        return {"config": self.config, "cardinalities": self.cardinalities,
                "n_nn": self.n_nn}
