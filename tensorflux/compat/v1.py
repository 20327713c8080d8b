"""`tensorflux.compat.v1`: the same TF1 API as `import tensorflux as tf`."""

import tensorflux as _tf

globals().update({name: getattr(_tf, name) for name in _tf.__all__})
__all__ = list(_tf.__all__)


def __getattr__(name):
    if name in _tf._LAZY_MODULES:  # tf.contrib, tf.test: loaded on first use
        return getattr(_tf, name)
    raise AttributeError(f"module 'tensorflux.compat.v1' has no attribute {name!r}")
