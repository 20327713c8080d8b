"""Which lowering a convolution op uses, when it has more than one (a tuning switch).

Some ops can be lowered to XLA in several numerically equivalent ways whose speed
depends on the backend and the shapes, e.g. a depthwise convolution as XLA's grouped
convolution (which XLA:CPU expands into a dense convolution with a block-diagonal
filter, C times the work) or as a sum of kh * kw shifted multiply-adds that XLA fuses
into loops; or a k x k convolution as XLA's convolution, as one matrix product over
the taps' slices (im2col) or as a call into oneDNN's kernels (conv_onednn.py, offered
only where they could be built: `alternatives`). Such an op lists its switches in
`OpDef.lowering_choices` (a tuple, or a function of the op when only some shapes have
a choice); the compiler's
autotuner (compiler/options.py) compiles a cluster once per alternative and keeps the
fastest, as it does for XLA's own options. The choice travels with the compiler options
under the switch's key (e.g. {"tensorflux_depthwise_lowering": "shifted"}); the keys are
ours, not XLA's, and are removed before XLA sees the options (`split`).

While a cluster is traced, `use(choices)` makes them current; a lowering asks
`choice(key)`. Without a choice (no tuning: a GPU, or tracing outside a cluster) the
default, XLA's own operation, is used.
"""

from __future__ import annotations

import contextlib
import contextvars

DEPTHWISE = "tensorflux_depthwise_lowering"
CONV2D = "tensorflux_conv2d_lowering"
# Alternatives per switch, in the order the autotuner tries them.
ALTERNATIVES = {DEPTHWISE: ("shifted", "grouped_conv"), CONV2D: ("im2col", "conv", "onednn")}
# Used without a choice: XLA's own operation.
DEFAULTS = {DEPTHWISE: "grouped_conv", CONV2D: "conv"}
# Alternatives that run on XLA:CPU only (an FFI call into a CPU library).
CPU_ONLY = ("onednn",)

_current = contextvars.ContextVar("tensorflux_conv_lowering", default=None)


def is_switch(key) -> bool:
    return key in ALTERNATIVES


def _onednn_available():
    from tensorflux._src.native import onednn  # lazy: it builds the kernel on first use

    return onednn.available()


# Alternatives that need what a machine may lack (oneDNN's kernel, native/onednn.py):
# offered to the autotuner only where it is there.
_NEEDS = {"onednn": _onednn_available}


def alternatives(key):
    """The alternatives of switch `key` that this machine can run, in tuning order."""
    return tuple(v for v in ALTERNATIVES[key] if v not in _NEEDS or _NEEDS[v]())


def split(options):
    """(XLA's options, our lowering choices) of one candidate option set."""
    options = dict(options or {})
    ours = {k: options.pop(k) for k in list(options) if is_switch(k)}
    return options, ours


def check(key, value):
    """A choice given by a user (a session's compiler options) must be a known one."""
    if value not in ALTERNATIVES[key]:
        raise ValueError(f"compiler option {key!r} must be one of "
                         f"{', '.join(map(repr, ALTERNATIVES[key]))}, got {value!r}")


@contextlib.contextmanager
def use(choices):
    """Makes `choices` ({switch: alternative}) current while a cluster is traced."""
    for key, value in (choices or {}).items():
        check(key, value)
    token = _current.set(dict(choices or {}))
    try:
        yield
    finally:
        _current.reset(token)


def choice(key):
    return (_current.get() or {}).get(key, DEFAULTS[key])
