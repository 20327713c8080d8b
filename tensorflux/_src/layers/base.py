"""`tf.layers.Layer`: TF1's legacy layer base, with variable-scope naming and reuse.

A layer object owns one variable scope, captured the first time it is used:
`dense`, `dense_1`, ... (unique among variable scopes) unless built with a scope
name (the functional forms pass `name` as the scope, so `tf.layers.dense(x, 3,
name="fc")` twice needs `reuse=True`, as in TF1). Its variables are
`<scope>/kernel:0` etc., made with `tf.get_variable`, so enclosing `variable_scope`s,
their reuse, initializers and regularizers apply. Ops go under the scope's original
name scope (`dense/MatMul`, then `dense/MatMul_1` when the layer is called again).

After a call, the layer's update ops (batch norm's moving averages) are added to
`tf.GraphKeys.UPDATE_OPS`; they only run when the user runs them. Regularization
losses go to `tf.GraphKeys.REGULARIZATION_LOSSES` when the variable is created.
"""

from __future__ import annotations

import collections
import contextlib
import re

import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework import tensor_shape
from tensorflux._src.framework.graph_keys import GraphKeys
from tensorflux._src.framework.operation import Tensor
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.layers.keras_surface import KerasLayerSurface
from tensorflux._src.train import deferred_restore
from tensorflux._src.train import variable_scope as vs
from tensorflux._src.train.variables import Variable, global_variables

__all__ = ["Layer", "InputSpec", "keras_style_scope", "set_keras_style"]

_keras_style = [False]  # layers built now use Keras-style naming (see keras_style_scope)


@contextlib.contextmanager
def keras_style_scope():
    """Layers created inside are Keras-style: each owns the unique scope of its own name
    (`dense`, `dense_1`, ...), independent of enclosing variable scopes' reuse, and
    refuses `_reuse`/`_scope` arguments (TF1's tf.layers.experimental.keras_style_scope)."""
    saved = _keras_style[0]
    _keras_style[0] = True
    try:
        yield
    finally:
        _keras_style[0] = saved


def set_keras_style():
    """Every layer created from now on is Keras-style (see keras_style_scope)."""
    _keras_style[0] = True


def to_snake_case(name):
    """`Conv2DTranspose` -> `conv2d_transpose` (Keras' rule, which TF1 layers use)."""
    intermediate = re.sub("(.)([A-Z][a-z0-9]+)", r"\1_\2", name)
    insecure = re.sub("([a-z])([A-Z])", r"\1_\2", intermediate).lower()
    return insecure if insecure[0] != "_" else "private" + insecure


def _unique_layer_name(base_name):
    """`dense_1`, `dense_2`, ... per graph: TF1 legacy layers count from 1 (their
    `.name` differs from their variable scope `dense`, as in TF1)."""
    graph = _graph.get_default_graph()
    uids = getattr(graph, "_layer_name_uids", None)
    if uids is None:
        uids = graph._layer_name_uids = collections.defaultdict(int)
    uids[base_name] += 1
    return f"{base_name}_{uids[base_name]}"


def _unique_keras_name(base_name):
    """`dense`, `dense_1`, ... per graph, as Keras names layers (counting from 0)."""
    graph = _graph.get_default_graph()
    uids = getattr(graph, "_keras_layer_name_uids", None)
    if uids is None:
        uids = graph._keras_layer_name_uids = collections.defaultdict(int)
    count = uids[base_name]
    uids[base_name] += 1
    return base_name if count == 0 else f"{base_name}_{count}"


# -- training flags: Python bools or bool tensors -------------------------------------------
def constant_value(pred):
    """The Python bool of `pred` if known when the graph is built, else None."""
    if isinstance(pred, (bool, np.bool_)):
        return bool(pred)
    if isinstance(pred, Tensor) or hasattr(pred, "_as_graph_element"):
        if isinstance(pred, Tensor) and pred.op.type == "Const":
            return bool(np.asarray(pred.op.get_attr("value")))
        return None
    if isinstance(pred, (int, np.integer)) and pred in (0, 1):
        return bool(pred)
    raise TypeError(f"`pred` must be a Tensor, or a Python bool, or 1 or 0. Found instead: "
                    f"{type(pred)}")


def smart_cond(pred, true_fn, false_fn):
    """`true_fn()` or `false_fn()` when `pred` is known now; otherwise `tf.cond`, as TF1's
    smart_cond (so only the taken branch runs, and the result keeps the branches' static
    shape whatever the shape of `pred`)."""
    value = constant_value(pred)
    if value is not None:
        return true_fn() if value else false_fn()
    from tensorflux._src.ops.control.control_flow_ops import cond
    pred = convert_to_tensor(pred)
    if pred.dtype.base_dtype != _dtypes.bool:
        raise TypeError(f"`training` must be a Python bool or a bool tensor; got a tensor of "
                        f"type {pred.dtype.base_dtype.name}")
    pred.shape.assert_is_compatible_with(tensor_shape.TensorShape([]))
    return cond(pred, true_fn, false_fn)


# -- input specs ------------------------------------------------------------------------------
class InputSpec:
    """What a layer accepts: rank limits and fixed sizes of some axes."""

    def __init__(self, dtype=None, shape=None, ndim=None, max_ndim=None, min_ndim=None,
                 axes=None):
        self.dtype = dtype
        self.shape = shape
        self.ndim = len(shape) if shape is not None else ndim
        self.max_ndim = max_ndim
        self.min_ndim = min_ndim
        self.axes = dict(axes or {})

    def __repr__(self):
        return (f"InputSpec(dtype={self.dtype}, shape={self.shape}, ndim={self.ndim}, "
                f"max_ndim={self.max_ndim}, min_ndim={self.min_ndim}, axes={self.axes})")


def assert_input_compatibility(spec, inputs, layer_name):
    """Raises TF1's ValueError when `inputs` (one tensor) do not fit `spec`."""
    if spec is None:
        return
    shape = inputs.shape
    prefix = f"Input 0 of layer {layer_name} is incompatible with the layer: "
    if spec.ndim is not None or spec.min_ndim is not None or spec.max_ndim is not None:
        if shape.ndims is None:
            raise ValueError(prefix + "its rank is undefined, but the layer requires a "
                                      "defined rank.")
    ndim = shape.ndims
    received = f"Full shape received: {shape.as_list() if ndim is not None else None}"
    if spec.ndim is not None and ndim != spec.ndim:
        raise ValueError(prefix + f"expected ndim={spec.ndim}, found ndim={ndim}. {received}")
    if spec.max_ndim is not None and ndim > spec.max_ndim:
        raise ValueError(prefix + f"expected max_ndim={spec.max_ndim}, found ndim={ndim}")
    if spec.min_ndim is not None and ndim < spec.min_ndim:
        raise ValueError(prefix + f"expected min_ndim={spec.min_ndim}, found ndim={ndim}. "
                         f"{received}")
    if spec.dtype is not None and inputs.dtype.base_dtype.name != spec.dtype:
        raise ValueError(prefix + f"expected dtype={spec.dtype}, found "
                         f"dtype={inputs.dtype.base_dtype.name}")
    if spec.shape is not None and ndim is not None:
        for spec_dim, dim in zip(spec.shape, shape.as_list()):
            if spec_dim is not None and dim is not None and spec_dim != dim:
                raise ValueError(f"Input 0 is incompatible with layer {layer_name}: expected "
                                 f"shape={tuple(spec.shape)}, found shape={shape.as_list()}")
    for axis, value in spec.axes.items():
        if value is None or ndim is None:
            continue
        dim = shape[axis].value if -ndim <= axis < ndim else None
        if dim is not None and dim != value:
            raise ValueError(f"Input 0 of layer {layer_name} is incompatible with the layer: "
                             f"expected axis {axis} of input shape to have value {value} but "
                             f"received input with shape {shape.as_list()}")


# -- the layer --------------------------------------------------------------------------------
class Layer(KerasLayerSurface):
    """Base layer: subclasses implement `build(input_shape)` and `call(inputs, ...)`."""

    def __init__(self, trainable=True, name=None, dtype=None, activity_regularizer=None,
                 _scope=None, _reuse=None, **kwargs):
        for kwarg in kwargs:
            if kwarg not in ("input_shape", "batch_input_shape", "batch_size", "weights",
                             "autocast"):
                raise TypeError(f"('Keyword argument not understood:', '{kwarg}')")
        self._keras_style = _keras_style[0]
        if self._keras_style and _reuse is not None:
            raise ValueError(f"reuse argument not allowed when keras style layers are "
                             f"enabled, but saw: {_reuse}")
        if self._keras_style and _scope is not None:
            raise ValueError(f"scope argument not allowed when keras style layers are "
                             f"enabled, but saw: {_scope}")
        self.trainable = trainable
        self.built = False
        # None: take the dtype of the first input (TF1 legacy layers' "infer" policy).
        self._dtype = None if dtype is None else _dtypes.as_dtype(dtype).base_dtype
        self._activity_regularizer = activity_regularizer
        self._trainable_weights = []
        self._non_trainable_weights = []
        self._updates = []        # [(inputs or None, update)]
        self._losses = []         # [(inputs or None, loss)]
        self.input_spec = getattr(self, "input_spec", None)
        self._reuse = _reuse
        self._call_inputs = None  # the inputs of the call in progress, for add_update
        if self._keras_style:
            base = name or to_snake_case(type(self).__name__)
            self._base_name = self._name = _unique_keras_name(base) if not name else name
        elif isinstance(name, vs.VariableScope):
            self._base_name, self._name = name.name, _unique_layer_name(
                to_snake_case(type(self).__name__))
        elif name:
            self._base_name = self._name = name
        else:
            self._base_name = to_snake_case(type(self).__name__)
            self._name = _unique_layer_name(self._base_name)
        self._scope = None
        if _scope:
            with vs.variable_scope(_scope) as captured:
                self._scope = captured
        self._current_scope = None

    # -- properties ------------------------------------------------------------------------
    @property
    def name(self):
        return self._name

    @property
    def trainable(self):
        return self._trainable

    @trainable.setter
    def trainable(self, value):
        self._trainable = bool(value)

    @property
    def input_spec(self):
        return getattr(self, "_input_spec", None)

    @input_spec.setter
    def input_spec(self, value):
        self._input_spec = value

    @property
    def dtype(self):
        return self._dtype

    @property
    def scope_name(self):
        if not self._scope:
            raise ValueError(f'No name available for layer scope because the layer '
                             f'"{self._name}" has not been used yet. The scope name  is '
                             f'determined the first time the layer instance is called. You '
                             f'must therefore call the layer before querying `scope_name`.')
        return self._scope.name

    @property
    def activity_regularizer(self):
        return self._activity_regularizer

    @property
    def trainable_weights(self):
        return list(self._trainable_weights) if self.trainable else []

    @property
    def non_trainable_weights(self):
        if self.trainable:
            return list(self._non_trainable_weights)
        return self._trainable_weights + self._non_trainable_weights

    @property
    def weights(self):
        return self.trainable_weights + self.non_trainable_weights

    trainable_variables = trainable_weights
    non_trainable_variables = non_trainable_weights
    variables = weights

    @property
    def updates(self):
        return [u for _, u in self._updates]

    @property
    def losses(self):
        return [loss for _, loss in self._losses]

    def get_updates_for(self, inputs):
        """Updates made by calls on `inputs` (None: those made outside any call)."""
        return [u for i, u in self._updates if i is inputs]

    def get_losses_for(self, inputs):
        return [loss for i, loss in self._losses if i is inputs]

    # -- what subclasses write ---------------------------------------------------------------
    def build(self, input_shape):
        self.built = True

    def call(self, inputs, **kwargs):
        return inputs

    def compute_output_shape(self, input_shape):
        raise NotImplementedError

    # -- variables, losses and updates -----------------------------------------------------------
    def _set_scope(self, scope=None):
        if self._scope is None:
            if self._keras_style:
                # Keras style: the layer's unique name is its scope, whatever encloses it.
                with vs.variable_scope(self._name, reuse=False,
                                       auxiliary_name_scope=False) as s:
                    self._scope = s
            elif self._reuse:
                with vs.variable_scope(scope if scope is not None else self._base_name) as s:
                    self._scope = s
            else:
                with vs.variable_scope(scope, default_name=self._base_name) as s:
                    self._scope = s

    def add_weight(self, name, shape, dtype=None, initializer=None, regularizer=None,
                   trainable=None, constraint=None, partitioner=None, use_resource=None,
                   **kwargs):
        """Gets or creates `<layer scope>/<name>` with `tf.get_variable`."""
        for kwarg in kwargs:
            if kwarg not in ("experimental_autocast", "synchronization", "aggregation"):
                raise TypeError(f"('Unknown keyword argument:', '{kwarg}')")
        trainable = True if trainable is None else trainable
        dtype = _dtypes.as_dtype(dtype or self._dtype or _dtypes.float32)
        existing = set(global_variables())
        self._set_scope(None)
        reuse = self.built or self._reuse
        with vs.variable_scope(self._scope, reuse=reuse, auxiliary_name_scope=False) as scope:
            self._current_scope = scope
            with _graph.name_scope(scope.original_name_scope):
                if initializer is None:
                    initializer = scope.initializer
                variable = vs.get_variable(name, shape, dtype=dtype, initializer=initializer,
                                           trainable=trainable and self.trainable,
                                           constraint=constraint)
                # A reused variable already has its regularization loss.
                if regularizer is not None and variable not in existing:
                    with _graph.name_scope(name + "/Regularizer"):
                        loss = regularizer(variable)
                    if loss is not None:
                        self.add_loss(loss)
        if trainable:
            if variable not in self._trainable_weights:
                self._trainable_weights.append(variable)
        elif variable not in self._non_trainable_weights:
            self._non_trainable_weights.append(variable)
        return variable

    add_variable = add_weight

    def add_loss(self, losses, inputs=None):
        """Records losses and adds them to REGULARIZATION_LOSSES (TF1's layers do)."""
        losses = losses if isinstance(losses, (list, tuple)) else [losses]
        collection = _graph.get_collection_ref(GraphKeys.REGULARIZATION_LOSSES)
        for loss in losses:
            if callable(loss) and not isinstance(loss, (Tensor, Variable)):
                loss = loss()
            if loss is None:
                continue
            self._losses.append((inputs, loss))
            if not any(loss is c for c in collection):
                collection.append(loss)

    def add_update(self, updates, inputs=None):
        """Records update ops; `inputs=None` inside a call means the call's inputs."""
        updates = updates if isinstance(updates, (list, tuple)) else [updates]
        if inputs is None:
            inputs = self._call_inputs
        for update in updates:
            if callable(update) and not isinstance(update, (Tensor, Variable)):
                update = update()
            self._updates.append((inputs, update))

    # -- calling -------------------------------------------------------------------------------
    def __call__(self, inputs, *args, **kwargs):
        scope = kwargs.pop("scope", None)
        self._set_scope(scope)
        reuse = True if self.built else self._reuse
        with vs.variable_scope(self._scope, reuse=reuse, auxiliary_name_scope=False) as vscope:
            self._current_scope = vscope
            with _graph.name_scope(vscope.original_name_scope):
                if not isinstance(inputs, Tensor):
                    inputs = convert_to_tensor(inputs)
                if not self.built:
                    assert_input_compatibility(self.input_spec, inputs, self._name)
                    if self._dtype is None:
                        self._dtype = inputs.dtype.base_dtype
                    self.build(inputs.shape)
                    self._build_input_shape = inputs.shape
                    self.built = True
                    if deferred_restore._pending:
                        deferred_restore.objects_created()  # eager restore's weights
                assert_input_compatibility(self.input_spec, inputs, self._name)
                self._call_inputs = inputs
                try:
                    outputs = self.call(inputs, *args, **kwargs)
                finally:
                    self._call_inputs = None
                if outputs is None:
                    raise ValueError("A layer's `call` method should return a Tensor or a "
                                     "list of Tensors, not None (layer: " + self._name + ").")
                if self._activity_regularizer is not None:
                    self._handle_activity_regularization(inputs, outputs)
                self._record_node(inputs, outputs)
        updates = _graph.get_collection_ref(GraphKeys.UPDATE_OPS)
        for update in self.updates:
            if not any(update is u for u in updates):
                updates.append(update)
        return outputs

    def apply(self, inputs, *args, **kwargs):
        return self.__call__(inputs, *args, **kwargs)

    def _handle_activity_regularization(self, inputs, outputs):
        from tensorflux._src.ops.array import array_ops
        from tensorflux._src.ops.math import math_ops
        flat = outputs if isinstance(outputs, (list, tuple)) else [outputs]
        with _graph.name_scope("ActivityRegularizer"):
            for output in flat:
                loss = self._activity_regularizer(output)
                # Divided by the batch size so the strength does not depend on it (TF 1.14+).
                batch = math_ops.cast(array_ops.shape(output)[0], loss.dtype)
                self.add_loss(loss / batch, inputs=inputs)

    def count_params(self):
        if not self.built:
            raise ValueError(f"You tried to call `count_params` on {self._name}, but the layer "
                             f"isn't built. You can build it manually via: "
                             f"`{self._name}.build(batch_input_shape)`.")
        return int(sum(np.prod(w.shape.as_list()) for w in self.weights))

    def __repr__(self):
        return f"<{type(self).__module__}.{type(self).__name__} name={self._name!r}>"
