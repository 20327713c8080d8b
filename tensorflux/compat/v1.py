"""`tensorflux.compat.v1`: the same TF1 API as `import tensorflux as tf`."""

import tensorflux as _tf

globals().update({name: getattr(_tf, name) for name in _tf.__all__})
__all__ = list(_tf.__all__)
