"""The model zoo: reference architectures built from `tf.layers` and `tf.nn`.

    import tensorflux as tf
    from tensorflux import models

    models.names()                       # ['densenet121', ..., 'resnet50', ...]
    images = tf.placeholder(tf.float32, [None, 224, 224, 3])
    logits = models.build("resnet50", images, num_classes=1000, training=True)

Each family lives in its own module with a dataclass config; `build` puts the model
into the default graph and returns its output tensor(s).
"""

from __future__ import annotations

import importlib

from tensorflux.models.registry import ModelSpec, specs

# Family modules, imported on first use (each registers its named models).
_FAMILIES = ("resnet", "mobilenet", "densenet", "squeezenet", "transformer", "retinanet")
_loaded = False


def _load():
    global _loaded
    if not _loaded:
        for family in _FAMILIES:
            importlib.import_module(f"tensorflux.models.{family}")
        _loaded = True
    return specs()


def names() -> list:
    """Every model `build` knows, sorted."""
    return sorted(_load())


def get(name) -> ModelSpec:
    """The ModelSpec of `name`; a ValueError listing the known names otherwise."""
    known = _load()
    if name not in known:
        raise ValueError(f"unknown model {name!r}; known models: {', '.join(sorted(known))}")
    return known[name]


def build(name, inputs, *, num_classes=None, training=False, **config_overrides):
    """Builds model `name` on `inputs` into the default graph; returns its output(s)
    (logits for image classifiers). `config_overrides` replace fields of its config."""
    spec = get(name)
    config = spec.config
    if config_overrides:
        import dataclasses
        config = dataclasses.replace(config, **config_overrides)
    classes = spec.num_classes if num_classes is None else num_classes
    return spec.build(inputs, config, num_classes=classes, training=training)


__all__ = ["ModelSpec", "build", "get", "names"]
