"""TPUEstimatorSpec: what a TPUEstimator model_fn returns (TF 1.15's fields and checks);
`as_estimator_spec()` is the equivalent EstimatorSpec a CPU run uses."""

from __future__ import annotations

import collections

from tensorflux._src.estimator.model_fn import EstimatorSpec
from tensorflux._src.framework import nest
from tensorflux._src.framework.operation import Tensor
from tensorflux._src.train.session_run_hook import SessionRunArgs, SessionRunHook

_FIELDS = ("mode", "predictions", "loss", "train_op", "eval_metrics", "export_outputs",
           "scaffold_fn", "host_call", "training_hooks", "evaluation_hooks",
           "prediction_hooks")


def validate_host_calls(host_calls):
    """TF's _OutfeedHostCall.validate: each entry is (callable, list or dict of tensors)
    and, when the function's arguments can be read, they match a dict's keys."""
    from tensorflux._src.train.monitored_session import _fn_args
    for name, host_call in host_calls.items():
        if not isinstance(host_call, (tuple, list)):
            raise ValueError(f"{name} should be tuple or list")  # noqa: TRY004 - TF's type
        if len(host_call) != 2:
            raise ValueError(f"{name} should have two elements.")
        if not callable(host_call[0]):
            raise TypeError(f"{name}[0] should be callable.")
        if not isinstance(host_call[1], (tuple, list, dict)):
            raise ValueError(f"{name}[1] should be tuple or list, or dict.")  # noqa: TRY004 - TF's type
        if isinstance(host_call[1], (tuple, list)):
            fn_args = [a for a in _fn_args(host_call[0]) if a != "self"]
            if fn_args and len(host_call[1]) != len(fn_args):
                raise RuntimeError(
                    f"In TPUEstimatorSpec.{name}, length of tensors {len(host_call[1])} "
                    f"does not match method args of the function, which takes "
                    f"{len(fn_args)}.")


def call_host_fn(host_call):
    """`fn(*tensors)` or `fn(**tensors)`, as TF passes them."""
    fn, tensors = host_call
    if isinstance(tensors, dict):
        return fn(**tensors)
    return fn(*tensors)


class HostCallHook(SessionRunHook):
    """Runs host_call's ops with every step (the CPU form of TF's outfeed host call)."""

    def __init__(self, fetches):
        self._fetches = fetches

    def before_run(self, run_context):
        return SessionRunArgs(self._fetches)


class TPUEstimatorSpec(collections.namedtuple("TPUEstimatorSpec", _FIELDS)):
    """TF 1.15's TPUEstimatorSpec. `eval_metrics` is (metric_fn, tensors): metric_fn runs
    on the host on the tensors of every evaluated batch, concatenated along axis 0;
    `host_call` is (fn, tensors) run on the host with each training step's tensors;
    `scaffold_fn` builds the Scaffold on the host."""

    def __new__(cls, mode, predictions=None, loss=None, train_op=None, eval_metrics=None,
                export_outputs=None, scaffold_fn=None, host_call=None, training_hooks=None,
                evaluation_hooks=None, prediction_hooks=None):
        host_calls = {}
        if eval_metrics is not None:
            host_calls["eval_metrics"] = eval_metrics
        if host_call is not None:
            host_calls["host_call"] = host_call
        validate_host_calls(host_calls)
        training_hooks = tuple(training_hooks or [])
        evaluation_hooks = tuple(evaluation_hooks or [])
        prediction_hooks = tuple(prediction_hooks or [])
        for hook in training_hooks + evaluation_hooks + prediction_hooks:
            if not isinstance(hook, SessionRunHook):
                raise TypeError(f"All hooks must be SessionRunHook instances, given: {hook}")
        return super().__new__(cls, mode, predictions, loss, train_op, eval_metrics,
                               export_outputs, scaffold_fn, host_call, training_hooks,
                               evaluation_hooks, prediction_hooks)

    def as_estimator_spec(self):
        """The equivalent EstimatorSpec used by CPU train/eval: eval_metrics become
        eval_metric_ops, host_call a hook running its ops with each step."""
        eval_metric_ops = None
        if self.eval_metrics is not None:
            eval_metric_ops = call_host_fn(self.eval_metrics)
        hooks = ()
        if self.host_call is not None:
            ops = call_host_fn(self.host_call)
            hooks = (HostCallHook([t for t in nest.flatten(ops) if t is not None]),)
        scaffold = self.scaffold_fn() if self.scaffold_fn else None
        return EstimatorSpec(
            mode=self.mode, predictions=self.predictions, loss=self.loss,
            train_op=self.train_op, eval_metric_ops=eval_metric_ops,
            export_outputs=self.export_outputs, scaffold=scaffold,
            training_hooks=self.training_hooks + hooks,
            evaluation_hooks=self.evaluation_hooks + hooks,
            prediction_hooks=self.prediction_hooks + hooks)


def is_tensor(value):
    return isinstance(value, Tensor)
