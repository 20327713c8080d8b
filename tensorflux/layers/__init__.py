"""`tf.layers`: TF1's layers, as objects (`tf.layers.Dense(...)`) and functions
(`tf.layers.dense(x, ...)`), with TF1's variable names and reuse rules."""

from tensorflux._src.layers.base import InputSpec, Layer  # noqa: F401
from tensorflux._src.layers.convolutional import (  # noqa: F401
    Conv1D, Conv2D, Conv2DTranspose, Conv3D, Conv3DTranspose, Convolution1D, Convolution2D,
    Convolution2DTranspose, Convolution3D, Convolution3DTranspose, SeparableConv1D,
    SeparableConv2D, conv1d, conv2d, conv2d_transpose, conv3d, conv3d_transpose,
    separable_conv1d, separable_conv2d,
)
from tensorflux._src.layers.core import (  # noqa: F401
    Dense, Dropout, Flatten, dense, dropout, flatten,
)
from tensorflux._src.layers.normalization import (  # noqa: F401
    BatchNormalization, batch_normalization,
)
from tensorflux._src.layers.pooling import (  # noqa: F401
    AveragePooling1D, AveragePooling2D, AveragePooling3D, AvgPool1D, AvgPool2D, AvgPool3D,
    MaxPool1D, MaxPool2D, MaxPool3D, MaxPooling1D, MaxPooling2D, MaxPooling3D,
    average_pooling1d, average_pooling2d, average_pooling3d, max_pooling1d, max_pooling2d,
    max_pooling3d,
)

import types as _types  # noqa: E402

from tensorflux._src.layers import base as _base  # noqa: E402

# `tf.layers.experimental`: Keras-style naming for the legacy layers.
experimental = _types.ModuleType("tensorflux.layers.experimental")
experimental.keras_style_scope = _base.keras_style_scope
experimental.set_keras_style = _base.set_keras_style


def __getattr__(name):
    # `tensorflux.layers.moe` (a tensorflux extension, not a tf.layers name of TF 1.15)
    # is a submodule loaded on first use, so `import tensorflux` does not build it.
    if name == "moe":
        import importlib
        return importlib.import_module("tensorflux.layers.moe")
    raise AttributeError(f"module 'tensorflux.layers' has no attribute {name!r}")
