"""TensorFlow Playground's data sets, with the original's formulas (dataset.ts).

Each generator returns (points float32 [n, 2], labels float32 [n]); classification labels
are +1 / -1, regression labels lie in [-1, 1]. `noise` is the page's percentage / 100
(0 .. 0.5). All randomness comes from the NumPy Generator passed in, so a seed reproduces
a data set.
"""

from __future__ import annotations

import numpy as np

NUM_SAMPLES_CLASSIFY = 500
NUM_SAMPLES_REGRESS = 1200
CLASSIFICATION = ("circle", "xor", "gauss", "spiral")
REGRESSION = ("plane", "multigauss")


def _uniform(rng, low, high, n):
    return rng.uniform(low, high, n)


def circle(n, noise, rng):
    radius = 5.0
    half = n // 2
    parts = []
    for r_low, r_high, count in ((0.0, radius * 0.5, half), (radius * 0.7, radius, n - half)):
        r = _uniform(rng, r_low, r_high, count)
        angle = _uniform(rng, 0, 2 * np.pi, count)
        x, y = r * np.sin(angle), r * np.cos(angle)
        nx = _uniform(rng, -radius, radius, count) * noise
        ny = _uniform(rng, -radius, radius, count) * noise
        # The label is that of the noisy position; the point is drawn where it was made.
        label = np.where(np.hypot(x + nx, y + ny) < radius * 0.5, 1.0, -1.0)
        parts.append((x, y, label))
    return _stack(parts)


def xor(n, noise, rng):
    padding = 0.3
    x = _uniform(rng, -5, 5, n)
    y = _uniform(rng, -5, 5, n)
    x = x + np.where(x > 0, padding, -padding)
    y = y + np.where(y > 0, padding, -padding)
    nx = _uniform(rng, -5, 5, n) * noise
    ny = _uniform(rng, -5, 5, n) * noise
    label = np.where((x + nx) * (y + ny) >= 0, 1.0, -1.0)
    return _stack([(x, y, label)])


def gauss(n, noise, rng):
    # The original maps noise 0 .. 0.5 linearly onto a variance of 0.5 .. 4.
    variance = 0.5 + noise / 0.5 * 3.5
    std = np.sqrt(variance)
    half = n // 2
    parts = []
    for c, label, count in ((2.0, 1.0, half), (-2.0, -1.0, n - half)):
        parts.append((rng.normal(c, std, count), rng.normal(c, std, count),
                      np.full(count, label)))
    return _stack(parts)


def spiral(n, noise, rng):
    half = n // 2
    parts = []
    for delta, label, count in ((0.0, 1.0, half), (np.pi, -1.0, half)):
        i = np.arange(count)
        r = i / count * 5
        t = 1.75 * i / count * 2 * np.pi + delta
        x = r * np.sin(t) + _uniform(rng, -1, 1, count) * noise
        y = r * np.cos(t) + _uniform(rng, -1, 1, count) * noise
        parts.append((x, y, np.full(count, label)))
    return _stack(parts)


def _square_points(n, noise, rng):
    """Points uniform on [-6, 6]^2 and the same points moved by noise, the two regression
    sets' sampling (x, y, then the noise of x and of y, in the original's draw order)."""
    radius = 6.0
    x = _uniform(rng, -radius, radius, n)
    y = _uniform(rng, -radius, radius, n)
    nx = _uniform(rng, -radius, radius, n) * noise
    ny = _uniform(rng, -radius, radius, n) * noise
    return x, y, x + nx, y + ny


def plane(n, noise, rng):
    x, y, noisy_x, noisy_y = _square_points(n, noise, rng)
    # labelScale: [-10, 10] -> [-1, 1] applied to x + y (not clamped, as in the original).
    label = (noisy_x + noisy_y) / 10.0
    return _stack([(x, y, label)])


GAUSSIANS = ((-4, 2.5, 1), (0, 2.5, -1), (4, 2.5, 1), (-4, -2.5, -1), (0, -2.5, 1),
             (4, -2.5, -1))


def multigauss(n, noise, rng):
    x, y, noisy_x, noisy_y = _square_points(n, noise, rng)
    return _stack([(x, y, multigauss_label(noisy_x, noisy_y))])


def multigauss_label(x, y):
    """The signed bump of the nearest-strongest Gaussian: labelScale [0, 2] -> [1, 0],
    clamped, times the Gaussian's sign; the largest magnitude wins."""
    label = np.zeros_like(x)
    for cx, cy, sign in GAUSSIANS:
        value = sign * np.clip(1 - np.hypot(x - cx, y - cy) / 2, 0, 1)
        label = np.where(np.abs(value) > np.abs(label), value, label)
    return label


GENERATORS = {"circle": circle, "xor": xor, "gauss": gauss, "spiral": spiral,
              "plane": plane, "multigauss": multigauss}


def generate(name, noise, seed):
    """(points [n, 2], labels [n]) of data set `name`, shuffled (as the original does)."""
    if name not in GENERATORS:
        raise ValueError(f"dataset must be one of {sorted(GENERATORS)}, got {name!r}")
    rng = np.random.default_rng(seed)
    n = NUM_SAMPLES_CLASSIFY if name in CLASSIFICATION else NUM_SAMPLES_REGRESS
    points, labels = GENERATORS[name](n, noise, rng)
    order = rng.permutation(len(labels))
    return points[order], labels[order]


def split(points, labels, percent_train):
    """(train points, train labels, test points, test labels): the first percent_train %."""
    k = round(len(labels) * percent_train / 100)
    return points[:k], labels[:k], points[k:], labels[k:]


def _stack(parts):
    x = np.concatenate([p[0] for p in parts])
    y = np.concatenate([p[1] for p in parts])
    label = np.concatenate([p[2] for p in parts])
    return np.stack([x, y], axis=1).astype(np.float32), label.astype(np.float32)
