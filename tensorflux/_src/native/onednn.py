"""oneDNN's convolutions as an XLA FFI target ("tensorflux_onednn_conv" on CPU).

onednn_conv.cc is compiled on first use, once per machine (build.py), against jaxlib's
FFI headers and the libdnnl.so.3 of the `onednn-cpu-gomp` wheel (a dependency on x86-64
Linux); available() loads it and registers the FFI target. Anything missing (the wheel,
a compiler, a writable directory) makes available() False with a reason in
`unavailable_reason()`, and the convolutions keep their XLA lowerings.
TENSORFLUX_ONEDNN=0 turns it off.
"""

from __future__ import annotations

import ctypes
import os
import site
import sys
import sysconfig

from tensorflux._src.native import build
from tensorflux._src.platform import env_switch

TARGET = "tensorflux_onednn_conv"
PAIR_TARGET = "tensorflux_onednn_conv_pair"  # a layer's dx and dw in one call
SOURCE = os.path.join(os.path.dirname(__file__), "onednn_conv.cc")
LIBRARY = "libdnnl.so.3"


def library_path():
    """Where the wheel put libdnnl.so.3 (its data files go to <prefix>/lib), or None;
    $TENSORFLUX_ONEDNN_LIBRARY names another."""
    explicit = os.environ.get("TENSORFLUX_ONEDNN_LIBRARY")
    if explicit:
        return explicit if os.path.exists(explicit) else None
    prefixes = [sysconfig.get_path("data"), sys.prefix, site.USER_BASE]
    for prefix in dict.fromkeys(p for p in prefixes if p):
        path = os.path.join(prefix, "lib", LIBRARY)
        if os.path.exists(path):
            return path
    return None


def _build(library):
    """The built shared library's path, or (None, why not)."""
    return build.build("onednn_conv", SOURCE, "the oneDNN convolution kernel",
                       link=["-fopenmp", library, f"-Wl,-rpath,{os.path.dirname(library)}"])


def _load():
    if env_switch.is_off("TENSORFLUX_ONEDNN"):
        return None, "turned off by TENSORFLUX_ONEDNN"
    if not sys.platform.startswith("linux"):
        return None, "the oneDNN convolution kernel is built for Linux only"
    library = library_path()
    if library is None:
        return None, (f"{LIBRARY} not found: `pip install onednn-cpu-gomp` (x86-64 Linux) "
                      "or set TENSORFLUX_ONEDNN_LIBRARY")
    path, reason = _build(library)
    if path is None:
        return None, reason
    return build.register(path, "the oneDNN convolution kernel",
                          {TARGET: "TfxOnednnConv", PAIR_TARGET: "TfxOnednnConvPair"},
                          setup=_declare)


def _declare(lib):
    lib.tfx_onednn_conv_plan.restype = ctypes.c_int
    lib.tfx_onednn_conv_pairs.restype = ctypes.c_int


_loaded = build.Once(_load)


def available() -> bool:
    """Whether the FFI target is registered (building and loading it the first time)."""
    return _loaded.available()


def unavailable_reason():
    return _loaded.reason()


def pairs() -> bool:
    """Whether a layer's two gradients run side by side in one call (PAIR_TARGET): with
    OpenMP's two threads, one each; otherwise that call runs them in turn."""
    lib = _loaded.library()
    return lib is not None and bool(lib.tfx_onednn_conv_pairs())


def plan(kind, nchw, x, w, y, strides, dilations, pad_l, pad_r):
    """(ok, info): whether oneDNN has a convolution for this spec, and the name of the
    implementation it picked (or why it has none). Dims as onednn_conv.cc's ConvSpec:
    x and y as N,H,W,C, w as kh,kw,in,out."""
    lib = _loaded.library()
    if lib is None:
        return False, _loaded.reason()

    def longs(values):
        return (ctypes.c_int64 * len(values))(*values)

    info = ctypes.create_string_buffer(256)
    status = lib.tfx_onednn_conv_plan(
        ctypes.c_int64(kind), ctypes.c_int64(nchw), longs(x), longs(w), longs(y),
        longs(strides), longs(dilations), longs(pad_l), longs(pad_r), info,
        ctypes.c_size_t(len(info)))
    return status == 0, info.value.decode()
