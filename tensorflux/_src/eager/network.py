"""`tf.contrib.eager.Network` (TF 1.5-1.x): a Layer made of tracked sub-layers.

TF1's eager examples subclass it, register layers with `track_layer` in `__init__` and
write `call`. Its variables are those of the layers it tracks, and calling it calls
`call` (building the sub-layers on their first call, as any layer)."""

from __future__ import annotations

from tensorflux._src.layers.base import Layer


class Network(Layer):
    """A container of layers (see the module docstring)."""

    def __init__(self, name=None):
        super().__init__(name=name)
        self._layers = []

    def track_layer(self, layer):
        """Registers `layer` as part of this network; returns it."""
        if not isinstance(layer, Layer):
            raise TypeError(f"Network.track_layer() passed type {type(layer).__name__}, not "
                            f"a tf.layers.Layer")
        if layer not in self._layers:
            self._layers.append(layer)
        return layer

    @property
    def layers(self):
        return list(self._layers)

    def get_layer(self, name=None, index=None):
        if index is not None:
            return self._layers[index]
        for layer in self._layers:
            if layer.name == name:
                return layer
        raise ValueError(f"No such layer: {name}")

    def build(self, input_shape):
        self.built = True

    def __call__(self, inputs, *args, **kwargs):
        # The sub-layers own the variables and scopes; the network only sequences them.
        return self.call(inputs, *args, **kwargs)

    @property
    def trainable_weights(self):
        return [w for layer in self._layers for w in layer.trainable_weights]

    @property
    def non_trainable_weights(self):
        return [w for layer in self._layers for w in layer.non_trainable_weights]

    @property
    def weights(self):
        return self.trainable_weights + self.non_trainable_weights

    @property
    def variables(self):
        return self.weights

    @property
    def trainable_variables(self):
        return self.trainable_weights
