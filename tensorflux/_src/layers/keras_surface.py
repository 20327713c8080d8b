"""The Keras `Layer` surface that TF1's `tf.layers.Layer` (and so every RNN cell)
inherits: configs, weights as values, the call graph between layers, masks, metrics.

- Configs: `get_config()` is the layer's name, trainable flag and dtype plus the
  arguments its constructor was called with, so `type(layer).from_config(config)` makes
  the same layer again (values such as initializers stay Python objects: there is no
  Keras serialization here).
- Weights as values (`get_weights`, `set_weights`, `save_own_variables`,
  `load_own_variables`) go through the default Session, where TF1 programs keep their
  variables' values.
- Nodes: every call records a `Node` (its input and output tensors). Layers called on a
  tensor another layer produced become that layer's outbound nodes, which is what
  `input`, `output`, `input_shape`, `get_input_at(i)` ... read.
- Masks: these layers do not support masking (`supports_masking` is False): a mask
  passed to `compute_mask` is a TypeError, and every mask reads None.
"""

from __future__ import annotations

import collections
import inspect

import numpy as np

from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.operation import Tensor
from tensorflux._src.train.module import in_name_scope

__all__ = ["KerasLayerSurface", "Node", "DTypePolicy"]

# Arguments of Layer.__init__ that get_config reports under their own keys.
_BASE_ARGS = ("self", "trainable", "name", "dtype", "_scope", "_reuse", "kwargs")

DTypePolicy = collections.namedtuple("DTypePolicy", ["name", "compute_dtype",
                                                     "variable_dtype"])


class Node:
    """One call of a layer: the tensors it took and the tensors it returned."""

    def __init__(self, layer, input_tensors, output_tensors):
        self.outbound_layer = layer
        self.input_tensors = input_tensors
        self.output_tensors = output_tensors
        self.inbound_layers = [t._keras_history[0] for t in _flat(input_tensors)
                               if getattr(t, "_keras_history", None) is not None]

    @property
    def input_shapes(self):
        return _map(lambda t: _shape_tuple(t), self.input_tensors)

    @property
    def output_shapes(self):
        return _map(lambda t: _shape_tuple(t), self.output_tensors)


def _flat(value):
    return [t for v in value for t in _flat(v)] if isinstance(value, (list, tuple)) \
        else [value]


def _map(fn, value):
    return type(value)(_map(fn, v) for v in value) if isinstance(value, (list, tuple)) \
        else fn(value)


def _shape_tuple(tensor):
    shape = getattr(tensor, "shape", None)
    if shape is None or shape.ndims is None:
        return None
    return tuple(shape.as_list())


def _session(layer, what):
    from tensorflux._src.framework.default_session import get_default_session
    session = get_default_session()
    if session is None:
        raise ValueError(f"Cannot {what} layer {layer.name}: there is no default Session, "
                         f"and the weights' values live in one. Call it inside "
                         f"`with tf.Session() as sess:` (or `sess.as_default()`).")
    return session


class KerasLayerSurface:
    """Mixin for layers/base.py's Layer (see the module docstring)."""

    _TF_MODULE = True  # a layer is a tf.Module (train/module.py)

    def __new__(cls, *args, **kwargs):
        layer = super().__new__(cls)
        try:
            bound = inspect.signature(cls.__init__).bind(layer, *args, **kwargs)
        except TypeError:
            bound = None  # __init__ reports the bad call itself
        layer._init_arguments = bound
        layer._inbound_nodes = []
        layer._outbound_nodes = []
        layer._metrics = []
        return layer

    # -- configs ------------------------------------------------------------------------------
    def get_config(self):
        config = {"name": self.name, "trainable": self.trainable,
                  "dtype": self.dtype.name if self.dtype is not None else None}
        bound = getattr(self, "_init_arguments", None)
        if bound is not None:
            for key, value in bound.arguments.items():
                if key not in _BASE_ARGS:
                    config[key] = value
            config.update({k: v for k, v in bound.arguments.get("kwargs", {}).items()
                           if k not in _BASE_ARGS})
        return config

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def get_build_config(self):
        shape = getattr(self, "_build_input_shape", None)
        if shape is None:
            return None
        return {"input_shape": None if shape.ndims is None else tuple(shape.as_list())}

    def build_from_config(self, config):
        shape = config["input_shape"]
        if shape is not None:
            self.build(shape)
            self._build_input_shape = shape
        self.built = True

    # -- dtypes -----------------------------------------------------------------------------
    @property
    def dtype_policy(self):
        name = self.dtype.name if self.dtype is not None else "float32"
        return DTypePolicy(name, name, name)

    @property
    def compute_dtype(self):
        return self.dtype_policy.compute_dtype

    @property
    def variable_dtype(self):
        return self.dtype_policy.variable_dtype

    # -- weights as values ---------------------------------------------------------------
    def get_weights(self):
        """The values of `self.weights`, as numpy arrays, from the default Session."""
        weights = self.weights
        return _session(self, "get the weights of").run(weights) if weights else []

    def set_weights(self, weights):
        """Assigns numpy values to `self.weights` (same order), in the default Session."""
        params = self.weights
        if len(params) != len(weights):
            raise ValueError(f'You called `set_weights(weights)` on layer "{self.name}" with '
                             f'a weight list of length {len(weights)}, but the layer was '
                             f'expecting {len(params)} weights. Provided weights: '
                             f'{str(weights)[:50]}...')
        values = [np.asarray(w) for w in weights]
        for param, value in zip(params, values):
            if not param.shape.is_compatible_with(value.shape):
                raise ValueError(f"Layer weight shape {tuple(param.shape.as_list())} not "
                                 f"compatible with provided weight shape {value.shape}")
        if params:
            session = _session(self, "set the weights of")
            for param, value in zip(params, values):
                param.load(value, session)

    def save_own_variables(self, store):
        for i, value in enumerate(self.get_weights()):
            store[str(i)] = value

    def load_own_variables(self, store):
        if len(store) != len(self.weights):
            raise ValueError(f"Layer '{self.name}' expected {len(self.weights)} variables, "
                             f"but received {len(store)} variables during loading. Expected: "
                             f"{[w.name for w in self.weights]}")
        self.set_weights([store[str(i)] for i in range(len(store))])

    def finalize_state(self):
        """Called after weights are loaded; these layers keep no state beside them."""

    @property
    def graph(self):
        weights = self.weights
        return weights[0].graph if weights else _graph.get_default_graph()

    # -- nodes -------------------------------------------------------------------------------
    def _record_node(self, inputs, outputs):
        node = Node(self, inputs, outputs)
        index = len(self._inbound_nodes)
        self._inbound_nodes.append(node)
        for layer in node.inbound_layers:
            layer._outbound_nodes.append(node)
        for i, t in enumerate(_flat(outputs)):
            if isinstance(t, Tensor):
                t._keras_history = (self, index, i)

    @property
    def inbound_nodes(self):
        return list(self._inbound_nodes)

    @property
    def outbound_nodes(self):
        return list(self._outbound_nodes)

    def _node_attribute(self, index, attr, what):
        if not self._inbound_nodes:
            raise RuntimeError(f"The layer {self.name} has never been called and thus has no "
                               f"defined {what}.")
        if not 0 <= index < len(self._inbound_nodes):
            raise ValueError(f"Asked to get {what} at node {index}, but the layer has only "
                             f"{len(self._inbound_nodes)} inbound nodes.")
        value = getattr(self._inbound_nodes[index], attr)
        return value[0] if isinstance(value, list) and len(value) == 1 else value

    def get_input_at(self, node_index):
        return self._node_attribute(node_index, "input_tensors", "input")

    def get_output_at(self, node_index):
        return self._node_attribute(node_index, "output_tensors", "output")

    def get_input_shape_at(self, node_index):
        return self._node_attribute(node_index, "input_shapes", "input shape")

    def get_output_shape_at(self, node_index):
        return self._node_attribute(node_index, "output_shapes", "output shape")

    def get_input_mask_at(self, node_index):
        return _map(lambda t: getattr(t, "_keras_mask", None), self.get_input_at(node_index))

    def get_output_mask_at(self, node_index):
        return _map(lambda t: getattr(t, "_keras_mask", None), self.get_output_at(node_index))

    def _single_node(self, what, accessor):
        if not self._inbound_nodes:
            raise AttributeError(f"Layer {self.name} is not connected, no {what} to return.")
        if len(self._inbound_nodes) > 1:
            raise AttributeError(f'Layer {self.name} has multiple inbound nodes, hence the '
                                 f'notion of "layer {what}" is ill-defined. Use '
                                 f'`{accessor}(node_index)` instead.')
        return getattr(self, accessor)(0)

    @property
    def input(self):
        return self._single_node("input", "get_input_at")

    @property
    def output(self):
        return self._single_node("output", "get_output_at")

    def _shared_shape(self, what, accessor):
        if not self._inbound_nodes:
            raise AttributeError(f"The layer has never been called and thus has no defined "
                                 f"{what}.")
        shapes = {str(getattr(self, accessor)(i)) for i in range(len(self._inbound_nodes))}
        if len(shapes) != 1:
            raise AttributeError(f'The layer "{self.name}" has multiple inbound nodes, with '
                                 f'different {what}s. Hence the notion of "{what}" is '
                                 f'ill-defined for the layer. Use `{accessor}(node_index)` '
                                 f'instead.')
        return getattr(self, accessor)(0)

    @property
    def input_shape(self):
        return self._shared_shape("input shape", "get_input_shape_at")

    @property
    def output_shape(self):
        return self._shared_shape("output shape", "get_output_shape_at")

    @property
    def input_mask(self):
        return _map(lambda t: getattr(t, "_keras_mask", None), self.input)

    @property
    def output_mask(self):
        return _map(lambda t: getattr(t, "_keras_mask", None), self.output)

    # -- masking and other flags ------------------------------------------------------------------
    @property
    def supports_masking(self):
        return getattr(self, "_supports_masking", False)

    @supports_masking.setter
    def supports_masking(self, value):
        self._supports_masking = value

    @property
    def stateful(self):
        return False

    @property
    def dynamic(self):
        return False

    def compute_mask(self, inputs, mask=None):
        if not self.supports_masking:
            if any(m is not None for m in _flat(mask)):
                raise TypeError(f"Layer {self.name} does not support masking, but was passed "
                                f"an input_mask: {mask}")
            return None
        return mask

    def compute_output_signature(self, input_signature):
        from tensorflux._src.framework.type_spec import TensorSpec
        shape = self.compute_output_shape(input_signature.shape)
        return TensorSpec(shape, self.dtype or input_signature.dtype)

    # -- metrics --------------------------------------------------------------------------------
    def add_metric(self, value, aggregation=None, name=None):
        """Tracks `value` in `self.metrics`. With `aggregation='mean'` the metric is a
        streaming mean over the runs (`tf.metrics.mean`: its update gives the mean so far)."""
        if aggregation not in (None, "mean"):
            raise ValueError(f"We currently support only `mean` sample-wise metric "
                             f"aggregation. You provided aggregation=`{aggregation}`")
        if aggregation is None:
            if not isinstance(value, Tensor) or value.shape.ndims not in (0, None):
                raise ValueError("We do not support adding an aggregated metric result tensor "
                                 "that is not the output of a metric. Pass an un-aggregated "
                                 "result with `aggregation` set to `mean`.")
            self._metrics.append(value)
            return
        from tensorflux._src.layers.metrics_impl import mean
        _, update = mean(value, name=name)
        self._metrics.append(update)

    @property
    def metrics(self):
        return list(self._metrics)

    # -- modules ---------------------------------------------------------------------------------
    @property
    def name_scope(self):
        """A name scope for ops of this layer: the layer's own scope once it was called."""
        scope = getattr(self, "_scope", None)
        return _graph.name_scope(scope.original_name_scope if scope is not None
                                 else self.name)

    @classmethod
    def with_name_scope(cls, method):
        """Decorator: `method` runs under the layer's name scope."""
        return in_name_scope(method)

    @property
    def submodules(self):
        """Every layer reachable through this layer's attributes (depth first)."""
        found, stack, seen = [], [self], {id(self)}
        while stack:
            owner = stack.pop()
            for value in reversed(list(vars(owner).values())):
                for item in _flat(list(value.values()) if isinstance(value, dict) else value):
                    if isinstance(item, KerasLayerSurface) and id(item) not in seen:
                        seen.add(id(item))
                        found.append(item)
                        stack.append(item)
        return tuple(found)
