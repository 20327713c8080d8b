"""tf.estimator.export's ExportOutput classes: each becomes one SignatureDef of an export
(TF 1.15's classify / regress / predict conventions)."""

from __future__ import annotations

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework.operation import Tensor
from tensorflux._src.serving import signatures as sig


class ExportOutput:
    """One output signature; `as_signature_def(receiver_tensors)` builds it."""

    def as_signature_def(self, receiver_tensors):
        raise NotImplementedError


def _single_string_input(receiver_tensors, what):
    # classify/regress take serialized tf.Examples: exactly one string input.
    if len(receiver_tensors) != 1:
        raise ValueError(f"{what} input must be a single string Tensor; got "
                         f"{receiver_tensors}")
    (examples,) = receiver_tensors.values()
    if examples.dtype != _dtypes.string:
        raise ValueError(f"{what} input must be a single string Tensor; got "
                         f"{receiver_tensors}")
    return examples


class ClassificationOutput(ExportOutput):
    """scores (float32 [batch, n]) and/or classes (string [batch, n])."""

    def __init__(self, scores=None, classes=None):
        if scores is not None and not (isinstance(scores, Tensor)
                                       and scores.dtype == _dtypes.float32):
            raise ValueError(f"Classification scores must be a float32 Tensor; got {scores}")
        if classes is not None and not (isinstance(classes, Tensor)
                                        and classes.dtype == _dtypes.string):
            raise ValueError(f"Classification classes must be a string Tensor; got {classes}")
        if scores is None and classes is None:
            raise ValueError("At least one of scores and classes must be set.")
        self._scores, self._classes = scores, classes

    @property
    def scores(self):
        return self._scores

    @property
    def classes(self):
        return self._classes

    def as_signature_def(self, receiver_tensors):
        examples = _single_string_input(receiver_tensors, "Classification")
        return sig.classification_signature_def(examples, self._classes, self._scores)


class RegressionOutput(ExportOutput):
    """One float32 prediction per example."""

    def __init__(self, value):
        if not (isinstance(value, Tensor) and value.dtype == _dtypes.float32):
            raise ValueError(f"Regression output value must be a float32 Tensor; got {value}")
        self._value = value

    @property
    def value(self):
        return self._value

    def as_signature_def(self, receiver_tensors):
        examples = _single_string_input(receiver_tensors, "Regression")
        return sig.regression_signature_def(examples, self._value)


class PredictOutput(ExportOutput):
    """Any named tensors; a single tensor is named "output" as in TF."""

    _SINGLE_OUTPUT_DEFAULT_NAME = "output"

    def __init__(self, outputs):
        if not isinstance(outputs, dict):
            outputs = {self._SINGLE_OUTPUT_DEFAULT_NAME: outputs}
        for key, value in outputs.items():
            if not isinstance(key, str):
                raise ValueError(f"Prediction output key must be a string; got {key}.")
            if not isinstance(value, Tensor):
                raise ValueError(f"Prediction output value for key {key} must be a Tensor; "
                                 f"got {value}.")
        self._outputs = dict(outputs)

    @property
    def outputs(self):
        return self._outputs

    def as_signature_def(self, receiver_tensors):
        return sig.predict_signature_def(receiver_tensors, self._outputs)
