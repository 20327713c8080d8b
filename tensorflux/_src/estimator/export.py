"""tf.estimator.export: serving input receivers, exporters, and the SavedModel export
of an Estimator (a timestamped directory under export_dir_base, TF's signatures)."""

from __future__ import annotations

import glob
import logging
import os
import shutil
import time

from tensorflux._src.estimator.export_output import (  # noqa: F401  (re-exported)
    ClassificationOutput, ExportOutput, PredictOutput, RegressionOutput,
)
from tensorflux._src.framework.graph_keys import GraphKeys
from tensorflux._src.framework.operation import Tensor
from tensorflux._src.framework.sparse_tensor import SparseTensor

logger = logging.getLogger("tensorflux.estimator")


def _wrap(value, default_key, what):
    if value is None:
        raise ValueError(f"{what} must be defined.")
    if not isinstance(value, dict):
        value = {default_key: value}
    for key, tensor in value.items():
        if not isinstance(key, str):
            raise ValueError(f"{what} keys must be strings: {key}.")
        if not isinstance(tensor, (Tensor, SparseTensor)):
            raise ValueError(f"{what} {key} must be a Tensor or SparseTensor.")
    return value


class ServingInputReceiver:
    """features (what model_fn gets) and receiver_tensors (what a request feeds)."""

    def __init__(self, features, receiver_tensors, receiver_tensors_alternatives=None):
        self.features = _wrap(features, "feature", "feature")
        self.receiver_tensors = _wrap(receiver_tensors, "input", "receiver_tensor")
        self.receiver_tensors_alternatives = {
            name: _wrap(t, "input", "receiver_tensor")
            for name, t in (receiver_tensors_alternatives or {}).items()}


class TensorServingInputReceiver(ServingInputReceiver):
    """Like ServingInputReceiver, but model_fn gets the one feature tensor itself."""

    def __init__(self, features, receiver_tensors, receiver_tensors_alternatives=None):
        if not isinstance(features, (Tensor, SparseTensor)):
            raise ValueError(f"feature must be a Tensor or SparseTensor; got {features!r}")
        super().__init__(features, receiver_tensors, receiver_tensors_alternatives)
        self.features = features


def build_parsing_serving_input_receiver_fn(feature_spec, default_batch_size=None):
    """A receiver_fn that takes serialized tf.Examples ("examples") and parses them."""
    def serving_input_receiver_fn():
        from tensorflux._src.framework import dtypes
        from tensorflux._src.ops.constant import placeholder
        from tensorflux._src.ops.strings.parsing_ops import parse_example
        serialized = placeholder(dtypes.string, [default_batch_size],
                                 name="input_example_tensor")
        features = parse_example(serialized, feature_spec)
        return ServingInputReceiver(features, {"examples": serialized})
    return serving_input_receiver_fn


def build_raw_serving_input_receiver_fn(features, default_batch_size=None):
    """A receiver_fn feeding placeholders shaped like `features` (batch dim replaced)."""
    def serving_input_receiver_fn():
        from tensorflux._src.ops.constant import placeholder
        receivers = {}
        for name, t in features.items():
            dims = t.shape.as_list() if t.shape.ndims is not None else None
            shape = None if dims is None else [default_batch_size] + dims[1:]
            receivers[name] = placeholder(t.dtype, shape, name=t.op.name)
        return ServingInputReceiver(receivers, dict(receivers))
    return serving_input_receiver_fn


def get_timestamped_export_dir(export_dir_base):
    """export_dir_base/<seconds since epoch>, waiting a second if that one exists (TF)."""
    for _ in range(10):
        path = os.path.join(os.fspath(export_dir_base), str(int(time.time())))
        if not os.path.exists(path):
            return path
        time.sleep(1)
    raise RuntimeError("Failed to obtain a unique export directory name after 10 attempts.")


def _signature_defs(export_outputs, receiver):
    """One SignatureDef per export output; classify/regress outputs that need one string
    input are left out (with a warning, as TF) when the receiver has other inputs."""
    from tensorflux._src.serving.signatures import DEFAULT_SERVING_SIGNATURE_DEF_KEY
    receivers = {None: receiver.receiver_tensors, **receiver.receiver_tensors_alternatives}
    out = {}
    for rname, tensors in receivers.items():
        for key, output in export_outputs.items():
            name = key if rname is None else f"{rname}:{key}"
            try:
                out[name] = output.as_signature_def(tensors)
            except ValueError as e:
                logger.warning("Export includes no signature for %s: %s", name, e)
    if not out:
        raise ValueError("Export failed: no valid signature could be built from "
                         f"export_outputs {sorted(export_outputs)}.")
    if DEFAULT_SERVING_SIGNATURE_DEF_KEY not in out:
        logger.warning("Export includes no default signature!")
    return out


def export_estimator(estimator, export_dir_base, serving_input_receiver_fn, assets_extra,
                     as_text, checkpoint_path):
    from tensorflux._src.estimator.estimator import _copy_assets_extra
    from tensorflux._src.estimator.model_fn import ModeKeys
    from tensorflux._src.runtime.session import Session
    from tensorflux._src.serving.saved_model import SavedModelBuilder
    from tensorflux._src.serving.signatures import SERVING
    if serving_input_receiver_fn is None:
        raise ValueError("An input_receiver_fn must be defined.")
    checkpoint_path = checkpoint_path or estimator.latest_checkpoint()
    if not checkpoint_path:
        raise ValueError(f"Couldn't find trained model at {estimator.model_dir}.")
    graph, _ = estimator._new_graph()
    with graph.as_default():
        receiver = serving_input_receiver_fn()
        if not isinstance(receiver, ServingInputReceiver):
            raise ValueError(f"serving_input_receiver_fn must return a ServingInputReceiver;"
                             f" got {receiver!r}")
        spec = estimator._call_model_fn(receiver.features, None, ModeKeys.PREDICT,
                                        estimator.config)
        signature_def_map = _signature_defs(spec.export_outputs, receiver)
        estimator._default_saver()
        spec.scaffold.finalize()
        export_dir = get_timestamped_export_dir(export_dir_base)
        with Session(graph=graph, config=estimator.config.session_config) as sess:
            spec.scaffold.saver.restore(sess, checkpoint_path)
            builder = SavedModelBuilder(export_dir)
            local_init = spec.scaffold.local_init_op
            builder.add_meta_graph_and_variables(
                sess, [SERVING], signature_def_map=signature_def_map,
                assets_collection=graph.get_collection(GraphKeys.ASSET_FILEPATHS),
                main_op=local_init, saver=spec.scaffold.saver)
            builder.save(as_text)
    _copy_assets_extra(export_dir, assets_extra)
    logger.info("SavedModel written to: %s", export_dir)
    return export_dir.encode()


# ---------------------------------------------------------------------- exporters
class Exporter:
    """Called by train_and_evaluate after an evaluation; returns the export's path."""

    @property
    def name(self):
        raise NotImplementedError

    def export(self, estimator, export_path, checkpoint_path, eval_result,
               is_the_final_export):
        raise NotImplementedError


class _SavedModelExporter(Exporter):
    def __init__(self, name, serving_input_receiver_fn, assets_extra=None, as_text=False):
        if not name:
            raise ValueError(f"Exporter name must be a non-empty string; got {name!r}")
        self._name = name
        self._receiver_fn = serving_input_receiver_fn
        self._assets_extra, self._as_text = assets_extra, as_text

    @property
    def name(self):
        return self._name

    def _export(self, estimator, export_path, checkpoint_path):
        return estimator.export_saved_model(export_path, self._receiver_fn,
                                            assets_extra=self._assets_extra,
                                            as_text=self._as_text,
                                            checkpoint_path=checkpoint_path)


def _garbage_collect(export_path, exports_to_keep):
    """Keeps the `exports_to_keep` newest timestamped exports under export_path."""
    if exports_to_keep is None:
        return
    versions = sorted(int(d) for d in os.listdir(export_path) if d.isdigit()) \
        if os.path.isdir(export_path) else []
    for version in versions[:-exports_to_keep] if exports_to_keep else versions:
        shutil.rmtree(os.path.join(export_path, str(version)), ignore_errors=True)


def _check_keep(exports_to_keep):
    if exports_to_keep is not None and exports_to_keep <= 0:
        raise ValueError(f"`exports_to_keep`, if provided, must be a positive number. Got "
                         f"{exports_to_keep}")


class FinalExporter(_SavedModelExporter):
    """Exports only after the final evaluation."""

    def export(self, estimator, export_path, checkpoint_path, eval_result,
               is_the_final_export):
        if not is_the_final_export:
            return None
        return self._export(estimator, export_path, checkpoint_path)


class LatestExporter(_SavedModelExporter):
    """Exports after every evaluation and keeps the newest `exports_to_keep`."""

    def __init__(self, name, serving_input_receiver_fn, assets_extra=None, as_text=False,
                 exports_to_keep=5):
        super().__init__(name, serving_input_receiver_fn, assets_extra, as_text)
        _check_keep(exports_to_keep)
        self._exports_to_keep = exports_to_keep

    def export(self, estimator, export_path, checkpoint_path, eval_result,
               is_the_final_export):
        path = self._export(estimator, export_path, checkpoint_path)
        _garbage_collect(export_path, self._exports_to_keep)
        return path


def _loss_smaller(best_eval_result, current_eval_result):
    for result, which in ((best_eval_result, "best_eval_result"),
                          (current_eval_result, "current_eval_result")):
        if not result or "loss" not in result:
            raise ValueError(f"{which} cannot be empty or no loss is found in it.")
    return best_eval_result["loss"] > current_eval_result["loss"]


class BestExporter(_SavedModelExporter):
    """Exports when an evaluation beats the best so far (by `compare_fn`, default: lower
    loss); the best so far is first read from the eval event files, as TF does."""

    def __init__(self, name="best_exporter", serving_input_receiver_fn=None,
                 event_file_pattern="eval/*.tfevents.*", compare_fn=_loss_smaller,
                 assets_extra=None, as_text=False, exports_to_keep=5):
        if not callable(compare_fn):
            raise ValueError("`compare_fn` must be callable.")
        super().__init__(name, serving_input_receiver_fn, assets_extra, as_text)
        _check_keep(exports_to_keep)
        self._compare_fn, self._event_file_pattern = compare_fn, event_file_pattern
        self._exports_to_keep = exports_to_keep
        self._best_eval_result = None
        self._model_dir = None

    def export(self, estimator, export_path, checkpoint_path, eval_result,
               is_the_final_export):
        if self._model_dir != estimator.model_dir and self._event_file_pattern:
            self._model_dir = estimator.model_dir
            pattern = os.path.join(estimator.model_dir, self._event_file_pattern)
            self._best_eval_result = self._best_from_events(pattern, eval_result)
        if self._best_eval_result is None or self._compare_fn(
                best_eval_result=self._best_eval_result, current_eval_result=eval_result):
            self._best_eval_result = eval_result
            path = self._export(estimator, export_path, checkpoint_path)
            _garbage_collect(export_path, self._exports_to_keep)
            return path
        return None

    def _best_from_events(self, pattern, current):
        """The best earlier evaluation in the event files (the current one excluded)."""
        from tensorflux._src.summary.summary_iterator import summary_iterator
        best = None
        for path in glob.glob(pattern):
            for event in summary_iterator(path):
                if not event.HasField("summary") or event.step == current.get("global_step"):
                    continue
                result = {v.tag: v.simple_value for v in event.summary.value
                          if v.HasField("simple_value")}
                if "loss" in result and (best is None or self._compare_fn(
                        best_eval_result=best, current_eval_result=result)):
                    best = result
        return best
