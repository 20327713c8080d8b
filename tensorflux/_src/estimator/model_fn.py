"""ModeKeys and EstimatorSpec: what a model_fn returns, validated as TF 1.15 does."""

from __future__ import annotations

import collections

from tensorflux._src.estimator import export_output as export_output_lib
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework import nest
from tensorflux._src.framework.operation import Operation, Tensor
from tensorflux._src.serving.signatures import DEFAULT_SERVING_SIGNATURE_DEF_KEY
from tensorflux._src.train.session_run_hook import SessionRunHook


class ModeKeys:
    """The three modes a model_fn is called in (TF's string values, so they serialize
    into SavedModel tags and logs as TF's do)."""
    TRAIN = "train"
    EVAL = "eval"
    PREDICT = "infer"


# Possible causes TF lists when an EstimatorSpec value comes from another graph.
_OTHER_GRAPH = ('{0} with "{1}" must be from the default graph. Possible causes of this '
                'error include: \n\n1) {0} was created outside the context of the default '
                'graph.\n\n2) The object passed through to EstimatorSpec was not created in '
                'the most recent call to "model_fn".')


def _check_tensor(value, name):
    if not isinstance(value, Tensor):
        raise TypeError(f"{name} must be Tensor, given: {value}")
    return value


def _check_tensor_or_op(value, name):
    if not isinstance(value, (Tensor, Operation)):
        raise TypeError(f"{name} must be Operation or Tensor, given: {value}")


def _check_graph(value, what, label):
    if value.graph is not _graph.get_default_graph():
        raise ValueError(_OTHER_GRAPH.format(what, label))


def _validate_train_op(train_op, mode):
    if train_op is None:
        if mode == ModeKeys.TRAIN:
            raise ValueError("Missing train_op.")
        return None
    _check_tensor_or_op(train_op, "train_op")
    _check_graph(train_op, "train_op", train_op.name)
    return train_op


def _validate_loss(loss, mode):
    if loss is None:
        if mode in (ModeKeys.TRAIN, ModeKeys.EVAL):
            raise ValueError("Missing loss.")
        return None
    loss = _check_tensor(loss, "loss")
    n = loss.shape.num_elements()
    if n not in (None, 1):
        raise ValueError(f"Loss must be scalar, given: {loss}")
    if loss.shape.ndims != 0:
        # A [1]-shaped loss is accepted and reshaped, as TF does, so summaries get a scalar.
        from tensorflux._src.ops.array.array_ops import reshape
        loss = reshape(loss, [])
    _check_graph(loss, "loss", loss.name)
    return loss


def _validate_predictions(predictions, mode):
    if predictions is None:
        if mode == ModeKeys.PREDICT:
            raise ValueError("Missing predictions.")
        return {}
    if isinstance(predictions, dict):
        predictions = {k: _check_tensor(v, f"predictions[{k}]") for k, v in predictions.items()}
        for key, value in predictions.items():
            _check_graph(value, "prediction values", f"{key}: {value.name}")
        return predictions
    predictions = _check_tensor(predictions, "predictions")
    _check_graph(predictions, "prediction values", predictions.name)
    return predictions


def _validate_export_outputs(export_outputs, predictions, mode):
    if mode != ModeKeys.PREDICT:
        return export_outputs
    if export_outputs is None:
        export_outputs = {DEFAULT_SERVING_SIGNATURE_DEF_KEY:
                          export_output_lib.PredictOutput(predictions)}
    if not isinstance(export_outputs, dict):
        raise TypeError(f"export_outputs must be dict, given: {export_outputs}")
    if not all(isinstance(v, export_output_lib.ExportOutput) for v in export_outputs.values()):
        raise TypeError(f"Values in export_outputs must be ExportOutput objects. "
                        f"Given: {export_outputs}")
    export_outputs = dict(export_outputs)
    if len(export_outputs) == 1:
        (value,) = export_outputs.values()
        export_outputs.setdefault(DEFAULT_SERVING_SIGNATURE_DEF_KEY, value)
    elif DEFAULT_SERVING_SIGNATURE_DEF_KEY not in export_outputs:
        raise ValueError("Multiple export_outputs were provided, but none of them is "
                         "specified as the default.  Do this by naming one of them with "
                         "signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY.")
    return export_outputs


def _validate_hooks(hooks):
    hooks = tuple(hooks or [])
    for hook in hooks:
        if not isinstance(hook, SessionRunHook):
            raise TypeError(f"All hooks must be SessionRunHook instances, given: {hook}")
    return hooks


def _validate_eval_metric_ops(eval_metric_ops):
    if eval_metric_ops is None:
        return {}
    if not isinstance(eval_metric_ops, dict):
        raise TypeError(f"eval_metric_ops must be a dict, given: {eval_metric_ops}")
    for key, value in eval_metric_ops.items():
        if not isinstance(value, tuple) or len(value) != 2:
            raise TypeError(f"Values of eval_metric_ops must be (metric_value, update_op) "
                            f"tuples, given: {value} for key: {key}")
        for member in nest.flatten(value[0]) + [value[1]]:
            _check_tensor_or_op(member, f"eval_metric_ops[{key}]")
            _check_graph(member, "eval_metric_ops", f"{key}: {member.name}")
    return dict(eval_metric_ops)


def _validate_scaffold(scaffold):
    from tensorflux._src.train.monitored_session import Scaffold
    scaffold = scaffold or Scaffold()
    if not isinstance(scaffold, Scaffold):
        raise TypeError(f"scaffold must be tf.train.Scaffold. Given: {scaffold}")
    return scaffold


_FIELDS = ("mode", "predictions", "loss", "train_op", "eval_metric_ops", "export_outputs",
           "training_chief_hooks", "training_hooks", "scaffold", "evaluation_hooks",
           "prediction_hooks")


class EstimatorSpec(collections.namedtuple("EstimatorSpec", _FIELDS)):
    """Ops and objects a model_fn returns; which are required depends on `mode`."""

    def __new__(cls, mode, predictions=None, loss=None, train_op=None, eval_metric_ops=None,
                export_outputs=None, training_chief_hooks=None, training_hooks=None,
                scaffold=None, evaluation_hooks=None, prediction_hooks=None):
        if mode not in (ModeKeys.TRAIN, ModeKeys.EVAL, ModeKeys.PREDICT):
            raise ValueError(f"mode={mode!r} is not one of ModeKeys.TRAIN ('train'), "
                             f"ModeKeys.EVAL ('eval'), ModeKeys.PREDICT ('infer').")
        train_op = _validate_train_op(train_op, mode)
        loss = _validate_loss(loss, mode)
        predictions = _validate_predictions(predictions, mode)
        export_outputs = _validate_export_outputs(export_outputs, predictions, mode)
        return super().__new__(
            cls, mode=mode, predictions=predictions, loss=loss, train_op=train_op,
            eval_metric_ops=_validate_eval_metric_ops(eval_metric_ops),
            export_outputs=export_outputs,
            training_chief_hooks=_validate_hooks(training_chief_hooks),
            training_hooks=_validate_hooks(training_hooks),
            scaffold=_validate_scaffold(scaffold),
            evaluation_hooks=_validate_hooks(evaluation_hooks),
            prediction_hooks=_validate_hooks(prediction_hooks))

    def _replace(self, **kwds):
        if "mode" in kwds and self.mode != kwds["mode"]:
            raise ValueError("mode of EstimatorSpec cannot be changed.")
        fields = [kwds.pop(f, v) for f, v in zip(self._fields, self)]
        return EstimatorSpec(*fields)
