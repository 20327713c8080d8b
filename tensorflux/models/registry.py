"""The zoo's registry: one `ModelSpec` per named model, registered by its family module."""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

_SPECS: dict = {}


@dataclasses.dataclass(frozen=True)
class ModelSpec:
    """A named model.

    name:    what `tensorflux.models.build` and `tensorflux train/bench --model` take.
    family:  the module that defines it ("resnet", "mobilenet", ...).
    kind:    "image_classifier" (NHWC float images -> logits), "detector",
             "seq2seq" or "language_model".
    config:  the family's dataclass config for this model (replace fields to vary it).
    build:   (inputs, config, *, num_classes, training) -> output tensor(s), built into
             the default graph.
    input_shape: the reference input shape without the batch dimension (224x224x3 for
             ImageNet models), used by `bench` and the parameter-count tests.
    """

    name: str
    family: str
    kind: str
    config: Any
    build: Callable
    input_shape: tuple
    num_classes: int = 1000


def register(spec: ModelSpec) -> ModelSpec:
    if spec.name in _SPECS:
        raise ValueError(f"model {spec.name!r} is registered twice")
    _SPECS[spec.name] = spec
    return spec


def specs() -> dict:
    return _SPECS
