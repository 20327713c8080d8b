"""The page's settings (its URL state): defaults, allowed values, and validation.

The page sends the raw strings of its URL (`#dataset=spiral&networkShape=8,8&...`); the
server answers with the validated configuration and one note per value it could not use.
A bad value falls back to its default (the note names the setting, what was received and
what is allowed), so a hand-edited link still opens a working playground.
"""

from __future__ import annotations

import numpy as np

from tensorflux._src.playground import datasets

FEATURES = ("x", "y", "xSquared", "ySquared", "xTimesY", "sinX", "sinY")
FEATURE_LABELS = {"x": "X1", "y": "X2", "xSquared": "X1²", "ySquared": "X2²",
                  "xTimesY": "X1·X2", "sinX": "sin(X1)", "sinY": "sin(X2)"}
ACTIVATIONS = ("relu", "tanh", "sigmoid", "linear")
REGULARIZATIONS = ("none", "L1", "L2")
PROBLEMS = ("classification", "regression")
LEARNING_RATES = (0.00001, 0.0001, 0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0)
REGULARIZATION_RATES = (0.0, 0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0)
MAX_LAYERS = 6
MAX_NEURONS = 8

DEFAULTS = {
    "problem": "classification", "dataset": "circle", "regDataset": "plane",
    "noise": 0, "percTrainData": 50, "batchSize": 10, "seed": 1,
    "activation": "tanh", "learningRate": 0.03, "regularization": "none",
    "regularizationRate": 0.0, "networkShape": [4, 2],
    "x": True, "y": True, "xSquared": False, "ySquared": False, "xTimesY": False,
    "sinX": False, "sinY": False, "showTestData": False, "discretize": False,
}


def _float(text):
    try:
        return float(text)
    except (TypeError, ValueError):
        raise ValueError("a number") from None


def _choice(options):
    def parse(text):
        value = str(text)
        if value not in options:
            raise ValueError(f"one of {', '.join(options)}")
        return value
    return parse


def _number_in(options):
    def parse(text):
        try:
            value = float(text)
        except (TypeError, ValueError):
            value = None
        for option in options:
            if value is None:
                break
            if abs(value - option) <= 1e-9 * max(1.0, abs(option)):
                return option
        raise ValueError(f"one of {', '.join(f'{o:g}' for o in options)}")
    return parse


def _int_range(low, high, step=1):
    def parse(text):
        value = _float(text)
        if not np.isfinite(value) or value != int(value) or not low <= value <= high or (int(value) - low) % step:
            raise ValueError(f"an integer from {low} to {high}"
                             + (f" in steps of {step}" if step > 1 else ""))
        return int(value)
    return parse


def _bool(text):
    if isinstance(text, bool):
        return text
    value = str(text).lower()
    if value in ("true", "1"):
        return True
    if value in ("false", "0"):
        return False
    raise ValueError("true or false")


def _shape(text):
    items = text if isinstance(text, list) else [s for s in str(text).split(",") if s != ""]
    if len(items) > MAX_LAYERS:
        raise ValueError(f"at most {MAX_LAYERS} comma-separated layer sizes")
    sizes = []
    for item in items:
        value = _float(item) if item.strip() else float("nan")
        if not np.isfinite(value) or value != int(value) or not 1 <= value <= MAX_NEURONS:
            raise ValueError(f"layer sizes from 1 to {MAX_NEURONS}")
        sizes.append(int(value))
    return sizes


def _seed(text):
    value = _float(text)
    if not np.isfinite(value) or value != int(value) or not 0 <= value < 2 ** 31:
        raise ValueError("an integer from 0 to 2147483647")
    return int(value)


PARSERS = {
    "problem": _choice(PROBLEMS), "dataset": _choice(datasets.CLASSIFICATION),
    "regDataset": _choice(datasets.REGRESSION), "noise": _int_range(0, 50, 5),
    "percTrainData": _int_range(10, 90, 10), "batchSize": _int_range(1, 30),
    "seed": _seed, "activation": _choice(ACTIVATIONS),
    "learningRate": _number_in(LEARNING_RATES), "regularization": _choice(REGULARIZATIONS),
    "regularizationRate": _number_in(REGULARIZATION_RATES), "networkShape": _shape,
    **{name: _bool for name in FEATURES}, "showTestData": _bool, "discretize": _bool,
}


def validate(raw):
    """(config, notes): `raw` ({name: string or value}) checked against PARSERS; each
    unusable or unknown entry leaves the default and adds a note."""
    config = {k: (list(v) if isinstance(v, list) else v) for k, v in DEFAULTS.items()}
    notes = []
    if not isinstance(raw, dict):
        return config, [(f"the configuration must be an object of settings, got "
                         f"{type(raw).__name__}; using the defaults")]
    for name, text in raw.items():
        parser = PARSERS.get(name)
        if parser is None:
            notes.append(f"ignored unknown setting {name!r}")
            continue
        try:
            config[name] = parser(text)
        except ValueError as exc:
            notes.append(f"{name}: got {str(text)[:40]!r}, expected {exc}; "
                         f"using {_show(DEFAULTS[name])}")
    if not any(config[f] for f in FEATURES):
        notes.append("no input feature selected; using X1 and X2")
        config["x"] = config["y"] = True
    return config, notes


def features(config):
    """The selected feature names, in the page's order."""
    return [f for f in FEATURES if config[f]]


def dataset_name(config):
    return config["dataset"] if config["problem"] == "classification" else config["regDataset"]


def to_query(config):
    """The URL fragment of `config` (the page writes the same)."""
    parts = []
    for name in DEFAULTS:
        value = config[name]
        if isinstance(value, bool):
            text = "true" if value else "false"
        elif isinstance(value, list):
            text = ",".join(map(str, value))
        elif isinstance(value, float):
            text = f"{value:g}"
        else:
            text = str(value)
        parts.append(f"{name}={text}")
    return "&".join(parts)


def _show(value):
    if isinstance(value, list):
        return ",".join(map(str, value)) or "(none)"
    if isinstance(value, bool):
        return "true" if value else "false"
    return f"{value:g}" if isinstance(value, float) else str(value)
