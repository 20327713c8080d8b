"""TPUEstimator (TF 1.15): an Estimator whose model step runs replicated over
`num_shards` devices, `iterations_per_loop` training steps per Session.run.

How a TPU run maps here:
- the shards are tensorflux's SPMD `Replicas` (runtime/devices.py): the model_fn is
  built once, for the global batch, and every op it makes is marked to run as one XLA
  program over the first num_shards devices, data split along the batch axis;
- TF's infeed is `InfeedDataset` (infeed.py): one element per loop, the loop's batches
  stacked [global_batch, steps, ...];
- TF's training loop is a tf.while_loop whose body slices step i's batch and calls the
  model_fn: the whole loop (forward, gradients, optimizer updates, global step) is one
  compiled executable, so the host makes one Session.run per loop;
- TF's outfeed (host_call, eval_metrics tensors) is a local [steps, ...] variable per
  tensor, written with each step's value inside the loop and read after it.
`use_tpu=False` (and export, and evaluation with eval_on_tpu=False) runs the model_fn as a
plain Estimator does, a TPUEstimatorSpec converted by as_estimator_spec().
"""

from __future__ import annotations

import logging

from tensorflux._src.data.dataset_ops import Dataset
from tensorflux._src.estimator import estimator as estimator_lib
from tensorflux._src.estimator.model_fn import EstimatorSpec, ModeKeys
from tensorflux._src.estimator.tpu import loop_hooks, shard_context
from tensorflux._src.estimator.tpu.infeed import InfeedDataset
from tensorflux._src.estimator.tpu.tpu_config import (
    InputPipelineConfig,
    RunConfig,
    check_positive_integer,
)
from tensorflux._src.estimator.tpu.tpu_context import InternalContext, TPUContext
from tensorflux._src.estimator.tpu.tpu_estimator_spec import (
    TPUEstimatorSpec,
    call_host_fn,
)
from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework import nest
from tensorflux._src.framework.graph_keys import GraphKeys

logger = logging.getLogger("tensorflux.estimator")

_BATCH_SIZE_KEY, _CTX_KEY, _USE_TPU_KEY = "batch_size", "context", "use_tpu"
_RESERVED_PARAMS_KEYS = [_BATCH_SIZE_KEY, _CTX_KEY]


class TPUEstimator(estimator_lib.Estimator):
    """TF 1.15's TPUEstimator (see the module docstring). params['batch_size'] is TF's:
    input_fn gets the per-host batch (train_batch_size with PER_HOST_V1 on one host),
    or the per-replica one with PER_HOST_V2 (each step then takes num_shards elements);
    model_fn gets train_batch_size // num_shards. The model_fn's tensors still hold the
    *global* batch: the shards are a layout of one SPMD program."""

    def __init__(self, model_fn=None, model_dir=None, config=None, params=None, use_tpu=True,
                 train_batch_size=None, eval_batch_size=None, predict_batch_size=None,
                 batch_axis=None, eval_on_tpu=True, export_to_tpu=True, export_to_cpu=True,
                 warm_start_from=None, embedding_config_spec=None,
                 export_saved_model_api_version=None):
        if config is None or not isinstance(config, RunConfig):
            raise ValueError("`config` must be provided with type `tpu_config.RunConfig`")
        if params is not None and any(k in params for k in _RESERVED_PARAMS_KEYS):
            raise ValueError(f"{_RESERVED_PARAMS_KEYS} are reserved keys but existed in "
                             f"params {params}.")
        if use_tpu:
            if train_batch_size is None:
                raise ValueError("`train_batch_size` cannot be `None`")
            check_positive_integer(train_batch_size, "train_batch_size")
            if (config.tpu_config.per_host_input_for_training
                    is InputPipelineConfig.PER_SHARD_V1
                    and config.tpu_config.num_cores_per_replica):
                raise ValueError("Model parallelism only supports per host input for "
                                 "training. Please adjust TPURunconfig.per_host_input_for_"
                                 "training.")
            if eval_batch_size is not None:
                check_positive_integer(eval_batch_size, "eval_batch_size")
            if predict_batch_size is not None:
                check_positive_integer(predict_batch_size, "predict_batch_size")
        if embedding_config_spec is not None:
            raise NotImplementedError("TPUEstimator(embedding_config_spec=...) (TPU "
                                      "embeddings) is not supported by tensorflux.")
        if batch_axis is not None and any(a not in (0, None) for a in nest.flatten(
                batch_axis)):
            raise NotImplementedError(f"batch_axis={batch_axis!r}: tensorflux's "
                                      f"TPUEstimator splits every input along axis 0 only.")
        if config.tpu_config.num_cores_per_replica not in (None, 1):
            raise NotImplementedError("TPUConfig.num_cores_per_replica > 1 (model "
                                      "parallelism) is not supported by tensorflux.")
        estimator_lib._verify_model_fn_args(model_fn, params)
        self._user_model_fn = model_fn
        self._log_every_n_steps = config.log_step_count_steps
        config = config.replace(log_step_count_steps=None)
        super().__init__(model_fn=self._augmented_model_fn, model_dir=model_dir,
                         config=config, params=params or {}, warm_start_from=warm_start_from)
        self._ctx = InternalContext(self._config, train_batch_size, eval_batch_size,
                                    predict_batch_size, use_tpu, eval_on_tpu)
        self._export_to_tpu, self._export_to_cpu = export_to_tpu, export_to_cpu
        self._is_input_fn_invoked = None
        self._train_steps = self._eval_steps = None

    def _steps_per_run(self):
        if self._ctx.is_running_on_cpu(ModeKeys.TRAIN):
            return 1
        return self._config.tpu_config.iterations_per_loop

    # ------------------------------------------------------------------ entry points
    def train(self, input_fn, hooks=None, steps=None, max_steps=None, saving_listeners=None):
        self._train_steps = (steps, max_steps)
        return super().train(input_fn, hooks=hooks, steps=steps, max_steps=max_steps,
                             saving_listeners=saving_listeners)

    def evaluate(self, input_fn, steps=None, hooks=None, checkpoint_path=None, name=None):
        if self._ctx.is_running_on_cpu(ModeKeys.EVAL):
            return super().evaluate(input_fn, steps, hooks, checkpoint_path, name)
        if steps is None:
            raise ValueError("Evaluate `steps` must be set on TPU. Cannot be `None`.")
        if steps <= 0:
            raise ValueError(f"Must specify steps > 0, given: {steps}")
        # All `steps` batches run as one loop: one Session.run (TF's TPU evaluation).
        self._eval_steps = steps
        return super().evaluate(input_fn, 1, hooks, checkpoint_path, name)

    def export_saved_model(self, export_dir_base, serving_input_receiver_fn,
                           assets_extra=None, as_text=False, checkpoint_path=None):
        if not self._export_to_cpu:
            raise ValueError("tensorflux exports the CPU metagraph only; "
                             "export_to_cpu=False leaves nothing to export.")
        if self._export_to_tpu:
            logger.info("export_to_tpu: tensorflux writes one serving metagraph (tag "
                        "'serve'); XLA compiles it for whichever device serves it.")
        return super().export_saved_model(export_dir_base, serving_input_receiver_fn,
                                          assets_extra, as_text, checkpoint_path)

    # ------------------------------------------------------------------ input_fn
    def _call_input_fn(self, input_fn, mode):
        if not callable(input_fn):
            raise ValueError(f"input_fn must be callable, given: {input_fn!r}")  # noqa: TRY004 - TF's type
        args, kwargs = estimator_lib._fn_args(input_fn), {}
        if "params" not in args:
            raise ValueError(f"input_fn ({input_fn}) does not include params argument, "
                             f"required by TPUEstimator to pass batch size as "
                             f"params[\"batch_size\"]")
        params = dict(self.params)
        ctx = self._ctx
        batch_size = ctx.batch_size_for_input_fn(mode)
        if batch_size is not None:
            params[_BATCH_SIZE_KEY] = batch_size
        on_cpu = ctx.is_running_on_cpu(mode)
        if not on_cpu:
            ctx.validate(mode)
            params[_CTX_KEY] = TPUContext(ctx, mode, call_from_input_fn=True)
        kwargs["params"] = params
        if "mode" in args:
            kwargs["mode"] = mode
        if "config" in args:
            kwargs["config"] = self._config
        self._is_input_fn_invoked = True
        result = input_fn(**kwargs)
        if not on_cpu:
            if not isinstance(result, Dataset):
                raise ValueError(
                    f"TPUEstimator's input_fn must return a tf.data.Dataset when running "
                    f"on the replicas (use_tpu=True); got {type(result).__name__}. Return "
                    f"the dataset itself (batched with params['batch_size'], "
                    f"drop_remainder=True): the host stacks a loop's batches from it.")
            steps = {ModeKeys.TRAIN: ctx.iterations_per_loop,
                     ModeKeys.EVAL: self._eval_steps}.get(mode, 1)
            result = InfeedDataset(result, steps, ctx.elements_per_step(mode))
        return estimator_lib.parse_input_fn_result(result)

    # ------------------------------------------------------------------ model_fn
    def _augmented_model_fn(self, features, labels, mode, params, config):
        is_export_mode = not self._is_input_fn_invoked
        self._is_input_fn_invoked = None
        ctx = self._ctx
        if ctx.is_running_on_cpu(mode, is_export_mode):
            logger.info("Running %s on CPU", mode)
            spec = self._call_user_model_fn(features, labels, mode, params, config,
                                            running_on_cpu=True, is_export_mode=is_export_mode)
            if isinstance(spec, TPUEstimatorSpec):
                spec = spec.as_estimator_spec()
            if mode == ModeKeys.TRAIN and self._log_every_n_steps is not None and isinstance(
                    spec, EstimatorSpec):
                spec = spec._replace(training_hooks=spec.training_hooks + (
                    self._examples_hook(ModeKeys.TRAIN),))
            return spec
        graph = _graph.get_default_graph()
        start = len(graph.get_operations())
        if mode == ModeKeys.TRAIN:
            spec, host_ops = self._train_loop(features, labels, params, config)
        elif mode == ModeKeys.EVAL:
            spec, host_ops = self._eval_loop(features, labels, params, config)
        else:
            spec, host_ops = self._predict_step(features, params, config)
        # Everything the step built runs as SPMD over the replicas; the host_call's ops
        # (run once per step after a loop, on fed values) stay on one device.
        replicas = ctx.replicas()
        for op in graph.get_operations()[start:]:
            if op not in host_ops:
                op._replicas = replicas
        return spec

    def _call_user_model_fn(self, features, labels, mode, params, config, running_on_cpu,
                            is_export_mode):
        model_fn = self._user_model_fn
        args = estimator_lib._fn_args(model_fn)
        kwargs = estimator_lib.model_fn_kwargs(args, labels, mode, config)
        params = dict(params)
        if "params" not in args:
            raise ValueError(f"model_fn ({model_fn}) does not include params argument, "
                             f"required by TPUEstimator to pass batch size as "
                             f"params['batch_size']")
        kwargs["params"] = params
        batch_size = None if is_export_mode else self._ctx.batch_size_for_model_fn(mode)
        if batch_size is not None:
            params[_BATCH_SIZE_KEY] = batch_size
        if not is_export_mode:
            params[_USE_TPU_KEY] = not running_on_cpu
        if not running_on_cpu:
            params[_CTX_KEY] = TPUContext(self._ctx, mode, call_from_input_fn=False)
        shards = 1 if running_on_cpu else self._ctx.num_replicas
        with shard_context.tpu_shard_context(shards):
            return model_fn(features=features, **kwargs)

    def _examples_hook(self, mode):
        cfg = self._config
        return loop_hooks.ExamplesPerSecondHook(
            self._ctx.global_batch_size(mode), every_n_steps=self._log_every_n_steps,
            output_dir=self._model_dir if cfg.save_summary_steps else None)

    # ------------------------------------------------------------------ TRAIN
    def _train_loop(self, features, labels, params, config):
        from tensorflux._src.ops import constant as constant_op
        from tensorflux._src.ops.array import array_ops
        from tensorflux._src.ops.control import control_ops
        from tensorflux._src.ops.control.control_flow_ops import while_loop
        from tensorflux._src.ops.math import math_ops
        from tensorflux._src.train.basic_session_run_hooks import LoggingTensorHook
        from tensorflux._src.train.optimizer import get_or_create_global_step
        per_loop = self._config.tpu_config.iterations_per_loop
        iterations = constant_op.placeholder_with_default(
            constant_op.constant(per_loop), [], name="iterations_per_loop")
        steps_run = math_ops.minimum(iterations, _loop_length(features))
        captured = {}

        def body(i, _loss):
            step_features, step_labels = _step_slice((features, labels), i)
            spec = self._call_user_model_fn(step_features, step_labels, ModeKeys.TRAIN,
                                            params, config, False, False)
            spec = _verify_train_spec(spec)
            captured["spec"] = spec
            deps = [spec.train_op]
            host_call = getattr(spec, "host_call", None)
            if host_call is not None:
                captured["host_call"] = _Outfeed(host_call, per_loop, "host_call")
                deps += captured["host_call"].record(i)
            with _graph.control_dependencies(deps):
                return i + 1, array_ops.identity(array_ops.reshape(spec.loss, []))

        _, loss = while_loop(lambda i, _loss: math_ops.less(i, steps_run), body,
                             [constant_op.constant(0), constant_op.constant(1e7)],
                             name="tpu_loop")
        spec = captured["spec"]
        global_step = get_or_create_global_step()
        with _graph.control_dependencies([loss]):
            step_after = array_ops.identity(global_step.read_value()
                                            if hasattr(global_step, "read_value")
                                            else global_step)
        steps, max_steps = self._train_steps or (None, None)
        hooks = [loop_hooks.LoopIterationsHook(iterations, step_after, per_loop, steps,
                                               max_steps)]
        host_ops = set()
        if "host_call" in captured:
            outfeed = captured["host_call"]
            placeholders, ops = outfeed.host_side()
            host_ops = _ops_between(ops, placeholders)
            hooks.append(loop_hooks.HostCallLoopHook(
                outfeed.read_after(loss), steps_run, placeholders, ops, step_after,
                self._config.tpu_config.experimental_host_call_every_n_steps))
        if self._log_every_n_steps is not None:
            every = (self._log_every_n_steps + per_loop - 1) // per_loop  # loops, rounded up
            hooks.append(LoggingTensorHook({"loss": array_ops.identity(loss),
                                            "step": step_after}, every_n_iter=every))
            hooks.append(self._examples_hook(ModeKeys.TRAIN))
        hooks.extend(spec.training_hooks)
        scaffold = _scaffold(spec)
        train_op = control_ops.group(loss, step_after)
        return EstimatorSpec(ModeKeys.TRAIN, loss=loss, train_op=train_op,
                             training_hooks=hooks, scaffold=scaffold), host_ops

    # ------------------------------------------------------------------ EVAL
    def _eval_loop(self, features, labels, params, config):
        from tensorflux._src.ops import constant as constant_op
        from tensorflux._src.ops.array import array_ops
        from tensorflux._src.ops.control.control_flow_ops import while_loop
        from tensorflux._src.ops.math import math_ops
        total_steps = self._eval_steps
        steps_run = math_ops.minimum(constant_op.constant(total_steps),
                                     _loop_length(features))
        captured = {}

        def body(i, total_loss):
            step_features, step_labels = _step_slice((features, labels), i)
            spec = self._call_user_model_fn(step_features, step_labels, ModeKeys.EVAL,
                                            params, config, False, False)
            if not isinstance(spec, TPUEstimatorSpec):
                raise RuntimeError(f"estimator_spec used by TPU evaluation must have type"  # noqa: TRY004 - TF's type
                                   f"`TPUEstimatorSpec`. Got {type(spec)}")
            captured["spec"] = spec
            deps = []
            if spec.eval_metrics is not None:
                captured["eval_metrics"] = _Outfeed(spec.eval_metrics, total_steps,
                                                    "eval_metrics")
                deps += captured["eval_metrics"].record(i)
            with _graph.control_dependencies(deps):
                return i + 1, math_ops.add(total_loss, array_ops.reshape(spec.loss, []))

        _, total_loss = while_loop(lambda i, _t: math_ops.less(i, steps_run), body,
                                   [constant_op.constant(0), constant_op.constant(0.0)],
                                   name="tpu_loop")
        spec = captured["spec"]
        mean_loss = math_ops.truediv(total_loss, math_ops.cast(steps_run, _dtypes.float32))
        eval_metric_ops = None
        if "eval_metrics" in captured:
            # metric_fn runs on every evaluated batch at once: its tensors concatenated
            # along the batch axis (TF concatenates the shards'; here the steps' too).
            outfeed = captured["eval_metrics"]
            stacked = outfeed.read_after(total_loss)
            joined = [array_ops.reshape(
                t[:steps_run], array_ops.concat([[-1], array_ops.shape(t)[2:]], 0))
                for t in stacked]
            eval_metric_ops = call_host_fn((outfeed.fn, outfeed.pack(joined)))
        return EstimatorSpec(ModeKeys.EVAL, loss=mean_loss, eval_metric_ops=eval_metric_ops,
                             evaluation_hooks=spec.evaluation_hooks,
                             scaffold=_scaffold(spec)), set()

    # ------------------------------------------------------------------ PREDICT
    def _predict_step(self, features, params, config):
        step_features = _step_slice(features, 0)
        spec = self._call_user_model_fn(step_features, None, ModeKeys.PREDICT, params,
                                        config, False, False)
        if not isinstance(spec, TPUEstimatorSpec):
            raise RuntimeError(f"estimator_spec used by TPU prediction must have type"  # noqa: TRY004 - TF's type
                               f"`TPUEstimatorSpec`. Got {type(spec)}")
        if spec.host_call is not None:
            raise NotImplementedError("TPUEstimatorSpec.host_call in PREDICT is not "
                                      "supported by tensorflux.")
        return EstimatorSpec(ModeKeys.PREDICT, predictions=spec.predictions,
                             export_outputs=spec.export_outputs,
                             prediction_hooks=spec.prediction_hooks,
                             scaffold=_scaffold(spec)), set()


# -- helpers -------------------------------------------------------------------------------
def _loop_length(stacked):
    """The number of steps a loop's input holds (axis 1 of every stacked component)."""
    from tensorflux._src.ops.array import array_ops
    leaf = next(t for t in nest.flatten(stacked) if t is not None)
    return array_ops.shape(leaf)[1]


def _step_slice(stacked, i):
    """Step i's batch of every stacked [batch, steps, ...] component."""
    from tensorflux._src.ops.array.gather_ops import gather
    return nest.map_structure(lambda t: None if t is None else gather(t, i, axis=1),
                              stacked)


def _verify_train_spec(spec):
    if isinstance(spec, TPUEstimatorSpec):
        return spec
    if not isinstance(spec, EstimatorSpec):
        raise ValueError(f"model_fn should return an EstimatorSpec or TPUEstimatorSpec. "  # noqa: TRY004 - TF's type
                         f"Received: {type(spec).__name__} {spec!r}")
    err_msg = "{} returned by EstimatorSpec is not supported in TPUEstimator. "
    if spec.training_chief_hooks:
        raise ValueError(err_msg.format("training_chief_hooks") + "If you want to pass "
                         "training hooks, please pass via training_hooks.")
    if spec.scaffold and (spec.scaffold.saver is not None or spec.scaffold.init_fn):
        logger.warning("EstimatorSpec.Scaffold is ignored by TPU train/eval. Please use "
                       "TPUEstimatorSpec.")
    return spec


def _scaffold(spec):
    fn = getattr(spec, "scaffold_fn", None)
    return fn() if fn else None


def _ops_between(outputs, inputs):
    """The ops computing `outputs` from `inputs` (the host_call's graph)."""
    from tensorflux._src.framework.operation import Operation
    stop = {t.op for t in inputs}
    pending = [o if isinstance(o, Operation) else o.op for o in nest.flatten(outputs)
               if o is not None]
    seen = set()
    while pending:
        op = pending.pop()
        if op in seen:
            continue
        seen.add(op)
        if op in stop:
            continue
        pending.extend(t.op for t in op.inputs)
        pending.extend(op.control_inputs)
    return seen


class _Outfeed:
    """TF's outfeed for one (fn, tensors) pair: a local [steps, ...] variable per tensor,
    written with step i's value inside the loop (`record`), read after it."""

    def __init__(self, host_call, steps, name):
        from tensorflux._src.framework.tensor_conversion import convert_to_tensor
        self.fn, tensors = host_call
        self._template = tensors
        self._tensors = [convert_to_tensor(t) for t in nest.flatten(tensors)]
        for t in self._tensors:
            if not t.shape.is_fully_defined():
                raise ValueError(f"TPUEstimatorSpec.{name} tensors need static shapes; "
                                 f"{t.name} has shape {t.shape}.")
        self._steps, self._name = steps, name
        self._buffers = None

    def pack(self, flat):
        return nest.pack_sequence_as(self._template, flat)

    def record(self, i):
        from tensorflux._src.ops.array.generator_ops import zeros
        from tensorflux._src.ops.control.bodies import outside_bodies
        from tensorflux._src.ops.state.state_ops import scatter_update
        from tensorflux._src.train.variables import Variable
        with outside_bodies(_graph.get_default_graph()), _graph.control_dependencies(None):
            self._buffers = [Variable(zeros([self._steps] + t.shape.as_list(),
                                            dtype=t.dtype),
                                      trainable=False, name=f"{self._name}_outfeed",
                                      collections=[GraphKeys.LOCAL_VARIABLES])
                             for t in self._tensors]
        return [scatter_update(b, i, t) for b, t in zip(self._buffers, self._tensors)]

    def read_after(self, done):
        from tensorflux._src.ops.array import array_ops
        with _graph.control_dependencies([done]):
            return [array_ops.identity(b.read_value()) for b in self._buffers]

    def host_side(self):
        """Placeholders of one step's tensors and the host_call's ops on them."""
        from tensorflux._src.ops.constant import placeholder
        placeholders = [placeholder(t.dtype, t.shape, name=f"{self._name}_step")
                        for t in self._tensors]
        ops = call_host_fn((self.fn, self.pack(placeholders)))
        return placeholders, [o for o in nest.flatten(ops) if o is not None]

