"""The playground network in NumPy, written independently of tensorflux (test oracle)."""

import numpy as np

ACT = {"tanh": (np.tanh, lambda y: 1 - y * y),
       "relu": (lambda z: np.maximum(z, 0), lambda y: (y > 0).astype(y.dtype)),
       "sigmoid": (lambda z: 1 / (1 + np.exp(-z)), lambda y: y * (1 - y)),
       "linear": (lambda z: z, np.ones_like)}
FEATURES = {"x": lambda p: p[:, 0], "y": lambda p: p[:, 1], "xSquared": lambda p: p[:, 0] ** 2,
            "ySquared": lambda p: p[:, 1] ** 2, "xTimesY": lambda p: p[:, 0] * p[:, 1],
            "sinX": lambda p: np.sin(p[:, 0]), "sinY": lambda p: np.sin(p[:, 1])}


def features(points, names):
    p = np.asarray(points, np.float64)
    return np.stack([FEATURES[n](p) for n in names], 1)


def forward(points, names, params, activation, problem):
    """[features, hidden..., output] activations."""
    h = features(points, names)
    nodes = [h]
    for i, (w, b) in enumerate(params):
        last = i == len(params) - 1
        act = (ACT["tanh"] if problem == "classification" else ACT["linear"]) if last \
            else ACT[activation]
        h = act[0](h @ w + b)
        nodes.append(h)
    return nodes


def sgd_step(x, y, names, params, activation, problem, lr, reg, reg_rate):
    """One minibatch step of mean 0.5 (o - y)^2 (+ rate * penalty) by hand-written backprop."""
    nodes = forward(x, names, params, activation, problem)
    delta = (nodes[-1] - y[:, None]) / len(y)
    new = []
    for i in range(len(params) - 1, -1, -1):
        w, b = params[i]
        last = i == len(params) - 1
        act = (ACT["tanh"] if problem == "classification" else ACT["linear"]) if last \
            else ACT[activation]
        dz = delta * act[1](nodes[i + 1])
        gw, gb = nodes[i].T @ dz, dz.sum(0)
        if reg == "L1":
            gw = gw + reg_rate * np.sign(w)
        elif reg == "L2":
            gw = gw + reg_rate * w
        delta = dz @ w.T
        new.append((w - lr * gw, b - lr * gb))
    return new[::-1]
