"""The equivalent TF1 program of a playground network (written by the export button).

The program rebuilds the same graph with TensorFlow 1.x's public API (feature columns,
dense layers with the trained weights as initial values, the loss with its
regularization and a GradientDescentOptimizer), then prints the network's output at the
points given on the command line (default: a few sample points).
"""

from __future__ import annotations

import numpy as np

from tensorflux._src.playground import config as config_lib

_FEATURE_CODE = {"x": "x1", "y": "x2", "xSquared": "tf.square(x1)",
                 "ySquared": "tf.square(x2)", "xTimesY": "x1 * x2", "sinX": "tf.sin(x1)",
                 "sinY": "tf.sin(x2)"}
_ACTIVATION_CODE = {"relu": "tf.nn.relu", "tanh": "tf.nn.tanh", "sigmoid": "tf.nn.sigmoid",
                    "linear": "tf.identity"}
SAMPLE_POINTS = [[0.0, 0.0], [1.0, 2.0], [-3.0, 1.5], [4.0, -4.0], [-5.0, -2.5]]


def _array(value):
    return "np.array(" + repr(np.asarray(value, np.float64).round(8).tolist()) + \
        ", dtype=np.float32)"


def tf1_program(cfg, params, epoch):
    features = config_lib.features(cfg)
    feature_code = ",\n        ".join(_FEATURE_CODE[f] for f in features)
    weights = ",\n    ".join(_array(w) for w, _ in params)
    biases = ",\n    ".join(_array(b) for _, b in params)
    output = "tf.nn.tanh" if cfg["problem"] == "classification" else "tf.identity"
    reg = cfg["regularization"]
    penalty = {"none": "None",
               "L1": "tf.add_n([tf.reduce_sum(tf.abs(w)) for w in weights])",
               "L2": "tf.add_n([tf.reduce_sum(0.5 * tf.square(w)) for w in weights])"}[reg]
    return f'''"""A TensorFlow Playground network exported by `tensorflux playground` (epoch {epoch}).

Settings: #{config_lib.to_query(cfg)}

TensorFlow 1.x (or tensorflux: `import tensorflux as tf`). Prints the output at the points
given as arguments (x1,x2 pairs), default {SAMPLE_POINTS}.
"""

import sys

import numpy as np
import tensorflow as tf

LEARNING_RATE = {cfg["learningRate"]!r}
REGULARIZATION_RATE = {cfg["regularizationRate"]!r}
WEIGHTS = [
    {weights},
]
BIASES = [
    {biases},
]
SAMPLE_POINTS = {SAMPLE_POINTS!r}


def features(points):
    """The selected input features: {", ".join(config_lib.FEATURE_LABELS[f] for f in features)}."""
    x1, x2 = points[:, 0:1], points[:, 1:2]
    return tf.concat([
        {feature_code},
    ], axis=1)


def network(points):
    """The network's output in [n, 1], and its weight variables."""
    h = features(points)
    weights = []
    for i, (w0, b0) in enumerate(zip(WEIGHTS, BIASES)):
        with tf.variable_scope("layer%d" % i):
            w = tf.get_variable("weights", initializer=w0)
            b = tf.get_variable("biases", initializer=b0)
        weights.append(w)
        activation = {output} if i == len(WEIGHTS) - 1 else {_ACTIVATION_CODE[cfg["activation"]]}
        h = activation(tf.matmul(h, w) + b)
    return h, weights


def main(argv):
    points = tf.placeholder(tf.float32, [None, 2], name="inputs")
    labels = tf.placeholder(tf.float32, [None, 1], name="labels")
    output, weights = network(points)
    loss = tf.reduce_mean(0.5 * tf.square(output - labels))
    penalty = {penalty}
    if penalty is not None:
        loss += REGULARIZATION_RATE * penalty
    train_op = tf.train.GradientDescentOptimizer(LEARNING_RATE).minimize(loss)  # noqa: F841
    sample = [[float(v) for v in a.split(",")] for a in argv] or SAMPLE_POINTS
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for point, value in zip(sample, sess.run(output, {{points: sample}})):
            print("%g,%g -> %.6f" % (point[0], point[1], value[0]))


if __name__ == "__main__":
    main(sys.argv[1:])
'''
