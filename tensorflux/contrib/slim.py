"""`tf.contrib.slim`: slim's layers, arg_scope and variable helpers (re-exported from
tensorflux.contrib.layers and tensorflux.contrib.framework, which they are in TF too).

    import tensorflux.contrib.slim as slim
    with slim.arg_scope([slim.conv2d], padding="VALID"):
        net = slim.conv2d(images, 32, [3, 3], scope="conv1")
"""

from tensorflux.contrib.framework import *  # noqa: F401,F403
from tensorflux.contrib.layers import *  # noqa: F401,F403
from tensorflux.contrib import framework as _framework
from tensorflux.contrib import layers as _layers

# slim's submodule names: slim.layers.conv2d, slim.variables.model_variable
layers = _layers
variables = _framework

__all__ = sorted(set(_framework.__all__) | set(_layers.__all__) | {"layers", "variables"})
