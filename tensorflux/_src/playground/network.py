"""One playground network: a tensorflux graph and Session built from a validated config.

The graph (TF1 names, as the "graph" view shows them):

    points            the data (train, then test) and the heatmap grid, one constant
    layer<i>/weights  [fan_in, fan_out] and layer<i>/biases: hidden layers and the output
    inputs -> predict/... -> predictions   the exported signature ([n, 2] -> [n, 1]);
                      each forward pass starts with features/... (X1, X2, X1², X2², X1·X2,
                      sin(X1), sin(X2) of its [n, 2] input)
    epoch             a while_loop of minibatch SGD steps over the fed shuffle `order`
                      ([batches, batch size] indices into the training points), with the
                      fed `learning_rate` and `regularization_rate` (changing either keeps
                      the network, as in the original)
    evaluate/..., metrics/train_loss, metrics/test_loss, heatmaps   one forward pass
                      over the constant points

An update (one frame of the page) runs `epoch` once, then fetches the losses, every
node's output on the heatmap grid and the weights in one Session.run. The loss is the
original's: mean of 0.5 (output - label)², plus the rate times sum |w| (L1) or
sum 0.5 w² (L2) over the weights (not the biases); the output is tanh for
classification (labels ±1) and linear for regression.
"""

from __future__ import annotations

import base64
import os

import numpy as np

import tensorflux as tf
from tensorflux._src.playground import config as config_lib
from tensorflux._src.playground import datasets

GRID = 50          # heatmap resolution (GRID x GRID points over [-6, 6]²)
NODE_GRID = 25     # the small per-node heatmaps: every other grid point (the original
                   # draws them at a tenth of the output's resolution)
DOMAIN = 6.0
ACTIVATIONS = {"relu": tf.nn.relu, "tanh": tf.nn.tanh, "sigmoid": tf.nn.sigmoid,
               "linear": tf.identity}


def grid_points(size=GRID, domain=DOMAIN):
    """[size*size, 2]: row-major, row 0 at the top (x2 = +domain), column 0 at x1 = -domain."""
    axis = np.linspace(-domain, domain, size, dtype=np.float32)
    x1, x2 = np.meshgrid(axis, axis[::-1])
    return np.stack([x1.ravel(), x2.ravel()], axis=1)


def feature_columns(points, names):
    """The selected features of `points` ([n, 2] tensor), one column each."""
    x1, x2 = points[:, 0:1], points[:, 1:2]
    make = {"x": lambda: x1, "y": lambda: x2, "xSquared": lambda: tf.square(x1),
            "ySquared": lambda: tf.square(x2), "xTimesY": lambda: x1 * x2,
            "sinX": lambda: tf.sin(x1), "sinY": lambda: tf.sin(x2)}
    return [tf.identity(make[n](), name=n) for n in names]


class Network:
    """The graph and Session of one configuration, and its training state."""

    def __init__(self, cfg):
        self.config = cfg
        self.features = config_lib.features(cfg)
        self.shape = [len(self.features)] + list(cfg["networkShape"]) + [1]
        points, labels = datasets.generate(config_lib.dataset_name(cfg), cfg["noise"] / 100,
                                           cfg["seed"])
        (self.train_x, self.train_y, self.test_x,
         self.test_y) = datasets.split(points, labels, cfg["percTrainData"])
        self.batch_size = max(1, min(cfg["batchSize"], len(self.train_y)))
        self.epoch = 0
        self._resets = 0
        self._rng = np.random.default_rng(cfg["seed"])
        self.graph = tf.Graph()
        with self.graph.as_default():
            self._build()
        self.session = tf.Session(graph=self.graph)
        self.reset()

    # -- graph ---------------------------------------------------------------------------

    def _build(self):
        cfg = self.config
        self.params = []
        for i, (fan_in, fan_out) in enumerate(zip(self.shape[:-1], self.shape[1:])):
            with tf.name_scope(f"layer{i}"):
                w = tf.Variable(tf.zeros([fan_in, fan_out]), name="weights")
                b = tf.Variable(tf.zeros([fan_out]), name="biases")
            self.params.append((w, b))
        self.inputs = tf.placeholder(tf.float32, [None, 2], name="inputs")
        with tf.name_scope("predict"):
            output = self.forward(self.inputs)[-1]
        self.predictions = tf.identity(output, name="predictions")

        n_train, n_test = len(self.train_y), len(self.test_y)
        grid = grid_points()
        all_points = np.concatenate([self.train_x, self.test_x, grid]).astype(np.float32)
        points = tf.constant(all_points, name="points")
        labels = tf.constant(np.concatenate([self.train_y, self.test_y])[:, None],
                             name="labels")
        self.learning_rate = tf.placeholder_with_default(0.03, [], name="learning_rate")
        self.regularization_rate = tf.placeholder_with_default(0.0, [],
                                                               name="regularization_rate")
        self.order = tf.placeholder(tf.int32, [None, self.batch_size], name="order")
        variables = [v for pair in self.params for v in pair]
        train_points, train_labels = points[:n_train], labels[:n_train]

        def step(i):
            batch = self.order[i]
            x = tf.gather(train_points, batch)
            y = tf.gather(train_labels, batch)
            loss = self._objective(self.forward(x)[-1], y)
            grads = tf.gradients(loss, variables)
            updates = [tf.assign_sub(v, self.learning_rate * g)
                       for v, g in zip(variables, grads)]
            with tf.control_dependencies(updates):
                return i + 1
        with tf.name_scope("epoch"):
            batches = tf.shape(self.order)[0]
            self.train_epoch = tf.while_loop(lambda i: i < batches, step, [tf.constant(0)])

        with tf.name_scope("evaluate"):
            nodes = self.forward(points)
        output = nodes[-1]
        with tf.name_scope("metrics"):
            self.train_loss = tf.reduce_mean(
                0.5 * tf.square(output[:n_train] - labels[:n_train]), name="train_loss")
            self.test_loss = (tf.reduce_mean(
                0.5 * tf.square(output[n_train:n_train + n_test] - labels[n_train:]),
                name="test_loss") if n_test else tf.constant(0.0, name="test_loss"))
        start = n_train + n_test
        with tf.name_scope("evaluate"):
            grid_nodes = tf.concat([n[start:] for n in nodes], axis=1)
        self.heatmaps = tf.transpose(grid_nodes, name="heatmaps")
        self._loads = {}
        with tf.name_scope("load"):
            for v in variables:
                value = tf.placeholder(tf.float32, v.shape)
                self._loads[v] = (value, tf.assign(v, value))
        del cfg

    def forward(self, points):
        """[features, hidden layer 1, ..., output] of `points`, each [n, width]."""
        cfg = self.config
        with tf.name_scope("features"):
            h = tf.concat(feature_columns(points, self.features), axis=1)
        nodes = [h]
        act = ACTIVATIONS[cfg["activation"]]
        out_act = tf.nn.tanh if cfg["problem"] == "classification" else tf.identity
        for i, (w, b) in enumerate(self.params):
            last = i == len(self.params) - 1
            with tf.name_scope(f"layer{i}"):
                h = (out_act if last else act)(tf.matmul(h, w) + b)
            nodes.append(h)
        return nodes

    def _objective(self, output, labels):
        loss = tf.reduce_mean(0.5 * tf.square(output - labels))
        kind = self.config["regularization"]
        if kind == "none":
            return loss
        weights = [w for w, _ in self.params]
        penalty = tf.add_n([tf.reduce_sum(tf.abs(w)) if kind == "L1"
                            else tf.reduce_sum(0.5 * tf.square(w)) for w in weights])
        return loss + self.regularization_rate * penalty

    # -- training ------------------------------------------------------------------------

    def reset(self):
        """New random weights (uniform in ±0.5, biases 0.1, as the original), epoch 0."""
        rng = np.random.default_rng([self.config["seed"], self._resets])
        self._resets += 1
        for w, b in self.params:
            self._load(w, rng.uniform(-0.5, 0.5, w.shape.as_list()))
            self._load(b, np.full(b.shape.as_list(), 0.1))
        self.epoch = 0

    def _load(self, variable, value):
        placeholder, assign = self._loads[variable]
        self.session.run(assign, {placeholder: np.asarray(value, np.float32)})

    def train(self, learning_rate, regularization_rate):
        """One epoch: the training points shuffled into floor(n / batch) minibatches."""
        n = len(self.train_y)
        batches = n // self.batch_size
        order = self._rng.permutation(n)[:batches * self.batch_size]
        self.session.run(self.train_epoch, {
            self.order: order.reshape(batches, self.batch_size).astype(np.int32),
            self.learning_rate: learning_rate,
            self.regularization_rate: regularization_rate})
        self.epoch += 1

    def set_weight(self, layer, source, target, value):
        """Sets weight [source, target] of layer `layer` (0: features to first layer)."""
        if not 0 <= layer < len(self.params):
            raise ValueError(f"layer must be in [0, {len(self.params)}), got {layer}")
        w = self.params[layer][0]
        fan_in, fan_out = w.shape.as_list()
        if not (0 <= source < fan_in and 0 <= target < fan_out):
            raise ValueError(f"weight [{source}, {target}] is outside layer {layer}'s "
                             f"[{fan_in}, {fan_out}]")
        if not np.isfinite(value):
            raise ValueError(f"weight value must be a finite number, got {value!r}")
        matrix = np.array(self.session.run(w))
        matrix[source, target] = value
        self._load(w, matrix)

    def set_bias(self, layer, target, value):
        """Sets bias `target` of layer `layer` (0: the first hidden layer)."""
        if not 0 <= layer < len(self.params):
            raise ValueError(f"layer must be in [0, {len(self.params)}), got {layer}")
        b = self.params[layer][1]
        (fan_out,) = b.shape.as_list()
        if not 0 <= target < fan_out:
            raise ValueError(f"bias {target} is outside layer {layer}'s {fan_out}")
        if not np.isfinite(value):
            raise ValueError(f"bias value must be a finite number, got {value!r}")
        vector = np.array(self.session.run(b))
        vector[target] = value
        self._load(b, vector)

    def snapshot(self):
        """Losses, weights and every node's heatmap (one Session.run)."""
        train_loss, test_loss, maps, params = self.session.run(
            [self.train_loss, self.test_loss, self.heatmaps, self.params])
        return {"epoch": self.epoch, "trainLoss": float(train_loss),
                "testLoss": float(test_loss), "maps": maps, "params": params}

    def predict(self, points):
        return self.session.run(self.predictions,
                                {self.inputs: np.asarray(points, np.float32)})

    def close(self):
        self.session.close()

    # -- export --------------------------------------------------------------------------

    def export(self, export_root):
        """Writes a SavedModel (signature serving_default: "inputs" [n, 2] -> "predictions"
        [n, 1]) to <export_root>/<next version> and the TF1 program beside it as
        model_<version>.py; returns (saved model dir, program path)."""
        from tensorflux._src.playground import program
        os.makedirs(export_root, exist_ok=True)
        versions = [int(d) for d in os.listdir(export_root) if d.isdigit()]
        version = max(versions, default=0) + 1
        target = os.path.join(export_root, str(version))
        with self.graph.as_default():
            signature = tf.saved_model.predict_signature_def(
                {"inputs": self.inputs}, {"predictions": self.predictions})
            builder = tf.saved_model.builder.SavedModelBuilder(target)
            builder.add_meta_graph_and_variables(
                self.session, [tf.saved_model.tag_constants.SERVING],
                signature_def_map={
                    tf.saved_model.signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY:
                        signature},
                clear_devices=True)
            builder.save()
        params = self.session.run(self.params)
        path = os.path.join(export_root, f"model_{version}.py")
        with open(path, "w", encoding="utf-8") as f:
            f.write(program.tf1_program(self.config, params, self.epoch))
        return target, path

    def graph_ops(self):
        """[{name, op, inputs, shape}] of the graph's ops (for the "graph" view)."""
        ops = []
        for op in self.graph.get_operations():
            ops.append({"name": op.name, "op": op.type,
                        "inputs": [t.name for t in op.inputs],
                        "outputs": [f"{t.name} {t.dtype.name}{_shape(t)}"
                                    for t in op.outputs]})
        return ops


def _shape(tensor):
    try:
        dims = tensor.shape.as_list()
    except ValueError:
        return ""
    return "[" + ",".join("?" if d is None else str(d) for d in dims) + "]"


def node_maps(maps):
    """[nodes, NODE_GRID²]: every other row and column of [nodes, GRID²] heatmaps."""
    step = GRID // NODE_GRID
    grid = maps.reshape(len(maps), GRID, GRID)[:, ::step, ::step]
    return grid.reshape(len(maps), -1)


def encode_maps(maps):
    """Heatmaps [nodes, GRID*GRID] in [-1, 1] as base64 bytes (0 = -1, 255 = +1)."""
    clipped = np.clip(np.nan_to_num(maps, nan=0.0), -1.0, 1.0)
    return base64.b64encode(np.round((clipped + 1) * 127.5).astype(np.uint8).tobytes()
                            ).decode("ascii")
