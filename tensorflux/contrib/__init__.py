"""`tf.contrib`: the contrib modules TF1 programs commonly import, on tensorflux's ops.

    from tensorflux.contrib import layers     # or tf.contrib.layers.conv2d(...)

Submodules load on first use (`tf.contrib.eager`, `framework`, `layers`, `lookup`,
`rnn`, `seq2seq`, `slim`, `summary`, `tpu`, `training`); other contrib modules are not provided and raise
AttributeError saying so.
"""

import importlib

_SUBMODULES = ("eager", "framework", "layers", "lookup", "rnn", "seq2seq", "slim", "summary",
               "tpu", "training")


def __getattr__(name):
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    if name.startswith("__"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    raise AttributeError(
        f"tf.contrib.{name} is not provided by tensorflux; the contrib modules available "
        f"are {', '.join('tf.contrib.' + m for m in _SUBMODULES)}. Use the core API "
        f"instead where TF 1.x has one (e.g. tf.layers, tf.losses, tf.data).")


def __dir__():
    return sorted(list(globals()) + list(_SUBMODULES))
