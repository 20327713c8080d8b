"""A saved automl model served over TensorFlow Serving's REST API by `tensorflux serve`'s
server (tensorflux/serving/server.py): the same routes, status, metadata and error
bodies; the model reads raw records and preprocesses them itself.

    POST /v1/models/NAME:predict   {"instances": [{"age": 39, "workclass": "Private"}]}
                                   or {"inputs": {"age": [39], "workclass": ["Private"]}}
        classification -> {"predictions": [{"classes": label, "probabilities": [p...],
                            "all_classes": [labels...]}]}; regression -> {"predictions": [v]}
    POST /v1/models/NAME:classify  {"examples": [{...}], "context"?: {...}}
                                   -> {"results": [[[label, p], ...] per example]}
    POST /v1/models/NAME:regress   (regression models) -> {"results": [v, ...]}

Bad records (a missing column, text in a numeric column) answer 400 with
{"error": "<one line naming the column and the instance>"}; unseen categories are read
as the rare/unknown category. The model directory is served as version 1.
"""

from __future__ import annotations

import threading

import numpy as np

from tensorflux._src.automl.errors import DataError
from tensorflux._src.automl.predictor import load
from tensorflux._src.serving.signatures import SignatureDef, TensorInfo
from tensorflux.serving import model_manager
from tensorflux.serving.errors import InvalidInput
from tensorflux.serving.rest_api import ApiError

_PREDICT = "tensorflow/serving/predict"


class AutoMLServable:
    """A loaded automl Predictor with the Servable interface the server expects."""

    def __init__(self, directory):
        self.export_dir = directory
        self.predictor = load(directory)
        self.version = 1
        self._lock = threading.Lock()
        inputs = {}
        for column, spec in self.predictor.preprocessor.specs.items():
            dtype = "float32" if spec["type"] in ("numeric",) else "string"
            inputs[column] = TensorInfo(column, dtype, [None])
        if self.predictor.task == "regression":
            outputs = {"predictions": TensorInfo("predictions", "float32", [None])}
        else:
            outputs = {"classes": TensorInfo("classes", "string", [None]),
                       "probabilities": TensorInfo("probabilities", "float32", [None, None])}
        self._signatures = {"serving_default": SignatureDef(inputs, outputs, _PREDICT)}

    @property
    def signatures(self):
        return dict(self._signatures)

    def run(self, signature_name, feeds):
        raise InvalidInput("this automl model answers raw records through :predict, "
                           ":classify or :regress")

    def close(self):
        pass

    def answer_request(self, verb, document):
        name = document.get("signature_name", "serving_default") or "serving_default"
        if name != "serving_default":
            raise ApiError(f'Serving signature name: "{str(name)[:200]}" not found in '
                           f'signature def', 404)
        frame = _records(verb, document)
        try:
            with self._lock:
                _, labels, proba = self.predictor.predict_both(frame, where="instance",
                                                             what="request")
        except DataError as exc:
            raise ApiError(str(exc), 400) from None
        task = self.predictor.task
        if verb == "regress" or (verb == "predict" and task == "regression"):
            if task != "regression":
                raise ApiError("this model classifies; use :classify or :predict", 400)
            values = [float(v) for v in labels]
            return {"results": values} if verb == "regress" else {"predictions": values}
        if task == "regression":
            raise ApiError("this model does regression; use :regress or :predict", 400)
        classes = self.predictor.classes_
        if verb == "classify":
            return {"results": [[[str(c), float(p)] for c, p in zip(classes, row)]
                                for row in proba]}
        return {"predictions": [{"classes": _plain(label),
                                 "probabilities": [float(p) for p in row],
                                 "all_classes": classes}
                                for label, row in zip(labels, proba)]}


def _plain(value):
    return value.item() if isinstance(value, np.generic) else value


def _records(verb, document):
    import pandas as pd
    if verb == "predict":
        if ("instances" in document) == ("inputs" in document):
            raise ApiError("Missing 'inputs' or 'instances' key" if "instances" not in
                           document else "Request must contain either 'instances' or "
                           "'inputs', not both")
        if "inputs" in document:
            columns = document["inputs"]
            if not isinstance(columns, dict):
                raise ApiError("'inputs' must be an object of columns, e.g. "
                               "{\"age\": [39], \"workclass\": [\"Private\"]}")
            try:
                return pd.DataFrame({k: v if isinstance(v, list) else [v]
                                     for k, v in columns.items()})
            except ValueError as exc:
                raise ApiError(f"'inputs': {exc}") from None
        rows, key = document["instances"], "instances"
        context = {}
    else:
        rows, key = document.get("examples"), "examples"
        context = document.get("context", {})
        if not isinstance(context, dict):
            raise ApiError("'context' must be an object of features")
    if not isinstance(rows, list) or not rows:
        raise ApiError(f"'{key}' must be a non-empty list of records, e.g. "
                       f"[{{\"age\": 39, \"workclass\": \"Private\"}}]")
    for index, row in enumerate(rows):
        if not isinstance(row, dict):
            raise ApiError(f"{key[:-1]} {index}: expected an object of named values like "
                           f"{{\"age\": 39}}, got {str(row)[:60]}")
        for value in row.values():
            if isinstance(value, (list, dict)):
                raise ApiError(f"{key[:-1]} {index}: values must be single numbers or "
                               f"strings, got {str(value)[:60]}")
    return pd.DataFrame([{**context, **row} for row in rows])


class SingleModelManager(model_manager.ModelManager):
    """A ModelManager whose one version (1) is the automl model directory itself."""

    def _scan(self):
        self.last_poll_error = None
        return {1: self.config.base_path}
